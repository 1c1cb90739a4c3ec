"""Detection for Raha/Baran: facet's cells become Baran's ``detected_cells``.

Baran (Mahdavi & Abedjan, "Baran: Effective Error Correction via a Unified
Context Representation and Transfer Learning", VLDB 2020) corrects the cells it
is told are wrong.  It reads them from ``Dataset.detected_cells``, a dict
``{(row, column_index): value}``.  facet's ``suspects`` (the greedy cover of
the violations, docs/outputs.md) or every cell of ``cells`` map onto it one to
one: ``row`` is the tid (a CSV's tids are its data rows in order, which is
pandas' row index too) and ``column_index`` the column's position in the
header.

:func:`detected_cells` and :func:`cell_scores` are plain Python and need
nothing beyond facet.  :func:`repair` and :func:`raha_detection` run Raha's
code and need the ``repair`` extra (``pip install 'facet[repair]'``: ``raha``,
which needs pandas < 3).
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from facet.errors import FacetInputError

Cell = tuple[int, int]

#: the value Baran's detection itself stores for a detected cell; Baran reads
#: only the keys
DETECTED = "JUST A DUMMY VALUE"

_MISSING = "facet.integrations.raha needs raha: pip install 'facet[repair]' (raha needs pandas<3)"


def detected_cells(table: pa.Table, columns: Sequence[str], values: Any = None) -> dict[Cell, str]:
    """Baran's ``detected_cells`` from a facet ``suspects`` or ``cells`` table.

    ``columns``: the data's column names in file order (Baran's column
    indexes).  ``values``: optionally the data as Baran reads it (a pandas
    frame of strings); each cell then maps to its dirty value, else to
    :data:`DETECTED`.  A cell listed under several DCs appears once.
    """
    for name in ("tid", "column"):
        if name not in table.column_names:
            raise FacetInputError(
                f"detected_cells needs a suspects or cells table with columns tid and column; "
                f"this one has {', '.join(table.column_names)}"
            )
    index = {name: j for j, name in enumerate(columns)}
    out: dict[Cell, str] = {}
    tids = table.column("tid").to_pylist()
    names = table.column("column").to_pylist()
    for tid, name in zip(tids, names, strict=True):
        j = index.get(name)
        if j is None:
            raise FacetInputError(
                f"column {name!r} of the facet output is not among the data's columns "
                f"({len(columns)} given); pass the header of the file facet read"
            )
        cell = (int(tid), j)
        if cell not in out:
            out[cell] = DETECTED if values is None else values.iat[cell]
    return out


@dataclass(frozen=True)
class Scores:
    """Cell-level precision / recall / F1, with the counts behind them."""

    precision: float
    recall: float
    f1: float
    found: int
    actual: int
    correct: int

    def as_dict(self) -> dict[str, float | int]:
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "found": self.found,
            "actual": self.actual,
            "correct": self.correct,
        }


def _scores(correct: int, found: int, actual: int) -> Scores:
    p = correct / found if found else 0.0
    r = correct / actual if actual else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return Scores(p, r, f, found, actual, correct)


def cell_scores(found: Iterable[Cell], actual: Iterable[Cell]) -> Scores:
    """Detection quality: ``found`` cells against the ``actual`` errors
    (the cells where the dirty and the clean data differ)."""
    found_set = set(found)
    actual_set = set(actual)
    return _scores(len(found_set & actual_set), len(found_set), len(actual_set))


def repair_scores(corrections: Mapping[Cell, str], actual: Mapping[Cell, str]) -> Scores:
    """Repair quality as Raha/Baran measure it: a correction is right when
    its cell is an error and its value is the clean value; precision is over
    all corrections, recall over all errors."""
    right = sum(1 for c, v in corrections.items() if c in actual and actual[c] == v)
    return _scores(right, len(corrections), len(actual))


@dataclass
class RepairRun:
    """One detection -> Baran run: what was detected, what Baran changed, timings
    and (with the clean data) both stages' scores."""

    detection: dict[Cell, str]
    corrections: dict[Cell, str]
    detect_seconds: float
    repair_seconds: float
    detection_scores: Scores | None
    repair_scores: Scores | None


def _raha() -> Any:
    try:
        import raha  # noqa: PLC0415  (optional extra, imported on use)
        import raha.correction  # noqa: PLC0415, F401
        import raha.detection  # noqa: PLC0415, F401
    except ImportError as exc:
        raise FacetInputError(_MISSING) from exc
    return raha


