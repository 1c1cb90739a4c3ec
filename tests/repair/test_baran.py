"""facet -> Raha/Baran end to end (needs the repair extra: scripts/test.sh runs
this folder in .venv-repair).  The bridge's row and column numbers are Raha's,
its scores are Raha's evaluation, and the example prints its three scores."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import raha

import facet
from facet.integrations import raha as bridge

ROOT = Path(__file__).resolve().parents[2]
HOSPITAL = ROOT / "data" / "adr" / "hospital"
DIRTY, CLEAN, RULES = (
    HOSPITAL / "dirty.csv",
    HOSPITAL / "clean.csv",
    HOSPITAL / "dc_rules_holoclean.txt",
)


def test_cells_land_on_rahas_rows_and_columns():
    """Every detected cell holds, in Raha's frame, the value the file has at that
    data row and header position (facet's tid is the data row)."""
    dataset = bridge.baran_dataset(DIRTY, CLEAN)
    found = bridge.facet_detection(DIRTY, RULES, dataset, "cells")
    with open(DIRTY, newline="") as f:
        rows = list(csv.reader(f))[1:]
    assert len(found) > 1000
    for (i, j), value in found.items():
        assert value == raha.dataset.Dataset.value_normalizer(rows[i][j])


def test_scores_are_rahas_evaluation():
    dataset = bridge.baran_dataset(DIRTY, CLEAN)
    actual = dataset.get_actual_errors_dictionary()
    found = bridge.facet_detection(DIRTY, RULES, dataset, "suspects")
    mine = bridge.cell_scores(found, actual)
    assert [mine.precision, mine.recall, mine.f1] == dataset.get_data_cleaning_evaluation(found)[:3]
    proposals = {cell: actual.get(cell, "?") for cell in list(found)[::2]}
    r = bridge.repair_scores(proposals, actual)
    assert [r.precision, r.recall, r.f1] == dataset.get_data_cleaning_evaluation(proposals)[3:]


def test_baran_repairs_facets_suspects_deterministically():
    runs = [
        bridge.repair(DIRTY, RULES, CLEAN, labeling_budget=4, seed=7, workers=2) for _ in range(2)
    ]
    run = runs[0]
    suspects = facet.detect(DIRTY, RULES, output="suspects").suspects()
    assert len(run.detection) == suspects.num_rows
    assert run.corrections == runs[1].corrections  # seeded
    assert run.corrections and run.repair_scores.found == len(run.corrections)
    # Baran corrects the cells it was given plus the errors of the tuples it labeled
    labeled_rows = {i for i, _ in set(run.corrections) - set(run.detection)}
    assert len(labeled_rows) <= 4
    assert run.repair_scores.precision > 0.3  # it repairs, it does not scramble


def test_the_example_prints_what_the_readme_shows():
    """The README shows the example's output as it prints it, seconds aside."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "repair_hospital.py")],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    scores = re.findall(r"precision (\d\.\d+) recall (\d\.\d+) F1 (\d\.\d+)", proc.stdout)
    assert len(scores) == 2, proc.stdout
    assert all(0 < float(x) <= 1 for s in scores for x in s), proc.stdout
    readme = (ROOT / "README.md").read_text()
    after = readme[readme.index("examples/repair_hospital.py") :]
    shown = after[after.index("```text\n") + 8 :].split("```")[0].splitlines()

    def seconds_masked(line: str) -> str:
        return re.sub(r"\d+(\.\d+)? s\b", "# s", line)

    assert list(map(seconds_masked, shown)) == list(map(seconds_masked, proc.stdout.splitlines()))
