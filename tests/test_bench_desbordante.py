"""bench/desbordante_worker.py: Desbordante's DC verifier converted to facet's count.

Random small tables and DCs against the naive evaluator (tests/naive.py): the count where
the worker supports the DC, ``Unsupported`` exactly where its docstring says (two-tuple DCs
with a one-tuple predicate or a constant; NULLs on one side only of a DC whose t and t'
columns differ); Desbordante's raw answer (unordered pairs, CSV line numbers) pinned on a
small table; the worker as a process."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from facet.language.ast import DC, Col, Predicate
from facet.language.parser import parse_dc
from tests.naive import naive_count
from tests.strategies import dcs, examples, predicates, tables

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import desbordante_worker as dw  # noqa: E402

OPS = ("=", "!=", "<", "<=", ">", ">=")


def _text(dc: DC) -> str:
    return "not(" + " and ".join(p.text() for p in dc.predicates) + ")"


def _expect_unsupported(table: pa.Table, dc: DC) -> bool:
    """The worker's documented limits, spelled out independently."""
    if dc.arity == 1:
        return False
    for p in dc.predicates:
        cols = p.columns()
        if len(cols) != 2 or cols[0].tuple == cols[1].tuple:
            return True  # a constant or a one-tuple predicate in a two-tuple DC
    bounds: dict[tuple, set[str]] = {}  # (tuple, column, from above?) -> bounding columns
    for p in dc.predicates:
        if p.left.tuple == 1:
            p = p.flipped()
        a, op, b = p.left.name, p.op, p.right.name
        if op == "=" and a == b:
            continue  # hashed
        directions = [op in ("<", "<=")] if op in ("<", "<=", ">", ">=") else [True, False]
        for above in directions:
            bounds.setdefault((0, a, above), set()).add(b)
            bounds.setdefault((1, b, not above), set()).add(a)
    if any(len(v) > 1 for v in bounds.values()):
        return True  # Desbordante's search box would miss pairs
    sides = [{c.name for p in dc.predicates for c in p.columns() if c.tuple == s} for s in (0, 1)]
    if sides[0] == sides[1]:
        return False
    rows = table.to_pylist()

    def ok(row: dict, names: set[str]) -> bool:
        return all(row[n] is not None and row[n] == row[n] for n in names)  # NaN is NULL

    for i, r in enumerate(rows):
        for s in (0, 1):
            half = ok(r, sides[s]) and not ok(r, sides[0] | sides[1])
            if half and any(j != i and ok(q, sides[1 - s]) for j, q in enumerate(rows)):
                return True
    return False


def _check(table: pa.Table, dc: DC) -> None:
    text = _text(dc)
    if _expect_unsupported(table, dc):
        with pytest.raises(dw.Unsupported):
            dw.count(table, text)
        return
    got, method = dw.count(table, text)
    assert got == naive_count(table, dc), (text, method)


@st.composite
def cross_dcs(draw, kinds: list[str]) -> DC:
    """A two-tuple DC of t-vs-t' column predicates only (what Desbordante verifies)."""
    m = draw(st.integers(1, 3))
    preds = []
    for _ in range(m):
        a = draw(st.integers(0, len(kinds) - 1))
        same = [j for j in range(len(kinds)) if (kinds[j] == "str") == (kinds[a] == "str")]
        b = a if draw(st.booleans()) else draw(st.sampled_from(same))
        left, right = Col(0, f"c{a}"), Col(1, f"c{b}")
        if draw(st.booleans()):
            left, right = Col(1, f"c{a}"), Col(0, f"c{b}")
        preds.append(Predicate(left, draw(st.sampled_from(OPS)), right))
    return DC(tuple(preds))


