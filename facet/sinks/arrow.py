"""Pairs and blocks as Arrow record batches (docs/semantics.md §7 "pair files")."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

PAIR_SCHEMA = pa.schema([("dc", pa.int64()), ("t1", pa.int64()), ("t2", pa.int64())])
BLOCK_SCHEMA = pa.schema(
    [
        ("dc", pa.int64()),
        ("block", pa.int64()),
        ("t1", pa.list_(pa.int64())),
        ("t2", pa.list_(pa.int64())),
    ]
)


def pair_batch(dc: int, t1: np.ndarray, t2: np.ndarray | None) -> pa.RecordBatch:
    """Pairs ``(t1[i], t2[i])`` of DC ``dc`` (``t2=None``: a single-tuple DC's rows)."""
    n = len(t1)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(np.full(n, dc, np.int64)),
            pa.array(t1.astype(np.int64, copy=False)),
            pa.nulls(n, pa.int64()) if t2 is None else pa.array(t2.astype(np.int64, copy=False)),
        ],
        schema=PAIR_SCHEMA,
    )


def block_batch(
    dc: int,
    first: int,
    left: tuple[np.ndarray, np.ndarray],
    right: tuple[np.ndarray, np.ndarray] | None,
) -> pa.RecordBatch:
    """Blocks ``first, first + 1, ...`` of DC ``dc``: each side as list offsets +
    values (``right=None``: a single-tuple DC's rows, one block)."""
    k = len(left[0]) - 1
    t1 = pa.LargeListArray.from_arrays(pa.array(left[0]), pa.array(left[1]))
    t2 = (
        pa.nulls(k, pa.large_list(pa.int64()))
        if right is None
        else pa.LargeListArray.from_arrays(pa.array(right[0]), pa.array(right[1]))
    )
    return pa.RecordBatch.from_arrays(
        [
            pa.array(np.full(k, dc, np.int64)),
            pa.array(np.arange(first, first + k, dtype=np.int64)),
            t1.cast(pa.list_(pa.int64())),
            t2.cast(pa.list_(pa.int64())),
        ],
        schema=BLOCK_SCHEMA,
    )
