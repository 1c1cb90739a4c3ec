"""Pairs and blocks on Spark as DataFrames, written by the executors
(docs/semantics.md §7; docs/architecture.md "Spark engine").

A DC's pairs are a DataFrame ``(dc, t1, t2)`` and its blocks ``(dc, block,
t1, t2)``, computed by the tasks and never collected on the driver:

* ``--limit N`` keeps the N smallest ``(t1, t2)`` -- Spark's top-N, a bounded
  amount per task -- so the pairs kept are the same on every run; ``--sort``
  orders them (a block's tid lists sorted first, so blocks compare as locally);
* blocks are numbered 0.. within each DC from per-partition counts (as tids
  are), over a persisted frame so the numbering and the rows agree;
* with ``--out`` the executors write Parquet part files into a temporary
  directory beside the target, and the driver streams their row groups into
  the one output file (bounded memory, any of facet's output formats), which
  is renamed into place only when complete.  The temporary directory must be
  reachable by the driver and the executors alike: on one machine or a
  ``local-cluster`` any local path is; on a cluster, a shared filesystem.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from facet.engine.spark.table import with_dense_ids
from facet.engine.spark.tasks import TID


def dc_frame(session: Any, i: int, output: str, limit: int | None, sort: bool = False) -> Any:
    """DC ``i``'s pairs ``(dc, t1, t2)`` or blocks ``(dc, block, t1, t2)``
    (``sort``: by ``(t1, t2)``, a block's tid lists ascending; the order
    :mod:`facet.sinks.ordering` gives locally)."""
    from pyspark.sql import functions as F  # noqa: N812

    engine = session.engine
    plan = session.plan(i, output)
    dc = F.lit(i).cast("long").alias("dc")
    if plan is None:
        rows = engine.single_rows_frame(session.normal[i])
        if output == "pairs":
            frame = rows.select(dc, F.col(TID).alias("t1"), F.lit(None).cast("long").alias("t2"))
        else:
            frame = (
                rows.agg(F.sort_array(F.collect_list(TID)).alias("t1"))
                .where(F.size("t1") > 0)
                .select(dc, F.lit(0).cast("long").alias("block"), "t1",
                        F.lit(None).cast("array<bigint>").alias("t2"))
            )  # fmt: skip
            return frame if limit is None or limit > 0 else frame.limit(0)
    elif output == "pairs":
        frame = engine.pair_frame(plan, session.initial(i)).select(dc, "t1", "t2")
    else:
        frame = engine.block_frame(plan, session.initial(i)).select(dc, "t1", "t2")
        if sort:
            frame = frame.select(
                "dc", F.array_sort("t1").alias("t1"), F.array_sort("t2").alias("t2")
            )
    if limit is not None:
        frame = frame.orderBy("t1", "t2").limit(limit)
    if sort:
        frame = frame.orderBy("t1", "t2")
    if output == "blocks":
        frame = with_dense_ids(frame.persist(), "block").select("dc", "block", "t1", "t2")
        if sort:  # (numbered in that order)
            frame = frame.orderBy("block")
    return frame


def write_frames(
    frames: list[Any],
    out_path: str,
    schema: pa.Schema,
    write: Callable[[pa.RecordBatch], None],
    written: Callable[[int, int], None],
    started: Callable[[int], None] | None = None,
) -> None:
    """Each DC's frame written by the executors as Parquet parts, then streamed
    in order through ``write``; ``started(dc)`` before each DC's job (the
    progress display and a ``--timeout`` name it), ``written(dc, rows)`` after
    each batch."""
    parts = _parts_dir(out_path)
    try:
        for i, frame in enumerate(frames):
            if started is not None:
                started(i)
            where = parts / f"dc-{i}"
            frame.write.mode("overwrite").parquet(where.as_uri())
            for batch in _read_parts(where, schema):
                write(batch)
                written(i, batch.num_rows)
    finally:
        shutil.rmtree(parts, ignore_errors=True)


def _parts_dir(out_path: str) -> Path:
    parent = Path(os.path.abspath(out_path)).parent
    return parent / f".facet-{secrets.token_hex(6)}.parts"


def _read_parts(where: Path, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    for f in sorted(where.glob("*.parquet")):
        for batch in pq.ParquetFile(f).iter_batches():
            if batch.num_rows:
                yield pa.RecordBatch.from_arrays(
                    [batch.column(name).cast(field.type) for name, field in
                     zip(schema.names, schema, strict=True)],
                    schema=schema,
                )  # fmt: skip
