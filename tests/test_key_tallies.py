"""Appends to key- and FD-shaped DCs counted from per-key tallies (facet/key_tallies.py):
each tallied append's violations and rows involved equal the naive pairs of the whole
table that hold a row of its batch, on random tables (NULLs, ties, numeric keys whose
ranks move, text keys) cut at random points -- with the keys' digits forced narrow (so
they repack) and the delta folded at once; rows and pairs asked of a tallied result
come from a scoped run over the table as it was; DCs of other shapes beside them run
scoped; the shapes that qualify."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
import facet.key_tallies as kt
from facet.api import load_dcs
from facet.detector import _ScopedSession
from facet.language.normalize import normalize
from facet.planner.config import DEFAULT
from tests.appends import appends_equal_naive
from tests.strategies import dcs, examples, tables

SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]


@st.composite
def key_or_fd(draw, cols: list[str]) -> str:
    xs = draw(st.lists(st.sampled_from(cols), min_size=1, max_size=2, unique=True))
    rest = [c for c in cols if c not in xs]
    y = draw(st.one_of(st.none(), st.sampled_from(rest))) if rest else None
    preds = [f"t.{x} = t'.{x}" for x in xs] + ([f"t.{y} != t'.{y}"] if y else [])
    order = draw(st.permutations(preds))
    return "not(" + " and ".join(order) + ")"


@settings(max_examples=examples(250, 30), deadline=None, suppress_health_check=SLOW)
@given(data=st.data(), narrow=st.booleans())
def test_tallied_appends_equal_naive(data, narrow, monkeypatch):
    monkeypatch.setattr(kt, "_MIN_WIDTH", 1 if narrow else 10)
    monkeypatch.setattr(kt, "_DELTA_MIN", 0 if narrow else 4096)
    table, kinds = data.draw(tables(max_rows=40, max_cols=4))
    texts = [data.draw(key_or_fd(table.column_names)) for _ in range(data.draw(st.integers(1, 2)))]
    rules = load_dcs(None, texts)
    mixed = data.draw(st.booleans())
    if mixed:  # and a DC of any shape: its count is a scoped run's
        other = data.draw(dcs(kinds))
        rules = load_dcs(None, [*texts, other.canonical()])
        texts.append(other.canonical())
    n = table.num_rows
    cuts = sorted(data.draw(st.lists(st.integers(0, n), min_size=1, max_size=4)))
    # another DC may need the whole table encoded again (ordered text, mixed types)
    appends_equal_naive(table, rules, texts, [0, *cuts, n], all_counted=not mixed)


def test_tallies_off_give_the_same_answer():
    rng = np.random.default_rng(2)
    import pyarrow as pa

    table = pa.table({"k": rng.integers(0, 30, 500), "v": rng.integers(0, 3, 500)})
    rules = ["not(t.k = t'.k and t.v != t'.v)", "not(t.k = t'.k and t.v = t'.v)"]
    on = facet.Detector(table.slice(0, 300), dcs=rules)
    off = facet.Detector(table.slice(0, 300), dcs=rules, config=DEFAULT.but(append_tallies=False))
    a, b = on.append(table.slice(300)), off.append(table.slice(300))
    assert isinstance(a._session, _ScopedSession) and not isinstance(b._session, _ScopedSession)
    assert a.to_dict()["dcs"][0]["violations"] == b.to_dict()["dcs"][0]["violations"]
    assert [(d.violations, d.rows_involved) for d in a.dcs] == [
        (d.violations, d.rows_involved) for d in b.dcs
    ]
    assert a.tuples().equals(b.tuples())
    assert a.warnings == b.warnings and a.rows == b.rows


@pytest.mark.parametrize(
    ("dc", "want"),
    [
        ("not(t.a = t'.a)", (["a"], None)),
        ("not(t.a = t'.a and t.b = t'.b and t.c != t'.c)", (["a", "b"], "c")),
        ("not(t.c != t'.c and t.a = t'.a)", (["a"], "c")),
        ("not(t.a != t'.a)", None),  # no key
        ("not(t.a = t'.b and t.c != t'.c)", None),  # cross-column
        ("not(t.a = t'.a and t.b < t'.b)", None),  # an order
        ("not(t.a = t'.a and t.b != t'.b and t.c != t'.c)", None),  # two non-equalities
        ("not(t.a = t'.a and t.b = 'x')", None),  # a one-tuple predicate
    ],
)
def test_key_and_fd_shapes(dc, want):
    assert kt.shape(normalize(load_dcs(None, [dc])[0])) == want
