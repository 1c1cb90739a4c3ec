"""``tuples``, ``cells`` and ``components`` (docs/outputs.md) against what the
pairs say (facet/engine/row_outputs.py computes them without listing pairs).

The derivations from a set of pairs are the obvious ones (``tests/naive.py``'s
``naive_cells`` for cells); the pairs come from ``tests/naive.py`` on random
tables and DCs, and from facet's pairs output (itself checked against the naive
evaluator and DuckDB) on the real data, where the O(n^2) evaluator is too slow.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
from facet.api import load_dcs
from facet.language.normalize import INEQUALITY, normalize
from tests.naive import naive_cells, naive_pairs
from tests.strategies import dcs, tables

ROOT = Path(__file__).resolve().parent.parent
TAX = ROOT / "data" / "tax" / "tax_dirty_0010k.csv"
MAX_PAIRS = 300_000


def tuples_from(pairs_by_dc: dict[int, set]) -> set:
    """``(tid, dc, pairs, partners)`` from each DC's pairs (rows: single-tuple)."""
    out = set()
    for dc, pairs in pairs_by_dc.items():
        count: dict[int, int] = defaultdict(int)
        partners: dict[int, set] = defaultdict(set)
        for p in pairs:
            if isinstance(p, tuple):
                a, b = p
                count[a] += 1
                count[b] += 1
                partners[a].add(b)
                partners[b].add(a)
            else:
                count[p] += 1
        out.update((t, dc, c, len(partners[t])) for t, c in count.items())
    return out


