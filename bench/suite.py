"""facet against every system a user would pick instead: one suite, counts cross-checked.

    python -m bench.suite [--rows 100k,1m]
        [--engines facet,facet-spark,duckdb,polars,spark-sql,pandas,desbordante]
        [--repeat 3] [--timeout 600] [--dcs phi4,phi7,...] [--no-real] [--once-over 150]
        [--no-project] [--master local[2]] [--force] [--report-only] [--jsonl PATH]

What runs (the FACET paper's §7, Table 2, Fig. 4 and Fig. 11 are the yardstick):

* **Workloads.** The paper's DCs on tables generated offline at each ``--rows``: Tax
  (``data/taxgen.py``) φ4-φ7 (φ5 is zip -> city); Flights-like (``data/flightsgen.py``,
  Zipf-skewed airports) φ8, φ9; TPC-H lineitem with its order's customer key
  (``bench/tpch.py``, ``tpchgen-cli``) φ10-φ13. Then every rules file of ``data/`` on its
  data, once, at the data's own size (all DCs of the file in one process per system).
* **One typed table for every system.** Each table is written once to Parquet under
  ``bench/work/suite/`` with its columns typed as facet types them (generated tables: typed
  by their generator; real CSV files: by facet's own typing, docs/semantics.md §4.3, from all
  the DCs of the rules file) and ``rid``, the 0-based row number. facet reads that Parquet
  too, so typing never explains a difference.
* **Systems.** ``facet`` (``facet detect T --dc DC --format json``: the DC's ``seconds``,
  after the table is in Arrow, JIT warm-up excluded), ``facet-spark`` (the same with
  ``--engine spark --master local[2]``), and the peers of ``bench/peer_worker.py``:
  ``duckdb``, ``spark-sql`` (``SELECT count(*)`` self-joins on a loaded table),
  ``polars`` (``join`` / ``join_where``), ``pandas`` (``merge`` / chunked cross products),
  ``desbordante`` (its DC verifier; unordered pairs converted to facet's ordered count).
  The query time excludes reading the file; wall time (the whole process) sits beside it.
* **Cells.** For each size (ascending) and DC, the systems run interleaved, each run its own
  process under the watchdog of ``bench/common.py`` (timeout, peak RSS of the process group),
  ``--repeat`` times; the median is reported. A run that times out or runs out of memory is
  recorded and not repeated, and that system skips the DC at larger sizes. Two budget rules
  keep the suite within two hours on a 2-core machine (``--no-project`` / ``--once-over 0``
  turn them off): a system whose median at the previous size, grown linearly to the next
  size, already exceeds the timeout is recorded as ``projected`` there instead of run
  (linear growth is a lower bound for a pair count's work); a run longer than
  ``--once-over`` seconds is not repeated (its samples say so).
* **Counts.** Every finishing system must report the same violations for a DC (ordered pairs;
  rows for a single-tuple DC); a disagreement is recorded as ``MISMATCH`` and the suite exits 1.
* **Breakdown.** Per DC and size, facet's runtime split (paper Fig. 11) from ``facet explain
  --analyze --format json``: load, type + encode, statistics, plan, execute, plus writing the
  first 1M pairs to Parquet (``detect --output pairs --limit 1000000 --out``).

Results append to ``bench/results/suite.jsonl`` (one record per cell and system); an
interrupted run resumes where it stopped: a cell already recorded under the same parameters
is not run again (``--force`` runs it) while what it measures is unchanged since its commit
(``SYSTEM_PATHS``: facet's engine for facet's cells, a peer's worker for its own, the data
generators for all) -- a change to facet re-runs facet's cells, not the peers' hours. ``bench/results/YYYY-MM-DD.md`` and
``bench/results/YYYY-MM-DD.png`` (Fig. 4 style: log time per DC per system, one panel per
size) are written from the records at the end (``--report-only`` writes just them).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

REPO = common.REPO
WORK = REPO / "bench" / "work" / "suite"
RESULTS = REPO / "bench" / "results"
JSONL = RESULTS / "suite.jsonl"
SYSTEMS = ("facet", "facet-spark", "duckdb", "polars", "spark-sql", "pandas", "desbordante")
SPARK_SYSTEMS = ("facet-spark", "spark-sql")
KILLED = ("timeout", "oom", "killed")
BENCH = "suite"


@dataclass(frozen=True)
class PaperDC:
    id: str
    label: str  # as the paper names it
    table: str  # tax | flights | lineitem
    text: str
    equality_only: bool  # every predicate is an equality (item 4: >= 1.5x DuckDB)


PAPER_DCS = [
    PaperDC("phi4", "φ4 area code, phone", "tax",
            "not(t.area_code = t'.area_code and t.phone = t'.phone)", True),
    PaperDC("phi5", "φ5 zip -> city", "tax", "not(t.zip = t'.zip and t.city != t'.city)", False),
    PaperDC("phi6", "φ6 state, child -> exemption", "tax",
            "not(t.state = t'.state and t.has_child = t'.has_child and "
            "t.child_exemp != t'.child_exemp)", False),
    PaperDC("phi7", "φ7 salary, rate", "tax",
            "not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)", False),
    PaperDC("phi8", "φ8 route distance", "flights",
            "not(t.origin = t'.dest and t.dest = t'.origin and t.distance != t'.distance)", False),
    PaperDC("phi9", "φ9 flights, passengers", "flights",
            "not(t.origin = t'.origin and t.dest = t'.dest and t.flights > t'.flights and "
            "t.passengers < t'.passengers)", False),
    PaperDC("phi10", "φ10 customer, supplier", "lineitem",
            "not(t.l_custkey = t'.l_suppkey and t.l_suppkey = t'.l_custkey)", True),
    PaperDC("phi11", "φ11 ship, receipt dates", "lineitem",
            "not(t.l_receiptdate >= t'.l_shipdate and t.l_shipdate <= t'.l_receiptdate)", False),
    PaperDC("phi12", "φ12 price, discount", "lineitem",
            "not(t.l_extendedprice > t'.l_extendedprice and t.l_discount < t'.l_discount)", False),
    PaperDC("phi13", "φ13 qty, tax, price, discount", "lineitem",
            "not(t.l_quantity = t'.l_quantity and t.l_tax = t'.l_tax and "
            "t.l_extendedprice > t'.l_extendedprice and t.l_discount < t'.l_discount)", False),
]  # fmt: skip
BY_ID = {d.id: d for d in PAPER_DCS}

#: every rules file of data/ on its data (the dirty table where there are two)
REAL = [
    ("holoclean-hospital/hospital.csv", "holoclean-hospital/hospital_constraints.txt"),
    *[
        (f"adr/{name}/dirty.csv", f"adr/{name}/{rules}")
        for name in ("hospital", "flights", "beers", "rayyan")
        for rules in ("dc_rules_holoclean.txt", "dc_rules.txt")
    ],
    *[
        ("tax/tax_dirty_0040k.csv", f"tax/{rules}")
        for rules in ("dc_rules_holoclean.txt", "dc_rules.txt", "dc_rules_relaxed.txt")
    ],
    ("adult/adult.csv", "adult/adult_constraints.txt"),
    ("food/food_input_small.csv", "food/food_constraints.txt"),
    ("met/met_1000.csv", "met/met_constraints.txt"),
]


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def parse_rows(text: str) -> list[int]:
    """``100k,1m`` -> ``[100000, 1000000]`` (ascending)."""
    out = []
    for part in text.split(","):
        p = part.strip().lower().replace("_", "")
        mult = {"k": 1_000, "m": 1_000_000}.get(p[-1:], 1)
        out.append(int(float(p.rstrip("km")) * mult))
    return sorted(set(out))


def fmt_rows(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return f"{n:,}"


# --------------------------------------------------------------------------------------------
# tables: typed Parquet with rid, generated once


def _with_rid(src: Path, out: Path) -> Path:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(src)
    if "rid" in table.column_names:
        table = table.drop_columns(["rid"])
    table = table.append_column("rid", pa.array(np.arange(table.num_rows, dtype=np.int64)))
    tmp = out.with_name(out.name + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, out)
    return out


def generated_table(kind: str, rows: int, timeout: float) -> Path:
    """``bench/work/suite/<kind>_<rows>.parquet`` (typed, with rid), made once."""
    WORK.mkdir(parents=True, exist_ok=True)
    out = WORK / f"{kind}_{rows}.parquet"
    if out.exists():
        return out
    raw = WORK / f"{kind}_{rows}.raw.parquet"
    if kind == "tax":
        gen = [sys.executable, str(REPO / "data" / "taxgen.py"), "--rows", str(rows),
               "--out", str(raw), "--seed", "0", "--error-rate", "0.001"]  # fmt: skip
    elif kind == "flights":
        gen = [sys.executable, str(REPO / "data" / "flightsgen.py"), "--rows", str(rows),
               "--seed", "0", "--error-rate", "0.001", str(raw)]  # fmt: skip
    elif kind == "lineitem":
        import tpch

        _log(f"generating lineitem with customer keys, {rows:,} rows ...")
        _with_rid(tpch.lineitem_with_customer(rows, work=REPO / "bench" / "work"), out)
        return out
    else:
        raise ValueError(kind)
    _log(f"generating {kind}, {rows:,} rows ...")
    r = common.run_process(gen, timeout=timeout)
    if r.status != "ok" or not raw.exists():
        raise SystemExit(f"generating {kind} failed ({r.status}): {r.stderr[-2000:]}")
    _with_rid(raw, out)
    raw.unlink()
    return out


def real_table(csv: Path, rules: Path) -> Path:
    """``csv`` typed as facet types it for every DC of ``rules`` (docs/semantics.md §4.3), with
    rid, as Parquet (made once per data and rules file)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from facet.column_types import analyze
    from facet.encoding import component_arrays
    from facet.language.parser import read_rules
    from facet.loading import load

    tag = hashlib.sha1(f"{csv.resolve()}|{rules.resolve()}".encode()).hexdigest()[:8]
    out = WORK / f"real_{csv.parent.name}_{csv.stem}_{rules.stem}_{tag}.parquet"
    if out.exists():
        return out
    WORK.mkdir(parents=True, exist_ok=True)
    dcs = read_rules(rules)
    source = load(str(csv))
    use = analyze(dcs)
    typed: dict[str, pa.Array] = {}
    for comp in use.components:
        arrays, _, _ = component_arrays(comp, source, {}, use)
        typed.update(arrays)
    cols = {name: typed.get(name, source.table.column(name)) for name in source.table.column_names}
    cols["rid"] = pa.array(np.arange(source.num_rows, dtype=np.int64))
    tmp = out.with_name(out.name + ".tmp")
    pq.write_table(pa.table(cols), tmp)
    os.replace(tmp, out)
    return out


