"""Types across appends (docs/semantics.md §11): a batch converts into the table's
types only where every value stays the same number (the exact comparison of §4.1);
a column that holds no value yet takes its type from the first batch that brings
one; a CSV column widening from int64 to float64 is refused where float64 would
change a comparison already answered (of two values, or of a value with a
constant).  Every accepted append agrees with one run of the whole table
(tests/naive.py), and a refused one changes nothing."""

from __future__ import annotations

import decimal
import itertools
import math
import re
import tempfile
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
from facet.errors import FacetInputError
from facet.language import parse_dc
from tests.appends import within
from tests.naive import naive_pairs


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


# ------------------------------------------------------------------ issue 49 item 6


def test_a_csv_column_without_values_takes_the_first_batch_type(tmp_path):
    """A header-only base (or a column of empty fields) fixed the column as
    integers, so a batch's dates were all NULL and the append missed every
    violation; untyped until a batch brings values, it is typed by them."""
    pair, constant = "not(t.d < t'.d and t.k = t'.k)", "not(t.d > '2024-01-01')"
    batch = [("2024-01-02", "x"), ("2024-01-01", "x"), ("2023-12-31", "y")]
    for base, dcs in itertools.product(
        ([], [("", "x")], [("", "x"), ("", "y")]), ([pair], [pair, constant])
    ):
        b0 = _csv(tmp_path / "base.csv", "d,k", base)
        b1 = _csv(tmp_path / "b1.csv", "d,k", [])  # an empty batch leaves it untyped
        b2 = _csv(tmp_path / "b2.csv", "d,k", batch)
        whole = _csv(tmp_path / "whole.csv", "d,k", base + batch)
        det = facet.Detector(b0, dcs=dcs)
        assert det.initial.total_violations == 0
        assert det.append(b1).total_violations == 0
        res = det.append(b2)
        full = facet.detect(whole, dcs=dcs)
        assert [d.violations for d in res.dcs] == [d.violations for d in full.dcs]
        assert res.dcs[0].violations == 1
        assert not res.warnings
        # typed now: a batch of numbers there is NULL, as the first values decided
        b3 = _csv(tmp_path / "b3.csv", "d,k", [("5", "x")])
        assert det.append(b3).total_violations == 0


def test_a_csv_column_without_values_meets_a_declared_column(tmp_path):
    """An empty column compared with a column --schema declares took int64 and
    clashed with it (facet.detect too): it takes the declared kind."""
    path = _csv(tmp_path / "e.csv", "a,b", [("", "2024-01-01")])
    dc = ["not(t.a < t'.b)"]
    assert facet.detect(path, dcs=dc, schema="b:timestamp").total_violations == 0
    det = facet.Detector(path, dcs=dc, schema="b:timestamp")
    batch = _csv(tmp_path / "b.csv", "a,b", [("2023-01-01", "2022-01-01")])
    whole = _csv(tmp_path / "w.csv", "a,b", [("", "2024-01-01"), ("2023-01-01", "2022-01-01")])
    got = det.append(batch).total_violations
    assert got == facet.detect(whole, dcs=dc, schema="b:timestamp").total_violations == 1


@pytest.mark.parametrize(
    ("base", "batch"),
    [  # a typed column with no value yet (all NULL, or the null type) refused a batch
        (pa.nulls(2), pa.array([datetime(2024, 1, 2), datetime(2024, 1, 1)])),
        (pa.nulls(2, pa.int64()), pa.array([2.5, 1.5])),
        (pa.array([None, None], pa.float64()), pa.array(["b", "a"])),
        (pa.array([], pa.int8()), pa.array([300, 200], pa.int16())),
    ],
)
def test_a_typed_column_without_values_takes_the_first_batch_type(base, batch):
    det = facet.Detector(pa.table({"a": base}), dcs=["not(t.a > t'.a)"])
    assert det.append(pa.table({"a": pa.nulls(1, pa.float64())})).total_violations == 0
    res = det.append(pa.table({"a": batch}))
    assert res.dcs[0].violations == 1
    whole = pa.table({"a": pa.concat_arrays([pa.nulls(len(base) + 1, batch.type), batch])})
    assert facet.detect(whole, dcs=["not(t.a > t'.a)"]).total_violations == 1
    with pytest.raises(FacetInputError):  # typed now: another kind is refused
        det.append(pa.table({"a": pa.array([True])}) if batch.type == pa.string() else
                   pa.table({"a": pa.array(["z"])}))  # fmt: skip


