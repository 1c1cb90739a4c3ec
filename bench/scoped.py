"""Scoped and incremental runs against the full run, per DC, at 1M rows (issue 11).

    python bench/scoped.py [--rows 1000000] [--repeats 3] [--fraction 0.01] [--timeout 600]

Tables and DCs: those of ``bench/fast_shapes.py`` (the Tax-like CSV of ``data/taxgen.py``
and TPC-H ``lineitem`` Parquet, ``--rows`` rows each). The scope is a condition on a
column no DC of the table uses, selecting about ``--fraction`` of the rows: on lineitem
``l_orderkey <= K`` (K the quantile), on Tax ``l_name in (...)`` (the first last names in
sorted order until the fraction is reached). The append: the table's first rows as the
base and its last ``--fraction`` as the batch (files cut once into ``bench/work/``). For
each DC, after one untimed warm-up, ``--repeats`` interleaved triples of processes:
``facet detect FILE --dc DC --format json`` without and with ``--where``, and
``bench/append_worker.py`` (a ``facet.Detector`` on the base, untimed, then one timed
``append`` of the batch), and the same append encoding the whole table again
(``Config(append_extends=False)``, as before facet/encoding_append.py), and
``bench/where_worker.py`` (a ``facet.Detector`` kept warm with the scope's column, untimed,
then ``det.where`` timed: its first call and the median of three more). Compared: the DC's ``seconds`` (everything after the table is in
Arrow: typing, encoding, the scope's evaluation, planning, execution), the wall time
(the append's: loading the batch included) and the warm ``where`` call's time. The base's count plus the append's must equal
the full run's (exit 1 otherwise); tests/test_where.py and tests/test_detector.py check
the answers themselves; the warm ``where`` count must equal the one-shot ``--where``'s
(tests/test_detector_where.py checks it against naive). Targets (issue 11): scoped and
append <= 10% of the full run.

Records append to ``bench/results/scoped.jsonl``; ``bench/results/scoped.md`` is rewritten
from the latest run-set.
"""

from __future__ import annotations

import argparse
import json
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
#: the column each table's scope names (no DC of the table uses it)
SCOPE_COLUMN = {"lineitem": "l_orderkey", "tax": "l_name"}
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
    splits = {t: split(p, args.fraction) for t, p in files.items()}
    failed = False
    for name in names:
        table, dc = fast_shapes.DCS[name]
        path = files[table]
        where, selected = scopes[table]
        extra = ("--where", where)
        common.run_facet(exe, path, dc, args.timeout, rss, extra=extra)  # warm-up
        full, scoped, appended, again, warm = [], [], [], [], []
        for _ in range(args.repeats):
            full.append(common.run_facet(exe, path, dc, args.timeout, rss))
            scoped.append(common.run_facet(exe, path, dc, args.timeout, rss, extra=extra))
            appended.append(run_append(*splits[table], dc, args.timeout, rss))
            again.append(run_append(*splits[table], dc, args.timeout, rss, encode_all=True))
            warm.append(run_where(path, dc, SCOPE_COLUMN[table], where, args.timeout, rss))
        fs, ss = common.summarize_runs(full), common.summarize_runs(scoped)
        aps, ags = _appends(appended), _appends(again)
        ws = _wheres(warm)
        exact = all(
            a["violations"] is not None
            and a["violations"] + a["base_violations"] == fs.get("violations")
            for a in (aps, ags)
        )
        warm_exact = ws["violations"] is not None and ws["violations"] == ss.get("violations")
        failed |= not (exact and warm_exact)
        rec = {
            "run_id": run_id, "kind": "cell", "dc_id": name, "table": table, "dc": dc,
            "rows": args.rows, "where": where if len(where) < 200 else where[:197] + "...",
            "scope_rows": selected, "full": fs, "scoped": ss, "append": aps,
            "append_encode_all": ags, "ratio": _ratio(ss, fs), "append_ratio": _ratio(aps, fs),
            "append_adds_up": exact, "target": TARGET, "warm_where": ws,
            "warm_ratio": _ratio(ws, fs),
            "warm_repeated_ratio": _ratio({"median_seconds": ws["median_repeated_seconds"]}, fs),
            "warm_where_equal": warm_exact,
        }  # fmt: skip
        common.append_jsonl(JSONL, rec)
        print(
            f"{name}: full {fs.get('median_seconds')} s, scoped {ss.get('median_seconds')} s, "
            f"append {aps['median_seconds']} s, adds up {exact}, "
            f"warm where {ws['median_seconds']} s, equal {warm_exact}",
            file=sys.stderr,
            flush=True,
        )
    write_markdown(run_id, info)
    return 1 if failed else 0


