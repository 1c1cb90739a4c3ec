"""Paper Table 4 on this implementation: does the HLL order of columns by cardinality match
the true order, and how do row samples compare?

    python bench/table4_hll_order.py [--rows 1000000] [--tables 100] [--columns 2,3,4,5]
        [--rates 0.001,0.01,0.1] [--dist mixed] [--repeats 3] [--seed 0] [--quick]

For each column count ``k`` in ``--columns``: ``--tables`` random tables of ``--rows`` rows with
``k`` integer columns ``c0..c{k-1}``. Each column draws a cardinality log-uniformly between 10
and ``--rows`` and values over it, uniform or Zipf (exponent ``--zipf-s``) -- per column at
random with ``--dist mixed``. The table is encoded by facet (``open_session`` with the DC
``not(t.c0 < t'.c0 and ...)``, so every column is an ordered, rank-encoded column, as the
planner sees it); encoding is not timed.

Truth: the exact distinct count of each column (``np.unique`` of its values). Methods, each
giving a cardinality estimate per column, then the ascending order of the columns by it:

* ``hll``: ``facet/engine/statistics.py`` -- ``TableStatistics(...).cardinality((col,))`` for
  every column on a fresh ``TableStatistics`` with ``exact=False`` (what the planner pays).
* ``sample r``: one uniform row sample (without replacement) of ``r * rows`` rows per table,
  shared by its columns; per column the sample's distinct count ``d`` and singletons ``f1``
  scaled with GEE, ``sqrt(N/n) * f1 + (d - f1)`` (Charikar et al. 2000, as VioFinder/Hydra-style
  samplers do).
* ``exact``: the distinct codes of the encoded column (``count_nonzero(bincount(codes))``), for
  scale -- after facet's encoding an exact count costs one pass over dense codes.

A table counts as *correct* for a method when the columns sorted by its estimates have
non-decreasing true cardinalities (true ties are interchangeable). Reported per column count:
the fraction of correct tables (target for HLL: >= 95%) and the median over tables of each
method's estimation time per table (each table timed ``--repeats`` times, its median taken).

Results: ``bench/results/table4_hll_order.jsonl`` (one record per column count, per-table
cardinalities and estimates included) and ``bench/results/table4_hll_order.md``.
"""

from __future__ import annotations

import argparse
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
from facet.engine.context import Context  # noqa: E402
from facet.engine.statistics import TableStatistics  # noqa: E402
from facet.planner.config import DEFAULT  # noqa: E402

BENCH = "table4_hll_order"
RESULTS = common.REPO / "bench" / "results"


def zipf_values(rng, n: int, c: int, s: float) -> np.ndarray:
    """``n`` draws from a Zipf law over ``c`` values (ranks shuffled over 0..c-1)."""
    w = 1.0 / np.arange(1, c + 1, dtype=np.float64) ** s
    cdf = np.cumsum(w)
    cdf /= cdf[-1]
    ranks = np.searchsorted(cdf, rng.random(n), side="right")
    ranks = np.minimum(ranks, c - 1)
    perm = rng.permutation(c)
    return perm[ranks]


def gen_table(rng, n: int, k: int, dist: str, zipf_s: float) -> tuple[pa.Table, list[dict]]:
    cols, meta = {}, []
    lo, hi = np.log(10), np.log(n)
    for i in range(k):
        c = int(round(np.exp(rng.uniform(lo, hi))))
        kind = dist if dist != "mixed" else ("uniform" if rng.random() < 0.5 else "zipf")
        v = rng.integers(0, c, n) if kind == "uniform" else zipf_values(rng, n, c, zipf_s)
        cols[f"c{i}"] = v
        meta.append({"drawn": c, "dist": kind})
    return pa.table(cols), meta


def gee(codes: np.ndarray, n_total: int) -> float:
    """GEE estimate of the distinct values of a column from a sample of its codes."""
    codes = codes[codes >= 0]
    if codes.size == 0:
        return 0.0
    counts = np.bincount(codes)
    counts = counts[counts > 0]
    d = counts.size
    f1 = int(np.count_nonzero(counts == 1))
    return float(np.sqrt(n_total / codes.size) * f1 + (d - f1))