# ------------------------------------------------------------------ issue 49 item 7


def test_a_widening_that_rounds_a_constant_is_refused(tmp_path):
    """An int column widened to float64 by a batch's fraction rounded the DC's
    constant 2**53 + 1 for the batch's rows (a float64 column's constant is
    rounded, §4.4) but not for the rows answered as ints: base + appends were not
    one run.  Refused where a row already answered would compare otherwise."""
    dcs = ["not(t.a = 9007199254740993)", "not(t.a < 9007199254740993)"]
    base = _csv(tmp_path / "base.csv", "a", [("9007199254740992",)])
    batch = _csv(tmp_path / "batch.csv", "a", [("0.5",), ("9007199254740992",)])
    det = facet.Detector(base, dcs=dcs)
    assert [d.violations for d in det.initial.dcs] == [0, 1]
    with pytest.raises(
        FacetInputError,
        match=re.escape(
            "batch.csv: column 'a' would widen from int64 to float64 (the batch brings a "
            "fraction or a number past int64), but an answer already given would change: "
            "--dc:1: t.a = 9007199254740993 does not hold for 9007199254740992 and "
            "9007199254740993, but it does once float64 rounds them to 9007199254740992 and "
            "9007199254740992; give the column's type up front (schema a:float"
        ),
    ):
        det.append(batch)
    assert det.rows == 1 and det.totals()["total_violations"] == 1
    # rows far from the constant: the widening changes nothing already answered
    far = _csv(tmp_path / "far.csv", "a", [("7",)])
    whole = _csv(tmp_path / "whole.csv", "a", [("7",), ("0.5",), ("9007199254740992",)])
    det = facet.Detector(far, dcs=dcs)
    res = det.append(batch)
    assert any("widened from int64 to float64" in w for w in res.warnings)
    full = facet.detect(whole, dcs=dcs)
    assert [a["violations"] for a in det.totals()["dcs"]] == [d.violations for d in full.dcs]
    assert [d.violations for d in full.dcs] == [1, 2]


def test_a_widening_is_judged_over_the_whole_component(tmp_path):
    """A fraction in column b widens a too when a DC compares them (one component):
    a's 2**53 + 1 and 2**53 would become equal.  Only b's rows were checked."""
    dcs = ["not(t.a < t'.a)", "not(t.a < t'.b)"]
    base = _csv(
        tmp_path / "base.csv", "a,b", [("9007199254740993", "1"), ("9007199254740992", "2")]
    )
    batch = _csv(tmp_path / "batch.csv", "a,b", [("3", "0.5")])
    det = facet.Detector(base, dcs=dcs)
    with pytest.raises(
        FacetInputError, match=re.escape("columns 'a', 'b' would widen from int64 to float64")
    ):
        det.append(batch)
    assert det.rows == 2


def test_a_widening_that_changes_no_answer_is_taken(tmp_path):
    """2**53 + 1 rounds to 2**53, but no other value or constant is near it: the
    widening changes no comparison (it was refused for holding the value)."""
    dcs = ["not(t.a < t'.a)", "not(t.a = 9007199254740990)", "not(t.a >= 2e16)"]
    base = _csv(tmp_path / "base.csv", "a", [("9007199254740993",), ("1",)])
    batch = _csv(tmp_path / "batch.csv", "a", [("0.5",)])
    whole = _csv(tmp_path / "whole.csv", "a", [("9007199254740993",), ("1",), ("0.5",)])
    det = facet.Detector(base, dcs=dcs)
    det.append(batch)
    full = facet.detect(whole, dcs=dcs)
    assert [a["violations"] for a in det.totals()["dcs"]] == [d.violations for d in full.dcs]


