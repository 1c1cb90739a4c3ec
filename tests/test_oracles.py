"""Tests of the two oracles themselves (tests/naive.py and tests/sql_oracle.py).

(a) the DuckDB oracle reproduces every published count in the data README;
(b) naive == DuckDB (counts, pair sets, rows involved) on samples of real files;
(c) naive on hand-made tables (NULL, NaN, ties, duplicates, cross-column, constants,
    single-tuple DCs, ``t.A = t.A``), CSV typing on hand-made files, and a property test of
    naive against DuckDB on random typed Arrow tables.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import re
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facet.language.ast import DC, Col, Const, Predicate
from tests.naive import naive_cells, naive_count, naive_pairs, naive_rows_involved
from tests.sql_oracle import (
    csv_types,
    duckdb_counts,
    duckdb_pairs,
    duckdb_records,
    duckdb_rows_involved,
    duckdb_violations,
    ordered_columns,
    python_table,
    read_csv_records,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


def read_rules(path: Path) -> list[DC]:
    from facet.language.parser import read_rules as _read_rules

    return list(_read_rules(path))


def data_file(rel: str) -> Path:
    """A bundled data file (every test data set is copied into data/)."""
    p = DATA / rel
    assert p.exists(), f"{rel} is missing from data/"
    return p


# ---------------------------------------------------------------------------------------
# (a) published expected counts


def _expected_counts() -> list[tuple[str, str, list[int]]]:
    text = (DATA / "README.md").read_text(encoding="utf-8")
    section = text.split("## Expected counts", 1)[1]
    block = section.split("```", 2)[1]
    lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
    out = []
    for head, counts in zip(lines[0::2], lines[1::2], strict=True):
        m = re.fullmatch(r"(\S+\.csv)\s*\+\s*(\S+\.txt)", head)
        assert m, f"unexpected line in the expected-counts block: {head!r}"
        out.append((m.group(1), m.group(2), [int(x) for x in counts.split()]))
    return out


EXPECTED = _expected_counts()


@pytest.mark.parametrize(
    ("csv_rel", "rules_rel", "expected"),
    [
        pytest.param(
            c,
            r,
            e,
            id=f"{c}+{Path(r).name}",
            marks=[pytest.mark.slow] if "0010k" not in c and "tax" in c else [],
        )
        for c, r, e in EXPECTED
    ],
)
def test_duckdb_reproduces_published_counts(csv_rel, rules_rel, expected):
    path, rules = data_file(csv_rel), data_file(rules_rel)
    dcs = read_rules(rules)
    assert len(dcs) == len(expected)
    assert duckdb_counts(path, dcs) == expected


def test_expected_block_covers_copied_files():
    """Every copied CSV appears in the expected-counts block (so (a) checks it)."""
    listed = {c for c, _, _ in EXPECTED}
    copied = {str(p.relative_to(DATA)) for p in DATA.rglob("*.csv")}
    assert copied - listed <= {"holoclean-hospital/hospital_100.csv"}


# ---------------------------------------------------------------------------------------
# (b) naive == DuckDB on samples of real files


def write_head(src: Path, dst: Path, n: int) -> None:
    """The header and first ``n`` records of ``src``, byte for byte (multi-line records kept)."""
    text = src.read_text(encoding="utf-8")
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    consumed = 0

    def feed():
        nonlocal consumed
        for line in lines:
            consumed += 1
            yield line

    k = 0
    for rec in csv.reader(feed()):
        if rec == []:
            continue
        k += 1
        if k == n + 1:
            break
    dst.write_text("".join(lines[:consumed]), encoding="utf-8", newline="")


def write_clustered(src: Path, dst: Path, key: str, n: int, start: int = 0) -> None:
    """Records ``start..start+n`` sorted by ``key`` (equal keys together), every field quoted."""
    header, records = read_csv_records(src)
    k = header.index(key)
    order = sorted(range(len(records)), key=lambda i: (records[i][k] == "", records[i][k], i))
    with dst.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(header)
        for i in order[start : start + n]:
            w.writerow(records[i])


# (data file, rules file, "sort key[@first row]" of the clustered sample)
SAMPLES = [
    ("adr/hospital/dirty.csv", "adr/hospital/dc_rules.txt", "City"),
    ("adr/hospital/dirty.csv", "adr/hospital/dc_rules_holoclean.txt", "HospitalName"),
    ("adr/beers/dirty.csv", "adr/beers/dc_rules.txt", "brewery_name@250"),
    ("adr/rayyan/dirty.csv", "adr/rayyan/dc_rules.txt", "journal_title"),
    ("adr/rayyan/dirty.csv", "adr/rayyan/dc_rules_holoclean.txt", "jounral_abbreviation"),
    ("adr/flights/dirty.csv", "adr/flights/dc_rules.txt", "flight"),
    ("adr/flights/dirty.csv", "adr/flights/dc_rules_holoclean.txt", "sched_arr_time"),
    ("tax/tax_dirty_0010k.csv", "tax/dc_rules_relaxed.txt", "city"),
    ("tax/tax_dirty_0010k.csv", "tax/dc_rules_holoclean.txt", "zip@250"),
    ("food/food_input_small.csv", "food/food_constraints.txt", "dbaname"),
    ("met/met_1000.csv", "met/met_constraints.txt", "Reign"),
    ("adult/adult.csv", "adult/adult_constraints.txt", "education"),
    ("holoclean-hospital/hospital.csv", "holoclean-hospital/hospital_constraints.txt", "City"),
]


@pytest.mark.parametrize(
    ("csv_rel", "rules_rel", "key"), SAMPLES, ids=[f"{c}+{Path(r).name}" for c, r, _ in SAMPLES]
)
def test_naive_equals_duckdb_on_real_samples(tmp_path, csv_rel, rules_rel, key):
    src, rules = data_file(csv_rel), data_file(rules_rel)
    dcs = read_rules(rules)
    head, clustered = tmp_path / "head.csv", tmp_path / "clustered.csv"
    write_head(src, head, 120)
    key, _, start = key.partition("@")  # sort key, and where the window starts
    write_clustered(src, clustered, key, 120, int(start or 0))
    total = 0
    for sample in (head, clustered):
        types = csv_types(sample, dcs)
        # Python-only typing (csv module) agrees with the DuckDB-loaded typing.
        table = python_table(sample, dcs)
        assert table.num_rows == 120
        assert python_table(sample, types=types).equals(table)
        counts = duckdb_counts(sample, dcs, types=types)
        for i, (dc, (expected, involved)) in enumerate(
            zip(dcs, duckdb_violations(sample, dcs, types=types))
        ):
            assert naive_pairs(table, dc) == expected, f"{sample.name} DC {i}: {dc}"
            assert naive_count(table, dc) == counts[i] == len(expected)
            assert naive_rows_involved(table, dc) == involved
        # the one-DC entry points agree (types from the whole rules file)
        busiest = max(range(len(dcs)), key=lambda i: counts[i])
        dc = dcs[busiest]
        assert duckdb_pairs(sample, dc, type_dcs=dcs) == naive_pairs(table, dc)
        assert duckdb_rows_involved(sample, dc, type_dcs=dcs) == naive_rows_involved(table, dc)
        total += sum(counts)
    if "adult" not in csv_rel:  # adult's published DCs find nothing on any sample
        assert total > 0, "samples without violations prove nothing"


@pytest.mark.parametrize(
    "csv_rel", ["met/met_1000.csv", "adr/hospital/dirty.csv", "adr/rayyan/dirty.csv"]
)
def test_duckdb_and_csv_module_read_the_same_records(csv_rel):
    """Row ids = file order, multi-line quoted fields are one record (met has \\r\\n inside)."""
    path = data_file(csv_rel)
    header, records = read_csv_records(path)
    assert duckdb_records(path) == [tuple(v or None for v in r) for r in records]
    if "met" in csv_rel:
        assert len(records) == 1000
        assert any("\r\n" in v for r in records for v in r)


# ---------------------------------------------------------------------------------------
# (c) naive on hand-made tables


def col(s: str) -> Col:
    """``t.A`` / ``t'.A`` -> Col."""
    name, _, rest = s.partition(".")
    return Col({"t": 0, "t'": 1}[name], rest)


