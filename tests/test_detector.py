"""Incremental detection (facet.Detector, ``facet detect --append``; docs/semantics.md §11):
the base run plus every append's violations are exactly one full run's, on the real Tax
data in 40 batches and on random tables split at random points; each append reports
exactly the violations holding a row of its batch; a bad batch changes nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
from facet.errors import FacetInputError
from tests.naive import naive_pairs
from tests.strategies import dcs, tables, wide_tables

ROOT = Path(__file__).resolve().parent.parent
TAX40 = ROOT / "data" / "tax" / "tax_dirty_0040k.csv"
#: DCs with more pairs than this are checked by count only (the pair sets are compared
#: as sorted int64 keys)
MAX_PAIRS = 2_000_000


def _keys(res, n: int) -> dict[int, np.ndarray]:
    """Each DC's pairs as ``t1 * n + t2`` (rows: ``t1``), sorted."""
    t = res.pairs()
    dc = t.column("dc").to_numpy()
    t1 = t.column("t1").to_numpy()
    t2 = t.column("t2").fill_null(-1).to_numpy()
    key = np.where(t2 < 0, t1, t1 * n + t2)
    return {d.id: np.sort(key[dc == d.id]) for d in res.dcs}


def _split_csv(path: Path, out: Path, size: int) -> list[Path]:
    """A header-only base file and the data rows in files of ``size`` rows."""
    lines = path.read_text().splitlines(keepends=True)
    head, body = lines[0], lines[1:]
    parts = [out / "base.csv"]
    parts[0].write_text(head)
    for k in range(0, len(body), size):
        p = out / f"batch{k // size:02d}.csv"
        p.write_text(head + "".join(body[k : k + size]))
        parts.append(p)
    return parts


@pytest.mark.slow
@pytest.mark.parametrize(
    "rules", ["dc_rules.txt", "dc_rules_holoclean.txt", "dc_rules_relaxed.txt"]
)
def test_forty_batches_of_tax_equal_one_full_run(rules, tmp_path):
    rules_path = ROOT / "data" / "tax" / rules
    full = facet.detect(TAX40, rules_path)
    n = full.rows
    listable = [d.dc for d in full.dcs if d.violations <= MAX_PAIRS]
    parts = _split_csv(TAX40, tmp_path, 1000)
    assert len(parts) == 41  # the empty base, then 40 batches of 1,000 rows
    det = facet.Detector(parts[0], rules_path)
    counts = np.zeros(len(full.dcs), np.int64)
    for p in parts[1:]:
        res = det.append(p)
        counts += [d.violations for d in res.dcs]
    assert counts.tolist() == [d.violations for d in full.dcs]
    assert det.totals()["total_violations"] == full.total_violations
    assert det.rows == n and det.totals()["batches"] == 40
    # the pair sets, for the DCs whose pairs can be listed
    det = facet.Detector(parts[0], dcs=listable)
    got: dict[int, list] = {i: [] for i in range(len(listable))}
    for p in parts[1:]:
        for i, keys in _keys(det.append(p, output="pairs"), n).items():
            got[i].append(keys)
    want = _keys(facet.detect(TAX40, dcs=listable, output="pairs"), n)
    for i in range(len(listable)):
        assert np.array_equal(np.sort(np.concatenate(got[i])), want[i]), listable[i]


PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(data=st.data())
def test_random_splits_equal_naive(data):
    """Any table cut at any points, any DCs: each append holds exactly the full
    table's violations with a row of its batch and no row after it."""
    table, kinds = data.draw(tables(max_rows=30))
    rules = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(1, 3)))]
    n = table.num_rows
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    bounds = [0, *cuts, n]
    full = {i: naive_pairs(table, dc) for i, dc in enumerate(rules)}
    det = facet.Detector(table.slice(0, bounds[1]), dcs=rules, output="pairs")
    seen = {i: set(_pairs(det.initial, i)) for i in range(len(rules))}
    for i in seen:
        assert seen[i] == _within(full[i], 0, bounds[1])
    for lo, hi in zip(bounds[1:-1], bounds[2:], strict=True):
        res = det.append(table.slice(lo, hi - lo), output="pairs")
        for i in range(len(rules)):
            got = set(_pairs(res, i))
            assert got == _within(full[i], 0, hi) - _within(full[i], 0, lo), rules[i].canonical()
            assert res.dcs[i].violations == len(got)
            seen[i] |= got
    assert seen == full
    assert [d["violations"] for d in det.totals()["dcs"]] == [len(full[i]) for i in full]


