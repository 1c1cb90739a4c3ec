"""``Detector.where`` (docs/semantics.md §11): a scope asked of a table kept
encoded, after any appends, must equal the naive violations of the table so far
that hold a row of the scope -- counts, rows involved and pairs -- whether the
DC is counted from the appends' tallies and indexes (keys, FDs, two
inequalities: the scope against the whole table, less the scope against itself)
or by a scoped run over the kept encoding, and whether the scope is typed over
every row or over its columns' distinct values; and equal :func:`facet.detect`
with ``where`` on the same rows."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import facet
from facet.detector import _ScopedSession
from facet.errors import FacetInputError
from facet.language.ast import DC
from facet.language.where import parse_where
from facet.planner.config import DEFAULT
from tests.appends import rows_of
from tests.naive import naive_pairs
from tests.strategies import dcs, examples, tables
from tests.test_dominance_index import plane_dcs, plane_tables
from tests.test_where import _pairs_of, scope_rows, scoped, where_texts

SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]


def _check(det: facet.Detector, table: pa.Table, rules: list, text: str, pairs: bool) -> None:
    """``det.where(text)`` against the naive pairs of ``table`` touching the scope."""
    n = table.num_rows
    scope = scope_rows(parse_where(text), lambda p: naive_pairs(table, DC((p,))), n)
    want = [scoped(naive_pairs(table, dc), scope) for dc in rules]
    # the first scope over its columns types them over every row, the next one
    # over their distinct values (facet/scope_columns.py)
    for res in (det.where(text), det.where(text)):
        assert res.scope_rows == len(scope), text
        assert res.where == text.strip()
        for i, d in enumerate(res.dcs):
            assert d.violations == len(want[i]), (text, rules[i].canonical())
            assert d.rows_involved == len(rows_of(want[i])), (text, rules[i].canonical())
    if pairs:  # a counted result's pairs come on demand from a scoped session
        for i in range(len(rules)):
            assert _pairs_of(res, i) == want[i], (text, rules[i].canonical())
        listed = det.where(text, output="pairs")
        for i in range(len(rules)):
            assert _pairs_of(listed, i) == want[i], (text, rules[i].canonical())


@st.composite
def plane_wheres(draw) -> str:
    """A scope over the plane tables' columns (``w``: a column no DC uses)."""
    atoms = [
        f"w {draw(st.sampled_from(['<', '<=', '=', '!=', '>']))} {draw(st.integers(0, 4))}",
        f"x {draw(st.sampled_from(['<', '>=']))} {draw(st.integers(-8, 8))}",
        f"s in ({', '.join(repr(c) for c in draw(st.lists(st.sampled_from('abc'), min_size=1)))})",
        f"k is {draw(st.sampled_from(['', 'not ']))}null",
        "w < 0",  # nothing
        "not (w < 0)",  # every row with a w
    ]
    picked = draw(st.lists(st.sampled_from(atoms), min_size=1, max_size=2))
    return f" {draw(st.sampled_from(['and', 'or']))} ".join(f"({a})" for a in picked)


@settings(max_examples=examples(200, 25), deadline=None, suppress_health_check=SLOW)
@given(data=st.data(), table=plane_tables())
def test_counted_scopes_equal_naive_after_appends(data, table):
    """Keys, FDs and two-inequality DCs (and one DC the tallies do not answer)
    scoped after the base run and after each append."""
    n = table.num_rows
    w = data.draw(st.lists(st.one_of(st.none(), st.integers(0, 4)), min_size=n, max_size=n))
    table = table.append_column("w", pa.array(w, pa.int64()))
    texts = data.draw(st.lists(plane_dcs(), min_size=1, max_size=2))
    texts += data.draw(
        st.lists(
            st.sampled_from(
                [
                    "not(t.k = t'.k and t.s != t'.s)",  # FD
                    "not(t.x = t'.x)",  # key
                    "not(t.k = t'.k and t.s = t'.s)",  # key of two columns
                    "not(t.x < t'.x and t.k != t'.k)",  # a scoped run
                ]
            ),
            max_size=2,
            unique=True,
        )
    )
    rules = facet.load_dcs(None, texts)
    cuts = sorted(data.draw(st.lists(st.integers(1, max(n, 1)), max_size=3)))
    bounds = [b for b in dict.fromkeys([*cuts, n]) if b <= n]
    keep = ["w", "k", "s", "x"]
    det = facet.Detector(table.slice(0, bounds[0]), dcs=rules, where_columns=keep)
    first = True
    for lo, hi in zip(bounds, bounds[1:] + [None], strict=True):
        so_far = table.slice(0, lo)
        text = data.draw(plane_wheres())
        _check(det, so_far, rules, text, pairs=first)
        first = False
        if hi is not None:
            det.append(table.slice(lo, hi - lo))


