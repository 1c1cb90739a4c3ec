"""Odd tables: empty, one row, all NULL; duplicate, empty and odd column names;
non-UTF-8 and ragged CSV; very long fields (docs/semantics.md §2, §4.2, §9).

A table facet can read must give what tests/naive.py gives; one it cannot read must stop
the run with exit 2 and one line naming the file (and line) and how to fix it.
"""

from __future__ import annotations

import gzip

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

AB_DCS = ("a -> b", "not(t.a < t'.a)", "not(t.a > 5)", "not(t.a = t.a)", "not(t.a <= t'.b)")


def ab(a: list, b: list) -> pa.Table:
    """Columns ``a`` (ordered by AB_DCS, so int64) and ``b`` (compared with ``a``: int64)."""
    return pa.table({"a": pa.array(a, pa.int64()), "b": pa.array(b, pa.int64())})


def text_table(**columns: list) -> pa.Table:
    return pa.table({k: pa.array(v, pa.string()) for k, v in columns.items()})


def ok(case_id: str, files: dict, table: pa.Table, dcs: tuple[str, ...], **kw) -> Case:
    data = kw.pop("data", next(iter(files)))
    return Case(case_id, dcs=dcs, data=data, files=files, table=table, **kw)


def refused(case_id: str, content: str | bytes, dcs: tuple[str, ...], error, hint, **kw) -> Case:
    """A CSV ``t.csv`` holding ``content`` that must be refused (pairs to --out: none left)."""
    return Case(
        case_id,
        dcs=dcs,
        files={"t.csv": content},
        output="pairs",
        out="pairs.csv",
        error=error,
        hint=hint,
        **kw,
    )


# ---------------------------------------------------------------------------- sizes

SIZES = [
    refused("empty-file", "", AB_DCS, ("t.csv", "empty"), "header"),
    refused("only-line-breaks", "\n\n", ("a -> b",), ("t.csv", "line 1"), "header"),
    ok("header-only", {"t.csv": "a,b\n"}, ab([], []), AB_DCS),
    ok("header-only-no-line-break", {"t.csv": "a,b"}, ab([], []), AB_DCS),
    ok("one-row", {"t.csv": "a,b\n7,1\n"}, ab([7], [1]), AB_DCS),
    ok("one-row-no-line-break", {"t.csv": "a,b\n7,1"}, ab([7], [1]), AB_DCS),
    ok("all-null-csv", {"t.csv": 'a,b\n,\n"",""\n,\n'}, ab([None] * 3, [None] * 3), AB_DCS),
    ok(
        "all-null-parquet",
        {"t.parquet": pa.table({"a": pa.nulls(3), "b": pa.nulls(3, pa.int64())})},
        pa.table({"a": pa.nulls(3), "b": pa.nulls(3, pa.int64())}),
        AB_DCS + ("not(t.b = 3)",),
    ),
    ok(
        "empty-parquet",
        {"t.parquet": ab([], [])},
        ab([], []),
        AB_DCS,
    ),
    ok(
        "one-column-blank-lines",
        {"t.csv": "a\nx\n\nx\n\n"},
        text_table(a=["x", None, "x", None]),
        ("not(t.a = t'.a)", "not(t.a = t.a)"),
    ),
]

# ---------------------------------------------------------------------------- names

ODD = pa.table(
    {
        "my col": ["p", "p", "q", "q"],
        "a.b": pa.array([1, 2, 1, 2], pa.int64()),
        'q"t': ["x", "x", "y", "y"],
        "é": ["1", "2", "1", "1"],
        "tick`s": ["k", "k", "k", "j"],
        "#hash": ["h", "i", "h", "h"],
        " pad ": ["s", "s", "s", "s"],
        "x,y": ["1", "2", "3", "4"],
        "数字": ["一", "一", "二", "一"],
        "emoji😀": ["😀", "😁", "😀", "😀"],
        "multi\nline": ["m", "m", "n", "n"],
        "": ["e", "f", "e", "f"],
    }
)
ODD_DCS = (
    "not(t.`my col` = t'.`my col` and t.`a.b` < t'.\"a.b\")",
    "not(t.`q\"t` = t'.`q\"t` and t.é != t'.é)",
    "not(t.`tick``s` = t'.`tick``s` and t.`#hash` != t'.`#hash`)",
    "not(t.` pad ` = t'.` pad ` and t.`x,y` != t'.`x,y`)",
    "not(t.数字 = t'.数字 and t.`emoji😀` != t'.`emoji😀`)",
    '`my col`, `a.b` -> `q"t`, é',
    "t1&t2&EQ(t1.my col,t2.my col)&IQ(t1.` pad `,t2.`x,y`)",
    "not(t.`multi\nline` = t'.`multi\nline`)",
    't1&EQ(t1.#hash,"h")&LT(t1.a.b,2)',
)

NAMES = [
    ok("odd-names-csv", {"t.csv": csv_text(ODD)}, ODD, ODD_DCS),
    ok("odd-names-parquet", {"t.parquet": ODD}, ODD, ODD_DCS),
    refused(
        "duplicate-name-used",
        "a,a,b\n1,2,3\n",
        ("a -> b",),
        ("t.csv", "'a'", "2 times"),
        "distinct name",
    ),
    ok(
        "duplicate-name-unused",
        {"t.csv": "a,a,b,,\n1,2,x,,\n3,4,x,,\n"},
        text_table(b=["x", "x"]),
        ("not(t.b = t'.b)",),
    ),
    Case(
        "duplicate-name-used-parquet",
        dcs=("a -> b",),
        data="t.parquet",
        files={"t.parquet": pa.table([[1, 2], [3, 4], [5, 6]], names=["a", "a", "b"])},
        error=("t.parquet", "'a'"),
        hint="distinct name",
    ),
    ok(
        "duplicate-name-unused-parquet",
        {"t.parquet": pa.table([[1, 2], [3, 4], [5, 5]], names=["a", "a", "b"])},
        pa.table({"b": [5, 5]}),
        ("not(t.b = t'.b)",),
    ),
    ok(
        "empty-names-unused",
        {"t.csv": ",b,\n1,x,\n2,x,\n"},
        text_table(b=["x", "x"]),
        ("b -> b", "not(t.b = t'.b)"),
    ),
]

