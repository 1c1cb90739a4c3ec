"""CSV read by RFC 4180 in every corner (docs/semantics.md §3, §4.2, §9).

Each file is written byte by byte; the table it must give is written by hand, and facet's
pairs through the API and the CLI (``--output pairs --format json``) must equal
:func:`tests.naive.naive_pairs` over that table: row ids count the records after the
header, whatever the quoting, line ends and empty lines.  Bad files exit 2 with one line
on stderr that names the file and the line.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import facet
from facet.cli import main
from facet.errors import DataError
from facet.language import parse_dc
from facet.loading import load
from tests.naive import naive_pairs
from tests.strategies import examples

SAME_K_OTHER_V = "not(t.k = t'.k and t.v != t'.v)"
SAME_K_SAME_V = "not(t.k = t'.k and t.v = t'.v)"
SAME_K = "not(t.k = t'.k)"


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _cli(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def check(path: Path, expected: dict[str, list[str | None]], dc: str, capsys) -> set:
    """``path`` loads as ``expected`` (text columns), and the API and the CLI find the
    pairs of the two-tuple ``dc`` that the naive evaluator finds there; returns them."""
    table = pa.table({c: pa.array(v, pa.string()) for c, v in expected.items()})
    parsed = parse_dc(dc)[0]
    assert parsed.arity == 2
    want = naive_pairs(table, parsed)
    src = load(path)
    assert src.all_columns == list(expected)
    assert src.num_rows == table.num_rows
    assert src.table.to_pydict() == expected

    res = facet.detect(path, dcs=[dc], output="pairs")
    assert res.rows == table.num_rows
    assert {(p["t1"], p["t2"]) for p in res.pairs().to_pylist()} == want

    code, out, err = _cli(
        ["detect", path, "--dc", dc, "--output", "pairs", "--format", "json"], capsys
    )
    assert code == (1 if want else 0), err
    doc = json.loads(out)
    assert doc["rows"] == table.num_rows
    assert {tuple(p) for p in doc["dcs"][0]["pairs"]} == want
    return want


def bad(path: Path, dc: str, capsys, *needles: str) -> str:
    """``path`` is bad input: a DataError through the API, exit 2 and one line through the
    CLI, both naming the file and every needle."""
    with pytest.raises(DataError) as info:
        facet.detect(path, dcs=[dc])
    code, out, err = _cli(["detect", path, "--dc", dc], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("facet: error: ") and "Traceback" not in err
    for msg in (str(info.value), err):
        assert str(path) in msg
        for needle in needles:
            assert needle in msg, msg
    return err


# --- the header record -------------------------------------------------------------------


def test_header_with_a_quoted_line_break_is_one_record(tmp_path, capsys):
    """The header's line break inside quotes adds no phantom row: ids start after it."""
    p = _write(tmp_path, "h.csv", b'"note\nmore",k,v\nn1,1,a\nn2,1,b\nn3,2,c\n')
    want = check(
        p,
        {"note\nmore": ["n1", "n2", "n3"], "k": ["1", "1", "2"], "v": ["a", "b", "c"]},
        SAME_K_OTHER_V,
        capsys,
    )
    assert want == {(0, 1), (1, 0)}


def test_header_with_quoted_comma_quote_and_crlf(tmp_path, capsys):
    p = _write(tmp_path, "h.csv", b'"a,b","say ""hi""","x\r\ny"\r\n1,1,1\r\n1,2,1\r\n')
    check(
        p,
        {"a,b": ["1", "1"], 'say "hi"': ["1", "2"], "x\r\ny": ["1", "1"]},
        'not(t.`a,b` = t\'.`a,b` and t.`say "hi"` != t\'.`say "hi"`)',
        capsys,
    )


