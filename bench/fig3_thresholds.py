"""Paper Fig. 3 on this implementation: where HSM, BHSM and IEJoin cross over.

    python bench/fig3_thresholds.py [--rows 1000000] [--repeats 3] [--a-exps 4:20]
        [--b-exps 2:18] [--bins 100,500,1000,sqrt] [--followup-budget 8000000] [--quick]

In-process, kernel-level timings (``time.perf_counter``) on warmed numba kernels, through
``LocalEngine.refine`` -- the refinement the pairs / blocks path runs (counting never refines
inequalities). One thread (``--threads``) unless asked, so algorithms compare, not cores.

(a) **One inequality** ``t.a > t'.a`` on ``--rows`` rows, ``a`` uniform over ``2^k`` values,
    ``k`` in ``--a-exps``. Per algorithm (HSM; BHSM with each of ``--bins``; ``sqrt`` means
    ``round(sqrt(distinct a))`` bins): the refinement of the reflexive pair ``(all, all)``, its
    output (groups, tids = sum |L| + |R|), and the cost of **one following refinement** over
    that output -- the equality ``t.b = t'.b`` on a 4-valued ``b``, batch by batch as the
    pairs path runs it (``Groups.split(config.batch_work)``). HSM's output ``(L_v, R_{>v})``
    is O(1) per group here (a suffix of one sorted copy), so its refinement is cheap; what it
    costs is downstream: the following stage reads sum |R_v| ~ d n / 2 tids. BHSM's bins
    keep that near ``bins n / 2 + d n / (2 bins)``.
(b) **Two inequalities** ``t.a > t'.a and t.b < t'.b``, generated as in the paper: ``a``
    uniform over ``2^k`` values, ``b`` in ``{2a, 2a+1}`` (so the DC holds and ``|b| = 2|a|``),
    then 1% of the rows get ``b`` raised by 1 .. ceil(1% of |b|) (violations). IEJoin (one
    stage) against the chains HSM+HSM and BHSM+BHSM (stage 1 on ``a``, stage 2 on ``b`` over
    stage 1's output): seconds to the final groups, their number, tids and pairs.

Following stages that would read more than ``--followup-budget`` tids are timed on an evenly
spread sample of the batches and extrapolated by tids (``followup_exact: false`` in the
record; per-tid cost is near constant: checked against a full run in bench/README.md); their
output sizes are then extrapolated the same way. ``--followup-budget 0`` always runs in full.

Results: ``bench/results/fig3_thresholds.jsonl`` (one record per cell, all samples, machine
info, load average) and ``bench/results/fig3_thresholds.md`` (rewritten from the latest run).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from facet.api import open_session  # noqa: E402
from facet.engine.groups import Groups  # noqa: E402
from facet.engine.local import LocalEngine  # noqa: E402
from facet.engine.statistics import TableStatistics  # noqa: E402
from facet.planner.algorithms import choose_inequalities  # noqa: E402
from facet.planner.config import DEFAULT, Config  # noqa: E402
from facet.planner.plan import Stage  # noqa: E402

BENCH = "fig3_thresholds"
#: part (b) chains: (stage 1 on a, stage 2 on b); cdq+hsm is what the planner picks when
#: the estimated output is too big for IEJoin (``iejoin_max_pairs_per_row``)
CHAINS = (("hsm", "hsm"), ("bhsm", "bhsm"), ("cdq", "hsm"))
RESULTS = common.REPO / "bench" / "results"


def exps(spec: str) -> list[int]:
    """``"4:20"`` (every exponent), ``"4:20:2"`` (step) or ``"4,8,12"``."""
    if ":" in spec:
        parts = [int(x) for x in spec.split(":")]
        lo, hi = parts[0], parts[1]
        step = parts[2] if len(parts) > 2 else 1
        return list(range(lo, hi + 1, step))
    return [int(x) for x in spec.split(",") if x]


def sizes(g: Groups) -> tuple[int, int, int]:
    """(groups, tids = sum |L| + |R|, candidate pairs = sum |L| |R|)."""
    if len(g) == 0:
        return 0, 0, 0
    ls, rs = g.left_sizes(), g.right_sizes()
    return len(g), int(ls.sum() + rs.sum()), int((ls * rs).sum())


def follow(engine: LocalEngine, groups: Groups, stage: Stage, budget: int) -> dict:
    """Run ``stage`` over ``groups`` batch by batch (as the pairs path does); past
    ``budget`` tids only an evenly spread sample of batches, extrapolated by tids."""
    chunks = list(groups.split(engine.config.batch_work))
    work = np.array([int(c.left_sizes().sum() + c.right_sizes().sum()) for c in chunks])
    total = int(work.sum())
    if not chunks:
        return {"seconds": 0.0, "exact": True, "in_tids": 0, "groups": 0, "tids": 0, "pairs": 0}
    if budget <= 0 or total <= budget:
        pick = np.arange(len(chunks))
    else:
        m = max(1, math.ceil(budget / (total / len(chunks))))
        pick = np.unique(np.round(np.linspace(0, len(chunks) - 1, m)).astype(int))
    done = int(work[pick].sum())
    g = t = p = 0
    t0 = time.perf_counter()
    for i in pick:
        out = engine.refine(chunks[i], stage)
        a, b, c = sizes(out)
        g, t, p = g + a, t + b, p + c
        del out
    sec = time.perf_counter() - t0
    scale = total / done if done else 1.0
    return {
        "seconds": sec * scale,
        "exact": bool(len(pick) == len(chunks)),
        "in_tids": total,
        "sampled_tids": done,
        "groups": round(g * scale),
        "tids": round(t * scale),
        "pairs": round(p * scale),
    }


def load_now() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --------------------------------------------------------------------------------------------
# (a) one inequality


def bhsm_label(bins: int | str) -> str:
    """``bhsm-<bins>``; ``bhsm-sqrt`` for square-root bins (``Config.bhsm_bins <= 0``)."""
    return "bhsm-sqrt" if bins == "sqrt" or int(bins) <= 0 else f"bhsm-{bins}"


def part_a(args, info: dict, run_id: str) -> list[dict]:
    rng = np.random.default_rng(args.seed)
    n = args.rows
    recs = []
    for k in args.a_exps:
        d = 1 << k
        table = pa.table({"a": rng.integers(0, d, n), "b": rng.integers(0, 4, n)})
        s = open_session(table, dcs=["not(t.a > t'.a and t.b = t'.b)"]).session
        nd = s.normal[0]
        p_ineq = next(p for p in nd.preds if p.op == ">")
        p_eq = next(p for p in nd.preds if p.op == "=")
        distinct = int(s.engine.enc.domain["a"])
        algs = [("hsm", None)]
        for b in args.bins:
            nb = max(2, round(math.sqrt(distinct))) if b == "sqrt" else int(b)
            algs.append(("bhsm", (b, nb)))
        cells = {}
        for alg, bins in algs:
            cfg = Config(threads=args.threads, bhsm_bins=bins[1] if bins else DEFAULT.bhsm_bins)
            eng = LocalEngine(s.engine.enc, cfg)
            init = eng.initial_groups(nd)
            cells[(alg, bins)] = (eng, init, Stage((p_ineq,), alg), Stage((p_eq,), "equality"))
            eng.refine(init, Stage((p_ineq,), alg))  # warm
        samples = {key: {"refine": [], "follow": [], "fexact": []} for key in cells}
        outs = {}
        for _ in range(args.repeats):
            for key, (eng, init, st1, st2) in cells.items():  # interleaved
                t0 = time.perf_counter()
                out = eng.refine(init, st1)
                samples[key]["refine"].append(time.perf_counter() - t0)
                f = follow(eng, out, st2, args.followup_budget)
                samples[key]["follow"].append(f["seconds"])
                samples[key]["fexact"].append(f["exact"])
                outs[key] = (sizes(out), f)
                del out
        # what the planner picks for this inequality as a DC's first stage
        est = TableStatistics(s.engine.ctx, exact=False).cardinality(("a",))
        planned = [
            c.algorithm for c in choose_inequalities([p_ineq], [est], n, DEFAULT, more_after=True)
        ]
        for key in cells:
            alg, bins = key
            (g, tids, pairs), f = outs[key]
            sm = samples[key]
            rec = {
                "bench": BENCH,
                "part": "a",
                "run_id": run_id,
                "rows": n,
                "exp": k,
                "cardinality": d,
                "distinct": distinct,
                "algorithm": alg if bins is None else bhsm_label(bins[0]),
                "bins": None if bins is None else bins[1],
                "threads": args.threads,
                "refine_seconds": common.median(sm["refine"]),
                "follow_seconds": common.median(sm["follow"]),
                "total_seconds": common.median(
                    [a + b for a, b in zip(sm["refine"], sm["follow"], strict=True)]
                ),
                "refine_samples": sm["refine"],
                "follow_samples": sm["follow"],
                "followup_exact": all(sm["fexact"]),
                "out_groups": g,
                "out_tids": tids,
                "out_pairs": pairs,
                "follow_out_groups": f["groups"],
                "follow_out_tids": f["tids"],
                "planner_choice": planned,
                "load_avg": load_now(),
                **info,
            }
            recs.append(rec)
            common.append_jsonl(args.results, rec)
            print(
                f"(a) 2^{k:<2} {rec['algorithm']:<10} refine {rec['refine_seconds']:.3f}s "
                f"follow {rec['follow_seconds']:.2f}s{'' if rec['followup_exact'] else '~'} "
                f"groups {g} tids {tids:.3g}",
                flush=True,
            )
        del cells, s, table
    return recs


# --------------------------------------------------------------------------------------------
# (b) a pair of inequalities


def gen_pair(rng, n: int, d: int) -> pa.Table:
    a = rng.integers(0, d, n)
    b = 2 * a + rng.integers(0, 2, n)
    k = n // 100
    idx = rng.choice(n, k, replace=False)
    raise_max = max(2, math.ceil(0.01 * 2 * d))
    b[idx] += rng.integers(1, raise_max + 1, k)
    return pa.table({"a": a, "b": b})


def part_b(args, info: dict, run_id: str) -> list[dict]:
    rng = np.random.default_rng(args.seed + 1)
    n = args.rows
    recs = []
    for k in args.b_exps:
        d = 1 << k
        table = gen_pair(rng, n, d)
        s = open_session(table, dcs=["not(t.a > t'.a and t.b < t'.b)"]).session
        nd = s.normal[0]
        p1 = next(p for p in nd.preds if p.a == "a")
        p2 = next(p for p in nd.preds if p.a == "b")
        cfg = Config(threads=args.threads)
        eng = LocalEngine(s.engine.enc, cfg)
        init = eng.initial_groups(nd)
        truth = eng.count(s.plan(0, "count"), init)[0]
        plan = s.plan(0, "pairs")
        planned = [st.algorithm for st in plan.stages]
        ie = Stage((p1, p2), "iejoin")
        eng.refine(init, ie)  # warm
        samples: dict[str, dict[str, list]] = {
            x: {"s1": [], "s2": [], "exact": []}
            for x in ("iejoin", *(f"{a}+{b}" for a, b in CHAINS))
        }
        outs: dict[str, dict] = {}
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            out = eng.refine(init, ie)
            samples["iejoin"]["s1"].append(time.perf_counter() - t0)
            samples["iejoin"]["s2"].append(0.0)
            samples["iejoin"]["exact"].append(True)
            g, t, p = sizes(out)
            outs["iejoin"] = {"groups": g, "tids": t, "pairs": p, "mid_tids": None}
            del out
            for alg, alg2 in CHAINS:
                name = f"{alg}+{alg2}"
                t0 = time.perf_counter()
                mid = eng.refine(init, Stage((p1,), alg))
                samples[name]["s1"].append(time.perf_counter() - t0)
                f = follow(eng, mid, Stage((p2,), alg2), args.followup_budget)
                samples[name]["s2"].append(f["seconds"])
                samples[name]["exact"].append(f["exact"])
                outs[name] = {
                    "groups": f["groups"],
                    "tids": f["tids"],
                    "pairs": f["pairs"],
                    "mid_groups": len(mid),
                    "mid_tids": f["in_tids"],
                }
                del mid
        for name, sm in samples.items():
            o = outs[name]
            exact = all(sm["exact"])
            rec = {
                "bench": BENCH,
                "part": "b",
                "run_id": run_id,
                "rows": n,
                "exp": k,
                "cardinality": d,
                "distinct_a": int(s.engine.enc.domain["a"]),
                "distinct_b": int(s.engine.enc.domain["b"]),
                "violations": int(truth),
                "algorithm": name,
                "threads": args.threads,
                "stage1_seconds": common.median(sm["s1"]),
                "stage2_seconds": common.median(sm["s2"]),
                "total_seconds": common.median(
                    [a + b for a, b in zip(sm["s1"], sm["s2"], strict=True)]
                ),
                "stage1_samples": sm["s1"],
                "stage2_samples": sm["s2"],
                "followup_exact": exact,
                "out_groups": o["groups"] if exact else None,
                "out_tids": o["tids"] if exact else None,
                "out_pairs": o["pairs"] if exact else None,
                "est_out_groups": None if exact else o["groups"],
                "est_out_tids": None if exact else o["tids"],
                "mid_groups": o.get("mid_groups"),
                "mid_tids": o.get("mid_tids"),
                "pairs_check": (o["pairs"] == truth) if exact else None,
                "planner_choice": planned,
                "load_avg": load_now(),
                **info,
            }
            recs.append(rec)
            common.append_jsonl(args.results, rec)
            sz = (
                f"groups {o['groups']} tids {o['tids']:.3g} pairs {o['pairs']}"
                if exact
                else "sampled"
            )
            print(
                f"(b) 2^{k:<2} {name:<10} total {rec['total_seconds']:.3f}s"
                f"{'' if exact else '~'} {sz} (violations {truth})",
                flush=True,
            )
            if exact and o["pairs"] != truth:
                print(f"MISMATCH: {name} pairs {o['pairs']} != count {truth}", flush=True)
        del s, table, eng, init
    return recs


# --------------------------------------------------------------------------------------------
# report


def _t(x: float | None, est: bool = False) -> str:
    if x is None:
        return "-"
    s = f"{x:.3f}" if x < 10 else f"{x:.1f}"
    return s + ("~" if est else "")


def _n(x) -> str:
    if x is None:
        return "-"
    x = float(x)
    return f"{x:.3g}" if x >= 1e5 else f"{int(x)}"


def crossover(
    rows: list[dict], key: str, a: str, b: str, margin: float = 0.9, fewer_tids: bool = False
) -> int | None:
    """Smallest cardinality from which ``b`` is faster than ``a`` (by more than 1 - ``margin``,
    so noise on equal outputs does not count) at it and every larger one."""
    by: dict[int, dict[str, dict]] = {}
    for r in rows:
        by.setdefault(r["cardinality"], {})[r["algorithm"]] = r

    def wins(x: int) -> bool:
        ra, rb = by[x].get(a), by[x].get(b)
        if ra is None or rb is None or ra[key] is None or rb[key] is None:
            return False
        if fewer_tids and not rb["out_tids"] < ra["out_tids"]:
            return False  # same output: a difference in time is noise
        return rb[key] < margin * ra[key]

    cards = sorted(by)
    for i, c in enumerate(cards):
        if all(wins(x) for x in cards[i:]):
            return c
    return None


def report(records: list[dict], path: Path) -> None:
    if not records:
        return
    recs = []
    for part in ("a", "b"):  # the latest run of each part
        mine = [r for r in records if r.get("part") == part]
        if mine:
            recs += [r for r in mine if r["run_id"] == mine[-1]["run_id"]]
    info = recs[0]
    loads = [r["load_avg"][0] for r in recs]
    lines = [
        "# Fig. 3 on facet: HSM vs BHSM, and IEJoin vs chains of two refinements",
        "",
        f"Command: `{info['command']}`  ",
        f"Date {info['date']}, git {str(info['git_commit'])[:10]}{' (dirty)' if info['git_dirty'] else ''}, "
        f"{info['nproc']} cores ({info['cpu_model']}), {info['mem_total_gib']} GiB, "
        f"threads per refinement {info['threads']}, load average (1 min) during the run "
        f"{min(loads):.2f}-{max(loads):.2f}.  ",
        f"Rows {info['rows']:,}; medians of {info['repeats']} interleaved repeats; seconds from "
        "`time.perf_counter` around `LocalEngine.refine` (numba warmed). `~`: a following stage "
        f"timed on a sample of its batches (budget {info['followup_budget']:,} tids) and "
        "extrapolated by tids, sizes extrapolated likewise.",
        "",
    ]
    a = [r for r in recs if r["part"] == "a"]
    b = [r for r in recs if r["part"] == "b"]
    cfg = DEFAULT
    if a:
        algs = list(dict.fromkeys(r["algorithm"] for r in a))
        lines += [
            "## (a) one inequality `t.a > t'.a`, a uniform",
            "",
            "Refinement seconds (the inequality stage alone):",
            "",
        ]
        cards = sorted({r["cardinality"] for r in a})
        by = {(r["cardinality"], r["algorithm"]): r for r in a}
        rows = []
        for c in cards:
            r0 = next(r for r in a if r["cardinality"] == c)
            rows.append(
                [f"2^{r0['exp']}", r0["distinct"]]
                + [_t(by[(c, x)]["refine_seconds"]) if (c, x) in by else "-" for x in algs]
                + ["+".join(r0["planner_choice"])]
            )
        lines.append(common.markdown_table(["a values", "distinct", *algs, "planner"], rows))
        lines += [
            "",
            "Refinement + one following refinement (equality on a 4-valued column over the "
            "output, batch by batch) -- seconds, and the tids that following stage reads "
            "(sum |L|+|R| of the inequality's output):",
            "",
        ]
        rows = []
        for c in cards:
            r0 = next(r for r in a if r["cardinality"] == c)
            row = [f"2^{r0['exp']}"]
            for x in algs:
                r = by.get((c, x))
                row.append(
                    "-"
                    if r is None
                    else f"{_t(r['total_seconds'], not r['followup_exact'])} ({_n(r['out_tids'])})"
                )
            best = min((by[(c, x)]["total_seconds"], x) for x in algs if (c, x) in by)[1]
            rows.append([*row, best])
        lines.append(common.markdown_table(["a values", *algs, "fastest"], rows))
        lines += ["", "Output groups of the inequality stage:", ""]
        rows = [
            [f"2^{next(r for r in a if r['cardinality'] == c)['exp']}"]
            + [_n(by[(c, x)]["out_groups"]) if (c, x) in by else "-" for x in algs]
            for c in cards
        ]
        lines.append(common.markdown_table(["a values", *algs], rows))
        conf = bhsm_label(cfg.bhsm_bins)
        x_ref = crossover(a, "refine_seconds", "hsm", conf)
        x_tot = crossover(a, "total_seconds", "hsm", conf, fewer_tids=True)
        lines += [
            "",
            f"Crossover HSM -> {conf} (config `bhsm_bins`; first cardinality from which it is >10% "
            "faster at every larger one): refinement alone "
            f"{'none (HSM never slower)' if x_ref is None else x_ref}; with the following "
            f"stage {'none' if x_tot is None else x_tot} distinct values "
            f"(config `hsm_max_cardinality` = {cfg.hsm_max_cardinality:,}).",
        ]
        for x in algs:
            if x.startswith("bhsm") and x != conf:
                xt = crossover(a, "total_seconds", "hsm", x, fewer_tids=True)
                lines.append(
                    f"HSM -> {x} with the following stage: {'none' if xt is None else xt}."
                )
    if b:
        algs = ["iejoin", *(f"{x}+{y}" for x, y in CHAINS)]
        chains = algs[1:]
        by = {(r["cardinality"], r["algorithm"]): r for r in b}
        cards = sorted({r["cardinality"] for r in b})
        lines += [
            "",
            "## (b) two inequalities `t.a > t'.a and t.b < t'.b` (|b| = 2|a|, 1% raised b)",
            "",
            "Seconds to the final groups (both stages for the chains), and the final groups / "
            "tids; the chains' stage-1 output tids (what stage 2 reads) in the last columns:",
            "",
        ]
        rows = []
        for c in cards:
            r0 = by.get((c, "iejoin"))
            row = [f"2^{r0['exp']}", _n(r0["violations"])]
            for x in algs:
                r = by.get((c, x))
                row.append("-" if r is None else _t(r["total_seconds"], not r["followup_exact"]))
            for x in algs:
                r = by.get((c, x))
                row.append(
                    "-"
                    if r is None
                    else f"{_n(r['out_groups'])} / {_n(r['out_tids'])}"
                    if r["followup_exact"]
                    else "(sampled)"
                )
            row += [_n(by[(c, x)]["mid_tids"]) if (c, x) in by else "-" for x in chains]
            best = min((by[(c, x)]["total_seconds"], x) for x in algs if (c, x) in by)[1]
            row += [best, "+".join(r0["planner_choice"])]
            rows.append(row)
        lines.append(
            common.markdown_table(
                [
                    "a values",
                    "violations",
                    *[f"{x} s" for x in algs],
                    *[f"{x} groups/tids" for x in algs],
                    *[f"{x} stage-1 tids" for x in chains],
                    "fastest",
                    "planner",
                ],
                rows,
            )
        )
        chk = [r for r in b if r["pairs_check"] is False]
        lines += [
            "",
            "Pairs of the final groups equal the counting path's violations in every exact cell"
            if not chk
            else f"**MISMATCH** in {len(chk)} cells (pairs of final groups != count)",
        ]
        for x in chains:
            xc = crossover(b, "total_seconds", x, "iejoin")
            lines.append(
                f"Crossover {x} -> IEJoin: {'none' if xc is None else f'{xc} distinct values'} "
                f"(config `iejoin_min_cardinality` = {cfg.iejoin_min_cardinality:,})."
            )
    lines += ["", "## What this shows", "", what_it_shows(a, b), ""]
    path.write_text("\n".join(lines))


def what_it_shows(a: list[dict], b: list[dict]) -> str:
    out = []
    hs = {r["cardinality"]: r for r in a if r["algorithm"] == "hsm"}
    conf = bhsm_label(DEFAULT.bhsm_bins)
    b5 = {r["cardinality"]: r for r in a if r["algorithm"] == conf}
    if hs and b5 and set(hs) & set(b5):
        worst = max(
            (r["refine_seconds"] / hs[c]["refine_seconds"], c)
            for c, r in b5.items()
            if c in hs and hs[c]["refine_seconds"]
        )
        xt = crossover(a, "total_seconds", "hsm", conf, fewer_tids=True)
        big = max(set(hs) & set(b5))
        out.append(
            "(a) The inequality refinement itself is O(n log n) sorting plus O(1) per output "
            "group for every algorithm, so HSM is never slower than BHSM on its own "
            f"({conf} up to {worst[0]:.1f}x HSM's time, at {worst[1]} values; "
            f"HSM {hs[big]['refine_seconds']:.3f} s at {big} values). The difference is what the "
            "next stage must read: HSM's groups carry R_{>v}, "
            f"{_n(hs[big]['out_tids'])} tids at {big} values against "
            f"{_n(b5[big]['out_tids'])} for {conf}; "
            f"counting that following refinement, {conf} "
            f"is faster from {xt if xt else 'no'} distinct values on. "
            "BHSM needs about bins*n/2 + d*n/(2*bins) tids downstream, least at bins ~ sqrt(d), "
            "so a fixed bin count is best only near d ~ bins^2."
        )
    if b:
        ie = {r["cardinality"]: r for r in b if r["algorithm"] == "iejoin"}
        ch = {}
        for r in b:
            if r["algorithm"] in ("hsm+hsm", "bhsm+bhsm"):
                c = r["cardinality"]
                if c not in ch or r["total_seconds"] < ch[c]["total_seconds"]:
                    ch[c] = r
        ratios = [(ch[c]["total_seconds"] / ie[c]["total_seconds"], c) for c in ie if c in ch]
        lo, hi = min(ratios), max(ratios)
        xc = crossover(
            [r for r in b if r["algorithm"] in ("iejoin", "bhsm+bhsm")],
            "total_seconds",
            "bhsm+bhsm",
            "iejoin",
        )
        out.append(
            "(b) IEJoin's single sort-and-sweep stage against the better of HSM+HSM and "
            "BHSM+BHSM: chain time / IEJoin time from "
            f"{lo[0]:.1f}x (at {lo[1]} values) to {hi[0]:.0f}x (at {hi[1]} values); the chains "
            "pay for their first stage's output (HSM: ~d*n/2 tids) in the second. "
            f"Crossover chain -> IEJoin: {xc if xc else 'none'}"
            f"{' (IEJoin fastest at every measured cardinality)' if xc == min(ie) else ''}."
        )
        cq = {r["cardinality"]: r for r in b if r["algorithm"] == "cdq+hsm"}
        rq = [(cq[c]["total_seconds"] / ie[c]["total_seconds"], c) for c in ie if c in cq]
        if rq:
            out[-1] += (
                f" CDQ blocks then HSM (the planner's choice when IEJoin's estimated output "
                f"exceeds {DEFAULT.iejoin_max_pairs_per_row} pairs per row) takes "
                f"{min(rq)[0]:.1f}x-{max(rq)[0]:.1f}x IEJoin's time."
            )
    return "\n\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--a-exps", default="4:20", help="part (a) cardinalities 2^k: 4:20, 4:20:2, 4,8"
    )
    ap.add_argument("--b-exps", default="2:18", help="part (b) cardinalities 2^k")
    ap.add_argument("--bins", default="100,500,1000,sqrt", help="BHSM bins for part (a)")
    ap.add_argument("--parts", default="a,b")
    ap.add_argument("--followup-budget", type=int, default=8_000_000)
    ap.add_argument("--quick", action="store_true", help="smoke run: 100k rows, few cells")
    ap.add_argument("--results", default=str(RESULTS / f"{BENCH}.jsonl"))
    ap.add_argument("--md", default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.repeats = 100_000, 1
        args.a_exps, args.b_exps = "4:16:4", "6:14:4"
    args.a_exps, args.b_exps = exps(args.a_exps), exps(args.b_exps)
    args.bins = [b.strip() for b in args.bins.split(",") if b.strip()]
    md = Path(args.md) if args.md else Path(args.results).with_suffix(".md")
    run_id = uuid.uuid4().hex[:12]
    info = {
        **common.machine_info(("numpy", "numba", "pyarrow", "pyroaring")),
        "command": common.command_line(),
        "repeats": args.repeats,
        "followup_budget": args.followup_budget,
        "seed": args.seed,
    }
    parts = set(args.parts.split(","))
    if "a" in parts:
        part_a(args, info, run_id)
    if "b" in parts:
        part_b(args, info, run_id)
    report(common.read_jsonl(args.results), md)
    print(f"wrote {args.results} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
