"""Appends to two-inequality DCs counted from dominance indexes (facet/dominance_index.py):
each indexed append's violations and rows involved equal the naive pairs of the whole
table that hold a row of its batch, on random tables (NULLs, ties, keys of ints and
text, values whose ranks move as batches bring new ones) cut at random points, for both
arrangements of the plane (``t.X op t'.X`` and ``t.X op t'.Y``) and every operator --
with the index's levels merged always, never, or as shipped; rows and pairs asked of an
indexed result come from a scoped run; DCs of other shapes beside them run scoped; the
shapes that qualify."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
import facet.dominance_index as di
from facet.api import load_dcs
from facet.detector import _ScopedSession
from facet.language.normalize import normalize
from facet.planner.config import DEFAULT
from tests.appends import appends_equal_naive
from tests.strategies import examples

SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
OPS = ["<", "<=", ">", ">="]


@st.composite
def plane_tables(draw) -> pa.Table:
    n = draw(st.integers(0, 40))
    span = draw(st.sampled_from([3, 8, 1000]))  # ties, or new values in every batch

    def ints(lo: int, hi: int, nulls: bool) -> list:
        cell = st.integers(lo, hi)
        return draw(st.lists(st.one_of(st.none(), cell) if nulls else cell, min_size=n, max_size=n))

    nulls = draw(st.booleans())
    return pa.table(
        {
            "k": pa.array(ints(0, 2, nulls), pa.int64()),
            "s": pa.array(
                [None if v is None else "abc"[v] for v in ints(0, 2, nulls)], pa.string()
            ),
            "x": pa.array(ints(-span, span, nulls), pa.int64()),
            "y": pa.array(ints(-span, span, nulls), pa.int64()),
        }
    )


@st.composite
def plane_dcs(draw) -> str:
    keys = draw(st.lists(st.sampled_from(["k", "s"]), max_size=2, unique=True))
    op1, op2 = draw(st.sampled_from(OPS)), draw(st.sampled_from(OPS))
    if draw(st.booleans()):
        ineqs = [f"t.x {op1} t'.x", f"t.y {op2} t'.y"]
    else:
        ineqs = [f"t.x {op1} t'.y", f"t.y {op2} t'.x"]
    preds = [f"t.{k} = t'.{k}" for k in keys] + ineqs
    return "not(" + " and ".join(draw(st.permutations(preds))) + ")"


@settings(max_examples=examples(250, 30), deadline=None, suppress_health_check=SLOW)
@given(data=st.data(), table=plane_tables(), merge=st.sampled_from([0, 2, 1000]))
def test_indexed_appends_equal_naive(data, table, merge, monkeypatch):
    monkeypatch.setattr(di, "_MERGE_RATIO", merge)
    texts = data.draw(st.lists(plane_dcs(), min_size=1, max_size=2))
    mixed = data.draw(st.booleans())
    if mixed:  # and a DC the index does not answer: its count is a scoped run's
        texts.append("not(t.x < t'.x and t.k != t'.k)")
    rules = load_dcs(None, texts)
    n = table.num_rows
    cuts = sorted(data.draw(st.lists(st.integers(0, n), min_size=1, max_size=6)))
    appends_equal_naive(table, rules, texts, [0, *cuts, n], all_counted=True)


def test_levels_merge_and_stay_exact():
    """Forty batches: the levels stay few (each merge at most doubles a level's
    points) and every append equals the scoped run's answer."""
    rng = np.random.default_rng(5)
    n = 4000
    table = pa.table(
        {
            "k": rng.integers(0, 4, n),
            "x": rng.integers(0, 10**6, n),  # new values in every batch: the ranks move
            "y": rng.integers(0, 50, n),
        }
    )
    rules = ["not(t.k = t'.k and t.x > t'.x and t.y < t'.y)", "not(t.x >= t'.y and t.y <= t'.x)"]
    on = facet.Detector(table.slice(0, 1000), dcs=rules)
    off = facet.Detector(table.slice(0, 1000), dcs=rules, config=DEFAULT.but(append_indexes=False))
    for lo in range(1000, n, 75):
        a, b = on.append(table.slice(lo, 75)), off.append(table.slice(lo, 75))
        assert isinstance(a._session, _ScopedSession)
        assert not isinstance(b._session, _ScopedSession)
        assert [(d.violations, d.rows_involved) for d in a.dcs] == [
            (d.violations, d.rows_involved) for d in b.dcs
        ]
    levels = [len(ix.levels) for ix in on._tallies]
    assert all(2 <= k <= 8 for k in levels), levels
    assert [ix.levels[0].size for ix in on._tallies][0] >= 1000
    assert on.totals() == off.totals()


@pytest.mark.parametrize(
    ("dc", "keys", "x", "y"),
    [
        ("not(t.a > t'.a and t.b < t'.b)", (), "a", "b"),
        ("not(t.k = t'.k and t.b <= t'.b and t.a >= t'.a)", ("k",), "b", "a"),
        ("not(t.r >= t'.s and t.s <= t'.r)", (), "s", "r"),
        ("not(t.a > t'.a and t.b < t'.b and t.c < t'.c)", None, None, None),  # three
        ("not(t.a > t'.a)", None, None, None),  # one
        ("not(t.a > t'.b and t.c < t'.d)", None, None, None),  # four columns
        ("not(t.a > t'.a and t.a < t'.b)", None, None, None),  # X and Y differ per side
        ("not(t.a = t'.a and t.a > t'.b and t.b < t'.a)", None, None, None),  # key in the plane
        ("not(t.a > t'.a and t.b < t'.b and t.c != t'.c)", None, None, None),
        ("not(t.a > t'.a and t.b < t'.b and t.c > 3)", None, None, None),
        ("not(t.k = t'.j and t.a > t'.a and t.b < t'.b)", None, None, None),
    ],
)
def test_index_shapes(dc, keys, x, y):
    got = di.shape(normalize(load_dcs(None, [dc])[0]))
    if keys is None:
        assert got is None
    else:
        assert (got.keys, got.x, got.y) == (keys, x, y)


@pytest.mark.parametrize(
    "typ",
    [pa.int8(), pa.uint16(), pa.int32(), pa.decimal128(9, 2), pa.float64(), pa.date32(),
     pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("us", tz="UTC"), pa.timestamp("ns")],
    ids=str,
)  # fmt: skip
def test_typed_columns_index_as_naive(typ):
    """The index over typed columns of every width and unit (ranks that move as
    batches bring new values, NULLs) answers as the naive pairs, append by append."""
    rng = np.random.default_rng(8)
    n = 60

    def col(span: int) -> pa.Array:
        v = rng.integers(0, span, n)
        mask = rng.random(n) < 0.1
        if pa.types.is_decimal(typ):
            from decimal import Decimal

            return pa.array([None if m else Decimal(int(x)) / 4 for x, m in zip(v, mask, strict=True)], typ)  # fmt: skip
        base = pa.int32() if pa.types.is_date32(typ) else pa.int64()
        return pa.array(v, base, mask=mask).cast(typ)

    table = pa.table({"k": rng.integers(0, 3, n), "x": col(40), "y": col(40)})
    texts = ["not(t.k = t'.k and t.x > t'.x and t.y < t'.y)", "not(t.x >= t'.y and t.y <= t'.x)"]
    rules = load_dcs(None, texts)
    appends_equal_naive(table, rules, texts, [0, 20, 35, 36, 50, n], all_counted=True)