@settings(max_examples=examples(120, 15), deadline=None, suppress_health_check=SLOW)
@given(data=st.data())
def test_scopes_of_every_shape_equal_naive_and_detect(data):
    """Random DCs of every shape (constants, cross-column, single-tuple, NULLs)
    and random scopes; the result equals a one-shot ``detect(where=...)``."""
    table, kinds = data.draw(tables(max_rows=20))
    rules = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(1, 3)))]
    det = facet.Detector(table, dcs=rules, where_columns=table.column_names)
    text = data.draw(where_texts(kinds))
    _check(det, table, rules, text, pairs=False)
    one_shot = facet.detect(table, dcs=rules, where=text)
    got = det.where(text)
    assert [(d.violations, d.rows_involved) for d in got.dcs] == [
        (d.violations, d.rows_involved) for d in one_shot.dcs
    ]


def test_counted_and_run_scopes_agree_on_a_larger_table():
    """Thousands of rows, several appends, keys with many rows: the tallied and
    indexed counts equal the scoped runs' (``append_tallies`` / ``append_indexes``
    off), and the counted path is the one taken."""
    rng = np.random.default_rng(11)
    n = 6000
    table = pa.table(
        {
            "k": rng.integers(0, 6, n),
            "x": rng.integers(0, 10**5, n),
            "y": rng.integers(0, 300, n),
            "z": rng.integers(0, 40, n),
            "w": rng.integers(0, 100, n),
        }
    )
    rules = [
        "not(t.k = t'.k and t.x > t'.x and t.y < t'.y)",
        "not(t.x >= t'.y and t.y <= t'.x)",
        "not(t.z = t'.z and t.k != t'.k)",
        "not(t.y = t'.y and t.z = t'.z)",
        "not(t.x > t'.x and t.y > t'.y and t.z < t'.z)",
    ]
    off = DEFAULT.but(append_tallies=False, append_indexes=False)
    on = facet.Detector(table.slice(0, 4000), dcs=rules, where_columns=["w"])
    plain = facet.Detector(table.slice(0, 4000), dcs=rules, where_columns=["w"], config=off)
    for lo in range(4000, n, 700):
        on.append(table.slice(lo, 700))
        plain.append(table.slice(lo, 700))
        for text in ("w < 3", "w = 7 or k = 2", "y >= 290"):
            a, b = on.where(text), plain.where(text)
            assert isinstance(a._session, _ScopedSession)
            assert not isinstance(b._session, _ScopedSession)
            assert [(d.violations, d.rows_involved) for d in a.dcs] == [
                (d.violations, d.rows_involved) for d in b.dcs
            ], text
    full = facet.detect(table, dcs=rules, where="w < 3")
    assert [d.violations for d in on.where("w < 3").dcs] == [d.violations for d in full.dcs]


def test_where_columns_are_typed_by_the_scope(tmp_path):
    """CSV text: a where-only column compared with ``<`` is read as numbers, as
    ``--where`` reads it; DC columns keep the detector's types; the table and
    later appends are unchanged by a scope."""
    path = tmp_path / "t.csv"
    path.write_text("a,b,code\n1,5,010\n2,4,9\n3,3,100\n4,9,08\n5,1,x\n")
    rules = ["not(t.a < t'.a and t.b > t'.b)"]
    det = facet.Detector(path, dcs=rules, where_columns=["code"])
    for text in ("code < 50", "code = '010'", "a >= 4", "code is null"):
        got = det.where(text)
        want = facet.detect(path, dcs=rules, where=text)
        assert (got.scope_rows, got.dcs[0].violations, got.dcs[0].rows_involved) == (
            want.scope_rows,
            want.dcs[0].violations,
            want.dcs[0].rows_involved,
        ), text
    batch = tmp_path / "b.csv"
    batch.write_text("a,b,code\n0,10,7\n")
    assert det.append(batch).dcs[0].violations == 5
    assert det.where("code < 8").dcs[0].violations == 5  # row 5 (7) only: 08 is 8
    assert det.where("code < 9").dcs[0].violations == 5 + 1  # and 08: (4, 9) > (5, 1)
    assert det.totals()["total_violations"] == 7 + 5


