"""``--where`` selecting about 1% of the rows against the full run, per DC, at 1M rows.

    python bench/scoped.py [--rows 1000000] [--repeats 3] [--fraction 0.01] [--timeout 600]

Tables and DCs: those of ``bench/fast_shapes.py`` (the Tax-like CSV of ``data/taxgen.py``
and TPC-H ``lineitem`` Parquet, ``--rows`` rows each). The scope is a condition on a
column no DC of the table uses, selecting about ``--fraction`` of the rows: on lineitem
``l_orderkey <= K`` (K the quantile), on Tax ``l_name in (...)`` (the first last names in
sorted order until the fraction is reached). For each DC, after one untimed warm-up,
``--repeats`` interleaved pairs of processes: ``facet detect FILE --dc DC --format json``
with and without ``--where``. Compared: the DC's ``seconds`` (everything after the table
is in Arrow: typing, encoding, the scope's evaluation, planning, execution) and the wall
time; the counts of the scoped run are checked against nothing here (tests/test_where.py
checks them against naive and DuckDB). Target (issue 11): scoped <= 10% of the full run.

Records append to ``bench/results/scoped.jsonl``; ``bench/results/scoped.md`` is rewritten
from the latest run-set.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import fast_shapes  # noqa: E402
import tpch  # noqa: E402

REPO = common.REPO
RESULTS = REPO / "bench" / "results"
JSONL = RESULTS / "scoped.jsonl"
TARGET = 0.10
ERROR_RATE = 0.001  # as bench/fast_shapes.py generates the Tax table


def scope_expr(table: str, path: Path, fraction: float) -> tuple[str, int]:
    """A --where text selecting about ``fraction`` of the rows, and the rows it selects."""
    if table == "lineitem":
        keys = pq.read_table(path, columns=["l_orderkey"])["l_orderkey"]
        n = len(keys)
        k = pc.quantile(keys, q=fraction, interpolation="lower")[0].as_py()
        return f"l_orderkey <= {k}", int(pc.sum(pc.less_equal(keys, k)).as_py())
    names = pacsv.read_csv(
        path,
        convert_options=pacsv.ConvertOptions(
            include_columns=["l_name"], column_types={"l_name": "string"}
        ),
    )["l_name"]
    n = len(names)
    counts = pc.value_counts(names).to_pylist()
    counts.sort(key=lambda c: c["values"] or "")
    chosen, total = [], 0
    for c in counts:
        if total >= fraction * n:
            break
        if c["values"]:
            chosen.append(c["values"].replace("'", "''"))
            total += c["counts"]
    return "l_name in (" + ", ".join(f"'{v}'" for v in chosen) + ")", total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--fraction", type=float, default=0.01)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--dcs", default=",".join(fast_shapes.DCS))
    args = ap.parse_args(argv)
    exe = common.facet_exe()
    if exe is None:
        raise SystemExit("no facet executable: run scripts/setup.sh")
    work = REPO / "bench" / "work"
    names = args.dcs.split(",")
    files = {}
    if any(fast_shapes.DCS[n][0] == "tax" for n in names):
        files["tax"] = common.tax_table(args.rows, 0, ERROR_RATE, work, args.timeout)
    if any(fast_shapes.DCS[n][0] == "lineitem" for n in names):
        files["lineitem"] = tpch.lineitem(args.rows, work, ("parquet",))["parquet"]
    scopes = {t: scope_expr(t, p, args.fraction) for t, p in files.items()}
    run_id = uuid.uuid4().hex[:12]
    info = common.machine_info()
    common.append_jsonl(JSONL, {"run_id": run_id, "kind": "machine", **info,
                                "command": common.command_line()})  # fmt: skip
    rss = common.default_rss_limit()
    for name in names:
        table, dc = fast_shapes.DCS[name]
        path = files[table]
        where, selected = scopes[table]
        extra = ("--where", where)
        common.run_facet(exe, path, dc, args.timeout, rss, extra=extra)  # warm-up
        full, scoped = [], []
        for _ in range(args.repeats):
            full.append(common.run_facet(exe, path, dc, args.timeout, rss))
            scoped.append(common.run_facet(exe, path, dc, args.timeout, rss, extra=extra))
        fs, ss = common.summarize_runs(full), common.summarize_runs(scoped)
        ratio = (
            ss["median_seconds"] / fs["median_seconds"]
            if fs.get("median_seconds") and ss.get("median_seconds") is not None
            else None
        )
        rec = {
            "run_id": run_id, "kind": "cell", "dc_id": name, "table": table, "dc": dc,
            "rows": args.rows, "where": where if len(where) < 200 else where[:197] + "...",
            "scope_rows": selected, "full": fs, "scoped": ss, "ratio": ratio,
            "target": TARGET, "meets_target": ratio is not None and ratio <= TARGET,
        }  # fmt: skip
        common.append_jsonl(JSONL, rec)
        print(
            f"{name}: full {fs.get('median_seconds')} s, scoped {ss.get('median_seconds')} s, "
            f"ratio {ratio}",
            file=sys.stderr,
            flush=True,
        )
    write_markdown(run_id, info)
    return 0


def write_markdown(run_id: str, info: dict) -> None:
    records = [r for r in common.read_jsonl(JSONL) if r.get("run_id") == run_id]
    machine = next(r for r in records if r["kind"] == "machine")
    rows = []
    for r in records:
        if r["kind"] != "cell":
            continue
        f, s = r["full"], r["scoped"]
        rows.append([
            r["dc_id"], f"{r['rows']:,}", f"{r['scope_rows']:,}",
            common.fmt_seconds(f.get("median_seconds")), common.fmt_seconds(s.get("median_seconds")),
            "-" if r["ratio"] is None else f"{r['ratio']:.2f}",
            common.fmt_seconds(f.get("median_wall_seconds")), common.fmt_seconds(s.get("median_wall_seconds")),
            f"{f.get('violations'):,}" if f.get("violations") is not None else "-",
            f"{s.get('violations'):,}" if s.get("violations") is not None else "-",
            "yes" if r["meets_target"] else "no",
        ])  # fmt: skip
    head = ["DC", "rows", "scope rows", "full DC s", "scoped DC s", "scoped/full", "full wall s",
            "scoped wall s", "full count", "scoped count", "<= 10%"]  # fmt: skip
    scopes = sorted({(r["table"], r["where"]) for r in records if r["kind"] == "cell"})
    text = f"""# `--where` selecting ~1% of the rows vs the full run

Written by `bench/scoped.py`. Command:

    {machine["command"]}

Machine: {machine["cpu_model"]}, nproc {machine["nproc"]}, {machine["mem_total_gib"]} GiB;
Python {machine["python"]}; git {str(machine["git_commit"])[:7]}\
{" (dirty)" if machine["git_dirty"] else ""}; {machine["date"]}.

Medians of each DC's `seconds` (after the table is in Arrow: typing, encoding, evaluating the
scope, planning, executing) and of the process wall time, full and scoped runs interleaved
in their own processes. Scopes: {"; ".join(f"{t}: `{w}`" for t, w in scopes)}.

{common.markdown_table(head, rows)}
"""
    (RESULTS / "scoped.md").write_text(text)


if __name__ == "__main__":
    sys.exit(main())
