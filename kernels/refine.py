"""Refinement kernels: a batch of groups and one predicate ``t.A op t'.B`` in,
the sub-pairs that satisfy it out (paper §3.2, §5).

All three share one shape.  Pass 1 copies each side of every input group,
without NULLs, sorted by its column's code into a new buffer; a reflexive
group refined on a single column is copied once (paper §5.1 "avoiding scans
in reflexive pairs": no probe side).  Pass 2 walks the runs of equal codes
and writes output groups as slices of those copies:

* equality (§5.1): ``(L_v, R_v)`` for every value ``v`` on both sides;
* non-equality (§5.2): ``(L_v, R minus R_v)`` -- the hole is the run ``R_v``;
* inequality, HSM (§5.3): ``(L_v, R_{>v})`` -- a suffix (or prefix) of the
  sorted right copy; consecutive left runs with the same boundary merge into
  one group, as in VioFinder's incremental merge.

Output size is O(|L| + |R| + groups) per input group, never sum |R_i|.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.common import (
    gather,
    is_reflexive,
    partners,
    side_size,
    sort_by_key,
    use_counting_sort,
)
from facet.kernels.jit import njit

KIND_EQ = 0
KIND_NE = 1
KIND_INEQ = 2


@njit(cache=True, nogil=True)
def _copy_sorted(buf, desc, codes, ra, rb, dom, tune):
    """Pass 1: sorted non-NULL copies of every side.

    Returns the new buffer and ``info`` rows ``(l_start, l_len, r_start, r_len)``;
    a shared copy has ``r_start == l_start``.  When the batch holds many tids
    against the code domain, all sides are sorted at once (one counting sort by
    code, then a stable scatter to their segments: O(N + domain)); otherwise
    each side on its own.
    """
    g_n = desc.shape[0]
    total = 0
    for g in range(g_n):
        if ra == rb and is_reflexive(desc, g):
            total += side_size(desc, g, 0)
        else:
            total += side_size(desc, g, 0) + side_size(desc, g, 4)
    out = np.empty(total, np.int32)
    info = np.empty((g_n, 4), np.int64)
    nn_a = np.empty(1, np.int64)
    nn_a[0] = ra
    nn_b = np.empty(1, np.int64)
    nn_b[0] = rb
    ka = codes[ra]
    kb = codes[rb]
    # gather (unsorted) into segments
    shared = np.zeros(g_n, np.bool_)
    pos = 0
    for g in range(g_n):
        m = gather(buf, desc, g, 0, codes, nn_a, out[pos:])
        info[g, 0] = pos
        info[g, 1] = m
        pos += m
        if ra == rb and is_reflexive(desc, g):
            shared[g] = True
            info[g, 2] = info[g, 0]
            info[g, 3] = m
            continue
        m = gather(buf, desc, g, 4, codes, nn_b, out[pos:])
        info[g, 2] = pos
        info[g, 3] = m
        pos += m
    out = out[:pos]
    if pos > 1 and g_n > 1 and use_counting_sort(pos, dom, tune):
        cnt = np.zeros(dom + 1, np.int64)
        key = np.empty(pos, np.int32)
        for g in range(g_n):
            for i in range(info[g, 0], info[g, 0] + info[g, 1]):
                key[i] = ka[out[i]]
            if not shared[g]:
                for i in range(info[g, 2], info[g, 2] + info[g, 3]):
                    key[i] = kb[out[i]]
        for i in range(pos):
            cnt[key[i] + 1] += 1
        for v in range(dom):
            cnt[v + 1] += cnt[v]
        order = np.empty(pos, np.int64)
        for i in range(pos):
            k = key[i]
            order[cnt[k]] = i
            cnt[k] += 1
        # stable scatter back to each item's own segment
        seg_end = np.empty(pos, np.int64)  # for item i: the cursor slot of its segment
        cursor = np.empty(2 * g_n, np.int64)
        for g in range(g_n):
            cursor[2 * g] = info[g, 0]
            for i in range(info[g, 0], info[g, 0] + info[g, 1]):
                seg_end[i] = 2 * g
            if not shared[g]:
                cursor[2 * g + 1] = info[g, 2]
                for i in range(info[g, 2], info[g, 2] + info[g, 3]):
                    seg_end[i] = 2 * g + 1
        srt = np.empty(pos, np.int32)
        for j in range(pos):
            i = order[j]
            sgi = seg_end[i]
            srt[cursor[sgi]] = out[i]
            cursor[sgi] += 1
        return srt, info
    for g in range(g_n):
        s0 = info[g, 0]
        out[s0 : s0 + info[g, 1]] = sort_by_key(out[s0 : s0 + info[g, 1]], ka, dom, tune)
        if not shared[g]:
            s1 = info[g, 2]
            out[s1 : s1 + info[g, 3]] = sort_by_key(out[s1 : s1 + info[g, 3]], kb, dom, tune)
    return out, info


@njit(cache=True, nogil=True, inline="always")
def _put(odesc, k, write, ls, le, lhs, lhe, rs, re, rhs, rhe):
    if write:
        odesc[k, 0] = ls
        odesc[k, 1] = le
        odesc[k, 2] = lhs
        odesc[k, 3] = lhe
        odesc[k, 4] = rs
        odesc[k, 5] = re
        odesc[k, 6] = rhs
        odesc[k, 7] = rhe
    return k + 1


@njit(cache=True, nogil=True, inline="always")
def _put_pending(odesc, k, write, s, e, b0, b1, obuf):
    """Write the pending HSM group ``(obuf[s:e], obuf[b0:b1])`` unless it is empty
    or a single tid against itself (no pair with ``t != t'``)."""
    if s < 0 or b1 <= b0 or (e - s == 1 and b1 - b0 == 1 and obuf[s] == obuf[b0]):
        return k
    return _put(odesc, k, write, s, e, s, s, b0, b1, b0, b0)


@njit(cache=True, nogil=True)
def hsm_walk(obuf, ka, kb, op, i, e, lo, hi, p, q, odesc, k, write):
    """HSM's merge (paper §5.3) of the left runs ``obuf[i:e]`` (sorted by ``ka``)
    against the right slice ``obuf[lo:hi]`` (sorted by ``kb``): per run of value
    ``v``, the slice of right tids whose codes satisfy ``v op code`` -- a suffix
    (``<``, ``<=``) or prefix (``>``, ``>=``) of the slice; consecutive runs with
    the same slice merge into one group (VioFinder's incremental merge).
    ``p``/``q`` are the resume positions of the two boundaries (first index with
    code >= / > ``v``).  Returns ``(k, p, q)``.  BHSM calls it once per bin."""
    pend_s = -1
    pend_e = -1
    pend_0 = -1
    pend_1 = -1
    while i < e:
        v = ka[obuf[i]]
        j = i + 1
        while j < e and ka[obuf[j]] == v:
            j += 1
        if p < lo:
            p = lo
        while p < hi and kb[obuf[p]] < v:
            p += 1
        if q < p:
            q = p
        while q < hi and kb[obuf[q]] <= v:
            q += 1
        s0, s1 = partners(op, p, q, lo, hi)
        if pend_s >= 0 and pend_0 == s0 and pend_1 == s1:
            pend_e = j
        else:
            k = _put_pending(odesc, k, write, pend_s, pend_e, pend_0, pend_1, obuf)
            pend_s = i
            pend_e = j
            pend_0 = s0
            pend_1 = s1
        i = j
    k = _put_pending(odesc, k, write, pend_s, pend_e, pend_0, pend_1, obuf)
    return k, p, q


@njit(cache=True, nogil=True)
def _emit(obuf, info, codes, ra, rb, kind, op, odesc, write):
    """Pass 2: walk runs of the sorted copies, count (``write=False``) or write groups."""
    ka = codes[ra]
    kb = codes[rb]
    k = 0
    for g in range(info.shape[0]):
        l0 = info[g, 0]
        l1 = l0 + info[g, 1]
        r0 = info[g, 2]
        r1 = r0 + info[g, 3]
        if l0 == l1 or r0 == r1:
            continue
        shared = l0 == r0
        if shared:
            # one sorted copy S of a reflexive group, single column
            i = l0
            while i < l1:
                v = ka[obuf[i]]
                j = i + 1
                while j < l1 and ka[obuf[j]] == v:
                    j += 1
                if kind == 0:
                    if j - i >= 2:
                        k = _put(odesc, k, write, i, j, i, i, i, j, i, i)
                elif kind == 1:
                    if j - i < l1 - l0:
                        k = _put(odesc, k, write, i, j, i, i, l0, l1, i, j)
                else:
                    if op == 2:  # <
                        if j < l1:
                            k = _put(odesc, k, write, i, j, i, i, j, l1, j, j)
                    elif op == 3:  # <=
                        if l1 - i >= 2:
                            k = _put(odesc, k, write, i, j, i, i, i, l1, i, i)
                    elif op == 4:  # >
                        if i > l0:
                            k = _put(odesc, k, write, i, j, i, i, l0, i, l0, l0)
                    else:  # >=
                        if j - l0 >= 2:
                            k = _put(odesc, k, write, i, j, i, i, l0, j, l0, l0)
                i = j
            continue
        # two copies: L sorted by A, R sorted by B; merge by code
        if kind == 2:
            k, _, _ = hsm_walk(obuf, ka, kb, op, l0, l1, r0, r1, r0, r0, odesc, k, write)
            continue
        i = l0
        p = r0  # first R index with code >= current L code
        q = r0  # first R index with code > current L code
        while i < l1:
            v = ka[obuf[i]]
            j = i + 1
            while j < l1 and ka[obuf[j]] == v:
                j += 1
            while p < r1 and kb[obuf[p]] < v:
                p += 1
            if q < p:
                q = p
            while q < r1 and kb[obuf[q]] <= v:
                q += 1
            if kind == 0:
                if q > p and not (j - i == 1 and q - p == 1 and obuf[i] == obuf[p]):
                    k = _put(odesc, k, write, i, j, i, i, p, q, p, p)
            elif (r1 - r0) - (q - p) > 0:  # non-equality: R minus the run R_v
                if q > p:
                    k = _put(odesc, k, write, i, j, i, i, r0, r1, p, q)
                else:
                    k = _put(odesc, k, write, i, j, i, i, r0, r1, r0, r0)
            i = j
    return k


@njit(cache=True, nogil=True)
def refine(buf, desc, codes, ra, rb, dom, kind, op, tune):
    """Refine the groups ``(buf, desc)`` by ``t.<row ra> op t'.<row rb>``.

    ``kind`` is 0 (equality), 1 (non-equality) or 2 (inequality, HSM; ``op`` one
    of the ``OP_*`` order codes); ``dom`` bounds the codes (for counting sort);
    ``tune``: :meth:`Config.kernel_tuning`.  Returns the new ``(buf, desc)``.
    """
    obuf, info = _copy_sorted(buf, desc, codes, ra, rb, dom, tune)
    dummy = np.empty((0, 8), np.int64)
    n_out = _emit(obuf, info, codes, ra, rb, kind, op, dummy, False)
    odesc = np.empty((n_out, 8), np.int64)
    _emit(obuf, info, codes, ra, rb, kind, op, odesc, True)
    return obuf, odesc


# ------------------------------------------------- one big reflexive group, in parallel
# The first equality of most DCs refines the whole table: one group, so the
# batch cannot be cut into parts.  Its counting sort is split instead: row
# ranges count codes, then scatter (stable: range order, then row order -- the
# serial kernel's order); the groups are the runs, read off the counts.


@njit(cache=True, nogil=True)
def count_codes(tids, lo, hi, k, counts):
    """``counts[v] += #{i in lo:hi : k[tids[i]] == v}`` (NULL codes skipped)."""
    for i in range(lo, hi):
        v = k[tids[i]]
        if v >= 0:
            counts[v] += 1


@njit(cache=True, nogil=True)
def scatter_by_code(tids, lo, hi, k, cursor, out):
    """Tids of ``lo:hi`` to ``out[cursor[code]++]`` (NULL codes skipped)."""
    for i in range(lo, hi):
        t = tids[i]
        v = k[t]
        if v >= 0:
            out[cursor[v]] = t
            cursor[v] += 1


def equality_runs(counts: np.ndarray) -> np.ndarray:
    """Descriptors ``(S_v, S_v)`` of the runs of at least two tids of a sorted
    shared copy, from the count of every code."""
    start = np.zeros(counts.shape[0] + 1, np.int64)
    np.cumsum(counts, out=start[1:])
    keep = np.flatnonzero(counts >= 2)
    s = start[keep]
    e = start[keep + 1]
    desc = np.empty((keep.shape[0], 8), np.int64)
    desc[:, 0] = s
    desc[:, 1] = e
    desc[:, 2] = s
    desc[:, 3] = s
    desc[:, 4] = s
    desc[:, 5] = e
    desc[:, 6] = s
    desc[:, 7] = s
    return desc


@njit(cache=True, nogil=True)
def composite_keys(codes, rows, doms, tids, out):
    """``out[t]`` = the composite code of ``t`` (each ``t`` of ``tids``) over the
    code rows ``rows`` (domains ``doms``): ``(...(c0 d1 + c1) d2 + ...)``, -1 when
    one of them is NULL -- several equalities as one (their domains' product must
    fit in int32)."""
    k = rows.shape[0]
    for i in range(tids.shape[0]):
        t = tids[i]
        key = 0
        for j in range(k):
            c = codes[rows[j], t]
            if c < 0:
                key = -1
                break
            key = key * doms[j] + c
        out[t] = key