def P(left, op: str, right) -> Predicate:
    def operand(x):
        if isinstance(x, Col | Const):
            return x
        if isinstance(x, str) and (x.startswith("t.") or x.startswith("t'.")):
            return col(x)
        return Const(str(x))

    return Predicate(operand(left), op, operand(right))


def D(*preds: Predicate) -> DC:
    return DC(tuple(preds))


def test_fd_with_nulls_and_duplicates():
    t = pa.table({"A": [1, 1, 1, None, 2, 2], "B": ["x", "x", "y", "z", None, "w"]})
    fd = D(P("t.A", "=", "t'.A"), P("t.B", "!=", "t'.B"))
    # rows 0,1 (x) vs 2 (y) in both orders; row 3 (A NULL) and row 4 (B NULL) never.
    assert naive_pairs(t, fd) == {(0, 2), (2, 0), (1, 2), (2, 1)}
    assert naive_count(t, fd) == 4
    assert naive_rows_involved(t, fd) == 3
    # duplicate rows pair with each other in both orders, never with themselves
    same = D(P("t.A", "=", "t'.A"), P("t.B", "=", "t'.B"))
    assert naive_pairs(t, same) == {(0, 1), (1, 0)}


def test_nan_is_null_and_negative_zero_equals_zero():
    t = pa.table({"x": [0.0, -0.0, math.nan, math.nan, 1.5, None]})
    eq = D(P("t.x", "=", "t'.x"))
    assert naive_pairs(t, eq) == {(0, 1), (1, 0)}
    ne = D(P("t.x", "!=", "t'.x"))
    assert naive_pairs(t, ne) == {(0, 4), (4, 0), (1, 4), (4, 1)}
    lt = D(P("t.x", "<", "t'.x"))
    assert naive_pairs(t, lt) == {(0, 4), (1, 4)}
    assert naive_pairs(t, D(P("t.x", "<", "2"))) == {0, 1, 4}
    assert naive_pairs(t, D(P("t.x", "<=", "-0.0"))) == {0, 1}


