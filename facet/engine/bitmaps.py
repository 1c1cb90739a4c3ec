"""Compressed-bitmap tid storage for refinements (paper §4 "hybrid", Fig. 7).

The paper stores tid sets either as integer arrays or as Roaring bitmaps and
switches per refinement: bitmaps where the work is unions and differences
(non-equalities, HSM/BHSM merges), arrays elsewhere.  This module is the
bitmap side, with pyroaring: a large group's sides become one bitmap per
distinct value, non-equalities are ``R - R_v`` (AND NOT) and HSM's right sides
are running unions (OR).  Output sides are handed back to the pipeline as tid
arrays, so the stages after it are unchanged.

facet's array storage already answers those patterns without set algebra:
a side is a slice (HSM suffix) or a slice minus a sub-slice (non-equality),
while every bitmap side handed back is materialized -- an HSM refinement of a
group with ``d`` values writes about ``d |R| / 2`` tids.  ``bench/fig7_storage.py``
measured bitmaps 3-29x slower than arrays in every case, including few huge
groups under a non-equality, so ``Config.bitmap_min_tids`` defaults to never:
the storage stays selectable for the experiment, not for production.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from facet.engine.groups import Groups
from facet.kernels.common import OP_EQ, OP_GE, OP_LE, OP_LT, OP_NE

if TYPE_CHECKING:  # pyroaring is imported where bitmaps are made (facet's start stays light)
    from pyroaring import BitMap


def _side(groups: Groups, g: int, s: int) -> np.ndarray:
    d = groups.desc[g]
    a, e, hs, he = d[s], d[s + 1], d[s + 2], d[s + 3]
    if he > hs:
        return np.concatenate([groups.buf[a:hs], groups.buf[he:e]])
    return groups.buf[a:e]


def _np(bm: BitMap) -> np.ndarray:
    return np.frombuffer(bm.to_array(), dtype=np.uint32)


def _by_value(tids: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, list[BitMap]]:
    """Distinct non-NULL keys (ascending) and one bitmap of tids per key."""
    from pyroaring import BitMap

    k = keys[tids]
    tids = tids[k >= 0]
    k = k[k >= 0]
    if tids.size == 0:
        return np.empty(0, np.int64), []
    order = np.argsort(k, kind="stable")
    k = k[order]
    t = tids[order].astype(np.uint32)
    cuts = np.flatnonzero(np.diff(k)) + 1
    values = k[np.r_[0, cuts]]
    return values, [BitMap(part) for part in np.split(t, cuts)]


def refine_bitmaps(groups: Groups, codes: np.ndarray, ra: int, rb: int, op: int) -> Groups:
    """Refine every group of ``groups`` by ``t.<ra> op t'.<rb>`` on bitmaps
    (equality, non-equality, or one inequality the HSM way)."""
    from pyroaring import BitMap

    ka, kb = codes[ra], codes[rb]
    out_l: list[np.ndarray] = []
    out_r: list[np.ndarray] = []
    for g in range(len(groups)):
        lv, lb = _by_value(_side(groups, g, 0), ka)
        rv, rb_ = _by_value(_side(groups, g, 4), kb)
        if not lb or not rb_:
            continue
        pos = {int(v): i for i, v in enumerate(rv)}
        if op == OP_EQ:
            for v, bl in zip(lv, lb, strict=True):
                j = pos.get(int(v))
                if j is not None and not (len(bl) == 1 and bl == rb_[j]):
                    out_l.append(_np(bl))
                    out_r.append(_np(rb_[j]))
        elif op == OP_NE:
            everything = BitMap.union(*rb_)
            for v, bl in zip(lv, lb, strict=True):
                j = pos.get(int(v))
                rest = everything - rb_[j] if j is not None else everything
                if rest:
                    out_l.append(_np(bl))
                    out_r.append(_np(rest))
        else:
            # HSM merge: walk the left values, keep the running union of the
            # right values that qualify (suffix for < <=, prefix for > >=)
            upward = op in (OP_LT, OP_LE)
            order = range(len(lv) - 1, -1, -1) if upward else range(len(lv))
            acc = BitMap()
            j = len(rv) - 1 if upward else 0
            for i in order:
                v = lv[i]
                if upward:
                    while j >= 0 and (rv[j] > v or (op == OP_LE and rv[j] == v)):
                        acc |= rb_[j]
                        j -= 1
                else:
                    while j < len(rv) and (rv[j] < v or (op == OP_GE and rv[j] == v)):
                        acc |= rb_[j]
                        j += 1
                if acc:
                    out_l.append(_np(lb[i]))
                    out_r.append(_np(acc))
    return _pack(out_l, out_r)


def _pack(out_l: list[np.ndarray], out_r: list[np.ndarray]) -> Groups:
    if not out_l:
        return Groups.empty()
    sizes = np.array([[a.size, b.size] for a, b in zip(out_l, out_r, strict=True)], np.int64)
    flat = sizes.reshape(-1)
    ends = np.cumsum(flat)
    starts = ends - flat
    buf = np.concatenate([x for pair in zip(out_l, out_r, strict=True) for x in pair]).astype(
        np.int32
    )
    desc = np.empty((len(out_l), 8), np.int64)
    desc[:, 0] = starts[0::2]
    desc[:, 1] = ends[0::2]
    desc[:, 2] = desc[:, 0]
    desc[:, 3] = desc[:, 0]
    desc[:, 4] = starts[1::2]
    desc[:, 5] = ends[1::2]
    desc[:, 6] = desc[:, 4]
    desc[:, 7] = desc[:, 4]
    return Groups(buf, desc)
