"""Property tests: facet equals the naive O(n^2) evaluator (bench/README.md "Rules").

Random small typed tables (NULLs, NaN, ties, duplicate rows, ints/floats/strings,
1-60 rows) and random DCs (1-5 predicates, all six operators, same- and
cross-column, constants, single-tuple); counts, rows involved, pair sets and
block expansions must all be equal.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
from facet.language.parser import parse_dc
from facet.planner.config import Config
from tests.naive import naive_cells, naive_pairs
from tests.strategies import dcs, tables

#: nested_pairs=0 sends every group through the real kernels; small values mix both
CONFIGS = st.sampled_from(
    [
        Config(nested_pairs=0),
        Config(nested_pairs=0, inequality="bhsm", bhsm_bins=3),
        Config(nested_pairs=0, inequality="cdq"),
        Config(nested_pairs=7, inequality="bhsm", bhsm_bins=2),
        Config(nested_pairs=0, threads=3, parallel_work=1),  # parts on threads
        Config(nested_pairs=0, storage="bitmaps"),
        Config(nested_pairs=0, storage="hybrid", bitmap_min_tids=20, inequality="bhsm"),
        Config(),
    ]
)

CASES = settings(
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def facet_pairs(result, arity: int) -> set:
    t = result.pairs()
    t1 = t.column("t1").to_numpy()
    if arity == 1:
        assert t.column("t2").null_count == len(t)
        return set(t1.tolist())
    t2 = t.column("t2").to_numpy()
    return set(zip(t1.tolist(), t2.tolist(), strict=True))


def block_pairs(result, arity: int) -> set:
    out: set = set()
    for row in result.blocks().to_pylist():
        if arity == 1:
            assert row["t1"], "an empty block"
            out.update(row["t1"])
            continue
        assert any(a != b for a in row["t1"] for b in row["t2"]), "a block without a pair"
        for a in row["t1"]:
            for b in row["t2"]:
                if a != b:
                    assert (a, b) not in out, "blocks overlap"
                    out.add((a, b))
    return out


def involved(pairs: set, arity: int) -> int:
    if arity == 1:
        return len(pairs)
    return len({t for p in pairs for t in p})


@CASES
@given(st.data())
def test_counts_and_pairs_equal_naive(data):
    table, kinds = data.draw(tables())
    dc = data.draw(dcs(kinds))
    expected = naive_pairs(table, dc)
    res = facet.detect(table, dcs=[dc], output="pairs", config=data.draw(CONFIGS))
    got = facet_pairs(res, dc.arity)
    assert got == expected, dc.canonical()
    d = res.dcs[0]
    assert d.violations == len(expected), dc.canonical()
    assert d.rows_involved == involved(expected, dc.arity), dc.canonical()
    assert d.written == len(expected)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_blocks_expand_to_pairs(data):
    table, kinds = data.draw(tables())
    dc = data.draw(dcs(kinds))
    expected = naive_pairs(table, dc)
    res = facet.detect(table, dcs=[dc], output="blocks", config=data.draw(CONFIGS))
    assert block_pairs(res, dc.arity) == expected, dc.canonical()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_limit_keeps_a_subset(data):
    table, kinds = data.draw(tables())
    dc = data.draw(dcs(kinds))
    limit = data.draw(st.integers(0, 20))
    expected = naive_pairs(table, dc)
    res = facet.detect(table, dcs=[dc], output="pairs", limit=limit, config=data.draw(CONFIGS))
    got = facet_pairs(res, dc.arity)
    assert len(got) == min(limit, len(expected))
    assert got <= expected
    assert res.dcs[0].violations == len(expected)  # counts ignore the limit


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_many_dcs_in_one_run(data):
    """DCs of one run share typing and encoding; each answer must stay its own."""
    table, kinds = data.draw(tables())
    batch = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(2, 4)))]
    res = facet.detect(table, dcs=batch, output="pairs", config=data.draw(CONFIGS))
    pairs = res.pairs()
    for i, dc in enumerate(batch):
        expected = naive_pairs(table, dc)
        assert res.dcs[i].violations == len(expected), dc.canonical()
        sub = pairs.filter(np.asarray(pairs.column("dc").to_numpy() == i))
        if dc.arity == 1:
            got = set(sub.column("t1").to_pylist())
        else:
            got = set(zip(sub.column("t1").to_pylist(), sub.column("t2").to_pylist(), strict=True))
        assert got == expected, dc.canonical()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_bounds_on_both_sides_equal_naive(data):
    """``t.A <= t'.B and t.A >= t'.B`` (either written way round, with more predicates)
    runs as the equality it is (language/normalize.py): the naive evaluator, which reads
    the predicates as written, agrees on pairs, rows and cells."""
    table, kinds = data.draw(tables())
    a = data.draw(st.integers(0, len(kinds) - 1))
    same = [j for j, k in enumerate(kinds) if k == kinds[a]]
    b = data.draw(st.sampled_from(same))
    rest = data.draw(dcs(kinds, min_preds=0, max_preds=2))
    low = data.draw(st.sampled_from([f"t.c{a} <= t'.c{b}", f"t'.c{b} >= t.c{a}"]))
    high = data.draw(st.sampled_from([f"t.c{a} >= t'.c{b}", f"t'.c{b} <= t.c{a}"]))
    extra = [p.text() for p in rest.predicates]
    if data.draw(st.booleans()):
        extra.append(f"t.c{a} = t'.c{b}")  # an equality too: the bounds are redundant
    preds = data.draw(st.permutations([low, high, *extra]))
    text = "not(" + " and ".join(preds) + ")"
    dc = parse_dc(text)[0]
    expected = naive_pairs(table, dc)
    res = facet.detect(table, dcs=[text], output="pairs", config=data.draw(CONFIGS))
    assert facet_pairs(res, dc.arity) == expected, text
    assert res.dcs[0].rows_involved == involved(expected, dc.arity), text
    cells = facet.detect(table, dcs=[text], output="cells").cells().to_pylist()
    got = {(r["tid"], r["column"]): r["violations"] for r in cells}
    assert got == naive_cells(table, dc), text
