"""Dominance decomposition of one inequality ``t.A op t'.B`` (CDQ divide and
conquer; docs/semantics.md §6).

The code range of a group is halved recursively: at a node ``[lo, hi]`` with
midpoint ``mid``, every left tuple with ``A <= mid`` and every right tuple with
``B > mid`` form a complete block for ``<`` (and the mirror block for ``>``);
a single-value leaf forms ``(L_v, R_v)`` for ``<=`` / ``>=``.  Blocks are slices
of the sorted copies, each tuple is in O(log d) of them, so the output stands
for all qualifying pairs in O((|L| + |R|) log d) -- independent of how many
pairs there are.  The counting sink uses it to take a third (fourth, ...)
inequality off a large group before dominance counting on the rest.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.jit import njit
from facet.kernels.refine import _copy_sorted, _put


@njit(cache=True, nogil=True)
def _first_above(keys, obuf, i, j, x):
    """First index in ``[i, j)`` (sorted by ``keys[obuf[.]]``) with a key > ``x``."""
    lo = i
    hi = j
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[obuf[mid]] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _emit_decompose(obuf, info, codes, ra, rb, op, odesc, write):
    ka = codes[ra]
    kb = codes[rb]
    k = 0
    stack = np.empty((128, 6), np.int64)
    for g in range(info.shape[0]):
        l0 = info[g, 0]
        l1 = l0 + info[g, 1]
        r0 = info[g, 2]
        r1 = r0 + info[g, 3]
        if l0 == l1 or r0 == r1:
            continue
        top = 0
        stack[0, 0] = min(ka[obuf[l0]], kb[obuf[r0]])
        stack[0, 1] = max(ka[obuf[l1 - 1]], kb[obuf[r1 - 1]])
        stack[0, 2] = l0
        stack[0, 3] = l1
        stack[0, 4] = r0
        stack[0, 5] = r1
        top = 1
        while top > 0:
            top -= 1
            lo = stack[top, 0]
            hi = stack[top, 1]
            li = stack[top, 2]
            lj = stack[top, 3]
            ri = stack[top, 4]
            rj = stack[top, 5]
            if li == lj or ri == rj:
                continue
            if lo == hi:
                single_self = lj - li == 1 and rj - ri == 1 and obuf[li] == obuf[ri]
                if (op == 3 or op == 5) and not single_self:
                    k = _put(odesc, k, write, li, lj, li, li, ri, rj, ri, ri)
                continue
            mid = (lo + hi) >> 1
            lm = _first_above(ka, obuf, li, lj, mid)
            rm = _first_above(kb, obuf, ri, rj, mid)
            if op == 2 or op == 3:
                if lm > li and rj > rm:
                    k = _put(odesc, k, write, li, lm, li, li, rm, rj, rm, rm)
            else:
                if lj > lm and rm > ri:
                    k = _put(odesc, k, write, lm, lj, lm, lm, ri, rm, ri, ri)
            stack[top, 0] = lo
            stack[top, 1] = mid
            stack[top, 2] = li
            stack[top, 3] = lm
            stack[top, 4] = ri
            stack[top, 5] = rm
            top += 1
            stack[top, 0] = mid + 1
            stack[top, 1] = hi
            stack[top, 2] = lm
            stack[top, 3] = lj
            stack[top, 4] = rm
            stack[top, 5] = rj
            top += 1
    return k


@njit(cache=True, nogil=True)
def refine_decompose(buf, desc, codes, ra, rb, dom, op, tune):
    """Refine the groups by ``t.<row ra> op t'.<row rb>`` into dominance blocks."""
    obuf, info = _copy_sorted(buf, desc, codes, ra, rb, dom, tune)
    dummy = np.empty((0, 8), np.int64)
    n_out = _emit_decompose(obuf, info, codes, ra, rb, op, dummy, False)
    odesc = np.empty((n_out, 8), np.int64)
    _emit_decompose(obuf, info, codes, ra, rb, op, odesc, True)
    return obuf, odesc