@pytest.mark.parametrize(
    "data",
    [b"k,v", b"k,v\n", b"k,v\r\n", b"k,v\r", b"\xef\xbb\xbfk,v", b'"k","v"', b'"k\nx",v'],
)
def test_header_only_file_has_no_rows(tmp_path, data, capsys):
    p = _write(tmp_path, "h.csv", data)
    names = ["k\nx" if b"k\n" in data else "k", "v"]
    src = load(p)
    assert src.all_columns == names and src.num_rows == 0
    assert src.table.to_pydict() == {c: [] for c in names}
    code, out, _ = _cli(["detect", p, "--dc", "not(t.v = t'.v)", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["rows"] == 0


@pytest.mark.parametrize("data", [b"k", b"k\n", b"\xef\xbb\xbfk\r\n"])
def test_one_column_header_only(tmp_path, data, capsys):
    p = _write(tmp_path, "h.csv", data)
    assert load(p).num_rows == 0
    code, out, _ = _cli(["detect", p, "--dc", SAME_K, "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["rows"] == 0


def test_bom_is_skipped_once(tmp_path, capsys):
    """The BOM is not part of the first name; a BOM character in a value is kept."""
    p = _write(tmp_path, "b.csv", "\ufeffk,v\n\ufeff1,a\n1,b\n\ufeff1,c\n".encode())
    want = check(
        p, {"k": ["\ufeff1", "1", "\ufeff1"], "v": ["a", "b", "c"]}, SAME_K_OTHER_V, capsys
    )
    assert want == {(0, 2), (2, 0)}


@pytest.mark.parametrize(
    ("data", "needle"),
    [(b"", "the file is empty"), (b"\nk,v\n1,2\n", "line 1 is empty"), (b"\r\n", "line 1")],
)
def test_empty_file_or_empty_first_line(tmp_path, data, needle, capsys):
    bad(_write(tmp_path, "e.csv", data), SAME_K, capsys, needle)


# --- line ends, quoting, NULL --------------------------------------------------------------


def test_crlf_and_a_quoted_crlf_is_kept_byte_for_byte(tmp_path, capsys):
    data = b'k,v\r\n1,"a\r\nb"\r\n1,"a\nb"\r\n1,"a\r\nb"\r\n1,"a\rb"\r\n'
    p = _write(tmp_path, "crlf.csv", data)
    want = check(
        p, {"k": ["1"] * 4, "v": ["a\r\nb", "a\nb", "a\r\nb", "a\rb"]}, SAME_K_SAME_V, capsys
    )
    assert want == {(0, 2), (2, 0)}


@pytest.mark.parametrize(
    ("data", "v"),
    [
        (b"k,v\n1,a\n1,b", ["a", "b"]),
        (b'k,v\n1,a\n1,"b"', ["a", "b"]),
        (b'k,v\n1,a\n1,""', ["a", None]),
        (b"k,v\n1,a\n1,", ["a", None]),
        (b"k,v\r1,a\r1,b\r", ["a", "b"]),
        (b"k,v\r1,a\r\n1,b\n", ["a", "b"]),
    ],
    ids=["no-final-newline", "quoted-last", "quoted-empty-last", "empty-last", "cr", "mixed"],
)
def test_line_ends_and_no_final_line_break(tmp_path, data, v, capsys):
    check(_write(tmp_path, "n.csv", data), {"k": ["1", "1"], "v": v}, SAME_K_OTHER_V, capsys)


def test_only_an_empty_field_is_null_quoted_or_not(tmp_path, capsys):
    data = b'k,v\n1,""\n1,\n1,x\n1,""""\n1, \n1,NA\n'
    p = _write(tmp_path, "q.csv", data)
    want = check(
        p, {"k": ["1"] * 6, "v": [None, None, "x", '"', " ", "NA"]}, SAME_K_OTHER_V, capsys
    )
    assert all(i >= 2 and j >= 2 for i, j in want) and len(want) == 12


def test_doubled_quotes(tmp_path, capsys):
    """A quoted field's doubled quotes are one quote; a quote inside an unquoted field is text."""
    data = b'k,v\n1,"say ""hi"""\n1,say "hi"\n1,"""hi"""\n'
    p = _write(tmp_path, "dq.csv", data)
    want = check(p, {"k": ["1"] * 3, "v": ['say "hi"', 'say "hi"', '"hi"']}, SAME_K_SAME_V, capsys)
    assert want == {(0, 1), (1, 0)}


@pytest.mark.parametrize("mib", [10, 20])
def test_very_long_fields(tmp_path, mib, capsys):
    """Fields longer than pyarrow's 16 MiB block are read whole (bigger blocks)."""
    big = "x" * (mib << 20)
    data = f'k,v\n1,"{big}"\n1,{big}\n1,"{big[:-1]}\n"\n2,y\n'.encode()
    p = _write(tmp_path, "long.csv", data)
    res = facet.detect(p, dcs=[SAME_K_SAME_V], output="pairs")
    assert res.rows == 4
    assert {(r["t1"], r["t2"]) for r in res.pairs().to_pylist()} == {(0, 1), (1, 0)}
    src = load(p, ["v"])
    assert [len(v) for v in src.table.column("v").to_pylist()] == [len(big)] * 3 + [1]
    code, out, _ = _cli(["detect", p, "--dc", SAME_K_SAME_V, "--format", "json"], capsys)
    assert code == 1 and json.loads(out)["dcs"][0]["violations"] == 2


# --- empty lines ---------------------------------------------------------------------------


def test_empty_line_in_a_one_column_file_is_null(tmp_path, capsys):
    p = _write(tmp_path, "one.csv", b"k\nx\n\nx\n\n")
    want = check(p, {"k": ["x", None, "x", None]}, SAME_K, capsys)
    assert want == {(0, 2), (2, 0)}
    p = _write(tmp_path, "one_crlf.csv", b'k\r\n\r\nx\r\n""\r\nx')
    assert check(p, {"k": [None, "x", None, "x"]}, SAME_K, capsys) == {(1, 3), (3, 1)}


def test_polars_writes_null_as_an_empty_line(tmp_path, capsys):
    p = tmp_path / "pl.csv"
    pl.DataFrame({"k": ["x", None, "x", "", None]}).write_csv(p)
    assert p.read_bytes() == b'k\nx\n\nx\n""\n\n'
    assert check(p, {"k": ["x", None, "x", None, None]}, SAME_K, capsys) == {(0, 2), (2, 0)}


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"k,v\n1,a\n\n1,b\n", 3),
        (b"k,v\n1,a\n1,b\n\n", 4),
        (b"k,v\r\n1,a\r\n\r\n", 3),
        (b'k,v\n1,"a\n\nb"\n\n', 5),
        (b"k,v\n\n", 2),
    ],
    ids=["middle", "trailing", "crlf", "after-quoted-empty-line", "only"],
)
def test_empty_line_in_a_wider_file_is_an_error(tmp_path, data, line, capsys):
    """§4.2: an empty line in a file of several columns is a record short of fields."""
    p = _write(tmp_path, "e.csv", data)
    bad(p, SAME_K_OTHER_V, capsys, f"line {line} is empty", "delete the empty line")
    bad(p, "not(t.v = t'.v)", capsys, f"line {line} is empty")


def test_empty_line_check_does_not_mistake_empty_fields(tmp_path, capsys):
    """Rows of empty fields (``,``) and empty lines inside quotes are not empty lines."""
    p = _write(tmp_path, "f.csv", b'k,v\n,\n"",""\n1,"a\n\nb"\n1,"a\n\nb"\n,\n')
    want = check(
        p,
        {"k": [None, None, "1", "1", None], "v": [None, None, "a\n\nb", "a\n\nb", None]},
        SAME_K_SAME_V,
        capsys,
    )
    assert want == {(2, 3), (3, 2)}


# --- bad records -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "needles"),
    [
        (b"k,v\n1,2\n3\n4,5\n", ["line 3 has 1 field but the header has 2"]),
        (b"k,v\n1,2\n3,4,5\n", ["line 3 has 3 fields but the header has 2"]),
        (b'k,v\n1,"a\nb"\n2\n', ["line 4 has 1 field"]),
        (b'"k\nx",v\n1,2\n3\n', ["line 4 has 1 field"]),
        (b'k,v\n1,2\n"3,4\n5,6\n', ["line 3 has 1 field"]),
    ],
    ids=["short", "long", "after-quoted-line-break", "after-two-line-header", "open-quote"],
)
def test_ragged_records_name_the_line(tmp_path, data, needles, capsys):
    p = _write(tmp_path, "r.csv", data)
    err = bad(p, "not(t.v = t'.v)", capsys, *needles)
    assert "give every record 2 fields" in err