def components_from(pairs_by_dc: dict[int, set]) -> set:
    """``(tid, component, size)``: components numbered by their least row."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for pairs in pairs_by_dc.values():
        for p in pairs:
            if isinstance(p, tuple):
                ra, rb = find(p[0]), find(p[1])
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
            else:
                find(p)
    members: dict[int, list[int]] = defaultdict(list)
    for t in sorted(parent):
        members[find(t)].append(t)
    order = sorted(members, key=lambda r: members[r][0])
    return {(t, k, len(members[r])) for k, r in enumerate(order) for t in members[r]}


def _rows(table: pa.Table) -> set:
    return set(zip(*[table.column(c).to_pylist() for c in table.column_names], strict=True))


def _cells(table: pa.Table, dc: int) -> dict:
    return {(r["tid"], r["column"]): r["violations"] for r in table.to_pylist() if r["dc"] == dc}


PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(data=st.data())
def test_random_tables_and_dcs_equal_naive(data):
    table, kinds = data.draw(tables(max_rows=30))
    rules = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(1, 3)))]
    res = facet.detect(table, dcs=rules)
    want = {i: naive_pairs(table, dc) for i, dc in enumerate(rules)}
    assert _rows(res.tuples()) == tuples_from(want)
    assert _rows(res.components()) == components_from(want)
    cells = res.cells()
    for i, dc in enumerate(rules):
        assert _cells(cells, i) == naive_cells(table, dc), dc.canonical()
    assert res.tuples().schema.names == ["tid", "dc", "pairs", "partners"]


def _pair_files() -> list[tuple[Path, Path]]:
    out = []
    for folder in sorted(p for p in (ROOT / "data").rglob("*") if p.is_dir()):
        files = sorted(folder.glob("*.csv"))
        dirty = [f for f in files if "dirty" in f.name] or files
        for rules in sorted(folder.glob("*.txt")):
            if ("rules" in rules.name or "constraints" in rules.name) and dirty:
                out.append((dirty[0], rules))
    return out


@pytest.mark.parametrize(("csv", "rules"), _pair_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_rules_file_equals_its_pairs(csv, rules):
    counted = facet.detect(csv, rules)
    small = [d.dc for d in counted.dcs if d.violations <= MAX_PAIRS]
    dc_list = load_dcs(rules)
    keep = [dc_list[i] for i, d in enumerate(counted.dcs) if d.violations <= MAX_PAIRS]
    res = facet.detect(csv, dcs=keep, output="pairs")
    pairs = res.pairs()
    want: dict[int, set] = defaultdict(set)
    for dc, t1, t2 in zip(*[pairs.column(c).to_pylist() for c in ("dc", "t1", "t2")], strict=True):
        want[dc].add(t1 if t2 is None else (t1, t2))
    for i in range(len(keep)):
        want.setdefault(i, set())
    assert _rows(res.tuples()) == tuples_from(want)
    assert _rows(res.components()) == components_from(want)
    # every DC (also those with too many pairs to list): pairs per row add up to the count
    tuples = counted.tuples()
    for d in counted.dcs:
        got = [
            r["pairs"]
            for r in tuples.filter(pa.compute.equal(tuples.column("dc"), d.id)).to_pylist()
        ]
        assert sum(got) == (d.violations if d.arity == 1 else 2 * d.violations), d.dc
        assert len(got) == d.rows_involved
    assert len(small) == len(keep)


def test_cli_writes_and_prints_row_outputs(tmp_path):
    dcs = ["zip -> city", "not(t.salary < 40000)"]
    args = [sys.executable, "-m", "facet", "detect", str(TAX), "--exit-zero"]
    for d in dcs:
        args += ["--dc", d]
    want = facet.detect(TAX, dcs=dcs)
    for output in ("tuples", "cells", "components"):
        out = tmp_path / f"{output}.parquet"
        subprocess.run([*args, "--output", output, "--out", str(out)], check=True,
                       capture_output=True)  # fmt: skip
        assert pq.read_table(out).equals(getattr(want, output)())
        doc = json.loads(subprocess.run([*args, "--output", output, "--format", "json"],
                                        check=True, capture_output=True, text=True).stdout)  # fmt: skip
        assert doc[output] == getattr(want, output)().to_pylist()
        text = subprocess.run([*args, "--output", output], check=True, capture_output=True,
                              text=True).stdout  # fmt: skip
        header = ",".join(getattr(want, output)().column_names)
        assert header in text.splitlines()
    # the Spark engine prints the same rows (it refused row outputs before, exit 2)
    printed = {}
    for engine in ("local", "spark"):
        proc = subprocess.run([*args, "--output", "cells", "--engine", engine],
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        printed[engine] = lines[lines.index("tid,column,dc,violations") :]
    assert len(printed["local"]) > 100 and printed["spark"] == printed["local"]


# ------------------------------------------------------------------ suspects


def suspects_from(rules: list, pairs_by_dc: dict[int, set]) -> list[tuple]:
    """``(tid, column, score, rank)``: the greedy cover, one violation at a time.
    A violation's cells are the columns each side reads; the cell in the most
    uncovered violations goes first (ties: the cell whose column that DC's side
    compares with != or an order or a constant in more of them, then the lower
    tid, then the column's place)."""
    from facet.language.ast import Col
    from facet.language.normalize import normalize

    normal = [normalize(dc) for dc in rules]

    def side(nd, s: int) -> list[str]:
        cols = [p.a if s == 0 else p.b for p in nd.preds]
        for f in nd.filters:
            if f.side == s:
                cols += [f.column] + ([f.other] if isinstance(f.other, str) else [])
        return list(dict.fromkeys(cols))

    def named(dc) -> list[str]:  # the DC's columns in its text's order
        return list(dict.fromkeys(c.name for p in dc.predicates for c in p.columns()))

    sides = [(side(nd, 0), side(nd, 1) if nd.arity == 2 else []) for nd in normal]
    names = list(dict.fromkeys(c for dc in rules for c in named(dc)))

    def strong(dc, s: int) -> set[str]:
        """!=, an order, or a constant: strong; a column compared only with = is weak
        (t.a = t'.a, t.a = t.b, t.a = t.a) -- as the DC is written (t.a <= t'.a and
        t.a >= t'.a, which runs as t.a = t'.a, reads a strong)."""
        cols = set()
        for p in dc.predicates:
            ends = [c for c in (p.left, p.right) if isinstance(c, Col)]
            if p.op == "=" and len(ends) == 2:
                continue
            cols |= {c.name for c in ends if (c.tuple if dc.arity == 2 else 0) == s}
        return cols

    edges = []
    for i, pairs in pairs_by_dc.items():
        for p in pairs:
            a, b = p if isinstance(p, tuple) else (p, None)
            cells = {(a, c): c in strong(rules[i], 0) for c in sides[i][0]}
            if b is not None:
                cells |= {(b, c): c in strong(rules[i], 1) for c in sides[i][1]}
            edges.append(cells)
    out = []
    while edges:
        deg: dict[tuple, int] = defaultdict(int)
        hard: dict[tuple, int] = defaultdict(int)
        for e in edges:
            for cell, flag in e.items():
                deg[cell] += 1
                hard[cell] += flag
        best = min(deg, key=lambda c: (-deg[c], -hard[c], c[0], names.index(c[1])))
        out.append((best[0], best[1], deg[best], len(out) + 1))
        edges = [e for e in edges if best not in e]
    return out


@PROPERTY
@given(data=st.data())
def test_suspects_equal_the_naive_greedy_cover(data):
    table, kinds = data.draw(tables(max_rows=25))
    rules = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(1, 3)))]
    res = facet.detect(table, dcs=rules, output="suspects")
    want = suspects_from(rules, {i: naive_pairs(table, dc) for i, dc in enumerate(rules)})
    got = res.suspects()
    assert got.schema.names == ["tid", "column", "score", "rank"]
    assert list(zip(*[got.column(c).to_pylist() for c in got.column_names], strict=True)) == want
    # the violations not counted first: the cells' arrays grow as they are listed
    assert res._session.row_output("suspects").equals(got)


