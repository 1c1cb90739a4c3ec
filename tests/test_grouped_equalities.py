"""Leading equalities grouped at once (:func:`facet.engine.refinement.refine_equalities`):
a count plan whose first stages are two or more same-column equalities over the
whole table runs them as one counting sort by their composite code -- in parallel
over a big table, else serially over dense composite ids.  Its counts meet
``tests/naive.py`` and the stage-by-stage path, with NULLs, row filters and every
sink (inequalities, non-equalities, a keyed sink); explain says so."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import facet
from facet.language.ast import DC, Col, Predicate
from facet.planner.config import Config
from tests.arrow_strategies import typed_tables
from tests.naive import naive_pairs
from tests.strategies import comparable, predicates, tables

#: grouped at once in parallel (parallel work from one row), serially (one thread),
#: and stage by stage
GROUPED = Config(threads=2, parallel_work=1, fuse_keyed=False, key_prefilter=False)
SERIAL = Config(threads=1, fuse_keyed=False, key_prefilter=False)
STAGED = Config(threads=1, group_equalities=False, fuse_keyed=False, key_prefilter=False)


@st.composite
def leading_equality_dcs(draw, kinds: list[str]) -> DC:
    """Two or three same-column equalities, then 0-2 other predicates."""
    cols = draw(st.lists(st.integers(0, len(kinds) - 1), min_size=2, max_size=3, unique=True))
    preds = [Predicate(Col(0, f"c{j}"), "=", Col(1, f"c{j}")) for j in cols]
    for _ in range(draw(st.integers(0, 2))):
        a = draw(st.integers(0, len(kinds) - 1))
        b = draw(st.sampled_from([j for j in range(len(kinds)) if comparable(kinds[a], kinds[j])]))
        op = draw(st.sampled_from(["<", "<=", ">", ">=", "!=", "="]))
        preds.append(Predicate(Col(0, f"c{a}"), op, Col(1, f"c{b}")))
    if draw(st.integers(0, 4)) == 0:  # a row filter: the initial pairs are no whole table
        preds.append(draw(predicates(kinds, two_tuple_bias=-3)))
    return DC(tuple(preds))


def _count_as_naive(table, dc) -> None:
    """Grouped and stage by stage, the DC's violations and rows involved are naive's."""
    pairs = naive_pairs(table, dc)
    rows = {r for p in pairs for r in p}
    for config in (GROUPED, SERIAL, STAGED):
        res = facet.detect(table, dcs=[dc], config=config)
        assert res.dcs[0].violations == len(pairs), (dc.canonical(), config.threads, table.schema)
        assert res.dcs[0].rows_involved == len(rows), (dc.canonical(), config.threads, table.schema)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_grouped_equalities_count_as_naive_and_stage_by_stage(data):
    table, kinds = data.draw(tables(max_rows=40))
    dc = data.draw(leading_equality_dcs(kinds))
    _count_as_naive(table, dc)


def test_explain_says_the_equalities_ran_as_one():
    import pyarrow as pa

    t = pa.table({"a": [1, 1, 2, 2, 1, None], "b": [5, 5, 5, 6, 5, 5], "x": [1, 2, 3, 4, 5, 6]})
    dc = "not(t.a = t'.a and t.b = t'.b and t.x > t'.x)"
    for config in (GROUPED, SERIAL):
        d = facet.explain(t, dcs=[dc], analyze=True, config=config)["dcs"][0]
        assert d["actual"]["grouped_stages"] == 2
        assert d["actual"]["violations"] == 3  # rows 0, 1, 4: (1,0), (4,0), (4,1)
        assert d["stages"][0]["actual"] is None  # its time is on the last grouped stage
        assert d["stages"][1]["actual"]["groups_out"] == 1
    staged = facet.explain(t, dcs=[dc], analyze=True, config=STAGED)["dcs"][0]
    assert "grouped_stages" not in staged["actual"]


@st.composite
def typed_leading_equality_dcs(draw, families: list[str]) -> DC:
    """Two or three same-column equalities over typed columns, then an equality or
    non-equality between columns of one family."""
    k = min(len(families), draw(st.integers(2, 3)))
    cols = draw(st.lists(st.integers(0, len(families) - 1), min_size=k, max_size=k, unique=True))
    preds = [Predicate(Col(0, f"c{j}"), "=", Col(1, f"c{j}")) for j in cols]
    a = draw(st.integers(0, len(families) - 1))
    b = draw(st.sampled_from([j for j, f in enumerate(families) if f == families[a]]))
    preds.append(Predicate(Col(0, f"c{a}"), draw(st.sampled_from(["=", "!="])), Col(1, f"c{b}")))
    return DC(tuple(preds))


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_grouped_equalities_on_typed_columns_equal_naive(data):
    """Typed Arrow inputs (ints of every width, decimals, timestamps of every unit,
    text and binary storages) grouped at once meet naive."""
    table, families = data.draw(typed_tables())
    assume(len(families) >= 2)  # two equalities need two columns
    dc = data.draw(typed_leading_equality_dcs(families))
    _count_as_naive(table, dc)