def test_non_utf8_names_line_and_column(tmp_path, capsys):
    p = _write(tmp_path, "latin.csv", b"k,v\n1,a\n1,\xe9t\xe9\n")
    bad(p, SAME_K_OTHER_V, capsys, "line 3, column 'v'", "not valid UTF-8", "iconv")
    # a column no DC uses is not read
    assert facet.detect(p, dcs=[SAME_K]).dcs[0].violations == 2
    p = _write(tmp_path, "latin_header.csv", b"k,\xe9\n1,2\n")
    bad(p, SAME_K, capsys, "line 1 (the header) is not valid UTF-8")


@pytest.mark.parametrize(
    ("pack", "kind", "ext"),
    [(gzip.compress, "gzip", ".gz"), (bz2.compress, "bzip2", ".bz2"), (lzma.compress, "xz", ".xz")],
)
def test_a_compressed_file_named_as_plain_says_so(tmp_path, capsys, pack, kind, ext):
    """It was 'the header is not valid UTF-8 ... iconv' (a probe's note)."""
    for name in ("noext", "data.csv"):
        p = _write(tmp_path, name, pack(b"k,v\n1,2\n1,3\n"))
        err = bad(p, SAME_K, capsys, f"this file is {kind}-compressed", f"the extension {ext}")
        assert "iconv" not in err
        renamed = p.rename(p.with_name(p.name + ext))
        assert facet.detect(renamed, dcs=[SAME_K]).dcs[0].violations == 2