def rules_dcs(rules: Path) -> list[str]:
    """The DCs of a rules file as facet's canonical text, in file order."""
    from facet.language.parser import read_rules

    return [dc.canonical() for dc in read_rules(rules)]


# --------------------------------------------------------------------------------------------
# running one system on one table


#: what the measured code is: the engine and the peers' workers (not the suite's own script)
CODE_PATHS = ("facet", "kernels", "planner", "language", "pyproject.toml", "bench/peer_dc.py",
              "bench/peer_worker.py", "bench/polars_worker.py", "bench/pandas_worker.py",
              "bench/desbordante_worker.py")  # fmt: skip
#: what every system's numbers depend on: the tables' generators
DATA_PATHS = ("data/taxgen.py", "data/flightsgen.py", "bench/tpch.py")
_ENGINE = ("facet", "kernels", "planner", "language", "pyproject.toml")
_PEER = ("bench/peer_dc.py", "language", "facet/language", "pyproject.toml")
#: what each system's numbers depend on besides the data: a cell recorded for an older
#: commit is still current while none of these paths changed (so a change to facet re-runs
#: facet's cells only, and a peer's worker its own)
SYSTEM_PATHS = {
    "facet": _ENGINE,
    "facet-spark": _ENGINE,
    "duckdb": (*_PEER, "bench/peer_worker.py"),
    "spark-sql": (*_PEER, "bench/peer_worker.py"),
    "polars": (*_PEER, "bench/polars_worker.py"),
    "pandas": (*_PEER, "bench/pandas_worker.py"),
    "desbordante": (
        *_PEER,
        "bench/peer_worker.py",
        "bench/desbordante_worker.py",
        "bench/common.py",
    ),
}


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)


