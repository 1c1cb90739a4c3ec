"""facet's Spark engine against the local engine and a Spark SQL self-join.

    python bench/spark_suite.py compare [--rows 1000000] [--repeats 1] [--timeout 600]
        [--only ID ...] [--master local[2]]
    python bench/spark_suite.py cores [--rows 10000000] [--only ID]
    python bench/spark_suite.py huge [--rows 100000000] [--master local-cluster[2,1,4096]]
    python bench/spark_suite.py skew [--rows 1000000] [--master local[2]]
    python bench/spark_suite.py floor [--rows 1000000] [--repeats 3] [--only ID ...]

Every run is its own process under ``bench/common.py``'s watchdog (timeout, peak RSS of the
whole process group: the driver, its JVM, executors and Python workers).

* **compare** (bench/README.md "Spark" targets): for each DC of ``bench/fast_shapes.py``
  (the Tax-like CSV and TPC-H ``lineitem`` Parquet, ``--rows`` each) the local engine
  (``facet detect ... --format json``), the Spark engine (``--engine spark --master
  local[2]``) and Spark SQL (``bench/spark_sql_worker.py``: the table typed as facet types it,
  cached, ``SELECT count(*)`` of the self-join), each ``--repeats`` times, Spark SQL once
  when it times out. The times compared are the DC's ``seconds`` (facet: planning and
  detection, the table already loaded; Spark SQL: the query on the cached table); wall and
  peak RSS are recorded. Counts must agree wherever runs finish (exit 1 otherwise).
* **cores**: the Spark engine on ``li_price_discount`` at ``--rows`` lineitem rows,
  ``local[1]`` against ``local[2]``.
* **huge**: ``--rows`` generated rows of two columns (``price``: uniform doubles,
  ``discount``: 11 values, as lineitem's) written once to Parquet, counted by the Spark
  engine for ``not(t.price > t'.price and t.discount < t'.discount)`` on ``--master``; time
  and peak memory recorded.
* **skew**: ``--rows`` generated rows whose key ``k`` holds 30% of them in one value (the
  rest spread over 5,000 values), counted by the Spark engine for ``not(t.k = t'.k and
  t.v < t'.v and t.w > t'.w)``; the JSON's ``work`` gives the rows of the largest task,
  recorded with the bound the heavy key's sub-blocks keep it under (twice a task's share,
  ``max(rows / tasks, Config.spark_split_rows)``).

* **floor**: for each DC of ``--only`` (default ``li_qty_tax_price_discount``), in one
  worker process (``bench/spark_floor_worker.py``) the Spark engine's time split by its
  steps (statistics, spreading rows, tasks) beside the same Spark jobs with nothing of
  facet in them -- the DC's columns counted distinct, the rows per key, and the rows
  hash-partitioned into the engine's tasks and handed to a Python function that only
  counts them -- and Spark SQL's self-join in its own process: how close the engine
  runs to what moving the rows costs, and the best ratio to Spark SQL that an engine of
  Python tasks over shuffled rows can reach on this machine.

Records append to ``bench/results/spark_suite.jsonl``; ``bench/results/spark_suite.md`` is
rewritten from the latest record of every cell.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import fast_shapes  # noqa: E402
import spark_floor_worker  # noqa: E402
import spark_sql_worker  # noqa: E402
import tpch  # noqa: E402

REPO = common.REPO
RESULTS = REPO / "bench" / "results"
JSONL = RESULTS / "spark_suite.jsonl"
HUGE_DC = "not(t.price > t'.price and t.discount < t'.discount)"
SKEW_DC = "not(t.k = t'.k and t.v < t'.v and t.w > t'.w)"
FD_SHAPED = ("tax_zip_city", "tax_phone")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def facet_run(ctx, file: Path, dc: str, master: str | None) -> dict:
    extra = ("--engine", "spark", "--master", master) if master else ()
    r = common.run_facet(ctx.facet, file, dc, ctx.timeout, ctx.rss_limit, extra=extra)
    _log(f"    {'spark ' + master if master else 'local'}: {r['status']} "
         f"seconds {r.get('seconds', float('nan')):.2f} wall {r['wall']:.1f} "
         f"rss {common.fmt_bytes(max(r['rss'] or 0, r.get('group_rss') or 0))} "
         f"count {r.get('violations')}")  # fmt: skip
    return r


def sql_run(ctx, typed: Path, dc: str) -> dict:
    r = spark_sql_worker.run(typed, dc, ctx.master, ctx.timeout, ctx.rss_limit)
    _log(f"    spark sql: {r['status']} seconds {r.get('seconds', float('nan')):.2f} "
         f"wall {r['wall']:.1f} rss {common.fmt_bytes(max(r['rss'] or 0, r.get('group_rss') or 0))} "
         f"count {r.get('violations')}")  # fmt: skip
    return r


def record(ctx, part: str, cell: str, **fields) -> dict:
    rec = {"bench": "spark_suite", "part": part, "cell": cell, "command": common.command_line(),
           "machine": ctx.machine, **fields}  # fmt: skip
    common.append_jsonl(JSONL, rec)
    return rec


def summary(runs: list[dict]) -> dict:
    ok = [r for r in runs if r["status"] == "ok"]
    counts = sorted({r["violations"] for r in ok})
    return {
        "status": "ok" if ok else runs[-1]["status"],
        "seconds": common.median([r["seconds"] for r in ok]) if ok else None,
        "wall": common.median([r["wall"] for r in ok]) if ok else runs[-1]["wall"],
        "rss": max(max(r["rss"] or 0, r.get("group_rss") or 0) for r in runs) or None,
        "violations": counts[0] if len(counts) == 1 else (counts or None),
        "samples": [r.get("seconds") for r in ok],
    }


def compare(ctx) -> int:
    ctx.names = ctx.only or list(fast_shapes.DCS)
    ctx.work = str(ctx.work_dir)
    ctx.seed, ctx.error_rate, ctx.lineitem_format = 0, 0.001, "parquet"
    files = fast_shapes.tables(ctx)
    bad = 0
    for name in ctx.names:
        table, dc = fast_shapes.DCS[name]
        file = files[table]
        _log(f"{name} ({file.name}): {dc}")
        typed = spark_sql_worker.typed_parquet(file, dc, ctx.work_dir)
        facet_run(ctx, file, dc, None)  # warms facet's numba cache (untimed)
        local, spark, sql = [], [], []
        for _ in range(ctx.repeats):
            local.append(facet_run(ctx, file, dc, None))
            spark.append(facet_run(ctx, file, dc, ctx.master))
            if not sql or sql[-1]["status"] == "ok":
                sql.append(sql_run(ctx, typed, dc))
        s = {"local": summary(local), "spark": summary(spark), "spark_sql": summary(sql)}
        counts = {v["violations"] for v in s.values() if v["status"] == "ok"}
        agree = len(counts) <= 1 and all(not isinstance(c, list) for c in counts)
        bad += not agree
        sp, q = s["spark"]["seconds"], s["spark_sql"]["seconds"]
        ratio = (q / sp) if (sp and q) else None
        if sp and s["spark_sql"]["status"] != "ok":
            ratio = f">{ctx.timeout / sp:.0f}"  # Spark SQL did not finish in the cap
        record(ctx, "compare", name, dc=dc, file=file.name, rows=ctx.rows, master=ctx.master,
               repeats=ctx.repeats, timeout=ctx.timeout, counts_agree=agree,
               sql_over_spark=ratio, fd_shaped=name in FD_SHAPED, **s)  # fmt: skip
        write_markdown()
    return 1 if bad else 0


def cores(ctx) -> int:
    name = (ctx.only or ["li_price_discount"])[0]
    table, dc = fast_shapes.DCS[name]
    file = tpch.lineitem(ctx.rows, ctx.work_dir, ("parquet",))["parquet"]
    _log(f"{name} at {ctx.rows:,} rows: {dc}")
    runs = {"local[1]": [], "local[2]": []}
    for _ in range(ctx.repeats):
        for master in runs:
            runs[master].append(facet_run(ctx, file, dc, master))
    s = {m: summary(r) for m, r in runs.items()}
    one, two = s["local[1]"]["seconds"], s["local[2]"]["seconds"]
    record(ctx, "cores", name, dc=dc, file=file.name, rows=ctx.rows, repeats=ctx.repeats,
           timeout=ctx.timeout, speedup=(one / two) if one and two else None,
           **{m.replace("[", "_").rstrip("]"): v for m, v in s.items()})  # fmt: skip
    write_markdown()
    return 0


def floor(ctx) -> int:
    names = ctx.only or ["li_qty_tax_price_discount"]
    ctx.names = names
    ctx.work = str(ctx.work_dir)
    ctx.seed, ctx.error_rate, ctx.lineitem_format = 0, 0.001, "parquet"
    files = fast_shapes.tables(ctx)
    bad = 0
    for name in names:
        table, dc = fast_shapes.DCS[name]
        file = files[table]
        if file.suffix != ".parquet":
            _log(f"{name}: {file.name} is not Parquet; the floor reads Parquet only")
            bad += 1
            continue
        _log(f"floor {name} ({file.name}): {dc}")
        typed = spark_sql_worker.typed_parquet(file, dc, ctx.work_dir)
        r = spark_floor_worker.run(file, dc, ctx.master, ctx.repeats, ctx.timeout, ctx.rss_limit)
        _log(f"    facet spark {r['status']}: {r.get('seconds', float('nan')):.2f} s, "
             f"steps {r.get('steps')}, floor {r.get('floor')}")  # fmt: skip
        sql = [sql_run(ctx, typed, dc) for _ in range(ctx.repeats)]
        s = summary(sql)
        agree = r["status"] == "ok" and s["status"] == "ok" and r["violations"] == s["violations"]
        bad += not agree
        record(ctx, "floor", name, dc=dc, file=file.name, rows=ctx.rows, master=ctx.master,
               repeats=ctx.repeats, timeout=ctx.timeout, counts_agree=agree,
               spark={k: r.get(k) for k in ("status", "seconds", "first_seconds", "violations",
                                             "steps", "floor", "keys", "tasks", "wall")},
               spark_sql=s)  # fmt: skip
        write_markdown()
    return 1 if bad else 0


def huge_table(rows: int, work: Path) -> Path:
    """``rows`` rows of (price, discount), generated by Spark once into Parquet."""
    out = work / f"price_discount_{rows}.parquet"
    if out.exists():
        return out
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F  # noqa: N812

    spark = (
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    )
    frame = spark.range(rows, numPartitions=max(2, rows // 2_000_000)).select(
        F.round(F.rand(1) * 100_000, 2).alias("price"),
        (F.floor(F.rand(2) * 11) / 100).alias("discount"),
    )
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    frame.write.mode("overwrite").parquet(str(tmp))
    spark.stop()
    tmp.rename(out)
    return out


def huge(ctx) -> int:
    file = huge_table(ctx.rows, ctx.work_dir)
    _log(f"huge: {ctx.rows:,} rows on {ctx.master}: {HUGE_DC}")
    r = facet_run(ctx, file, HUGE_DC, ctx.master)
    record(ctx, "huge", "price_discount", dc=HUGE_DC, file=file.name, rows=ctx.rows,
           master=ctx.master, timeout=ctx.timeout, spark=summary([r]))  # fmt: skip
    write_markdown()
    return 0 if r["status"] == "ok" else 1


def skew_table(rows: int, work: Path) -> Path:
    """``rows`` rows of (k, v, w) with 30% of them in key 0, written once to Parquet."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = work / f"skew30_{rows}.parquet"
    if not out.exists():
        rng = np.random.default_rng(7)
        key = np.where(rng.random(rows) < 0.3, 0, rng.integers(1, 5_001, rows))
        table = pa.table({"k": key, "v": rng.integers(0, 1_000_000, rows),
                          "w": rng.integers(0, 1_000, rows)})  # fmt: skip
        tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
        pq.write_table(table, tmp)
        tmp.rename(out)
    return out


