"""Reading tables into Arrow (docs/semantics.md §4; docs/architecture.md "Data flow").

CSV is read as text in the RFC 4180 dialect (quoted fields may hold newlines
and doubled quotes); only an empty field, quoted or not, is NULL.  Parquet and
Arrow IPC files, pyarrow / pandas / Polars tables keep their own types.
Typing of CSV text for order predicates happens later (:mod:`facet.typing`).
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from facet.errors import DataError

_PARQUET = {".parquet", ".pq", ".parq"}
_IPC = {".arrow", ".feather", ".ipc", ".arrows"}
_COMPRESSED = {".gz", ".bz2", ".zst", ".lz4", ".xz"}


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


def source_name(data: Any) -> str:
    if isinstance(data, str | os.PathLike):
        return os.fspath(data)
    return f"<{type(data).__module__.split('.')[0]}.{type(data).__name__}>"


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


def read_header(path: Path, delimiter: str = ",") -> list[str]:
    """Column names of a CSV file (its first record, RFC 4180)."""
    with pa.input_stream(str(path), compression="detect") as stream:
        data = stream.read(1 << 20)
    text = data.decode("utf-8-sig", errors="replace")
    return next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), [])


def _check_columns(header: list[str], name: str, used: list[str] | None) -> None:
    """A column the DCs use must be named once (others may repeat)."""
    counts: dict[str, int] = {}
    for col in header:
        counts[col] = counts.get(col, 0) + 1
    for col in used if used is not None else header:
        if counts.get(col, 0) > 1:
            raise DataError(
                f"{name}: the header names column '{col}' {counts[col]} times; "
                "give every column a distinct name"
            )


def _unique_names(header: list[str]) -> list[str]:
    """Header names made unique (repeats of unused columns get a suffix)."""
    seen: dict[str, int] = {}
    out = []
    for col in header:
        k = seen.get(col, 0)
        seen[col] = k + 1
        out.append(col if k == 0 else f"{col}\x00{k}")
    return out


def _csv_error(name: str, err: Exception) -> DataError:
    msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    msg = msg.replace("CSV parse error: ", "")
    return DataError(f"{name}: cannot parse CSV: {msg}; check quoting and the number of fields")


def read_csv(path: Path, columns: list[str] | None, delimiter: str = ",") -> Source:
    import pyarrow.csv as pacsv

    name = os.fspath(path)
    header = read_header(path, delimiter)
    if not header:
        raise DataError(f"{name}: the file is empty; a CSV file needs a header line")
    _check_columns(header, name, columns)
    names = _unique_names(header)
    wanted = names if columns is None else [c for c in names if c in set(columns)]
    read_opts = pacsv.ReadOptions(column_names=names, skip_rows=1, block_size=1 << 24)
    parse_opts = pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True, double_quote=True)
    conv_opts = pacsv.ConvertOptions(
        column_types={c: pa.string() for c in names},
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
        include_columns=wanted or names[:1],
    )
    try:
        table = pacsv.read_csv(
            str(path), read_options=read_opts, parse_options=parse_opts, convert_options=conv_opts
        )
    except pa.ArrowInvalid as err:
        raise _csv_error(name, err) from None
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"cannot read '{name}': {err}") from None
    num_rows = table.num_rows
    if not wanted:
        table = table.select([])
    return Source(table, name, True, header, num_rows)


def _from_arrow_like(table: pa.Table, name: str, columns: list[str] | None) -> Source:
    header = list(table.column_names)
    _check_columns(header, name, columns)
    if columns is not None:
        keep = [c for c in header if c in set(columns)]
        num_rows = table.num_rows
        table = table.select(keep)
    else:
        num_rows = table.num_rows
    return Source(table, name, False, header, num_rows)


def load(data: Any, columns: list[str] | None = None) -> Source:
    """Load ``data`` (path, pyarrow/pandas/Polars table) as an Arrow table.

    ``columns`` limits what is read (the columns the DCs use); unknown names are
    ignored here (the caller reports them against the DC that uses them).
    """
    name = source_name(data)
    if isinstance(data, str | os.PathLike):
        path = Path(data)
        if not path.exists():
            raise DataError(f"cannot read '{name}': no such file")
        if path.is_dir():
            raise DataError(f"cannot read '{name}': it is a directory, give a file")
        kind = _kind_of(path)
        try:
            if kind == "parquet":
                import pyarrow.parquet as pq

                try:
                    schema_names = pq.read_schema(str(path)).names
                except (pa.ArrowInvalid, OSError) as err:
                    raise DataError(f"cannot read '{name}' as Parquet: {err}") from None
                cols = None if columns is None else [c for c in schema_names if c in set(columns)]
                table = pq.read_table(str(path), columns=cols)
                if cols is not None and not cols:
                    meta = pq.read_metadata(str(path))
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
                    table = feather.read_table(str(path))
                except pa.ArrowInvalid:
                    with pa.OSFile(str(path), "rb") as f:
                        table = pa.ipc.open_stream(f).read_all()
                return _from_arrow_like(table, name, columns)
            return read_csv(path, columns, "\t" if kind == "tsv" else ",")
        except DataError:
            raise
        except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as err:
            raise DataError(f"cannot read '{name}': {str(err).splitlines()[0]}") from None
    if isinstance(data, pa.Table):
        return _from_arrow_like(data, name, columns)
    if isinstance(data, pa.RecordBatch):
        return _from_arrow_like(pa.Table.from_batches([data]), name, columns)
    mod = type(data).__module__.split(".")[0]
    if mod == "polars":
        return _from_arrow_like(data.to_arrow(), name, columns)
    if mod == "pandas":
        table = pa.Table.from_pandas(data, preserve_index=False)
        return _from_arrow_like(table, name, columns)
    if mod == "pyspark":
        raise DataError(
            "Spark DataFrames need the Spark engine, which is not available in this version; "
            "pass a path, or convert with df.toPandas()"
        )
    if hasattr(data, "__arrow_c_stream__"):
        return _from_arrow_like(pa.table(data), name, columns)
    raise DataError(
        f"cannot read data of type {type(data).__name__}; "
        "give a CSV/Parquet/Arrow path or a pyarrow, pandas or Polars table"
    )