def _spec(dirty: str | os.PathLike, clean: str | os.PathLike | None) -> dict[str, str]:
    """Raha's dataset dictionary: a name (the file's folder), the paths."""
    path = os.path.abspath(dirty)
    spec = {"name": os.path.basename(os.path.dirname(path)) or "data", "path": path}
    if clean is not None:
        spec["clean_path"] = os.path.abspath(clean)
    return spec


def baran_dataset(dirty: str | os.PathLike, clean: str | os.PathLike | None = None) -> Any:
    """Raha's ``Dataset`` for a dirty CSV (and its clean version)."""
    raha = _raha()
    with _quiet():
        return raha.dataset.Dataset(_spec(dirty, clean))


@contextlib.contextmanager
def _quiet() -> Any:
    """Raha prints progress and pandas deprecation warnings; keep them out."""
    import warnings  # noqa: PLC0415

    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def facet_detection(
    dirty: str | os.PathLike,
    rules: Any,
    dataset: Any,
    kind: str = "suspects",
    **detect_kwargs: Any,
) -> dict[Cell, str]:
    """Run facet on ``dirty`` and turn its ``kind`` output (``suspects`` or
    ``cells``) into Baran's detected cells over ``dataset`` (a Raha Dataset)."""
    if kind not in ("suspects", "cells"):
        raise FacetInputError(f"detection kind must be suspects or cells, not {kind!r}")
    import facet  # noqa: PLC0415

    result = facet.detect(dirty, rules, output=kind, **detect_kwargs)
    frame = dataset.dataframe
    if result.rows != len(frame):
        raise FacetInputError(
            f"{os.fspath(dirty)}: facet read {result.rows} rows but Raha read {len(frame)}; "
            "their row numbers would not match (blank lines or an unusual CSV dialect)"
        )
    table = result.suspects() if kind == "suspects" else result.cells()
    return detected_cells(table, list(frame.columns), frame)


def raha_detection(
    dirty: str | os.PathLike, clean: str | os.PathLike, labeling_budget: int = 20, seed: int = 0
) -> dict[Cell, str]:
    """Raha's own detection of ``dirty`` (all its strategies, ``labeling_budget``
    tuples labeled from ``clean``), its results not saved to disk."""
    raha = _raha()
    import numpy as np  # noqa: PLC0415

    np.random.seed(seed)
    detector = raha.detection.Detection()
    detector.LABELING_BUDGET = labeling_budget
    detector.SAVE_RESULTS = False
    detector.VERBOSE = False
    with _quiet():
        return dict(detector.run(_spec(dirty, clean)))


def repair(
    dirty: str | os.PathLike,
    rules: Any = None,
    clean: str | os.PathLike | None = None,
    *,
    detection: str | Mapping[Cell, str] = "suspects",
    labeling_budget: int = 20,
    seed: int = 0,
    workers: int | None = None,
    **detect_kwargs: Any,
) -> RepairRun:
    """Detect with facet, then correct with Baran.

    ``detection``: ``"suspects"`` or ``"cells"`` (facet's output of that
    kind, over ``rules``), or a ready ``{(row, column_index): value}`` map
    (Raha's detection, the perfect one).  Baran labels ``labeling_budget``
    tuples; with ``clean`` it takes the labels from the clean file (as Raha's
    benchmarks do) and both stages are scored against it.  Without ``clean``
    Baran has no labels, so ``clean`` is required.  ``seed`` fixes Baran's
    tuple sampling; ``workers`` its process pool (default: all cores).
    """
    if clean is None:
        raise FacetInputError(
            "repair needs the clean file: Baran learns from labeled tuples, taken from it"
        )
    raha = _raha()
    import numpy as np  # noqa: PLC0415

    dataset = baran_dataset(dirty, clean)
    start = time.perf_counter()
    if isinstance(detection, str):
        found = facet_detection(dirty, rules, dataset, detection, **detect_kwargs)
    else:
        found = dict(detection)
    detect_seconds = time.perf_counter() - start
    dataset.detected_cells = dict(found)
    actual = dataset.get_actual_errors_dictionary()

    corrector = raha.correction.Correction()
    corrector.LABELING_BUDGET = labeling_budget
    corrector.SAVE_RESULTS = False
    corrector.VERBOSE = False
    if workers is not None:
        corrector.NUM_WORKERS = workers
    np.random.seed(seed)
    start = time.perf_counter()
    with _quiet():
        corrections = dict(corrector.run(dataset))
    repair_seconds = time.perf_counter() - start
    return RepairRun(
        detection=found,
        corrections=corrections,
        detect_seconds=detect_seconds,
        repair_seconds=repair_seconds,
        detection_scores=cell_scores(found, actual),
        repair_scores=repair_scores(corrections, actual),
    )
