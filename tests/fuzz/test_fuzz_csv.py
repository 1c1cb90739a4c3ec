"""Fuzzing the CSV loader (``facet.loading.load``, docs/semantics.md §4.2).

* Any bytes, and CSV-ish text built from quotes, delimiters, line breaks, byte order
  marks and bytes that are not UTF-8: ``load`` returns a table of text columns or raises
  :class:`facet.errors.DataError`, nothing else.
* RFC 4180 files (UTF-8, any names, fields holding
  delimiters, quotes and line breaks; ``\\n`` or ``\\r\\n``; with or without a BOM and the
  last line break; plain, ``.tsv`` or gzip): ``load`` returns exactly the records written,
  with empty fields as NULL.
"""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

import pyarrow as pa
from hypothesis import strategies as st

from facet.errors import DataError
from facet.loading import load
from tests.fuzz.driver import drive

_PIECES = [",", '"', '""', "\n", "\r", "\r\n", "\t", " ", "a", "b", "é", "\ufeff", "1", ""]
_BYTES = [b"\xff", b"\xfe", b"\xc3", b"\x00", b"\xef\xbb\xbf", b"\x1f\x8b"]

#: names and field text: the characters that CSV quoting must get right
_TEXT = st.text(alphabet=st.sampled_from('ab é数,"\n\r\t;\\x'), max_size=6)


@st.composite
def _csvish(draw: st.DrawFn) -> bytes:
    """Bytes that look like CSV: text pieces, now and then raw bytes."""
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(_PIECES).map(str.encode),
                _TEXT.map(str.encode),
                st.sampled_from(_BYTES),
            ),
            max_size=40,
        )
    )
    return b"".join(parts)


def _write(where: Path, name: str, data: bytes) -> Path:
    path = where / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


_NAMES = st.sampled_from(["t.csv", "t.tsv", "t.txt", "t", "t.csv.gz", "t.dat"])


def load_anything(stats, data: bytes, name: str, columns: list[str] | None) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = _write(Path(d), name, data)
        try:
            src = load(path, columns=columns)
        except DataError as err:
            stats.outcomes["DataError"] += 1
            msg = str(err)
            assert msg.strip() and len(msg.splitlines()) == 1, repr(msg)
            return
    stats.outcomes["table"] += 1
    assert isinstance(src.table, pa.Table)
    for col in src.table.columns:
        assert pa.types.is_string(col.type) or pa.types.is_large_string(col.type), col.type
        assert len(col) == src.num_rows


@st.composite
def _rfc4180(draw: st.DrawFn) -> tuple[list[str], list[list[str]], dict]:
    names = draw(st.lists(_TEXT, min_size=1, max_size=4, unique=True))
    rows = draw(st.lists(st.lists(_TEXT, min_size=len(names), max_size=len(names)), max_size=8))
    how = {
        "delimiter": draw(st.sampled_from([",", "\t"])),
        "newline": draw(st.sampled_from(["\n", "\r\n"])),
        "bom": draw(st.booleans()),
        "last_newline": draw(st.booleans()),
        "gzip": draw(st.booleans()),
        "quote_all": draw(st.booleans()),
    }
    return names, rows, how


def _render(names: list[str], rows: list[list[str]], how: dict) -> bytes:
    """RFC 4180 text (Python's csv module leaves a lone ``\\r`` unquoted)."""
    delim = how["delimiter"]

    def field(f: str, alone: bool) -> str:
        special = any(c in f for c in (delim, '"', "\r", "\n")) or (alone and f == "")
        if special or how["quote_all"]:
            return '"' + f.replace('"', '""') + '"'
        return f

    lines = [delim.join(field(f, len(r) == 1) for f in r) for r in [names, *rows]]
    text = how["newline"].join(lines) + (how["newline"] if how["last_newline"] else "")
    return (("\ufeff" if how["bom"] else "") + text).encode("utf-8")


def load_rfc4180(stats, spec: tuple[list[str], list[list[str]], dict]) -> None:
    names, rows, how = spec
    ext = (".tsv" if how["delimiter"] == "\t" else ".csv") + (".gz" if how["gzip"] else "")
    with tempfile.TemporaryDirectory() as d:
        path = _write(Path(d), "t" + ext, _render(names, rows, how))
        src = load(path, columns=None)
    stats.outcomes["records"] += len(rows)
    assert src.all_columns == names
    assert src.num_rows == len(rows)
    got = [list(r.values()) for r in src.table.to_pylist()]
    assert src.table.column_names == names
    assert got == [[f if f != "" else None for f in row] for row in rows]


def test_fuzz_csv_loader_any_bytes() -> None:
    columns = st.one_of(st.none(), st.lists(st.sampled_from(["a", "b", "", "é", "x"])))
    drive(
        "csv loader (any bytes)",
        load_anything,
        {"data": st.one_of(_csvish(), st.binary(max_size=200)), "name": _NAMES, "columns": columns},
        examples=300,
        share=0.15,
    )


def test_fuzz_csv_loader_rfc4180() -> None:
    drive(
        "csv loader (RFC 4180 oracle)",
        load_rfc4180,
        {"spec": _rfc4180()},
        examples=300,
        share=0.15,
    )