@PROPERTY
@given(data=st.data())
def test_counted_appends_then_every_pair_equal_naive(data):
    """Count-only appends (tallies and indexes read only the batch's codes, leaving
    the old rows' codes pending through every append since) then every pair at once
    (a scope of every row writes them all): each append's count and the final pairs
    are naive's. Large domains too: batches insert values among the ranks, so the
    old codes go through several appends' remaps."""
    table, kinds = data.draw(st.one_of(tables(max_rows=30), wide_tables(max_rows=40)))
    cols = [f"c{j}" for j in range(len(kinds))]
    nums = [c for c, k in zip(cols, kinds, strict=True) if k in ("int", "float", "bigint")]
    shapes = [
        "not(t.{a} = t'.{a} and t.{b} = t'.{b})",  # key
        "not(t.{a} = t'.{a} and t.{b} != t'.{b})",  # FD
    ]
    if len(nums) >= 2:  # two inequalities over one plane (a dominance index)
        shapes += ["not(t.{x} < t'.{x} and t.{y} > t'.{y})",
                   "not(t.{a} = t'.{a} and t.{x} >= t'.{x} and t.{y} <= t'.{y})"]  # fmt: skip
    # shapes counted from tallies and indexes alone (no session reads the codes), and
    # sometimes one that a scoped run counts (it reads them all)
    rules = []
    for _ in range(data.draw(st.integers(1, 3))):
        a, b = data.draw(st.permutations(cols))[:2]
        x, y = data.draw(st.permutations(nums))[:2] if len(nums) >= 2 else (a, b)
        rules.append(data.draw(st.sampled_from(shapes)).format(a=a, b=b, x=x, y=y))
    if data.draw(st.booleans()):
        rules.append(data.draw(dcs(kinds)))
    rules = facet.load_dcs(None, [r for r in rules if isinstance(r, str)]) + [
        r for r in rules if not isinstance(r, str)
    ]
    n = table.num_rows
    cuts = sorted(data.draw(st.lists(st.integers(0, n), min_size=1, max_size=5)))
    bounds = [0, *cuts, n]
    full = {i: naive_pairs(table, dc) for i, dc in enumerate(rules)}
    det = facet.Detector(table.slice(0, bounds[1]), dcs=rules, where_columns=["c0"])
    for lo, hi in zip(bounds[1:-1], bounds[2:], strict=True):
        res = det.append(table.slice(lo, hi - lo))
        for i in range(len(rules)):
            want = _within(full[i], 0, hi) - _within(full[i], 0, lo)
            assert res.dcs[i].violations == len(want), rules[i].canonical()
    every = det.where("c0 is null or not c0 is null", output="pairs")
    assert every.scope_rows == n
    for i in range(len(rules)):
        assert set(_pairs(every, i)) == full[i], rules[i].canonical()


def _pairs(res, i: int) -> list:
    t = res.pairs()
    return [
        a if b is None else (a, b)
        for d, a, b in zip(*[t.column(c).to_pylist() for c in ("dc", "t1", "t2")], strict=True)
        if d == i
    ]


def _within(pairs: set, lo: int, hi: int) -> set:
    """The violations among rows ``lo .. hi - 1`` only."""
    return {p for p in pairs if all(lo <= r < hi for r in (p if isinstance(p, tuple) else (p,)))}


# ------------------------------------------------------------------ types and bad batches


def test_an_int_column_widens_once_and_stays_exact(tmp_path):
    base, batch = tmp_path / "base.csv", tmp_path / "batch.csv"
    base.write_text("a,b\n1,x\n3,x\n")
    batch.write_text("a,b\n2.5,x\n9007199254740993,x\n")
    dc = ["not(t.a < t'.a and t.b = t'.b)"]
    warned: list[str] = []
    det = facet.Detector(base, dcs=dc, on_warning=warned.append)
    res = det.append(batch)
    assert any("widened from int64 to float64" in w for w in res.warnings + warned)
    whole = tmp_path / "whole.csv"
    whole.write_text("a,b\n1,x\n3,x\n2.5,x\n9007199254740993,x\n")
    assert det.totals()["total_violations"] == facet.detect(whole, dcs=dc).total_violations