def test_dense_ids_by_marks_equal_numpy_unique():
    """Cell ids made dense by a mark per possible id (no sort) or by np.unique (a
    sparse id space): the same distinct ids and indices."""
    from facet.engine.row_outputs import _dense

    rng = np.random.default_rng(3)
    ids = rng.integers(0, 5000, 20_000).astype(np.int32)
    marks = _dense(ids, 5000)
    uniq = _dense(ids, 1 << 30)  # (past 2 * ids + 2^24: np.unique)
    want, inverse = np.unique(ids, return_inverse=True)
    for distinct, dense in (marks, uniq):
        assert distinct.tolist() == want.tolist() and dense.tolist() == inverse.tolist()
        assert dense.dtype == np.int32


def test_suspects_refuse_a_cover_the_memory_cannot_hold(monkeypatch):
    """Violations whose cover would not fit in the memory available: exit 2
    before any is listed (``SUSPECT_CELL_BYTES`` per cell, 8 per violation)."""
    table = pa.table({"a": [1] * 40, "b": list(range(40))})
    monkeypatch.setenv("FACET_MEMORY_AVAILABLE", "30K")  # 1,560 violations x 4 cells
    with pytest.raises(facet.FacetInputError, match="covering the DCs' 1,560 violations takes"):
        facet.detect(table, dcs=["a -> b"], output="suspects")
    monkeypatch.setenv("FACET_MEMORY_AVAILABLE", "200K")
    assert facet.detect(table, dcs=["a -> b"], output="suspects").suspects().num_rows > 0


def test_suspects_rank_planted_fd_errors_first():
    """zip -> city with one wrong city planted in some zips: those city cells are
    the first suspects (the minority right-hand side of their group), and two
    runs give the same table."""
    import numpy as np

    rng = np.random.default_rng(5)
    zips = np.repeat(np.arange(40), 12)
    city = np.array([f"c{z}" for z in zips], dtype=object)
    planted = sorted(int(i) for i in rng.choice(len(zips), 8, replace=False))
    assert len({int(zips[i]) for i in planted}) == 8  # one error per zip
    for i in planted:
        city[i] = f"wrong{i}"
    table = pa.table({"zip": zips, "city": city.tolist(), "state": ["MA"] * len(zips)})
    res = facet.detect(table, dcs=["zip -> city"], output="suspects")
    top = res.suspects().slice(0, len(planted)).to_pylist()
    assert sorted((r["tid"], r["column"]) for r in top) == [(i, "city") for i in planted]
    assert all(r["score"] == 2 * 11 for r in top)  # 11 partners, both orders
    assert res.suspects().num_rows == len(planted)  # they cover every violation
    again = facet.detect(table, dcs=["zip -> city"], output="suspects").suspects()
    assert again.equals(res.suspects())