def engine_code() -> str:
    """The last commit that changed the measured code (``CODE_PATHS``), ``(dirty)`` when it
    has uncommitted changes: the commit a run's records name."""
    r = _git("log", "-1", "--format=%H", "--", *CODE_PATHS)
    commit = (r.stdout.strip() if r.returncode == 0 else "")[:10] or "unknown"
    dirty = bool(_git("status", "--porcelain", "--", *CODE_PATHS).stdout.strip())
    return commit + (" (dirty)" if dirty else "")


@functools.cache
def still_measures(code: str, system: str) -> bool:
    """Whether a record made at ``code`` still measures this checkout for ``system``: a
    clean commit, and none of the system's paths (``SYSTEM_PATHS`` + ``DATA_PATHS``)
    changed since, committed or not (a dirty record is never reused)."""
    if not code or code == "unknown" or code.endswith("(dirty)"):
        return False
    paths = SYSTEM_PATHS.get(system, CODE_PATHS) + DATA_PATHS
    if _git("diff", "--quiet", code, "--", *paths).returncode != 0:
        return False
    untracked = _git("ls-files", "--others", "--exclude-standard", "--", *paths).stdout
    return not untracked.strip()


class Ctx:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.timeout = args.timeout
        self.rss_limit = common.rss_limit(args.rss_limit_gib)
        self.facet = common.facet_exe()
        self.machine = common.machine_info(
            ("duckdb", "numpy", "numba", "pyarrow", "polars", "pandas", "pyspark", "desbordante")
        )
        self.code = engine_code()
        self.params = {"repeat": args.repeat, "timeout": args.timeout, "master": args.master,
                       "once_over": args.once_over, "project": not args.no_project}  # fmt: skip
        self.run_id = uuid.uuid4().hex[:12]
        self.command = "python -m bench.suite " + shlex.join(sys.argv[1:])
        self.failed = False
        self.env = dict(os.environ, PYSPARK_PYTHON=sys.executable)


def _facet_cmd(ctx: Ctx, system: str, table: Path, dcs: list[str], rules: Path | None) -> list:
    cmd = [ctx.facet, "detect", str(table), "--format", "json", "--exit-zero", "--quiet"]
    cmd += ["--rules", str(rules)] if rules else [x for dc in dcs for x in ("--dc", dc)]
    if system == "facet-spark":
        cmd += ["--engine", "spark", "--master", ctx.args.master]
    return cmd


def run_once(ctx: Ctx, system: str, table: Path, dcs: list[str], rules: Path | None) -> dict:
    """One process of ``system`` counting ``dcs`` on ``table``: ``run_summary`` plus per-DC
    ``results`` ({count, seconds[, method]} or {error}), ``seconds`` (their sum; None unless
    every DC finished), ``violations`` (the counts, a list), ``load_seconds``."""
    if system in ("facet", "facet-spark"):
        cmd = _facet_cmd(ctx, system, table, dcs, rules)
    else:
        cmd = [sys.executable, str(REPO / "bench" / "peer_worker.py"), "--system", system,
               "--table", str(table), "--master", ctx.args.master]  # fmt: skip
        cmd += [x for dc in dcs for x in ("--dc", dc)]
    r = common.run_process(cmd, timeout=ctx.timeout, rss_limit=ctx.rss_limit, cwd=REPO,
                           env=ctx.env)  # fmt: skip
    out = common.run_summary(r)
    out["rss"] = max(out["rss"] or 0, out.get("group_rss") or 0) or None
    if r.status == "ok":
        try:
            doc = json.loads(r.stdout.strip().splitlines()[-1])
            if system.startswith("facet"):
                results = [{"count": int(d["violations"]), "seconds": float(d["seconds"])}
                           for d in doc["dcs"]]  # fmt: skip
            else:
                results = doc["dcs"]
            if len(results) != len(dcs):
                raise ValueError(f"{len(results)} results for {len(dcs)} DCs")
            out["results"] = results
            out["load_seconds"] = doc.get("load_seconds")
            out["version"] = doc.get("version")
            done = [x for x in results if "count" in x]
            out["violations"] = [x.get("count") for x in results]
            out["seconds"] = sum(x["seconds"] for x in done) if len(done) == len(results) else None
            if not done:
                out["status"] = "unsupported"
                out["error"] = results[0].get("error")
            elif len(done) < len(results):
                out["status"] = "partial"
                out["error"] = next(x["error"] for x in results if "error" in x)
        except (ValueError, KeyError, IndexError, TypeError) as e:
            out.update(status="bad-output", error=f"{e}: {r.stdout[-500:]!r}")
    if out["status"] not in ("ok",):
        out["stderr_tail"] = r.stderr[-1500:]
    return out


