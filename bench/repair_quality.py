"""Detection and repair quality on the ADR datasets: facet's suspects against Raha.

    .venv-repair/bin/python bench/repair_quality.py [--datasets hospital,flights,beers,rayyan]
        [--budget 20] [--seed 0] [--workers N]

Needs the ``repair`` extra (``raha``, pandas < 3): ``scripts/setup.sh --repair`` makes
``.venv-repair`` with it.  For each dataset of ``data/adr`` (dirty, clean, and the rules files
``dc_rules.txt`` -- DCs mined on the clean data -- and ``dc_rules_holoclean.txt`` -- the
HoloClean paper's hand-written DCs):

1. Detection, cell level, against the ground truth (the cells where dirty != clean, as Raha
   reads them): facet's ``suspects`` and every cell of facet's ``cells`` under each rules
   file, and Raha's own detection (all strategies, ``--budget`` tuples labeled from the clean
   file).  Precision, recall, F1, cells found, seconds (facet: the whole ``facet.detect``
   call, loading included; Raha: its run).
2. Repair: Baran (``--budget`` labeled tuples, seeded) fed (a) facet's suspects under each
   rules file, (b) Raha's detection, (c) the perfect detection (the ground truth's cells).
   Precision / recall / F1 as Raha's evaluation defines them (a correction is right when its
   cell is an error and its value the clean one).

Records append to ``bench/results/repair_quality.jsonl``; ``bench/results/repair_quality.md``
is rewritten from the latest run-set.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from facet.integrations import raha as bridge  # noqa: E402

REPO = common.REPO
ADR = REPO / "data" / "adr"
RESULTS = REPO / "bench" / "results"
JSONL = RESULTS / "repair_quality.jsonl"
RULES = ("dc_rules.txt", "dc_rules_holoclean.txt")


def _record(run_id: str, **fields) -> dict:
    rec = {"run_id": run_id, **fields}
    common.append_jsonl(JSONL, rec)
    print(
        f"  {fields['stage']:9} {fields['dataset']:9} {fields['by']:34} "
        f"P {fields['precision']:.3f} R {fields['recall']:.3f} F1 {fields['f1']:.3f} "
        f"({fields['seconds']:.2f} s)",
        flush=True,
    )
    return rec


def run_dataset(name: str, args: argparse.Namespace, run_id: str) -> None:
    dirty, clean = ADR / name / "dirty.csv", ADR / name / "clean.csv"
    dataset = bridge.baran_dataset(dirty, clean)
    actual = dataset.get_actual_errors_dictionary()
    detections: dict[str, dict] = {}
    for rules in RULES:
        path = ADR / name / rules
        for kind in ("suspects", "cells"):
            start = time.perf_counter()
            found = bridge.facet_detection(dirty, path, dataset, kind)
            seconds = time.perf_counter() - start
            by = f"facet {kind} ({rules})"
            s = bridge.cell_scores(found, actual)
            _record(run_id, stage="detection", dataset=name, by=by, seconds=seconds,
                    **s.as_dict())  # fmt: skip
            if kind == "suspects":
                detections[by] = found
    start = time.perf_counter()
    found = bridge.raha_detection(dirty, clean, args.budget, args.seed)
    seconds = time.perf_counter() - start
    s = bridge.cell_scores(found, actual)
    _record(run_id, stage="detection", dataset=name, by="Raha", seconds=seconds, **s.as_dict())
    detections["Raha"] = found
    detections["perfect"] = dict(actual)
    for by, found in detections.items():
        run = bridge.repair(dirty, clean=clean, detection=found, labeling_budget=args.budget,
                            seed=args.seed, workers=args.workers)  # fmt: skip
        _record(run_id, stage="repair", dataset=name, by=f"Baran <- {by}",
                seconds=run.repair_seconds, **run.repair_scores.as_dict())  # fmt: skip


def write_markdown(records: list[dict], info: dict, command: str) -> Path:
    def rows(stage: str) -> list[list]:
        return [
            [r["dataset"], r["by"], f"{r['precision']:.3f}", f"{r['recall']:.3f}",
             f"{r['f1']:.3f}", r["found"], r["actual"], common.fmt_seconds(r["seconds"])]
            for r in records if r["stage"] == stage
        ]  # fmt: skip

    head = ["dataset", "detected by", "precision", "recall", "F1", "cells", "errors", "seconds"]
    rhead = ["dataset", "repaired by", "precision", "recall", "F1", "corrections", "errors",
             "seconds"]  # fmt: skip
    text = f"""# Detection and repair quality on the ADR datasets

Written by `bench/repair_quality.py`. Command:

    {command}

Machine: {info["cpu_model"]}, nproc {info["nproc"]}, {info["mem_total_gib"]} GiB;
Python {info["python"]}; git {str(info["git_commit"])[:7]}{" (dirty)" if info["git_dirty"] else ""};
{info["date"]}. Versions: {", ".join(f"{k} {v}" for k, v in info["versions"].items())}.

Ground truth: the cells where `dirty.csv` and `clean.csv` differ (as Raha reads them).
Rules: `dc_rules.txt` (DCs mined on the clean data) and `dc_rules_holoclean.txt` (HoloClean's
hand-written DCs). facet's seconds are the whole `facet.detect` call, CSV loading included
(after one warm-up call in the process: numba's one-off kernel load is in
`bench/results/startup.md`); Raha's are its detection run ({info["budget"]} tuples labeled from the clean file).

## Detection (cell level)

{common.markdown_table(head, rows("detection"))}

`suspects`: the greedy cover of the violations (docs/outputs.md), facet's answer to "which
cells are wrong". `cells`: every cell of a violating row that the DC reads.

## Repair: Baran fed each detection

{common.markdown_table(rhead, rows("repair"))}

Baran labels {info["budget"]} tuples from the clean file (seed {info["seed"]}) and adds the
errors it finds in them to the detection it is given; precision is over its corrections,
recall over all errors (Raha's evaluation).
"""
    out = RESULTS / "repair_quality.md"
    out.write_text(text)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="hospital,flights,beers,rayyan")
    ap.add_argument("--budget", type=int, default=20, help="tuples Raha and Baran label")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=None, help="Baran's processes (all cores)")
    args = ap.parse_args(argv)
    run_id = uuid.uuid4().hex[:12]
    info = common.machine_info(("facet", "raha", "pandas", "scikit-learn", "numpy"))
    info.update(budget=args.budget, seed=args.seed)
    common.append_jsonl(JSONL, {"run_id": run_id, "stage": "machine", **info})
    # numba loads its compiled kernels on facet's first call in a process: keep that
    # one-off cost (bench/results/startup.md) out of the first dataset's time
    warm = ADR / "hospital"
    bridge.facet_detection(warm / "dirty.csv", warm / RULES[1],
                           bridge.baran_dataset(warm / "dirty.csv"), "suspects")  # fmt: skip
    for name in args.datasets.split(","):
        print(name, flush=True)
        run_dataset(name, args, run_id)
    records = [r for r in common.latest_run(common.read_jsonl(JSONL)) if r["stage"] != "machine"]
    print(write_markdown(records, info, common.command_line()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
