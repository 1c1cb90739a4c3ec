"""A few partners per row, read off blocks (the HTML report's explanations, docs/report.md).

A block ``(L, R)`` stands for every pair ``(a, b)``, ``a`` in ``L``, ``b`` in ``R``,
``a != b``.  A row ``a`` of ``L`` is ``t`` in a violation with each ``b`` of ``R``
but itself, and a row of ``R`` is ``t'`` with each row of ``L`` but itself.  The report
shows up to ``k`` partners per row, so this takes, block by block, the first partners
each wanted row still lacks -- ``O(|L| + |R|)`` per block plus ``k`` per wanted row,
never a pass over the pairs (a DC with 10^10 pairs has blocks summing to about n).
"""

from __future__ import annotations

import numpy as np

from facet.kernels.jit import njit


@njit(cache=True, nogil=True, inline="always")
def _take(out, role, got, s, b, r, k):
    """Add partner ``b`` in role ``r`` to slot ``s`` unless it is there already."""
    for j in range(got[s]):
        if out[s, j] == b:
            return
    out[s, got[s]] = b
    role[s, got[s]] = r
    got[s] += 1


@njit(cache=True, nogil=True, inline="always")
def _from_other_side(sv, so, ov, oo, g, slot, out, role, got, k, r):
    """Block ``g``: each wanted row of one side (``sv``/``so``) takes partners from
    the other side (``ov``/``oo``), in role ``r``."""
    for i in range(so[g], so[g + 1]):
        a = sv[i]
        s = slot[a]
        if s < 0:
            continue
        for j in range(oo[g], oo[g + 1]):
            if got[s] >= k:
                break
            if ov[j] != a:
                _take(out, role, got, s, ov[j], r, k)


@njit(cache=True, nogil=True)
def sample_partners(lo, lv, ro, rv, slot, out, role, got, k):
    """Blocks as per-side lists (offsets ``lo``/``ro``, tids ``lv``/``rv``); ``slot``:
    per row, its row of ``out`` (-1: not wanted).  Fills ``out[s]`` with up to ``k``
    distinct partners and ``role[s]`` with 0 where the wanted row is ``t`` (the
    partner ``t'``), 1 where it is ``t'``; ``got[s]`` counts them (kept across calls,
    so blocks may come in batches)."""
    for g in range(lo.shape[0] - 1):
        _from_other_side(lv, lo, rv, ro, g, slot, out, role, got, k, 0)
        _from_other_side(rv, ro, lv, lo, g, slot, out, role, got, k, 1)


def empty_partners(wanted: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(out, role, got)`` for ``wanted`` rows of ``k`` partners each."""
    return (
        np.full((wanted, k), -1, np.int64),
        np.zeros((wanted, k), np.int8),
        np.zeros(wanted, np.int64),
    )
