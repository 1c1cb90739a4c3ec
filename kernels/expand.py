"""Pair expansion: the final groups (and any predicates still to check) out as
explicit ``(t, t')`` pairs, in bounded chunks (docs/semantics.md §7 ``pairs``).

Resumable: a call fills at most ``cap`` pairs and returns where it stopped, so
large outputs stream and ``--limit`` stops early.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.common import holds
from facet.kernels.jit import njit


@njit(cache=True, nogil=True, inline="always")
def _next(i, hs, he):
    i += 1
    if i == hs and he > hs:
        i = he
    return i


@njit(cache=True, nogil=True, inline="always")
def _first(s, hs, he):
    if s == hs and he > hs:
        return he
    return s


@njit(cache=True, nogil=True)
def expand(buf, desc, codes, pa, pb, po, start, g, a, b, cap, out1, out2):
    """Write up to ``cap`` pairs of groups ``g..`` into ``out1``/``out2``.

    Pairs satisfy predicates ``start..`` of ``(pa, pb, po)`` and ``t != t'``.
    ``(g, a, b)`` is the resume position (``a < 0``: start of group ``g``).
    Returns ``(written, g, a, b)``; ``g == len(desc)`` when everything is out.
    """
    n = 0
    ng = desc.shape[0]
    check = start < pa.shape[0]
    while g < ng:
        ls = desc[g, 0]
        le = desc[g, 1]
        lhs = desc[g, 2]
        lhe = desc[g, 3]
        rs = desc[g, 4]
        re = desc[g, 5]
        rhs = desc[g, 6]
        rhe = desc[g, 7]
        if a < 0:
            a = _first(ls, lhs, lhe)
            b = _first(rs, rhs, rhe)
        while a < le:
            t = buf[a]
            while b < re:
                u = buf[b]
                if t != u and (not check or holds(codes, pa, pb, po, start, t, u)):
                    if n == cap:
                        return n, g, a, b
                    out1[n] = t
                    out2[n] = u
                    n += 1
                b = _next(b, rhs, rhe)
            a = _next(a, lhs, lhe)
            b = _first(rs, rhs, rhe)
        g += 1
        a = -1
    return n, g, a, b


@njit(cache=True, nogil=True)
def sides_to_lists(buf, desc, s):
    """Side ``s`` (0 left, 4 right) of every group as list offsets + values."""
    ng = desc.shape[0]
    offsets = np.empty(ng + 1, np.int64)
    total = 0
    for g in range(ng):
        offsets[g] = total
        total += (desc[g, s + 1] - desc[g, s]) - (desc[g, s + 3] - desc[g, s + 2])
    offsets[ng] = total
    values = np.empty(total, np.int64)
    k = 0
    for g in range(ng):
        i = _first(desc[g, s], desc[g, s + 2], desc[g, s + 3])
        while i < desc[g, s + 1]:
            values[k] = buf[i]
            k += 1
            i = _next(i, desc[g, s + 2], desc[g, s + 3])
    return offsets, values