def test_where_errors(tmp_path):
    table = pa.table({"a": [1, 2, 3], "b": [3, 2, 1], "note": ["x", "y", "z"]})
    det = facet.Detector(table, dcs=["not(t.a < t'.a and t.b > t'.b)"])
    with pytest.raises(FacetInputError, match=r"column 'note' is not kept.*where_columns"):
        det.where("note = 'x'")
    with pytest.raises(FacetInputError, match=r"unknown column 'nte'.*did you mean 'note'"):
        det.where("nte = 'x'")
    with pytest.raises(FacetInputError, match=r"where_columns: unknown column 'nope'"):
        facet.Detector(table, dcs=["not(t.a < t'.a)"], where_columns=["nope"])
    wide = table.append_column("Notes", pa.array(["a", "b", "c"]))
    with pytest.raises(FacetInputError, match=r"unknown column 'Note'.*did you mean 'note'"):
        facet.detect(wide, dcs=["not(t.a < t'.a)"], where="Note = 'x'")  # names keep case
    assert det.where("a > 1").dcs[0].violations == 3  # the detector still answers


@settings(max_examples=examples(100, 12), deadline=None, suppress_health_check=SLOW)
@given(data=st.data())
def test_csv_scopes_equal_one_shot_runs(data, tmp_path_factory):
    """CSV text: where-columns are typed by each scope (numbers when compared with
    ``<``, text otherwise), over every row the first time and over the distinct
    values after; DC columns keep the detector's types.  Equal to a one-shot
    ``detect(where=...)`` given the detector's types, before and after an append."""
    import pyarrow.csv as pacsv

    table, kinds = data.draw(tables(min_rows=2, max_rows=20))
    rules = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(1, 2)))]
    cut = data.draw(st.integers(1, table.num_rows))
    folder = tmp_path_factory.mktemp("csv")
    whole, base, batch = folder / "whole.csv", folder / "base.csv", folder / "batch.csv"
    pacsv.write_csv(table, whole)
    pacsv.write_csv(table.slice(0, cut), base)
    pacsv.write_csv(table.slice(cut), batch)
    try:
        det = facet.Detector(base, dcs=rules, where_columns=table.column_names)
    except FacetInputError:  # DCs these CSV values cannot be typed for
        assume(False)
    texts = [data.draw(where_texts(kinds)) for _ in range(2)]
    for path in (base, whole):
        for text in texts + texts:  # typed over every row, then over distinct values
            try:
                want = facet.detect(path, dcs=rules, where=text, schema=det._schema_map())
            except FacetInputError as err:  # a constant or column of the wrong kind
                if "incompatible types" in str(err):
                    # a component of DC and scope columns exists only in the one-shot
                    # run, which types them together (semantics §11.1)
                    continue
                with pytest.raises(FacetInputError):
                    det.where(text)
                continue
            try:
                got = det.where(text)
            except FacetInputError as err:  # the same, the other way round
                assert "incompatible types" in str(err), text
                continue
            assert got.scope_rows == want.scope_rows, text
            assert [(d.violations, d.rows_involved) for d in got.dcs] == [
                (d.violations, d.rows_involved) for d in want.dcs
            ], text
        if path == base and cut < table.num_rows:
            try:
                det.append(batch)
            except FacetInputError as err:
                # a column the base holds no value of takes its type from the batch
                # (semantics §11): refused where one run of the whole table fails too
                reason = str(err).split(": ", 1)[1]
                with pytest.raises(FacetInputError, match=re.escape(reason)):
                    facet.detect(whole, dcs=rules)
                break
        elif path == base:
            break