def summarize(runs: list[dict], note: str | None = None) -> dict:
    """A system's runs of one cell: medians, samples, the counts."""
    ok = [r for r in runs if r["status"] == "ok"]
    last = runs[-1]
    status = "ok" if ok else last["status"]
    counts = [r["violations"] for r in ok]
    s = {
        "status": status,
        "runs": len(runs),
        "seconds": common.median(r["seconds"] for r in ok),
        "wall": common.median(r["wall"] for r in ok) if ok else last["wall"],
        "rss": max((r["rss"] or 0 for r in runs), default=0) or None,
        "load_seconds": common.median(r.get("load_seconds") for r in ok),
        "samples": [r["seconds"] for r in ok],
        "walls": [r["wall"] for r in runs],
        "load1": [r["load1"] for r in runs],
        "violations": counts[0] if ok and all(c == counts[0] for c in counts) else None,
        "per_dc_seconds": [
            common.median(r["results"][i]["seconds"] for r in ok)
            for i in range(len(ok[0]["results"]))
        ]
        if ok
        else None,  # fmt: skip
        "methods": sorted({x.get("method") for r in ok for x in r["results"] if x.get("method")}),
        "version": next((r.get("version") for r in ok if r.get("version")), None),
    }
    if ok and s["violations"] is None:
        s["status"] = "unstable-count"
        s["violations_seen"] = counts
    if status in ("partial", "unsupported"):
        s["violations"] = last.get("violations")
    if note:
        s["note"] = note
    errs = [{k: r.get(k) for k in ("status", "rc", "error", "stderr_tail") if r.get(k)}
            for r in runs if r["status"] != "ok"]  # fmt: skip
    if errs:
        s["errors"] = errs[:2]
    return s


def _key(rec: dict) -> tuple:
    """A cell and system under one parameter set (the code is checked apart:
    :func:`still_measures`)."""
    return (rec["workload"], rec["dc"], rec["rows"], rec["system"],
            json.dumps(rec["params"], sort_keys=True))  # fmt: skip


def check_counts(recs: list[dict]) -> str:
    """``equal`` when every finishing system reports the same counts, else ``MISMATCH``
    (``unchecked`` with fewer than two finishing systems). Partial runs compare on the DCs
    they finished."""
    finished = [r for r in recs if r["status"] in ("ok", "partial")]
    if any(r["status"] == "unstable-count" for r in recs):
        return "MISMATCH"
    if len(finished) < 2:
        return "unchecked"
    width = len(finished[0]["violations"])
    for i in range(width):
        seen = {r["violations"][i] for r in finished if r["violations"][i] is not None}
        if len(seen) > 1:
            return "MISMATCH"
    return "equal"


def run_cell(
    ctx: Ctx,
    workload: str,
    dc_id: str,
    rows: int,
    table: Path,
    dcs: list[str],
    rules: Path | None,
    done: dict[tuple, dict],
    history: list[dict],
) -> None:
    """Every system on one DC (or one rules file) and size, interleaved; records appended."""
    args = ctx.args
    base = {"bench": BENCH, "workload": workload, "dc": dc_id, "rows": rows,
            "code": ctx.code, "params": ctx.params}  # fmt: skip
    have = {s: done.get(_key({**base, "system": s})) for s in args.engines}
    todo = [s for s in args.engines if have[s] is None or args.force]
    if not todo:
        _log(f"  {dc_id} @ {fmt_rows(rows)}: recorded, skipped")
        return
    _log(f"  {dc_id} @ {fmt_rows(rows)} ({len(dcs)} DC{'s' if len(dcs) > 1 else ''}): {table.name}")
    runs: dict[str, list[dict]] = {s: [] for s in todo}
    notes: dict[str, str] = {}
    active = []
    for s in todo:
        prev = [h for h in history if h["dc"] == dc_id and h["system"] == s and h["rows"] < rows]
        prev.sort(key=lambda h: h["rows"])
        last = prev[-1] if prev else None
        if last and last["status"] in KILLED + ("skipped", "projected"):
            notes[s] = f"{last['status']} at {fmt_rows(last['rows'])}"
            runs[s].append({"status": "skipped", "wall": None, "rss": None, "load1": None})
        elif (last and not args.no_project and last["status"] == "ok" and last["seconds"]
              and last["seconds"] * rows / last["rows"] > ctx.timeout):  # fmt: skip
            grown = last["seconds"] * rows / last["rows"]
            notes[s] = (f"{last['seconds']:.1f} s at {fmt_rows(last['rows'])}; linear growth "
                        f"gives {grown:.0f} s > timeout {ctx.timeout:g} s")  # fmt: skip
            runs[s].append({"status": "projected", "wall": None, "rss": None, "load1": None})
        else:
            active.append(s)
    if any(s.startswith("facet") for s in active):  # numba's cache, untimed
        warm = run_once(ctx, "facet", table, dcs, rules)
        if warm["status"] != "ok":
            _log(f"    facet warm-up: {warm['status']} {warm.get('stderr_tail', '')[-300:]}")
    for rep in range(args.repeat):
        for s in list(active):
            r = run_once(ctx, s, table, dcs, rules)
            runs[s].append(r)
            secs = r.get("seconds")
            _log(f"    {s:12s} #{rep + 1}: {r['status']:10s} "
                 f"{'-' if secs is None else f'{secs:.3f}'} s  wall {r['wall']:.1f} s  "
                 f"rss {common.fmt_bytes(r['rss'])}  count {r.get('violations')}")  # fmt: skip
            if r["status"] != "ok":
                active.remove(s)
            elif args.once_over and rep == 0 and r["wall"] > args.once_over:
                notes[s] = f"one run: {r['wall']:.0f} s > --once-over {args.once_over:g} s"
                active.remove(s)
    recs = []
    for s in todo:
        summ = summarize(runs[s], notes.get(s))
        if runs[s][-1]["status"] in ("skipped", "projected"):
            summ["status"] = runs[s][-1]["status"]
            summ["rss"] = summ["wall"] = None
        recs.append({**base, "system": s, **summ})
    # counts: finishing systems of this cell and earlier-recorded ones of the same cell
    others = [have[s] for s in args.engines if s not in todo and have[s] is not None]
    check = check_counts(recs + others)
    if check == "MISMATCH":
        ctx.failed = True
        _log(f"    COUNT MISMATCH: {[(r['system'], r['violations']) for r in recs + others]}")
    for rec in recs:
        rec.update(check=check, run_id=ctx.run_id, command=ctx.command,
                   machine=ctx.machine, dcs_text=dcs,
                   rules=str(rules.relative_to(REPO)) if rules else None)  # fmt: skip
        common.append_jsonl(args.jsonl, rec)
        done[_key(rec)] = rec
        history.append(rec)