# ------------------------------------------------------------------ properties

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TYPES = [
    pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint64(),
    pa.float32(), pa.float64(),
    pa.decimal128(5, 2), pa.decimal128(20, 0), pa.decimal128(38, 10), pa.decimal128(6, -2),
]  # fmt: skip
VALUES: list[Any] = [
    0, 1, -1, 7, 100, 300, -129, 2**24 + 1, 2**53, 2**53 + 1, 2**53 + 2, -(2**53) - 1,
    2**60, 2**63 - 1, -(2**63), 2**63, 2**64 - 1,
    0.5, -2.5, 1.23, 0.1, 1.25, 1e300, 2.0**53, 2.0**63,
    Decimal("1.23"), Decimal("0.125"), Decimal("1234.5"), Decimal("2.50"), Decimal("0.1"),
]  # fmt: skip
CONSTANTS = [
    "9007199254740993", "9007199254740992", "9007199254740992.5", "0.5", "1.23", "0.1",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e-400", "100",
]  # fmt: skip
DCS = [
    "not(t.a < t'.a)", "not(t.a = t'.a)", "not(t.a <= t'.a)", "not(t.a < t'.b)",
    "not(t.a >= t'.b)", "not(t.a < t.b)", "not(t.a = t.b)", "not(t.b > t'.b)",
    "not(t.a = C)", "not(t.a < C)", "not(t.a >= C)", "not(t.b > C)", "not(t.b != C)",
]  # fmt: skip


def _fits(v: Any, typ: pa.DataType) -> bool:
    """Whether ``typ`` holds the number ``v`` exactly."""
    if isinstance(v, float) and not math.isfinite(v):
        return False
    if pa.types.is_integer(typ):
        info = np.iinfo(typ.to_pandas_dtype())
        return v == int(v) and int(info.min) <= v <= int(info.max)
    if pa.types.is_floating(typ):
        if float(v) != v:
            return False
        if typ.bit_width == 64:
            return True
        with np.errstate(over="ignore"):
            return float(np.float32(float(v))) == v
    with decimal.localcontext(prec=1000):
        q = Decimal(v).scaleb(typ.scale)
    return q == q.to_integral_value() and abs(q) < 10**typ.precision


def _array(values: list[Any], typ: pa.DataType) -> pa.Array:
    """``values`` (each one ``typ`` holds, or None) as a ``typ`` array."""
    if pa.types.is_null(typ):
        return pa.nulls(len(values))
    if pa.types.is_integer(typ):
        return pa.array([None if v is None else int(v) for v in values], typ)
    if pa.types.is_floating(typ):
        return pa.array([None if v is None else float(v) for v in values], typ)
    with decimal.localcontext(prec=1000):
        unit = Decimal(1).scaleb(-typ.scale)
        return pa.array([None if v is None else Decimal(v).quantize(unit) for v in values], typ)


@st.composite
def _typed_column(draw: Any, rows: int, typ: pa.DataType | None = None) -> tuple:
    """A column of ``rows`` values of one type (drawn when not given): only NULLs,
    or the pool's values the type holds."""
    typ = typ if typ is not None else draw(st.sampled_from(TYPES))
    held = [v for v in VALUES if _fits(v, typ)]
    values = draw(st.lists(st.sampled_from([None, *held]), min_size=rows, max_size=rows))
    return typ, values


def _rules(draw: Any) -> list:
    texts = draw(st.lists(st.sampled_from(DCS), min_size=1, max_size=3, unique=True))
    return [
        parse_dc(t.replace("C", draw(st.sampled_from(CONSTANTS))), source="--dc", line=i + 1)[0]
        for i, t in enumerate(texts)
    ]