def test_widening_a_column_whose_whole_numbers_float64_would_round_is_refused(tmp_path):
    """Widened to float64, 2**53 + 1 would round to 2**53: the base's answer (exact
    ints: one pair) and the batch's (float64: the two equal) would disagree, and
    base + batch would not be the whole table's run (a probe's finding).  Refused,
    naming the comparison that would change; the detector is unchanged, and a schema
    given up front types every value as float64 from the start."""
    base, batch = tmp_path / "base.csv", tmp_path / "batch.csv"
    base.write_text("a\n9007199254740993\n9007199254740992\n")
    batch.write_text("a\n0.5\n9007199254740993\n")
    dc = ["not(t.a < t'.a)"]
    det = facet.Detector(base, dcs=dc)
    assert det.initial.dcs[0].violations == 1
    with pytest.raises(
        FacetInputError,
        match=re.escape(
            "batch.csv: column 'a' would widen from int64 to float64 (the batch brings a "
            "fraction or a number past int64), but an answer already given would change: "
            "--dc:1: t.a < t'.a holds for 9007199254740992 and 9007199254740993, but not "
            "once float64 rounds them to 9007199254740992 and 9007199254740992; give the "
            "column's type up front (schema a:float"
        ),
    ):
        det.append(batch)  # fmt: skip
    assert det.rows == 2 and det.totals()["total_violations"] == 1
    fine = tmp_path / "fine.csv"
    fine.write_text("a\n5\n")
    assert det.append(fine).dcs[0].violations == 2  # 5 against each, as ints
    whole = tmp_path / "whole.csv"
    whole.write_text("a\n9007199254740993\n9007199254740992\n0.5\n9007199254740993\n")
    det = facet.Detector(base, dcs=dc, schema="a:float")
    total = det.initial.dcs[0].violations + det.append(batch).dcs[0].violations
    assert total == facet.detect(whole, dcs=dc).total_violations == 3
    exact = tmp_path / "exact.csv"  # 2**60 is a float64 exactly: widening keeps it
    exact.write_text("a\n1152921504606846976\n1\n")
    det = facet.Detector(exact, dcs=dc)
    assert det.append(batch).dcs[0].violations == 5  # 0.5 < all three; 1 < 2**53 < 2**60


def test_csv_types_are_fixed_by_the_first_table(tmp_path):
    """A column the base typed as a time stays a time: a batch of numbers there are
    unparsable values (NULL, with a warning), not a switch of the column to numbers."""
    base, batch = tmp_path / "base.csv", tmp_path / "batch.csv"
    base.write_text("d,k\n2024-01-01,x\n2024-01-03,x\n")
    batch.write_text("d,k\n5,x\n6,x\n7,x\n2024-01-02,x\n")
    warned: list[str] = []
    det = facet.Detector(base, dcs=["not(t.d < t'.d and t.k = t'.k)"], on_warning=warned.append)
    res = det.append(batch)
    assert res.dcs[0].violations == 2  # 2024-01-02 against each base row, in one order
    assert any("'d'" in w for w in warned)


def test_a_bad_batch_changes_nothing(tmp_path):
    base = tmp_path / "base.csv"
    base.write_text("a,b\n1,x\n1,y\n")
    det = facet.Detector(base, dcs=["a -> b"])
    before = det.totals()
    missing = tmp_path / "missing.csv"
    missing.write_text("a,c\n1,z\n")
    with pytest.raises(FacetInputError, match="the batch has no column 'b'"):
        det.append(missing)
    with pytest.raises(FacetInputError, match="the batch is typed but the detector's table is CSV"):
        det.append(pa.table({"a": ["1"], "b": ["z"]}))
    assert det.totals() == before and det.rows == 2
    good = tmp_path / "good.csv"
    good.write_text("a,b\n1,z\n")
    assert det.append(good).dcs[0].violations == 4  # (2,0) (2,1) (0,2) (1,2)


def test_typed_batches_convert_exactly_or_are_refused():
    base = pa.table({"a": pa.array([1, 2], pa.int64()), "b": ["x", "x"]})
    det = facet.Detector(base, dcs=["not(t.a < t'.a and t.b = t'.b)"])
    ok = pa.table({"a": pa.array([3], pa.int32()), "b": ["x"]})  # int32 -> int64 exactly
    assert det.append(ok).dcs[0].violations == 2
    nulls = pa.table({"a": pa.nulls(1, pa.null()), "b": ["x"]})  # an all-NULL batch column
    assert det.append(nulls).dcs[0].violations == 0
    frac = pa.table({"a": pa.array([2.5]), "b": ["x"]})
    with pytest.raises(FacetInputError, match="column 'a' is double in the batch but int64"):
        det.append(frac)
    assert det.rows == 4