def test_ties_for_strict_and_non_strict_operators():
    t = pa.table({"v": [1, 1, 2]})
    assert naive_pairs(t, D(P("t.v", "<=", "t'.v"))) == {(0, 1), (1, 0), (0, 2), (1, 2)}
    assert naive_pairs(t, D(P("t.v", "<", "t'.v"))) == {(0, 2), (1, 2)}
    assert naive_pairs(t, D(P("t.v", ">=", "t'.v"))) == {(0, 1), (1, 0), (2, 0), (2, 1)}
    assert naive_pairs(t, D(P("t.v", ">", "t'.v"))) == {(2, 0), (2, 1)}
    assert naive_count(t, D(P("t.v", "!=", "t'.v"))) == 4
    # two inequalities on the same pair of columns in opposite directions: only ties
    both = D(P("t.v", "<=", "t'.v"), P("t.v", ">=", "t'.v"))
    assert naive_pairs(t, both) == {(0, 1), (1, 0)}


def test_cross_column_and_row_conditions():
    t = pa.table({"A": [1, 2, 3, None], "B": [2, 3, 1, 1]})
    # t.A = t'.B
    assert naive_pairs(t, D(P("t.A", "=", "t'.B"))) == {(0, 2), (0, 3), (1, 0), (2, 1)}
    # same-tuple condition t.A < t.B filters t; t'.A > t'.B filters t'
    dc = D(P("t.A", "<", "t.B"), P("t'.A", ">", "t'.B"))
    assert naive_pairs(t, dc) == {(0, 2), (1, 2)}
    # a cross-column predicate that also holds for (t, t) is not a violation of t with itself
    t2 = pa.table({"A": [5, 5], "B": [5, 7]})
    assert naive_pairs(t2, D(P("t.A", "<=", "t'.B"))) == {(0, 1), (1, 0)}


def test_int_float_comparisons_are_exact():
    big = 2**53 + 1
    t = pa.table({"i": pa.array([big, 2**53], pa.int64()), "f": pa.array([float(2**53), 0.5])})
    # float(2**53 + 1) == 2**53 would make row 0 equal; exact comparison says it is greater
    assert naive_pairs(t, D(P("t.i", "=", "t'.f"))) == {(1, 0)}
    assert naive_pairs(t, D(P("t.i", ">", "t'.f"))) == {(0, 1)}
    assert naive_pairs(t, D(P("t.i", ">", "t.f"))) == {0, 1}
    assert naive_pairs(t, D(P("t.i", ">", str(2**53)))) == {0}
    # int column against a float constant
    ti = pa.table({"a": [1, 2, 3]})
    assert naive_pairs(ti, D(P("t.a", "<", "2.5"))) == {0, 1}
    assert naive_pairs(ti, D(P("t.a", "=", "2.0"))) == {1}
    assert naive_pairs(ti, D(P("t.a", "=", "2e0"))) == {1}


