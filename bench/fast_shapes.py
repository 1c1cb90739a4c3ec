"""facet on the DC shapes it should be fast at, against DuckDB self-joins, at 1M and 10M rows.

    python bench/fast_shapes.py [--repeats 3] [--rows 1000000] [--timeout 600] [--no-big] [--force]

Tables (generated once into ``bench/work/``, git-ignored): the Tax-like CSV of
``data/taxgen.py`` (as ``bench/detect_vs_duckdb.py`` makes it) and TPC-H ``lineitem`` from
``tpchgen-cli`` (``bench/tpch.py``: Parquet with typed decimals and dates, and the same rows as
CSV), both with exactly ``--rows`` rows. Three kinds of cell, each run in its own process under
the watchdog of ``bench/common.py``:

* **count** (per DC): one untimed facet warm-up, then ``--repeats`` times, interleaved, facet
  (``facet detect FILE --dc DC --format json --exit-zero``: the DC's ``seconds``, wall time,
  peak RSS) and DuckDB (a worker process loads the table untimed, typed as facet types it, then
  times ``SELECT count(*) FROM r t, r t2 WHERE t.rid <> t2.rid AND ...``). A DuckDB run that
  times out (or runs out of memory) is not repeated; the comparison is then re-run on prefixes
  of the same table (``--ladder``, default 300k, 100k, 30k, 10k rows) until DuckDB finishes.
  Counts must be equal wherever both finish (exit 1 otherwise).
* **blocks / pairs** (per DC, facet only, full ``--rows``): ``--output blocks --out X.parquet``
  and ``--output pairs --limit 1000000 --out X.parquet``: DC seconds, wall, peak RSS, output
  file size, and their ratio to the count cell's time (DESIGN §6 targets: blocks within 5x of
  count and under 2 GiB, pairs within 2x).
* **big**: one facet count of ``li_price_discount`` on a ``--big-rows`` (10M) lineitem.

Results append to ``bench/results/fast_shapes.jsonl`` (one record per cell); the script is
resumable: a cell already recorded for the same git commit (short hash + dirty flag) and the
same parameters is skipped unless ``--force``. ``bench/results/fast_shapes.md`` is rewritten
from the records of the current commit and parameters.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import detect_vs_duckdb as dvd  # noqa: E402
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
TARGETS = {"blocks": (5.0, 2 * common.GIB), "pairs": (2.0, None)}  # DESIGN §6, at 1M rows
BLOCK_TARGET_DCS = ("tax_salary_rate", "li_price_discount")
WARM_ROWS = 10_000  # blocks/pairs warm the numba cache on a prefix this long

# --------------------------------------------------------------------------------------------
# the DuckDB worker (its own process)


def duckdb_worker(args: argparse.Namespace) -> int:
    """Load ``args.file`` into table ``r`` (untimed), time the DC's count(*), print JSON."""
    import duckdb

    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    if args.threads:
        con.execute(f"SET threads = {int(args.threads)}")
    if args.file.endswith(".parquet"):
        con.execute(
            "CREATE TABLE r AS SELECT (row_number() OVER ()) - 1 AS rid, * FROM read_parquet(?)",
            [args.file],
        )
    else:
        err = _load_csv_as_facet_types(con, args.file, args.dc)
        if err:
            print(json.dumps({"error": err}))
            return 2
    types = {name: typ for name, typ, *_ in con.execute("DESCRIBE r").fetchall()}
    used = {c for a, _, b in dvd.parse_dc(args.dc) for c in (dvd._col(a), dvd._col(b)) if c}
    rows = con.execute("SELECT count(*) FROM r").fetchone()[0]
    load = time.perf_counter() - t0
    sql = dvd.dc_to_sql(args.dc)
    t1 = time.perf_counter()
    count = con.execute(sql).fetchone()[0]
    seconds = time.perf_counter() - t1
    print(
        json.dumps(
            {
                "rows": rows,
                "count": int(count),
                "seconds": seconds,
                "load_seconds": load,
                "types": {c: types.get(c) for c in sorted(used)},
                "sql": sql,
                "threads": con.execute("SELECT current_setting('threads')").fetchone()[0],
                "duckdb": duckdb.__version__,
            }
        )
    )
    return 0