# --- delimiters, compression -----------------------------------------------------------------


def test_tsv(tmp_path, capsys):
    p = _write(tmp_path, "t.tsv", b'k\tv\n1\t"a\tb"\n1\ta,b\n1\t"a\tb"\n')
    want = check(p, {"k": ["1"] * 3, "v": ["a\tb", "a,b", "a\tb"]}, SAME_K_SAME_V, capsys)
    assert want == {(0, 2), (2, 0)}
    p = _write(tmp_path, "r.tab", b"k\tv\n1\n")
    bad(p, SAME_K, capsys, "line 2 has 1 field", "a tab")


def _arrow_codec(codec: str):
    def compress(data: bytes) -> bytes:
        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, codec) as out:
            out.write(data)
        return sink.getvalue().to_pybytes()

    return compress


COMPRESS = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": _arrow_codec("zstd"),
    ".lz4": _arrow_codec("lz4"),
}


@pytest.mark.parametrize("ext", list(COMPRESS))
@pytest.mark.parametrize("kind", [".csv", ".tsv"])
def test_compressed(tmp_path, ext, kind, capsys):
    sep = "," if kind == ".csv" else "\t"
    text = f'"k\nx"{sep}k{sep}v\n0{sep}1{sep}a\n0{sep}1{sep}"b\n"\n0{sep}2{sep}c\n'
    p = _write(tmp_path, f"c{kind}{ext}", COMPRESS[ext](text.encode()))
    want = check(
        p,
        {"k\nx": ["0"] * 3, "k": ["1", "1", "2"], "v": ["a", "b\n", "c"]},
        SAME_K_OTHER_V,
        capsys,
    )
    assert want == {(0, 1), (1, 0)}
    p = _write(tmp_path, f"bad{kind}{ext}", COMPRESS[ext](f"k{sep}v\n1\n".encode()))
    bad(p, SAME_K, capsys, "line 2 has 1 field")
    p = _write(tmp_path, f"empty{kind}{ext}", COMPRESS[ext](f"k{sep}v".encode()))
    assert load(p).num_rows == 0