def test_constants_take_the_column_type():
    t = pa.table({"s": ["5", "05", "10", None], "n": [5, 5, 10, None], "f": [5.0, 0.5, 10.0, None]})
    # on a string column the constant is text: "5" != "05", and "10" < "5"
    assert naive_pairs(t, D(P("t.s", "=", Const("5")))) == {0}
    assert naive_pairs(t, D(P("t.s", "<", Const("5", quoted=True)))) == {1, 2}
    # on numeric columns it is a number (quoted or not)
    assert naive_pairs(t, D(P("t.n", "=", Const("5", quoted=True)))) == {0, 1}
    assert naive_pairs(t, D(P("t.n", "<", Const("7")))) == {0, 1}
    assert naive_pairs(t, D(P("t.f", "=", Const("5")))) == {0}
    assert naive_pairs(t, D(P(Const("6"), ">", "t.f"))) == {0, 1}  # constant on the left
    for bad in ("abc", "NaN", "inf", "1,000", "12a", ""):
        with pytest.raises(ValueError):
            naive_pairs(t, D(P("t.n", "=", Const(bad, quoted=True))))
    with pytest.raises(ValueError):
        naive_pairs(t, D(P("t.s", "=", "t'.n")))  # string vs number
    # a constant next to t' works as a filter on t'
    two = D(P("t.n", "=", "t'.n"), P("t'.s", "=", Const("05")))
    assert naive_pairs(t, two) == {(0, 1)}


def test_strings_compare_by_code_point():
    vals = ["a", "B", "é", "Z", "a ", "", "\U0001f600", "ﬀ"]
    t = pa.table({"s": vals})
    got = naive_pairs(t, D(P("t.s", "<", "t'.s")))
    want = {
        (i, j)
        for i in range(len(vals))
        for j in range(len(vals))
        if vals[i].encode("utf-8") < vals[j].encode("utf-8")
    }
    assert got == want
    # the empty string is a value, not NULL
    assert 5 in naive_pairs(t, D(P("t.s", "=", Const(""))))


def test_single_tuple_dcs():
    t = pa.table(
        {"sex": ["Female", "female", "Male", None], "rel": ["Husband", "husband", "Wife", "x"]}
    )
    dc = D(P("t.sex", "=", Const("female")), P("t.rel", "=", Const("husband")))
    assert dc.arity == 1
    assert naive_pairs(t, dc) == {1}
    assert naive_count(t, dc) == 1 and naive_rows_involved(t, dc) == 1
    # same-tuple cross-column condition
    t2 = pa.table({"lo": [1, 5, None, 3], "hi": [2, 4, 1, 3]})
    assert naive_pairs(t2, D(P("t.lo", ">", "t.hi"))) == {1}
    assert naive_pairs(t2, D(P("t.lo", ">=", "t.hi"))) == {1, 3}
    # a DC written only on t' is a single-tuple DC as well
    assert naive_pairs(t2, D(P("t'.lo", ">=", "t'.hi"))) == {1, 3}


def test_self_equality_means_not_null():
    t = pa.table({"A": [1, None, 3], "B": [None, "b", "c"]})
    assert naive_pairs(t, D(P("t.A", "=", "t.A"))) == {0, 2}
    assert naive_pairs(t, D(P("t.A", "!=", "t.A"))) == set()
    dc = D(P("t.A", "=", "t.A"), P("t'.B", "=", "t'.B"))
    assert naive_pairs(t, dc) == {(0, 1), (0, 2), (2, 1)}
    fnan = pa.table({"x": [math.nan, 1.0]})
    assert naive_pairs(fnan, D(P("t.x", "=", "t.x"))) == {1}


