"""How much of facet's Spark time is Spark moving rows: one DC's phases beside the
same Spark jobs with no facet work in them.

    python bench/spark_floor_worker.py --file TABLE.parquet --dc DC [--master local[2]]
        [--repeats 3]

In one Spark session (facet's own, ``facet.detect(..., engine="spark")``), the worker
counts the DC ``1 + --repeats`` times -- the first as ``facet detect --engine spark``
meets it (a fresh JVM), the others warm -- timing the engine's steps from its progress
events (``statistics``: the planner's cardinality job; ``spreading rows``: the rows per
key; ``N tasks``: the tasks' job, to the end of the count).  Then, ``--repeats`` times
each, on the DC's columns read from the same file and cached (untimed), the same jobs
with nothing of facet in them:

* ``distinct``: ``count(DISTINCT c)`` of every column the DC reads, one aggregate --
  only when the engine's count asked statistics (a ``statistics`` step);
* ``keys``: the rows per value of the keys the engine spread on (its JSON ``work``: the
  equalities leading the plan, as one key);
* ``rows to tasks``: the rows hash-partitioned on those keys into as many tasks as the
  engine ran, each task's rows handed to a Python function as Arrow
  (``groupBy().applyInArrow``) that only counts them.

The sum of the three is what any engine that runs this DC as Python tasks over shuffled
rows pays on this machine before it computes anything.  Prints one JSON line:
``seconds`` (facet's warm median), ``count``, ``first_seconds``, ``steps`` (median seconds
of each step, warm), ``floor`` (median seconds of each job), ``key``, ``tasks``,
``rows``, ``master``, ``spark``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _steps(events: list[tuple[float, str]], end: float) -> dict[str, float]:
    """Seconds from each step event to the next one (the last: to ``end``); a
    step named ``N tasks`` is keyed ``tasks``."""
    out: dict[str, float] = {}
    for i, (t, text) in enumerate(events):
        nxt = events[i + 1][0] if i + 1 < len(events) else end
        key = "tasks" if text.endswith(" tasks") else text
        out[key] = out.get(key, 0.0) + nxt - t
    return out


def count_once(file: str, dc: str, master: str) -> tuple[object, dict[str, float], float]:
    """One count of ``dc`` on the Spark engine: the result, its steps' seconds, its DC seconds."""
    import facet

    events: list[tuple[float, str]] = []
    end = [0.0]

    def progress(event) -> None:
        if event.phase != "count":
            return
        if event.step is not None:
            events.append((time.perf_counter(), event.step))
        elif event.total and event.done == event.total:
            end[0] = time.perf_counter()

    result = facet.detect(file, [dc], engine="spark", master=master, progress=progress)
    res = result.dcs[0]
    return result, _steps(events, end[0] or time.perf_counter()), res.seconds


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def worker(file: str, dc: str, master: str, repeats: int) -> int:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import pyarrow as pa
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F  # noqa: N812

    result, _, first = count_once(file, dc, master)
    violations = result.dcs[0].violations
    work = result.dcs[0].work or []
    runs = [count_once(file, dc, master) for _ in range(repeats)]
    if any(r[0].dcs[0].violations != violations for r in runs):
        raise SystemExit("facet's counts differ between runs")
    steps = {k: _median([r[1].get(k, 0.0) for r in runs]) for k in runs[0][1]}
    seconds = _median([r[2] for r in runs])

    spark = SparkSession.getActiveSession() or SparkSession.builder.master(master).getOrCreate()
    cols = sorted(_columns(dc))
    frame = spark.read.parquet(file).select(*[F.col(f"`{c}`") for c in cols]).persist()
    rows = frame.count()
    first_work = work[0] if work else {}
    keys = [tuple(k) for k in first_work.get("keys") or []]
    tasks = int(first_work["tasks"]) if work else 1

    def n_rows(table: pa.Table) -> pa.Table:
        return pa.table({"n": pa.array([table.num_rows], pa.int64())})

    def side(names: list[str]) -> object:
        named = [F.col(f"`{c}`").alias(f"_k{i}") for i, c in enumerate(names)]
        return frame.select(*named, *[F.col(f"`{c}`") for c in cols])

    jobs = {}
    if "statistics" in steps:  # the engine's plan asked statistics: their job
        jobs["distinct"] = lambda: frame.agg(*[F.count_distinct(f"`{c}`") for c in cols]).collect()
    if keys:  # the rows as t by the keys' a columns, as t' by their b columns
        lefts, rights = [a for a, _ in keys], [b for _, b in keys]
        sides = side(lefts) if lefts == rights else side(lefts).unionByName(side(rights))
        kcols = [f"_k{i}" for i in range(len(keys))]
        spread = sides.withColumn("_task", F.pmod(F.hash(*kcols), F.lit(tasks)))
        jobs["keys"] = lambda: sides.groupBy(*kcols).count().where(F.col("count") > rows).collect()
        jobs["rows to tasks"] = lambda: (
            spread.groupBy("_task").applyInArrow(n_rows, "n long").agg(F.sum("n")).collect()
        )
    floor: dict[str, float] = {}
    for name, job in jobs.items():
        took = []
        for _ in range(repeats):
            t = time.perf_counter()
            job()
            took.append(time.perf_counter() - t)
        floor[name] = _median(took)
    frame.unpersist()
    print(json.dumps({"seconds": seconds, "count": int(violations), "first_seconds": first,
                      "steps": steps, "floor": floor, "keys": keys, "tasks": tasks, "rows": rows,
                      "master": master, "spark": spark.version}))  # fmt: skip
    spark.stop()
    return 0


def _columns(dc: str) -> list[str]:
    """The columns ``dc`` reads."""
    from facet.column_types import analyze
    from facet.language.parser import parse_dc

    return list(analyze(parse_dc(dc)).columns)


def run(file: Path, dc: str, master: str, repeats: int, timeout: float, rss_limit: int) -> dict:
    """One worker process under the watchdog (``common.run_process``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import common

    cmd = [sys.executable, str(Path(__file__).resolve()), "--file", str(file), "--dc", dc,
           "--master", master, "--repeats", str(repeats)]  # fmt: skip
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    return common.run_worker(
        cmd, timeout, rss_limit,
        ("first_seconds", "steps", "floor", "keys", "tasks", "rows", "master", "spark"), env=env,
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", required=True, help="a Parquet table")
    ap.add_argument("--dc", required=True, help="not(t.A op t'.B and ...)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    return worker(args.file, args.dc, args.master, args.repeats)


if __name__ == "__main__":
    sys.exit(main())