def test_scopes_over_dictionary_and_all_null_columns():
    """A where-column that arrives dictionary-encoded, or all NULL, has no kept
    dictionary: every scope over it types its rows, with the same answers."""
    rng = np.random.default_rng(4)
    n = 300
    region = pa.array(rng.choice(["eu", "us", "apac"], n)).dictionary_encode()
    table = pa.table(
        {
            "x": rng.integers(0, 50, n),
            "y": rng.integers(0, 50, n),
            "region": region,
            "empty": pa.nulls(n),
        }
    )
    rules = ["not(t.x > t'.x and t.y < t'.y)"]
    det = facet.Detector(table, dcs=rules, where_columns=["region", "empty"])
    for text in ("region = 'eu'", "region = 'eu' or empty is null", "empty is not null"):
        for _ in range(2):
            got = det.where(text)
            want = facet.detect(table, dcs=rules, where=text)
            assert (got.scope_rows, got.dcs[0].violations, got.dcs[0].rows_involved) == (
                want.scope_rows,
                want.dcs[0].violations,
                want.dcs[0].rows_involved,
            ), text
    assert det._scopes.dictionaries == {"region": None, "empty": None}
    det.append(table.slice(0, 10))
    grown = pa.concat_tables([table, table.slice(0, 10)])
    want = facet.detect(grown, dcs=rules, where="region = 'us'")
    assert det.where("region = 'us'").dcs[0].violations == want.dcs[0].violations


@pytest.mark.parametrize(
    "where",
    ["state = 'NY'", "state in ('CA', 'TX') and salary > 60000", "not (rate < 5) or zip is null"],
)
def test_real_data_scopes_equal_duckdb_pairs(where):
    """The shared Tax file and its rules (keys, FDs, the salary/rate DC counted
    from the index): a kept detector's scopes equal DuckDB's pairs touching the
    scope, counts and pair sets."""
    from tests.sql_oracle import duckdb_pairs
    from tests.test_where import TAX

    rules = facet.load_dcs(TAX.parent / "dc_rules_holoclean.txt")
    rules += facet.load_dcs(
        None, ["not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)"]
    )
    parsed = parse_where(where)
    type_dcs = rules + parsed.dcs()
    det = facet.Detector(TAX, dcs=rules, where_columns=["state", "salary", "rate", "zip"])
    n = det.rows
    scope = scope_rows(parsed, lambda p: duckdb_pairs(TAX, DC((p,)), type_dcs), n)
    counted = det.where(where)
    listed = det.where(where, output="pairs")
    assert counted.scope_rows == listed.scope_rows == len(scope)
    for i, dc in enumerate(rules):
        want = scoped(duckdb_pairs(TAX, dc, type_dcs), scope)
        assert counted.dcs[i].violations == len(want), dc.canonical()
        assert _pairs_of(listed, i) == want, dc.canonical()


@pytest.mark.parametrize("columns", [["e"], ["e", "B"]])
def test_a_scope_written_to_json_carries_where_and_scope_rows(tmp_path, columns):
    """``det.where(..., out='x.json')`` writes what ``facet.detect(where=...)``
    writes, ``where`` and ``scope_rows`` included (they were missing from the
    file; a probe's finding)."""
    import json

    t = pa.table({"A": pa.array([1, 1, 1]), "e": pa.array([1, 2, 3]), "B": [1, 2, 3]})
    dcs = ["not(t.A = t'.A)"] if len(columns) == 1 else ["not(t.A = t'.A and t.B < t'.B)"]
    det = facet.Detector(t, dcs=dcs, where_columns=columns)
    det.where("e = 1", out=tmp_path / "det.json")
    facet.detect(t, dcs=dcs, where="e = 1", out=tmp_path / "one.json")
    got, want = (json.loads((tmp_path / f).read_text()) for f in ("det.json", "one.json"))
    assert (got["where"], got["scope_rows"]) == (want["where"], want["scope_rows"]) == ("e = 1", 1)
    assert got["dcs"][0]["violations"] == want["dcs"][0]["violations"] == 4 // len(columns)