def test_timestamps_dates_and_bools():
    utc = dt.UTC
    ts = pa.array(
        [dt.datetime(2020, 1, 1, tzinfo=utc), dt.datetime(2020, 1, 1, 12, tzinfo=utc), None],
        pa.timestamp("us", tz="UTC"),
    )
    naive_ns = pa.array(
        [dt.datetime(2020, 1, 1, 12), None, dt.datetime(2019, 1, 1)], pa.timestamp("ns")
    )
    dates = pa.array([dt.date(2020, 1, 1), dt.date(2020, 1, 2), None], pa.date32())
    t = pa.table({"ts": ts, "nts": naive_ns, "d": dates, "b": [True, False, None]})
    assert naive_pairs(t, D(P("t.ts", "<", Const("2020-01-01T06:00:00Z")))) == {0}
    assert naive_pairs(t, D(P("t.ts", "=", Const("2020-01-01 13:00:00+01:00")))) == {1}
    assert naive_pairs(t, D(P("t.ts", "=", "t.d"))) == {0}  # date = midnight UTC
    assert naive_pairs(t, D(P("t.ts", "=", "t'.nts"))) == {(1, 0)}  # naive = UTC, any unit
    assert naive_pairs(t, D(P("t.d", ">=", Const("2020-01-02")))) == {1}
    assert naive_pairs(t, D(P("t.b", "=", Const("true")))) == {0}
    assert naive_pairs(t, D(P("t.b", "<", "t'.b"))) == {(1, 0)}
    with pytest.raises(ValueError):
        naive_pairs(t, D(P("t.ts", "<", Const("01/02/2020"))))


def test_typed_arrow_variants():
    """Dictionary-encoded strings, int32/float32, decimals, large strings compare by value."""
    from decimal import Decimal

    t = pa.table(
        {
            "s": pa.array(["a", "b", "a", None]).dictionary_encode(),
            "ls": pa.array(["a", "b", "a", "c"], pa.large_string()),
            "i": pa.array([1, 2, 1, 3], pa.int32()),
            "f": pa.array([1.0, 2.5, 1.0, float("nan")], pa.float32()),
            "dec": pa.array(
                [Decimal("1.00"), Decimal("2.50"), None, Decimal("3")], pa.decimal128(5, 2)
            ),
        }
    )
    assert naive_pairs(t, D(P("t.s", "=", "t'.s"))) == {(0, 2), (2, 0)}
    assert naive_pairs(t, D(P("t.s", "=", "t'.ls"))) == {(0, 2), (2, 0)}
    assert naive_pairs(t, D(P("t.i", "=", "t'.f"))) == {(0, 2), (2, 0)}
    assert naive_pairs(t, D(P("t.dec", "=", "t'.f"))) == {(0, 2)}
    assert naive_pairs(t, D(P("t.dec", "<", Const("2.5")))) == {0}


def test_empty_and_tiny_tables():
    empty = pa.table({"A": pa.array([], pa.int64())})
    assert naive_pairs(empty, D(P("t.A", "=", "t'.A"))) == set()
    one = pa.table({"A": [1]})
    assert naive_pairs(one, D(P("t.A", "=", "t'.A"))) == set()
    assert naive_pairs(one, D(P("t.A", "=", "1"))) == {0}


def test_cells():
    t = pa.table({"A": [1, 1, 2], "B": ["x", "y", "y"]})
    fd = D(P("t.A", "=", "t'.A"), P("t.B", "!=", "t'.B"))
    assert naive_cells(t, fd) == {(0, "A"): 2, (0, "B"): 2, (1, "A"): 2, (1, "B"): 2}


# ---------------------------------------------------------------------------------------
# (c') CSV typing on hand-made files, and DuckDB == naive there


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "t.csv"
    p.write_bytes(text.encode("utf-8"))
    return p


def test_csv_nulls_and_text_markers(tmp_path):
    p = _write(
        tmp_path,
        'k,v\n1,""\n1,NA\n1,N/A\n1,null\n1,\n1,"multi\r\nline ""q"""\n1," "\n',
    )
    header, records = read_csv_records(p)
    assert [r[1] for r in records] == ["", "NA", "N/A", "null", "", 'multi\r\nline "q"', " "]
    fd = D(P("t.k", "=", "t'.k"), P("t.v", "!=", "t'.v"))
    # 5 non-NULL distinct text values -> 5*4 ordered pairs
    assert duckdb_counts(p, [fd]) == [20]
    assert naive_count(python_table(p, [fd]), fd) == 20
    assert duckdb_rows_involved(p, fd) == 5