def sorted_ok(est: list[float], truth: list[int]) -> bool:
    """Columns in ascending order of ``est`` have non-decreasing true cardinality."""
    order = np.argsort(np.asarray(est), kind="stable")
    t = np.asarray(truth)[order]
    return bool(np.all(np.diff(t) >= 0))


def run_table(enc, names: list[str], rates: list[float], repeats: int, seed: int) -> dict:
    n = enc.n
    est: dict[str, list[float]] = {}
    times: dict[str, list[float]] = {}

    def hll() -> list[float]:
        st = TableStatistics(Context(enc, DEFAULT), exact=False)
        return [st.cardinality((c,)) for c in names]

    def exact() -> list[float]:
        out = []
        for c in names:
            x = enc.column(c)
            out.append(float(np.count_nonzero(np.bincount(x[x >= 0]))))
        return out

    def sampler(rate: float, rep: int):
        def f() -> list[float]:
            rng = np.random.default_rng((seed, rep))
            m = max(1, int(round(rate * n)))
            rows = rng.choice(n, m, replace=False)
            return [gee(enc.column(c)[rows], n) for c in names]

        return f

    methods = {"hll": lambda rep: hll, "exact": lambda rep: exact}
    for r in rates:
        methods[f"sample {r:g}"] = lambda rep, r=r: sampler(r, rep)
    for name in methods:
        times[name] = []
    for rep in range(repeats):
        for name, make in methods.items():  # interleaved
            f = make(rep)
            t0 = time.perf_counter()
            e = f()
            times[name].append(time.perf_counter() - t0)
            if rep == 0:
                est[name] = e
    return {"est": est, "seconds": {k: common.median(v) for k, v in times.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--tables", type=int, default=100)
    ap.add_argument("--columns", default="2,3,4,5")
    ap.add_argument("--rates", default="0.001,0.01,0.1")
    ap.add_argument("--dist", choices=("mixed", "uniform", "zipf"), default="mixed")
    ap.add_argument("--zipf-s", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="smoke run: 100k rows, 10 tables")
    ap.add_argument("--results", default=str(RESULTS / f"{BENCH}.jsonl"))
    ap.add_argument("--md", default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.tables, args.repeats = 100_000, 10, 1
    md = Path(args.md) if args.md else Path(args.results).with_suffix(".md")
    ks = [int(x) for x in args.columns.split(",")]
    rates = [float(x) for x in args.rates.split(",")]
    run_id = uuid.uuid4().hex[:12]
    info = {
        **common.machine_info(("numpy", "numba", "pyarrow", "datasketch")),
        "command": common.command_line(),
        "repeats": args.repeats,
        "seed": args.seed,
    }
    for k in ks:
        rng = np.random.default_rng((args.seed, k))
        tables = []
        load_start = os.getloadavg()[0]
        for ti in range(args.tables):
            table, meta = gen_table(rng, args.rows, k, args.dist, args.zipf_s)
            names = [f"c{i}" for i in range(k)]
            truth = [int(np.unique(table.column(c).to_numpy()).size) for c in names]
            dc = "not(" + " and ".join(f"t.{c} < t'.{c}" for c in names) + ")"
            enc = open_session(table, dcs=[dc]).session.engine.enc
            for c, t in zip(names, truth, strict=True):
                assert enc.domain[c] == t, (c, enc.domain[c], t)
            res = run_table(enc, names, rates, args.repeats, args.seed * 1000 + ti)
            ok = {m: sorted_ok(e, truth) for m, e in res["est"].items()}
            tables.append(
                {
                    "truth": truth,
                    "drawn": [m["drawn"] for m in meta],
                    "dist": [m["dist"] for m in meta],
                    "est": {m: [round(x, 1) for x in e] for m, e in res["est"].items()},
                    "ok": ok,
                    "seconds": res["seconds"],
                }
            )
            del enc, table
        methods = list(tables[0]["ok"])
        rec = {
            "bench": BENCH,
            "run_id": run_id,
            "rows": args.rows,
            "columns": k,
            "tables": args.tables,
            "dist": args.dist,
            "zipf_s": args.zipf_s,
            "hll_p": DEFAULT.hll_p,
            "accuracy": {m: sum(t["ok"][m] for t in tables) / len(tables) for m in methods},
            "median_ms": {
                m: 1000 * common.median([t["seconds"][m] for t in tables]) for m in methods
            },
            "hll_max_rel_error": max(
                abs(e - t) / t
                for tb in tables
                for e, t in zip(tb["est"]["hll"], tb["truth"], strict=True)
            ),
            "per_table": tables,
            "load_avg": [load_start, os.getloadavg()[0]],
            **info,
        }
        common.append_jsonl(args.results, rec)
        acc = " ".join(f"{m}={v:.2f}" for m, v in rec["accuracy"].items())
        ms = " ".join(f"{m}={v:.1f}ms" for m, v in rec["median_ms"].items())
        print(f"{k} columns: {acc} | {ms}", flush=True)
    report(common.read_jsonl(args.results), md)
    print(f"wrote {args.results} and {md}")
    return 0


def report(records: list[dict], path: Path) -> None:
    if not records:
        return
    run = records[-1]["run_id"]
    recs = [r for r in records if r.get("run_id") == run]
    info = recs[0]
    methods = list(info["accuracy"])
    samples = [m for m in methods if m.startswith("sample")]
    order = samples + ["hll", "exact"]
    loads = [x for r in recs for x in r["load_avg"]]
    lines = [
        "# Table 4 on facet: column order by HLL sketches vs row samples",
        "",
        f"Command: `{info['command']}`  ",
        f"Date {info['date']}, git {str(info['git_commit'])[:10]}"
        f"{' (dirty)' if info['git_dirty'] else ''}, {info['nproc']} cores "
        f"({info['cpu_model']}), {info['mem_total_gib']} GiB, load average (1 min) "
        f"{min(loads):.2f}-{max(loads):.2f}.  ",
        f"{info['tables']} tables of {info['rows']:,} rows per column count; cardinalities "
        f"log-uniform in [10, {info['rows']:,}], values {info['dist']} "
        f"(Zipf s = {info['zipf_s']}); HLL p = {info['hll_p']}; sample estimates by GEE; "
        f"times: per table the median of {info['repeats']} runs, then the median over tables.",
        "",
        "Fraction of tables whose ascending-cardinality column order is right:",
        "",
    ]
    rows = [[r["columns"]] + [f"{r['accuracy'][m]:.2f}" for m in order] for r in recs]
    lines.append(common.markdown_table(["columns", *order], rows))
    lines += ["", "Estimation time per table (ms, median):", ""]
    rows = [[r["columns"]] + [f"{r['median_ms'][m]:.1f}" for m in order] for r in recs]
    lines.append(common.markdown_table(["columns", *order], rows))
    worst = max(r["hll_max_rel_error"] for r in recs)
    hll_acc = min(r["accuracy"]["hll"] for r in recs)
    best_sample = max(r["accuracy"][m] for r in recs for m in samples)
    worst_sample = min(r["accuracy"][m] for r in recs for m in samples)
    fails = [
        (tb["truth"], tb["est"]["hll"])
        for r in recs
        for tb in r["per_table"]
        if not tb["ok"]["hll"]
    ]
    fail_txt = ""
    if fails:
        t, e = fails[0]
        fail_txt = (
            f" The {len(fails)} HLL misorderings are columns whose true cardinalities lie within "
            f"the sketch's error of each other (e.g. true {t}, HLL {[round(x) for x in e]})."
        )
    ms = {m: [r["median_ms"][m] for r in recs] for m in order}
    lines += [
        "",
        "## What this shows",
        "",
        f"HLL orders the columns right in {hll_acc:.0%} or more of the tables at every column "
        f"count (target 95%; largest relative error of any HLL estimate {worst:.2%}), while "
        f"GEE on uniform row samples is right in {worst_sample:.0%}-{best_sample:.0%}: a sample "
        "sees few of a high-cardinality column's values, and its scale-up cannot separate "
        "columns whose values are mostly unique from ones that are not."
        + fail_txt
        + f" Time per table: HLL {min(ms['hll']):.1f}-{max(ms['hll']):.1f} ms, a 10% sample "
        f"{min(ms[samples[-1]]):.1f}-{max(ms[samples[-1]]):.1f} ms. facet's sketches are built "
        "over each column's distinct codes (one bincount over the rows, then one hash per "
        "distinct value), so after encoding an exact distinct count "
        f"({min(ms['exact']):.1f}-{max(ms['exact']):.1f} ms) costs about as much as the sketch; "
        "the sketch earns its keep only where sketches must be merged (Spark partitions) or "
        "columns are not yet encoded.",
        "",
    ]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
