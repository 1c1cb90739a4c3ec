"""Fused keyed counts: the engine's fused plans
(:func:`facet.engine.counting.count_plan`) against ``tests/naive.py`` and the
refined path, on every shape the fusion takes: same- and cross-column
equalities, a final equality or non-equality, NULLs, row filters (left and
right sides differ), scoped runs (two groups), one or several threads.  The
kernel, :func:`facet.kernels.composite.count_composite`, meets its naive twin in
``tests/test_kernel_twins.py``."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
from facet.language.ast import DC, Col, Predicate
from facet.language.where import parse_where
from facet.planner.config import Config
from tests.arrow_strategies import typed_tables
from tests.naive import naive_pairs
from tests.strategies import comparable, predicates, tables
from tests.test_where import scope_rows, scoped, where_texts

CASES = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def keyed_dcs(draw, kinds: list[str]) -> DC:
    """A DC the fusion takes: 0-3 equalities and a final equality or non-equality
    (same or cross column), sometimes with a row filter."""

    def pair(op: str) -> Predicate:
        a = draw(st.integers(0, len(kinds) - 1))
        choices = [j for j in range(len(kinds)) if comparable(kinds[a], kinds[j])]
        b = a if draw(st.booleans()) else draw(st.sampled_from(choices))
        return Predicate(Col(0, f"c{a}"), op, Col(1, f"c{b}"))

    preds = [pair("=") for _ in range(draw(st.integers(0, 3)))]
    preds.append(pair(draw(st.sampled_from(["=", "!="]))))
    if draw(st.integers(0, 3)) == 0:  # a constant or one-row filter on one side
        preds.append(draw(predicates(kinds, two_tuple_bias=-3)))
    return DC(tuple(preds))


#: always fused where the shape allows, on one and on several threads; and never
#: (keys and FDs would be counted directly first: tests/test_direct_keys.py)
FUSED = [
    Config(fuse_keyed_tids=1 << 40, key_prefilter=False),
    Config(threads=1, key_prefilter=False),
    Config(threads=3, key_prefilter=False),
    # cut into pieces by the first equality's codes, one a thread
    Config(threads=3, fuse_split_tids=0, key_prefilter=False),
]
REFINED = Config(fuse_keyed=False, key_prefilter=False)


@CASES
@given(data=st.data())
def test_fused_counts_equal_naive_and_the_refined_path(data):
    table, kinds = data.draw(tables(max_rows=40))
    dc = data.draw(keyed_dcs(kinds))
    pairs = naive_pairs(table, dc)
    rows = {r for p in pairs for r in p}
    for config in [*FUSED, REFINED]:
        res = facet.detect(table, dcs=[dc], config=config)
        assert res.dcs[0].violations == len(pairs), (dc.canonical(), config)
        assert res.dcs[0].rows_involved == len(rows), (dc.canonical(), config)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fused_scoped_counts_equal_naive_pairs_touching_the_scope(data):
    table, kinds = data.draw(tables(max_rows=25))
    dc = data.draw(keyed_dcs(kinds))
    text = data.draw(where_texts(kinds))
    scope = scope_rows(parse_where(text), lambda p: naive_pairs(table, DC((p,))), table.num_rows)
    want = scoped(naive_pairs(table, dc), scope)
    for config in (FUSED[0], REFINED):
        res = facet.detect(table, dcs=[dc], where=text, config=config)
        assert res.dcs[0].violations == len(want), (text, dc.canonical())
        assert res.dcs[0].rows_involved == len({r for p in want for r in p})


def test_the_fused_shapes_run_fused_and_explain_says_so():
    """Two equalities before a non-equality (φ8's shape), one before a non-equality,
    and a cross-column equality before an equality (φ10's) run fused; one same-column
    equality before an equality is refined."""
    import pyarrow as pa

    from facet.api import open_session
    from facet.engine.counting import fuses

    t = pa.table({"a": [1, 2, 1, 2, 1], "b": [2, 1, 2, 1, 2], "d": [5, 5, 6, 5, 5]})
    shapes = {
        "not(t.a = t'.b and t.b = t'.a and t.d != t'.d)": True,
        "not(t.a = t'.a and t.d != t'.d)": True,
        "not(t.a = t'.a and t.b = t'.b)": False,
        "not(t.a = t'.b and t.b = t'.a)": True,  # φ10's: a semi-join first
    }
    for text, fused in shapes.items():
        s = open_session(t, dcs=[text]).session
        assert fuses(s.engine.ctx, s.plan(0, "count"), s.initial(0)) is fused, text
    # past Config.fuse_keyed_tids on several threads: only with a cross-column equality
    big = Config(fuse_keyed_tids=1, threads=2)
    for text, fused in {
        "not(t.a = t'.b and t.b = t'.a and t.d != t'.d)": True,
        "not(t.a = t'.a and t.b = t'.b and t.d != t'.d)": False,
        "not(t.a = t'.a and t.d != t'.d)": False,
        "not(t.a = t'.a and t.b = t'.a)": True,
    }.items():
        s = open_session(t, dcs=[text], config=big).session
        assert fuses(s.engine.ctx, s.plan(0, "count"), s.initial(0)) is fused, text
    from facet.planner.explain import render_text

    doc = facet.explain(t, dcs=["not(t.a = t'.b and t.b = t'.a and t.d != t'.d)"], analyze=True)
    assert doc["dcs"][0]["count_sink"]["actual"]["fused_stages"] == 2
    assert "ran fused with the 2 equality stages" in render_text(doc)
    assert doc["dcs"][0]["actual"]["violations"] == 4  # row 2 (d = 6) with rows 1 and 3, both ways


@st.composite
def keyed_typed_dcs(draw, families: list[str]) -> DC:
    """A fusable DC over typed columns (tests/arrow_strategies.py): 0-3 equalities
    and a final equality or non-equality between columns of one family (numbers
    of any width against each other, timestamps of any unit and zone, ...)."""

    def pair(op: str) -> Predicate:
        a = draw(st.integers(0, len(families) - 1))
        same = [j for j, f in enumerate(families) if f == families[a]]
        b = draw(st.sampled_from(same))
        return Predicate(Col(0, f"c{a}"), op, Col(1, f"c{b}"))

    preds = [pair("=") for _ in range(draw(st.integers(0, 3)))]
    preds.append(pair(draw(st.sampled_from(["=", "!="]))))
    return DC(tuple(preds))


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_fused_counts_on_typed_columns_equal_naive(data):
    """Typed Arrow inputs -- uint64 past int64 against int64, floats of every width,
    decimals, timestamps of every unit and zone, text and binary storages, booleans,
    null-type columns -- through the fused plans, the refined path and naive."""
    table, families = data.draw(typed_tables())
    dc = data.draw(keyed_typed_dcs(families))
    pairs = naive_pairs(table, dc)
    rows = {r for p in pairs for r in p}
    for config in [*FUSED, REFINED, Config()]:  # Config(): keys and FDs counted directly
        res = facet.detect(table, dcs=[dc], config=config)
        assert res.dcs[0].violations == len(pairs), (dc.canonical(), table.schema, config)
        assert res.dcs[0].rows_involved == len(rows), (dc.canonical(), table.schema, config)
