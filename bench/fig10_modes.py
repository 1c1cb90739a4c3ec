"""Paper Fig. 10 on this implementation: the many-DC execution modes.

    python bench/fig10_modes.py [--repeats 3] [--sizes 0010k,0040k] [--rules dc_rules,dc_rules_relaxed]
        [--no-hospital] [--outputs count,pairs] [--modes sequential,parallel,cost-trie,freq-trie]
        [--timeout 600] [--quick]

Workloads: the Tax samples ``tax_dirty_<size>.csv`` (``data/tax/``)
with ``data/tax/dc_rules.txt`` (20 DCs sharing ``phone = phone and zip = zip`` prefixes) and
``data/tax/dc_rules_relaxed.txt`` (7 long DCs with many violations), and
``data/holoclean-hospital/hospital.csv`` with its 15 HoloClean DCs. ``--sizes`` takes any of
0010k, 0020k, 0030k, 0040k (default: the smallest and the largest, to keep the default run
near 15 minutes on 2 busy cores).

Every run is its own process (``bench/common.py:run_process``: wall-clock and RSS watchdog,
peak RSS from GNU time): ``facet detect FILE --rules R --mode M --format json --exit-zero``
and, for pairs, ``--output pairs --out X.parquet``. Per run: **total** = the sum of the DCs'
``seconds`` from the JSON (encoding share, planning, execution; a shared trie stage is split
evenly among its DCs; under ``parallel`` each DC's seconds run on its own thread, so the sum
counts overlapping time -- compare ``parallel`` by wall time), the process **wall** time
(interpreter start, CSV load and numba cache load included) and peak RSS. One untimed warm-up
run per workload first; then ``--repeats`` rounds, each running every output x mode once
(mode order rotated per round); medians.

Checks: per workload and output, every mode must report the same violations per DC; a pairs
run's file must hold exactly that many rows per DC, and the same set of pairs in every mode
(order-independent checksum of ``(dc, t1, t2)``). Exit 1 on a mismatch.

Results: ``bench/results/fig10_modes.jsonl`` (one record per workload x output x mode) and
``bench/results/fig10_modes.md`` (rewritten from the latest run).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import uuid
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

BENCH = "fig10_modes"
REPO = common.REPO
RESULTS = REPO / "bench" / "results"
WORK = REPO / "bench" / "work" / "fig10"
MODES = ("sequential", "parallel", "cost-trie", "freq-trie")
SIZES = ("0010k", "0020k", "0030k", "0040k")


FACET: list[str] = []


def facet_exe() -> list[str]:
    if FACET:
        return FACET
    exe = Path(sys.executable).parent / "facet"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "facet"]


def tax_file(size: str) -> Path:
    for d in (REPO / "data" / "tax", REPO.parent / "shared" / "data" / "tax"):
        p = d / f"tax_dirty_{size}.csv"
        if p.exists():
            return p
    raise SystemExit(f"tax_dirty_{size}.csv not found in data/tax")


def workloads(args) -> list[tuple[str, Path, Path]]:
    out = []
    for size in args.sizes:
        for rules in args.rules:
            out.append(
                (f"tax {size} {rules}", tax_file(size), REPO / "data" / "tax" / f"{rules}.txt")
            )
    if args.hospital:
        d = REPO / "data" / "holoclean-hospital"
        out.append(("hospital", d / "hospital.csv", d / "hospital_constraints.txt"))
    return out


def pair_stats(path: Path, n_dcs: int) -> tuple[list[int], list[str]]:
    """Rows per DC and an order-independent checksum of each DC's (t1, t2) pairs."""
    t = pq.read_table(path, columns=["dc", "t1", "t2"])
    dc = t.column("dc").to_numpy().astype(np.int64)
    t1 = t.column("t1").to_numpy(zero_copy_only=False).astype(np.uint64)
    t2c = t.column("t2")
    t2 = (
        np.zeros(len(dc), np.uint64)
        if t2c.null_count == len(dc) and len(dc)
        else t2c.fill_null(0).to_numpy().astype(np.uint64)
    )
    counts = np.bincount(dc, minlength=n_dcs).tolist()
    with np.errstate(over="ignore"):
        h = t1 * np.uint64(0x9E3779B97F4A7C15) ^ (t2 + np.uint64(0x632BE59BD9B4E019))
        h ^= h >> np.uint64(31)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(29)
    sums = []
    for i in range(n_dcs):
        with np.errstate(over="ignore"):
            sums.append(f"{int(np.sum(h[dc == i], dtype=np.uint64)):016x}")
    return counts, sums


