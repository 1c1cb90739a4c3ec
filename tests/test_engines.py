"""One test suite for every engine (the shape of ibis's backend tests).

Each test takes an engine name from ``facet.engine.ENGINES`` and checks the
:class:`facet.engine.base.Engine` interface against ``tests/naive.py``:
initial pairs, every refinement algorithm, counts, pairs, blocks, many-DC
modes -- as far as the engine's capabilities say it supports them.  A new
engine that registers itself runs all of this without a line added here.
"""

from __future__ import annotations

import inspect

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
from facet.api import open_session
from facet.engine import ENGINES
from facet.engine.base import Capabilities, Engine
from facet.language.ast import DC, Col, Predicate
from facet.language.normalize import EQUALITY, INEQUALITY, NONEQUALITY
from facet.planner.config import Config
from facet.planner.modes import MODES
from facet.planner.plan import ALGORITHMS, Plan, Stage
from tests.naive import naive_pairs
from tests.strategies import dcs, tables

NAMES = sorted(ENGINES)
#: engines that run in this process; the others (Spark) start jobs per call and get
#: fewer hypothesis examples (tests/test_spark.py adds their own properties)
LOCAL = [n for n in NAMES if n == "local"]
DISTRIBUTED = [n for n in NAMES if n not in LOCAL]
CASES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def engine_property(examples: int, distributed_examples: int):
    """A hypothesis property ``body(name, data)`` as two tests: over the local
    engines with ``examples``, and over the distributed ones (their session
    fixture started) with ``distributed_examples``."""

    def make(body):
        def on(names, n):
            @pytest.mark.parametrize("name", names)
            @settings(
                max_examples=n,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
            )
            @given(data=st.data())
            def test(name, data, request):
                if name == "spark":
                    request.getfixturevalue("spark")
                body(name, data)

            test.__name__ = body.__name__
            return test

        return on(LOCAL, examples), on(DISTRIBUTED, distributed_examples)

    return make


@pytest.fixture
def engine_ready(request):
    """Starts what an engine needs (the Spark session) for a parametrized test."""

    def ready(name: str) -> None:
        if name == "spark":
            request.getfixturevalue("spark")

    return ready


#: the algorithms that refine each predicate class
BY_CLASS = {
    EQUALITY: ("equality",),
    NONEQUALITY: ("nonequality",),
    INEQUALITY: ("hsm", "bhsm", "cdq"),
}


def session(table: pa.Table, dc_list: list[DC], engine: str, config: Config | None = None):
    return open_session(table, dcs=dc_list, engine=engine, config=config or Config()).session


def pair_set(batches) -> set:
    out: set = set()
    for b in batches:
        out.update(zip(b.column("t1").to_pylist(), b.column("t2").to_pylist(), strict=True))
    return out


def expanded(engine: Engine, groups) -> set:
    """Every pair ``(t, t')``, ``t != t'``, of the groups (no predicate left)."""
    out: set = set()
    for t1, t2 in engine.pairs(Plan(None, "pairs"), groups, stages=[]):
        out.update(zip(t1.tolist(), t2.tolist(), strict=True))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_engine_implements_the_interface(name, engine_ready):
    engine_ready(name)
    t = pa.table({"a": [1, 2, 2], "b": ["x", "y", "y"]})
    eng = session(t, [facet.parse_dc("not(t.a = t'.a)")[0]], name).engine
    assert isinstance(eng, Engine) and eng.name == name
    assert not inspect.isabstract(type(eng))
    caps = eng.capabilities
    assert isinstance(caps, Capabilities)
    assert {"count", "pairs"} <= caps.outputs <= {"count", "pairs", "blocks"}
    assert "sequential" in caps.modes and caps.modes <= set(MODES)
    assert eng.rows == 3


def _counts_pairs_and_blocks_equal_naive(name, data):
    table, kinds = data.draw(tables(max_rows=40))
    dc = data.draw(dcs(kinds))
    want = naive_pairs(table, dc)
    s = session(table, [dc], name)
    violations, rows = s.count(0)
    assert violations == len(want), dc.canonical()
    if dc.arity == 1:
        assert rows == len(want)
        got = {r for b in s.dc_pairs(0) for r in b.column("t1").to_pylist()}
        assert got == want
        return
    assert rows == len({t for p in want for t in p}), dc.canonical()
    assert pair_set(s.dc_pairs(0)) == want, dc.canonical()
    if "blocks" in s.engine.capabilities.outputs:
        got: set = set()
        for b in s.dc_blocks(0):
            for left, right in zip(b.column("t1").to_pylist(), b.column("t2").to_pylist()):
                block = {(a, c) for a in left for c in right if a != c}
                assert block, f"a block without a pair: {left} x {right}"
                got.update(block)
        assert got == want, dc.canonical()


