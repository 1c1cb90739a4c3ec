"""Streaming Arrow batches to Parquet, CSV or Arrow IPC files (docs/semantics.md §7).

Output goes to a temporary file next to the target and is renamed into place
only when complete, so a failed run leaves nothing half-written.  The
temporary file is created with mode 0666 less the umask (like any file a
program creates), so the published file's mode follows the umask too.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from facet.errors import FacetInputError
from facet.sinks.publish import publish

FORMATS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".arrow": "ipc",
    ".feather": "ipc",
    ".ipc": "ipc",
    ".json": "json",
}


def out_format(path: str, allow_json: bool = False) -> str:
    ext = Path(path).suffix.lower()
    fmt = FORMATS.get(ext)
    if fmt is None or (fmt == "json" and not allow_json):
        allowed = ", ".join(e for e, f in FORMATS.items() if f != "json" or allow_json)
        if not path:
            raise FacetInputError(f"--out: empty file name; name a file ending in one of {allowed}")
        if os.path.isdir(path):
            raise FacetInputError(
                f"--out '{path}': it is a directory; name a file in it, e.g. "
                f"{os.path.join(path, 'pairs.parquet')} (one of {allowed})"
            )
        raise FacetInputError(
            f"--out '{path}': unknown file type '{ext or '(none)'}'; use one of {allowed}"
        )
    check_out_path(path, "pairs" + (ext or ".parquet"))
    return fmt


def check_out_path(path: str, example: str) -> None:
    """Refuse an ``--out`` path that names a directory or lies in no directory
    (``example``: a file name to suggest inside a directory)."""
    try:
        _check_out_path(path, example)
    except PermissionError:  # a directory on the way that may not be searched
        raise FacetInputError(
            f"--out '{path}': permission denied; check the permissions of the directories "
            "above it, or choose another path"
        ) from None


def check_not_input(path: str, inputs: Iterable[Any]) -> None:
    """Refuse an ``--out`` path that is one of the run's input files under any
    name (a relative path, a link): writing the output would replace it."""
    if not os.path.exists(path):
        return
    for item in inputs:
        if not isinstance(item, str | os.PathLike):
            continue
        try:
            same = os.path.samefile(path, item)
        except (OSError, ValueError):  # (rules text, say, or a file gone)
            continue
        if same:
            raise FacetInputError(
                f"--out '{path}': it is the input file '{os.fspath(item)}', which the output "
                "would replace; choose another path"
            )


def _check_out_path(path: str, example: str) -> None:
    if path.endswith(("/", os.sep)) or Path(path).is_dir():
        raise FacetInputError(
            f"--out '{path}': it is a directory; give a file path such as "
            f"{os.path.join(path.rstrip('/'), example)}"
        )
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        for up in [parent, *parent.parents]:
            if up.exists() and not up.is_dir():
                raise FacetInputError(
                    f"--out '{path}': '{up}' is a file, not a directory; choose another path"
                )
        raise FacetInputError(
            f"--out '{path}': directory '{parent}' does not exist; create it first"
        )


#: the first characters that make a spreadsheet read a CSV field as a formula (OWASP's
#: CSV injection list: = + - @, a tab, a carriage return)
FORMULA_START = "=+-@\t\r"


def formula_safe(text: str) -> str:
    """``text`` for a CSV field a spreadsheet shows as text: a ``'`` before it when it
    starts with a formula character (:data:`FORMULA_START`), else as it is."""
    return "'" + text if text[:1] in FORMULA_START and text else text


def csv_line(values: Iterable[Any]) -> str:
    """One CSV record (RFC 4180, ending in a line feed): numbers as they are, text
    through :func:`formula_safe` and quoted where it was changed or holds a comma,
    a quote or a line break; None as an empty field."""
    fields = []
    for v in values:
        if not isinstance(v, str):
            fields.append("" if v is None else str(v))
            continue
        safe = formula_safe(v)
        if safe != v or any(c in v for c in ',"\r\n'):
            safe = '"' + safe.replace('"', '""') + '"'
        fields.append(safe)
    return ",".join(fields) + "\n"


def csv_records(batch: pa.RecordBatch) -> str:
    """The batch's rows as CSV records, as :func:`csv_line` writes them (built a
    column at a time)."""
    if batch.num_rows == 0:
        return ""
    cols = []
    for col in batch.columns:
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            safe = _formula_safe_column(col)
            quoted = pc.binary_join_element_wise(
                '"', pc.replace_substring(safe, '"', '""'), '"', ""
            )
            needs = pc.match_substring_regex(col, r'^[=+\-@\t\r]|[,"\r\n]')
            col = pc.if_else(needs, quoted, safe)
        else:
            col = pc.cast(col, pa.string())
        cols.append(pc.fill_null(col, ""))
    lines = pc.binary_join_element_wise(*cols, ",")
    return "\n".join(lines.to_pylist()) + "\n"


def _formula_safe_column(col: pa.Array) -> pa.Array:
    """A text column's values through :func:`formula_safe` (NULL stays NULL)."""
    return pc.replace_substring_regex(col, pattern=r"^([=+\-@\t\r])", replacement=r"'\1")


