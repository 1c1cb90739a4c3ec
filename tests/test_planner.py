"""The planner (paper §6): statistics, order, algorithm choice, many-DC modes,
explain -- and that no plan ever changes the answer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
from facet.api import explain, open_session
from facet.cli import main
from facet.planner.config import Config
from facet.planner.order import greedy_hll
from tests.naive import naive_pairs
from tests.strategies import dcs, tables

ROOT = Path(__file__).resolve().parent.parent
TAX = ROOT / "data" / "tax" / "tax_dirty_0010k.csv"
HOSPITAL = ROOT / "data" / "holoclean-hospital" / "hospital.csv"


def known_table(n: int = 20_000, seed: int = 0) -> pa.Table:
    """Columns with known cardinalities: lo* have few values, hi* many."""
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "k2": rng.integers(0, 2, n),
            "k10": rng.integers(0, 10, n),
            "k100": rng.integers(0, 100, n),
            "k1000": rng.integers(0, 1000, n),
            "lo": rng.integers(0, 50, n),
            "lo2": rng.integers(0, 60, n),
            "hi": rng.permutation(n),
            "hi2": rng.permutation(n) * 3,
            # hic follows hi, except for a few rows: few pairs violate hi < hi' and hic > hic'
            "hic": np.arange(n) * 2 + (rng.random(n) < 0.002) * 5000,
            "s": rng.integers(0, 40, n).astype(str),
        }
    )


def plan_of(table, dc: str, output: str = "pairs", config: Config | None = None):
    opened = open_session(table, dcs=[dc], config=config)
    return opened.session, opened.session.plan(0, output)


def test_statistics_estimate_cardinalities():
    session, _ = plan_of(
        known_table(),
        "not(t.k10 = t'.k10 and t.k2 = t'.k2 and t.k100 = t'.k100 and "
        "t.k1000 = t'.k1000 and t.hi = t'.hi)",
    )
    st_ = session.engine.table_statistics()
    for col, true in (("k2", 2), ("k10", 10), ("k100", 100), ("k1000", 1000), ("hi", 20_000)):
        assert abs(st_.cardinality((col,)) - true) <= 0.03 * true + 1
        assert abs(st_.column(col).distinct - true) <= 0.03 * true + 1  # the HLL estimate
    pair = st_.cardinality(("k10", "k100"))
    assert 900 <= pair <= 1000  # 10 x 100 combinations, all present in 20k rows
    assert st_.cardinality(("hi", "k2")) == pytest.approx(20_000, rel=0.03)


def test_column_statistics_count_nulls_and_the_code_range():
    """NULLs counted, the smallest and largest code a column holds (in a code space
    shared with another column and a constant it need not hold them all)."""
    table = pa.table({
        "a": pa.array([5, None, 7, 5, None, 9], pa.int64()),
        "b": pa.array([1, 2, 3, 20, 30, 40], pa.int64()),
        "c": pa.array([1, 2, 3, 4, 5, 6], pa.int64()),
    })  # fmt: skip
    session, _ = plan_of(table, "not(t.a < t'.b and t.c > 100 and t.c = t'.c)")
    st_ = session.engine.table_statistics()
    a, b, c = st_.column("a"), st_.column("b"), st_.column("c")
    assert (a.nulls, b.nulls, c.nulls) == (2, 0, 0)
    # a and b share one code space: 1 2 3 5 7 9 20 30 40 -> codes 0..8
    assert (a.min_code, a.max_code) == (3, 5)
    assert (b.min_code, b.max_code) == (0, 8)
    assert (c.min_code, c.max_code) == (0, 5)  # the constant 100 (code 6) is not held
    assert round(a.distinct) == 3 and round(b.distinct) == 6


def test_sketches_merge_like_a_union():
    """Sketches of two halves merge into the sketch of the whole (Spark partitions)."""
    t = known_table()
    a, _ = plan_of(t.slice(0, 10_000), "not(t.hi = t'.hi)")
    b, _ = plan_of(t.slice(10_000), "not(t.hi = t'.hi)")
    whole, _ = plan_of(t, "not(t.hi = t'.hi)")
    from facet.planner.statistics import hll_cardinality

    ra = a.engine.table_statistics().column("hi").registers
    rb = b.engine.table_statistics().column("hi").registers
    rw = whole.engine.table_statistics().column("hi").registers
    assert np.array_equal(np.maximum(ra, rb), rw)
    assert hll_cardinality(np.maximum(ra, rb), 14) == pytest.approx(20_000, rel=0.03)


def test_classes_in_order_and_ascending_cardinality():
    _, plan = plan_of(
        known_table(),
        "not(t.s != t'.s and t.hi < t'.hi and t.k1000 = t'.k1000 and t.k10 = t'.k10 "
        "and t.lo > t'.lo)",
    )
    classes = [s.cls for s in plan.stages]
    assert classes == sorted(classes, key={"equality": 0, "inequality": 1, "nonequality": 2}.get)
    eqs = [s.pred.a for s in plan.of_class("equality")]
    assert eqs == ["k10", "k1000"]  # ascending cardinality
    ineqs = [p.a for s in plan.of_class("inequality") for p in s.preds]
    assert ineqs == ["lo", "hi"]


def test_single_column_before_cross_column_on_reflexive_pairs():
    _, plan = plan_of(known_table(), "not(t.k10 = t'.k100 and t.k1000 = t'.k1000)")
    assert [s.pred.single_column for s in plan.stages] == [True, False]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([("a", "b"), ("b", "a"), ("a", "a"), ("b", "b")]), max_size=4),
    st.dictionaries(st.sampled_from("ab"), st.floats(1, 1e6), min_size=2),
    st.booleans(),
    st.sampled_from(["count", "pairs", "blocks"]),
)
def test_equalities_statistics_cannot_reorder_are_planned_without_them(
    cols, cards, reflexive, output
):
    """needs_statistics says no for equalities over one set of columns (φ10's
    ``t.A = t'.B and t.B = t'.A``): every cardinality orders them as written,
    and a second set of columns asks for statistics."""
    from facet.language.normalize import NormalDC, PairPredicate
    from facet.planner.order import order_predicates
    from facet.planner.plan import needs_statistics

    preds = list(dict.fromkeys(PairPredicate(a, "=", b) for a, b in cols))
    dc = NormalDC(None, 2, (), tuple(preds))
    sets = {frozenset((p.a, p.b)) for p in preds}
    assert needs_statistics(dc, output) == (len(sets) >= 2)
    if len(sets) < 2:

        def card(c):
            return max(cards[x] for x in c)

        assert order_predicates(preds, card, 1000, reflexive) == order_predicates(
            preds, None, 1000, reflexive
        )


def test_greedy_hll_for_three_equalities():
    _, plan = plan_of(
        known_table(), "not(t.k1000 = t'.k1000 and t.k2 = t'.k2 and t.k100 = t'.k100)"
    )
    order = [s.pred.a for s in plan.stages]
    assert len(order) == 3 and set(order) == {"k2", "k100", "k1000"}
    # GreedyHLL directly: the cheapest pair (lowest rank) leads with its smaller column
    from facet.language.normalize import PairPredicate

    cards = {
        ("a",): 2.0,
        ("b",): 100.0,
        ("c",): 1000.0,
        ("a", "b"): 200.0,
        ("a", "c"): 2000.0,
        ("b", "c"): 10_000.0,
    }

    def card(cols):
        return cards[tuple(sorted(cols))]

    preds = [PairPredicate(c, "=", c) for c in ("c", "b", "a")]
    got = [p.a for p in greedy_hll(preds, card, 10_000)]
    assert got == ["b", "c", "a"]  # pair (b, c) has the lowest rank: (n - 10000)/n = 0


def test_inequality_algorithms_follow_cardinality():
    t = known_table()
    # a non-equality follows: binning pays off for high cardinality only
    _, plan = plan_of(t, "not(t.lo < t'.lo and t.s != t'.s)")
    assert [s.algorithm for s in plan.stages] == ["hsm", "nonequality"]
    _, plan = plan_of(t, "not(t.hi < t'.hi and t.s != t'.s)")
    assert [s.algorithm for s in plan.stages] == ["bhsm", "nonequality"]
    # the last refinement before expansion: HSM, binning would only add work
    _, plan = plan_of(t, "not(t.hi < t'.hi)")
    assert [s.algorithm for s in plan.stages] == ["hsm"]
    assert "last refinement" in plan.stages[0].note
    # sorted copy: hic follows row order; hi2 is unrelated to it
    t = t.append_column("hio", pa.array(np.arange(t.num_rows)))
    _, plan = plan_of(t, "not(t.hio < t'.hio and t.hic > t'.hic)")
    assert [s.algorithm for s in plan.stages] == ["iejoin"]  # few pairs: IEJoin writes them
    assert len(plan.stages[0].preds) == 2
    _, plan = plan_of(t, "not(t.hi < t'.hi and t.hi2 > t'.hi2)")
    # ~n^2/4 pairs expected (from the tid sample): dominance blocks first, not IEJoin
    assert [s.algorithm for s in plan.stages] == ["cdq", "hsm"]
    assert "pairs expected" in plan.stages[0].note
    # under a --limit far below them, plans that stream: neither IEJoin nor blocks first
    opened = open_session(t, dcs=["not(t.hi < t'.hi and t.hi2 > t'.hi2)"])
    opened.session.limit = 100
    algs = [s.algorithm for s in opened.session.plan(0, "pairs").stages]
    assert "cdq" not in algs and "iejoin" not in algs, algs
    # few pairs expected (IEJoin lists them all in about a sort's time), or a limit above
    # them: IEJoin still -- a streaming walk could cross most of the input for its first
    # pairs (1 s for 10 pairs where IEJoin lists all 200k in 0.07 s)
    # jit: row order but for a jitter of 40: ~10 pairs per row, which the tid sample sees
    jit = np.arange(t.num_rows) + np.random.default_rng(1).integers(0, 40, t.num_rows)
    t = t.append_column("jit", pa.array(jit))
    for dc in ("not(t.hio < t'.hio and t.hic > t'.hic)",
               "not(t.hio < t'.hio and t.jit > t'.jit)"):  # fmt: skip
        for limit in (10, 100, 10**9):
            opened = open_session(t, dcs=[dc])
            opened.session.limit = limit
            assert [s.algorithm for s in opened.session.plan(0, "pairs").stages] == ["iejoin"]


def test_joint_cardinality_with_equalities_decides():
    t = known_table()
    # k1000 alone is low-cardinality; joint with hi-equality groups... use lo: |k100, lo| ~ 5000
    _, plan = plan_of(t, "not(t.k100 = t'.k100 and t.k1000 < t'.k1000 and t.s != t'.s)")
    ineq = plan.of_class("inequality")[0]
    assert ineq.cardinality > 10_000 * 0.9  # |k100, k1000| ~ 20k (combinations present)
    # but few tuples per group (20k / 100 = 200 < 500 bins): binning is dropped
    assert ineq.algorithm == "hsm" and "binning dropped" in ineq.note


def test_binning_kept_on_big_groups():
    _, plan = plan_of(known_table(), "not(t.k2 = t'.k2 and t.hi < t'.hi and t.s != t'.s)")
    assert plan.of_class("inequality")[0].algorithm == "bhsm"


CONFIG_SHUFFLE = settings(
    max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@CONFIG_SHUFFLE
@given(st.data())
def test_any_order_and_algorithms_give_the_same_pairs(data):
    """Random predicate orders (ignoring classes) and random algorithms per stage
    (HSM, BHSM, CDQ, IEJoin for pairs) never change the answer."""
    table, kinds = data.draw(tables())
    dc = data.draw(dcs(kinds, min_preds=2))
    seed = data.draw(st.integers(0, 10**6))
    cfg = Config(
        order=f"shuffle:{seed}", nested_pairs=data.draw(st.sampled_from([0, 64])), bhsm_bins=2
    )
    expected = naive_pairs(table, dc)
    for output in ("pairs", "count"):
        res = facet.detect(table, dcs=[dc], output=output, config=cfg)
        assert res.dcs[0].violations == len(expected), dc.canonical()
    got = res.pairs()
    if dc.arity == 2:
        pairs = set(zip(got.column("t1").to_pylist(), got.column("t2").to_pylist(), strict=True))
    else:
        pairs = set(got.column("t1").to_pylist())
    assert pairs == expected


@pytest.mark.parametrize(
    ("data", "rules"),
    [
        (TAX, ROOT / "data" / "tax" / "dc_rules.txt"),
        (TAX, ROOT / "data" / "tax" / "dc_rules_relaxed.txt"),
        (TAX, ROOT / "data" / "tax" / "dc_rules_holoclean.txt"),
        (HOSPITAL, ROOT / "data" / "holoclean-hospital" / "hospital_constraints.txt"),
        (
            ROOT / "data" / "adr" / "hospital" / "dirty.csv",
            ROOT / "data" / "adr" / "hospital" / "dc_rules.txt",
        ),
    ],
    ids=["tax-rules", "tax-relaxed", "tax-holoclean", "hospital", "adr-hospital"],
)
def test_all_modes_agree(data, rules):
    base = facet.detect(data, rules, output="pairs", mode="sequential")
    want_counts = [(d.violations, d.rows_involved) for d in base.dcs]
    want_pairs = base.pairs().sort_by(
        [("dc", "ascending"), ("t1", "ascending"), ("t2", "ascending")]
    )
    for mode in ("parallel", "cost-trie", "freq-trie"):
        res = facet.detect(data, rules, output="pairs", mode=mode)
        assert [(d.violations, d.rows_involved) for d in res.dcs] == want_counts, mode
        got = res.pairs().sort_by([("dc", "ascending"), ("t1", "ascending"), ("t2", "ascending")])
        assert got.equals(want_pairs), mode
        counted = facet.detect(data, rules, mode=mode)
        assert [(d.violations, d.rows_involved) for d in counted.dcs] == want_counts, mode


def test_trie_shares_prefixes():
    """Two FDs with the same left side refine it once in a trie mode."""
    from facet.engine.multi import count_all
    from facet.engine.trace import Trace

    opened = open_session(TAX, dcs=["zip -> city", "zip -> state", "f_name -> gender"])
    s = opened.session
    s.engine.trace = Trace()
    count_all(s, "cost-trie")
    calls = {k.text(): r.calls for k, r in s.engine.trace.stages.items()}
    assert calls == {"t.zip = t'.zip": 1, "t.f_name = t'.f_name": 1}


def test_explain_json_and_analyze():
    doc = explain(
        TAX,
        dcs=[
            "zip -> city",
            "not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)",
        ],
        analyze=True,
    )
    d0, d1 = doc["dcs"]
    assert d0["stages"][0]["algorithm"] == "equality"
    assert d0["count_sink"]["algorithm"] == "count-keyed"
    assert d1["count_sink"]["algorithm"] == "count-fenwick"
    assert d0["actual"]["violations"] == 40552
    # an FD's equality runs fused into its keyed sink; an inequality DC's is refined
    assert d0["stages"][0]["actual"] is None
    assert d0["count_sink"]["actual"]["fused_stages"] == 1
    assert d1["stages"][0]["actual"]["groups_out"] > 0
    # the runtime breakdown: phases of the run, statistics apart from planning
    assert set(doc["phases"]) == {"load_seconds", "warmup_seconds", "encode_seconds"}
    assert doc["phases"]["encode_seconds"] > 0 and doc["phases"]["load_seconds"] > 0
    assert all(d["statistics_seconds"] >= 0 and d["planning_seconds"] >= 0 for d in (d0, d1))
    doc = explain(
        TAX,
        dcs=["not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)"],
        output="pairs",
        analyze=True,
    )
    algs = [s["algorithm"] for s in doc["dcs"][0]["stages"]]
    assert algs[0] == "equality" and all(a in ("hsm", "bhsm", "iejoin") for a in algs[1:])
    # every stage either ran or found its groups already finished pair by pair
    assert all(s["actual"] is not None or s.get("nested_before") for s in doc["dcs"][0]["stages"])
    # a single-tuple DC: its violations are rows, each one a row involved
    doc = explain(TAX, dcs=["not(t.salary > 50000)"], analyze=True)
    actual = doc["dcs"][0]["actual"]
    assert actual["violations"] > 0 and actual["rows_involved"] == actual["violations"]


def test_explain_cli(capsys):
    code = main(["explain", str(TAX), "--dc", "zip -> city", "--format", "json", "--analyze"])
    out, _ = capsys.readouterr()
    assert code == 0
    doc = json.loads(out)
    assert doc["dcs"][0]["actual"]["violations"] == 40552
    code = main(
        [
            "explain",
            str(TAX),
            "--dc",
            "not(t.salary > t'.salary and t.rate < t'.rate)",
            "--output",
            "pairs",
        ]
    )
    out, _ = capsys.readouterr()
    # ~1.6e7 pairs on 10k rows: dominance blocks first, then HSM as the last refinement
    assert code == 0 and "cdq" in out and "pairs expected" in out and "last refinement" in out


def test_detect_mode_flag(capsys):
    code = main(
        ["detect", str(TAX), "--dc", "zip -> city", "--mode", "freq-trie", "--format", "json"]
    )
    out, _ = capsys.readouterr()
    assert code == 1 and json.loads(out)["mode"] == "freq-trie"