def _load_csv_as_facet_types(con, file: str, dc: str) -> str | None:
    """DESIGN §1 CSV typing, as in ``detect_vs_duckdb.py``: columns compared with < <= > >=
    are timestamps when more values parse as ISO dates/times than as numbers, else numbers
    (BIGINT when all integral, else DOUBLE; what does not parse is NULL); the rest VARCHAR."""
    src = "read_csv(?, all_varchar = true, header = true)"
    con.execute(f"CREATE TABLE r0 AS SELECT * FROM {src}", [file])
    names = [c[0] for c in con.execute("SELECT * FROM r0 LIMIT 0").description]
    ordered = dvd.ordered_columns([dc]) & set(names)
    kinds = {}
    for n in ordered:
        q = '"' + n.replace('"', '""') + '"'
        n_num, n_ts = con.execute(
            f"SELECT count(*) FILTER (WHERE regexp_full_match(trim({q}), '{dvd.NUMBER_RE}')), "
            f"count(TRY_CAST(trim({q}) AS TIMESTAMP)) FROM r0"
        ).fetchone()
        if n_num == 0 and n_ts == 0:
            return f"ordered column {n} has no number or timestamp value"
        kinds[n] = "ts" if n_ts > n_num else "num"
    exprs = []
    for n in names:
        q = '"' + n.replace('"', '""') + '"'
        if kinds.get(n) == "ts":
            exprs.append(f"TRY_CAST(trim({q}) AS TIMESTAMP) AS {q}")
        elif kinds.get(n) == "num":
            exprs.append(
                f"CASE WHEN regexp_full_match(trim({q}), '{dvd.NUMBER_RE}') "
                f"THEN CAST(trim({q}) AS DOUBLE) END AS {q}"
            )
        else:
            exprs.append(q)
    con.execute(
        f"CREATE TABLE r AS SELECT (row_number() OVER ()) - 1 AS rid, {', '.join(exprs)} FROM r0"
    )
    con.execute("DROP TABLE r0")
    for n, kind in kinds.items():
        if kind != "num":
            continue
        q = '"' + n.replace('"', '""') + '"'
        (frac,) = con.execute(f"SELECT count(*) FILTER (WHERE {q} <> floor({q})) FROM r").fetchone()
        if frac == 0:
            con.execute(f"ALTER TABLE r ALTER {q} TYPE BIGINT")
    return None


# --------------------------------------------------------------------------------------------
# single runs


def _base(r: common.ProcResult) -> dict:
    return {"status": r.status, "wall": r.wall_seconds, "rss": r.peak_rss_bytes,
            "rc": r.returncode, "load1": [r.extra["load1_start"], r.extra["load1_end"]]}  # fmt: skip


def _dir_bytes(d: Path) -> int:
    return sum(p.stat().st_size for p in d.rglob("*") if p.is_file()) if d.exists() else 0


def run_facet(
    exe: str,
    file: Path,
    dc: str,
    ctx: argparse.Namespace,
    output: str = "count",
    limit: int | None = None,
) -> dict:
    """One ``facet detect`` process; with ``output`` pairs/blocks, written to a fresh folder
    under ``bench/work/out/`` whose size is recorded, then deleted (partial files included)."""
    cmd = [exe, "detect", str(file), "--dc", dc, "--format", "json", "--exit-zero"]
    out_dir = None
    if output != "count":
        out_dir = Path(ctx.work) / "out" / uuid.uuid4().hex[:12]
        out_dir.mkdir(parents=True)
        cmd += ["--output", output, "--out", str(out_dir / f"{output}.parquet")]
        if limit is not None:
            cmd += ["--limit", str(limit)]
    try:
        r = common.run_process(cmd, timeout=ctx.timeout, rss_limit=ctx.rss_limit, cwd=REPO)
        out = _base(r)
        if out_dir is not None:
            target = out_dir / f"{output}.parquet"
            out["out_bytes"] = target.stat().st_size if target.exists() else None
            out["out_dir_bytes"] = _dir_bytes(out_dir)  # > out_bytes: a partial file was left
    finally:
        if out_dir is not None:
            shutil.rmtree(out_dir, ignore_errors=True)
    if r.status == "ok":
        try:
            doc = json.loads(r.stdout)
            d = doc["dcs"][0]
            out.update(
                seconds=float(d["seconds"]),
                violations=int(d["violations"]),
                rows_involved=d.get("rows_involved"),
                written=d.get("written"),
                load_seconds=doc.get("load_seconds"),
                warmup_seconds=doc.get("warmup_seconds"),
                rows=doc.get("rows"),
                canonical=d.get("dc"),
            )
        except (ValueError, KeyError, IndexError, TypeError) as e:
            out.update(status="bad-output", error=f"{e}: {r.stdout[:500]!r}")
    if out["status"] != "ok":
        out["stderr_tail"] = r.stderr[-2000:]
    return out


