"""A few partners per row, read off blocks (the HTML report's explanations, docs/report.md).

A block ``(L, R)`` stands for every pair ``(a, b)``, ``a`` in ``L``, ``b`` in ``R``,
``a != b``.  A row ``a`` of ``L`` is ``t`` in a violation with each ``b`` of ``R``
but itself, and a row of ``R`` is ``t'`` with each row of ``L`` but itself.  The report
shows up to ``k`` partners per row, so this takes, block by block, the first partners
each wanted row still lacks -- ``O(|L| + |R|)`` per block plus ``need`` per wanted row,
never a pass over the pairs (a DC with 10^10 pairs has blocks summing to about n).

Blocks come as the engine holds them (:func:`sample_group_partners`: sides as ranges of
one buffer less a hole, read in place), as per-side lists (:func:`sample_partners`), or
as pairs finished one by one (:func:`sample_pair_partners`).  Each returns how many
wanted rows still lack partners, and stops as soon as none does: the caller stops
listing blocks then.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.common import rows_within
from facet.kernels.expand import _first, _next
from facet.kernels.jit import njit


@njit(cache=True, nogil=True, inline="always")
def _take(out, role, got, s, b, r):
    """Add partner ``b`` in role ``r`` to slot ``s`` unless it is there already."""
    for j in range(got[s]):
        if out[s, j] == b:
            return
    out[s, got[s]] = b
    role[s, got[s]] = r
    got[s] += 1


@njit(cache=True, nogil=True, inline="always")
def _one_side(sv, ss, se, shs, she, ov, os_, oe, ohs, ohe, slot, need, out, role, got, r, left):
    """Each wanted row of one side (``sv[ss:se]`` less the hole ``shs:she``) takes
    partners from the other side (``ov``, likewise), in role ``r``."""
    i = _first(ss, shs, she)
    while i < se and left > 0:
        a = sv[i]
        s = slot[a]
        if s >= 0 and got[s] < need[s]:
            j = _first(os_, ohs, ohe)
            while j < oe and got[s] < need[s]:
                if ov[j] != a:
                    _take(out, role, got, s, ov[j], r)
                j = _next(j, ohs, ohe)
            if got[s] >= need[s]:
                left -= 1
        i = _next(i, shs, she)
    return left


@njit(cache=True, nogil=True)
def sample_group_partners(buf, desc, slot, need, out, role, got, left):
    """Blocks as the engine's groups: side ``s`` (0 left, 4 right) of group ``g`` is
    ``buf[desc[g, s]:desc[g, s+1]]`` less the hole ``desc[g, s+2]:desc[g, s+3]``.
    ``slot``: per row, its row of ``out`` (-1: not wanted); ``need[s]``: partners
    wanted for slot ``s`` (at most ``out.shape[1]``).  Fills ``out[s]`` with distinct
    partners and ``role[s]`` with 0 where the wanted row is ``t`` (the partner ``t'``),
    1 where it is ``t'``; ``got[s]`` counts them (kept across calls, so blocks may come
    in batches).  ``left``: slots still short of ``need``; returns it updated."""
    for g in range(desc.shape[0]):
        if left == 0:
            break
        ls, le, lhs, lhe = desc[g, 0], desc[g, 1], desc[g, 2], desc[g, 3]
        rs, re, rhs, rhe = desc[g, 4], desc[g, 5], desc[g, 6], desc[g, 7]
        left = _one_side(buf, ls, le, lhs, lhe, buf, rs, re, rhs, rhe,
                         slot, need, out, role, got, 0, left)  # fmt: skip
        left = _one_side(buf, rs, re, rhs, rhe, buf, ls, le, lhs, lhe,
                         slot, need, out, role, got, 1, left)  # fmt: skip
    return left


@njit(cache=True, nogil=True)
def sample_partners(lo, lv, ro, rv, slot, need, out, role, got, left):
    """:func:`sample_group_partners` over blocks as per-side lists (offsets
    ``lo``/``ro``, tids ``lv``/``rv``: dense positions below ``slot``'s length,
    else IndexError)."""
    if not (rows_within(lv, slot.shape[0]) and rows_within(rv, slot.shape[0])):
        raise IndexError("sample_partners: a row outside 0..rows-1")
    for g in range(lo.shape[0] - 1):
        if left == 0:
            break
        ls, le, rs, re = lo[g], lo[g + 1], ro[g], ro[g + 1]
        left = _one_side(lv, ls, le, ls, ls, rv, rs, re, rs, rs,
                         slot, need, out, role, got, 0, left)  # fmt: skip
        left = _one_side(rv, rs, re, rs, rs, lv, ls, le, ls, ls,
                         slot, need, out, role, got, 1, left)  # fmt: skip
    return left


@njit(cache=True, nogil=True)
def sample_pair_partners(t1, t2, slot, need, out, role, got, left):
    """:func:`sample_group_partners` over explicit pairs ``(t1[p], t2[p])`` (each a
    block ``({t1}, {t2})``, in order; dense positions below ``slot``'s length, else
    IndexError)."""
    if not (rows_within(t1, slot.shape[0]) and rows_within(t2, slot.shape[0])):
        raise IndexError("sample_pair_partners: a row outside 0..rows-1")
    for p in range(t1.shape[0]):
        if left == 0:
            break
        a, b = t1[p], t2[p]
        if a == b:
            continue
        s = slot[a]
        if s >= 0 and got[s] < need[s]:
            _take(out, role, got, s, b, 0)
            if got[s] >= need[s]:
                left -= 1
        s = slot[b]
        if s >= 0 and got[s] < need[s]:
            _take(out, role, got, s, a, 1)
            if got[s] >= need[s]:
                left -= 1
    return left


def empty_partners(wanted: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(out, role, got)`` for ``wanted`` rows of ``k`` partners each."""
    return (
        np.full((wanted, k), -1, np.int64),
        np.zeros((wanted, k), np.int8),
        np.zeros(wanted, np.int64),
    )