def _check_append(det, res, rules, table: pa.Table, lo: int) -> None:
    """The append (rows ``lo ..``) holds exactly the whole table's violations
    holding one of its rows, and the totals are the whole table's."""
    full = [naive_pairs(table, dc) for dc in rules]
    hi = table.num_rows
    for i, dc in enumerate(rules):
        want = within(full[i], 0, hi) - within(full[i], 0, lo)
        assert _pairs(res, i) == want, dc.canonical()
    assert [d["violations"] for d in det.totals()["dcs"]] == [len(f) for f in full]


@PROPERTY
@given(data=st.data())
def test_typed_appends_of_every_numeric_kind_equal_one_run(data):
    """Batches of every numeric type: a batch is taken exactly when every value is
    the same number in the table's type (a column without a value yet takes the
    batch's type), and then agrees with one run of the whole table; a refused one
    changes nothing."""
    rules = _rules(data.draw)
    used = {c.name for dc in rules for p in dc.predicates for c in p.columns()}
    n0 = data.draw(st.integers(0, 3))
    types: dict[str, pa.DataType] = {}
    values: dict[str, list] = {}
    for c in sorted(used):
        if data.draw(st.booleans()) and data.draw(st.booleans()):
            types[c], values[c] = pa.null(), [None] * n0
        else:
            types[c], values[c] = data.draw(_typed_column(n0))
    det = facet.Detector(
        pa.table({c: _array(values[c], types[c]) for c in types}), dcs=rules, output="pairs"
    )
    table = pa.table({c: _array(values[c], types[c]) for c in types})
    _check_append(det, det.initial, rules, table, 0)
    for _ in range(data.draw(st.integers(1, 3))):
        m = data.draw(st.integers(0, 4))
        batch = {c: data.draw(_typed_column(m)) for c in types}
        new_types = dict(types)
        taken = True
        for c, (typ, vals) in batch.items():
            if not any(v is not None for v in vals):
                continue  # no value: NULL in any type
            if not any(v is not None for v in values[c]):
                new_types[c] = typ  # the first values type the column
            elif not all(v is None or _fits(v, types[c]) for v in vals):
                taken = False
        arrow_batch = pa.table({c: _array(vals, typ) for c, (typ, vals) in batch.items()})
        before = det.totals()
        if not taken:
            with pytest.raises(FacetInputError, match="does not convert exactly"):
                det.append(arrow_batch, output="pairs")
            assert det.totals() == before
            continue
        lo = det.rows
        res = det.append(arrow_batch, output="pairs")
        types = new_types
        for c in types:
            values[c] = values[c] + batch[c][1]
        table = pa.table({c: _array(values[c], types[c]) for c in types})
        _check_append(det, res, rules, table, lo)


CSV_VALUES = [
    "", "0", "1", "-3", "7", "2.5", "0.5", "1.23", "1e3", "9007199254740992",
    "9007199254740993", "9007199254740994", "-9007199254740993", "1152921504606846977",
    "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1e-400",
]  # fmt: skip


def _number(text: str) -> Decimal:
    return Decimal(text.strip())


def _integral(texts: list[str]) -> bool:
    """Every number an int64 (§4.3: whole and within int64)."""
    for t in texts:
        d = _number(t)
        if d != d.to_integral_value() or not -(2**63) <= d < 2**63:
            return False
    return True


def _typed_csv(rows: dict[str, list[str]], rules: list) -> pa.Table:
    """The whole CSV table typed as one run types it (§4.3; the pool holds numbers
    only): an ordered component as int64 when every value is, else float64 (all
    NULL when it holds none); another column as its text."""
    linked = any({c.name for c in p.columns()} == {"a", "b"} for d in rules for p in d.predicates)
    ordered = {c.name for d in rules for p in d.predicates if p.is_order for c in p.columns()}
    if linked and ordered:
        ordered = {"a", "b"}
    comps = [["a", "b"]] if linked else [["a"], ["b"]]
    out = {}
    for comp in comps:
        texts = [t for c in comp for t in rows[c] if t]
        for c in comp:
            vals = [t or None for t in rows[c]]
            if c not in ordered:
                out[c] = pa.array(vals, pa.string())
            elif not texts:
                out[c] = pa.nulls(len(vals))
            elif _integral(texts):
                out[c] = pa.array([None if v is None else int(_number(v)) for v in vals])
            else:
                out[c] = pa.array([None if v is None else float(v) for v in vals], pa.float64())
    return pa.table(out)