@st.composite
def single_dcs(draw, kinds: list[str]) -> DC:
    """A single-tuple DC on t: constants and column-vs-column row conditions."""
    m = draw(st.integers(1, 3))
    preds = []
    while len(preds) < m:
        p = draw(predicates(kinds))
        if len(p.tuples()) == 1:
            preds.append(p if p.tuples() == {0} else p.swapped_tuples())
    return DC(tuple(preds))


def any_dc(kinds: list[str]):
    return st.one_of(cross_dcs(kinds), cross_dcs(kinds), single_dcs(kinds), dcs(kinds, 1, 3))


@st.composite
def int_tables(draw):
    """0-25 rows, 2-3 int columns of few distinct values, NULLs or not."""
    n = draw(st.integers(0, 25))
    ncols = draw(st.integers(2, 3))
    nulls = draw(st.booleans())
    values = st.one_of(st.none(), st.integers(0, 3)) if nulls else st.integers(0, 3)
    cols = {f"c{j}": pa.array(draw(st.lists(values, min_size=n, max_size=n)), pa.int64())
            for j in range(ncols)}  # fmt: skip
    return pa.table(cols), ["int"] * ncols


@settings(max_examples=examples(50), deadline=None)
@given(data=st.data())
def test_int_tables_against_naive(data):
    table, kinds = data.draw(int_tables())
    _check(table, data.draw(any_dc(kinds)))


@settings(max_examples=examples(50), deadline=None)
@given(data=st.data())
def test_typed_tables_against_naive(data):
    """int / float (NaN, -0.0, 1e300) / string ("", "é") columns with NULLs."""
    table, kinds = data.draw(tables(min_rows=0, max_rows=20, max_cols=3))
    _check(table, data.draw(any_dc(kinds)))


def _count(table: pa.Table, text: str) -> int:
    got, _ = dw.count(table, text)
    assert got == naive_count(table, parse_dc(text)[0]), text
    return got


def test_asymmetric_dc():
    t = pa.table({"a": [1, 2, 3, 1], "b": [5, 4, 3, 5]})
    # (0,1) (0,2) (1,2) (3,1) (3,2): Desbordante reports each pair once, one order holds
    assert _count(t, "not(t.a < t'.a and t.b > t'.b)") == 5
    assert "both orders" in dw.count(t, "not(t.a < t'.a and t.b > t'.b)")[1]
    # both orders of a pair can hold: every pair of distinct rows once, counted twice
    assert _count(t, "not(t.a < t'.b)") == 12


def test_symmetric_fd():
    t = pa.table(
        {"zip": ["01907", "01907", "01907", "1907"], "city": ["Lynn", "Salem", "Salem", "Lynn"]}
    )
    got, method = dw.count(t, "not(t.zip = t'.zip and t.city != t'.city)")
    assert got == 4 and "symmetric" in method  # 01907 and 1907 stay distinct strings
    assert _count(t, "not(t.zip = t'.zip and t.city = t'.city)") == 2
    assert _count(t, 'not(t.city = "Lynn")') == 2


def test_nulls():
    t = pa.table({"A": ["1", "1", None, "NA", "NULL", ""], "B": ["x", None, "x", "x", "x", "x"]})
    assert _count(t, "not(t.A = t'.A)") == 2
    assert _count(t, "not(t.A != t'.A)") == 5 * 4 - 2  # "", "NA", "NULL" are values
    assert _count(t, "not(t.A = t'.A and t.B != t'.B)") == 0
    assert _count(t, "not(t.B = t.B)") == 5
    f = pa.table({"a": [1.0, float("nan"), None, -0.0, 0.0], "b": [5, 2, 3, 4, None]})
    assert _count(f, "not(t.a = t'.a)") == 2  # -0.0 = 0.0; NaN is NULL
    assert _count(f, "not(t.a >= t'.a and t.b > t'.b)") == 1  # (0, 3); rows 1, 2, 4 have a NULL
    # t.a < t'.b: row 4 (b NULL) may still be t -- Desbordante would skip it
    with pytest.raises(dw.Unsupported, match="NULL"):
        dw.count(f, "not(t.a < t'.b)")
    g = pa.table({"a": [1.0, None, 0.5, -0.0], "b": [5, None, 0, 4]})
    assert _count(g, "not(t.a < t'.b)") == 4  # row 1: NULL on both sides