# ---------------------------------------------------------------------------- encodings and shapes

UTF8_HINT = "convert the file"
ENCODING = [
    refused(
        "not-utf8-used-column",
        b"a,b\n1,2\n\xff,1\n",
        ("a -> b",),
        ("t.csv", "line 3", "UTF-8"),
        UTF8_HINT,
    ),
    refused("latin1-header", b"caf\xe9,b\n1,2\n", ("b -> b",), ("t.csv", "line 1"), UTF8_HINT),
    refused(
        "utf16-file",
        "a,b\n1,2\n".encode("utf-16"),
        ("a -> b",),
        ("t.csv", "line 1", "UTF-8"),
        UTF8_HINT,
    ),
    ok(
        "not-utf8-unused-column",
        {"t.csv": b"a,b\n\xff,1\n\xfe,1\n"},
        text_table(b=["1", "1"]),
        ("not(t.b = t'.b)",),
    ),
    ok(
        "bom-crlf-and-cr",
        {"t.csv": "\ufeffa,b\r\n1,2\r1,3\n2,3\r\n"},
        ab([1, 1, 2], [2, 3, 3]),
        AB_DCS,
    ),
    ok(
        "nul-bytes",
        {"t.csv": "a,b\n1\x00,2\n1\x00,3\n"},
        text_table(a=["1\x00"] * 2, b=["2", "3"]),
        ("a -> b",),
    ),
    ok(
        "gzip-tsv",
        {"t.tsv.gz": gzip.compress(b"a\tb\n1\t2\n1\t3\n")},
        ab([1, 1], [2, 3]),
        AB_DCS,
    ),
    refused(
        "ragged-short-record",
        "a,b\n1,2\n3\n",
        ("a -> b",),
        ("t.csv", "line 3", "1 field"),
        "give every record 2 fields",
    ),
    refused(
        "ragged-long-record",
        "a,b\n1,2,3\n",
        ("a -> b",),
        ("t.csv", "line 2", "3 fields"),
        "give every record 2 fields",
    ),
    refused(
        "ragged-after-quoted-line-break",
        'a,b\n"x\ny",1\n2\n',
        ("a -> b",),
        ("t.csv", "line 4"),
        "give every record 2 fields",
    ),
    refused(
        "unclosed-quote",
        'a,b\n"x,1\n2,3\n',
        ("a -> b",),
        ("t.csv", "line 2"),
        "quote",
    ),
    refused(
        "empty-line-several-columns",
        "a,b\n1,2\n\n3,4\n",
        ("a -> b",),
        ("t.csv", "line 3"),
        "delete the empty line",
    ),
]

# ---------------------------------------------------------------------------- long fields

MB = "k" * 1_000_000
HUGE_NUMBER = "1" * 100_000  # float64: inf (int64 cannot hold it)
LONG = [
    ok(
        "field-of-1mb",
        {"t.csv": csv_text(text_table(k=[MB, MB, "x", MB + "y"], v=["1", "2", "1", "1"]))},
        text_table(k=[MB, MB, "x", MB + "y"], v=["1", "2", "1", "1"]),
        ("k -> v", "not(t.k = t'.k)", f"not(t.k = '{'k' * 100_000}')"),
    ),
    ok(
        "header-name-of-200kb",
        {"t.csv": f"{'h' * 200_000},v\n1,1\n2,1\n"},
        text_table(v=["1", "1"]),
        ("not(t.v = t'.v)",),
    ),
    ok(
        "quoted-field-with-10000-line-breaks",
        {"t.csv": 'k,v\n"' + "\n" * 10_000 + '",1\n"' + "\n" * 10_000 + '",2\n'},
        text_table(k=["\n" * 10_000] * 2, v=["1", "2"]),
        ("k -> v",),
    ),
    ok(
        "number-of-100000-digits",
        {"t.csv": f"n,b\n{HUGE_NUMBER},x\n2,y\n"},
        pa.table({"n": [float("inf"), 2.0], "b": ["x", "y"]}),
        ("not(t.n > t'.n)", "not(t.n > 5)", "not(t.n = t'.n)"),
    ),
    ok(
        "5000-columns",
        {
            "t.csv": ",".join(f"c{i}" for i in range(5000))
            + "\n"
            + (",".join("1" * 5000) + "\n") * 2
        },
        text_table(c4999=["1", "1"]),
        ("not(t.c4999 = t'.c4999)", "c4999 -> c4999"),
    ),
]

CASES = SIZES + NAMES + ENCODING + LONG
cli_runs = cli_runs_fixture(CASES)


@pytest.mark.parametrize("case", cli_params(CASES))
def test_cli(case: Case, cli_runs) -> None:
    check_cli(case, cli_runs[case.id])


@pytest.mark.parametrize("case", api_params(CASES))
def test_api(case: Case, tmp_path) -> None:
    check_api(case, run_api(case, tmp_path))


def test_no_traceback_on_stderr(cli_runs) -> None:
    assert_no_traceback(cli_runs)
