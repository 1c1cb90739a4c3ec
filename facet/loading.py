"""Reading tables into Arrow (docs/semantics.md §4; docs/architecture.md "Data flow").

CSV is read as text by RFC 4180 (§4.2): the first record is the header, quoted fields
may hold the delimiter, line breaks and doubled quotes, and only an empty field, quoted
or not, is NULL.  Row ids count the records after the header (§3).  The header is read
with Python's csv module; the data with pyarrow's multithreaded reader, which starts
after the header *record* (a quoted header field may span lines).  Parquet and Arrow IPC
files, pyarrow / pandas / Polars tables and Arrow streams keep their own types (§4.1).
Typing of CSV text for order predicates happens later (:mod:`facet.column_types`).
A folder of Parquet files is read as one table (:func:`parquet_folder`: the files both
engines read, in the order tids follow).
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import dataclasses
import io
import itertools
import lzma
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from facet.errors import DataError, FacetInputError

_PARQUET = {".parquet", ".pq", ".parq"}
_IPC = {".arrow", ".feather", ".ipc", ".arrows"}
_COMPRESSED = {".gz", ".bz2", ".zst", ".lz4", ".xz"}
#: pyarrow's CSV block; a record longer than a block is retried with bigger blocks
_BLOCK = 1 << 24
_MAX_BLOCK = 1 << 28
_HEADER_READ = 1 << 16


@dataclass
class Source:
    """A loaded table: the Arrow data plus how to talk about it in messages."""

    table: pa.Table
    name: str
    #: True for CSV text (types are inferred from the DCs), False for typed inputs.
    text: bool
    #: all column names of the source, in order (``table`` may hold only the used ones)
    all_columns: list[str]
    num_rows: int
    #: ``load(..., others=True)``: the columns outside the used ones that could not be
    #: read (a corrupt Parquet or Arrow column), each with why; the table holds NULLs there
    unreadable: dict[str, str] = dataclasses.field(default_factory=dict)
    #: the delimiter a CSV file was split on (None: not read as CSV)
    delimiter: str | None = None


def source_name(data: Any) -> str:
    if isinstance(data, str | os.PathLike):
        return os.fspath(data)
    return f"<{type(data).__module__.split('.')[0]}.{type(data).__name__}>"


#: the delimiters a CSV header is sniffed for (§4.2)
SNIFFED = (",", ";", "\t", "|")


def parse_delimiter(text: str | None) -> str | None:
    """A ``--delimiter`` / ``delimiter=``: one character (``tab`` or ``\\t`` for a
    tab), not a quote or a line break; None: sniffed from the header."""
    if text is None:
        return None
    value = {"tab": "\t", "\\t": "\t"}.get(text.lower() if isinstance(text, str) else "", text)
    if not isinstance(value, str) or len(value) != 1 or value in '"\r\n' or not value.isascii():
        raise FacetInputError(
            f"--delimiter {text!r}: expected one ASCII character other than a quote or a line "
            "break, e.g. ';', '|' or 'tab' (Python: delimiter=)"
        )
    return value


def sniff_delimiter(path: Path, default: str = ",") -> str:
    """The delimiter of a CSV file, from its header record (§4.2): the one of
    :data:`SNIFFED` that splits it into more columns than each other one does
    (quoted fields respected), when the records that follow in the file's first
    bytes (at least one) split into as many; else ``default``."""
    try:
        with _open(path) as stream:
            data = _read(stream, _HEADER_READ)
    except (OSError, pa.ArrowException, lzma.LZMAError, EOFError):
        return default  # (the reader reports it)
    text = data.decode("utf-8-sig", errors="surrogateescape")
    counts = {}
    for d in SNIFFED:
        try:
            record, _ = _first_record(text, d)
        except csv.Error:
            record = None
        counts[d] = len(record or ())
    best = max(counts.values())
    winners = [d for d, k in counts.items() if k == best]
    if len(winners) > 1 or winners[0] == default:
        return default
    return (
        winners[0] if _records_agree(text, winners[0], best, len(data) < _HEADER_READ) else default
    )


def _records_agree(text: str, delimiter: str, width: int, whole: bool) -> bool:
    """Whether the records after the header in ``text`` (the file's first bytes; its
    last record is cut short unless ``whole``), at most 100 and at least one, hold
    ``width`` fields each."""
    seen = 0
    try:
        with _no_field_limit():
            reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
            next(reader, None)
            records = list(itertools.islice(reader, 101))
    except csv.Error:
        return False
    if not whole or len(records) > 100:
        records = records[:-1]  # (may be cut short)
    for record in records:
        if record:  # (an empty line is another error, reported as such)
            if len(record) != width:
                return False
            seen += 1
    return seen > 0


def csv_delimiter(path: Path, delimiter: str | None = None) -> str | None:
    """The delimiter of a file read as CSV: ``delimiter`` if given, else a tab for
    ``.tsv``/``.tab`` and for other names sniffed from the header (``,`` when that is
    ambiguous); None for a Parquet or Arrow IPC file (by extension, else first bytes; §4.2)."""
    kind = _kind_of(path)
    if kind not in ("csv", "tsv") or delimiter is not None:
        return None if kind not in ("csv", "tsv") else delimiter
    return "\t" if kind == "tsv" else sniff_delimiter(path)


def _kind_of(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    while suffixes and suffixes[-1] in _COMPRESSED:
        suffixes.pop()
    ext = suffixes[-1] if suffixes else ""
    if ext in _PARQUET:
        return "parquet"
    if ext in _IPC:
        return "ipc"
    if ext in (".csv", ".tsv", ".txt", ".tab"):
        return "tsv" if ext in (".tsv", ".tab") else "csv"
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return "csv"
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"ARROW1") or head[:4] == b"\xff\xff\xff\xff":
        return "ipc"
    return "csv"


def _open(path: Path) -> Any:
    """A binary stream of the file's bytes, decompressed by extension (§4.2)."""
    if path.suffix.lower() == ".xz":  # pyarrow has no xz codec
        return lzma.open(path, "rb")
    return pa.input_stream(_arrow(path), compression="detect")


