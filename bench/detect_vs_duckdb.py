"""facet detect vs DuckDB self-joins on generated Tax tables.

    python bench/detect_vs_duckdb.py [--rows 1000000] [--repeats 5] [--seed 0]

Generates the table once (``bench/work/``, git-ignored), then for each DC runs, ``--repeats``
times and interleaved, each in its own process under a watchdog:

* facet: ``facet detect FILE --dc DC --format json --exit-zero``; the DC's ``seconds``
  (everything after the CSV is read into Arrow, JIT warm-up excluded), the process wall time
  and its peak RSS. One untimed run per DC first warms the numba cache.
* DuckDB: a fresh process loads the CSV into table ``r`` (untimed; ``rid`` = 0-based row
  number; columns the DCs compare with ``< <= > >=`` typed as numbers with DESIGN §1's number
  grammar, anything else NULL; all other columns VARCHAR), then times
  ``SELECT count(*) FROM r t, r t2 WHERE t.rid <> t2.rid AND ...``; plus its peak RSS.

Counts must agree (exit 1 otherwise). Medians, all samples, the ratio
``duckdb_median / facet_median`` and machine info append to
``bench/results/detect_vs_duckdb.jsonl``; ``bench/results/detect_vs_duckdb.md`` is rewritten
from the latest run-set.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

REPO = common.REPO
BENCH = "detect_vs_duckdb"
DCS = {
    "zip_city": "not(t.zip = t'.zip and t.city != t'.city)",
    "phone": "not(t.area_code = t'.area_code and t.phone = t'.phone)",
    "salary_rate": "not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)",
}
NUMBER_RE = r"[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?"  # DESIGN §1, after trim

# --------------------------------------------------------------------------------------------
# DC text -> SQL (the plain `not(t.A op t'.B and ...)` form used here)

_OPERAND = r"(?:t'?\.[A-Za-z_][A-Za-z0-9_]*|'[^']*'|\"[^\"]*\"|[+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)"
_PRED = re.compile(rf"^\s*({_OPERAND})\s*(<=|>=|!=|<>|=|<|>)\s*({_OPERAND})\s*$")
_SQL_OP = {"=": "=", "!=": "<>", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def parse_dc(dc: str) -> list[tuple[str, str, str]]:
    m = re.fullmatch(r"\s*not\s*\((.*)\)\s*", dc, flags=re.S)
    if not m:
        raise ValueError(f"unsupported DC text: {dc!r}")
    preds = []
    for part in re.split(r"\s+and\s+", m.group(1)):
        pm = _PRED.match(part)
        if not pm:
            raise ValueError(f"unsupported predicate {part!r} in {dc!r}")
        preds.append((pm.group(1), pm.group(2), pm.group(3)))
    return preds


def _col(operand: str) -> str | None:
    return operand.split(".", 1)[1] if operand.startswith(("t.", "t'.")) else None


def ordered_columns(dcs: list[str]) -> set[str]:
    """Columns compared with < <= > >=, closed over column-to-column predicates (DESIGN §1)."""
    preds = [p for dc in dcs for p in parse_dc(dc)]
    ordered = {c for a, op, b in preds if op in ("<", "<=", ">", ">=") for c in (_col(a), _col(b))}
    ordered.discard(None)
    changed = True
    while changed:
        changed = False
        for a, _, b in preds:
            ca, cb = _col(a), _col(b)
            if ca and cb and (ca in ordered) != (cb in ordered):
                ordered |= {ca, cb}
                changed = True
    return ordered


def dc_to_sql(dc: str) -> str:
    def operand(x: str) -> str:
        if x.startswith("t'."):
            return f't2."{x[3:]}"'
        if x.startswith("t."):
            return f't."{x[2:]}"'
        if x[0] in "'\"":
            return "'" + x[1:-1].replace("'", "''") + "'"
        return x

    where = " AND ".join(f"{operand(a)} {_SQL_OP[op]} {operand(b)}" for a, op, b in parse_dc(dc))
    return f"SELECT count(*) FROM r t, r t2 WHERE t.rid <> t2.rid AND {where}"


# --------------------------------------------------------------------------------------------
# the DuckDB worker (runs in its own process)


def duckdb_worker(args: argparse.Namespace) -> int:
    import duckdb

    t0 = time.perf_counter()
    con = duckdb.connect()
    if args.threads:
        con.execute(f"SET threads = {int(args.threads)}")
    cols = con.execute(
        "SELECT * FROM read_csv(?, all_varchar = true, header = true) LIMIT 0", [args.file]
    ).description
    names = [c[0] for c in cols]
    ordered = ordered_columns([args.dc])
    exprs = []
    for n in names:
        q = '"' + n.replace('"', '""') + '"'
        if n in ordered:
            exprs.append(
                f"CASE WHEN regexp_full_match(trim({q}), '{NUMBER_RE}') "
                f"THEN CAST(trim({q}) AS DOUBLE) END AS {q}"
            )
        else:
            exprs.append(q)
    con.execute(
        "CREATE TABLE r0 AS SELECT * FROM read_csv(?, all_varchar = true, header = true)",
        [args.file],
    )
    con.execute(
        f"CREATE TABLE r AS SELECT (row_number() OVER ()) - 1 AS rid, {', '.join(exprs)} FROM r0"
    )
    con.execute("DROP TABLE r0")
    types = {}
    for n in ordered & set(names):
        q = '"' + n.replace('"', '""') + '"'
        non_null, frac = con.execute(
            f"SELECT count({q}), count(*) FILTER (WHERE {q} <> floor({q})) FROM r"
        ).fetchone()
        if non_null == 0:
            print(json.dumps({"error": f"ordered column {n} has no numeric value"}))
            return 2
        if frac == 0:
            con.execute(f"ALTER TABLE r ALTER {q} TYPE BIGINT")
            types[n] = "BIGINT"
        else:
            types[n] = "DOUBLE"
    rows = con.execute("SELECT count(*) FROM r").fetchone()[0]
    load = time.perf_counter() - t0
    sql = dc_to_sql(args.dc)
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
                "types": types,
                "sql": sql,
                "threads": con.execute("SELECT current_setting('threads')").fetchone()[0],
            }
        )
    )
    return 0


# --------------------------------------------------------------------------------------------
# orchestration


def facet_exe() -> str | None:
    exe = REPO / ".venv" / "bin" / "facet"
    if exe.exists() and os.access(exe, os.X_OK):
        return str(exe)
    return shutil.which("facet")


def facet_works(exe: str | None, work: Path) -> tuple[bool, str]:
    """Does ``facet detect ... --format json`` answer a tiny known case correctly?"""
    if exe is None:
        return False, "no facet console script (.venv/bin/facet)"
    work.mkdir(parents=True, exist_ok=True)
    tiny = work / "facet_probe.csv"
    tiny.write_text("a,b\n1,x\n1,y\n2,z\n")
    r = common.run_process(
        [exe, "detect", str(tiny), "--dc", "not(t.a = t'.a and t.b != t'.b)", "--format", "json",
         "--exit-zero"],
        timeout=300,
    )  # fmt: skip
    if r.status != "ok":
        return False, f"facet probe {r.status} (rc {r.returncode}): {r.stderr.strip()[-500:]}"
    try:
        doc = json.loads(r.stdout)
        v = doc["dcs"][0]["violations"]
    except (ValueError, KeyError, IndexError, TypeError) as e:
        return False, f"facet probe: unexpected JSON ({e}): {r.stdout[:300]!r}"
    if v != 2:
        return False, f"facet probe: 2 violations expected, got {v}"
    return True, "ok"


def ensure_table(rows: int, seed: int, error_rate: float, work: Path, timeout: float) -> Path:
    path = work / f"tax_{rows}_s{seed}_e{error_rate:g}.csv"
    if path.exists():
        return path
    work.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(REPO / "data" / "taxgen.py"), "--rows", str(rows), "--out",
           str(path), "--seed", str(seed), "--error-rate", repr(error_rate)]  # fmt: skip
    print(f"generating {path.name} ...", file=sys.stderr, flush=True)
    r = common.run_process(cmd, timeout=timeout)
    if r.status != "ok" or not path.exists():
        raise SystemExit(f"table generation failed ({r.status}): {r.stderr[-2000:]}")
    print(r.stderr.strip(), file=sys.stderr, flush=True)
    return path


def run_facet(exe: str, file: Path, dc: str, timeout: float, rss_limit: int) -> dict:
    cmd = [exe, "detect", str(file), "--dc", dc, "--format", "json", "--exit-zero"]
    r = common.run_process(cmd, timeout=timeout, rss_limit=rss_limit, cwd=REPO)
    out = {"status": r.status, "wall": r.wall_seconds, "rss": r.peak_rss_bytes, "rc": r.returncode,
           "load1": [r.extra["load1_start"], r.extra["load1_end"]]}  # fmt: skip
    if r.status == "ok":
        try:
            doc = json.loads(r.stdout)
            d = doc["dcs"][0]
            out.update(
                seconds=float(d["seconds"]),
                violations=int(d["violations"]),
                rows_involved=d.get("rows_involved"),
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


def run_duckdb(file: Path, dc: str, timeout: float, rss_limit: int, threads: int | None) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--duckdb-worker", "--file", str(file),
           "--dc", dc]  # fmt: skip
    if threads:
        cmd += ["--threads", str(threads)]
    r = common.run_process(cmd, timeout=timeout, rss_limit=rss_limit, cwd=REPO)
    out = {"status": r.status, "wall": r.wall_seconds, "rss": r.peak_rss_bytes, "rc": r.returncode,
           "load1": [r.extra["load1_start"], r.extra["load1_end"]]}  # fmt: skip
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
    ok = [r for r in runs if r["status"] == "ok"]
    bad = [r["status"] for r in runs if r["status"] != "ok"]
    counts = sorted({r["violations"] for r in ok})
    s = {
        "status": "ok" if ok and not bad else (bad[0] if bad else "not-run"),
        "runs": len(runs),
        "ok_runs": len(ok),
        "median_seconds": common.median(r["seconds"] for r in ok),
        "samples_seconds": [r["seconds"] for r in ok],
        "median_wall_seconds": common.median(r["wall"] for r in ok),
        "samples_wall_seconds": [r["wall"] for r in runs],
        "median_peak_rss_bytes": common.median(r["rss"] for r in ok),
        "max_peak_rss_bytes": max((r["rss"] or 0 for r in runs), default=None),
        "samples_peak_rss_bytes": [r["rss"] for r in runs],
        "samples_load1": [r["load1"] for r in runs],  # 1-min load average before / after
        "median_load_seconds": common.median(r.get("load_seconds") for r in ok),
        "violations": counts[0] if len(counts) == 1 else counts or None,
    }
    for key in ("rows_involved", "warmup_seconds", "types", "sql", "threads", "canonical"):
        vals = [r.get(key) for r in ok if r.get(key) is not None]
        if vals:
            s[key] = vals[0] if key != "warmup_seconds" else vals
    errors = [
        {k: r.get(k) for k in ("status", "rc", "error", "stderr_tail") if r.get(k) is not None}
        for r in runs
        if r["status"] != "ok"
    ]
    if errors:
        s["errors"] = errors[:3]
    return s


def write_markdown(jsonl: Path, md: Path) -> None:
    records = [r for r in common.read_jsonl(jsonl) if r.get("bench") == BENCH]
    if not records:
        return
    run_id = records[-1]["run_id"]
    latest = [r for r in records if r["run_id"] == run_id]
    m = latest[0]["machine"]
    head = [
        "# facet detect vs DuckDB (generated Tax tables)",
        "",
        "Regenerated by `bench/detect_vs_duckdb.py` from the latest run-set in "
        f"`{jsonl.name}`; see `bench/README.md` for what is measured.",
        "",
        f"* command: `{latest[0]['command']}`",
        f"* date: {m['date']}; rows: {latest[0]['rows']:,}; seed {latest[0]['seed']}, "
        f"error rate {latest[0]['error_rate']}; repeats: {latest[0]['repeats']}",
        f"* machine: {m['cpu_model']}, nproc {m['nproc']}, {m['mem_total_gib']} GiB; "
        f"Python {m['python']}, DuckDB {m['versions'].get('duckdb')}, "
        f"numba {m['versions'].get('numba')}; git {m.get('git_commit') or '(no commit)'}"
        f"{' (dirty)' if m.get('git_dirty') else ''}",
        "",
        "Times are medians in seconds. facet: the DC's `seconds` from its JSON (after the CSV is "
        "in Arrow: encoding, statistics, planning, execution; JIT warm-up excluded). DuckDB: "
        "the `count(*)` self-join on a loaded table. Ratio = DuckDB / facet (> 1: facet faster).",
        "",
    ]
    rows = []
    for r in latest:
        f, d = r.get("facet") or {}, r.get("duckdb") or {}
        ratio = r.get("ratio")
        lower = r.get("ratio_lower_bound")
        rows.append(
            [
                r["dc_name"],
                f"`{r['dc']}`",
                f"{r['violations']:,}" if isinstance(r.get("violations"), int) else "-",
                common.fmt_seconds(f.get("median_seconds")) if f.get("status") == "ok"
                else f.get("status", "-"),
                common.fmt_seconds(d.get("median_seconds")) if d.get("status") == "ok"
                else d.get("status", "-"),
                f"{ratio:.1f}x" if ratio else (f"> {lower:.0f}x" if lower else "-"),
                common.fmt_seconds(f.get("median_wall_seconds")),
                common.fmt_bytes(f.get("max_peak_rss_bytes")),
                common.fmt_seconds(d.get("median_wall_seconds")),
                common.fmt_bytes(d.get("max_peak_rss_bytes")),
                r.get("check", "-"),
            ]
        )  # fmt: skip
    table = common.markdown_table(
        ["DC", "text", "violations", "facet s", "DuckDB s", "DuckDB/facet", "facet wall s",
         "facet peak RSS", "DuckDB wall s", "DuckDB peak RSS", "counts"],
        rows,
    )  # fmt: skip
    loads = [
        x
        for r in latest
        for side in ("facet", "duckdb")
        for pair in (r.get(side) or {}).get("samples_load1", [])
        for x in pair
    ]
    notes = [
        "",
        "",
        f"1-minute load average around the timed runs: {min(loads):.2f} to {max(loads):.2f} "
        f"on {m['nproc']} CPUs (other work on the machine inflates times)."
        if loads
        else "",
        "",
        "Wall times are whole processes (interpreter start, CSV parsing, numba cache load for "
        "facet; CSV load and typing for DuckDB). Peak RSS is the largest over the runs "
        f"({m.get('rss_method')}).",
        "",
    ]
    md.parent.mkdir(parents=True, exist_ok=True)
    md.write_text("\n".join(head) + "\n" + table + "\n".join(notes))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--error-rate", type=float, default=0.001)
    ap.add_argument(
        "--dcs", default=",".join(DCS), help="comma-separated subset of: " + ", ".join(DCS)
    )
    ap.add_argument("--systems", default="facet,duckdb", help="facet,duckdb or one of them")
    ap.add_argument("--timeout", type=float, default=600.0, help="watchdog per process, seconds")
    ap.add_argument("--rss-limit-gib", type=float, default=None, help="watchdog on peak RSS")
    ap.add_argument("--duckdb-threads", type=int, default=None, help="default: DuckDB's own")
    ap.add_argument("--work", default=str(REPO / "bench" / "work"))
    ap.add_argument("--results", default=str(REPO / "bench" / "results" / f"{BENCH}.jsonl"))
    ap.add_argument("--no-warmup", action="store_true")
    # worker mode (internal)
    ap.add_argument("--duckdb-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    ap.add_argument("--dc", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.duckdb_worker:
        return duckdb_worker(args)

    names = [n.strip() for n in args.dcs.split(",") if n.strip()]
    unknown = [n for n in names if n not in DCS]
    systems = {s.strip() for s in args.systems.split(",") if s.strip()}
    if unknown or not systems <= {"facet", "duckdb"} or not systems:
        ap.error(f"unknown DC {unknown} or systems {sorted(systems)}")
    rss_limit = (
        int(args.rss_limit_gib * common.GIB) if args.rss_limit_gib else common.default_rss_limit()
    )
    work = Path(args.work)
    results = Path(args.results)

    exe = facet_exe()
    if "facet" in systems:
        ok, why = facet_works(exe, work)
        if not ok:
            print(f"error: facet CLI not usable: {why}", file=sys.stderr)
            return 2

    file = ensure_table(args.rows, args.seed, args.error_rate, work, args.timeout)
    machine = common.machine_info()
    run_id = uuid.uuid4().hex[:12]
    failed = False

    for name in names:
        dc = DCS[name]
        print(f"[{name}] {dc}", file=sys.stderr, flush=True)
        warm = None
        if "facet" in systems and not args.no_warmup:
            warm = run_facet(exe, file, dc, args.timeout, rss_limit)
            print(f"  facet warm-up: {warm['status']} wall {warm['wall']:.2f}s", file=sys.stderr)
        runs = {s: [] for s in systems}
        stopped = set()
        for i in range(args.repeats):
            for system in ("facet", "duckdb"):
                if system not in systems or system in stopped:
                    continue
                if system == "facet":
                    r = run_facet(exe, file, dc, args.timeout, rss_limit)
                else:
                    r = run_duckdb(file, dc, args.timeout, rss_limit, args.duckdb_threads)
                runs[system].append(r)
                print(
                    f"  {system} #{i + 1}: {r['status']} seconds {r.get('seconds', float('nan')):.3f}"
                    f" wall {r['wall']:.2f} rss {common.fmt_bytes(r['rss'])}"
                    f" count {r.get('violations')}",
                    file=sys.stderr,
                    flush=True,
                )
                if r["status"] in ("timeout", "oom", "killed"):
                    stopped.add(system)  # DESIGN §6: such a cell is not repeated
        summ = {s: summarize(v) for s, v in runs.items()}
        counts = {s: v["violations"] for s, v in summ.items() if v["violations"] is not None}
        if len(counts) == 2 and all(isinstance(c, int) for c in counts.values()):
            check = "equal" if counts["facet"] == counts["duckdb"] else "MISMATCH"
        elif any(isinstance(c, list) for c in counts.values()):
            check = "MISMATCH"  # one system gave different counts across runs
        else:
            check = "unchecked"
        fm = summ.get("facet", {}).get("median_seconds")
        dm = summ.get("duckdb", {}).get("median_seconds")
        violations = next((c for c in counts.values() if isinstance(c, int)), None)
        record = {
            "bench": BENCH,
            "run_id": run_id,
            "command": common.command_line(),
            "machine": machine,
            "rows": args.rows,
            "seed": args.seed,
            "error_rate": args.error_rate,
            "repeats": args.repeats,
            "data_file": str(file.relative_to(REPO)) if file.is_relative_to(REPO) else str(file),
            "data_bytes": file.stat().st_size,
            "dc_name": name,
            "dc": dc,
            "violations": violations,
            "check": check,
            "ratio": (dm / fm) if fm and dm else None,
            "ratio_lower_bound": (
                args.timeout / fm
                if fm and summ.get("duckdb", {}).get("status") == "timeout"
                else None
            ),
            "facet": summ.get("facet"),
            "facet_warmup": (
                {k: warm.get(k) for k in ("status", "wall", "rss", "warmup_seconds", "seconds")}
                if warm
                else None
            ),
            "duckdb": summ.get("duckdb"),
            "timeout_s": args.timeout,
            "rss_limit_bytes": rss_limit,
        }
        common.append_jsonl(results, record)
        write_markdown(results, results.with_suffix(".md"))
        ratio = f"{record['ratio']:.2f}" if record["ratio"] else "-"
        print(
            f"  -> {name}: counts {counts} ({check}), ratio duckdb/facet {ratio}", file=sys.stderr
        )
        if check == "MISMATCH":
            print(f"ERROR: {name}: facet and DuckDB counts differ: {counts}", file=sys.stderr)
            failed = True
    print(f"results: {results} and {results.with_suffix('.md')}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