def run_breakdown(ctx: Ctx, dc_id: str, rows: int, table: Path, dc: str, done: dict) -> None:
    """facet's runtime split for one DC and size (paper Fig. 11), recorded once."""
    base = {"bench": BENCH, "workload": "breakdown", "dc": dc_id, "rows": rows,
            "system": "facet", "code": ctx.code, "params": ctx.params}  # fmt: skip
    if done.get(_key(base)) and not ctx.args.force:
        return
    cmd = [ctx.facet, "explain", str(table), "--dc", dc, "--analyze", "--format", "json"]
    r = common.run_process(cmd, timeout=ctx.timeout, rss_limit=ctx.rss_limit, cwd=REPO)
    rec = {**base, "status": r.status, "run_id": ctx.run_id, "machine": ctx.machine,
           "command": ctx.command}  # fmt: skip
    if r.status == "ok":
        doc = json.loads(r.stdout)
        d = doc["dcs"][0]
        ph = doc["phases"]
        stages = sum((s.get("actual") or {}).get("seconds") or 0 for s in d.get("stages", []))
        rec.update(
            load=ph["load_seconds"],
            encode=ph["encode_seconds"],
            statistics=d.get("statistics_seconds", 0.0),
            plan=d.get("planning_seconds", 0.0),
            execute=d["actual"]["seconds"],
            refine=stages,
            violations=d["actual"]["violations"],
        )
    out_dir = WORK / "out" / uuid.uuid4().hex[:8]
    out_dir.mkdir(parents=True)
    try:
        cmd = [ctx.facet, "detect", str(table), "--dc", dc, "--format", "json", "--exit-zero",
               "--quiet", "--output", "pairs", "--limit", "1000000", "--out",
               str(out_dir / "pairs.parquet")]  # fmt: skip
        p = common.run_process(cmd, timeout=ctx.timeout, rss_limit=ctx.rss_limit, cwd=REPO)
        if p.status == "ok":
            pd_ = json.loads(p.stdout)["dcs"][0]
            rec.update(pairs_seconds=pd_["seconds"], pairs_written=pd_.get("written"))
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    common.append_jsonl(ctx.args.jsonl, rec)
    done[_key(rec)] = rec


# --------------------------------------------------------------------------------------------
# the run


def cell_history(records: list[dict], params: dict) -> list[dict]:
    """The recorded cells (not facet's breakdowns) under ``params``: what the
    budget rules of :func:`run_cell` look back on when a run resumes."""
    return [r for r in records if r["params"] == params and r["workload"] != "breakdown"]


def run(ctx: Ctx) -> int:
    args = ctx.args
    ok, why = common.facet_works(ctx.facet, WORK)
    if not ok:
        raise SystemExit(f"facet does not work here: {why}")
    records = [
        r
        for r in common.read_jsonl(args.jsonl)
        if r.get("bench") == BENCH and still_measures(r["code"], r["system"])
    ]
    done = {_key(r): r for r in records}
    history = cell_history(records, ctx.params)
    for rows in args.rows:
        _log(f"== {rows:,} rows")
        for pdc in args.dcs:
            table = generated_table(pdc.table, rows, ctx.timeout)
            run_cell(ctx, pdc.table, pdc.id, rows, table, [pdc.text], None, done, history)
            if "facet" in args.engines and args.breakdown:
                run_breakdown(ctx, pdc.id, rows, table, pdc.text, done)
    if args.real:
        _log("== real data (every rules file of data/, at its own size)")
        for csv_rel, rules_rel in REAL:
            csv, rules = REPO / "data" / csv_rel, REPO / "data" / rules_rel
            table = real_table(csv, rules)
            import pyarrow.parquet as pq

            rows = pq.read_metadata(table).num_rows
            run_cell(ctx, "real", rules_rel, rows, table, rules_dcs(rules), rules, done, history)
    return 1 if ctx.failed else 0


# --------------------------------------------------------------------------------------------
# the report


def current_records(jsonl: Path, code: str | None = None) -> list[dict]:
    """The latest record per cell and system under the last record's parameters that still
    measures this checkout (:func:`still_measures`); with ``code``, those made at it."""
    records = [r for r in common.read_jsonl(jsonl) if r.get("bench") == BENCH]
    if not records:
        return []
    if code is None:
        params = records[-1]["params"]
        mine = [
            r for r in records if r["params"] == params and still_measures(r["code"], r["system"])
        ]
    else:
        params = next(r for r in reversed(records) if r["code"] == code)["params"]
        mine = [r for r in records if r["code"] == code and r["params"] == params]
    latest: dict[tuple, dict] = {}
    for r in mine:
        latest[_key(r)] = r
    return list(latest.values())