def run_once(args, data: Path, rules: Path, mode: str, output: str) -> dict:
    cmd = [*facet_exe(), "detect", str(data), "--rules", str(rules), "--mode", mode]
    cmd += ["--format", "json", "--exit-zero"]
    out_path = None
    if output == "pairs":
        WORK.mkdir(parents=True, exist_ok=True)
        out_path = WORK / f"pairs_{uuid.uuid4().hex[:8]}.parquet"
        cmd += ["--output", "pairs", "--out", str(out_path)]
    r = common.run_process(cmd, timeout=args.timeout, cwd=REPO)
    res = {"status": r.status, "wall": r.wall_seconds, "rss": r.peak_rss_bytes, "cmd": cmd}
    res["load1"] = [round(r.extra["load1_start"], 2), round(r.extra["load1_end"], 2)]
    if r.status != "ok":
        res["stderr"] = r.stderr[-2000:]
        return res
    doc = json.loads(r.stdout)
    dcs = doc["dcs"]
    res["violations"] = [d["violations"] for d in dcs]
    res["dc_seconds"] = [d["seconds"] for d in dcs]
    res["total"] = sum(d["seconds"] for d in dcs)
    res["load_seconds"] = doc.get("load_seconds")
    res["warmup_seconds"] = doc.get("warmup_seconds")
    if out_path is not None:
        res["written"] = [d.get("written") for d in dcs]
        res["pair_rows"], res["pair_sums"] = pair_stats(out_path, len(dcs))
        res["pair_file_bytes"] = out_path.stat().st_size
        out_path.unlink()
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", default="0010k,0040k", help=f"any of {','.join(SIZES)}")
    ap.add_argument("--rules", default="dc_rules,dc_rules_relaxed")
    ap.add_argument("--no-hospital", dest="hospital", action="store_false")
    ap.add_argument("--outputs", default="count,pairs")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument(
        "--snapshot",
        action="store_true",
        help="measure a private copy of the committed HEAD (bench/work/snapshot-SHA/, made by "
        "common.snapshot_facet), not the working tree others may be editing",
    )
    ap.add_argument("--quick", action="store_true", help="smoke run: 10k rows, 1 repeat")
    ap.add_argument("--results", default=str(RESULTS / f"{BENCH}.jsonl"))
    ap.add_argument("--md", default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.repeats = "0010k", 1
    args.sizes = [s for s in args.sizes.split(",") if s]
    args.rules = [s for s in args.rules.split(",") if s]
    outputs = [s for s in args.outputs.split(",") if s]
    modes = [s for s in args.modes.split(",") if s]
    md = Path(args.md) if args.md else Path(args.results).with_suffix(".md")
    run_id = uuid.uuid4().hex[:12]
    info = {
        **common.machine_info(("numpy", "numba", "pyarrow")),
        "command": common.command_line(),
        "repeats": args.repeats,
        "facet_code": "working tree",
    }
    if args.snapshot:
        launcher, sha = common.snapshot_facet(REPO / "bench" / "work", "HEAD")
        FACET[:] = [sys.executable, launcher]
        info.update(git_commit=sha, git_dirty=False, facet_code="snapshot of HEAD")
    bad = 0
    for name, data, rules in workloads(args):
        warm = run_once(args, data, rules, "sequential", "count")
        if warm["status"] != "ok":
            print(f"{name}: warm-up failed: {warm.get('stderr', '')[-500:]}", flush=True)
            bad += 1
            continue
        runs: dict[tuple[str, str], list[dict]] = {(o, m): [] for o in outputs for m in modes}
        for rep in range(args.repeats):
            order = modes[rep % len(modes) :] + modes[: rep % len(modes)]
            for output in outputs:
                for mode in order:
                    r = run_once(args, data, rules, mode, output)
                    runs[(output, mode)].append(r)
                    print(
                        f"{name:<28} {output:<5} {mode:<10} {r['status']} "
                        f"total {r.get('total', float('nan')):.3f}s wall {r['wall']:.2f}s",
                        flush=True,
                    )
        ref = warm["violations"]
        for output in outputs:
            sums_ref = None
            for mode in modes:
                rs = runs[(output, mode)]
                ok_runs = [r for r in rs if r["status"] == "ok"]
                problems = []
                if len(ok_runs) != len(rs):
                    problems.append("failed runs: " + ", ".join(r["status"] for r in rs))
                for r in ok_runs:
                    if r["violations"] != ref:
                        problems.append("violations differ from sequential count")
                    if output == "pairs":
                        if r["pair_rows"] != ref:
                            problems.append("pair-file rows per DC != violations")
                        if sums_ref is None:
                            sums_ref = r["pair_sums"]
                        elif r["pair_sums"] != sums_ref:
                            problems.append("pair sets differ between modes")
                problems = sorted(set(problems))
                bad += bool(problems)
                rec = {
                    "bench": BENCH,
                    "run_id": run_id,
                    "workload": name,
                    "data": os.path.relpath(data, REPO),
                    "rules": os.path.relpath(rules, REPO),
                    "dcs": len(ref),
                    "output": output,
                    "mode": mode,
                    "total_seconds": common.median([r.get("total") for r in ok_runs]),
                    "wall_seconds": common.median([r["wall"] for r in ok_runs]),
                    "peak_rss_bytes": common.median([r["rss"] for r in ok_runs]),
                    "total_samples": [r.get("total") for r in rs],
                    "wall_samples": [r["wall"] for r in rs],
                    "rss_samples": [r["rss"] for r in rs],
                    "status": [r["status"] for r in rs],
                    "violations": ref,
                    "total_violations": sum(ref),
                    "pair_rows": ok_runs[0].get("pair_rows") if ok_runs else None,
                    "pair_file_bytes": ok_runs[0].get("pair_file_bytes") if ok_runs else None,
                    "check": "ok" if not problems else "MISMATCH: " + "; ".join(problems),
                    "load_avg": [x for r in rs for x in r["load1"]],
                    "example_cmd": shlex.join(rs[0]["cmd"]) if rs else None,
                    **info,
                }
                common.append_jsonl(args.results, rec)
                if problems:
                    print(f"MISMATCH {name} {output} {mode}: {problems}", flush=True)
    report(common.read_jsonl(args.results), md)
    print(f"wrote {args.results} and {md}")
    return 1 if bad else 0


def report(records: list[dict], path: Path) -> None:
    if not records:
        return
    recs = common.latest_run(records)
    info = recs[0]
    loads = [x for r in recs for x in r["load_avg"]]
    names = list(dict.fromkeys(r["workload"] for r in recs))
    outputs = list(dict.fromkeys(r["output"] for r in recs))
    modes = list(dict.fromkeys(r["mode"] for r in recs))
    by = {(r["workload"], r["output"], r["mode"]): r for r in recs}
    lines = [
        "# Fig. 10 on facet: many-DC execution modes",
        "",
        f"Command: `{info['command']}`  ",
        f"Date {info['date']}, git {str(info['git_commit'])[:10]}"
        f"{' (dirty)' if info['git_dirty'] else ''} ({info.get('facet_code', 'working tree')}), "
        f"{info['nproc']} cores "
        f"({info['cpu_model']}), {info['mem_total_gib']} GiB, load average (1 min) around the "
        f"runs {min(loads):.2f}-{max(loads):.2f}.  ",
        f"Each run its own process (e.g. `{info['example_cmd']}`); medians of "
        f"{info['repeats']} rounds. **total** = sum of the DCs' `seconds` (for `parallel` a sum "
        "of per-thread times that overlap: compare it by wall); **wall** = process wall time, "
        "interpreter start, CSV load and numba cache load included.",
        "",
    ]
    for out in outputs:
        lines += [f"## output {out}", ""]
        rows = []
        for n in names:
            r0 = by.get((n, out, "sequential")) or by[(n, out, modes[0])]
            seq_t, seq_w = r0["total_seconds"], r0["wall_seconds"]
            row = [n, r0["dcs"], f"{r0['total_violations']:.4g}"]
            for m in modes:
                r = by.get((n, out, m))
                if r is None or r["total_seconds"] is None:
                    row.append("-")
                    continue
                row.append(
                    f"{r['total_seconds']:.3f} ({r['total_seconds'] / seq_t:.2f}) / "
                    f"{r['wall_seconds']:.2f} ({r['wall_seconds'] / seq_w:.2f})"
                )
            checks = {by[(n, out, m)]["check"] for m in modes if (n, out, m) in by}
            row.append("ok" if checks == {"ok"} else "; ".join(sorted(checks)))
            rows.append(row)
        lines.append(
            common.markdown_table(
                [
                    "workload",
                    "DCs",
                    "violations",
                    *[f"{m}: total s / wall s" for m in modes],
                    "check",
                ],
                rows,
            )
        )
        lines += ["", "(in parentheses: ratio to sequential)", ""]
    lines += ["## What this shows", "", what_it_shows(recs, names, outputs, modes), ""]
    path.write_text("\n".join(lines))


def what_it_shows(recs, names, outputs, modes) -> str:
    by = {(r["workload"], r["output"], r["mode"]): r for r in recs}
    parts = []
    ok = all(r["check"] == "ok" for r in recs)
    parts.append(
        "Every mode reports the same violations per DC, and the pair files hold the same pairs "
        "(row counts and checksums agree)."
        if ok
        else "**Modes disagree** -- see the check column."
    )
    outside = common.median(
        [r["wall_seconds"] - r["total_seconds"] for r in recs if r["mode"] == "sequential"]
    )
    for out in outputs:
        best_t, best_w = [], []
        for n in names:
            seq = by.get((n, out, "sequential"))
            if seq is None:
                continue
            for m in modes:
                r = by.get((n, out, m))
                if m == "sequential" or r is None or r["total_seconds"] is None:
                    continue
                if m != "parallel":
                    best_t.append((r["total_seconds"] / seq["total_seconds"], m, n))
                best_w.append((r["wall_seconds"] / seq["wall_seconds"], m, n))
        if best_t:
            lo, hi = min(best_t), max(best_t)
            parts.append(
                f"{out}: the tries' summed DC seconds range from {lo[0]:.2f}x sequential "
                f"({lo[1]}, {lo[2]}) to {hi[0]:.2f}x ({hi[1]}, {hi[2]})."
            )
        if best_w:
            lo, hi = min(best_w), max(best_w)
            parts.append(
                f"{out}, wall time: from {lo[0]:.2f}x sequential ({lo[1]}, {lo[2]}) to "
                f"{hi[0]:.2f}x ({hi[1]}, {hi[2]}); the {outside:.1f} s (median) of each "
                "process outside the DCs' seconds (interpreter, imports, CSV load, numba cache) "
                "dilute every wall ratio toward 1."
            )
    return " ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
