"""Property tests that reach every kernel branch through the whole engine.

``test_properties.py`` draws tiny domains, where every kernel takes its counting
sort / histogram / code-indexed branch.  Here tables also have large domains
(ints to +-2^62, sparse values, floats from subnormal to huge, many distinct
strings), long tie runs and now and then a few hundred rows, and every run has a
:class:`Config` with extreme thresholds (comparison sorts, binary searches and
compressed ranks, hash tables, IEJoin's insertion sort on or off, the partitioned
text dictionary, nested pairs off, parts on 2-3 threads, forced algorithms, tiny
batches and pair chunks).  Counts, rows involved and pair sets must equal
``tests/naive.py``'s.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import facet
from facet.language.ast import DC, Col, Const, Predicate
from tests.naive import naive_pairs
from tests.strategies import configs, examples, wide_dcs, wide_tables
from tests.test_properties import block_pairs, facet_pairs, involved

SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def check_pairs(table: pa.Table, dc: DC, config) -> None:
    note(f"DC: {dc.canonical()}")
    note(f"config: {config}")
    expected = naive_pairs(table, dc)
    res = facet.detect(table, dcs=[dc], output="pairs", config=config)
    got = facet_pairs(res, dc.arity)
    assert got == expected
    d = res.dcs[0]
    assert d.violations == len(expected)
    assert d.rows_involved == involved(expected, dc.arity)
    assert d.written == len(expected)


@settings(max_examples=examples(220, 25), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_wide_tables_extreme_configs_equal_naive(data):
    """Counts (counting sinks), rows involved and pairs (refinements + expansion)."""
    table, kinds = data.draw(wide_tables())
    dc = data.draw(wide_dcs(table, kinds))
    check_pairs(table, dc, data.draw(configs()))


@settings(max_examples=examples(60, 6), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_many_rows_and_tie_runs_equal_naive(data):
    """A few hundred rows every time: domains past every '+ 64' slack of the
    kernels' branch tests, and runs of hundreds of equal values."""
    table, kinds = data.draw(wide_tables(min_rows=150, max_rows=300, big_rows=0, max_cols=3))
    dc = data.draw(wide_dcs(table, kinds, max_preds=3))
    check_pairs(table, dc, data.draw(configs()))


@settings(max_examples=examples(60, 6), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_wide_tables_blocks_expand_to_pairs(data):
    table, kinds = data.draw(wide_tables())
    dc = data.draw(wide_dcs(table, kinds))
    config = data.draw(configs())
    note(f"DC: {dc.canonical()}")
    note(f"config: {config}")
    res = facet.detect(table, dcs=[dc], output="blocks", config=config)
    assert block_pairs(res, dc.arity) == naive_pairs(table, dc)


@pytest.mark.parametrize(
    "dc",
    [
        DC((Predicate(Col(0, "a"), "<", Col(1, "b")),)),
        DC((Predicate(Col(0, "a"), "<", Col(1, "a")), Predicate(Col(0, "a"), "<", Const("0.5")))),
        DC((Predicate(Col(0, "a"), "=", Const(str(-(2**63)))),)),
        DC(
            (
                Predicate(Col(0, "a"), "<", Col(1, "a")),
                Predicate(Col(0, "a"), "<", Const(str(2**63 - 1))),
            )
        ),
    ],
    ids=[
        "int-meets-float-column",
        "int-meets-fractional-constant",
        "int64-min-constant",
        "int64-max-constant",
    ],  # fmt: skip
)
def test_big_ints_meet_floats_exactly(dc):
    """An int64 beyond 2^53 compared with a float compares exactly (no rounding), and
    an integer constant is an integer up to int64's limits."""
    table = pa.table(
        {
            "a": pa.array([2**62, 2**62 + 1, 3, -(2**63)], pa.int64()),
            "b": pa.array([2.0**62, 1.5, 0.0, -(2.0**63)], pa.float64()),
        }
    )
    res = facet.detect(table, dcs=[dc], output="pairs")
    assert facet_pairs(res, dc.arity) == naive_pairs(table, dc)
