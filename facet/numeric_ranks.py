"""Exact ranks of numbers of different types (docs/semantics.md §4.1).

A component whose columns and constants are numbers of more than one Arrow type
(int64 meeting float64, uint64 beyond int64's range, decimals, a fractional
constant against integers) is ranked by exact value: no cast to float64, so
``2**53 + 1`` and ``2.0**53`` stay apart and a decimal ``0.1`` is not the float
nearest to it.

Two routes, both exact:

* int64 and float64 only: each value becomes the pair ``(f, delta)`` where ``f``
  is the nearest float64 and ``delta`` the integer remainder ``v - f`` (zero for
  floats and for integers below 2**53).  Sorting by ``(f, delta)`` orders the
  values exactly: when ``f`` ties and the magnitude is at least 2**53, ``f`` is an
  integer and ``delta`` the exact difference.  O(n log n) in numpy.
* anything else (decimals, uint64 beyond 2**63 - 1): the distinct values of
  each part are ranked as Python numbers, whose mixed comparisons and hashes are
  exact (``int``, ``float`` and ``Decimal`` compare by value), then every row
  looks its value's rank up.  Python work is per distinct value, not per row.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

NULL = -1


def decimals_as_unscaled(parts: list[pa.Array]) -> list[pa.Array] | None:
    """Decimals (and small integers) as exact int64 multiples of one scale, when they
    fit: a decimal128 of precision <= 18 is its unscaled integer (the low word of its
    128 bits), rescaled to the largest scale of the parts.  ``None`` when some part
    does not fit (a float, a decimal256, too many digits): rank exactly instead."""
    # a negative scale (decimal128(5, -2) holds multiples of 100) rescales to 0
    scale = max((p.type.scale for p in parts if pa.types.is_decimal(p.type)), default=0)
    scale = max(scale, 0)
    if scale > 18:  # 10**scale is beyond int64 whatever the values
        return None
    out = []
    for p in parts:
        if pa.types.is_decimal128(p.type) and p.type.precision + scale - p.type.scale <= 18:
            words = np.frombuffer(p.buffers()[1], np.int64)[::2]
            v = words[p.offset : p.offset + len(p)] * np.int64(10 ** (scale - p.type.scale))
        elif pa.types.is_integer(p.type) and not pa.types.is_uint64(p.type):
            v = pc.fill_null(p, pa.scalar(0, p.type)).to_numpy(zero_copy_only=False)
            v = v.astype(np.int64)
            lim = 10 ** (18 - scale)
            if v.size and (int(v.max()) >= lim or int(v.min()) <= -lim):
                return None
            v = v * np.int64(10**scale)
        else:
            return None
        mask = np.asarray(p.is_null()) if p.null_count else None
        out.append(pa.array(v, pa.int64(), mask=mask))
    return out


def rank_numbers(parts: list[pa.Array]) -> tuple[np.ndarray, pa.Array]:
    """Dense int32 ranks (NULL -> -1) of the concatenation of ``parts``, compared
    by exact value; also a float64 dictionary (the nearest float of each rank,
    for statistics only)."""
    types = {p.type for p in parts}
    if types <= {pa.int64(), pa.float64()}:
        return _rank_int_float(parts)
    return _rank_exact(parts)


def _rank_int_float(parts: list[pa.Array]) -> tuple[np.ndarray, pa.Array]:
    n = sum(len(p) for p in parts)
    f = np.empty(n, np.float64)
    delta = np.zeros(n, np.int64)
    valid = np.ones(n, np.bool_)
    at = 0
    for p in parts:
        m = len(p)
        if p.null_count:
            valid[at : at + m] = ~np.asarray(p.is_null())
            p = pc.fill_null(p, pa.scalar(0, p.type))
        v = p.to_numpy(zero_copy_only=False)
        if pa.types.is_integer(p.type):
            fv = v.astype(np.float64)
            # v - fv without overflow: fv may be 2**63, beyond int64; halves are exact
            half = np.floor(fv * 0.5)
            delta[at : at + m] = (v - half.astype(np.int64)) - (fv - half).astype(np.int64)
            f[at : at + m] = fv
        else:
            f[at : at + m] = v + 0.0
        at += m
    out = np.full(n, NULL, np.int32)
    idx = np.flatnonzero(valid)
    if idx.size == 0:
        return out, pa.array([], pa.float64())
    order = np.lexsort((delta[idx], f[idx]))
    fs, ds = f[idx][order], delta[idx][order]
    new = np.empty(order.size, np.bool_)
    new[0] = True
    new[1:] = (fs[1:] != fs[:-1]) | (ds[1:] != ds[:-1])
    out[idx[order]] = np.cumsum(new) - 1
    return out, pa.array(fs[new], pa.float64())


def _rank_exact(parts: list[pa.Array]) -> tuple[np.ndarray, pa.Array]:
    uniques = [pc.unique(p.drop_null()) for p in parts]
    py = [u.to_pylist() for u in uniques]
    everything: set = set()
    for vals in py:
        everything.update(vals)
    ordered = sorted(everything)
    rank = {v: i for i, v in enumerate(ordered)}
    out = []
    for p, u, vals in zip(parts, uniques, py, strict=True):
        r = np.fromiter((rank[v] for v in vals), np.int32, len(vals))
        pos = pc.index_in(p, value_set=u)
        pos = pc.fill_null(pos, pa.scalar(-1, pos.type)).to_numpy(zero_copy_only=False)
        codes = np.full(len(p), NULL, np.int32)
        hit = pos >= 0
        codes[hit] = r[pos[hit]]
        out.append(codes)
    codes = np.concatenate(out) if out else np.empty(0, np.int32)
    return codes, pa.array([float(v) for v in ordered], pa.float64())