def machine_of(rec: dict) -> tuple:
    """What tells machines apart in a record: CPU model, cores, memory."""
    m = rec["machine"]
    return (m.get("cpu_model"), m.get("nproc"), m.get("mem_total_gib"))


def machine_letters(cells: list[dict]) -> dict[tuple, str]:
    """``A``, ``B``, ... per machine, in the order of their first run."""
    out: dict[tuple, str] = {}
    for r in sorted(cells, key=lambda r: r["machine"]["date"]):
        out.setdefault(machine_of(r), chr(ord("A") + len(out)))
    return out


def machine_lines(cells: list[dict]) -> list[str]:
    """The report's machine lines: one per machine the cells ran on, with its dates
    and sizes (a cell's systems always ran together on one machine, so its ratios
    compare like with like; cells on different machines do not compare)."""
    lines = []
    for mach, letter in machine_letters(cells).items():
        mine = [r for r in cells if machine_of(r) == mach]
        m = max(mine, key=lambda r: r["machine"]["date"])["machine"]
        dates = sorted({r["machine"]["date"][:10] for r in mine})
        sizes = sorted({r["rows"] for r in mine if r["workload"] != "real"})
        where = ", ".join(fmt_rows(n) for n in sizes) + (
            " + real data" if any(r["workload"] == "real" for r in mine) else ""
        )
        lines.append(
            f"* machine {letter}: {m['cpu_model']}, nproc {m['nproc']}, {m['mem_total_gib']} "
            f"GiB; Python {m['python']}; "
            + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)
            + f"; {len(mine)} cells ({where}), {' to '.join(dict.fromkeys([dates[0], dates[-1]]))}"
        )
    if len(lines) > 1:
        split = _split_cells(cells)
        if not split:
            lines.append(
                "* the cells ran on different machines (column `machine`): each cell's systems "
                "ran together on one, so ratios within a cell compare; times across machines "
                "do not"
            )
        else:
            lines.append(
                f"* the cells ran on different machines (column `machine`), and in {len(split)} "
                "DC/size cells facet and a system ran on different ones: those ratios compare "
                "machines as well as systems, are marked `(machines differ)` and count toward "
                "no target; re-run such a cell's systems together"
            )
    return lines


def _split_cells(cells: list[dict]) -> set[tuple[str, int]]:
    """The (DC, rows) cells whose systems' runs were on more than one machine."""
    seen: dict[tuple[str, int], set] = {}
    for r in cells:
        seen.setdefault((r["dc"], r["rows"]), set()).add(machine_of(r))
    return {k for k, v in seen.items() if len(v) > 1}


def _cell(rec: dict | None, timeout: float) -> str:
    if rec is None:
        return "-"
    st = rec["status"]
    if st == "ok":
        return common.fmt_seconds(rec["seconds"])
    if st == "timeout":
        return f"timeout (> {timeout:g} s)"
    if st in ("skipped", "projected"):
        return f"{st} ({rec.get('note', '')})"
    return st


def _dc_label(rec: dict) -> str:
    if rec["workload"] == "real":
        return f"{rec['dc']} ({len(rec['dcs_text'])} DCs)"
    return BY_ID[rec["dc"]].label if rec["dc"] in BY_ID else rec["dc"]


def command_lines(cells: list[dict]) -> list[str]:
    """The commands whose runs the report's cells are, in the order they first ran,
    each with how many cells it measured (a report gathers the latest cell of each
    DC, size and system, which may come from several invocations)."""
    counts: dict[str, int] = {}
    for r in sorted(cells, key=lambda r: r["machine"]["date"]):
        counts[r["command"]] = counts.get(r["command"], 0) + 1
    if len(counts) == 1:
        return [f"* command: `{next(iter(counts))}`"]
    return ["* commands (in the order they ran; the cells each measured):"] + [
        f"  * `{c}` ({k} cell{'' if k == 1 else 's'})" for c, k in counts.items()
    ]


