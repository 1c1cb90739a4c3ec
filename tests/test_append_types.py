"""Types across appends (docs/semantics.md §11): a batch converts into the table's
types only where every value stays the same number (the exact comparison of §4.1)."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

import facet
from facet.errors import FacetInputError


def _pairs(res, i: int) -> set:
    t = res.pairs()
    return {
        a if b is None else (a, b)
        for d, a, b in zip(*[t.column(c).to_pylist() for c in ("dc", "t1", "t2")], strict=True)
        if d == i
    }


def _csv(path: Path, header: str, rows: list[tuple[str, ...]]) -> Path:
    path.write_text(header + "\n" + "".join(",".join(r) + "\n" for r in rows))
    return path


# ------------------------------------------------------------------ issue 49 item 3


@pytest.mark.parametrize(
    ("table", "batch"),
    [  # each was accepted though the value changes (1.23 the float is not 1.23 the decimal)
        (pa.array([Decimal("1.23")], pa.decimal128(5, 2)), pa.array([1.23])),
        (pa.array([1.23]), pa.array([Decimal("1.23")], pa.decimal128(5, 2))),
        (pa.array([0.5], pa.float32()), pa.array([Decimal("0.1")], pa.decimal128(5, 1))),
        (pa.array([Decimal(1)], pa.decimal128(38, 30)), pa.array([0.1])),
        (pa.array([2.0]), pa.array([Decimal(2**53 + 1)], pa.decimal128(20, 0))),
    ],
)
def test_a_float_and_a_decimal_of_different_values_are_refused(table, batch):
    """facet.detect compares a float and a decimal by exact value, so the batch's
    value converted into the table's type would be another number: refused, and
    the detector is unchanged."""
    both = pa.table({"a": pa.concat_arrays([table, pa.nulls(len(batch), table.type)]),
                     "b": pa.concat_arrays([pa.nulls(len(table), batch.type), batch])})  # fmt: skip
    rounded = batch.cast(table.type, safe=False)[0]
    mixed = pa.table({"a": pa.array([rounded], table.type), "b": batch})
    assert facet.detect(mixed, dcs=["not(t.a = t.b)"]).total_violations == 0  # they differ
    assert facet.detect(both, dcs=["not(t.a = t'.b)"]).total_violations == 0
    det = facet.Detector(pa.table({"a": table}), dcs=["not(t.a = t'.a)", "not(t.a <= t'.a)"])
    before = det.totals()
    with pytest.raises(FacetInputError, match=re.escape("a value would change")):
        det.append(pa.table({"a": batch}))
    assert det.totals() == before and det.rows == len(table)


@pytest.mark.parametrize(
    ("table", "batch"),
    [  # the same numbers: taken (an int past 2**53 that float64 holds was refused)
        (pa.array([Decimal("1.25")], pa.decimal128(5, 2)), pa.array([1.25])),
        (pa.array([2.5]), pa.array([Decimal("2.50")], pa.decimal128(5, 2))),
        (pa.array([2.0**60]), pa.array([2**60], pa.int64())),
        (pa.array([2.0**60], pa.float32()), pa.array([2**60], pa.uint64())),
        (pa.array([Decimal(100)], pa.decimal128(6, -2)), pa.array([100.0])),
    ],
)
def test_a_float_and_a_decimal_of_one_value_are_taken(table, batch):
    det = facet.Detector(pa.table({"a": table}), dcs=["not(t.a = t'.a)"])
    assert det.append(pa.table({"a": batch})).dcs[0].violations == 2
    assert det.totals()["total_violations"] == 2
