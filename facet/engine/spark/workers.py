"""Spark's Python workers made ready before anything is timed: each imports
facet's task code and loads from numba's cache (or compiles) the kernels the
run's tasks will use -- what the local engine does in its own process before a
run (:mod:`facet.engine.warmup`, JSON ``warmup_seconds``).

Spark keeps a Python worker alive between tasks and jobs of a session
(``spark.python.worker.reuse``, on by default), so a job of one task per core,
its tasks running side by side, leaves a worker per core with the imports and
kernels in place; the first DC's tasks then start at once.  Nothing depends on
it for correctness: a worker that was not warmed loads what it needs itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa

#: kernels every task may run whatever the plans: key and value hashes
TASK_KERNELS = frozenset({"hashing", "dictionary"})


def warmup_job(kernels: Iterable[str]) -> Callable:
    """The mapInArrow function of a warm-up task: the seconds its worker took."""
    names = sorted(set(kernels) | TASK_KERNELS)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        t = time.perf_counter()
        import facet.engine.spark.tasks  # noqa: F401 - what every task unpickles
        from facet.engine.warmup import warmup

        warmup(names)
        for _ in batches:
            pass
        yield pa.RecordBatch.from_pydict({"seconds": [time.perf_counter() - t]})

    return run


def warm_workers(engine: Any, kernels: Iterable[str]) -> float:
    """Run one warm-up task per executor core of ``engine``'s session; the
    seconds the job took."""
    from facet.engine.spark.connect import session_cores

    spark = engine.spark
    cores = max(1, session_cores(spark))
    t = time.perf_counter()
    spark.range(0, cores, 1, cores).mapInArrow(warmup_job(kernels), "seconds double").collect()
    return time.perf_counter() - t
