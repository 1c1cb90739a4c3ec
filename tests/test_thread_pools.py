"""facet/thread_pools.py: the warm-up starts every thread of a pool."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from facet.thread_pools import start_threads


def _alive(pool: ThreadPoolExecutor) -> int:
    return sum(t.is_alive() for t in pool._threads)


def test_every_thread_starts():
    for n in (2, 3, 4):
        pool = ThreadPoolExecutor(n)
        try:
            list(pool.map(int, range(n)))  # quick tasks may all run on one thread
            start_threads(pool, n)
            assert _alive(pool) == n
        finally:
            pool.shutdown()


def test_a_busy_pool_is_not_waited_for():
    pool = ThreadPoolExecutor(2)
    release = threading.Event()
    try:
        pool.submit(release.wait, 30)  # another caller's work holds one thread
        start_threads(pool, 2, timeout=0.2)  # returns: the barrier gives up
    finally:
        release.set()
        pool.shutdown()


def test_once_per_pool():
    pool = ThreadPoolExecutor(2)
    try:
        start_threads(pool, 2)
        calls = []
        real = pool.map
        pool.map = lambda *a, **k: calls.append(1) or real(*a, **k)  # type: ignore[method-assign]
        start_threads(pool, 2)
        assert calls == []
    finally:
        pool.shutdown()
