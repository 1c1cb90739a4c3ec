"""``--where`` (docs/semantics.md §10): the violations holding a row of the scope,
computed from the scoped initial pairs ``(S, all)`` and ``(all - S, S)``, must
equal the whole run's violations filtered to those touching the scope.

The scope itself is computed here without facet: each comparison of the
expression is a single-tuple DC, whose rows ``tests/naive.py`` (random tables)
or DuckDB (the real data, tests/sql_oracle.py) give; a row is unknown for a
comparison when neither it nor its negation holds (a NULL), and ``and`` /
``or`` / ``not`` follow SQL's three values.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
from facet.column_types import analyze
from facet.errors import DCSyntaxError, FacetInputError
from facet.language.ast import DC, NEGATE, Col, Const, Predicate
from facet.language.where import MAX_NESTING, And, Compare, IsNull, Not, Or, parse_where
from facet.planner.config import Config
from tests.naive import _is_nan, naive_cells, naive_pairs
from tests.sql_oracle import duckdb_pairs
from tests.strategies import comparable, dcs, tables
from tests.test_row_outputs import components_from, suspects_from, tuples_from

ROOT = Path(__file__).resolve().parent.parent
TAX = ROOT / "data" / "tax" / "tax_dirty_0010k.csv"
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------ the scope, without facet


def scope_rows(expr, rows_of: Callable[[Predicate], set[int]], n: int) -> set[int]:
    """Rows where ``expr`` (a parsed --where) is true; ``rows_of(pred)``: the rows
    of the single-tuple DC ``not(pred)``, i.e. where ``pred`` holds."""

    def ev(node) -> tuple[set[int], set[int]]:  # (true, false)
        if isinstance(node, Compare):
            p = node.pred
            return rows_of(p), rows_of(Predicate(p.left, NEGATE[p.op], p.right))
        if isinstance(node, IsNull):
            c = Col(0, node.column)
            valued = rows_of(Predicate(c, "=", c))
            return set(range(n)) - valued, valued
        if isinstance(node, Not):
            t, f = ev(node.arg)
            return f, t
        parts = [ev(a) for a in node.args]
        if isinstance(node, And):
            return set.intersection(*[t for t, _ in parts]), set.union(*[f for _, f in parts])
        assert isinstance(node, Or)
        return set.union(*[t for t, _ in parts]), set.intersection(*[f for _, f in parts])

    return ev(expr.expr)[0]


def scoped(pairs: set, scope: set[int]) -> set:
    return {p for p in pairs if (p[0] in scope or p[1] in scope if isinstance(p, tuple)
                                 else p in scope)}  # fmt: skip


def _pairs_of(res, i: int) -> set:
    t = res.pairs()
    out = set()
    for dc, t1, t2 in zip(*[t.column(c).to_pylist() for c in ("dc", "t1", "t2")], strict=True):
        if dc == i:
            out.add(t1 if t2 is None else (t1, t2))
    return out


# ------------------------------------------------------------------ random expressions


def _operand_text(o) -> str:
    return o.name if isinstance(o, Col) else o.as_text()


@st.composite
def where_texts(draw, kinds: list[str], depth: int = 2) -> str:
    """A --where text over columns ``c0..`` of ``kinds``: comparisons with constants
    and columns, ``in``, ``is [not] null``, combined by and / or / not."""
    from tests.strategies import _CONSTS

    if depth == 0 or draw(st.integers(0, 2)) == 0:
        j = draw(st.integers(0, len(kinds) - 1))
        col = f"c{j}"
        shape = draw(st.integers(0, 5))
        if shape == 0:
            return f"{col} is {draw(st.sampled_from(['', 'not ']))}null"
        if shape == 1:
            values = draw(st.lists(_CONSTS[kinds[j]], min_size=1, max_size=3))
            texts = [Const(v, quoted=kinds[j] == "str").as_text() for v in values]
            neg = draw(st.sampled_from(["", "not "]))
            return f"{col} {neg}in ({', '.join(texts)})"
        op = draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]))
        if shape == 2:
            others = [k for k in range(len(kinds)) if comparable(kinds[j], kinds[k])]
            return f"{col} {op} c{draw(st.sampled_from(others))}"
        const = Const(draw(_CONSTS[kinds[j]]), quoted=kinds[j] == "str").as_text()
        return f"{const} {op} {col}" if shape == 3 else f"{col} {op} {const}"
    kind = draw(st.sampled_from(["and", "or", "not"]))
    if kind == "not":
        return f"not ({draw(where_texts(kinds, depth - 1))})"
    parts = draw(st.lists(where_texts(kinds, depth - 1), min_size=2, max_size=3))
    return f" {kind} ".join(f"({p})" for p in parts)


@PROPERTY
@given(data=st.data())
def test_scoped_runs_equal_naive_pairs_touching_the_scope(data):
    table, kinds = data.draw(tables(max_rows=25))
    rules = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(1, 3)))]
    text = data.draw(where_texts(kinds))
    # the trie modes share DCs' leading equalities: scoped initial pairs are per DC
    mode = data.draw(st.sampled_from(["sequential", "cost-trie", "freq-trie"]))
    config = Config(scope_semi_join=data.draw(st.booleans()))  # the same answer
    n = table.num_rows
    scope = scope_rows(parse_where(text), lambda p: naive_pairs(table, DC((p,))), n)
    want = {i: scoped(naive_pairs(table, dc), scope) for i, dc in enumerate(rules)}
    res = facet.detect(table, dcs=rules, where=text, output="pairs", mode=mode, config=config)
    assert res.scope_rows == len(scope), text
    for i in range(len(rules)):
        assert _pairs_of(res, i) == want[i], (text, rules[i].canonical())
        d = res.dcs[i]
        assert d.violations == len(want[i])
        rows = {r for p in want[i] for r in (p if isinstance(p, tuple) else (p,))}
        assert d.rows_involved == len(rows)
    # every output kind comes from the same scoped pairs
    assert {tuple(r.values()) for r in res.tuples().to_pylist()} == tuples_from(want)
    assert {tuple(r.values()) for r in res.components().to_pylist()} == components_from(want)
    got_suspects = [tuple(r.values()) for r in res.suspects().to_pylist()]
    assert got_suspects == suspects_from(rules, want)
    cells = res.cells()
    for i, dc in enumerate(rules):
        scoped_table = _only_pairs(table, dc, want[i])
        got = {(t, c): v for t, c, d, v in zip(*[cells.column(k).to_pylist() for k in
               ("tid", "column", "dc", "violations")], strict=True) if d == i}  # fmt: skip
        assert got == scoped_table, (text, dc.canonical())
    blocks = facet.detect(
        table, dcs=rules, where=text, output="blocks", mode=mode, config=config
    ).blocks()
    expanded = {i: set() for i in range(len(rules))}
    for dc, t1, t2 in zip(*[blocks.column(c).to_pylist() for c in ("dc", "t1", "t2")],
                          strict=True):  # fmt: skip
        if t2 is None:
            expanded[dc] |= set(t1)
        else:
            expanded[dc] |= {(a, b) for a in t1 for b in t2 if a != b}
    assert expanded == want


@PROPERTY
@given(data=st.data())
def test_semi_join_keeps_exactly_the_rows_each_predicate_pairs_with_an_anchor(data):
    """``filters.semi_join`` against its naive twin: a row stays iff every two-tuple
    predicate holds between it and at least one anchor (NULL holds nothing) -- except
    a non-equality whose anchors hold two values or more, which is skipped (it would
    drop only NULLs, and later stages check it)."""
    from facet.encoding import encode
    from facet.engine.filters import semi_join
    from facet.language.normalize import normalize
    from facet.loading import load

    table, kinds = data.draw(tables(max_rows=25))
    dc = data.draw(dcs(kinds))
    nd = normalize(dc)
    if not nd.preds:
        return
    enc = encode(load(table), analyze([dc]))
    n = table.num_rows
    rows = sorted(data.draw(st.sets(st.integers(0, n - 1))))
    anchors = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1)))
    side = data.draw(st.integers(0, 1))
    holds = {p: naive_pairs(table, DC((Predicate(Col(0, p.a), p.op, Col(1, p.b)),)))
             for p in nd.preds}  # fmt: skip

    def skipped(p) -> bool:
        theirs = table.column(p.b if side == 0 else p.a).to_pylist()
        values = {theirs[a] for a in anchors if theirs[a] is not None and not _is_nan(theirs[a])}
        return p.op == "!=" and len(values) >= 2  # (NaN is NULL: two NaNs are no two values)

    want = [
        r for r in rows
        if all(skipped(p) or
               any(((r, a) if side == 0 else (a, r)) in holds[p] or
                   (r == a and _holds_on_one_row(table, p, r)) for a in anchors)
               for p in nd.preds)
    ]  # fmt: skip
    got = semi_join(enc, nd.preds, np.array(rows, np.int32), side, np.array(anchors, np.int32))
    assert got.tolist() == want, (dc.canonical(), side)


def _holds_on_one_row(table: pa.Table, p, r: int) -> bool:
    """``t.a op t'.b`` with t = t' = row ``r`` (naive pairs leave out (r, r))."""
    one = table.slice(r, 1)
    return bool(naive_pairs(one, DC((Predicate(Col(0, p.a), p.op, Col(0, p.b)),))))


def _only_pairs(table: pa.Table, dc: DC, pairs: set) -> dict:
    """``cells`` counted over ``pairs`` (the scoped violations): each adds 1 to every
    cell of its rows' sides.  Over all of the DC's violations this is
    ``naive_cells``, which the first line checks."""

    def count(ps: set) -> dict:
        side = _sides(dc)
        out: dict = {}
        for p in ps:
            rows = p if isinstance(p, tuple) else (p,)
            for r, cols in zip(rows, side, strict=False):
                for c in cols:
                    out[(r, c)] = out.get((r, c), 0) + 1
        return out

    assert count(naive_pairs(table, dc)) == naive_cells(table, dc)
    return count(pairs)


def _sides(dc: DC) -> tuple[set[str], set[str]]:
    s0: set[str] = set()
    s1: set[str] = set()
    for p in dc.predicates:
        for c in p.columns():
            (s0 if c.tuple == 0 or dc.arity == 1 else s1).add(c.name)
    return s0, s1


# ------------------------------------------------------------------ real data, DuckDB


@pytest.mark.parametrize(
    "where",
    [
        "state = 'NY'",
        "state in ('CA', 'TX') and salary > 60000",
        "not (rate < 5) or zip is null",
        "salary >= 80000 or marital_status != 'M'",
    ],
)
def test_real_data_equals_duckdb_pairs_touching_the_scope(where):
    rules = facet.load_dcs(ROOT / "data" / "tax" / "dc_rules_holoclean.txt")
    rules += facet.load_dcs(None, ["not(t.state = t'.state and t.salary > t'.salary and "
                                   "t.rate < t'.rate)"])  # fmt: skip
    parsed = parse_where(where)
    type_dcs = rules + parsed.dcs()
    n = facet.detect(TAX, dcs=["zip -> zip"]).rows
    scope = scope_rows(parsed, lambda p: duckdb_pairs(TAX, DC((p,)), type_dcs), n)
    res = facet.detect(TAX, dcs=rules, where=where, output="pairs")
    assert res.scope_rows == len(scope)
    assert 0 < len(scope) < n
    for i, dc in enumerate(rules):
        want = scoped(duckdb_pairs(TAX, dc, type_dcs), scope)
        assert _pairs_of(res, i) == want, dc.canonical()
        assert res.dcs[i].violations == len(want)


def test_scopes_over_many_constants_code_by_buckets_and_stay_exact():
    """A column only the scope reads is coded by where its values fall among the
    constants (facet.encoding._bucket_codes; radix_rank_rows=0: a small table takes that
    route). Past a few constants numbers are found by binary search, text nothing
    orders by one hash lookup (any other value coded 0), ordered text is ranked --
    timestamps, decimals and dates as numbers: each gives naive's pairs
    touching the scope."""
    from facet.api import open_session
    from facet.encoding import _MAX_BUCKET_CONSTANTS

    n = 80
    table = pa.table(
        {
            "i": [None if k % 7 == 0 else (k * 37) % 61 - 30 for k in range(n)],
            "f": [None if k % 5 == 0 else ((k * 13) % 29 - 14) / 2 for k in range(n)],
            "s": [None if k % 6 == 0 else f"v{(k * 7) % 43:02d}" for k in range(n)],
            "k": [k % 4 for k in range(n)],
            "x": [(k * 11) % 17 for k in range(n)],
            "dec": pa.array([Decimal((k * 7) % 53) / 4 for k in range(n)], pa.decimal128(8, 2)),
            "ts": pa.array(
                [
                    None if k % 8 == 0 else dt.datetime(2024, 1, 1 + k % 28, tzinfo=dt.UTC)
                    for k in range(n)
                ],
                pa.timestamp("us", "UTC"),
            ),  # fmt: skip
            "day": pa.array(
                [dt.date(2024, 1, 1) + dt.timedelta(days=(k * 5) % 47) for k in range(n)]
            ),  # fmt: skip
        }
    )
    m = _MAX_BUCKET_CONSTANTS + 5  # more constants than ordered text is bucketed with
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=c) for c in range(0, 2 * m, 2)]
    lists = {
        "i": [str(c) for c in range(-m, m, 2)],  # some in the column, some between
        "f": [str(c / 2) for c in range(-m, m, 2)],
        "s": [f"'v{c:02d}'" for c in range(0, 2 * m, 2)] + ["'zz'", "''"],
        "dec": [str(c / 4) for c in range(0, 2 * m, 2)],
        "ts": [f"'{d.isoformat()}T00:00:00Z'" for d in days],
        "day": [f"'{d.isoformat()}'" for d in days],
    }
    ranked = {"s": "ranks"}  # ordered text
    rules = facet.load_dcs(None, ["not(t.k = t'.k and t.x < t'.x)", "not(t.x > 12)"])
    config = Config(radix_rank_rows=0)
    for col, values in lists.items():
        inside = ", ".join(values)
        for text, route in (
            (f"{col} in ({inside})", "buckets"),
            (f"not {col} in ({inside}) or {col} is null", "buckets"),
            (
                f"{col} in ({inside}) and {col} >= {values[3]}",
                ranked.get(col, "buckets"),
            ),  # fmt: skip
        ):
            parsed = parse_where(text)
            scope = scope_rows(parsed, lambda p: naive_pairs(table, DC((p,))), n)
            assert 0 < len(scope) < n, text
            res = facet.detect(table, dcs=rules, where=text, output="pairs", config=config)
            assert res.scope_rows == len(scope), text
            for i, dc in enumerate(rules):
                assert _pairs_of(res, i) == scoped(naive_pairs(table, dc), scope), text
            enc = open_session(table, dcs=rules, where=text, config=config).enc
            assert enc.recipes[col][1] == route, text


# ------------------------------------------------------------------ the language and the CLI


def test_where_grammar():
    w = parse_where("state = 'NY' and (salary > 1000 or not `my col` in (1, 2)) or z is not null")
    assert isinstance(w.expr, Or) and isinstance(w.expr.args[0], And)
    assert [d.body() for d in w.dcs()] == [
        'not(t.state = "NY")', "not(t.salary > 1000)", "not(t.`my col` = 1)",
        "not(t.`my col` = 2)", "not(t.z = t.z)",
    ]  # fmt: skip
    assert w.columns() == ["state", "salary", "my col", "z"]
    assert isinstance(parse_where("NOT a IS NULL").expr, Not)


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("", 1, "empty --where"),
        ("a", 2, "expected a comparison"),
        ("a = 1 b", 7, "join conditions with 'and' or 'or'"),
        ("(a = 1", 7, "expected ')' to close"),
        ("1 = 2", 1, "at least one column"),
        ("a in (b)", 8, "'in' takes values"),
        ("a is 3", 6, "expected 'null'"),
        ("and = 1", 1, "`and`"),
        ("a => 1", 3, "write '>='"),
        ("a = -", 5, "expected a column name, a quoted string or a number"),
        ("a = null", 5, "test for it with 'column is null'"),
        ("a.b = 1", 1, "goes in backticks: `a.b`"),
        ("x > 1 and t.state = 2", 11, "bare names in --where (write state)"),
        ("a = 1 state = 2", 7, "unexpected 'state'"),
    ],
)
def test_where_syntax_errors_point_at_the_column(text, column, message):
    with pytest.raises(DCSyntaxError, match=re.escape(message)) as err:
        parse_where(text)
    assert err.value.column == column


def test_where_takes_no_comment_and_no_line_break_between_tokens(tmp_path):
    """``#`` starts no comment in a --where (the rest of the condition is not
    dropped); a line break is refused where it stands between tokens, and is
    text inside quotes, as in a DC, so a field holding one can be scoped."""
    for text, column in (("a = 1 # or b = 2", 7), ("a = 1\nor b = 2", 6), ("#", 1)):
        with pytest.raises(DCSyntaxError) as err:
            parse_where(text)
        assert err.value.column == column, text
    data = tmp_path / "nl.csv"
    data.write_text('A,B\n"a\nb",1\n"a\nb",2\nc,3\n')
    res = facet.detect(data, dcs=["not(t.A = t'.A)"], where="A = 'a\nb'")
    assert (res.scope_rows, res.dcs[0].violations) == (2, 2)
    res = facet.detect(data, dcs=["not(t.A = t'.A)"], where="`A` = 'a\nb' or B = 3")
    assert (res.scope_rows, res.dcs[0].violations) == (3, 2)


def test_where_nesting_is_bounded_by_a_clear_error(tmp_path):
    """Brackets and ``not`` nest up to MAX_NESTING levels, which every walk over
    the tree handles; deeper is bad input (exit 2, one line), not a RecursionError
    (exit 3) -- a contract probe's finding for the DC parser."""
    half = MAX_NESTING // 2
    ok = "(" * half + "not " * half + "a = 1 or (b = 'x' and a > 0)" + ")" * half
    assert parse_where(ok).columns() == ["a", "b"]
    path = tmp_path / "d.csv"
    path.write_text("a,b\n1,x\n1,y\n2,z\n")
    args = [sys.executable, "-m", "facet", "detect", str(path), "--dc", "not(t.a = t'.a)"]
    done = subprocess.run(
        [*args, "--where", ok, "--format", "json"], capture_output=True, text=True
    )
    assert done.returncode == 1 and json.loads(done.stdout)["scope_rows"] == 2
    deep = "(" * half + "not " * (half + 1) + "a = 1" + ")" * half
    with pytest.raises(DCSyntaxError, match=f"more than {MAX_NESTING} deep") as err:
        parse_where(deep)
    assert err.value.column == half + 4 * half + 1  # at the 101st level's 'not'
    done = subprocess.run([*args, "--where", deep], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_where_types_csv_columns_and_refuses_bad_constants(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n10,x\n9,x\n100,y\n,y\n")
    # 'a > 9' types a as a number (text would order "10" < "9"): rows 0 and 2
    res = facet.detect(path, dcs=["b -> b"], where="a > 9")
    assert res.scope_rows == 2
    # a NULL comparison leaves the row out, and so does its negation
    assert facet.detect(path, dcs=["b -> b"], where="not (a > 9)").scope_rows == 1
    assert facet.detect(path, dcs=["b -> b"], where="a is null").scope_rows == 1
    with pytest.raises(FacetInputError, match='--where:1: constant "x"'):
        facet.detect(path, dcs=["b -> b"], where="a > 'x'")
    with pytest.raises(FacetInputError, match="--where:1: unknown column 'zz'"):
        facet.detect(path, dcs=["b -> b"], where="zz = 1")


def test_a_column_where_orders_is_named_in_the_warning(tmp_path):
    """docs/semantics.md §4.3's warning names what made an =-column numeric: --where,
    or another DC (100 and 100.0 are then equal)."""
    path = tmp_path / "t.csv"
    path.write_text("salary,b\n100,1\n100.0,2\n7,3\n")
    eq, order = "not(t.salary = t'.salary)", "not(t.salary < t'.salary and t.b > t'.b)"
    for rules, where, by in (([eq], "salary > 50", "--where"), ([eq, order], None, "another DC")):
        warned: list[str] = []
        res = facet.detect(path, dcs=rules, where=where, on_warning=warned.append)
        assert res.dcs[0].violations == 2
        assert [w for w in warned if "compares as numbers" in w] == [
            f"--dc:1: column 'salary' compares as numbers here because {by} orders it with "
            "< <= > >=; values that differ as text but not as numbers (5 and 5.0, 01907 and "
            "1907) count as equal"
        ]


def test_the_warning_names_a_type_that_came_along_a_comparison(tmp_path):
    """A column ordered by no predicate but compared with an ordered one (in its own
    DC, here) is not blamed on 'another DC'; timestamps say so, with their own example."""
    path = tmp_path / "t.csv"
    path.write_text("a,c,d\n1,5,2020-01-01\n2,5.0,2020-01-01T00:00\n")
    warned: list[str] = []
    facet.detect(path, dcs=["not(t.a < t'.a and t.a = t.c)", "not(t.d = t'.d)",
                            "not(t.d < t'.d)"], on_warning=warned.append)  # fmt: skip
    assert warned == [
        "--dc:1: column 'c' compares as numbers here because a column it is compared with "
        "is ordered with < <= > >=; values that differ as text but not as numbers (5 and "
        "5.0, 01907 and 1907) count as equal",
        "--dc:2: column 'd' compares as timestamps here because another DC orders it with "
        "< <= > >=; values that differ as text but not as timestamps (2024-01-31 and "
        "2024-01-31T00:00) count as equal",
    ]


def test_where_on_the_command_line(tmp_path):
    exe = [sys.executable, "-m", "facet"]
    base = [str(TAX), "--dc", "zip -> city", "--where", "state = 'NY'"]
    proc = subprocess.run([*exe, "detect", *base, "--format", "json", "--exit-zero"],
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["where"] == "state = 'NY'" and doc["scope_rows"] > 0
    full = facet.detect(TAX, dcs=["zip -> city"], output="pairs").pairs()
    ny = set(facet.detect(TAX, dcs=["not(t.state = 'NY')"], output="pairs").pairs()["t1"]
             .to_pylist())  # fmt: skip
    want = sum(1 for a, b in zip(full["t1"].to_pylist(), full["t2"].to_pylist(), strict=True)
               if a in ny or b in ny)  # fmt: skip
    assert doc["dcs"][0]["violations"] == want and doc["scope_rows"] == len(ny)
    text = subprocess.run([*exe, "detect", *base], capture_output=True, text=True)
    assert f"holding one of the {len(ny):,} rows where state = 'NY'" in text.stdout
    plan = subprocess.run([*exe, "explain", *base, "--format", "json"], capture_output=True,
                          text=True)  # fmt: skip
    assert plan.returncode == 0 and json.loads(plan.stdout)["scope_rows"] == len(ny)
    plan = subprocess.run([*exe, "explain", *base], capture_output=True, text=True)
    assert f"scope: the {len(ny):,} rows where state = 'NY'; initial pairs" in plan.stdout
    assert "tuples (sides summed over the initial pairs)" in plan.stdout
    bad = subprocess.run([*exe, "detect", *base[:-1], "state = "], capture_output=True, text=True)
    assert bad.returncode == 2 and "--where:1:8" in bad.stderr and "Traceback" not in bad.stderr
    twice = subprocess.run([*exe, "detect", *base, "--where", "state = 'CA'"],
                           capture_output=True, text=True)  # fmt: skip
    assert twice.returncode == 2 and "--where: given twice" in twice.stderr
    assert len(twice.stderr.strip().splitlines()) == 1
    none = subprocess.run([*exe, "detect", *base[:-1], "zip = -1"], capture_output=True,
                          text=True)  # fmt: skip
    assert "holding no row where zip = -1" in none.stdout, none.stdout
    tiny = tmp_path / "tiny.csv"
    tiny.write_text("k,v\n1,a\n1,b\n2,c\n")
    one = subprocess.run([*exe, "detect", str(tiny), "--dc", "k -> v", "--where", "v = 'a'"],
                         capture_output=True, text=True)  # fmt: skip
    assert "holding the 1 row where v = 'a'" in one.stdout, one.stdout
    plan = subprocess.run([*exe, "explain", str(tiny), "--dc", "k -> v", "--where", "v = 'a'"],
                          capture_output=True, text=True)  # fmt: skip
    assert "scope: the 1 row where v = 'a';" in plan.stdout, plan.stdout


def test_semi_join_keeps_a_large_side_whole_when_it_would_keep_most_of_it():
    """Past 8 x 2048 rows a strided sample decides first: a side the semi-join would
    keep more than ``whole_above`` of comes back whole (the same array); one it cuts
    hard is cut exactly as without the sample."""
    from facet.encoding import encode
    from facet.engine.filters import semi_join
    from facet.language.normalize import normalize
    from facet.loading import load

    n = 40_000
    rng = np.random.default_rng(5)
    table = pa.table({"k": rng.integers(0, 1000, n), "v": rng.integers(0, 100, n)})
    dc = facet.language.parse_dc("not(t.k = t'.k and t.v < t'.v)")[0]
    enc = encode(load(table), analyze([dc]))
    preds = normalize(dc).preds
    rows = np.arange(n, dtype=np.int32)
    wide = rows[enc.column("k") < 900]  # anchors holding 90% of the keys
    got = semi_join(enc, preds, rows, 1, wide, whole_above=0.5)
    assert got is rows
    few = rows[enc.column("k") < 10]  # 1% of the keys: cut, and exactly
    cut = semi_join(enc, preds, rows, 1, few, whole_above=0.5)
    assert cut.tolist() == semi_join(enc, preds, rows, 1, few).tolist()
    assert 0 < cut.size < n // 50


def test_groups_pairs_equal_pairs_concatenated():
    """``Groups.pairs`` (one buffer, one copy) holds the groups ``concat`` of
    ``Groups.pair`` holds; one group is disjoint, two are not (scoped_pairs' R and
    R ∩ S share rows)."""
    from facet.engine.groups import Groups, concat

    rng = np.random.default_rng(5)
    sides = [
        (np.sort(rng.choice(50, k, replace=False)), np.arange(j, 40))
        for k, j in ((7, 3), (0, 39), (12, 0))
    ]
    got = Groups.pairs(sides)
    want = concat([Groups.pair(left, right) for left, right in sides])
    assert np.array_equal(got.buf, want.buf) and np.array_equal(got.desc, want.desc)
    assert not got.disjoint
    assert Groups.pairs(sides[:1]).disjoint and len(Groups.pairs([])) == 0


def test_semi_join_reads_nan_anchors_as_null():
    """Anchors whose column is all NaN hold no value (NaN is NULL): a non-equality
    against them is not skipped as if they held two, and keeps no row."""
    from facet.encoding import encode
    from facet.engine.filters import semi_join
    from facet.language.normalize import normalize
    from facet.loading import load

    table = pa.table({"c2": pa.array([float("nan")] * 11)})
    (dc,) = facet.language.parse_dc("not(t.c2 != t'.c2)")
    enc = encode(load(table), analyze([dc]))
    got = semi_join(enc, normalize(dc).preds, np.array([0], np.int32), 0,
                    np.array([0, 3], np.int32))  # fmt: skip
    assert got.tolist() == []
    assert not _is_nan(None) and _is_nan(float("nan"))