def _degrees_equal_naive(name, data):
    """``degrees``: per row, the violating pairs holding it as ``t`` and as ``t'``
    (the row outputs' input), over the table."""
    table, kinds = data.draw(tables(max_rows=30))
    dc = data.draw(dcs(kinds))
    if dc.arity == 1:
        return
    s = session(table, [dc], name)
    deg = s.engine.degrees(s.plan(0, "count"), s.initial(0))
    left = [0] * table.num_rows
    right = [0] * table.num_rows
    for a, b in naive_pairs(table, dc):
        left[a] += 1
        right[b] += 1
    assert deg.left.tolist() == left and deg.right.tolist() == right, dc.canonical()


def _every_refinement_keeps_exactly_the_pairs_that_satisfy_it(name, data):
    """``refine(initial, stage)`` holds exactly the initial pairs satisfying the
    stage's predicate(s), for every algorithm that applies to the predicate."""
    table, kinds = data.draw(tables(max_rows=30))
    dc = data.draw(dcs(kinds, min_preds=1, max_preds=3))
    s = session(table, [dc], name, Config(nested_pairs=0))
    nd = s.normal[0]
    if nd.arity == 1 or not nd.preds:
        return
    eng = s.engine
    p = data.draw(st.sampled_from(nd.preds))
    algorithms = BY_CLASS[p.cls]
    alg = data.draw(st.sampled_from(algorithms))
    stage = Stage((p,), alg)
    ineqs = [q for q in nd.preds if q.cls == INEQUALITY and q != p]
    if p.cls == INEQUALITY and ineqs and data.draw(st.booleans()):
        stage = Stage((p, ineqs[0]), "iejoin")
    filters = [
        Predicate(
            Col(f.side, f.column),
            f.op,
            Col(f.side, f.other) if isinstance(f.other, str) else f.other,
        )
        for f in nd.filters
    ]
    stage_preds = [Predicate(Col(0, q.a), q.op, Col(1, q.b)) for q in stage.preds]
    want = naive_pairs(table, DC(tuple(filters + stage_preds)))
    assert expanded(eng, eng.refine(s.initial(0), stage)) == want, (dc.canonical(), stage)


def test_every_algorithm_is_covered():
    assert set(ALGORITHMS) == {a for algs in BY_CLASS.values() for a in algs} | {"iejoin"}


def _every_mode_equals_naive(name, data):
    table, kinds = data.draw(tables(max_rows=30))
    batch = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(2, 4)))]
    modes = sorted(
        facet.detect(table, dcs=batch[:1], engine=name)._session.engine.capabilities.modes
    )
    mode = data.draw(st.sampled_from(modes))
    res = facet.detect(table, dcs=batch, engine=name, mode=mode, output="pairs")
    pairs = res.pairs()
    for i, dc in enumerate(batch):
        want = naive_pairs(table, dc)
        assert res.dcs[i].violations == len(want), (mode, dc.canonical())
        sub = pairs.filter(pa.compute.equal(pairs.column("dc"), i))
        if dc.arity == 1:
            assert set(sub.column("t1").to_pylist()) == want
        else:
            assert pair_set(sub.to_batches()) == want, (mode, dc.canonical())


@pytest.mark.parametrize("name", NAMES)
def test_explain_analyze_reports_what_ran(name, engine_ready):
    engine_ready(name)
    t = pa.table({"a": list(range(200)), "b": [i % 7 for i in range(200)]})
    doc = facet.explain(
        t, dcs=["not(t.b = t'.b and t.a < t'.a)"], output="pairs", analyze=True, engine=name
    )
    (rec,) = doc["dcs"]
    assert rec["actual"]["violations"] == sum(
        k * (k - 1) // 2 for k in [29, 29, 29, 29, 28, 28, 28]
    )
    caps = session(t, [facet.parse_dc("not(t.a = t'.a)")[0]], name).engine.capabilities
    if caps.trace:
        ran = [st["actual"] for st in rec["stages"]]
        assert ran[0] is not None and ran[0]["groups_out"] == 7
        assert all(st["storage"] in ("arrays", "bitmaps", "hybrid") for st in rec["stages"])


test_counts_pairs_and_blocks_equal_naive, test_counts_pairs_and_blocks_equal_naive_distributed = (
    engine_property(150, 12)(_counts_pairs_and_blocks_equal_naive)
)
(
    test_every_refinement_keeps_exactly_the_pairs_that_satisfy_it,
    test_every_refinement_keeps_exactly_the_pairs_that_satisfy_it_distributed,
) = engine_property(150, 12)(_every_refinement_keeps_exactly_the_pairs_that_satisfy_it)
test_degrees_equal_naive, test_degrees_equal_naive_distributed = engine_property(100, 8)(
    _degrees_equal_naive
)
test_every_mode_equals_naive, test_every_mode_equals_naive_distributed = engine_property(60, 6)(
    _every_mode_equals_naive
)