# --- header names --------------------------------------------------------------------------


def test_odd_header_names(tmp_path, capsys):
    names = ["a b", "x.y", 'say "hi"', "é✓", "", " k "]
    rows = [["1"] * 6, ["1", "2", "1", "1", "1", "2"]]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([names, *rows])
    p = _write(tmp_path, "n.csv", buf.getvalue().encode())
    expected = {n: [rows[0][i], rows[1][i]] for i, n in enumerate(names)}
    for dc in [
        "not(t.`a b` = t'.`a b` and t.`x.y` != t'.`x.y`)",
        'not(t.`say "hi"` = t\'.`say "hi"` and t.` k ` != t\'.` k `)',
        "not(t.`é✓` = t'.`é✓` and t.`x.y` != t'.`x.y`)",
    ]:
        assert check(p, expected, dc, capsys) == {(0, 1), (1, 0)}


def test_repeated_names_are_fine_unless_a_dc_uses_them(tmp_path, capsys):
    p = _write(tmp_path, "d.csv", b"k,x,v,x,,\n1,a,a,b,,\n1,c,b,d,,\n")
    res = facet.detect(p, dcs=[SAME_K_OTHER_V], output="pairs")
    assert {(r["t1"], r["t2"]) for r in res.pairs().to_pylist()} == {(0, 1), (1, 0)}
    src = load(p, ["k", "v"])
    assert src.all_columns == ["k", "x", "v", "x", "", ""]
    assert src.table.to_pydict() == {"k": ["1", "1"], "v": ["a", "b"]}
    bad(p, "not(t.x = t'.x)", capsys, "'x' 2 times", "distinct name")


# --- the console script ------------------------------------------------------------------


def test_console_script_exit_codes_and_one_line(tmp_path):
    exe = Path(sys.executable).parent / "facet"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "facet"]
    good = _write(tmp_path, "g.csv", b'"k\nk",k,v\n0,1,a\n0,1,b\n')
    ragged = _write(tmp_path, "r.csv", b"k,v\n1,a\n\n1,b\n")

    def run(path: Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*cmd, "detect", str(path), "--dc", SAME_K_OTHER_V, "--output", "pairs"]
            + ["--format", "json"],
            capture_output=True,
            text=True,
            timeout=300,
        )

    p = run(good)
    assert p.returncode == 1, p.stderr
    assert sorted(map(tuple, json.loads(p.stdout)["dcs"][0]["pairs"])) == [(0, 1), (1, 0)]
    p = run(ragged)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "line 3 is empty" in p.stderr


# --- property: what Python's csv module or Polars writes reads back exactly ---------------

CELL = st.one_of(
    st.none(),
    st.sampled_from(["", ",", '"', '""', "\n", "\r", "\r\n", " ", "\t", "a,b", 'x"y', "é✓"]),
    st.text(st.characters(codec="utf-8"), max_size=6),
)
NAME = st.text(st.characters(codec="utf-8", exclude_characters="\ufeff"), max_size=5)


