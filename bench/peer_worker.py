"""One benchmark peer counting DC violations in its own process (``bench/suite.py``).

    python bench/peer_worker.py --system duckdb|polars|pandas|desbordante|spark-sql
        --table TYPED.parquet --dc DC [--dc DC ...] [--threads N] [--master local[2]]

The table is the suite's typed Parquet (columns typed as facet types them, docs/semantics.md
§4.3, plus ``rid``: the 0-based row number). The worker loads it into the system (untimed:
``load_seconds``: reading the file and handing it to the system, e.g. DuckDB's ``CREATE
TABLE``, Spark's cached DataFrame), then times each DC's count on its own (``seconds``) and
prints one JSON line (a system that loads per DC, as Desbordante loads only the DC's
columns, adds that to ``load_seconds``)::

    {"system": ..., "rows": n, "load_seconds": s, "version": ...,
     "dcs": [{"count": c, "seconds": s, "method": "..."} | {"error": "..."}, ...]}

A DC the system cannot express gets ``{"error": "unsupported: ..."}`` (exit 0: the other DCs
stand); any other failure exits 1. What each system runs:

* ``duckdb``: ``SELECT count(*) FROM r t JOIN r t2 ON t.rid <> t2.rid AND ...`` on a
  DuckDB table (``bench/peer_dc.py:sql``); DuckDB plans hash, IE or nested-loop joins itself.
* ``spark-sql``: the same SQL on a cached Spark DataFrame (``--master``, default
  ``local[2]``).
* ``polars`` / ``pandas`` / ``desbordante``: ``bench/polars_worker.py``,
  ``bench/pandas_worker.py``, ``bench/desbordante_worker.py`` (each documents its method).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peer_dc  # noqa: E402

SYSTEMS = ("duckdb", "polars", "pandas", "desbordante", "spark-sql")


class Unsupported(Exception):
    """A DC the system cannot express."""


class DuckDB:
    def __init__(self, path: str, threads: int | None) -> None:
        import duckdb

        self.version = duckdb.__version__
        self.con = duckdb.connect()
        self.con.execute("SET enable_progress_bar = false")
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        self.con.execute("CREATE TABLE r AS SELECT * FROM read_parquet(?)", [path])
        self.rows = self.con.execute("SELECT count(*) FROM r").fetchone()[0]
        import pyarrow.parquet as pq

        self.schema = pq.read_schema(path)

    def count(self, dc: str) -> tuple[int, str, float]:
        sql = peer_dc.sql(dc, self.schema)
        return int(self.con.execute(sql).fetchone()[0]), sql, 0.0


class SparkSQL:
    def __init__(self, path: str, master: str) -> None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        import pyarrow.parquet as pq
        from pyspark.sql import SparkSession

        self.spark = (
            SparkSession.builder.master(master)
            .config("spark.ui.enabled", "false")
            .config("spark.driver.memory", "4g")
            .getOrCreate()
        )
        self.spark.sparkContext.setLogLevel("ERROR")
        self.version = self.spark.version
        frame = self.spark.read.parquet(path).cache()
        self.rows = frame.count()
        frame.createOrReplaceTempView("r")
        self.schema = pq.read_schema(path)

    def count(self, dc: str) -> tuple[int, str, float]:
        sql = peer_dc.sql(dc, self.schema, quote="`", backslash=True)
        return int(self.spark.sql(sql).collect()[0][0]), sql, 0.0


class Library:
    """A peer module with ``load(table) -> handle`` (optional) and ``count(handle, dc)``."""

    def __init__(self, system: str, path: str) -> None:
        import importlib

        import pyarrow.parquet as pq

        self.mod = importlib.import_module(f"{system}_worker")
        table = pq.read_table(path)
        self.rows = table.num_rows
        load = getattr(self.mod, "load", None)
        self.handle = load(table) if load is not None else table
        self.version = self.mod.version() if hasattr(self.mod, "version") else None

    def count(self, dc: str) -> tuple[int, str, float]:
        """Count, method, and the seconds of it that were loading: a module with
        ``prepare(table, dc)`` / ``verify(prepared)`` (Desbordante loads only the DC's
        columns) has its ``prepare`` untimed."""
        unsupported = getattr(self.mod, "Unsupported", None)
        try:
            if hasattr(self.mod, "prepare") and hasattr(self.mod, "verify"):
                t = time.perf_counter()
                prepared = self.mod.prepare(self.handle, dc)
                loading = time.perf_counter() - t
                return (*self.mod.verify(prepared), loading)
            return (*self.mod.count(self.handle, dc), 0.0)
        except Exception as e:
            if unsupported is not None and isinstance(e, unsupported):
                raise Unsupported(str(e)) from None
            raise


def open_system(system: str, path: str, threads: int | None, master: str) -> Any:
    if system == "duckdb":
        return DuckDB(path, threads)
    if system == "spark-sql":
        return SparkSQL(path, master)
    if system == "polars" and threads:
        os.environ["POLARS_MAX_THREADS"] = str(threads)
    return Library(system, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--system", required=True, choices=SYSTEMS)
    ap.add_argument("--table", required=True, help="typed Parquet with rid")
    ap.add_argument("--dc", action="append", required=True, help="facet's canonical DC text")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--master", default="local[2]", help="spark-sql: the Spark master")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    sys_ = open_system(args.system, args.table, args.threads, args.master)
    load = time.perf_counter() - t0
    results = []
    for dc in args.dc:
        t = time.perf_counter()
        try:
            count, method, loading = sys_.count(dc)
        except Unsupported as e:
            results.append({"error": f"unsupported: {e}"})
            continue
        seconds = time.perf_counter() - t - loading
        load += loading
        results.append({"count": count, "seconds": seconds, "method": method})
    doc = {"system": args.system, "rows": sys_.rows, "load_seconds": load,
           "version": sys_.version, "dcs": results}  # fmt: skip
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
