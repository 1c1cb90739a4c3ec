"""Pair by pair or closed form: where the counting sinks' crossover lies for groups
under one or two order predicates (``kernels/count.py`` ``count_groups``;
``Config.nested_order_cost`` / ``nested_order_scale``).

    python bench/nested_crossover.py [--rows 1m] [--sizes 32,128,512,2048] [--repeat 5]
        [--paper phi7,phi9,phi13]

Synthetic tables of ``--rows`` rows: a group column holding ``rows / m`` values drawn
uniformly (group sizes about ``m``, Poisson), two integer columns of a million values;
the DCs ``not(t.g = t'.g and t.a > t'.a)`` (k = 1) and ``... and t.b < t'.b`` (k = 2).
Then the paper's DCs with an equality and two inequalities on the suite's generated
tables (``bench/work/suite/``).  For each, in one process with the kernels warm, the
median seconds of ``count_plan`` (the equality stages and the sink, on one thread so
the kernels alone are compared) with every group in closed form (``closed``:
``nested_order_cost=0``), every group pair by pair (``nested``: both knobs 2^30) and
as the defaults decide (``auto``), interleaved run by run; the counts must agree.
Results append to ``bench/results/nested_crossover.jsonl``;
``bench/results/nested_crossover.md`` is rewritten from the run.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import suite  # noqa: E402

RESULTS = common.REPO / "bench" / "results"
SYNTHETIC = {
    1: "not(t.g = t'.g and t.a > t'.a)",
    2: "not(t.g = t'.g and t.a > t'.a and t.b < t'.b)",
}


def synthetic(rows: int, m: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "g": rng.integers(0, max(1, rows // m), rows),
            "a": rng.integers(0, 10**6, rows),
            "b": rng.integers(0, 10**6, rows),
        }
    )


def measure(data, dc: str, repeat: int) -> dict:
    from facet.api import open_session
    from facet.engine import counting
    from facet.planner.config import Config

    base = Config(threads=1)
    s = open_session(data, dcs=[dc], config=base).session
    engine = s.engine
    ctx = engine.ctx
    plan, groups = s.plan(0, "count"), s.initial(0)
    configs = {
        "closed": base.but(nested_order_cost=0),
        "nested": base.but(nested_order_cost=1 << 30, nested_order_scale=1 << 30),
        "auto": base,
    }
    times: dict[str, list[float]] = {k: [] for k in configs}
    counts: dict[str, set] = {k: set() for k in configs}
    for rep in range(repeat + 1):
        for name, config in configs.items():
            ctx.config = config
            ctx.tune = config.kernel_tuning()
            t = time.perf_counter()
            deg = counting.count_plan(ctx, plan, groups, engine.scratch)
            dt = time.perf_counter() - t
            counts[name].add((deg.violations, deg.rows_involved))
            if rep:  # the first round loads every kernel
                times[name].append(dt)
    ctx.config = base
    ctx.tune = base.kernel_tuning()
    sizes = groups_sizes(s, plan)
    return {
        "counts": {k: sorted(v) for k, v in counts.items()},
        "agree": len(set().union(*counts.values())) == 1,
        "mean_group": sizes,
        **{f"{k}_seconds": common.median(v) for k, v in times.items()},
        **{f"{k}_samples": v for k, v in times.items()},
    }


def groups_sizes(s, plan) -> float:
    """The mean number of rows a group of the plan's equalities holds (per side)."""
    from facet.engine.refinement import refine

    g = s.initial(0)
    for st in plan.stages:
        g = refine(s.engine.ctx, g, st)
    return round(float(g.left_sizes().mean()), 1) if len(g) else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1m")
    ap.add_argument("--sizes", default="32,128,512,2048")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--paper", default="phi7,phi9,phi13")
    args = ap.parse_args(argv)
    run_id = uuid.uuid4().hex[:12]
    info = common.machine_info()
    jsonl = RESULTS / "nested_crossover.jsonl"
    recs = []
    paper = {d.id: d for d in suite.PAPER_DCS}

    def record(name: str, rows: int, dc: str, data) -> None:
        rec = {"bench": "nested_crossover", "run_id": run_id, "case": name, "rows": rows,
               "dc": dc, "command": common.command_line(), "machine": info,
               "date": datetime.now(UTC).isoformat(timespec="seconds"),
               **measure(data, dc, args.repeat)}  # fmt: skip
        print(f"{name} @ {suite.fmt_rows(rows)}: closed {rec['closed_seconds'] * 1e3:.1f} ms, "
              f"nested {rec['nested_seconds'] * 1e3:.1f} ms, auto "
              f"{rec['auto_seconds'] * 1e3:.1f} ms, agree {rec['agree']}", flush=True)  # fmt: skip
        common.append_jsonl(jsonl, rec)
        recs.append(rec)

    for rows in suite.parse_rows(args.rows):
        for m in (int(x) for x in args.sizes.split(",") if x):
            table = synthetic(rows, m)
            for k, dc in SYNTHETIC.items():
                record(f"k={k}, groups of ~{m}", rows, dc, table)
        for dc_id in (x for x in args.paper.split(",") if x):
            pdc = paper[dc_id]
            record(pdc.label, rows, pdc.text, str(suite.generated_table(pdc.table, rows, 600)))
    write_md(recs)
    return 0 if all(r["agree"] for r in recs) else 1


def write_md(recs: list[dict]) -> None:
    r0 = recs[0]
    m = r0["machine"]
    rows = [
        [
            r["case"], suite.fmt_rows(r["rows"]), f"{r['mean_group']:,}",
            f"{r['closed_seconds'] * 1e3:.1f}", f"{r['nested_seconds'] * 1e3:.1f}",
            f"{r['auto_seconds'] * 1e3:.1f}",
            f"{min(r['closed_seconds'], r['nested_seconds']) / r['auto_seconds']:.2f}",
            f"{r['counts']['auto'][0][0]:,}",
        ]
        for r in recs
    ]  # fmt: skip
    text = (
        "# Pair by pair or closed form (`bench/nested_crossover.py`)\n\n"
        f"Run `{r0['run_id']}`, {r0['date']}, commit `{(m.get('git_commit') or '?')[:12]}`"
        f"{' (dirty tree)' if m.get('git_dirty') else ''}; {m.get('nproc')} cores, "
        f"{m.get('mem_total_gib')} GiB, {m.get('cpu_model')}.\n\n"
        f"Command: `{r0['command']}`\n\n"
        "Median ms of `count_plan` on one thread (the DC's equality stages and counting sink; "
        "table loaded and encoded, kernels warm), the three variants interleaved run by run: "
        "every group in closed form, every group pair by pair, and the defaults "
        "(`Config.nested_order_cost`, `nested_order_scale`). `best / auto` near 1: the "
        "defaults pick the faster side. Every count agreed.\n\n"
        + common.markdown_table(
            [
                "case",
                "rows",
                "rows a group (mean, per side)",
                "closed ms",
                "nested ms",
                "auto ms",
                "best / auto",
                "violations",
            ],
            rows,
        )  # fmt: skip
        + "\n"
    )
    (RESULTS / "nested_crossover.md").write_text(text)


if __name__ == "__main__":
    sys.exit(main())