@st.composite
def tables(draw) -> tuple[list[str], list[list[str | None]]]:
    names = draw(st.lists(NAME, min_size=1, max_size=4, unique=True))
    rows = draw(st.lists(st.lists(CELL, min_size=len(names), max_size=len(names)), max_size=8))
    return names, rows


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    table=tables(),
    writer=st.sampled_from(["csv-crlf", "csv-lf", "polars"]),
    sep=st.sampled_from([",", "\t"]),
)
def test_written_tables_read_back_exactly(tmp_path, table, writer, sep):
    """What Python's csv module (QUOTE_MINIMAL) or Polars writes, any text in names and
    values, loads back as the same names, row count and values; None and "" are NULL."""
    names, rows = table
    if writer == "csv-lf":
        # with a "\n" terminator Python's csv module leaves a lone "\r" unquoted: not CSV
        assume(not any("\r" in v for v in [*names, *(c for r in rows for c in r if c)]))
    path = tmp_path / ("t.csv" if sep == "," else "t.tsv")
    if writer == "polars":
        frame = pl.DataFrame(rows, schema={n: pl.String for n in names}, orient="row")
        frame.write_csv(path, separator=sep)
    else:
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(
                f, delimiter=sep, lineterminator="\r\n" if writer == "csv-crlf" else "\n"
            )
            w.writerow(names)
            w.writerows(rows)
    # the separator is named: a header such as a column named "\t" above records
    # holding a tab reads as two columns to the sniffing (tests/test_delimiters.py)
    src = load(path, delimiter=sep)
    assert src.all_columns == names
    assert src.num_rows == len(rows)
    want = {n: [None if r[i] in (None, "") else r[i] for r in rows] for i, n in enumerate(names)}
    assert src.table.to_pydict() == want


SMALL_CELL = st.one_of(st.none(), st.sampled_from(["", "a", "a\n", "a\r\n", '"a"', "a,b", "é"]))


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    rows=st.lists(st.tuples(SMALL_CELL, SMALL_CELL), max_size=10),
    one_column=st.booleans(),
    writer=st.sampled_from(["csv", "polars"]),
)
def test_written_tables_give_the_naive_pairs(tmp_path, rows, one_column, writer):
    """Through facet.detect, ids of what csv or Polars writes (Polars writes a one-column
    NULL as an empty line) are the rows' positions: the pairs equal the naive ones."""
    names = ["k"] if one_column else ["k", "v"]
    rows = [list(r[: len(names)]) for r in rows]
    path = tmp_path / "t.csv"
    if writer == "polars":
        pl.DataFrame(rows, schema={n: pl.String for n in names}, orient="row").write_csv(path)
    else:
        with path.open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([names, *rows])
    table = pa.table(
        {n: pa.array([r[i] or None for r in rows], pa.string()) for i, n in enumerate(names)}
    )
    dc = SAME_K if one_column else SAME_K_OTHER_V
    res = facet.detect(path, dcs=[dc], output="pairs")
    assert res.rows == len(rows)
    got = {(p["t1"], p["t2"]) for p in res.pairs().to_pylist()}
    assert got == naive_pairs(table, parse_dc(dc)[0])


# --- the typing warnings ---------------------------------------------------------------


def test_the_semantics_example_prints_its_warnings(tmp_path, capsys):
    """docs/semantics.md §4.3's tax.csv example, word for word: a value that is no number
    at all is 'not numbers', in an int64 column too."""
    p = _write(tmp_path, "tax.csv", b'salary,rate\n100,5.5\n200,4\n1e3,NaN\n"1 000",3\n')
    rc = main(["detect", str(p), "--dc", "not(t.salary > t'.salary and t.rate < t'.rate)",
               "--format", "json", "--output", "pairs"])  # fmt: skip
    out, err = capsys.readouterr()
    assert rc == 1
    assert json.loads(out)["dcs"][0]["pairs"] == [[1, 0]]
    name = str(p)
    assert err.splitlines() == [
        f"facet: warning: {name}: column 'salary': 1 value not a number (e.g. '1 000') read as NULL",
        f"facet: warning: {name}: column 'rate': 1 value not a number (e.g. 'NaN') read as NULL",
    ]


def test_a_fraction_in_a_declared_int_column_is_named_so(tmp_path, capsys):
    p = _write(tmp_path, "n.csv", b"a\n1\n2.5\nx\n3\n")
    rc = main(["detect", str(p), "--dc", "not(t.a < t'.a)", "--schema", "a:int",
               "--format", "json", "--exit-zero"])  # fmt: skip
    out, err = capsys.readouterr()
    assert rc == 0 and json.loads(out)["dcs"][0]["violations"] == 1
    assert "2 values not whole numbers within int64 (e.g. '2.5') read as NULL" in err
