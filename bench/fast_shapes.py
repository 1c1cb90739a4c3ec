"""facet on the DC shapes it should be fast at, against DuckDB self-joins, at 1M and 10M rows.

    python bench/fast_shapes.py [--repeats 3] [--rows 1000000] [--timeout 600] [--no-big] [--force]
        [--snapshot] [--baseline REF]

Tables (generated once into ``bench/work/``, git-ignored): the Tax-like CSV of
``data/taxgen.py`` (as ``bench/detect_vs_duckdb.py`` makes it) and TPC-H ``lineitem`` from
``tpchgen-cli`` (``bench/tpch.py``: Parquet with typed decimals and dates, and the same rows as
CSV), both with exactly ``--rows`` rows. Three kinds of cell, each run in its own process under
the watchdog of ``bench/common.py``:

* **count** (per DC): one untimed facet warm-up, then ``--repeats`` times, interleaved, facet
  (``facet detect FILE --dc DC --format json --exit-zero``: the DC's ``seconds``, wall time,
  peak RSS) and DuckDB (``bench/duckdb_worker.py``: a process loads the table untimed, typed
  as facet types it, then times ``SELECT count(*) FROM r t, r t2 WHERE t.rid <> t2.rid AND
  ...``). A DuckDB run that
  times out (or runs out of memory) is not repeated; the comparison is then re-run on prefixes
  of the same table (``--ladder``, default 300k, 100k, 30k, 10k rows) until DuckDB finishes.
  Counts must be equal wherever both finish (exit 1 otherwise).
* **blocks / pairs** (per DC, facet only, full ``--rows``): ``--output blocks --out X.parquet``
  and ``--output pairs --limit 1000000 --out X.parquet``: DC seconds, wall, peak RSS, output
  file size, and their ratio to the count cell's time (bench/README.md targets: blocks within 5x of
  count and under 2 GiB, pairs within 2x).
* **big**: one facet count of ``li_price_discount`` on a ``--big-rows`` (10M) lineitem.

``--baseline REF`` adds facet at commit ``REF`` (a ``git archive`` snapshot, as ``--snapshot``
makes of HEAD) as the system ``facet@<short sha>``: in the count and blocks/pairs cells it runs
interleaved with the current code, after its own warm-up; its counts must agree (exit 1
otherwise) and the report gives current/baseline per cell and whether the current median is
within 10% of the baseline's.

Results append to ``bench/results/fast_shapes.jsonl`` (one record per cell); the script is
resumable: a cell already recorded for the same git commit (short hash + dirty flag) and the
same parameters is skipped unless ``--force``. ``bench/results/fast_shapes.md`` is rewritten
from the records of the current commit and parameters.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import duckdb_worker  # noqa: E402
import tpch  # noqa: E402

REPO = common.REPO
BENCH = "fast_shapes"
DCS = {  # id -> (table, DC text)
    "tax_salary_rate": (
        "tax",
        "not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)",
    ),
    "li_price_discount": (
        "lineitem",
        "not(t.l_extendedprice > t'.l_extendedprice and t.l_discount < t'.l_discount)",
    ),
    "li_qty_tax_price_discount": (
        "lineitem",
        "not(t.l_quantity = t'.l_quantity and t.l_tax = t'.l_tax and "
        "t.l_extendedprice > t'.l_extendedprice and t.l_discount < t'.l_discount)",
    ),
    "li_dates": (
        "lineitem",
        "not(t.l_receiptdate >= t'.l_shipdate and t.l_shipdate <= t'.l_receiptdate)",
    ),
    "tax_zip_city": ("tax", "not(t.zip = t'.zip and t.city != t'.city)"),
    "tax_phone": ("tax", "not(t.area_code = t'.area_code and t.phone = t'.phone)"),
}
BIG_DC = "li_price_discount"
KILLED = ("timeout", "oom", "killed")
#: bench/README.md "Targets", at 1M rows
TARGETS = {"blocks": (5.0, 2 * common.GIB), "pairs": (2.0, None)}
BLOCK_TARGET_DCS = ("tax_salary_rate", "li_price_discount")
WARM_ROWS = 10_000  # blocks/pairs warm the numba cache on a prefix this long
SLOWER_TOLERANCE = 1.10  # --baseline: "nothing got slower" = current median <= 1.10 x baseline

# --------------------------------------------------------------------------------------------
# single runs


def run_facet(exe: str, file: Path, dc: str, ctx, output: str = "count", limit=None) -> dict:
    return common.run_facet(
        exe, file, dc, ctx.timeout, ctx.rss_limit, output, limit, Path(ctx.work) / "out"
    )


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _log_run(label: str, r: dict) -> None:
    extra = f" out {common.fmt_bytes(r['out_bytes'])}" if r.get("out_bytes") is not None else ""
    _log(
        f"  {label}: {r['status']} seconds {r.get('seconds', float('nan')):.3f} wall "
        f"{r['wall']:.2f} rss {common.fmt_bytes(r['rss'])} count {r.get('violations')}{extra}"
    )


def facets(ctx) -> list[tuple[str, str, str]]:
    """The facets measured: (record key, label, executable) -- the current code, and with
    ``--baseline`` the snapshot of that commit (``facet@<short sha>``)."""
    out = [("facet", "facet", ctx.facet)]
    if ctx.baseline_sha:
        out.append(("baseline", ctx.baseline_name, ctx.baseline_facet))
    return out


def baseline_fields(ctx, current: dict | None, base: dict | None, warm: dict | None) -> dict:
    """A cell's record fields for ``--baseline`` (none without it): the baseline's summary,
    ``ratio_to_baseline`` = current / baseline median DC seconds and ``within_10pct``
    (current median <= 1.10 x baseline median)."""
    if not ctx.baseline_sha:
        return {}
    cm = (current or {}).get("median_seconds")
    bm = (base or {}).get("median_seconds")
    return {
        "baseline_system": ctx.baseline_name,
        "baseline_ref": ctx.baseline,
        "baseline_sha": ctx.baseline_sha,
        "baseline": base,
        "baseline_warmup": warm,
        "ratio_to_baseline": cm / bm if cm is not None and bm else None,
        "within_10pct": cm <= SLOWER_TOLERANCE * bm if cm is not None and bm is not None else None,
    }


# --------------------------------------------------------------------------------------------
# tables


def tables(ctx: argparse.Namespace) -> dict[str, Path]:
    work = Path(ctx.work)
    out = {}
    if any(DCS[n][0] == "tax" for n in ctx.names):
        out["tax"] = common.tax_table(ctx.rows, ctx.seed, ctx.error_rate, work, ctx.timeout)
    if any(DCS[n][0] == "lineitem" for n in ctx.names):
        paths = tpch.lineitem(ctx.rows, work, ("parquet", "csv"))
        out["lineitem"] = paths[ctx.lineitem_format]
    return out


def prefix_file(full: Path, rows: int) -> Path:
    """The first ``rows`` rows of ``full`` (cached next to it)."""
    path = full.with_name(f"{full.stem}_head{rows}{full.suffix}")
    if not path.exists():
        _log(f"  writing {path.name} ...")
        tpch.prefix(full, rows, path)
    return path


# --------------------------------------------------------------------------------------------
# cells and resumption


def params(ctx: argparse.Namespace) -> dict:
    p = {
        "rows": ctx.rows,
        "repeats": ctx.repeats,
        "timeout_s": ctx.timeout,
        "rss_limit_bytes": ctx.rss_limit,
        "seed": ctx.seed,
        "error_rate": ctx.error_rate,
        "lineitem_format": ctx.lineitem_format,
        "duckdb_threads": ctx.duckdb_threads,
        "big_rows": ctx.big_rows,
        "facet_code": "snapshot of HEAD" if ctx.snapshot else "working tree",
    }
    if ctx.baseline_sha:  # only then: keeps the keys of runs without a baseline as they were
        p["baseline"] = ctx.baseline_sha
    return p


def run_key(ctx: argparse.Namespace) -> str:
    p = json.dumps(params(ctx), sort_keys=True)
    return f"{ctx.git_short}{'-dirty' if ctx.git_dirty else ''} {p}"


def cell_id(kind: str, dc: str, rows: int) -> str:
    return f"{kind}:{dc}:{rows}"


def done_cells(ctx: argparse.Namespace, key: str | None = None) -> dict[str, dict]:
    key = key or run_key(ctx)
    return {
        r["cell"]: r
        for r in common.read_jsonl(ctx.results)
        if r.get("bench") == BENCH and r.get("run_key") == key
    }


def record(ctx: argparse.Namespace, kind: str, name: str, rows: int, file: Path, **fields) -> dict:
    rec = {
        "bench": BENCH,
        "run_key": run_key(ctx),
        "cell": cell_id(kind, name, rows),
        "run_id": ctx.run_id,
        "command": common.command_line(),
        "machine": {
            **common.machine_info(("duckdb", "numpy", "numba", "pyarrow", "tpchgen-cli", "facet")),
            "git_short": ctx.git_short,
            "load_avg": list(os.getloadavg()),
        },
        "params": params(ctx),
        "kind": kind,
        "dc_name": name,
        "dc": DCS[name][1],
        "table": DCS[name][0],
        "rows": rows,
        "data_file": str(file.relative_to(REPO)) if file.is_relative_to(REPO) else str(file),
        "data_bytes": file.stat().st_size,
        **fields,
    }
    common.append_jsonl(ctx.results, rec)
    write_markdown(ctx)
    return rec


def _warm(ctx, label, exe, file, dc, output="count", limit=None) -> dict:
    w = run_facet(exe, file, dc, ctx, output, limit)
    _log(f"  {label} warm-up ({output}, {file.name}): {w['status']} wall {w['wall']:.2f}s")
    return {k: w.get(k) for k in ("status", "wall", "rss", "warmup_seconds", "seconds")}


def _interleave(ctx, systems: list[tuple[str, str, Callable[[], dict]]], what: str) -> dict:
    """``--repeats`` rounds, each running every (key, label, run) once, in order; a system
    whose run was killed is not run again (bench/README.md "Rules"). Returns key -> list of runs."""
    runs: dict[str, list[dict]] = {key: [] for key, _, _ in systems}
    stopped: set[str] = set()
    for i in range(ctx.repeats):
        for key, label, go in systems:
            if key in stopped:
                continue
            r = go()
            runs[key].append(r)
            _log_run(f"{label}{what} #{i + 1}", r)
            if r["status"] in KILLED:
                stopped.add(key)
    return runs


def count_cell(ctx, name: str, file: Path, rows: int) -> dict:
    """The counts of DC ``name`` on ``file`` by facet (and its baseline) and DuckDB,
    interleaved, after one untimed warm-up of each facet."""
    dc = DCS[name][1]
    _log(f"[count {name} @ {rows:,}] {dc}")
    warm = {key: _warm(ctx, label, exe, file, dc) for key, label, exe in facets(ctx)}
    systems = [
        (key, label, functools.partial(run_facet, exe, file, dc, ctx))
        for key, label, exe in facets(ctx)
    ]
    if "duckdb" in ctx.systems:
        duck = functools.partial(
            duckdb_worker.run, file, dc, ctx.timeout, ctx.rss_limit, ctx.duckdb_threads
        )
        systems.append(("duckdb", "duckdb", duck))
    summ = {k: common.summarize_runs(v) for k, v in _interleave(ctx, systems, "").items() if v}
    counts = {k: v["violations"] for k, v in summ.items() if v["violations"] is not None}
    check = common.counts_check(counts)
    fm = summ.get("facet", {}).get("median_seconds")
    dm = summ.get("duckdb", {}).get("median_seconds")
    dstat = summ.get("duckdb", {}).get("status")
    rec = record(
        ctx, "count", name, rows, file,
        violations=next((c for c in counts.values() if isinstance(c, int)), None),
        check=check,
        ratio=(dm / fm) if fm and dm else None,
        ratio_lower_bound=(ctx.timeout / fm) if fm and dstat == "timeout" else None,
        facet=summ.get("facet"), facet_warmup=warm["facet"], duckdb=summ.get("duckdb"),
        **baseline_fields(ctx, summ.get("facet"), summ.get("baseline"), warm.get("baseline")),
    )  # fmt: skip
    ratios = [f"DuckDB/facet {rec['ratio']:.1f}x"] if rec["ratio"] else []
    if rec.get("ratio_to_baseline"):
        ratios.append(f"facet/{ctx.baseline_name} {rec['ratio_to_baseline']:.2f}x")
    _log(f"  -> {name} @ {rows:,}: counts {counts} ({check}) {', '.join(ratios)}")
    if check == "MISMATCH":
        _log(f"ERROR: {name} @ {rows:,}: the systems' counts differ: {counts}")
    return rec


def output_cell(ctx, name, file, kind, count_rec: dict | None) -> dict:
    """facet's (and its baseline's) ``--output kind`` runs, interleaved, each facet warmed on
    a prefix first; checked against the count cell's violations."""
    dc = DCS[name][1]
    limit = ctx.pairs_limit if kind == "pairs" else None
    _log(f"[{kind} {name} @ {ctx.rows:,}] {dc}")
    small = prefix_file(file, min(WARM_ROWS, ctx.rows))
    warm = {key: _warm(ctx, label, exe, small, dc, kind, limit) for key, label, exe in facets(ctx)}
    systems = [
        (key, label, functools.partial(run_facet, exe, file, dc, ctx, kind, limit))
        for key, label, exe in facets(ctx)
    ]
    summ = {k: common.summarize_runs(v) for k, v in _interleave(ctx, systems, f" {kind}").items()}
    s = summ["facet"]
    cf = (count_rec or {}).get("facet") or {}
    cs, cw = cf.get("median_seconds"), cf.get("median_wall_seconds")
    fs, fw = s.get("median_seconds"), s.get("median_wall_seconds")
    counts = {"count cell": cf.get("violations")}
    counts.update({f"{label} {kind}": summ[key].get("violations") for key, label, _ in facets(ctx)})
    counts = {k: v for k, v in counts.items() if v is not None}
    check = common.counts_check(counts)
    if check == "MISMATCH":
        _log(f"ERROR: {name}: {kind} and count violations differ: {counts}")
    extra = baseline_fields(ctx, s, summ.get("baseline"), warm.get("baseline"))
    if extra:
        bs = (extra["baseline"] or {}).get("median_seconds")
        bc = ((count_rec or {}).get("baseline") or {}).get("median_seconds")
        extra["baseline_ratio_to_count"] = bs / bc if bs and bc else None
    return record(
        ctx, kind, name, ctx.rows, file,
        limit=limit, facet=s, facet_warmup=warm["facet"], check=check,
        count_seconds=cs, count_wall_seconds=cw,
        ratio_to_count=(fs / cs) if fs and cs else None,
        wall_ratio_to_count=(fw / cw) if fw and cw else None,
        lower_bound_ratio_to_count=(ctx.timeout / cs) if cs and s["status"] == "timeout" else None,
        **extra,
    )  # fmt: skip