def _appends(runs: list[dict]) -> dict:
    ok = [a for a in runs if a.get("status") == "ok"]
    return {
        "median_seconds": common.median(a["seconds"] for a in ok),
        "median_wall_seconds": common.median(a["append_wall"] for a in ok),
        "violations": ok[0]["violations"] if ok else None,
        "base_violations": ok[0]["base_violations"] if ok else None,
        "batch_rows": ok[0]["rows"] - ok[0]["base_rows"] if ok else None,
        "runs": runs,
    }


def _wheres(runs: list[dict]) -> dict:
    ok = [a for a in runs if a.get("status") == "ok"]
    return {
        "median_seconds": common.median(a["seconds"] for a in ok),
        "median_repeated_seconds": common.median(a["repeated_seconds"] for a in ok),
        "violations": ok[0]["violations"] if ok else None,
        "counted": ok[0]["counted"] if ok else None,
        "runs": runs,
    }


def run_where(path: Path, dc: str, column: str, where: str, timeout: float, rss: int) -> dict:
    """``bench/where_worker.py``: a Detector kept warm, then ``where`` timed."""
    return _run_worker("where_worker.py", [str(path), dc, column, where], timeout, rss)


def _run_worker(script: str, args: list[str], timeout: float, rss: int) -> dict:
    """One worker process of ``bench/``: its status, wall time, peak RSS and the
    JSON line it printed last."""
    cmd = [sys.executable, str(REPO / "bench" / script), *args]
    r = common.run_process(cmd, timeout=timeout, rss_limit=rss, cwd=REPO)
    out = {"status": r.status, "wall": r.wall_seconds, "rss": r.peak_rss_bytes}
    if r.status == "ok":
        out.update(json.loads(r.stdout.strip().splitlines()[-1]))
    else:
        out["stderr_tail"] = r.stderr[-2000:]
    return out


def _ratio(part: dict, full: dict) -> float | None:
    a, b = part.get("median_seconds"), full.get("median_seconds")
    return a / b if a is not None and b else None


def split(path: Path, fraction: float) -> tuple[Path, Path]:
    """``path`` cut into its first rows and its last ``fraction`` (cached beside it)."""
    base = path.with_name(f"{path.stem}_base{fraction:g}{path.suffix}")
    batch = path.with_name(f"{path.stem}_batch{fraction:g}{path.suffix}")
    if base.exists() and batch.exists():
        return base, batch
    if path.suffix == ".parquet":
        t = pq.read_table(path)
        m = int(round(t.num_rows * fraction))
        pq.write_table(t.slice(0, t.num_rows - m), base)
        pq.write_table(t.slice(t.num_rows - m), batch)
        return base, batch
    lines = path.read_text().splitlines(keepends=True)  # the Tax CSV: no quoted newlines
    head, body = lines[0], lines[1:]
    m = int(round(len(body) * fraction))
    base.write_text(head + "".join(body[: len(body) - m]))
    batch.write_text(head + "".join(body[len(body) - m :]))
    return base, batch


def run_append(
    base: Path, batch: Path, dc: str, timeout: float, rss: int, encode_all: bool = False
) -> dict:
    args = [str(base), str(batch), dc] + (["encode-all"] if encode_all else [])
    return _run_worker("append_worker.py", args, timeout, rss)


