"""Detect with facet, repair with Baran, score both against the clean data.

    pip install -e '.[repair]'          # raha, pandas<3 (or: scripts/setup.sh --repair,
    python examples/repair_hospital.py  #  then .venv-repair/bin/python examples/...)

On ``data/adr/hospital`` (1,000 rows, 509 cells that differ from ``clean.csv``):
facet's ``suspects`` under the HoloClean rules are the cells a greedy cover of the
violations takes (docs/outputs.md); Baran (Raha's corrector) gets them as its
detected cells, labels ``--budget`` tuples from ``clean.csv`` and proposes values.
Prints detection and repair precision / recall / F1 against ``clean.csv``, and
each step's wall time (the detection's includes importing facet and loading its
kernels: this process's first run).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from facet.integrations import raha as bridge

DATA = Path(__file__).resolve().parent.parent / "data" / "adr" / "hospital"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="dc_rules_holoclean.txt", help="a rules file of the dataset")
    ap.add_argument("--detection", default="suspects", choices=("suspects", "cells"))
    ap.add_argument("--budget", type=int, default=20, help="tuples Baran labels from clean.csv")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    run = bridge.repair(
        DATA / "dirty.csv",
        DATA / args.rules,
        DATA / "clean.csv",
        detection=args.detection,
        labeling_budget=args.budget,
        seed=args.seed,
    )
    d, r = run.detection_scores, run.repair_scores
    print(f"adr/hospital with {args.rules}: {d.actual} cells differ from clean.csv")
    print(
        f"facet {args.detection}: {d.found} cells in {run.detect_seconds:.2f} s; "
        f"detection precision {d.precision:.3f} recall {d.recall:.3f} F1 {d.f1:.3f}"
    )
    print(
        f"Baran ({args.budget} labeled tuples): {r.found} corrections in "
        f"{run.repair_seconds:.1f} s; precision {r.precision:.3f} recall {r.recall:.3f} "
        f"F1 {r.f1:.3f}"
    )


if __name__ == "__main__":
    main()
