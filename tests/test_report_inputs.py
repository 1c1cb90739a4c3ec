"""``facet report`` takes every input ``facet detect`` takes and says what it says
(docs/report.md): the DCs' columns are read as detect reads them, the other columns
only to be shown, so a quirk detect lets pass in a column no DC reads -- a repeated
header name, text that is not UTF-8, a corrupt column -- passes in the report too,
with the same counts and the same warnings."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import facet
from facet.cli import main

DCS = ["--dc", "a -> b", "--dc", "not(t.s > 100)", "--schema", "s:int"]

#: a, b, s are read by the DCs; x (twice) and c are not: c holds Latin-1 bytes
CSV_ROWS = [
    [b"a", b"b", b"x", b"x", b"s", b"c"],
    [b"1", b"2", b"p", b"q", b"5", b"caf\xe9"],
    [b"1", b"3", b"p", b"", b"200", b"\xff\xfe"],
    [b"2", b"2", b"z", b"z", b"12x", b""],  # 12x: no int (a warning)
    [b"2", b"2", b"z", b"z", b"7", b'"ol\xe9, quoted"'],
]


def _csv(rows: list[list[bytes]], sep: bytes = b",") -> bytes:
    return b"".join(sep.join(r) + b"\n" for r in rows)


def _table(names: list[str]) -> pa.Table:
    return pa.Table.from_arrays(
        [pa.array([1, 1, 2, 2]), pa.array([2, 3, 2, 2]), pa.array(["p", "p", "z", "z"]),
         pa.array(["q", None, "z", "z"]), pa.array([5, 200, 1, 7])],
        names=names,
    )  # fmt: skip


def _bad_text(arr_len: int, data: bytes) -> pa.Array:
    """A string array whose bytes are not UTF-8 (Arrow builds it unchecked)."""
    step = len(data) // arr_len
    offsets = pa.py_buffer(b"".join((k * step).to_bytes(4, "little") for k in range(arr_len + 1)))
    return pa.Array.from_buffers(pa.string(), arr_len, [None, offsets, pa.py_buffer(data)])


def _corrupt_arrow(path: Path, names: list[str]) -> None:
    """An IPC file whose unread columns' buffers lie (Arrow's readers leave that
    unchecked): c's last string offset and d's last dictionary index far past
    their arrays."""
    c = pa.array(["ww", "x", "y", "z"])
    d = pa.array(["x", "y", "y", "y"]).dictionary_encode()
    table = _table(names).append_column("c", c).append_column("d", d)
    feather.write_feather(table, path, compression="uncompressed")
    raw = path.read_bytes()
    for old, new in (([0, 2, 3, 4, 5], [0, 2, 3, 4, 2_000_000_000]),
                     ([0, 1, 1, 1], [0, 1, 1, 1_000_000_000])):  # fmt: skip
        words = b"".join(v.to_bytes(4, "little") for v in old)
        assert raw.count(words) == 1
        raw = raw.replace(words, b"".join(v.to_bytes(4, "little") for v in new))
    path.write_bytes(raw)


def quirky_inputs(tmp: Path) -> list[tuple[Path, list[str]]]:
    """Files ``facet detect`` accepts, each with a quirk in a column no DC reads."""
    out: list[tuple[Path, list[str]]] = []
    csv = tmp / "quirks.csv"
    csv.write_bytes(_csv(CSV_ROWS))
    out.append((csv, DCS))
    tsv = tmp / "quirks.tsv"
    tsv.write_bytes(_csv([[f.strip(b'"') for f in r] for r in CSV_ROWS], b"\t"))
    out.append((tsv, DCS))
    gz = tmp / "quirks.csv.gz"
    gz.write_bytes(gzip.compress(_csv(CSV_ROWS)))
    out.append((gz, DCS))
    bom = tmp / "bom.csv"  # a byte order mark, CRLF, a quoted line break in x
    bom.write_bytes(b'\xef\xbb\xbfa,b,x,x,s\r\n1,2,"p\r\nq",\xe9,1\r\n1,3,p,q,2\r\n')
    out.append((bom, DCS))
    header_only = tmp / "header-only.csv"
    header_only.write_bytes(b"a,b,x,x,s,c\n")
    out.append((header_only, DCS))
    names = ["a", "b", "x", "x", "s"]
    for ext in ("parquet", "arrow"):
        dup = tmp / f"dup.{ext}"
        if ext == "parquet":
            pq.write_table(_table(names), dup)
        else:
            feather.write_feather(_table(names), dup)
        out.append((dup, DCS[:4]))
    bad = _table(names).append_column("c", _bad_text(4, b"ab\xff\xfecd\xe9!"))
    feather.write_feather(bad, tmp / "not-utf8.arrow", compression="uncompressed")
    out.append((tmp / "not-utf8.arrow", DCS[:4]))
    _corrupt_arrow(tmp / "corrupt.arrow", names)
    out.append((tmp / "corrupt.arrow", DCS[:4]))
    # a Parquet file whose unread column's page header is garbage
    wide = pa.table({"a": [1, 1, 2, 2] * 50, "b": [2, 3, 2, 2] * 50, "s": list(range(200)),
                     "c": [f"value {i}" for i in range(200)]})  # fmt: skip
    path = tmp / "corrupt.parquet"
    pq.write_table(wide, path, compression="none", use_dictionary=False)
    page = pq.read_metadata(path).row_group(0).column(3).data_page_offset
    raw = bytearray(path.read_bytes())
    raw[page : page + 12] = bytes(b ^ 0xFF for b in raw[page : page + 12])
    path.write_bytes(bytes(raw))
    out.append((path, DCS[:4]))
    return out


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    got = capsys.readouterr()
    return code, got.out, got.err


def _doc(html: Path) -> dict:
    text = html.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="facet-data">(.*?)</script>', text, re.S)
    return json.loads(found.group(1))


def test_report_takes_what_detect_takes_and_says_the_same(tmp_path, capsys):
    inputs = quirky_inputs(tmp_path)
    for data, args in inputs:
        d_code, d_out, d_err = _run(["detect", str(data), *args, "--format", "json"], capsys)
        assert d_code in (0, 1), (data, d_err)
        want = json.loads(d_out)
        html = tmp_path / f"{data.name}.html"
        r_code, r_out, r_err = _run(["report", str(data), *args, "--out", str(html)], capsys)
        assert (r_code, r_err) == (d_code, d_err), data  # same exit, same warnings
        assert f"report written to {html}" in r_out
        doc = _doc(html)
        assert doc["rows"] == want["rows"], data
        assert doc["total_violations"] == want["total_violations"], data
        assert [(d["id"], d["violations"], d["rows"]) for d in doc["dcs"]] == [
            (d["id"], d["violations"], d["rows_involved"]) for d in want["dcs"]
        ], data
        assert all(len(v) == len(doc["columns"]) for v in doc["values"]), data
        if data.name == "quirks.csv":  # the warning the DCs' columns give, in both
            assert "column 's'" in r_err and "'12x'" in r_err, r_err


def test_the_unread_columns_show_as_the_data_holds_them(tmp_path):
    """Every column is shown under its own name (a repeated one too); bytes that are
    not UTF-8 as U+FFFD; an unreadable column as NULL, and the page says why."""
    inputs = dict((p.name, (p, a)) for p, a in quirky_inputs(tmp_path))
    path = inputs["quirks.csv"][0]
    res = facet.detect(path, dcs=["a -> b", "not(t.s > 100)"], schema="s:int")
    res.to_html(tmp_path / "r.html")
    doc = _doc(tmp_path / "r.html")
    assert doc["columns"] == ["a", "b", "x", "x", "s", "c"]
    by_tid = dict(zip(doc["shown"], doc["values"], strict=True))
    assert by_tid[0] == ["1", "2", "p", "q", "5", "caf\ufffd"]
    assert by_tid[1] == ["1", "3", "p", None, "200", "\ufffd\ufffd"]
    assert by_tid[2][5] is None and by_tid[3][5] == "ol\ufffd, quoted"
    for name, columns in (("corrupt.arrow", ["c", "d"]), ("corrupt.parquet", ["c"])):
        src, _ = inputs[name]
        res = facet.detect(src, dcs=["a -> b"])
        res.to_html(tmp_path / "c.html")
        doc = _doc(tmp_path / "c.html")
        assert sorted(doc["unreadable"]) == columns
        for column in columns:
            j = doc["columns"].index(column)
            assert all(v[j] is None for v in doc["values"])
    res = facet.detect(inputs["not-utf8.arrow"][0], dcs=["a -> b"])
    res.to_html(tmp_path / "u.html")
    doc = _doc(tmp_path / "u.html")
    assert doc["unreadable"] == {}
    assert [v[-1] for v in doc["values"]] == ["ab", "\ufffd\ufffd", "cd", "\ufffd!"]


def test_frames_show_columns_detect_does_not_read(tmp_path):
    """A pandas frame with a repeated column name and a column Arrow cannot convert,
    a Polars frame with a column of Python objects: detect takes them when no DC
    reads those columns, and so does the report (their values as text)."""
    import pandas as pd
    import polars as pl

    frame = pd.DataFrame([[1, 2, "p", 1.5], [1, 3, "q", "x"], [2, 2, "z", None]],
                         columns=["a", "b", "x", "x"])  # fmt: skip
    frame["m"] = [1, "two", b"3"]  # Arrow converts no such column
    res = facet.detect(frame, dcs=["a -> b"])
    res.to_html(tmp_path / "pd.html", data=frame)
    doc = _doc(tmp_path / "pd.html")
    assert doc["columns"] == ["a", "b", "x", "x", "m"]
    assert doc["total_violations"] == res.total_violations == 2
    by_tid = dict(zip(doc["shown"], doc["values"], strict=True))
    assert by_tid[1][4] == "two" and by_tid[2][4] == "b'3'"
    objects = pl.DataFrame({"a": [1, 1, 2], "b": [2, 3, 2]}).with_columns(
        pl.Series("o", [object(), {"k": 1}, None], dtype=pl.Object)
    )
    res = facet.detect(objects, dcs=["a -> b"])
    res.to_html(tmp_path / "pl.html", data=objects)
    doc = _doc(tmp_path / "pl.html")
    assert doc["columns"] == ["a", "b", "o"]
    by_tid = dict(zip(doc["shown"], doc["values"], strict=True))
    assert by_tid[1][2] == "{'k': 1}" and by_tid[2][2] is None


def test_data_without_a_dcs_column_is_bad_input(tmp_path):
    table = pa.table({"a": [1, 1], "b": [2, 3]})
    res = facet.detect(table, dcs=["a -> b"])
    with pytest.raises(facet.FacetInputError, match="no column 'b', which the DCs read"):
        res.to_html(tmp_path / "r.html", data=pa.table({"a": [1, 1], "c": [2, 3]}))