@pytest.mark.parametrize(
    ("table", "batch", "why"),
    [  # a probe's findings: each was accepted, reading the values as something else
        (pa.array([date(2024, 1, 2)]), pa.array([datetime(2024, 1, 2, 12)]), "a value would"),
        (pa.array([datetime(2024, 1, 1)]), pa.array([1704153600]), "(int, not timestamp)"),
        (pa.array([1, 2]), pa.array([datetime(2024, 1, 1)]), "(timestamp, not int)"),
        (pa.array(["1", "x"]), pa.array([1]), "(int, not text)"),
        (pa.array([1, 2]), pa.array(["2"]), "(text, not int)"),
        (pa.array(["a"]), pa.array([True]), "(bool, not text)"),
        (pa.array(["a"]), pa.array([b"a"]), "(binary, not text)"),
        (pa.array([True, False]), pa.array([2]), "a value would change"),
    ],
)
def test_a_batch_column_of_another_kind_or_inexact_is_refused(table, batch, why):
    det = facet.Detector(pa.table({"a": table}), dcs=["not(t.a = t'.a)"])
    with pytest.raises(FacetInputError, match=re.escape(why)):
        det.append(pa.table({"a": batch}))
    assert det.rows == len(table)


@pytest.mark.parametrize(
    ("table", "batch", "dc"),
    [  # a probe's findings: each rounded silently (wrong counts)
        (pa.array([3.0], pa.float32()), pa.array([1e300, float("inf")]), "not(t.a = t'.a)"),
        (pa.array([0.1], pa.float32()), pa.array([0.1]), "not(t.a < t'.a)"),
        (pa.array([3.0], pa.float16()), pa.array([1e300]), "not(t.a = t'.a)"),
        (pa.array([Decimal("1.25")], pa.decimal128(5, 2)), pa.array([0.125]), "not(t.a = t'.a)"),
        (pa.array([1.5]), pa.array([Decimal(10) ** 30], pa.decimal128(38, 0)), "not(t.a = t'.a)"),
    ],
)
def test_a_batch_value_a_narrower_type_would_round_is_refused(table, batch, dc):
    det = facet.Detector(pa.table({"a": table}), dcs=[dc])
    with pytest.raises(FacetInputError, match=re.escape("a value would change")):
        det.append(pa.table({"a": batch}))
    assert det.rows == len(table)


@pytest.mark.parametrize(
    ("table", "batch"),
    [  # a probe's findings: each was refused though every value converts exactly
        (pa.array([1, 2]), pa.array([2, 7]).dictionary_encode()),
        (pa.array([1, 2]).dictionary_encode(), pa.array([2, 7])),
        (pa.array(["1", "2"]).cast(pa.string_view()), pa.array(["2", "7"]).dictionary_encode()),
        (pa.array(["1", "2"]).dictionary_encode(), pa.array(["2", "7"]).cast(pa.string_view())),
        (pa.array([1, 2]), pa.array([Decimal(2), Decimal(7)], pa.decimal128(5, 0))),
        (pa.array([Decimal(1), Decimal(2)], pa.decimal128(5, 2)), pa.array([2, 7])),
        (pa.array([Decimal(1), Decimal(2)], pa.decimal128(5, 2)), pa.array([True, False])),
        (pa.array([1.0, 2.0], pa.float32()), pa.array([2.0, 7.0])),
        (pa.array([1.0, 2.0]), pa.array([Decimal("2.0"), Decimal(7)], pa.decimal128(5, 1))),
    ],
)
def test_a_batch_of_the_same_values_in_another_layout_is_taken(table, batch):
    """Dictionaries compare by value, decimals take whole numbers whatever their
    declared precision, floats take floats they hold exactly: the append's pairs
    are the whole table's that hold a batch row."""
    det = facet.Detector(pa.table({"a": table}), dcs=["not(t.a = t'.a)"])
    assert det.append(pa.table({"a": batch})).dcs[0].violations == 2  # the two 2s
    assert det.rows == 4 and det.totals()["total_violations"] == 2


def test_a_null_typed_column_meets_text_in_appends_and_scopes():
    """A null-typed column meets text of any type and no predicate on it holds
    (the append and Detector.where failed casting it to bytes)."""
    for text in (pa.string(), pa.large_string(), pa.string_view(), pa.binary()):
        base = pa.table({"s": pa.array(["a", "b"]).cast(text), "n": pa.nulls(2), "x": [1, 2]})
        batch = pa.table({"s": pa.array(["c"]).cast(text), "n": pa.nulls(1), "x": [3]})
        det = facet.Detector(base, dcs=["not(t.s = t'.n)", "not(t.s != t.n)"])
        assert [d.violations for d in det.append(batch).dcs] == [0, 0]
        det = facet.Detector(base, dcs=["not(t.s != t'.n)"], where_columns=["x"])
        assert det.where("x > 1").dcs[0].violations == 0