def write_report(jsonl: Path, date: str | None = None) -> tuple[Path, Path] | None:
    recs = current_records(jsonl)
    if not recs:
        _log("no suite records")
        return None
    cells = [r for r in recs if r["workload"] != "breakdown"]
    breakdown = [r for r in recs if r["workload"] == "breakdown"]
    first = min(cells, key=lambda r: r["machine"]["date"])
    lastr = max(cells, key=lambda r: r["machine"]["date"])
    date = date or lastr["machine"]["date"][:10]
    m = lastr["machine"]
    params = lastr["params"]
    timeout = params["timeout"]
    order = {d.id: i for i, d in enumerate(PAPER_DCS)}
    real_order = {r: i for i, (_, r) in enumerate(REAL)}

    def sort_key(r: dict) -> tuple:
        if r["workload"] == "real":
            return (1, 0, real_order.get(r["dc"], 99), SYSTEMS.index(r["system"]))
        return (0, r["rows"], order.get(r["dc"], 99), SYSTEMS.index(r["system"]))

    cells.sort(key=sort_key)
    facet_of = {(r["dc"], r["rows"]): r for r in cells if r["system"] == "facet"}
    lines = [
        f"# facet against the systems a user would pick instead ({date})",
        "",
        "Written by `bench/suite.py` from `suite.jsonl` (see its docstring and bench/README.md).",
        "",
        *command_lines(cells),
        f"* code: {', '.join(f'`{c}`' for c in sorted({r['code'] for r in recs}))} (each "
        "cell's runs name the last commit that changed the measured code; a cell is re-run "
        f"only when what it measures changed since); runs from {first['machine']['date']} to "
        f"{m['date']}",
        *machine_lines(cells),
        f"* per cell: median of {params['repeat']} runs, each its own process; timeout "
        f"{timeout:g} s; a run longer than {params['once_over']:g} s is not repeated; "
        f"projection of timeouts {'on' if params['project'] else 'off'}",
        "",
        "Seconds: the query (facet: the DC's time after the table is in Arrow, JIT warm-up "
        "excluded; the peers: the count on a loaded table); wall: the whole process (start, "
        "reading the Parquet file, the JVM for Spark). Peak MiB: the process group's peak RSS. "
        "Ratio: the system's median / facet's median in the same run-set (> 1: facet faster). "
        "Counts: ordered pairs of distinct rows (rows for a single-tuple DC); for a rules file, "
        "the total over its DCs, every DC compared system by system.",
        "",
        "![chart](" + f"{date}.png)",
        "",
        "## Every cell",
        "",
    ]
    letters = machine_letters(cells)
    # counts compared across every system shown for a DC and size, whichever run
    # measured each (a cell re-run alone was "unchecked" when it ran)
    shown: dict[tuple[str, int], list[dict]] = {}
    for r in cells:
        shown.setdefault((r["dc"], r["rows"]), []).append(r)
    agree = {key: check_counts(group) for key, group in shown.items()}
    rows_md = []
    for r in cells:
        f = facet_of.get((r["dc"], r["rows"]))
        ratio = "-"
        if r["status"] == "ok" and f and f["status"] == "ok" and f["seconds"]:
            ratio = f"{r['seconds'] / f['seconds']:.1f}x"
        elif r["status"] in KILLED + ("projected",) and f and f["status"] == "ok":
            ratio = f"> {timeout / f['seconds']:.0f}x"
        if ratio != "-" and f is not None and machine_of(f) != machine_of(r):
            ratio += " (machines differ)"
        count = "-"
        if r.get("violations") is not None and r["status"] in ("ok", "partial"):
            count = f"{sum(v for v in r['violations'] if v is not None):,}"
            if r["status"] == "partial":
                count += " (partial)"
        rows_md.append([
            _dc_label(r), f"{r['rows']:,}", letters[machine_of(r)], r["system"],
            _cell(r, timeout),
            common.fmt_seconds(r["wall"]) if r["status"] == "ok" else "-",
            f"{r['rss'] / 2**20:.0f}" if r.get("rss") else "-", count, ratio,
            "MISMATCH" if r["check"] == "MISMATCH" else agree[(r["dc"], r["rows"])],
        ])  # fmt: skip
    lines.append(common.markdown_table(
        ["DC", "rows", "machine", "system", "median s", "wall s", "peak MiB", "count",
         "ratio to facet", "counts agree"], rows_md))  # fmt: skip
    # item 4: facet vs DuckDB on every generated DC and size
    lines += ["", "## facet vs DuckDB's query time", ""]
    lines.append(
        "Target: >= 10x on every DC with an inequality or non-equality, >= 1.5x on "
        "equality-only DCs, at every size."
    )
    lines.append("")
    t_rows = []
    all_met = True
    for r in cells:
        if r["system"] != "duckdb" or r["workload"] == "real":
            continue
        f = facet_of.get((r["dc"], r["rows"]))
        if not f or f["status"] != "ok":
            continue
        target = 1.5 if BY_ID[r["dc"]].equality_only else 10.0
        if r["status"] == "ok":
            ratio = r["seconds"] / f["seconds"]
            txt = f"{ratio:.1f}x"
        elif r["status"] in KILLED + ("projected",):
            ratio = timeout / f["seconds"]
            txt = f"> {ratio:.0f}x"
        else:
            continue
        met = ratio >= target
        verdict = "yes" if met else "NO"
        if machine_of(f) != machine_of(r):  # no verdict across machines
            met, verdict = (
                False,
                f"not compared (facet on {letters[machine_of(f)]}, DuckDB on {letters[machine_of(r)]})",
            )
        all_met &= met
        t_rows.append([_dc_label(r), f"{r['rows']:,}", common.fmt_seconds(f["seconds"]),
                       _cell(r, timeout), txt, f">= {target:g}x", verdict])  # fmt: skip
    lines.append(common.markdown_table(
        ["DC", "rows", "facet s", "DuckDB s", "DuckDB / facet", "target", "met"], t_rows))  # fmt: skip
    lines += ["", f"Every DC meets its target: **{'yes' if all_met else 'NO'}**."]
    if breakdown:
        lines += ["", "## facet's runtime breakdown (paper Fig. 11)", ""]
        lines.append(
            "From `facet explain --analyze --format json` (one run): load (Parquet into Arrow), "
            "type + encode, statistics, plan, execute (the count); and `detect --output pairs "
            "--limit 1000000 --out X.parquet` (its DC seconds: execute + the first 1M pairs "
            "written)."
        )
        lines.append("")
        b_rows = []
        for b in sorted(breakdown, key=lambda b: (b["rows"], order.get(b["dc"], 99))):
            if b["status"] != "ok":
                b_rows.append([BY_ID[b["dc"]].label, f"{b['rows']:,}", b["status"]] + ["-"] * 6)
                continue
            b_rows.append([BY_ID[b["dc"]].label, f"{b['rows']:,}"] + [
                common.fmt_seconds(b.get(k)) for k in
                ("load", "encode", "statistics", "plan", "execute", "pairs_seconds")
            ])  # fmt: skip
        lines.append(common.markdown_table(
            ["DC", "rows", "load", "type + encode", "statistics", "plan", "execute",
             "pairs (1M) to Parquet"], b_rows))  # fmt: skip
    lines += ["", "## DCs", ""]
    lines.append(common.markdown_table(
        ["id", "DC", "table", "text"],
        [[d.id, d.label, d.table, f"`{d.text}`"] for d in PAPER_DCS]))  # fmt: skip
    methods = {}
    for r in cells:
        if r["methods"] and r["workload"] != "real":
            methods.setdefault(r["system"], set()).update(r["methods"][:1])
    notes = [r for r in cells if r.get("note") or r.get("errors")]
    if notes:
        lines += ["", "## Notes", ""]
        for r in notes:
            why = r.get("note") or ""
            err = (r.get("errors") or [{}])[0].get("error")
            lines.append(f"* {_dc_label(r)} @ {r['rows']:,}, {r['system']}: {r['status']}"
                         f"{': ' + why if why else ''}{' -- ' + str(err)[:200] if err else ''}")  # fmt: skip
    md = RESULTS / f"{date}.md"
    md.write_text("\n".join(lines) + "\n")
    png = RESULTS / f"{date}.png"
    chart(cells, png, timeout)
    _log(f"wrote {md} and {png}")
    return md, png