def run_duckdb(file: Path, dc: str, ctx: argparse.Namespace) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--duckdb-worker", "--file", str(file),
           "--dc", dc]  # fmt: skip
    if ctx.duckdb_threads:
        cmd += ["--threads", str(ctx.duckdb_threads)]
    r = common.run_process(cmd, timeout=ctx.timeout, rss_limit=ctx.rss_limit, cwd=REPO)
    out = _base(r)
    if r.status == "ok":
        try:
            doc = json.loads(r.stdout.strip().splitlines()[-1])
            out.update(
                seconds=float(doc["seconds"]),
                violations=int(doc["count"]),
                load_seconds=doc["load_seconds"],
                rows=doc["rows"],
                types=doc["types"],
                sql=doc["sql"],
                threads=doc["threads"],
            )
        except (ValueError, KeyError, IndexError, TypeError) as e:
            out.update(status="bad-output", error=f"{e}: {r.stdout[:500]!r}")
    if out["status"] != "ok":
        out["stderr_tail"] = r.stderr[-2000:]
    return out


def summarize(runs: list[dict]) -> dict:
    s = dvd.summarize(runs)
    ok = [r for r in runs if r["status"] == "ok"]
    for key in ("out_bytes", "written"):
        vals = [r.get(key) for r in ok if r.get(key) is not None]
        if vals:
            s["median_" + key] = common.median(vals)
    partial = [
        r.get("out_dir_bytes") for r in runs if r["status"] != "ok" and r.get("out_dir_bytes")
    ]
    if partial:
        s["killed_out_bytes"] = max(partial)  # what a killed run had written so far
    return s


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _log_run(label: str, r: dict) -> None:
    extra = f" out {common.fmt_bytes(r['out_bytes'])}" if r.get("out_bytes") is not None else ""
    _log(
        f"  {label}: {r['status']} seconds {r.get('seconds', float('nan')):.3f} wall "
        f"{r['wall']:.2f} rss {common.fmt_bytes(r['rss'])} count {r.get('violations')}{extra}"
    )


# --------------------------------------------------------------------------------------------
# the facet under test

LAUNCHER = """#!{python}
import os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
import facet
assert os.path.abspath(facet.__file__).startswith(HERE + os.sep), facet.__file__
from facet.cli import main
sys.exit(main())
"""


def snapshot_facet(work: Path) -> tuple[str, str]:
    """A private copy of the committed HEAD's facet (``git archive``), laid out as the
    installed package (``facet/``, ``facet/kernels/``, ``facet/planner/``), and a launcher
    for it: the code measured is exactly the commit recorded, whatever others edit in the
    working tree meanwhile. Its numba cache lives in the copy. Returns (launcher, full sha)."""
    sha = common._git("rev-parse", "HEAD")
    if not sha:
        raise SystemExit("--snapshot: not a git checkout")
    root = work / f"snapshot-{sha[:12]}"
    launcher = root / "facet_cli.py"
    if launcher.exists():
        return str(launcher), sha
    tmp = work / f".snapshot-{sha[:12]}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", sha, "facet", "kernels", "planner"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    for sub in ("kernels", "planner"):
        (tmp / sub).rename(tmp / "facet" / sub)
    (tmp / "facet_cli.py").write_text(LAUNCHER.format(python=sys.executable))
    (tmp / "facet_cli.py").chmod(0o755)
    tmp.rename(root)
    return str(launcher), sha


# --------------------------------------------------------------------------------------------
# tables