def test_a_nan_in_a_float_batch_is_null_against_an_int_column():
    """A float NaN is NULL (§2), from pyarrow as from pandas: 2.0 and NaN go
    into an int64 column (a pyarrow batch was refused; a probe's finding)."""
    import pandas as pd

    for batch in (pa.table({"a": [2.0, float("nan")]}), pd.DataFrame({"a": [2.0, np.nan]})):
        det = facet.Detector(pa.table({"a": [1, 2, 3]}), dcs=["not(t.a > t'.a)"])
        assert det.append(batch).dcs[0].violations == 2  # (1, 3) and (2, 3)
        assert det.totals()["total_violations"] == 3 + 2


def test_a_date_column_takes_timestamps_at_midnight_and_bools_take_0_and_1():
    det = facet.Detector(pa.table({"a": pa.array([date(2024, 1, 2)])}), dcs=["not(t.a = t'.a)"])
    assert det.append(pa.table({"a": pa.array([datetime(2024, 1, 2)])})).dcs[0].violations == 2
    det = facet.Detector(pa.table({"b": [True, False]}), dcs=["not(t.b = t'.b)"])
    assert det.append(pa.table({"b": pa.array([1, 0], pa.int8())})).dcs[0].violations == 4


def test_append_on_the_command_line(tmp_path):
    parts = _split_csv(ROOT / "data" / "tax" / "tax_dirty_0010k.csv", tmp_path, 4000)
    exe = [sys.executable, "-m", "facet", "detect", str(parts[1]), "--dc", "zip -> city"]
    args = [a for p in parts[2:] for a in ("--append", str(p))]
    proc = subprocess.run([*exe, *args, "--format", "json"], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr  # violations found
    doc = json.loads(proc.stdout)
    full = facet.detect(ROOT / "data" / "tax" / "tax_dirty_0010k.csv", dcs=["zip -> city"])
    got = doc["base"]["total_violations"] + sum(b["total_violations"] for b in doc["batches"])
    assert got == doc["totals"]["total_violations"] == full.total_violations
    assert [b["first_tid"] for b in doc["batches"]] == [4000, 8000]
    text = subprocess.run([*exe, *args], capture_output=True, text=True).stdout
    assert "== batch 2:" in text and f"{full.total_violations:,} violations" in text
    bad = subprocess.run([*exe, *args, "--where", "zip = 1"], capture_output=True, text=True)
    assert bad.returncode == 2 and "does not combine with --append" in bad.stderr


def test_append_reports_stream_and_name_every_part(tmp_path):
    """A bad batch after good ones leaves their reports on stdout (nothing was
    printed before), and a batch's report names the batches before it (batch 2
    named the base and itself only; a probe's findings)."""
    (tmp_path / "base.csv").write_text("k,v\n1,a\n1,b\n")
    (tmp_path / "b1.csv").write_text("k,v\n1,c\n")
    (tmp_path / "b2.csv").write_text("k,v\n2,c\n2,d\n")
    (tmp_path / "bad.csv").write_text("k\n1\n")
    exe = [sys.executable, "-m", "facet", "detect", "base.csv", "--dc", "k -> v"]
    args = ["--append", "b1.csv", "--append", "b2.csv", "--append", "bad.csv"]
    proc = subprocess.run([*exe, *args], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert "bad.csv: the batch has no column 'v'" in proc.stderr
    heads = [line for line in proc.stdout.splitlines() if line.startswith("==")]
    assert heads == [
        "== base: base.csv",
        "== batch 1: b1.csv (tids 2..2): violations holding a row of this batch",
        "== batch 2: b2.csv (tids 3..4): violations holding a row of this batch",
    ]
    assert "base.csv + b1.csv: 3 rows" in proc.stdout
    assert "base.csv + 1 earlier batch + b2.csv: 5 rows" in proc.stdout
    # JSON is one document at the end: a bad batch leaves stdout empty (semantics §11)
    proc = subprocess.run([*exe, *args, "--format", "json"], capture_output=True, text=True,
                          cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == "" and "bad.csv" in proc.stderr
    # a batch file that is not there fails before the base runs
    missing = ["--append", "b1.csv", "--append", "nope.csv"]
    proc = subprocess.run([*exe, *missing], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert (
        proc.stderr.strip() == "facet: error: cannot read 'nope.csv': no such file; check the path"
    )
