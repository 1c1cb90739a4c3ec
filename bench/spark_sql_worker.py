"""Spark SQL as a benchmark peer: a DC's violations as a self-join count on Spark.

    python bench/spark_sql_worker.py --file TYPED.parquet --dc DC [--master local[2]]

The worker (one process per measured run) reads ``TYPED.parquet`` -- the table with ``rid``
(0-based row number) and its columns typed as facet types them, as
``bench/duckdb_worker.py`` loads it and ``typed_parquet`` writes it -- caches it in Spark
(untimed), then times ``SELECT count(*) FROM r t JOIN r t2 ON t.rid <> t2.rid AND ...``
(ordered pairs, docs/semantics.md §1's count; Spark plans the join itself: a sort-merge join
on an equality, else a nested loop) and prints one JSON line: ``rows``, ``count``,
``seconds``, ``load_seconds``, ``sql``, ``master``, ``spark`` (its version).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import duckdb_worker  # noqa: E402


def dc_to_spark_sql(dc: str) -> str:
    def operand(x: str) -> str:
        if x.startswith("t'."):
            return f"t2.`{x[3:]}`"
        if x.startswith("t."):
            return f"t.`{x[2:]}`"
        if x[0] in "'\"":
            return "'" + x[1:-1].replace("\\", "\\\\").replace("'", "\\'") + "'"
        return x

    preds = duckdb_worker.parse_dc(dc)
    where = " AND ".join(
        f"{operand(a)} {duckdb_worker._SQL_OP[op]} {operand(b)}" for a, op, b in preds
    )
    return f"SELECT count(*) AS n FROM r t JOIN r t2 ON t.rid <> t2.rid AND {where}"


def typed_parquet(file: Path, dc: str, work: Path) -> Path:
    """``file`` with ``rid``, typed as facet types it for ``dc`` (DuckDB's loader of
    ``duckdb_worker``), as Parquet in ``work`` (written once per file and DC's columns)."""
    import duckdb

    cols = sorted(duckdb_worker.used_columns(dc))
    ordered = sorted(duckdb_worker.ordered_columns([dc]))
    tag = hashlib.sha1(repr((cols, ordered)).encode()).hexdigest()[:8]
    out = work / f"{file.stem}.typed{tag}.parquet"
    if out.exists():
        return out
    con = duckdb.connect()
    if file.suffix == ".parquet":
        con.execute(
            "CREATE TABLE r AS SELECT (row_number() OVER ()) - 1 AS rid, * FROM read_parquet(?)",
            [str(file)],
        )
    else:
        err = duckdb_worker.load_csv_as_facet_types(con, str(file), dc)
        if err:
            raise SystemExit(err)
    quoted = ", ".join(duckdb_worker._quote(c) for c in ["rid", *cols])
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    con.execute(f"COPY (SELECT {quoted} FROM r ORDER BY rid) TO '{tmp}' (FORMAT parquet)")
    tmp.rename(out)
    return out


def worker(file: str, dc: str, master: str) -> int:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    t0 = time.perf_counter()
    spark = (
        SparkSession.builder.master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    r = spark.read.parquet(file).cache()
    rows = r.count()
    r.createOrReplaceTempView("r")
    load = time.perf_counter() - t0
    sql = dc_to_spark_sql(dc)
    t1 = time.perf_counter()
    count = spark.sql(sql).collect()[0]["n"]
    seconds = time.perf_counter() - t1
    print(json.dumps({"rows": rows, "count": int(count), "seconds": seconds,
                      "load_seconds": load, "sql": sql, "master": master,
                      "spark": spark.version}))  # fmt: skip
    spark.stop()
    return 0


def run(file: Path, dc: str, master: str, timeout: float, rss_limit: int) -> dict:
    """One worker process under the watchdog (``common.run_process``)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--file", str(file), "--dc", dc,
           "--master", master]  # fmt: skip
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    return common.run_worker(
        cmd, timeout, rss_limit, ("load_seconds", "rows", "sql", "spark"), env=env
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", required=True, help="typed Parquet with rid (typed_parquet)")
    ap.add_argument("--dc", required=True, help="not(t.A op t'.B and ...)")
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args(argv)
    return worker(args.file, args.dc, args.master)


if __name__ == "__main__":
    sys.exit(main())