def skew(ctx) -> int:
    from facet.engine.spark.connect import cores_of
    from facet.planner.config import DEFAULT

    file = skew_table(ctx.rows, ctx.work_dir)
    _log(f"skew: {ctx.rows:,} rows, 30% in one key, on {ctx.master}: {SKEW_DC}")
    runs = [facet_run(ctx, file, SKEW_DC, ctx.master) for _ in range(ctx.repeats)]
    tasks = 2 * cores_of(ctx.master)
    share = max(-(-ctx.rows // tasks), DEFAULT.spark_split_rows)
    work = next((r["work"] for r in runs if r.get("work")), None) or []
    largest = max((w.get("largest_task_rows", 0) for w in work), default=None)
    record(ctx, "skew", "k30", dc=SKEW_DC, file=file.name, rows=ctx.rows, master=ctx.master,
           repeats=ctx.repeats, timeout=ctx.timeout, heavy_rows=int(0.3 * ctx.rows),
           share=share, bound=2 * share, largest_task_rows=largest, work=work,
           spark=summary(runs))  # fmt: skip
    write_markdown()
    ok = all(r["status"] == "ok" for r in runs) and largest is not None and largest <= 2 * share
    return 0 if ok else 1


def _s(x) -> str:
    return "-" if x is None else common.fmt_seconds(x)


def write_markdown() -> None:
    recs = common.read_jsonl(JSONL)
    latest: dict[tuple, dict] = {}
    for r in recs:
        latest[(r["part"], r["cell"], r.get("rows"), r.get("master"))] = r
    lines = ["# facet on Spark vs the local engine and Spark SQL", "",
             "Written by `bench/spark_suite.py` from `spark_suite.jsonl` (latest record of each "
             "cell). Seconds: the DC's time (facet: planning + detection after loading; Spark "
             "SQL: the self-join's `count(*)` on the cached, typed table); medians. Ratios "
             "compare systems within one run-set (a row), never across rows.", ""]  # fmt: skip
    for part in ("compare", "cores", "huge", "skew", "floor"):
        cells = [r for k, r in latest.items() if k[0] == part]
        if not cells:
            continue
        last = max(cells, key=lambda r: r["machine"]["date"])  # the newest run, not key order
        m = last["machine"]
        lines += [f"## {part}", "", f"Latest: `{last['command']}` -- {m['date']}, "
                  f"{m['nproc']} cores, {m['mem_total_gib']} GiB, commit "
                  f"{(m.get('git_commit') or '')[:10]}{' (dirty)' if m.get('git_dirty') else ''}", ""]  # fmt: skip
        if part == "compare":
            rows = []
            for r in cells:
                sql = r["spark_sql"]
                sql_s = (
                    _s(sql["seconds"])
                    if sql["status"] == "ok"
                    else f"{sql['status']} (>{r['timeout']:.0f} s)"
                )
                ratio = r["sql_over_spark"]
                run = f"{(r['machine'].get('git_commit') or '')[:7]} {r['machine']['date'][:16]}"
                rows.append([r["cell"], run, f"{r['rows']:,}", _s(r["local"]["seconds"]),
                             _s(r["spark"]["seconds"]), sql_s,
                             ratio if isinstance(ratio, str) else (f"{ratio:.1f}x" if ratio else "-"),
                             common.fmt_bytes(r["spark"]["rss"]), r["spark"]["violations"],
                             "yes" if r["counts_agree"] else "NO"])  # fmt: skip
            lines.append(common.markdown_table(
                ["DC", "run (commit, date)", "rows", "local", "spark local[2]", "Spark SQL",
                 "SQL / spark",
                 "spark peak RSS (process group)", "violations", "counts agree"], rows))  # fmt: skip
        elif part == "cores":
            rows = [[r["cell"], f"{r['rows']:,}", _s(r["local_1"]["seconds"]),
                     _s(r["local_2"]["seconds"]),
                     f"{r['speedup']:.2f}x" if r["speedup"] else "-",
                     r["local_2"]["violations"]] for r in cells]  # fmt: skip
            lines.append(common.markdown_table(
                ["DC", "rows", "local[1]", "local[2]", "speedup", "violations"], rows))  # fmt: skip
        elif part == "floor":
            rows = []
            for r in cells:
                sp, fl, st = (
                    r["spark"],
                    r["spark"].get("floor") or {},
                    r["spark"].get("steps") or {},
                )
                bare = sum(fl.values()) if fl else None
                q = r["spark_sql"]["seconds"]
                rows.append([r["cell"], f"{r['rows']:,}", r["master"], sp.get("tasks"),
                             _s(sp.get("first_seconds")), _s(sp.get("seconds")),
                             _s(st.get("statistics")), _s(st.get("spreading rows")),
                             _s(st.get("tasks")), _s(fl.get("distinct")), _s(fl.get("keys")),
                             _s(fl.get("rows to tasks")), _s(bare), _s(q),
                             f"{q / sp['seconds']:.1f}x" if q and sp.get("seconds") else "-",
                             f"{q / bare:.1f}x" if q and bare else "-",
                             "yes" if r["counts_agree"] else "NO"])  # fmt: skip
            lines.append(common.markdown_table(
                ["DC", "rows", "master", "tasks", "facet, first run", "facet, warm",
                 "its statistics", "its spreading", "its tasks", "Spark alone: distinct",
                 "rows per key", "rows to empty tasks", "Spark alone, sum", "Spark SQL",
                 "SQL / facet (warm)", "SQL / Spark alone", "counts agree"], rows))  # fmt: skip
            lines.append("")
            lines.append(
                "facet's steps: the engine's progress steps of a warm count (statistics: the "
                "planner's distinct-count job, if its plan asks one; spreading: the rows per "
                "key; tasks: the tasks' job to the end of the count). Spark alone: the same "
                "jobs over the DC's columns with nothing of facet in them "
                "(bench/spark_floor_worker.py; '-': a job the engine did not run); their "
                "sum is what an engine of Python tasks over shuffled rows pays here before "
                "computing anything."
            )
        elif part == "skew":
            rows = [[r["cell"], f"{r['rows']:,}", r["master"], r["spark"]["status"],
                     _s(r["spark"]["seconds"]), f"{r['heavy_rows']:,}",
                     sum(w.get("tasks", 0) for w in r["work"]),
                     f"{r['largest_task_rows']:,}" if r["largest_task_rows"] else "-",
                     f"{r['bound']:,}", r["spark"]["violations"]] for r in cells]  # fmt: skip
            lines.append(common.markdown_table(
                ["DC", "rows", "master", "status", "seconds", "rows of the heavy key", "tasks",
                 "largest task's rows", "bound (2 x share)", "violations"], rows))  # fmt: skip
        else:
            rows = [[r["cell"], f"{r['rows']:,}", r["master"], r["spark"]["status"],
                     _s(r["spark"]["seconds"]), _s(r["spark"]["wall"]),
                     common.fmt_bytes(r["spark"]["rss"]), r["spark"]["violations"]]
                    for r in cells]  # fmt: skip
            lines.append(common.markdown_table(
                ["DC", "rows", "master", "status", "seconds", "wall", "peak RSS (process group)",
                 "violations"],
                rows))  # fmt: skip
        lines.append("")
    (RESULTS / "spark_suite.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("part", choices=("compare", "cores", "huge", "skew", "floor"))
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--only", nargs="*", default=None, help="DC ids of bench/fast_shapes.py")
    ap.add_argument("--master", default=None)
    ap.add_argument("--work", default=str(REPO / "bench" / "work"))
    ap.add_argument("--rss-limit-gib", type=float, default=None)
    ctx = ap.parse_args(argv)
    ctx.rows = (
        ctx.rows
        or {
            "compare": 1_000_000,
            "cores": 10_000_000,
            "huge": 100_000_000,
            "skew": 1_000_000,
            "floor": 1_000_000,
        }[ctx.part]
    )
    ctx.master = ctx.master or ("local-cluster[2,1,4096]" if ctx.part == "huge" else "local[2]")
    ctx.work_dir = Path(ctx.work)
    ctx.work_dir.mkdir(parents=True, exist_ok=True)
    ctx.facet = common.facet_exe()
    if ctx.facet is None:
        raise SystemExit("no facet executable: run scripts/setup.sh")
    ctx.rss_limit = common.rss_limit(ctx.rss_limit_gib)
    ctx.machine = common.machine_info(("pyspark", "numpy", "numba", "pyarrow", "duckdb"))
    parts = {"compare": compare, "cores": cores, "huge": huge, "skew": skew, "floor": floor}
    return parts[ctx.part](ctx)


if __name__ == "__main__":
    sys.exit(main())