def test_csv_ordered_closure_and_numeric_typing(tmp_path):
    p = _write(
        tmp_path,
        "a,b,c,d,e\n"
        '" 7 ",01907,k,1.5,2020-01-01\n'
        "+8,1907,k,NaN,2020-01-02\n"
        "1e1,inf,k,-0.0,3\n"
        '12a,"1,000",k,0,2020-01-03T10:00:00Z\n'
        ",.5,k,2.,\n",
    )
    order = D(P("t.a", "<", "t'.a"))
    link = D(P("t.a", "=", "t'.b"))  # b is compared with an ordered column -> ordered
    eq_only = D(P("t.c", "=", "t'.c"), P("t.d", "!=", "t'.d"))
    ts = D(P("t.e", "<", Const("2020-01-02T12:00:00")))
    dcs = [order, link, eq_only, ts]
    assert ordered_columns(dcs) == {"a", "b", "e"}
    types = csv_types(p, dcs)
    # a and b pooled: 0.5 is not integral -> float for both
    assert types == {"a": "float", "b": "float", "c": "text", "d": "text", "e": "timestamp"}
    assert csv_types(p, [order]) == {"a": "int"}  # 7, 8, 1e1 = 10 (12a is NULL)
    table = python_table(p, dcs)
    assert table.column("a").to_pylist() == [7.0, 8.0, 10.0, None, None]
    assert table.column("b").to_pylist() == [1907.0, 1907.0, None, None, 0.5]
    assert table.column("d").to_pylist() == ["1.5", "NaN", "-0.0", "0", "2."]  # text
    assert table.column("e").null_count == 2
    for dc in dcs:
        assert naive_pairs(table, dc) == duckdb_pairs(p, dc, type_dcs=dcs)
    assert duckdb_counts(p, dcs) == [3, 0, 20, 2]
    # "01907" = "1907" only when b is numeric
    text_link = D(P("t.b", "=", "t'.b"))
    assert duckdb_counts(p, [text_link]) == [0]
    assert duckdb_counts(p, [text_link, D(P("t.b", ">", "t'.b"))])[0] == 2


def test_csv_timestamp_vs_number_decision(tmp_path):
    # two ISO values, two numbers: tie -> number
    p = _write(tmp_path, "x\n2020-01-01\n2020-01-02\n5\n6\n")
    dc = D(P("t.x", "<", "t'.x"))
    assert csv_types(p, [dc]) == {"x": "int"}
    assert duckdb_counts(p, [dc]) == [1]
    p2 = _write(tmp_path, "x\n2020-01-01\n2020-01-02 00:00:01\n2020-02-30\n5\n")
    assert csv_types(p2, [dc]) == {"x": "timestamp"}
    assert duckdb_pairs(p2, dc) == {(0, 1)}
    assert naive_pairs(python_table(p2, [dc]), dc) == {(0, 1)}


def test_csv_errors(tmp_path):
    p = _write(tmp_path, "x,y\nabc,1\ndef,2\n")
    with pytest.raises(ValueError):
        csv_types(p, [D(P("t.x", "<", "t'.x"))])  # ordered column with no parseable value
    with pytest.raises(ValueError):
        duckdb_counts(p, [D(P("t.y", "<", Const("abc", quoted=True)))])
    with pytest.raises(KeyError):
        csv_types(p, [D(P("t.nope", "=", "t'.nope"))])


def test_csv_quoted_identifiers_and_literals(tmp_path):
    p = _write(
        tmp_path,
        '"Object Number","it\'s ""q""",v\nA,"O\'Brien",1\nA,"O\'Brien",2\nB,x,3\n',
    )
    name = 'it\'s "q"'
    dc = D(
        P(Col(0, "Object Number"), "=", Col(1, "Object Number")),
        P(Col(0, name), "=", Const("O'Brien")),
    )
    assert duckdb_pairs(p, dc) == {(0, 1), (1, 0)}
    assert naive_pairs(python_table(p, [dc]), dc) == {(0, 1), (1, 0)}
    single = D(P(Col(0, name), "!=", Const("O'Brien")), P("t.v", ">=", Const("3")))
    assert duckdb_pairs(p, single) == {2}
    assert naive_pairs(python_table(p, [single]), single) == {2}


# ---------------------------------------------------------------------------------------
# (c'') property test: naive vs DuckDB over random typed Arrow tables


_ARROW_CON: list[duckdb.DuckDBPyConnection] = []