def big_cell(ctx) -> dict:
    name = BIG_DC
    file = tpch.lineitem(ctx.big_rows, ctx.work, (ctx.lineitem_format,))[ctx.lineitem_format]
    _log(f"[big {name} @ {ctx.big_rows:,}] {DCS[name][1]}")
    r = run_facet(ctx.facet, file, DCS[name][1], ctx)
    _log_run("facet", r)
    return record(ctx, "big", name, ctx.big_rows, file, facet=common.summarize_runs([r]))


def run_all(ctx) -> int:
    for _, label, exe in facets(ctx):
        ok, why = common.facet_works(exe, Path(ctx.work))
        if not ok:
            _log(f"error: {label} CLI not usable: {why}")
            return 2
    files = tables(ctx)
    done = {} if ctx.force else done_cells(ctx)
    failed = False

    def have(kind, name, rows):
        rec = done.get(cell_id(kind, name, rows))
        if rec is not None:
            _log(f"[{kind} {name} @ {rows:,}] already recorded (run {rec['run_id']}), skipped")
        return rec

    counts = {}
    for name in ctx.names:
        file = files[DCS[name][0]]
        rec = have("count", name, ctx.rows) or count_cell(ctx, name, file, ctx.rows)
        counts[name] = rec
        failed |= rec["check"] == "MISMATCH"
        d = rec.get("duckdb") or {}
        if d.get("status") not in KILLED or d.get("ok_runs"):
            continue  # DuckDB finished at --rows (at least once)
        for rows in [r for r in ctx.ladder if r < ctx.rows]:  # DuckDB did not finish: shrink
            small = prefix_file(file, rows)
            lrec = have("count", name, rows) or count_cell(ctx, name, small, rows)
            failed |= lrec["check"] == "MISMATCH"
            if (lrec.get("duckdb") or {}).get("status") not in KILLED:
                break
    for name in ctx.names:
        for kind in ctx.outputs:
            file = files[DCS[name][0]]
            rec = have(kind, name, ctx.rows) or output_cell(ctx, name, file, kind, counts[name])
            failed |= rec["check"] == "MISMATCH"
    if ctx.big and (have("big", BIG_DC, ctx.big_rows) is None):
        big_cell(ctx)
    write_markdown(ctx)
    _log(f"results: {ctx.results} and {Path(ctx.results).with_suffix('.md')}")
    return 1 if failed else 0