def test_unsupported_shapes():
    t = pa.table({"a": [1, 2, 2], "b": [1, 1, 3], "s": ["a", "b and c", "c"]})
    for dc in ("not(t.a = t'.a and t.b > 1)", "not(t.a < t'.a and t.a = t.b)",
               'not(t.s = "b and c")', "not(t.a = t'.a and t'.b = 1)"):  # fmt: skip
        with pytest.raises(dw.Unsupported):
            dw.count(t, dc)
    big = pa.table({"a": [2**62, 2**62 + 1]})
    with pytest.raises(dw.Unsupported, match="2\\^53"):
        dw.count(big, "not(t.a < t'.a)")


def test_constants_and_types():
    t = pa.table({"a": [1, 2, 3, None], "f": [0.5, 1e300, float("inf"), -0.0]})
    for dc in ("not(t.a > 1.5)", "not(t.a <= 2.5)", "not(t.a = 2.5)", "not(t.a != 2.5)",
               "not(t.a < 1e300)", "not(t.a > -1e300)", "not(t.f >= 1e300)", "not(t.f = 0)",
               "not(t.a < t.f)", "not(3 > t.a)"):  # fmt: skip
        _count(t, dc)
    assert _count(t.slice(0, 3), "not(t.a >= t'.f)") == 2  # int vs float: 2, 3 >= 0.5
    ts = pa.table({"d": pa.array([datetime(2024, 1, 1), datetime(2024, 1, 2, 12), None],
                                 pa.timestamp("ns"))})  # fmt: skip
    assert _count(ts, "not(t.d < t'.d)") == 1
    assert _count(ts, 'not(t.d > "2024-01-01")') == 1
    s = pa.table({"s": ["é", "z", "a", "", "10", "9"]})
    for dc in ("not(t.s < t'.s)", 'not(t.s < "z")', 'not(t.s >= "")', 'not(t.s < "9")'):
        _count(s, dc)


def test_desbordante_answer():
    """What the worker relies on: unordered pairs, each once, rows numbered from 2."""
    import desbordante

    algo = desbordante.dc_verification.algorithms.Default()
    algo.load_data(table=pd.DataFrame({"a": [1, 2, 3, 1], "b": [5, 4, 3, 5]}, dtype=object))
    algo.execute(denial_constraint="!(t.a < s.a and t.b > s.b)", do_collect_violations=True)
    pairs = algo.get_violations()
    assert not algo.dc_holds()
    assert sorted(tuple(sorted(p)) for p in pairs) == [(2, 3), (2, 4), (3, 4), (3, 5), (4, 5)]


def test_worker_process(tmp_path):
    path = tmp_path / "t.parquet"
    t = pa.table({"a": [1, 2, 3, 1], "b": [5, 4, 3, 5], "s": ["x", "y", "x", "z"]})
    pq.write_table(t.add_column(0, "rid", pa.array(range(4), pa.int64())), path)
    script = str(REPO / "bench" / "desbordante_worker.py")
    r = subprocess.run([sys.executable, script, "--table", str(path), "--dc",
                        "not(t.a < t'.a and t.b > t'.b)"], capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout.strip().splitlines()[-1])
    assert doc["count"] == 5 and doc["rows"] == 4 and doc["desbordante"]
    assert doc["seconds"] >= 0 and doc["load_seconds"] >= 0 and "desbordante" in doc["method"]
    r = subprocess.run([sys.executable, script, "--table", str(path), "--dc",
                        "not(t.s = t'.s and t.a > 1)"], capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 2
    assert json.loads(r.stdout)["error"].startswith("unsupported: ")