@contextlib.contextmanager
def _no_field_limit() -> Iterator[None]:
    """Lift Python csv's 128 KiB field limit (RFC 4180 fields have no limit)."""
    old = csv.field_size_limit(sys.maxsize)
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _is_utf8(text: str) -> bool:
    """False for text decoded with ``surrogateescape`` from bytes that are not UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Header(NamedTuple):
    """The first record of a CSV file (§4.2)."""

    #: the column names; None for an empty file, [] when the first line is empty
    names: list[str] | None
    #: its length in bytes, with the byte order mark and the line break that ends it
    size: int
    #: whether any byte follows it (if not, the file has 0 rows)
    more: bool


def _first_record(text: str, delimiter: str) -> tuple[list[str] | None, int]:
    """The first RFC 4180 record of ``text`` and the number of characters it takes."""
    used = 0

    def lines() -> Iterator[str]:
        nonlocal used
        for line in io.StringIO(text, newline=""):
            used += len(line)
            yield line

    with _no_field_limit():
        record = next(csv.reader(lines(), delimiter=delimiter), None)
    return record, used


def read_header(path: Path, delimiter: str = ",") -> Header:
    """The header record of a CSV file (§4.2), read from its first bytes (more if needed).

    A UTF-8 byte order mark is skipped; bytes that are not UTF-8 come back as
    ``surrogateescape`` characters (see :func:`_is_utf8`).
    """
    size = _HEADER_READ
    while True:
        with _open(path) as stream:
            data = _read(stream, size)
        eof = len(data) < size
        text = data.decode("utf-8-sig", errors="surrogateescape")
        try:
            record, used = _first_record(text, delimiter)
        except csv.Error as err:
            raise DataError(f"{path}: line 1 (the header): {err}; check its quotes") from None
        if eof or used < len(text):
            bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
            nbytes = bom + len(text[:used].encode("utf-8", errors="surrogateescape"))
            return Header(record, nbytes, used < len(text))
        if size >= _MAX_BLOCK:
            raise DataError(
                f"{path}: the header record does not end within the first "
                f"{_MAX_BLOCK >> 20} MiB; check the quotes in line 1"
            )
        size *= 4


def _read(stream: Any, nbytes: int) -> bytes:
    """``nbytes`` bytes of ``stream``, fewer only at its end."""
    parts = []
    while nbytes > 0:
        part = stream.read(nbytes)
        if not part:
            break
        parts.append(part)
        nbytes -= len(part)
    return b"".join(parts)


def _skip(stream: Any, nbytes: int) -> None:
    """Move ``stream`` ``nbytes`` forward (reading, if it cannot seek)."""
    if stream.seekable():
        stream.seek(nbytes)
        return
    while nbytes > 0:
        got = len(stream.read(min(nbytes, _BLOCK)))
        if not got:
            return
        nbytes -= got


def _check_columns(header: list[str], name: str, used: list[str] | None, frame: bool) -> None:
    """A column the DCs use must be named once (others may repeat; §4.2)."""
    counts: dict[str, int] = {}
    for col in header:
        counts[col] = counts.get(col, 0) + 1
    for col in used if used is not None else header:
        if counts.get(col, 0) > 1:
            what = f"column '{col}' appears" if frame else f"the header names column '{col}'"
            raise DataError(
                f"{name}: {what} {counts[col]} times; give every column a distinct name"
            )


def _unique_names(header: list[str]) -> list[str]:
    """Header names made unique (repeats of unused columns get a suffix)."""
    taken = set(header)
    seen: set[str] = set()
    out = []
    for col in header:
        new, k = col, 0
        while new in seen or (k and new in taken):
            k += 1
            new = f"{col}\x00{k}"
        seen.add(new)
        out.append(new)
    return out


def _delimiter_name(delimiter: str) -> str:
    return "a tab" if delimiter == "\t" else f"'{delimiter}'"


def _locate(path: Path, delimiter: str, names: list[str], checked: list[int]) -> str | None:
    """Where the first bad record after the header is, as ``line N: what; how to fix``.

    Bad: a field count other than the header's (an empty line counts as no fields,
    except in a one-column file, where it is a NULL record), or text that is not UTF-8
    in a ``checked`` column.  This runs only after pyarrow has rejected the file, so
    the per-record Python loop is off the hot path.
    """
    ncols = len(names)
    with _open(path) as raw, _no_field_limit():
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="surrogateescape", newline="")
        reader = csv.reader(text, delimiter=delimiter)
        next(reader, None)
        end = reader.line_num
        for fields in reader:
            line, end = end + 1, reader.line_num
            if not fields and ncols > 1:
                return (
                    f"line {line} is empty, but the header has {ncols} columns; delete the "
                    "empty line (an empty line is a record holding NULL only in a one-column file)"
                )
            if fields and len(fields) != ncols:
                return (
                    f"line {line} has {len(fields)} field{'s' if len(fields) != 1 else ''} but "
                    f"the header has {ncols}; give every record {ncols} fields, and quote "
                    f'("...") fields that hold {_delimiter_name(delimiter)}, a line break or a quote'
                    f" (or name the file's delimiter with --delimiter, if it is not "
                    f"{_delimiter_name(delimiter)})"
                )
            for i in checked:
                if fields and not _is_utf8(fields[i]):
                    return (
                        f"line {line}, column '{names[i]}': the text is not valid UTF-8; facet reads "
                        "CSV as UTF-8, so convert the file (e.g. iconv -f latin1 -t utf-8)"
                    )
    return None


def _parse_error(
    path: Path, names: list[str], include: list[str], delimiter: str, fallback: str
) -> DataError:
    """A one-line error naming the bad line (§9), or ``fallback`` if it cannot be found."""
    checked = [i for i, c in enumerate(names) if c in set(include)]
    try:
        where = _locate(path, delimiter, names, checked)
    except (OSError, ValueError, csv.Error, pa.ArrowException):
        where = None
    return DataError(f"{path}: {where or fallback}")


def _pyarrow_message(err: Exception) -> str:
    msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    msg = msg.replace("CSV parse error: ", "")
    return f"cannot parse CSV: {msg}; check quoting and the number of fields"


def _parse(
    path: Path,
    header: Header,
    names: list[str],
    include: list[str],
    delimiter: str,
    ignore_empty_lines: bool = False,
    loose: frozenset[str] = frozenset(),
) -> pa.Table:
    """The records after the header, ``include`` columns only, as text (§4.2);
    the ``loose`` ones as bytes, which need not be UTF-8 (columns only shown).

    pyarrow reads with all cores from the last byte of the header's line break on and
    skips that (empty) first line: so the header is Python's csv record whatever its
    quotes, and pyarrow cannot take a byte order mark that starts the data for the
    file's.  A record longer than a block is retried with bigger blocks.
    """
    import pyarrow.csv as pacsv

    parse_opts = pacsv.ParseOptions(
        delimiter=delimiter,
        newlines_in_values=True,
        double_quote=True,
        ignore_empty_lines=ignore_empty_lines,
    )
    conv_opts = pacsv.ConvertOptions(
        column_types={c: pa.binary() if c in loose else pa.string() for c in include},
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
        include_columns=include,
    )
    block = _BLOCK
    while True:
        read_opts = pacsv.ReadOptions(column_names=names, skip_rows=1, block_size=block)
        try:
            with _open(path) as stream:
                _skip(stream, header.size - 1)
                return pacsv.read_csv(
                    stream,
                    read_options=read_opts,
                    parse_options=parse_opts,
                    convert_options=conv_opts,
                )
        except pa.ArrowInvalid as err:
            if "straddl" in str(err) and block < _MAX_BLOCK:
                block *= 4
                continue
            checked = [c for c in include if c not in loose]
            raise _parse_error(path, names, checked, delimiter, _pyarrow_message(err)) from None
        except (OSError, UnicodeDecodeError, lzma.LZMAError, EOFError) as err:
            raise DataError(f"cannot read '{path}': {err}") from None


def _reject_empty_lines(
    path: Path,
    header: Header,
    names: list[str],
    include: list[str],
    delimiter: str,
    table: pa.Table,
    loose: frozenset[str] = frozenset(),
) -> None:
    """An empty line in a file of several columns is an error (§4.2).

    pyarrow reads such a line as a record of empty fields, like ``,,``, so only a row
    that is NULL in every column read can be one; only then is the file parsed again
    with empty lines skipped, and a different row count means there was one.
    """
    if table.num_rows == 0 or any(col.null_count == 0 for col in table.columns):
        return
    mask = pc.is_null(table.column(0))
    for col in table.columns[1:]:
        mask = pc.and_(mask, pc.is_null(col))
    if not pc.any(mask).as_py():
        return
    skipped = _parse(path, header, names, include[:1], delimiter, True, loose)
    if skipped.num_rows != table.num_rows:
        raise _parse_error(
            path,
            names,
            include,
            delimiter,
            f"an empty line, but the header has {len(names)} columns; delete the empty lines",
        )


def _binary_kind(path: Path) -> str | None:
    """``"a Parquet"`` or ``"an Arrow IPC"`` for a file of that format by its
    first and last bytes (not a CSV file that happens to start like one)."""
    if path.suffix.lower() in _COMPRESSED:
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            f.seek(max(0, os.fstat(f.fileno()).st_size - 6))
            tail = f.read(6)
    except OSError:
        return None
    if head.startswith(b"PAR1") and tail.endswith(b"PAR1"):
        return "a Parquet"
    if (head.startswith(b"ARROW1") and tail == b"ARROW1") or head[:4] == b"\xff\xff\xff\xff":
        return "an Arrow IPC"
    return None


def csv_header(path: Path, delimiter: str = ",", name: str | None = None) -> Header:
    """A CSV file's header record, checked: there is one, it is not empty, and it
    is UTF-8 (§4.2).  ``name`` is how messages call the file (default: ``path``)."""
    name = os.fspath(path) if name is None else name
    binary = _binary_kind(path)
    if binary is not None:
        ext = ".parquet" if binary == "a Parquet" else ".arrow"
        raise DataError(
            f"{name}: this is {binary} file, but its name says CSV; rename it to end in "
            f"{ext} (or to have no extension)"
        )
    header = read_header(path, delimiter)
    if header.names is None:
        raise DataError(f"{name}: the file is empty; a CSV file needs a header line")
    if not header.names:
        raise DataError(
            f"{name}: line 1 is empty; the first line must be the header (the column names)"
        )
    if not all(_is_utf8(col) for col in header.names):
        packed = _compressed_kind(path)
        if packed is not None:
            raise DataError(
                f"{name}: this file is {packed[0]}-compressed, but its name does not say so; "
                f"name it with the extension {packed[1]} (facet reads such files decompressed)"
            )
        raise DataError(
            f"{name}: line 1 (the header) is not valid UTF-8; facet reads CSV as UTF-8, "
            "so convert the file (e.g. iconv -f latin1 -t utf-8)"
        )
    return header


#: compressed formats' first bytes, their names and extensions
_MAGIC = ((b"\x1f\x8b", "gzip", ".gz"), (b"BZh", "bzip2", ".bz2"),
          (b"\x28\xb5\x2f\xfd", "zstd", ".zst"), (b"\xfd7zXZ\x00", "xz", ".xz"),
          (b"\x04\x22\x4d\x18", "lz4", ".lz4"))  # fmt: skip


def _compressed_kind(path: Path) -> tuple[str, str] | None:
    """A file's compression and its extension by its first bytes, when its name
    does not end in that extension."""
    if path.suffix.lower() in _COMPRESSED:
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(6)
    except OSError:
        return None
    return next(((kind, ext) for magic, kind, ext in _MAGIC if head.startswith(magic)), None)


def read_csv(
    path: Path, columns: list[str] | None, delimiter: str = ",", others: bool = False
) -> Source:
    """A CSV file's ``columns`` (all if None) as text, row ids by record (§3, §4.2).
    ``others``: every column, the others as :func:`load` says."""
    name = os.fspath(path)
    header = csv_header(path, delimiter)
    assert header.names is not None  # csv_header refuses a file without a header
    _check_columns(header.names, name, columns, frame=False)
    names = _unique_names(header.names)
    wanted = names if columns is None else [c for c in names if c in set(columns)]
    loose = frozenset(c for c in names if c not in set(wanted)) if others else frozenset()
    include = names if others else wanted or names[:1]
    if header.more:
        table = _parse(path, header, names, include, delimiter, loose=loose)
        if len(names) > 1:
            _reject_empty_lines(path, header, names, include, delimiter, table, loose)
    else:
        table = pa.table({c: pa.array([], pa.string()) for c in include})
    num_rows = table.num_rows
    if others:
        table = _text_where_utf8(table, loose)
    elif not wanted:
        table = table.select([])
    return Source(table, name, True, header.names, num_rows, delimiter=delimiter)


def _text_where_utf8(table: pa.Table, loose: frozenset[str]) -> pa.Table:
    """The ``loose`` byte columns as text where all of their values are UTF-8; the
    others stay bytes (shown as text with U+FFFD for what is not UTF-8)."""
    for i, col in enumerate(table.column_names):
        if col in loose and pa.types.is_binary(table.schema.field(i).type):
            try:
                text = table.column(i).cast(pa.string())
            except pa.ArrowInvalid:
                continue
            table = table.set_column(i, pa.field(col, pa.string()), text)
    return table


def _from_arrow_like(
    table: pa.Table, name: str, columns: list[str] | None, others: bool = False
) -> Source:
    """A typed Arrow table (§4.1), cut to ``columns`` (unless ``others``); ids are
    row positions (§3)."""
    header = list(table.column_names)
    _check_columns(header, name, columns, frame=True)
    num_rows = table.num_rows
    if columns is not None and not others:
        used = set(columns)
        table = table.select([i for i, c in enumerate(header) if c in used])
    return Source(_decimal128(table), name, False, header, num_rows)


def _decimal128(table: pa.Table) -> pa.Table:
    """``table`` with its decimal32/decimal64 columns as decimal128 of the same
    precision and scale (exact; Arrow's kernels take decimal128 and decimal256)."""
    for i, field in enumerate(table.schema):
        typ = field.type
        if pa.types.is_decimal(typ) and typ.bit_width < 128:
            column = table.column(i).cast(pa.decimal128(typ.precision, typ.scale))
            table = table.set_column(i, field.with_type(column.type), column)
    return table


def _first_line(err: BaseException) -> str:
    lines = str(err.args[0] if err.args else err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def _frame_error(name: str, col: str, err: Exception) -> DataError:
    return DataError(
        f"{name}: column '{col}' cannot be converted to Arrow ({_first_line(err)}); "
        f"give it one type, e.g. df['{col}'] = df['{col}'].astype('string')"
    )


def _from_pandas(df: Any, name: str, columns: list[str] | None, others: bool = False) -> Source:
    """A pandas frame (§4.1): only the used columns are converted (all with
    ``others``: one Arrow cannot convert as its values' text), names as ``str``,
    ids are positions, not index labels (§3)."""
    header = [str(c) for c in df.columns]
    _check_columns(header, name, columns, frame=True)
    used = None if columns is None else set(columns)
    keep = [i for i, c in enumerate(header) if others or used is None or c in used]
    failures = (pa.ArrowException, ValueError, TypeError, OverflowError)
    try:
        table = pa.Table.from_pandas(df.iloc[:, keep], preserve_index=False)
    except failures as err:
        arrays = []
        for i in keep:
            try:
                arrays.append(pa.Array.from_pandas(df.iloc[:, i]))
            except failures as col_err:
                big = _python_ints(df.iloc[:, i])
                if big is None and others and used is not None and header[i] not in used:
                    big = _as_text(df.iloc[:, i])
                if big is None:
                    raise _frame_error(name, header[i], col_err) from None
                arrays.append(big)
        try:
            table = pa.table(arrays, names=[str(i) for i in keep])
        except failures:
            raise DataError(f"{name}: cannot convert the frame to Arrow: {err}") from None
    table = table.rename_columns([header[i] for i in keep]).replace_schema_metadata(None)
    return Source(table, name, False, header, len(df))


def _as_text(values: Any) -> pa.Array:
    """A column Arrow cannot convert, shown as its values' text (None stays NULL)."""
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def _python_ints(column: Any) -> pa.Array | None:
    """A pandas ``object`` column of Python ints that Arrow refused (past int64) as
    uint64 when they fit it, else as a decimal with scale 0 (exact, §4.1); None
    for any other column.  Only on that error path: a loop per value."""
    import numpy as np

    values = [None if v is None or (isinstance(v, float) and v != v) else v for v in column]
    ints = [v for v in values if v is not None]
    if not ints or not all(
        isinstance(v, int | np.integer) and not isinstance(v, bool) for v in ints
    ):
        return None
    low, high = int(min(ints)), int(max(ints))
    if low >= 0 and high < 2**64:
        return pa.array([None if v is None else int(v) for v in values], pa.uint64())
    digits = len(str(max(abs(low), abs(high))))
    if digits > 76:
        return None
    typ = pa.decimal128(38, 0) if digits <= 38 else pa.decimal256(76, 0)
    return pa.array([None if v is None else Decimal(int(v)) for v in values], typ)


def _from_polars(data: Any, name: str, columns: list[str] | None, others: bool = False) -> Source:
    """A Polars DataFrame or LazyFrame (§4.1): only the used columns are converted
    (all with ``others``: a column of Python objects as their text; a LazyFrame is
    collected once)."""
    import polars as pl

    schema = data.collect_schema()
    header = list(schema.names())
    used = None if columns is None else set(columns)
    keep = [c for c in header if others or used is None or c in used]
    shown = [c for c in keep if used is not None and c not in used and schema[c] == pl.Object]
    if shown:
        if isinstance(data, pl.LazyFrame):
            data = data.collect()
        data = data.with_columns(
            pl.Series(c, _as_text(data.get_column(c).to_list()).to_pylist(), pl.String)
            for c in shown
        )
        schema = data.collect_schema()
    for col in keep:
        if schema[col] == pl.Object:  # Arrow would get the objects' addresses
            raise DataError(
                f"{name}: column '{col}' holds Python objects; convert it to a plain type "
                f"first, e.g. pl.col('{col}').map_elements(str, return_dtype=pl.String)"
            )
    try:
        if isinstance(data, pl.LazyFrame):
            if not keep:
                num_rows = int(data.select(pl.len()).collect().item())
                return Source(pa.table({}), name, False, header, num_rows)
            data = data.select(keep).collect()
        wide = [c for c in keep if schema[c] in (pl.Int128, getattr(pl, "UInt128", pl.Int128))]
        # 128-bit integers, which Arrow has no type for: as text, then exact decimals
        frame = data.select(keep).with_columns(pl.col(c).cast(pl.String) for c in wide)
        table = frame.to_arrow()
        for c in wide:
            i = table.column_names.index(c)
            table = table.set_column(i, c, table.column(i).cast(pa.decimal256(40, 0)))
    except Exception as err:  # noqa: BLE001 - polars raises many kinds; report it as data
        raise DataError(
            f"{name}: cannot convert the frame to Arrow: {_first_line(err)}; "
            "cast the used columns to plain types (e.g. with .cast(pl.String))"
        ) from None
    return Source(table, name, False, header, data.height)


def _load_path(
    path: Path,
    name: str,
    columns: list[str] | None,
    others: bool = False,
    delimiter: str | None = None,
) -> Source:
    kind = _kind_of(path)
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            schema_names = pq.read_schema(_arrow(path)).names
        except (pa.ArrowInvalid, OSError) as err:
            msg = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise DataError(
                f"cannot read '{name}' as Parquet: {msg}; check that the file is complete and is what its extension says (CSV, Parquet, Arrow IPC, .gz ...)"
            ) from None
        _check_columns(schema_names, name, columns, frame=False)
        cols = None if columns is None else [c for c in schema_names if c in set(columns)]
        if others and cols is not None:
            return _parquet_with_others(path, name, schema_names, cols)
        coded = _dictionary_coded_text(path, cols)
        if path.is_file():  # whole columns (read_table cuts 128k-row chunks, which
            # encoding would combine: a copy of every column it codes)
            table = pq.ParquetFile(_arrow(path), read_dictionary=coded or None).read(columns=cols)
        else:
            table = pq.read_table(_arrow(path), columns=cols, read_dictionary=coded or None)
        if cols is not None and not cols:
            meta = pq.read_metadata(_arrow(path))
            src = _from_arrow_like(table, name, [])
            src.all_columns = list(schema_names)
            src.num_rows = meta.num_rows
            return src
        src = _from_arrow_like(table, name, None)
        src.all_columns = list(schema_names)
        return src
    if kind == "ipc":
        import pyarrow.feather as feather

        try:
            table = feather.read_table(_arrow(path))
        except pa.ArrowInvalid:
            with pa.OSFile(_arrow(path), "rb") as f:
                table = pa.ipc.open_stream(f).read_all()
        return _from_arrow_like(table, name, columns, others)
    if delimiter is None:
        delimiter = "\t" if kind == "tsv" else sniff_delimiter(path)
    return read_csv(path, columns, delimiter, others)


def _parquet_with_others(path: Path, name: str, schema_names: list[str], cols: list[str]) -> Source:
    """Every column of a Parquet file: ``cols`` as :func:`load` reads them, the
    others too when they can be read, else NULLs (``Source.unreadable`` says why)."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(_arrow(path))
    try:
        table = file.read()
    except (pa.ArrowException, OSError):  # a corrupt column: the used ones as detect reads them
        used = _load_path(path, name, cols).table
        arrays, unreadable = [], {}
        for col in schema_names:
            if col in set(cols):
                arrays.append(used.column(col))
                continue
            try:
                if schema_names.count(col) > 1:
                    raise pa.ArrowInvalid("its name is not unique")
                arrays.append(file.read(columns=[col]).column(0))
            except (pa.ArrowException, OSError) as err:
                unreadable[col] = _first_line(err)
                arrays.append(pa.nulls(file.metadata.num_rows, pa.string()))
        table = pa.Table.from_arrays(arrays, names=list(schema_names))
        src = _from_arrow_like(table, name, cols, others=True)
        src.unreadable = unreadable
        return src
    return _from_arrow_like(table, name, cols, others=True)


#: the first characters of the names a Parquet folder's reading skips, at any depth: hidden
#: files and folders, and the writers' bookkeeping (``_SUCCESS``, ``_metadata``,
#: ``_common_metadata``, ``_temporary/``, ``.part-0.parquet.crc``) -- Spark's and
#: pyarrow's rule
HIDDEN_PREFIXES = (".", "_")
#: a partition folder's name: ``key=value``
_PARTITION = re.compile(r"([^=]+)=(.*)")


@dataclass
class ParquetFolder:
    """The Parquet files a folder holds (both engines read exactly these, in this
    order: tids follow it, §3) and the columns they give."""

    files: list[str]
    #: every column of the files, in the type of the first file that has it
    schema: pa.Schema
    #: the keys of the partition folders (``key=value``) the files sit in
    partition_keys: list[str]


def parquet_folder_files(path: Path) -> list[str]:
    """Every file below the folder ``path`` at any depth (in plain and partition
    folders alike), skipping the names that begin with ``.`` or ``_``
    (:data:`HIDDEN_PREFIXES`), sorted by path."""
    out: list[str] = []
    for root, dirs, files in os.walk(path, onerror=_walk_error):
        dirs[:] = [d for d in dirs if not d.startswith(HIDDEN_PREFIXES)]
        out.extend(os.path.join(root, f) for f in files if not f.startswith(HIDDEN_PREFIXES))
    return sorted(out)


def _walk_error(err: OSError) -> None:
    raise DataError(
        f"cannot read {err.filename!r}: {err.strerror or err}; check the folder's permissions"
    )


def _same_storage(typ: pa.DataType) -> pa.DataType:
    """``typ`` as the column's values compare: a dictionary as its values, the large
    and view layouts of text and bytes as the plain ones."""
    if pa.types.is_dictionary(typ):
        typ = typ.value_type
    if pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        return pa.string()
    if pa.types.is_large_binary(typ) or pa.types.is_binary_view(typ):
        return pa.binary()
    return typ


def parquet_folder(path: Path, name: str, columns: list[str] | None) -> ParquetFolder:
    """The Parquet files of folder ``path`` and their columns, checked: the folder
    holds some, each is readable Parquet, each used column (``columns``; None:
    all) has one type in every file that has it, and a used column no file has
    but a partition folder names is refused saying so (partition folders'
    ``key=value`` names are not read as columns)."""
    import pyarrow.parquet as pq

    files = parquet_folder_files(path)
    if not files:
        raise DataError(
            f"cannot read {name!r}: it is a directory with no Parquet file in it (names "
            "starting with . or _ are skipped); give a file, or a folder of Parquet files"
        )
    fields: dict[str, pa.Field] = {}
    first: dict[str, str] = {}
    for f in files:
        try:
            schema = pq.read_schema(_arrow(Path(f)))
        except (pa.ArrowInvalid, OSError) as err:
            raise DataError(
                f"{f}: not a readable Parquet file ({_first_line(err)}); a Parquet folder "
                "must hold only Parquet files (names starting with . or _ are skipped)"
            ) from None
        _check_columns(schema.names, f, columns, frame=False)
        for field in schema:
            if field.name not in fields:
                fields[field.name], first[field.name] = field, f
            elif (columns is None or field.name in columns) and _same_storage(
                field.type
            ) != _same_storage(fields[field.name].type):
                c = field.name
                raise DataError(
                    f"{name}: column '{c}' is {fields[c].type} in {first[c]} but {field.type} "
                    f"in {f}; give the folder's files one schema"
                )
    keys = list(
        dict.fromkeys(
            m.group(1)
            for f in files
            for part in Path(os.path.relpath(f, path)).parts[:-1]
            if (m := _PARTITION.fullmatch(part)) is not None
        )
    )
    for c in columns or []:
        if c not in fields and c in keys:
            raise DataError(
                f"{name}: column '{c}' is the key of its partition folders ({c}=...), which "
                "are not read as columns; write the column into the files, or give one "
                "partition's folder"
            )
    return ParquetFolder(files, pa.schema(list(fields.values())), keys)


def _load_folder(path: Path, name: str, columns: list[str] | None) -> Source:
    """A folder of Parquet files (:func:`parquet_folder`) as one table: the files in
    order, each used column in the type of the first file that has it (a dictionary
    decoded), NULL in a file without it."""
    import pyarrow.parquet as pq

    folder = parquet_folder(path, name, columns)
    names = folder.schema.names
    cols = names if columns is None else [c for c in names if c in set(columns)]
    target = pa.schema([pa.field(c, _same_storage(folder.schema.field(c).type)) for c in cols])
    parts = []
    rows = 0
    for f in folder.files:
        pf = pq.ParquetFile(_arrow(Path(f)))
        has = set(pf.schema_arrow.names)
        got = pf.read(columns=[c for c in cols if c in has])
        n = pf.metadata.num_rows
        rows += n
        arrays = [
            got.column(c).cast(t.type) if c in has else pa.nulls(n, t.type)
            for c, t in zip(cols, target, strict=True)
        ]
        parts.append(pa.table(arrays, schema=target))
    table = pa.concat_tables(parts) if parts else target.empty_table()
    return Source(_decimal128(table), name, False, list(names), rows)


def _dictionary_coded_text(path: Path, columns: list[str] | None) -> list[str]:
    """The text columns of a Parquet file stored dictionary-encoded throughout:
    read as Arrow dictionaries, they keep the file's codes, and encoding hashes
    the distinct values only (facet/encoding.py).  A column whose writer fell
    back to plain pages is read as plain text (a dictionary would be rebuilt by
    hashing every value while reading).  The test is the bytes per value of its
    data pages: dictionary indices take under 4, a plain string at least 4 (its
    length) -- only speed depends on it, never a result."""
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(_arrow(path))
        schema = meta.schema.to_arrow_schema()
    except (pa.ArrowInvalid, OSError):
        return []
    text = {
        f.name
        for f in schema
        if (pa.types.is_string(f.type) or pa.types.is_large_string(f.type))
        and (columns is None or f.name in columns)
    }
    if not text or meta.num_rows == 0:
        return []
    plain: set[str] = set()
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for i in range(group.num_columns):
            col = group.column(i)
            name = col.path_in_schema
            if name not in text or name in plain:
                continue
            if not col.has_dictionary_page or col.num_values == 0:
                plain.add(name)
                continue
            dict_bytes = max(0, col.data_page_offset - (col.dictionary_page_offset or 0))
            if (col.total_uncompressed_size - dict_bytes) >= 4 * col.num_values:
                plain.add(name)
    return sorted(text - plain)


def _arrow(path: Path) -> str:
    """``path`` as Arrow opens it: Arrow takes a name as UTF-8, where Python keeps
    a name it could not decode in the locale (a C locale without UTF-8 mode) as
    escaped bytes (:func:`check_path` refuses names that are not UTF-8)."""
    return os.fsencode(path).decode("utf-8", "surrogateescape")


def check_path(path: Path, name: str) -> None:
    """A path facet can open: it exists, is a regular file, and has a UTF-8 name."""
    try:
        _check_path(path, name)
    except PermissionError:  # a directory on the way that may not be searched
        raise DataError(
            f"cannot read {name!r}: permission denied; check the permissions of the file "
            "and of the directories above it"
        ) from None


def _check_path(path: Path, name: str) -> None:
    if path.is_symlink() and not path.exists():
        raise DataError(
            f"cannot read {name!r}: it is a broken symbolic link to "
            f"{os.readlink(path)!r}; fix the link"
        )
    if not path.exists():
        raise DataError(f"cannot read {name!r}: no such file; check the path")
    if path.is_dir():
        raise DataError(f"cannot read {name!r}: it is a directory, give a file")
    if path.is_fifo() or path.is_socket():
        raise DataError(
            f"cannot read {name!r}: it is not a regular file (a named pipe or a socket); "
            "save the data to a file first"
        )
    try:
        os.fsencode(name).decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(
            f"cannot read {name!r}: the file name is not UTF-8; rename the file"
        ) from None


def _validate(source: Source, columns: list[str] | None = None) -> None:
    """Refuse a Parquet or Arrow file whose read columns are malformed (string
    offsets or dictionary indices out of bounds, bad UTF-8): Arrow's readers
    leave such checks to the caller, and a kernel reading them would crash or
    answer from garbage.  With ``columns`` (``load(..., others=True)``) only
    those are refused; another text column whose only fault is text that is not
    UTF-8 becomes bytes, any other malformed column NULLs, noted in
    ``source.unreadable``."""
    table = source.table
    try:
        table.validate(full=True)
        return
    except (pa.ArrowInvalid, pa.ArrowException) as err:
        if columns is None:
            raise DataError(
                f"cannot read '{source.name}': the file is corrupt ({_first_line(err)}); "
                "write it again from its source"
            ) from None
    used = set(columns)
    for i, col in enumerate(table.column_names):
        try:
            table.column(i).validate(full=True)
        except (pa.ArrowInvalid, pa.ArrowException) as err:
            if col in used:
                raise DataError(
                    f"cannot read '{source.name}': the file is corrupt ({_first_line(err)}); "
                    "write it again from its source"
                ) from None
            shown = _text_as_bytes(table.column(i))
            if shown is None:
                source.unreadable[col] = _first_line(err)
                shown = pa.chunked_array([pa.nulls(len(table), pa.string())])
            table = table.set_column(i, pa.field(col, shown.type), shown)
    source.table = table


def _text_as_bytes(column: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """A text column whose only fault is text that is not UTF-8, as bytes (shown
    with U+FFFD there); None for any other fault."""
    typ = column.type
    if not (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
        return None
    raw_type = pa.binary() if pa.types.is_string(typ) else pa.large_binary()
    try:
        raw = pa.chunked_array([c.view(raw_type) for c in column.chunks], raw_type)
        raw.validate(full=True)
    except (pa.ArrowInvalid, pa.ArrowException):
        return None
    return raw


def load(
    data: Any,
    columns: list[str] | None = None,
    delimiter: str | None = None,
    *,
    others: bool = False,
) -> Source:
    """Load ``data`` (a path, a pyarrow/pandas/Polars table, an Arrow stream) as Arrow.

    ``columns`` limits what is read (the columns the DCs use); unknown names are
    ignored here (the caller reports them against the DC that uses them).
    ``delimiter``: a CSV file's (see :func:`parse_delimiter`; None: sniffed from its
    header).  Bad input raises :class:`DataError` (exit 2, §9).

    ``others``: read the columns outside ``columns`` too, to show them (the HTML
    report), in the source's order.  ``columns`` are read and checked as without
    it; the others as loosely as a run that does not read them allows: a repeated
    name, text that is not UTF-8 (CSV or Arrow, kept as bytes), a frame column Arrow
    cannot convert (as its values' text) and a corrupt Parquet or Arrow column (as
    NULLs, ``Source.unreadable``) are no error there.
    """
    name = source_name(data)
    others = others and columns is not None
    delimiter = parse_delimiter(delimiter)
    if isinstance(data, str | os.PathLike):
        path = Path(data)
        folder = path.is_dir()  # a folder of Parquet files (a link to one too)
        if not folder:
            check_path(path, name)
        try:
            source = (
                _load_folder(path, name, None if others else columns)
                if folder
                else _load_path(path, name, columns, others, delimiter)
            )
            if not source.text:  # a file's buffers are checked before any kernel reads them
                _validate(source, columns if others else None)
            return source
        except DataError:
            raise
        except PermissionError:
            raise DataError(
                f"cannot read '{name}': permission denied; check the file's permissions"
            ) from None
        except (pa.ArrowInvalid, pa.ArrowIOError, OSError, lzma.LZMAError, EOFError) as err:
            msg = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise DataError(
                f"cannot read '{name}': {msg}; check that the file is complete and is what its extension says (CSV, Parquet, Arrow IPC, .gz ...)"
            ) from None
    if isinstance(data, pa.Table):
        return _from_arrow_like(data, name, columns, others)
    if isinstance(data, pa.RecordBatch):
        return _from_arrow_like(pa.Table.from_batches([data]), name, columns, others)
    mod = type(data).__module__.split(".")[0]
    if mod == "polars" and hasattr(data, "collect_schema"):
        return _from_polars(data, name, columns, others)
    if mod == "pandas" and hasattr(data, "iloc") and hasattr(data, "columns"):
        return _from_pandas(data, name, columns, others)
    if mod == "pandas":
        raise DataError(f"{name}: give a pandas DataFrame, e.g. series.to_frame()")
    if mod == "pyspark":
        raise DataError(
            "Spark DataFrames need the Spark engine, which is not available in this version; "
            "pass a path, or convert with df.toPandas()"
        )
    if hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        try:
            table = pa.table(data)
        except (pa.ArrowException, ValueError, TypeError) as err:
            raise DataError(f"{name}: cannot read it as an Arrow table: {err}") from None
        return _from_arrow_like(table, name, columns, others)
    raise DataError(
        f"cannot read data of type {type(data).__name__}; "
        "give a CSV/Parquet/Arrow path or a pyarrow, pandas or Polars table"
    )