# --------------------------------------------------------------------------------------------
# report


def _secs(side: dict | None, lower: float | None = None) -> str:
    side = side or {}
    if side.get("status") == "ok":
        return common.fmt_seconds(side.get("median_seconds"))
    if side.get("ok_runs"):  # some runs finished, a later one was killed or failed
        return (
            f"{common.fmt_seconds(side.get('median_seconds'))} "
            f"({side['ok_runs']} of {side['runs']} ok, then {side.get('status')})"
        )
    if side.get("status") == "timeout" and lower:
        return f"timeout (> {lower:.0f} s)"
    return side.get("status", "-")


def write_markdown(ctx, key: str | None = None) -> None:
    """Rewrite the markdown from the records of ``key`` (default: this run's)."""
    key = key or run_key(ctx)
    recs = list(done_cells(ctx, key).values())
    if not recs:
        return
    commit = key.split(" ", 1)[0]
    order = {n: i for i, n in enumerate(DCS)}
    m = recs[-1]["machine"]
    p = recs[-1]["params"]
    head = [
        "# facet's fast shapes vs DuckDB (Tax and TPC-H lineitem)",
        "",
        "Regenerated by `bench/fast_shapes.py` from the records in "
        f"`{Path(ctx.results).name}` of git `{commit}` with parameters `{json.dumps(p)}`; "
        "see `bench/README.md` for what is measured.",
        "",
        f"* command: `{recs[-1]['command']}`",
        f"* dates: {min(r['machine']['date'] for r in recs)} to "
        f"{max(r['machine']['date'] for r in recs)}; repeats: {p['repeats']}; "
        f"watchdog {p['timeout_s']:g} s / {common.fmt_bytes(p['rss_limit_bytes'])}",
        f"* machine: {m['cpu_model']}, nproc {m['nproc']}, {m['mem_total_gib']} GiB; "
        f"Python {m['python']}, DuckDB {m['versions'].get('duckdb')}, "
        f"numba {m['versions'].get('numba')}, pyarrow {m['versions'].get('pyarrow')}, "
        f"tpchgen-cli {m['versions'].get('tpchgen-cli')}",
        f"* lineitem input: {p['lineitem_format']} (facet and DuckDB read the same file)",
        "",
        "## Counts",
        "",
        "Medians in seconds. facet: the DC's `seconds` from its JSON (after the table is in "
        "Arrow; JIT warm-up excluded). DuckDB: the `count(*)` self-join on a loaded table. "
        "DuckDB/facet > 1: facet faster. Where DuckDB timed out, the comparison is repeated on "
        "a prefix of the same table (smaller *rows*) until DuckDB finishes.",
        "",
    ]
    rows = []
    counts = sorted(
        (r for r in recs if r["kind"] == "count"), key=lambda r: (order[r["dc_name"]], -r["rows"])
    )
    for r in counts:
        f, d = r.get("facet") or {}, r.get("duckdb") or {}
        ratio, lower = r.get("ratio"), r.get("ratio_lower_bound")
        rows.append(
            [
                r["dc_name"],
                f"{r['rows']:,}",
                f"{r['violations']:,}" if isinstance(r.get("violations"), int) else "-",
                _secs(f),
                _secs(d, p["timeout_s"]),
                f"{ratio:.1f}x" if ratio else (f"> {lower:.0f}x" if lower else "-"),
                common.fmt_seconds(f.get("median_wall_seconds")),
                common.fmt_bytes(f.get("max_peak_rss_bytes")),
                common.fmt_bytes(d.get("max_peak_rss_bytes")),
                r.get("check", "-"),
            ]
        )
    table = common.markdown_table(
        ["DC", "rows compared", "violations", "facet s", "DuckDB s", "DuckDB/facet",
         "facet wall s", "facet peak RSS", "DuckDB peak RSS", "counts"],
        rows,
    )  # fmt: skip
    dcs_text = common.markdown_table(
        ["DC", "table", "text"], [[n, t, f"`{dc}`"] for n, (t, dc) in DCS.items()]
    )
    out = ["", "## Pairs and blocks vs count", "", "facet only (the code under test), at the "
           f"full row count; pairs with `--limit {ctx.pairs_limit}`. Ratio = output median / "
           "count median "
           "(DC seconds, and wall). bench/README.md targets at 1M rows: blocks within 5x of count "
           "and under 2 GiB RSS for tax_salary_rate and li_price_discount, pairs within 2x "
           "(*meets target* is on DC seconds; `-` where no target applies).", ""]  # fmt: skip
    orows = []
    outs = sorted(
        (r for r in recs if r["kind"] in ("blocks", "pairs")),
        key=lambda r: (order[r["dc_name"]], r["kind"]),
    )
    for r in outs:
        f = r.get("facet") or {}
        ratio, lower = r.get("ratio_to_count"), r.get("lower_bound_ratio_to_count")
        factor, rss_cap = TARGETS[r["kind"]]
        if r["rows"] < 1_000_000 or (
            r["kind"] == "blocks" and r["dc_name"] not in BLOCK_TARGET_DCS
        ):
            target = "-"  # bench/README.md sets these targets at 1M rows (blocks: two DCs)
        elif ratio is not None:
            rss = f.get("max_peak_rss_bytes") or 0
            target = "yes" if ratio <= factor and (rss_cap is None or rss <= rss_cap) else "NO"
        else:
            target = "NO" if f.get("status") in KILLED else "-"
        size = f.get("median_out_bytes")
        orows.append(
            [
                r["dc_name"],
                r["kind"],
                f"{r['rows']:,}",
                _secs(f, p["timeout_s"]),
                common.fmt_seconds(r.get("count_seconds")),
                f"{ratio:.1f}x" if ratio else (f"> {lower:.0f}x" if lower else "-"),
                common.fmt_seconds(f.get("median_wall_seconds")),
                f"{r['wall_ratio_to_count']:.1f}x" if r.get("wall_ratio_to_count") else "-",
                common.fmt_bytes(f.get("max_peak_rss_bytes")),
                common.fmt_bytes(size) if size is not None
                else (f"{common.fmt_bytes(f['killed_out_bytes'])} when killed"
                      if f.get("killed_out_bytes") else "-"),
                f"{int(f['median_written']):,}" if f.get("median_written") is not None else "-",
                target,
            ]
        )  # fmt: skip
    otable = common.markdown_table(
        ["DC", "output", "rows", "facet s", "count s", "ratio", "wall s", "wall ratio",
         "peak RSS", "file size", "written", "meets target"],
        orows,
    )  # fmt: skip
    big = [r for r in recs if r["kind"] == "big"]
    tail = ["", f"## Count at {p['big_rows']:,} rows", ""]
    for r in big:
        f = r.get("facet") or {}
        tail.append(
            f"* `{r['dc_name']}` on {r['rows']:,} lineitem rows ({r['data_file']}), one run: "
            f"{_secs(f, p['timeout_s'])} s DC time, "
            f"{common.fmt_seconds(f.get('median_wall_seconds'))} s wall, "
            f"peak RSS {common.fmt_bytes(f.get('max_peak_rss_bytes'))}, "
            f"{f['violations']:,} violations"
            if f.get("status") == "ok"
            else f"* `{r['dc_name']}` on {r['rows']:,} rows: {f.get('status')}"
        )
    if not big:
        tail.append("* not run")
    loads = common.load_samples(recs, ("facet", "baseline", "duckdb"))
    ladder_notes = []
    for name in DCS:
        cells = sorted((r for r in counts if r["dc_name"] == name), key=lambda r: -r["rows"])
        if len(cells) < 2:
            continue
        fin = [r for r in cells if (r.get("duckdb") or {}).get("ok_runs")]
        where = f"compared at {fin[0]['rows']:,} rows" if fin else "it finished at no size tried"
        killed = ", ".join(f"{r['rows']:,}" for r in cells if r not in fin)
        ladder_notes.append(
            f"* `{name}`: DuckDB did not finish within {p['timeout_s']:g} s at "
            f"{killed} rows; {where} "
            "(a prefix of the same table)."
        )
    tail += [
        "",
        "## Notes",
        "",
        *ladder_notes,
        f"* 1-minute load average around the timed runs: {min(loads):.2f} to "
        f"{max(loads):.2f} on {m['nproc']} CPUs (other work on the machine inflates times)."
        if loads
        else "* no load samples",
        "* Wall times are whole processes (interpreter start, reading the file, numba cache "
        f"load). Peak RSS is the largest over the runs ({m.get('rss_method')}).",
        "* DCs:",
        "",
        dcs_text,
        "",
    ]
    md = Path(ctx.results).with_suffix(".md")
    md.parent.mkdir(parents=True, exist_ok=True)
    base = baseline_section(recs, p, commit)
    md.write_text("\n".join(head) + "\n" + table + "\n" + "\n".join(base) + "\n".join(out) + "\n"
                  + otable + "\n" + "\n".join(tail))  # fmt: skip


