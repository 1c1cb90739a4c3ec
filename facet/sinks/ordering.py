"""``--sort``: pairs and blocks in one defined order (docs/semantics.md §7).

Without it their order is the plan's.  With it, a DC's pairs come by ``(t1, t2)``
and its blocks by their tid lists (each list ascending, blocks compared list by
list, element by element), and ``--limit N`` keeps the first N of that order --
the N smallest pairs (blocks), as the Spark engine's limit keeps them.  DCs stay
in id order.  A pair is one int64 key ``t1 * rows + t2`` (below ``rows^2 <
2^62``), so the order is a sort of integers; a limit keeps a bounded selection
while the pairs stream by.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa

from facet.sinks.arrow import block_batch, pair_batch

#: pairs buffered before a limit's selection cuts them back to the limit
_SELECT_EVERY = 1 << 20


def sorted_pairs(
    batches: Iterable[pa.RecordBatch], dc: int, rows: int, limit: int | None, chunk: int
) -> Iterator[pa.RecordBatch]:
    """DC ``dc``'s pairs (``(dc, t1, t2)`` batches, every pair of the DC) by
    ``(t1, t2)``, the first ``limit`` of them, in batches of ``chunk`` rows.  A
    single-tuple DC's rows (``t2`` NULL) come by ``t1``."""
    if limit is not None and limit <= 0:
        return
    width = max(rows, 1)
    kept: list[np.ndarray] = []
    held = 0
    single = False
    for batch in batches:
        if batch.num_rows == 0:
            continue
        t1 = batch.column(1).to_numpy().astype(np.int64, copy=False)
        t2 = batch.column(2)
        if t2.null_count == len(t2):
            single = True
            key = t1.copy()
        else:
            key = t1 * width + t2.to_numpy().astype(np.int64, copy=False)
        kept.append(key)
        held += len(key)
        if limit is not None and held >= max(2 * limit, _SELECT_EVERY):
            kept = [_smallest(np.concatenate(kept), limit)]
            held = len(kept[0])
    if not kept:
        return
    keys = np.concatenate(kept)
    if limit is not None and len(keys) > limit:
        keys = _smallest(keys, limit)
    keys.sort()
    for s in range(0, len(keys), max(chunk, 1)):
        part = keys[s : s + chunk]
        if single:
            yield pair_batch(dc, part, None)
        else:
            yield pair_batch(dc, part // width, part % width)


def _smallest(keys: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` smallest of ``keys`` (in no order)."""
    if len(keys) <= k:
        return keys
    return np.partition(keys, k - 1)[:k]


def sorted_blocks(
    batches: Iterable[pa.RecordBatch], dc: int, limit: int | None
) -> Iterator[pa.RecordBatch]:
    """DC ``dc``'s blocks (``(dc, block, t1, t2)`` batches, every block of the
    DC) with each tid list ascending, ordered by ``(t1, t2)`` list by list, the
    first ``limit`` of them, numbered again from 0 in that order."""
    if limit is not None and limit <= 0:
        return
    lefts: list[tuple[int, ...]] = []
    rights: list[tuple[int, ...] | None] = []
    for batch in batches:
        lefts.extend(_lists(batch.column(2)))
        rights.extend(_lists(batch.column(3)))
    if not lefts:
        return
    order = sorted(range(len(lefts)), key=lambda b: (lefts[b], rights[b] or ()))
    if limit is not None:
        order = order[:limit]
    single = all(r is None for r in rights)
    yield block_batch(
        dc,
        0,
        _flat([lefts[b] for b in order]),
        None if single else _flat([rights[b] or () for b in order]),
    )


def _lists(column: pa.Array) -> list[tuple[int, ...] | None]:
    """Each list of ``column`` as a sorted tuple (None for a NULL list)."""
    out: list[tuple[int, ...] | None] = []
    if column.null_count == len(column):
        return [None] * len(column)
    offsets = column.offsets.to_numpy()
    values = column.values.to_numpy()
    for b in range(len(column)):
        if not column[b].is_valid:
            out.append(None)
            continue
        out.append(tuple(np.sort(values[offsets[b] : offsets[b + 1]]).tolist()))
    return out


def _flat(lists: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """List offsets and values of ``lists``."""
    offsets = np.zeros(len(lists) + 1, np.int64)
    np.cumsum([len(x) for x in lists], out=offsets[1:])
    values = np.fromiter((t for x in lists for t in x), np.int64, count=int(offsets[-1]))
    return offsets, values


def sort_kept(table: pa.Table, output: str, rows: int) -> pa.Table:
    """A kept pairs (``output="pairs"``) or blocks table in ``--sort``'s order,
    DC by DC in id order."""
    if table.num_rows == 0:
        return table
    ids = table.column(0).to_numpy()
    batches: list[pa.RecordBatch] = []
    for dc in np.unique(ids).tolist():
        part = table.filter(pa.array(ids == dc)).to_batches()
        if output == "pairs":
            batches.extend(sorted_pairs(part, dc, rows, None, max(table.num_rows, 1)))
        else:
            batches.extend(sorted_blocks(part, dc, None))
    return pa.Table.from_batches(batches, schema=table.schema)