def tables(ctx: argparse.Namespace) -> dict[str, Path]:
    work = Path(ctx.work)
    out = {}
    if any(DCS[n][0] == "tax" for n in ctx.names):
        out["tax"] = dvd.ensure_table(ctx.rows, ctx.seed, ctx.error_rate, work, ctx.timeout)
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
    return {
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


def _warm(ctx, exe, file, dc, output="count", limit=None) -> dict:
    w = run_facet(exe, file, dc, ctx, output, limit)
    _log(f"  facet warm-up ({output}, {file.name}): {w['status']} wall {w['wall']:.2f}s")
    return {k: w.get(k) for k in ("status", "wall", "rss", "warmup_seconds", "seconds")}


def count_cell(ctx, exe: str, name: str, file: Path, rows: int) -> dict:
    """facet and DuckDB counts of DC ``name`` on ``file``, interleaved."""
    dc = DCS[name][1]
    _log(f"[count {name} @ {rows:,}] {dc}")
    warm = _warm(ctx, exe, file, dc)
    runs: dict[str, list[dict]] = {"facet": [], "duckdb": []}
    stopped: set[str] = set()
    for i in range(ctx.repeats):
        for system in ("facet", "duckdb"):
            if system in stopped or system not in ctx.systems:
                continue
            r = run_facet(exe, file, dc, ctx) if system == "facet" else run_duckdb(file, dc, ctx)
            runs[system].append(r)
            _log_run(f"{system} #{i + 1}", r)
            if r["status"] in KILLED:
                stopped.add(system)  # DESIGN §6: not repeated
    summ = {s: summarize(v) for s, v in runs.items() if v}
    counts = {s: v["violations"] for s, v in summ.items() if v["violations"] is not None}
    if any(isinstance(c, list) for c in counts.values()):
        check = "MISMATCH"  # one system gave different counts across runs
    elif len(counts) == 2:
        check = "equal" if counts["facet"] == counts["duckdb"] else "MISMATCH"
    else:
        check = "unchecked"
    fm = summ.get("facet", {}).get("median_seconds")
    dm = summ.get("duckdb", {}).get("median_seconds")
    dstat = summ.get("duckdb", {}).get("status")
    rec = record(
        ctx, "count", name, rows, file,
        violations=next((c for c in counts.values() if isinstance(c, int)), None),
        check=check,
        ratio=(dm / fm) if fm and dm else None,
        ratio_lower_bound=(ctx.timeout / fm) if fm and dstat == "timeout" else None,
        facet=summ.get("facet"), facet_warmup=warm, duckdb=summ.get("duckdb"),
    )  # fmt: skip
    ratio = f"{rec['ratio']:.1f}x" if rec["ratio"] else "-"
    _log(f"  -> {name} @ {rows:,}: counts {counts} ({check}), DuckDB/facet {ratio}")
    if check == "MISMATCH":
        _log(f"ERROR: {name} @ {rows:,}: facet and DuckDB counts differ: {counts}")
    return rec


def output_cell(ctx, exe, name, file, kind, count_rec: dict | None) -> dict:
    dc = DCS[name][1]
    limit = ctx.pairs_limit if kind == "pairs" else None
    _log(f"[{kind} {name} @ {ctx.rows:,}] {dc}")
    warm = _warm(ctx, exe, prefix_file(file, min(WARM_ROWS, ctx.rows)), dc, kind, limit)
    runs = []
    for i in range(ctx.repeats):
        r = run_facet(exe, file, dc, ctx, kind, limit)
        runs.append(r)
        _log_run(f"facet {kind} #{i + 1}", r)
        if r["status"] in KILLED:
            break
    s = summarize(runs)
    cf = (count_rec or {}).get("facet") or {}
    cs, cw = cf.get("median_seconds"), cf.get("median_wall_seconds")
    fs, fw = s.get("median_seconds"), s.get("median_wall_seconds")
    check = "unchecked"
    if s.get("violations") is not None and cf.get("violations") is not None:
        check = "equal" if s["violations"] == cf["violations"] else "MISMATCH"
        if check == "MISMATCH":
            _log(f"ERROR: {name}: facet {kind} says {s['violations']}, count {cf['violations']}")
    return record(
        ctx, kind, name, ctx.rows, file,
        limit=limit, facet=s, facet_warmup=warm, check=check,
        count_seconds=cs, count_wall_seconds=cw,
        ratio_to_count=(fs / cs) if fs and cs else None,
        wall_ratio_to_count=(fw / cw) if fw and cw else None,
        lower_bound_ratio_to_count=(ctx.timeout / cs) if cs and s["status"] == "timeout" else None,
    )  # fmt: skip


def big_cell(ctx, exe) -> dict:
    name = BIG_DC
    file = tpch.lineitem(ctx.big_rows, ctx.work, (ctx.lineitem_format,))[ctx.lineitem_format]
    _log(f"[big {name} @ {ctx.big_rows:,}] {DCS[name][1]}")
    r = run_facet(exe, file, DCS[name][1], ctx)
    _log_run("facet", r)
    return record(ctx, "big", name, ctx.big_rows, file, facet=summarize([r]))


def run_all(ctx) -> int:
    exe = ctx.facet
    ok, why = dvd.facet_works(exe, Path(ctx.work))
    if not ok:
        _log(f"error: facet CLI not usable: {why}")
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
        rec = have("count", name, ctx.rows) or count_cell(ctx, exe, name, file, ctx.rows)
        counts[name] = rec
        failed |= rec["check"] == "MISMATCH"
        d = rec.get("duckdb") or {}
        if d.get("status") not in KILLED or d.get("ok_runs"):
            continue  # DuckDB finished at --rows (at least once)
        for rows in [r for r in ctx.ladder if r < ctx.rows]:  # DuckDB did not finish: shrink
            small = prefix_file(file, rows)
            lrec = have("count", name, rows) or count_cell(ctx, exe, name, small, rows)
            failed |= lrec["check"] == "MISMATCH"
            if (lrec.get("duckdb") or {}).get("status") not in KILLED:
                break
    for name in ctx.names:
        for kind in ctx.outputs:
            file = files[DCS[name][0]]
            rec = have(kind, name, ctx.rows) or output_cell(
                ctx, exe, name, file, kind, counts[name]
            )
            failed |= rec["check"] == "MISMATCH"
    if ctx.big and (have("big", BIG_DC, ctx.big_rows) is None):
        big_cell(ctx, exe)
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
    out = ["", "## Pairs and blocks vs count", "", "facet only, at the full row count; "
           f"pairs with `--limit {ctx.pairs_limit}`. Ratio = output median / count median "
           "(DC seconds, and wall). DESIGN §6 targets at 1M rows: blocks within 5x of count "
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
            target = "-"  # DESIGN §6 sets these targets at 1M rows (blocks: two DCs)
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
    loads = [
        x
        for r in recs
        for side in ("facet", "duckdb")
        for pair in (r.get(side) or {}).get("samples_load1", [])
        for x in pair
    ]
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
    md.write_text("\n".join(head) + "\n" + table + "\n" + "\n".join(out) + "\n" + otable + "\n"
                  + "\n".join(tail))  # fmt: skip


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
    ap.add_argument("--force", action="store_true", help="re-run cells already recorded")
    ap.add_argument("--work", default=str(REPO / "bench" / "work"))
    ap.add_argument("--results", default=str(REPO / "bench" / "results" / f"{BENCH}.jsonl"))
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="only rewrite the markdown, from the latest run-set in --results",
    )
    # worker mode (internal)
    ap.add_argument("--duckdb-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    ap.add_argument("--dc", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.duckdb_worker:
        return duckdb_worker(args)

    args.names = [n.strip() for n in args.dcs.split(",") if n.strip()]
    args.systems = {s.strip() for s in args.systems.split(",") if s.strip()}
    args.outputs = [o.strip() for o in args.outputs.split(",") if o.strip()]
    args.ladder = sorted(_ints(args.ladder), reverse=True)
    bad = [n for n in args.names if n not in DCS]
    if bad or not args.systems <= {"facet", "duckdb"} or not set(args.outputs) <= set(TARGETS):
        ap.error(f"unknown DC {bad}, systems {sorted(args.systems)} or outputs {args.outputs}")
    if "facet" not in args.systems:
        ap.error("--systems must include facet")
    args.rss_limit = (
        int(args.rss_limit_gib * common.GIB) if args.rss_limit_gib else common.default_rss_limit()
    )
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
        args.facet, sha = snapshot_facet(Path(args.work))
        args.git_short, args.git_dirty = sha[: len(args.git_short)], False
    args.facet = args.facet or dvd.facet_exe()
    args.run_id = uuid.uuid4().hex[:12]
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
