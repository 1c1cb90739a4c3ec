"""Fused keyed counts vs refined ones: the paper's key and FD-shaped DCs counted by
their plan's equality refinements + keyed sink, and by the fused pass over
composite codes (``facet/engine/counting.py`` ``count_plan``, ``kernels/composite.py``).

    python bench/fused_keyed.py [--rows 100k,1m] [--repeat 15]

For each DC and size (the suite's generated tables, ``bench/work/suite/``), in one
process with the kernels warm: the median seconds of ``count_plan`` as the engine
decides (``auto``), always fused where the shape allows (``fused``) and never
(``refined``, ``Config(fuse_keyed=False)``), interleaved run by run; the counts
must agree.  Results append to ``bench/results/fused_keyed.jsonl``;
``bench/results/fused_keyed.md`` is rewritten from the run.  What ``fuses``
decides and its thresholds come from these numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import suite  # noqa: E402

RESULTS = common.REPO / "bench" / "results"
#: the paper's DCs whose count plans have a keyed sink
DCS = ("phi4", "phi5", "phi6", "phi8", "phi10")


def measure(table: Path, dc: str, repeat: int) -> dict:
    from facet.api import open_session
    from facet.engine import counting

    s = open_session(str(table), dcs=[dc]).session
    engine = s.engine
    ctx = engine.ctx
    plan, groups = s.plan(0, "count"), s.initial(0)
    base = ctx.config
    configs = {
        "auto": base,
        "fused": base.but(fuse_keyed_tids=1 << 62),
        "refined": base.but(fuse_keyed=False),
    }
    times: dict[str, list[float]] = {k: [] for k in configs}
    counts: dict[str, set] = {k: set() for k in configs}
    for rep in range(repeat + 1):
        for name, config in configs.items():
            ctx.config = config
            t = time.perf_counter()
            deg = counting.count_plan(ctx, plan, groups, engine.scratch)
            dt = time.perf_counter() - t
            counts[name].add((deg.violations, deg.rows_involved))
            if rep:  # the first round loads every kernel
                times[name].append(dt)
    ctx.config = base
    ctx.config = base.but(fuse_keyed_tids=1 << 62)
    fusable = counting.fuses(ctx, plan, groups)
    ctx.config = base
    return {
        "auto_fuses": counting.fuses(ctx, plan, groups),
        "fusable": fusable,
        "stages": len(plan.stages),
        "final": plan.sink.keyed.op,
        "counts": {k: sorted(v) for k, v in counts.items()},
        "agree": len(set().union(*counts.values())) == 1,
        **{f"{k}_seconds": common.median(v) for k, v in times.items()},
        **{f"{k}_samples": v for k, v in times.items()},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="100k,1m")
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args(argv)
    run_id = uuid.uuid4().hex[:12]
    info = common.machine_info()
    jsonl = RESULTS / "fused_keyed.jsonl"
    recs = []
    paper = {d.id: d for d in suite.PAPER_DCS}
    for rows in suite.parse_rows(args.rows):
        for dc_id in DCS:
            pdc = paper[dc_id]
            table = suite.generated_table(pdc.table, rows, 600)
            rec = {"bench": "fused_keyed", "run_id": run_id, "dc": dc_id, "rows": rows,
                   "text": pdc.text, "command": common.command_line(), "machine": info,
                   "date": datetime.now(UTC).isoformat(timespec="seconds"),
                   **measure(table, pdc.text, args.repeat)}  # fmt: skip
            print(f"{dc_id} @ {suite.fmt_rows(rows)}: auto {rec['auto_seconds'] * 1e3:.2f} ms, "
                  f"fused {rec['fused_seconds'] * 1e3:.2f} ms, refined "
                  f"{rec['refined_seconds'] * 1e3:.2f} ms, agree {rec['agree']}", flush=True)  # fmt: skip
            common.append_jsonl(jsonl, rec)
            recs.append(rec)
    write_md(recs)
    return 0 if all(r["agree"] for r in recs) else 1


def write_md(recs: list[dict]) -> None:
    r0 = recs[0]
    m = r0["machine"]
    rows = [
        [
            r["dc"], suite.fmt_rows(r["rows"]), f"{r['stages']} + `{r['final']}`",
            f"{r['refined_seconds'] * 1e3:.2f}", f"{r['fused_seconds'] * 1e3:.2f}",
            f"{r['auto_seconds'] * 1e3:.2f}", "fused" if r["auto_fuses"] else "refined",
            f"{r['refined_seconds'] / r['auto_seconds']:.2f}x", f"{r['counts']['auto'][0][0]:,}",
        ]
        for r in recs
    ]  # fmt: skip
    text = (
        "# Fused keyed counts vs refined (`bench/fused_keyed.py`)\n\n"
        f"Run `{r0['run_id']}`, {r0['date']}, commit `{(m.get('git_commit') or '?')[:12]}`"
        f"{' (dirty tree)' if m.get('git_dirty') else ''}; {m.get('nproc')} cores, "
        f"{m.get('mem_total_gib')} GiB, {m.get('cpu_model')}.\n\n"
        f"Command: `{r0['command']}`\n\n"
        "Median ms of `count_plan` (the DC's equality stages and keyed sink; table loaded and "
        "encoded, kernels warm), the three variants interleaved run by run. `auto`: what "
        "`counting.fuses` decides; every count agreed.\n\n"
        + common.markdown_table(
            [
                "DC",
                "rows",
                "equalities + final",
                "refined ms",
                "fused ms",
                "auto ms",
                "auto runs",
                "refined / auto",
                "violations",
            ],
            rows,
        )  # fmt: skip
        + "\n"
    )
    (RESULTS / "fused_keyed.md").write_text(text)


if __name__ == "__main__":
    sys.exit(main())
