"""Starting a process-wide thread pool's threads ahead of time (a warm-up).

A ``ThreadPoolExecutor`` starts a new thread on a submit only while none of its
threads is idle, so ``threads`` quick tasks may all run on the first one: the
others would start later, during a timed run (a few ms each on a loaded host).
Tasks that wait for each other need a thread each.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

_started: weakref.WeakSet[ThreadPoolExecutor] = weakref.WeakSet()
_lock = threading.Lock()


def start_threads(pool: ThreadPoolExecutor, threads: int, timeout: float = 1.0) -> None:
    """Start all ``threads`` of ``pool`` now (once per pool). If the pool is busy
    (another caller's work) the tasks give up after ``timeout`` seconds: the
    threads then start when the pool needs them, as they would have."""
    if threads <= 1:
        return
    with _lock:
        if pool in _started:
            return
        _started.add(pool)
    barrier = threading.Barrier(threads)

    def meet(_: int) -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout)

    list(pool.map(meet, range(threads)))