def _arrow_con() -> duckdb.DuckDBPyConnection:
    if not _ARROW_CON:
        con = duckdb.connect()
        con.execute("SET threads = 1")
        _ARROW_CON.append(con)
    return _ARROW_CON[0]


def _duckdb_arrow_pairs(table: pa.Table, dc: DC) -> set:
    """DuckDB over the Arrow table; NaN -> NULL and -0.0 -> 0.0 as in docs/semantics.md §2, §4."""
    con = _arrow_con()
    cols = []
    for name, typ in zip(table.column_names, table.schema.types):
        q = '"' + name + '"'
        if pa.types.is_floating(typ):
            cols.append(f"CASE WHEN isnan({q}) THEN NULL WHEN {q} = 0 THEN 0.0 ELSE {q} END AS {q}")
        else:
            cols.append(q)
    con.register("src", table)
    con.execute(
        f"CREATE OR REPLACE TABLE r AS SELECT row_number() OVER () - 1 AS rid, {', '.join(cols)} FROM src"
    )
    kinds = {
        n: ("str" if pa.types.is_string(t) else "num")
        for n, t in zip(table.column_names, table.schema.types)
    }
    single = dc.arity == 1
    alias = ("t", "t") if single else ("t", "t2")

    def operand(o, other):
        if isinstance(o, Col):
            return f'{alias[o.tuple]}."{o.name}"'
        if kinds[other.name] == "str":
            return "'" + o.text.replace("'", "''") + "'"
        return o.text

    conds = [] if single else ["t.rid <> t2.rid"]
    sqlop = {"!=": "<>"}
    for p in dc.predicates:
        conds.append(
            f"{operand(p.left, p.right)} {sqlop.get(p.op, p.op)} {operand(p.right, p.left)}"
        )
    if single:
        rows = con.execute(f"SELECT t.rid FROM r t WHERE {' AND '.join(conds)}").fetchall()
        return {int(i) for (i,) in rows}
    rows = con.execute(
        f"SELECT t.rid, t2.rid FROM r t, r t2 WHERE {' AND '.join(conds)}"
    ).fetchall()
    return {(int(i), int(j)) for i, j in rows}


_INTS = st.one_of(st.none(), st.integers(-3, 3))
_FLOATS = st.sampled_from([None, math.nan, -0.0, 0.0, 1.0, -1.5, 2.5, 3.0])
_STRS = st.sampled_from([None, "", "a", "a ", "B", "é", "5", "05", "\U0001f600"])
_NUM_COLS, _STR_COLS = ["i", "j", "f", "f"], ["s", "u"]
_OPS = ["=", "!=", "<", "<=", ">", ">="]


@st.composite
def _tables_and_dcs(draw):
    n = draw(st.integers(0, 9))
    table = pa.table(
        {
            "i": pa.array(draw(st.lists(_INTS, min_size=n, max_size=n)), pa.int64()),
            "j": pa.array(draw(st.lists(_INTS, min_size=n, max_size=n)), pa.int64()),
            "f": pa.array(draw(st.lists(_FLOATS, min_size=n, max_size=n)), pa.float64()),
            "s": pa.array(draw(st.lists(_STRS, min_size=n, max_size=n)), pa.string()),
            "u": pa.array(draw(st.lists(_STRS, min_size=n, max_size=n)), pa.string()),
        }
    )
    preds = []
    for _ in range(draw(st.integers(1, 3))):
        group = draw(st.sampled_from([_NUM_COLS, _STR_COLS]))
        left = Col(draw(st.integers(0, 1)), draw(st.sampled_from(group)))
        op = draw(st.sampled_from(_OPS))
        if draw(st.booleans()):
            right = Col(draw(st.integers(0, 1)), draw(st.sampled_from(group)))
        elif group is _NUM_COLS:
            right = Const(draw(st.sampled_from(["0", "1", "-1.5", "2.5", "-0.0"])))
        else:
            right = Const(draw(st.sampled_from(["", "a", "5", "é"])), quoted=True)
        preds.append(Predicate(left, op, right))
    return table, DC(tuple(preds))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tables_and_dcs())
def test_naive_matches_duckdb_on_random_arrow_tables(case):
    table, dc = case
    assert naive_pairs(table, dc) == _duckdb_arrow_pairs(table, dc)
