"""Unknown columns, wrong-typed constants, order predicates on text, incompatible
cross-column predicates (docs/semantics.md §4, §9).

An error names the DC (``--dc:N``, ``rules.txt:LINE``) or the file, and how to fix it
(``did you mean``, ``--schema``, ``cast``); a typed input that facet can compare gives
what tests/naive.py gives.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

import pyarrow as pa
import pytest

from tests.robustness.harness import (
    Case,
    api_params,
    assert_no_traceback,
    check_api,
    check_cli,
    cli_params,
    cli_runs_fixture,
    csv_text,
    run_api,
)

# ---------------------------------------------------------------------------- tables

PLACES = pa.table(
    {
        "zip": ["01907", "01907", "01907", "1907", None],
        "city": ["Lynn", "Salem", "Salem", "Lynn", "Lynn"],
        " state": ["MA", "MA", "MA", "MA", "NH"],  # a header with a leading space
        "my col": ["a", "b", "a", "b", "a"],
        "salary": pa.array([100, 200, 150, 150, None], pa.int64()),
        "since": ["2020-01-01", "2021-06-30", "2019-12-31T23:00:00Z", "2020-01-01", ""],
    }
)
PLACES_CSV = {"t.csv": csv_text(PLACES)}
#: PLACES as facet types it when a DC orders ``since``: ISO text -> timestamps in UTC
SINCE = pa.array(
    [dt.datetime(2020, 1, 1), dt.datetime(2021, 6, 30), dt.datetime(2019, 12, 31, 23)]
    + [dt.datetime(2020, 1, 1), None],
    pa.timestamp("us", tz="UTC"),
)
PLACES_SINCE = PLACES.set_column(5, "since", SINCE)

TYPED = pa.table(
    {
        "i": pa.array([1, 2, 2, None, -3], pa.int64()),
        "s": pa.array(["a", "b", "b", None, "B"]),
        "f": pa.array([1.5, float("nan"), -0.0, 0.0, 2.0]),
        "ts": pa.array(
            [dt.datetime(2020, 1, 1), dt.datetime(2021, 1, 1), None, dt.datetime(2020, 1, 1)]
            + [dt.datetime(1999, 5, 5)],
            pa.timestamp("us"),
        ),
        "d": pa.array([dt.date(2020, 1, 1)] * 4 + [None], pa.date32()),
        "bo": pa.array([True, False, None, True, False]),
        "n": pa.nulls(5),
        "bin": pa.array([b"x", b"y", b"x", None, b""]),
        "dec": pa.array(
            [decimal.Decimal(v) if v else None for v in ("1.10", None, "2.5", "1.1", "-3")],
            pa.decimal128(5, 2),
        ),
        "ui": pa.array([2**64 - 1, 1, 0, None, 2], pa.uint64()),
        "u": pa.array(
            [uuid.UUID(int=k).bytes if k else None for k in (1, 2, 1, None, 3)], pa.uuid()
        ),
        "tm": pa.array([dt.time(1), dt.time(2), None, dt.time(1), dt.time(0)], pa.time64("us")),
        "dur": pa.array([1, 2, 3, None, 2], pa.duration("s")),
        "dms": pa.array([1500, 2000, None, 1, 3000], pa.duration("ms")),
        "lst": pa.array([[1], [2], [1], None, []], pa.list_(pa.int64())),
        "st": pa.array([{"x": 1}] * 5, pa.struct([("x", pa.int64())])),
    }
)
TYPED_FILES = {"t.parquet": TYPED}


def typed(case_id: str, dc: str, error: tuple[str, ...], hint: str, **kw) -> Case:
    """A DC over the Parquet table TYPED that must be refused."""
    return Case(
        case_id, dcs=(dc,), data="t.parquet", files=TYPED_FILES, error=error, hint=hint, **kw
    )


def on_csv(case_id: str, dc: str, error: tuple[str, ...], hint: str, **kw) -> Case:
    """A DC over the CSV table PLACES that must be refused (pairs to --out: none left)."""
    return Case(
        case_id,
        dcs=(dc,),
        files=PLACES_CSV,
        output="pairs",
        out="pairs.parquet",
        error=error,
        hint=hint,
        **kw,
    )


# ---------------------------------------------------------------------------- unknown columns

UNKNOWN_COLUMNS = [
    on_csv("unknown-paper", "not(t.ctiy = t'.city)", ("--dc:1", "unknown column 'ctiy'"), "'city'"),
    on_csv("unknown-fd-rhs", "zip -> ciyt", ("--dc:1", "'ciyt'"), "did you mean 'city'?"),
    on_csv("unknown-case", "zip -> City", ("--dc:1", "'City'"), "did you mean 'city'?"),
    on_csv(
        "unknown-leading-space",
        "zip -> state",
        ("--dc:1", "unknown column 'state'"),
        "did you mean ' state'?",
    ),
    on_csv(
        "unknown-holoclean-spaces",
        "t1&t2&EQ(t1.my colm,t2.my col)",
        ("--dc:1", "'my colm'"),
        "did you mean 'my col'?",
    ),
    on_csv(
        "unknown-no-close-match",
        "not(t.qqqqqqqq = t'.zip)",
        ("--dc:1", "'qqqqqqqq'"),
        "check the spelling",
    ),
    on_csv(
        "unknown-single-tuple",
        't1&EQ(t1.zipp,"01907")',
        ("--dc:1", "'zipp'"),
        "did you mean 'zip'?",
    ),
    Case(
        "unknown-in-rules-file",
        rules="rules.txt",
        files={**PLACES_CSV, "rules.txt": "# places\nzip -> city\n\nzip -> cty\n"},
        error=("rules.txt:4", "unknown column 'cty'"),
        hint="did you mean 'city'?",
    ),
    Case(
        "unknown-second-dc",
        dcs=("zip -> city", "not(t.salary > t'.salery)"),
        files=PLACES_CSV,
        error=("--dc:2", "'salery'"),
        hint="did you mean 'salary'?",
    ),
    typed("unknown-parquet", "not(t.ii = t'.i)", ("--dc:1", "'ii'", "t.parquet"), "'i'"),
    Case(
        "unknown-schema-column",
        dcs=("zip -> city",),
        files=PLACES_CSV,
        schema="zipp:text",
        error=("--schema", "'zipp'"),
        hint="did you mean 'zip'?",
    ),
    Case(
        "unknown-schema-type",
        dcs=("zip -> city",),
        files=PLACES_CSV,
        schema="zip:integer64",
        error=("--schema", "'integer64'"),
        hint="use one of",
    ),
    Case(
        "schema-not-pairs",
        dcs=("zip -> city",),
        files=PLACES_CSV,
        schema="zip",
        error=("--schema", "'zip'"),
        hint="column:type",
    ),
]

# ---------------------------------------------------------------------------- constants

CONSTANTS = [
    on_csv(
        "csv-text-constant-numeric-column",
        "not(t.salary > 100 and t.salary < 'abc')",
        ("--dc:1", 'constant "abc"', "'salary'"),
        "write a number",
    ),
    on_csv(
        "csv-number-constant-timestamp-column",
        "not(t.since < 5)",
        ("--dc:1", "constant 5", "'since'"),
        "ISO-8601",
    ),
    on_csv(
        "csv-impossible-date-constant",
        "not(t.since < '2020-13-01')",
        ("--dc:1", '"2020-13-01"'),
        "ISO-8601",
    ),
    Case(
        "csv-date-constant-before-1677",
        dcs=("not(t.since < '0001-01-01')",),
        files=PLACES_CSV,
        table=PLACES_SINCE,
    ),
    typed(
        "parquet-text-constant-int-column",
        "not(t.i = 'x')",
        ("--dc:1", 'constant "x"', "'i'"),
        "write a number",
    ),
    typed(
        "parquet-bad-timestamp-constant",
        "not(t.ts > 'yesterday')",
        ("--dc:1", '"yesterday"', "'ts'"),
        "ISO-8601",
    ),
    typed(
        "parquet-bad-boolean-constant",
        "not(t.bo = 'maybe')",
        ("--dc:1", '"maybe"', "'bo'"),
        "true, false, 1 or 0",
    ),
    typed(
        "parquet-timestamp-constant-out-of-range",
        "not(t.ts < '9999-12-31T23:59:59.999999999')",
        ("--dc:1", "'ts'"),
        "range",
    ),
    typed(
        "parquet-time-of-day-constant",
        "not(t.tm < '01:00')",
        ("--dc:1", '"01:00"', "'tm'"),
        "cast",
    ),
]

# ---------------------------------------------------------------------------- order on text

ORDER_ON_TEXT = [
    on_csv(
        "csv-order-no-parsable-value",
        "not(t.city < t'.city)",
        ("t.csv", "'city'", "--dc:1"),
        "--schema",
    ),
    on_csv(
        "csv-order-constant-no-parsable-value",
        "not(t.city > 'M')",
        ("t.csv", "'city'", "--dc:1"),
        "--schema",
    ),
    Case(
        "csv-order-text-declared-text",
        dcs=("not(t.city < t'.city and t.zip = t'.zip)",),
        files=PLACES_CSV,
        schema="city:text",
        table=PLACES,
    ),
    Case(
        "csv-order-iso-with-zone",
        dcs=("not(t.since < t'.since)", "not(t.zip = t'.zip and t.salary > t'.salary)"),
        files=PLACES_CSV,
        table=PLACES_SINCE,
    ),
    Case(
        "csv-order-some-values-unparsable",
        dcs=("not(t.n > t'.n)",),
        files={"t.csv": "n\n5\n 7 \n1e3\nNaN\n+2\n\n1 000\n"},
        table=pa.table({"n": pa.array([5, 7, 1000, None, 2, None, None], pa.int64())}),
        warns=("column 'n': 2 values not", "read as NULL"),
    ),
    Case(
        "parquet-order-on-string",
        dcs=("not(t.s < t'.s)",),
        data="t.parquet",
        files=TYPED_FILES,
        table=TYPED,
        warns=("compares as text",),
    ),
]

# ---------------------------------------------------------------------------- cross-column

CROSS = [
    typed("cross-int-text", "not(t.i = t'.s)", ("--dc:1", "'i' (int)", "'s' (text)"), "cast"),
    typed("cross-int-timestamp", "not(t.i < t'.ts)", ("--dc:1", "'i'", "'ts'"), "cast"),
    typed("cross-text-timestamp", "not(t.s < t'.ts)", ("--dc:1", "'s'", "'ts'"), "cast"),
    typed("cross-bool-text", "not(t.bo = t'.s)", ("--dc:1", "'bo'", "'s'"), "cast"),
    typed("cross-binary-text", "not(t.bin < t'.s)", ("--dc:1", "'bin'", "'s'"), "cast"),
    typed("cross-uuid-text", "not(t.u = t'.s)", ("--dc:1", "'u'", "'s'"), "cast"),
    typed("cross-duration-int", "not(t.dur = t'.i)", ("--dc:1", "'dur'", "'i'"), "cast"),
    typed("cross-same-tuple", "not(t.i < t.s)", ("--dc:1", "'i'", "'s'"), "cast"),
    typed(
        "cross-via-third-column",
        "not(t.i = t'.f and t.f = t'.s)",
        ("--dc:1", "'s'", "incompatible"),
        "cast",
    ),
    typed("list-column", "not(t.lst = t'.lst)", ("t.parquet", "'lst'"), "cast it"),
    typed("struct-column", "not(t.st = t'.st)", ("t.parquet", "'st'"), "cast it"),
    Case(
        "csv-cross-schema-int-text",
        dcs=("not(t.salary = t'.zip)",),
        files=PLACES_CSV,
        schema="salary:int,zip:text",
        error=("--dc:1", "'salary'", "'zip'"),
        hint="--schema",
    ),
    Case(
        "parquet-comparable-mixes",
        dcs=(
            "not(t.i = t'.i and t.s != t'.s)",
            "not(t.i < t'.f)",
            "not(t.dec < t'.f)",
            "not(t.dec = t'.i)",
            "not(t.ui > t'.i)",
            "not(t.d < t'.ts)",
            "not(t.bo = true)",
            "not(t.n < t'.i)",
            "not(t.f = t'.f)",
            "not(t.bin = 'x')",
            "not(t.u = t'.u)",
            "not(t.i > 1e400)",
            "not(t.i = 99999999999999999999999)",
            "not(t.dec = 1e-50)",
            "not(t.ts >= '2020-01-01T00:00:00.000000001')",
        ),
        data="t.parquet",
        files=TYPED_FILES,
        table=TYPED,
    ),
]

CROSS.append(
    Case(
        "parquet-bool-constant-bool-meets-int",
        dcs=("not(t.bo = true)", "not(t.bo = t'.i)"),
        data="t.parquet",
        files=TYPED_FILES,
        table=TYPED,
    )
)
CROSS.append(
    Case(
        "parquet-null-column-meets-int-and-text",
        dcs=("not(t.n < t'.i)", "not(t.n = 'anything')"),
        data="t.parquet",
        files=TYPED_FILES,
        table=TYPED,
    )
)
CROSS.append(
    Case(
        "parquet-null-column-meets-date",  # found by tests/fuzz/test_fuzz_parquet.py
        dcs=("not(t.d = t'.n)", "not(t.ts < t.n)"),
        data="t.parquet",
        files=TYPED_FILES,
        table=TYPED,
    )
)
CROSS.append(
    Case(
        "parquet-null-column-meets-text-and-number",  # found by tests/fuzz
        dcs=(
            "not(t.n = t'.s and t.n = 0)",
            "not(t.bin = t.n)",
            "not(t.n = t'.dec and t.n = 1.0000000000000000001)",
        ),
        data="t.parquet",
        files=TYPED_FILES,
        table=TYPED,
    )
)
CROSS.append(
    Case(
        "parquet-time-meets-null-pairs",  # found by tests/fuzz/test_fuzz_parquet.py
        dcs=("not(t.tm < t'.n and t.i = 0)",),
        data="t.parquet",
        files=TYPED_FILES,
        table=TYPED,
        output="pairs",
    )
)
CROSS.append(
    Case(
        "parquet-durations-of-two-units",  # found by tests/fuzz/test_fuzz_parquet.py
        dcs=("not(t.dur = t.dms)", "not(t.dur < t'.dms)"),
        data="t.parquet",
        files=TYPED_FILES,
        table=TYPED,
    )
)
EMPTY_DECIMAL_INT = pa.table({"d": pa.array([], pa.decimal128(1, 0)), "i": pa.array([], pa.int8())})
CROSS.append(
    Case(
        "parquet-empty-decimal-meets-int-and-fine-constant",  # found by tests/fuzz
        dcs=("not(t.i = t.d and t.d = 1.0000000000000000001)",),
        data="t.parquet",
        files={"t.parquet": EMPTY_DECIMAL_INT},
        table=EMPTY_DECIMAL_INT,
    )
)

CASES = UNKNOWN_COLUMNS + CONSTANTS + ORDER_ON_TEXT + CROSS
cli_runs = cli_runs_fixture(CASES)


@pytest.mark.parametrize("case", cli_params(CASES))
def test_cli(case: Case, cli_runs) -> None:
    check_cli(case, cli_runs[case.id])


@pytest.mark.parametrize("case", api_params(CASES))
def test_api(case: Case, tmp_path) -> None:
    check_api(case, run_api(case, tmp_path))


def test_no_traceback_on_stderr(cli_runs) -> None:
    assert_no_traceback(cli_runs)
