"""Streaming Arrow batches to Parquet, CSV or Arrow IPC files (docs/semantics.md §7).

Output goes to a temporary file next to the target and is renamed into place
only when complete, so a failed run leaves nothing half-written.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from facet.errors import FacetInputError

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
        raise FacetInputError(
            f"--out '{path}': unknown file type '{ext or '(none)'}'; use one of {allowed}"
        )
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise FacetInputError(f"--out '{path}': directory '{parent}' does not exist")
    return fmt


def _csv_ready(batch: pa.RecordBatch) -> pa.RecordBatch:
    """CSV has no lists: list columns become space-separated tids."""
    cols = []
    for col in batch.columns:
        if pa.types.is_list(col.type):
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


class TableWriter:
    """Write batches of one schema to ``path``; ``close()`` publishes the file."""

    def __init__(self, path: str, schema: pa.Schema) -> None:
        self.path = path
        self.fmt = out_format(path)
        self.schema = schema
        d = os.path.dirname(os.path.abspath(path))
        fd, self.tmp = tempfile.mkstemp(prefix=".facet-", suffix=".part", dir=d)
        os.close(fd)
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
        self._w.write_batch(batch)
        self.rows += batch.num_rows

    def close(self) -> None:
        self._w.close()
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        if self._w is not None:
            with contextlib.suppress(Exception):
                self._w.close()
        if os.path.exists(self.tmp):
            os.remove(self.tmp)
