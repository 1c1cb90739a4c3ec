"""facet.integrations.raha's plain-Python half (the mapping to Baran's detected
cells and the scores), which needs no raha; Baran itself runs in tests/repair."""

from __future__ import annotations

import sys

import pandas as pd
import pyarrow as pa
import pytest

import facet
from facet.errors import FacetInputError
from facet.integrations import raha as bridge

HOSPITAL = "data/adr/hospital"


def test_detected_cells_map_tid_and_column_to_barans_keys():
    table = pa.table(
        {"tid": [3, 0, 3], "column": ["b", "a", "b"], "dc": [0, 0, 1], "violations": [1, 2, 1]}
    )
    got = bridge.detected_cells(table, ["a", "b", "c"])
    assert got == {(3, 1): bridge.DETECTED, (0, 0): bridge.DETECTED}  # a cell once
    frame = pd.DataFrame(
        {"a": ["x", "y", "z", "w"], "b": ["1", "2", "3", "4"], "c": ["", "", "", ""]}
    )
    assert bridge.detected_cells(table, list(frame.columns), frame) == {(3, 1): "4", (0, 0): "x"}


def test_detected_cells_from_a_real_suspects_run():
    res = facet.detect(f"{HOSPITAL}/dirty.csv", f"{HOSPITAL}/dc_rules_holoclean.txt",
                       output="suspects")  # fmt: skip
    columns = pd.read_csv(f"{HOSPITAL}/dirty.csv", nrows=0).columns.tolist()
    got = bridge.detected_cells(res.suspects(), columns)
    s = res.suspects()
    want = {(t, columns.index(c)) for t, c in zip(s["tid"].to_pylist(), s["column"].to_pylist())}
    assert set(got) == want and len(got) == s.num_rows > 0


def test_detected_cells_refuse_other_tables_and_unknown_columns():
    with pytest.raises(FacetInputError, match="tid and column"):
        bridge.detected_cells(pa.table({"t1": [0], "t2": [1]}), ["a"])
    with pytest.raises(FacetInputError, match="'zz' of the facet output"):
        bridge.detected_cells(pa.table({"tid": [0], "column": ["zz"]}), ["a"])


def test_scores():
    s = bridge.cell_scores([(0, 0), (1, 1), (2, 2)], [(1, 1), (2, 2), (3, 3), (4, 4)])
    assert (s.correct, s.found, s.actual) == (2, 3, 4)
    assert s.precision == pytest.approx(2 / 3) and s.recall == 0.5
    assert s.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert bridge.cell_scores([], [(0, 0)]).as_dict() == {
        "precision": 0.0, "recall": 0.0, "f1": 0.0, "found": 0, "actual": 1, "correct": 0
    }  # fmt: skip
    r = bridge.repair_scores({(0, 0): "a", (1, 1): "x", (5, 5): "q"}, {(0, 0): "a", (1, 1): "b"})
    assert (r.correct, r.found, r.actual) == (1, 3, 2)  # a wrong value is no repair


def test_row_numbers_must_agree_with_rahas(tmp_path):
    class Fake:  # a Raha Dataset as far as facet_detection looks
        dataframe = pd.DataFrame({"a": ["1", "1"], "b": ["x", "y"]})

    path = tmp_path / "d.csv"
    path.write_text("a,b\n1,x\n1,y\n1,z\n")
    with pytest.raises(FacetInputError, match="facet read 3 rows but Raha read 2"):
        bridge.facet_detection(path, ["a -> b"], Fake(), "suspects")
    with pytest.raises(FacetInputError, match="suspects or cells"):
        bridge.facet_detection(path, ["a -> b"], Fake(), "pairs")


def test_without_raha_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "raha", None)  # import raha -> ImportError
    with pytest.raises(FacetInputError, match=r"pip install 'facet\[repair\]'"):
        bridge.repair(f"{HOSPITAL}/dirty.csv", [], f"{HOSPITAL}/clean.csv")
    with pytest.raises(FacetInputError, match="needs the clean file"):
        bridge.repair(f"{HOSPITAL}/dirty.csv", [])
