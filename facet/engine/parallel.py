"""Work splitting across threads (the kernels release the GIL).

A batch of groups is cut into about ``threads`` parts of equal work (sum of
``|L| + |R|``) when it is big enough to be worth it; each part runs on the
process-wide pool of that size and the outputs are concatenated in order, so
results never depend on the number of threads.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from facet.engine.groups import Groups

T = TypeVar("T")

_POOLS: dict[int, ThreadPoolExecutor] = {}


def pool(threads: int) -> ThreadPoolExecutor:
    """A process-wide pool per size."""
    p = _POOLS.get(threads)
    if p is None:
        p = _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="facet")
    return p


def split(groups: Groups, threads: int, min_work: int) -> list[Groups]:
    """``groups`` cut into about ``threads`` consecutive parts of equal work;
    one part when that is less than ``min_work`` or there is one thread."""
    if threads == 1 or len(groups) < 2:
        return [groups]
    work = groups.left_sizes() + groups.right_sizes()
    total = int(work.sum())
    if total < min_work:
        return [groups]
    csum = np.cumsum(work)
    cuts = np.searchsorted(csum, [total * k // threads for k in range(1, threads)])
    bounds = np.unique(np.r_[0, np.minimum(cuts + 1, len(groups)), len(groups)])
    return [
        Groups(groups.buf, np.ascontiguousarray(groups.desc[a:b]), groups.disjoint)
        for a, b in zip(bounds[:-1], bounds[1:], strict=True)
        if b > a
    ]


def run_parts(parts: list[T], fn: Callable[[int, T], object], threads: int) -> list:
    """``fn(i, part)`` for every part, on the pool when there are several."""
    if len(parts) == 1:
        return [fn(0, parts[0])]
    return list(pool(threads).map(lambda i: fn(i, parts[i]), range(len(parts))))