def _changes(rows: dict[str, list[str]], rules: list, widened: set[str]) -> bool:
    """Whether reading ``widened`` as float64 changes some comparison of the rows
    (two rows, one row, or a row and a constant), by brute force."""
    import operator

    ops = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
           ">": operator.gt, ">=": operator.ge}  # fmt: skip
    exact = {c: [None if not t else int(_number(t)) for t in rows[c]] for c in rows}

    def seen(c: str, v: Any) -> Any:
        return v if v is None or c not in widened else float(v)

    n = len(rows["a"])
    for dc in rules:
        for p in dc.predicates:
            f = ops[p.op]
            left, right = p.left, p.right
            if not hasattr(right, "name"):  # a constant
                if left.name not in widened:
                    continue
                k = _number(right.text)
                if any(
                    x is not None and f(x, k) != f(float(x), float(k)) for x in exact[left.name]
                ):
                    return True
                continue
            pairs = [(i, i) for i in range(n)] if left.tuple == right.tuple else [
                (i, j) for i in range(n) for j in range(n) if i != j
            ]  # fmt: skip
            for i, j in pairs:
                x, y = exact[left.name][i], exact[right.name][j]
                if x is None or y is None:
                    continue
                if f(x, y) != f(seen(left.name, x), seen(right.name, y)):
                    return True
    return False


@PROPERTY
@given(data=st.data())
def test_csv_appends_of_numbers_equal_one_run(data):
    """CSV batches of numbers near 2**53 and int64's limits, fractions, empty
    batches and batches of empty fields: each taken append agrees with one run of
    the whole table; an append is refused exactly when it widens int64 columns
    that float64 would compare otherwise (with a value or a constant), and a
    refused append changes nothing."""
    rules = _rules(data.draw)
    texts = st.sampled_from(CSV_VALUES)
    n0 = data.draw(st.integers(0, 3))
    rows = {c: data.draw(st.lists(texts, min_size=n0, max_size=n0)) for c in ("a", "b")}
    with tempfile.TemporaryDirectory() as tmp:
        paths = iter(Path(tmp) / f"part{k}.csv" for k in range(10))

        def write(part: dict[str, list[str]]) -> Path:
            return _csv(next(paths), "a,b", list(zip(part["a"], part["b"], strict=True)))

        det = facet.Detector(write(rows), dcs=rules, output="pairs")
        _check_append(det, det.initial, rules, _typed_csv(rows, rules), 0)
        for _ in range(data.draw(st.integers(1, 3))):
            m = data.draw(st.integers(0, 3))
            part = {c: data.draw(st.lists(texts, min_size=m, max_size=m)) for c in rows}
            grown = {c: rows[c] + part[c] for c in rows}
            was, now = _typed_csv(rows, rules), _typed_csv(grown, rules)
            widened = {c for c in rows if was[c].type == pa.int64() and now[c].type != pa.int64()}
            before = det.totals()
            if widened and _changes(rows, rules, widened):
                with pytest.raises(FacetInputError, match="would widen from int64 to float64"):
                    det.append(write(part), output="pairs")
                assert det.totals() == before
                continue
            lo = det.rows
            res = det.append(write(part), output="pairs")
            rows = grown
            _check_append(det, res, rules, now, lo)
        whole = write(rows)
        assert det.totals()["total_violations"] == facet.detect(whole, dcs=rules).total_violations