def baseline_section(recs: list[dict], p: dict, commit: str) -> list[str]:
    """``--baseline``: per cell, current and baseline medians, current/baseline, and whether
    the current code is within 10% (nothing got slower). Empty without a baseline."""
    cells = [r for r in recs if r.get("baseline_system")]
    if not cells:
        return []
    order = {n: i for i, n in enumerate(DCS)}
    kinds = {"count": 0, "blocks": 1, "pairs": 2}
    cells.sort(key=lambda r: (kinds.get(r["kind"], 9), order[r["dc_name"]], -r["rows"]))
    name, sha = cells[0]["baseline_system"], cells[0]["baseline_sha"]
    current = f"{p['facet_code']}, git `{commit}`"
    rows, slower, unknown = [], [], []
    for r in cells:
        f, b = r.get("facet") or {}, r.get("baseline") or {}
        ratio, within = r.get("ratio_to_baseline"), r.get("within_10pct")
        label = f"{r['dc_name']} {r['kind']} @ {r['rows']:,}"
        if within is False:
            slower.append(f"{label} ({ratio:.2f}x)")
        elif within is None:
            unknown.append(label)
        rows.append(
            [
                r["dc_name"],
                r["kind"],
                f"{r['rows']:,}",
                _secs(f, p["timeout_s"]),
                _secs(b, p["timeout_s"]),
                f"{ratio:.2f}x" if ratio else "-",
                {True: "yes", False: "NO"}.get(within, "-"),
                common.fmt_seconds(f.get("median_wall_seconds")),
                common.fmt_seconds(b.get("median_wall_seconds")),
                common.fmt_bytes(f.get("max_peak_rss_bytes")),
                common.fmt_bytes(b.get("max_peak_rss_bytes")),
                r.get("check", "-"),
            ]
        )
    table = common.markdown_table(
        ["DC", "cell", "rows", "facet s", f"{name} s", f"facet/{name}", "within 10%",
         "facet wall s", f"{name} wall s", "facet peak RSS", f"{name} peak RSS", "counts"],
        rows,
    )  # fmt: skip
    verdict = (
        "**Nothing got slower**: every cell's current median is within "
        f"{SLOWER_TOLERANCE:.2f}x of the baseline's"
        if not slower
        else f"**Slower than {SLOWER_TOLERANCE:.2f}x the baseline**: " + "; ".join(slower)
    )
    if unknown:
        verdict += f" (not compared, a side did not finish: {'; '.join(unknown)})"
    return [
        "",
        f"## Current vs baseline `{name}`",
        "",
        f"facet = the code under test ({current}); `{name}` = a snapshot of "
        f"`{cells[0].get('baseline_ref')}` (`{sha}`). Both measured in the same run-set, runs "
        "interleaved, each after its own warm-up; medians of the DC's `seconds`. "
        f"facet/{name} < 1: the current code is faster; *within 10%*: current median <= "
        f"{SLOWER_TOLERANCE:.2f} x baseline median. *counts*: the two (and DuckDB, and for "
        "blocks/pairs the count cell) agree.",
        "",
        table,
        "",
        verdict + ".",
        "",
    ]