def _csv_ready(batch: pa.RecordBatch) -> pa.RecordBatch:
    """CSV has no lists: list columns become space-separated tids; text that a
    spreadsheet would take for a formula gets a ``'`` first (:func:`formula_safe`;
    the CSV writer quotes every text field)."""
    cols = []
    for col in batch.columns:
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            cols.append(_formula_safe_column(col))
        elif pa.types.is_list(col.type):
            flat = pc.cast(col.flatten(), pa.string())
            offsets = col.offsets.to_numpy()
            strs = flat.to_pylist()
            cells = [
                None if not col[i].is_valid else " ".join(strs[offsets[i] : offsets[i + 1]])
                for i in range(len(col))
            ]
            cols.append(pa.array(cells, pa.string()))
        else:
            cols.append(col)
    names = batch.schema.names
    return pa.RecordBatch.from_arrays(cols, names=names)


def temp_beside(path: str) -> str:
    """A new empty file ``.facet-XXXX.part`` in ``path``'s directory, created
    with mode 0666 less the umask (``mkstemp`` would make it 0600)."""
    d = os.path.dirname(os.path.abspath(path))
    for _ in range(100):
        tmp = os.path.join(d, f".facet-{secrets.token_hex(6)}.part")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        except OSError as err:
            raise FacetInputError(
                f"--out '{path}': cannot write in '{d}': {err.strerror}; "
                "choose a writable directory"
            ) from None
        os.close(fd)
        return tmp
    raise FileExistsError(f"no free temporary file name in {d}")  # pragma: no cover


class TextFile:
    """Text written to a temporary file beside ``path``; ``close()`` renames it
    into place, ``abort()`` removes it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.tmp = temp_beside(path)

    def write(self, text: str) -> None:
        try:
            with open(self.tmp, "a", encoding="utf-8") as f:
                f.write(text)
        except OSError as err:
            self.abort()
            raise write_failed(self.path, err) from None

    def close(self) -> None:
        try:
            publish(self.tmp, self.path)
        except OSError as err:
            self.abort()
            raise write_failed(self.path, err) from None

    def abort(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.tmp)


def write_failed(path: str, err: OSError) -> FacetInputError:
    """A write to ``--out`` that failed (a full disk, a file too large), as bad input
    naming the file (the caller removes what was written)."""
    why = err.strerror or str(err).splitlines()[0]
    return FacetInputError(
        f"--out '{path}': cannot write: {why}; free some space or choose another directory"
    )


class TableWriter:
    """Write batches of one schema to ``path``; ``close()`` publishes the file,
    ``abort()`` removes what was written."""

    def __init__(self, path: str, schema: pa.Schema) -> None:
        self.path = path
        self.fmt = out_format(path)
        self.schema = schema
        self.tmp = temp_beside(path)
        self.rows = 0
        self._w = None
        try:
            self._open(schema)
        except BaseException:  # an interrupt here too: leave nothing behind
            self.abort()
            raise

    def _open(self, schema: pa.Schema) -> None:
        if self.fmt == "parquet":
            import pyarrow.parquet as pq

            self._w = pq.ParquetWriter(self.tmp, schema)
        elif self.fmt == "ipc":
            self._w = pa.ipc.new_file(self.tmp, schema)
        else:
            import pyarrow.csv as pacsv

            csv_schema = pa.schema(
                [
                    pa.field(f.name, pa.string() if pa.types.is_list(f.type) else f.type)
                    for f in schema
                ]
            )
            self._w = pacsv.CSVWriter(self.tmp, csv_schema)

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        if self.fmt == "csv":
            batch = _csv_ready(batch)
        try:
            self._w.write_batch(batch)
        except OSError as err:
            raise self._failed(err) from None
        self.rows += batch.num_rows

    def close(self) -> None:
        try:
            self._w.close()
            publish(self.tmp, self.path)
        except OSError as err:
            raise self._failed(err) from None

    def _failed(self, err: OSError) -> FacetInputError:
        """A write that failed (a full disk, a file too large): nothing is left behind."""
        self.abort()
        return write_failed(self.path, err)

    def abort(self) -> None:
        if self._w is not None:
            with contextlib.suppress(Exception):
                self._w.close()
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.tmp)