def test_suspects_refuse_more_violations_than_the_budget(tmp_path):
    from facet.errors import FacetError
    from facet.planner.config import Config

    table = pa.table({"a": [1] * 30, "b": list(range(30))})
    # (the message names the violations there are: 30 x 29)
    with pytest.raises(FacetError, match=r"have 870 violations to cover, more than the 100"):
        facet.detect(
            table, dcs=["a -> b"], output="suspects", config=Config(suspect_violations=100)
        )
    # the counts are known first: too many fail before a pair is listed
    res = facet.detect(table, dcs=["a -> b"], config=Config(suspect_violations=100))

    def no_pairs(*args, **kwargs):
        raise AssertionError("pairs listed")

    res._session.engine.pairs = no_pairs
    with pytest.raises(FacetError, match="suspect_violations"):
        res.suspects()
    csv = tmp_path / "t.csv"
    pa.csv.write_csv(table, csv)
    out = tmp_path / "s.parquet"
    r = subprocess.run(
        [sys.executable, "-m", "facet", "detect", str(csv), "--dc", "a -> b", "--output",
         "suspects", "--out", str(out), "--format", "json"], capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    got = pq.read_table(out)
    assert got.schema.names == ["tid", "column", "score", "rank"] and got.num_rows > 0
    # suspects span every DC: the document says how many rows were written
    assert json.loads(r.stdout)["written"] == got.num_rows


@PROPERTY
@given(data=st.data())
def test_components_of_equalities_and_one_order_predicate_never_list_blocks(data):
    """The closed form of ``_one_order_components``: a DC of equalities and one order
    predicate ``t.x op t'.y`` gets its components from the count plan's degrees
    (the blocks are never listed: the engine's ``blocks`` would fail), equal to
    the components of the naive pairs."""
    from facet.language.ast import DC, Col, Predicate

    table, kinds = data.draw(tables(max_rows=30))
    cols = range(len(kinds))
    x = data.draw(st.sampled_from(cols))
    y = data.draw(st.sampled_from([j for j in cols if (kinds[j] == "str") == (kinds[x] == "str")]))
    op = data.draw(st.sampled_from(["<", "<=", ">", ">="]))
    eqs = data.draw(st.lists(st.sampled_from(cols), max_size=2, unique=True))
    preds = [Predicate(Col(0, f"c{j}"), "=", Col(1, f"c{j}")) for j in eqs]
    dc = DC((*preds, Predicate(Col(0, f"c{x}"), op, Col(1, f"c{y}"))))
    res = facet.detect(table, dcs=[dc])
    engine = res._session.engine

    def no_blocks(*args, **kwargs):
        raise AssertionError("blocks listed")

    # (an equality on the order predicate's columns makes it redundant: the DC runs as
    # its equalities, language/normalize.py, whose components come from their groups)
    if any(p.cls == INEQUALITY for p in normalize(dc).preds):
        engine.blocks = no_blocks
    got = _rows(res.components())
    assert got == components_from({0: naive_pairs(table, dc)}), dc.canonical()


@PROPERTY
@given(data=st.data())
def test_components_of_equalities_and_two_order_predicates_never_list_blocks(data):
    """``_dominance_components``: a DC of equalities and one or two order predicates
    ``t.x op t'.y`` (any columns, cross-column too), whole-table or scoped by
    ``where``, gets its components by a sweep and a heap over the count plan's
    equality groups -- the blocks are never listed -- equal to the components of
    the naive pairs (in scope)."""
    from facet.language.ast import DC, Col, Predicate

    table, kinds = data.draw(tables(max_rows=30))
    cols = range(len(kinds))
    preds = [
        Predicate(Col(0, f"c{j}"), "=", Col(1, f"c{j}"))
        for j in data.draw(st.lists(st.sampled_from(cols), max_size=2, unique=True))
    ]
    for _ in range(data.draw(st.integers(1, 2))):
        x = data.draw(st.sampled_from(cols))
        same = [j for j in cols if (kinds[j] == "str") == (kinds[x] == "str")]
        y = data.draw(st.sampled_from(same))
        op = data.draw(st.sampled_from(["<", "<=", ">", ">="]))
        preds.append(Predicate(Col(0, f"c{x}"), op, Col(1, f"c{y}")))
    dc = DC(tuple(preds))
    nulls = data.draw(st.sampled_from([None, *cols]))  # scope: c is null, or c is not null
    negate = data.draw(st.booleans())
    scope = None if nulls is None else f"{'not ' if negate else ''}c{nulls} is null"
    res = facet.detect(table, dcs=[dc], where=scope)
    engine = res._session.engine

    def no_blocks(*args, **kwargs):
        raise AssertionError("blocks listed")

    if 1 <= sum(p.cls == INEQUALITY for p in normalize(dc).preds) <= 2:
        engine.blocks = no_blocks
    pairs = naive_pairs(table, dc)
    if nulls is not None:  # (the rows where c = c holds are those not NULL in c)
        c = Col(0, f"c{nulls}")
        valued = naive_pairs(table, DC((Predicate(c, "=", c),)))
        inside = valued if negate else set(range(table.num_rows)) - valued
        pairs = {p for p in pairs if p[0] in inside or p[1] in inside}
    got = _rows(res.components())
    assert got == components_from({0: pairs}), (dc.canonical(), scope)


def test_cells_come_in_the_order_the_dc_names_their_columns():
    """docs/outputs.md: by dc, tid, then the column's first appearance in the DC --
    across both sides, row filters included."""
    table = pa.table({"a": [1, 1], "b": [1, 1], "c": [5, 5]})
    got = facet.detect(table, dcs=["not(t'.b < t.c and t.a = t'.a)"], output="cells").cells()
    assert list(zip(got.column("tid").to_pylist(), got.column("column").to_pylist())) == [
        (0, "b"), (0, "c"), (0, "a"), (1, "b"), (1, "c"), (1, "a"),
    ]  # fmt: skip


def test_a_column_a_row_filter_compares_only_with_equals_is_weak():
    """``t.a = t.a`` (a is not NULL) compares a with = only: weak, so the tie at
    score 1 goes to the strong b of ``t.b >= 2`` before the lower tid's a."""
    table = pa.table({"a": ["x", "y"], "b": [1, 5]})
    got = facet.detect(table, dcs=["not(t.a = t.a)", "not(t.b >= 2)"], output="suspects")
    rows = got.suspects().to_pylist()
    assert [(r["tid"], r["column"]) for r in rows] == [(1, "b"), (0, "a"), (1, "a")]


@pytest.mark.parametrize(
    "dc",
    [
        "not(t.K = t'.K and t.X <= t'.X and t.X >= t'.X)",
        "not(t.K = t'.K and t.X = t'.X and t.X >= t'.X)",
        "not(t.K = t'.K and t.X <= t'.X)",
    ],
)
def test_a_column_compared_with_an_order_as_written_is_strong(dc):
    """docs/outputs.md: a column compared only with ``=`` is weak, the others strong --
    as the DC is written: ``<=`` with ``>=`` runs as ``=`` (language/normalize.py) but
    ``X`` stays strong, so the tie goes to ``X`` before ``K`` (it went to ``K``)."""
    table = pa.table({"K": [1, 1], "X": [5, 5]})
    got = facet.detect(table, dcs=[dc], output="suspects").suspects().to_pylist()
    assert (got[0]["tid"], got[0]["column"]) == (0, "X")


@pytest.mark.parametrize(
    ("dc", "counts"),
    [
        ("not(t.X > t'.X and t.Y < t'.Y)", 1),  # mirrored: t.X < t'.X too -- none
        ("not(t.K = t'.K and t.X <= t'.X and t.Y != t'.Y)", 2),  # t.X = t'.X: some
        ("not(t.K = t'.K and t.X != t'.Y)", 2),
    ],
)
def test_partners_skip_a_mirror_image_no_pair_can_satisfy(dc, counts):
    """``tuples``' partners count the DC joined with its mirror image; when that joins
    ``t.X > t'.X`` with ``t.X < t'.X`` no pair satisfies it, so it is not run (it was a
    four-inequality count, 20x the DC's own), and the answer still equals the pairs'."""
    table = pa.table({"K": [1, 1, 1, 2, 2], "X": [1, 2, 2, 3, 1], "Y": [5, 4, 4, 2, 5]})
    res = facet.detect(table, dcs=[dc])
    engine = res._session.engine
    calls = []
    degrees = engine.degrees
    engine.degrees = lambda *a, **k: calls.append(1) or degrees(*a, **k)
    got = _rows(res.tuples())
    assert len(calls) == counts
    assert got == tuples_from({0: naive_pairs(table, facet.parse_dc(dc)[0])})


def test_kernels_indexing_rows_refuse_ids_that_are_not_positions():
    """The kernels that index arrays of ``n`` rows with row ids an engine hands them
    check the ids first: an id >= n or < 0 is an IndexError, never a write past the
    arrays (the union-find crashed the process) or a row counted from the end."""
    from facet.kernels.components import union_blocks, union_pairs
    from facet.kernels.partners import empty_partners, sample_pair_partners, sample_partners

    n = 4
    ok = np.array([0, 3], np.int64)
    for bad in ([0, 4], [-2, 2], [2**62, 1], [-(2**63), 1]):  # (-1 as t2: a single row)
        ids = np.array(bad, np.int64)
        for t1, t2 in ((ids, ok), (ok, ids)):
            parent, seen = np.arange(n, dtype=np.int64), np.zeros(n, np.bool_)
            with pytest.raises(IndexError):
                union_pairs(parent, seen, t1, t2)
            off = np.array([0, 2], np.int64)
            with pytest.raises(IndexError):
                union_blocks(parent, seen, off, t1, off, t2)
            out, role, got = empty_partners(1, 2)
            slot, need = np.full(n, -1, np.int64), np.ones(1, np.int64)
            with pytest.raises(IndexError):
                sample_pair_partners(t1, t2, slot, need, out, role, got, 1)
            with pytest.raises(IndexError):
                sample_partners(off, t1, off, t2, slot, need, out, role, got, 1)
    parent, seen = np.arange(n, dtype=np.int64), np.zeros(n, np.bool_)
    union_pairs(parent, seen, ok, np.array([-1, 0], np.int64))  # (-1: a single row)
    assert seen.tolist() == [True, False, False, True]