# --------------------------------------------------------------------------------------------


def _ints(text: str) -> list[int]:
    return [int(float(x)) for x in re.split(r"[,\s]+", text.strip()) if x]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600.0, help="watchdog per process, seconds")
    ap.add_argument("--rss-limit-gib", type=float, default=None, help="watchdog on peak RSS")
    ap.add_argument("--dcs", default=",".join(DCS), help="subset of: " + ", ".join(DCS))
    ap.add_argument("--systems", default="facet,duckdb", help="count cells: facet,duckdb")
    ap.add_argument("--outputs", default="blocks,pairs", help="blocks,pairs or '' for none")
    ap.add_argument("--pairs-limit", type=int, default=1_000_000)
    ap.add_argument(
        "--ladder",
        default="300000,100000,30000,10000",
        help="prefix sizes tried, largest first, when DuckDB does not finish at --rows",
    )
    ap.add_argument("--big", dest="big", action="store_true", default=True)
    ap.add_argument("--no-big", dest="big", action="store_false")
    ap.add_argument("--big-rows", type=int, default=10_000_000)
    ap.add_argument("--lineitem-format", choices=("parquet", "csv"), default="parquet")
    ap.add_argument("--seed", type=int, default=0, help="Tax generator seed")
    ap.add_argument("--error-rate", type=float, default=0.001, help="Tax generator error rate")
    ap.add_argument("--duckdb-threads", type=int, default=None, help="default: DuckDB's own")
    ap.add_argument("--facet", default=None, help="facet executable (default .venv/bin/facet)")
    ap.add_argument(
        "--snapshot",
        action="store_true",
        help="measure a private copy of the committed HEAD (bench/work/snapshot-SHA/), not the "
        "working tree that others may be editing",
    )
    ap.add_argument(
        "--baseline",
        metavar="REF",
        default=None,
        help="also measure a private copy of commit REF (as --snapshot does HEAD) as system "
        "facet@<short sha>, interleaved with the current code in the count and blocks/pairs "
        "cells; the report gives current/baseline per DC and whether it is within 10%%",
    )
    ap.add_argument("--force", action="store_true", help="re-run cells already recorded")
    ap.add_argument("--work", default=str(REPO / "bench" / "work"))
    ap.add_argument("--results", default=str(REPO / "bench" / "results" / f"{BENCH}.jsonl"))
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="only rewrite the markdown, from the latest run-set in --results",
    )
    args = ap.parse_args(argv)

    args.names = [n.strip() for n in args.dcs.split(",") if n.strip()]
    args.systems = {s.strip() for s in args.systems.split(",") if s.strip()}
    args.outputs = [o.strip() for o in args.outputs.split(",") if o.strip()]
    args.ladder = sorted(_ints(args.ladder), reverse=True)
    bad = [n for n in args.names if n not in DCS]
    if bad or not args.systems <= {"facet", "duckdb"} or not set(args.outputs) <= set(TARGETS):
        ap.error(f"unknown DC {bad}, systems {sorted(args.systems)} or outputs {args.outputs}")
    if "facet" not in args.systems:
        ap.error("--systems must include facet")
    args.rss_limit = common.rss_limit(args.rss_limit_gib)
    if args.report_only:  # the latest run-set in --results, whatever HEAD is now
        keys = [r["run_key"] for r in common.read_jsonl(args.results) if r.get("bench") == BENCH]
        if keys:
            write_markdown(args, keys[-1])
        return 0
    args.git_short = common._git("rev-parse", "--short", "HEAD") or "nocommit"
    args.git_dirty = bool(common._git("status", "--porcelain"))
    if args.snapshot:
        if args.facet:
            ap.error("--snapshot and --facet exclude each other")
        args.facet, sha = common.snapshot_facet(Path(args.work), "HEAD")
        args.git_short, args.git_dirty = sha[: len(args.git_short)], False
    args.facet = args.facet or common.facet_exe()
    args.baseline_sha = None
    if args.baseline:
        args.baseline_facet, args.baseline_sha = common.snapshot_facet(
            Path(args.work), args.baseline
        )
        args.baseline_name = f"facet@{args.baseline_sha[: len(args.git_short)]}"
    args.run_id = uuid.uuid4().hex[:12]
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