def write_markdown(run_id: str, info: dict) -> None:
    records = [r for r in common.read_jsonl(JSONL) if r.get("run_id") == run_id]
    machine = next(r for r in records if r["kind"] == "machine")
    rows, warm_rows = [], []
    for r in records:
        if r["kind"] != "cell":
            continue
        f, s, a = r["full"], r["scoped"], r["append"]
        e = r.get("append_encode_all") or {}

        def ratio(x):
            return "-" if x is None else f"{x:.2f}" + ("" if x <= TARGET else " (miss)")

        rows.append([
            r["dc_id"], f"{r['scope_rows']:,}", f"{a.get('batch_rows') or 0:,}",
            common.fmt_seconds(f.get("median_seconds")), common.fmt_seconds(s.get("median_seconds")),
            common.fmt_seconds(a.get("median_seconds")),
            common.fmt_seconds(e.get("median_seconds")), ratio(r["ratio"]),
            ratio(r["append_ratio"]), common.fmt_seconds(f.get("median_wall_seconds")),
            common.fmt_seconds(s.get("median_wall_seconds")),
            common.fmt_seconds(a.get("median_wall_seconds")),
            f"{f.get('violations'):,}" if f.get("violations") is not None else "-",
            f"{s.get('violations'):,}" if s.get("violations") is not None else "-",
            f"{a.get('base_violations') or 0:,} + {a.get('violations') or 0:,}",
            "yes" if r["append_adds_up"] else "NO",
        ])  # fmt: skip
        w = r.get("warm_where")
        if w is not None:
            warm_rows.append([
                r["dc_id"], f"{r['scope_rows']:,}", common.fmt_seconds(f.get("median_seconds")),
                common.fmt_seconds(s.get("median_seconds")), ratio(r["ratio"]),
                common.fmt_seconds(w.get("median_seconds")), ratio(r["warm_ratio"]),
                common.fmt_seconds(w.get("median_repeated_seconds")),
                ratio(r["warm_repeated_ratio"]),
                "tallies / index" if w.get("counted") else "scoped run",
                f"{w.get('violations'):,}" if w.get("violations") is not None else "-",
                "yes" if r.get("warm_where_equal") else "NO",
            ])  # fmt: skip
    head = ["DC", "scope rows", "batch rows", "full DC s", "where DC s", "append DC s",
            "append encoding all DC s", "where/full", "append/full", "full wall s", "where wall s", "append wall s",
            "full count", "where count", "base + append count", "adds up"]  # fmt: skip
    warm_head = ["DC", "scope rows", "full DC s", "one-shot where DC s", "one-shot/full",
                 "warm where s", "warm/full", "warm where, repeated s", "repeated/full",
                 "counted by", "count", "equals one-shot"]  # fmt: skip
    scopes = sorted({(r["table"], r["where"]) for r in records if r["kind"] == "cell"})
    text = f"""# `--where` and `--append` of ~1% of the rows vs the full run

Written by `bench/scoped.py`. Command:

    {machine["command"]}

Machine: {machine["cpu_model"]}, nproc {machine["nproc"]}, {machine["mem_total_gib"]} GiB;
Python {machine["python"]}; git {str(machine["git_commit"])[:7]}\
{" (dirty)" if machine["git_dirty"] else ""}; {machine["date"]}.

Medians of each DC's `seconds` (after
the table is in Arrow: typing, encoding, evaluating the scope, planning, executing) and of
the wall time (full and `--where`: the process; append: `Detector.append`, loading the
batch included), the four runs interleaved in their own processes ("append encoding all":
the same append with `Config(append_extends=False)`, typing and encoding the whole table
again as appends did before `facet/encoding_append.py`). Target: <= 0.10 of the full run. Scopes: {"; ".join(f"{t}: `{w}`" for t, w in scopes)}.

{common.markdown_table(head, rows)}

## The same scopes asked of a warm `facet.Detector`

`Detector(FILE, dcs=[DC], where_columns=[column])` built untimed (the table's run, its
encoding, the appends' tallies and indexes, the scope column dictionary-encoded), then
`det.where(EXPR)` timed in the same process: its first call, and the median of three
more (nothing is cached between calls: each parses, types and codes the scope's column
over its distinct values, evaluates it, and counts). Keys, FDs and DCs of two
inequalities are counted from the tallies and indexes ("tallies / index"); other DCs by
a scoped run over the kept encoding. Medians over the processes; the count must equal
the one-shot `--where`'s.

{common.markdown_table(warm_head, warm_rows)}
"""
    (RESULTS / "scoped.md").write_text(text)


if __name__ == "__main__":
    sys.exit(main())
