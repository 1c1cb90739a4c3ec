"""Keys and FDs counted directly (:meth:`facet.engine.local.LocalEngine.direct_count`,
:func:`facet.engine.counting.count_key_candidates`): a whole-table count of a key
(``t.X = t'.X``) or an FD (``... and t.Y != t'.Y``) reads only the rows whose most
distinct key column holds a repeated value.  Against ``tests/naive.py`` and the
plan (``Config(key_prefilter=False)``): random tables with NULLs and repeated rows,
the packed and the numbered keys, and the two ways it hands the DC back to the
plan (too few values for few rows to pass; too many rows passing).  The kernels
meet their naive twins in ``tests/test_kernel_twins.py``."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
from facet.engine import counting
from facet.language.ast import DC, Col, Predicate
from facet.planner.config import Config
from facet.planner.explain import render_text
from tests.naive import naive_pairs
from tests.strategies import tables

CASES = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PLAN = Config(key_prefilter=False)


@st.composite
def key_dcs(draw, ncols: int) -> DC:
    """1-3 same-column equalities and, half of the time, a same-column non-equality
    on another column (an FD)."""
    cols = draw(st.permutations(range(ncols)))
    k = draw(st.integers(1, min(3, ncols - 1)))
    preds = [Predicate(Col(0, f"c{c}"), "=", Col(1, f"c{c}")) for c in cols[:k]]
    if draw(st.booleans()):
        y = cols[k]
        preds.append(Predicate(Col(0, f"c{y}"), "!=", Col(1, f"c{y}")))
    return DC(tuple(draw(st.permutations(preds))))


def _direct(table: pa.Table, dc: DC | str, config: Config | None = None) -> dict | None:
    """What the direct count read (``explain --analyze``), or None: the plan ran."""
    doc = facet.explain(table, dcs=[dc], analyze=True, config=config)
    return doc["dcs"][0]["actual"].get("direct")


@CASES
@given(data=st.data(), packed=st.booleans())
def test_direct_counts_equal_naive_and_the_plan(data, packed):
    table, kinds = data.draw(tables(max_rows=40))
    dc = data.draw(key_dcs(len(kinds)))
    pairs = naive_pairs(table, dc)
    rows = {r for p in pairs for r in p}
    saved = counting.PACKED_BITS
    counting.PACKED_BITS = 62 if packed else 0  # 0: keys numbered column by column
    try:
        for config in (Config(), Config(threads=1), PLAN):
            res = facet.detect(table, dcs=[dc], config=config)
            assert res.dcs[0].violations == len(pairs), (dc.canonical(), config)
            assert res.dcs[0].rows_involved == len(rows), (dc.canonical(), config)
    finally:
        counting.PACKED_BITS = saved
    # small tables always pass the limit: the direct count ran
    assert _direct(table, dc) is not None


def _table(n: int, values: np.ndarray, seed: int = 0) -> pa.Table:
    """``k`` (the key column ``values``), ``g`` (a second key column of 3 values)
    and ``y`` (an FD's right side with NULLs), rows shuffled."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    y = rng.integers(0, 4, n).astype(object)
    y[rng.random(n) < 0.05] = None
    return pa.table(
        {
            "k": pa.array(values[order]),
            "g": pa.array(rng.integers(0, 3, n)),
            "y": pa.array(list(y), pa.int64()),
        }
    )


DCS = [
    "not(t.k = t'.k)",
    "not(t.k = t'.k and t.g = t'.g)",
    "not(t.k = t'.k and t.y != t'.y)",
    "not(t.g = t'.g and t.k = t'.k and t.y != t'.y)",
]


@pytest.mark.parametrize("dc", DCS)
def test_a_nearly_unique_key_is_counted_directly(dc):
    """20,000 rows, 300 values of ``k`` held twice or three times: the rows read are
    those, and the counts are the plan's."""
    n = 20_000
    values = np.arange(n)
    values[:600] = np.repeat(np.arange(200), 3)  # 200 values three times
    values[600:800] = np.repeat(np.arange(200, 300), 2)  # 100 values twice
    table = _table(n, values)
    direct = _direct(table, dc)
    assert direct is not None
    want = facet.detect(table, dcs=[dc], config=PLAN).dcs[0]
    got = facet.detect(table, dcs=[dc]).dcs[0]
    assert (got.violations, got.rows_involved) == (want.violations, want.rows_involved)
    assert got.violations > 0
    assert direct["rows"] <= 800  # NULLs of y drop rows of the FDs
    text = render_text(facet.explain(table, dcs=[dc], analyze=True))
    assert "counted without this plan" in text


@pytest.mark.parametrize("dc", DCS)
def test_keys_with_many_repeated_values_go_to_the_plan(dc):
    """Of 20,000 rows over 5,000 values at least 15,000 hold a repeated one: more
    than the limit (an eighth + 1024) without a pass.  Of 20,000 rows over 17,000
    values (3,000 held twice), 3,000 repeat by that bound but 6,000 pass: the
    kernel stops at the limit.  The plan counts both."""
    n = 20_000
    few = np.arange(n) % 5_000
    some = np.arange(n)
    some[:6_000] = np.repeat(np.arange(3_000), 2)
    for values in (few, some):
        table = _table(n, values)
        assert _direct(table, dc) is None
        want = facet.detect(table, dcs=[dc], config=PLAN).dcs[0]
        got = facet.detect(table, dcs=[dc]).dcs[0]
        assert (got.violations, got.rows_involved) == (want.violations, want.rows_involved)
    # a larger share lets the second table through, with the same answer
    table = _table(n, some)
    wide = Config(key_prefilter_share=0.5)
    assert _direct(table, dc, wide)["rows"] >= 5_000
    got = facet.detect(table, dcs=[dc], config=wide).dcs[0]
    want = facet.detect(table, dcs=[dc], config=PLAN).dcs[0]
    assert (got.violations, got.rows_involved) == (want.violations, want.rows_involved)


def test_scoped_runs_and_other_shapes_use_the_plan():
    table = _table(2_000, np.arange(2_000))
    assert _direct(table, "not(t.k = t'.k)") is not None
    # a scoped run (its pairs must hold a row of the scope), a cross-column key,
    # a one-row filter, an order predicate: the plan
    doc = facet.explain(table, dcs=["not(t.k = t'.k)"], analyze=True, where="g = 1")
    assert "direct" not in doc["dcs"][0]["actual"]
    for dc in (
        "not(t.k = t'.g)",
        "not(t.k = t'.k and t.g > 0)",
        "not(t.k = t'.k and t.g < t'.g)",
    ):
        assert _direct(table, dc) is None, dc