def chart(cells: list[dict], png: Path, timeout: float) -> None:
    """Fig. 4 style: log time per DC per system, one panel per size (+ the real data)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({r["rows"] for r in cells if r["workload"] != "real"})
    groups = [(f"{fmt_rows(n)} rows", [r for r in cells if r["workload"] != "real" and
                                       r["rows"] == n]) for n in panels]  # fmt: skip
    real = [r for r in cells if r["workload"] == "real"]
    if real:
        groups.append(("real data (rules files, own size)", real))
    systems = [s for s in SYSTEMS if any(r["system"] == s for r in cells)]
    colors = dict(zip(SYSTEMS, plt.get_cmap("tab10").colors, strict=False))
    fig, axes = plt.subplots(len(groups), 1, figsize=(14, 4.2 * len(groups)), squeeze=False)
    for ax, (title, recs) in zip(axes[:, 0], groups, strict=True):
        dcs = list(dict.fromkeys(r["dc"] for r in recs))
        fastest = min((r["seconds"] for r in recs if r["status"] == "ok" and r["seconds"]),
                      default=1e-3)  # fmt: skip
        width = 0.8 / max(len(systems), 1)
        for j, s in enumerate(systems):
            for i, dc in enumerate(dcs):
                r = next((x for x in recs if x["dc"] == dc and x["system"] == s), None)
                if r is None:
                    continue
                x = i - 0.4 + width * (j + 0.5)
                if r["status"] == "ok":
                    ax.bar(x, r["seconds"], width, color=colors[s])
                elif r["status"] in KILLED + ("projected", "skipped"):
                    ax.bar(x, timeout, width, color=colors[s], alpha=0.35, hatch="//")
                    ax.text(x, timeout * 1.1, "T" if r["status"] != "oom" else "M",
                            ha="center", fontsize=7)  # fmt: skip
                else:
                    mark = {"unsupported": "U", "partial": "P"}.get(r["status"], "E")
                    ax.text(x, 1.2 * min(1e-3, fastest / 3), mark, ha="center", fontsize=7)
        ax.set_yscale("log")
        ax.set_ylim(min(1e-3, fastest / 3), timeout * 3)
        ax.set_xticks(range(len(dcs)))
        labels = [BY_ID[d].label if d in BY_ID else Path(d).parent.name + "/" + Path(d).stem
                  for d in dcs]  # fmt: skip
        ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("seconds (log)")
        ax.set_title(title)
        ax.axhline(timeout, color="grey", lw=0.6, ls="--")
        ax.grid(axis="y", which="major", alpha=0.3)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[s]) for s in systems]
    fig.legend(handles, systems, loc="upper center", ncol=len(systems), frameon=False)
    fig.text(0.01, 0.005, f"hatched T: timeout (> {timeout:g} s), projected or skipped after "
             "one; M: out of memory; U: the system cannot express the DC; P: it cannot "
             "express some DCs of the file (no total time); E: error",
             fontsize=8)  # fmt: skip
    fig.tight_layout(rect=(0, 0.02, 1, 0.96))
    fig.savefig(png, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=parse_rows, default=parse_rows("100k,1m"))
    ap.add_argument("--engines", default=",".join(SYSTEMS), help="systems, comma-separated")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--rss-limit-gib", type=float, default=None)
    ap.add_argument("--dcs", default=None, help="paper DC ids (phi4,...); default all")
    ap.add_argument("--no-real", dest="real", action="store_false", help="skip data/ rules files")
    ap.add_argument("--no-breakdown", dest="breakdown", action="store_false")
    ap.add_argument(
        "--once-over",
        type=float,
        default=150.0,
        help="a run over this many seconds is not repeated (0: always repeat)",
    )
    ap.add_argument(
        "--no-project",
        action="store_true",
        help="run every size even where linear growth predicts a timeout",
    )
    ap.add_argument("--master", default="local[2]", help="Spark master of the Spark systems")
    ap.add_argument("--force", action="store_true", help="re-run recorded cells")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--date", default=None, help="report name (default: the last run's date)")
    ap.add_argument("--jsonl", type=Path, default=JSONL)
    args = ap.parse_args(argv)
    if not args.report_only:
        args.engines = [s.strip() for s in args.engines.split(",") if s.strip()]
        bad = [s for s in args.engines if s not in SYSTEMS]
        if bad:
            ap.error(f"unknown engines {bad}; choose from {', '.join(SYSTEMS)}")
        ids = args.dcs.split(",") if args.dcs else [d.id for d in PAPER_DCS]
        unknown = [i for i in ids if i not in BY_ID]
        if unknown:
            ap.error(f"unknown DCs {unknown}; choose from {', '.join(BY_ID)}")
        args.dcs = [BY_ID[i] for i in ids]
        rc = run(Ctx(args))
    else:
        rc = 0
    write_report(args.jsonl, args.date)
    return rc


if __name__ == "__main__":
    sys.exit(main())
