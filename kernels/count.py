"""Counting sinks: exact per-row violation degrees without enumerating pairs
(DESIGN §2 "Counting with t != t'").

For each group ``(L, R)`` and the predicates still to apply, every row ``t`` of
``L`` gains ``#{t' in R : they hold}`` in ``deg_l`` and every ``t'`` of ``R``
gains ``#{t in L : they hold}`` in ``deg_r``; pairs ``(t, t)`` are counted and
then taken off for ``t`` in ``L ∩ R`` where the predicates hold for ``(t, t)``.
The violation count is ``deg_l.sum()``; rows involved are the rows with a
non-zero degree on either side.

* no predicate left: closed form ``|R|`` / ``|L|`` per row;
* one inequality: sort one side, binary search per row (O(m log m));
* two inequalities: sweep on the first, Fenwick tree over ranks of the second
  (dominance counting, O(m log m));
* a group with at most ``nested`` candidate pairs: pair by pair
  (``nested``), any predicates;
* anything else is reported back (``todo``) for the caller to refine first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from facet.kernels.common import (
    gather,
    holds,
    lower_bound,
    side_size,
    stable_order,
    upper_bound,
)
from facet.kernels.refine import _copy_sorted


@njit(cache=True, nogil=True, inline="always")
def _flip(op):
    if op == 2:
        return 4
    if op == 3:
        return 5
    if op == 4:
        return 2
    if op == 5:
        return 3
    return op


@njit(cache=True, nogil=True)
def _count_one(qk, pk, op, dom, out):
    """``out[i] = #{j : qk[i] op pk[j]}`` for an order operator ``op``."""
    m = pk.shape[0]
    if dom <= 4 * (m + qk.shape[0]) + 64:
        # le[v] = #{p <= v - 1}: a histogram's prefix sums
        le = np.zeros(dom + 1, np.int64)
        for j in range(m):
            le[pk[j] + 1] += 1
        for v in range(dom):
            le[v + 1] += le[v]
        for i in range(qk.shape[0]):
            x = qk[i]
            if op == 2:  # p > x
                out[i] = m - le[x + 1]
            elif op == 3:  # p >= x
                out[i] = m - le[x]
            elif op == 4:  # p < x
                out[i] = le[x]
            else:  # p <= x
                out[i] = le[x + 1]
        return
    s = np.sort(pk)
    for i in range(qk.shape[0]):
        x = qk[i]
        if op == 2:
            out[i] = m - upper_bound(s, m, x)
        elif op == 3:
            out[i] = m - lower_bound(s, m, x)
        elif op == 4:
            out[i] = lower_bound(s, m, x)
        else:
            out[i] = upper_bound(s, m, x)


@njit(cache=True, nogil=True)
def _sweep(q1, q2, p1, p2, oq, opn, op1, op2, dom2, out):
    """``out[i] = #{j : q1[i] op1 p1[j] and q2[i] op2 p2[j]}`` (dominance counting).

    ``oq`` / ``opn`` order ``q1`` / ``p1`` ascending (ties in any order: a query
    sees every point whose key passes the test against its own key, so ties
    need no order).  Sweep on the first key, Fenwick tree over the second --
    over the codes directly when their domain is small, else compressed ranks.
    """
    mq = q1.shape[0]
    mp = p1.shape[0]
    direct = dom2 <= 4 * (mq + mp) + 64
    if direct:
        nu = dom2
        slot = p2 + 1
        split = np.empty(mq, np.int64)
        for i in range(mq):
            z = q2[i]
            split[i] = z + 1 if (op2 == 2 or op2 == 5) else z
    else:
        u = np.unique(p2)
        nu = u.shape[0]
        slot = np.empty(mp, np.int64)
        for j in range(mp):
            slot[j] = lower_bound(u, nu, p2[j]) + 1
        split = np.empty(mq, np.int64)
        for i in range(mq):
            z = q2[i]
            split[i] = upper_bound(u, nu, z) if (op2 == 2 or op2 == 5) else lower_bound(u, nu, z)
    above = op2 == 2 or op2 == 3
    fen = np.zeros(nu + 1, np.int64)
    ascending = op1 == 4 or op1 == 5  # q > p / q >= p: points with small keys first
    strict = op1 == 2 or op1 == 4
    inserted = 0
    j = 0
    for step in range(mq):
        i = oq[step] if ascending else oq[mq - 1 - step]
        x = q1[i]
        while j < mp:
            pj = opn[j] if ascending else opn[mp - 1 - j]
            y = p1[pj]
            if ascending:
                if y > x or (strict and y == x):
                    break
            elif y < x or (strict and y == x):
                break
            r = slot[pj]
            while r <= nu:
                fen[r] += 1
                r += r & (-r)
            inserted += 1
            j += 1
        r = split[i]
        below = 0
        while r > 0:
            below += fen[r]
            r -= r & (-r)
        out[i] = inserted - below if above else below


@njit(cache=True, nogil=True)
def _count_two(q1, q2, p1, p2, op1, op2, dom1, dom2, out_q, out_p):
    """Dominance counts of both sides: ``out_q`` per query row (``q op p``) and
    ``out_p`` per point row (the same pairs seen from the other side); the two
    sweeps share one sort of each side."""
    oq = stable_order(q1, dom1)
    opn = stable_order(p1, dom1)
    _sweep(q1, q2, p1, p2, oq, opn, op1, op2, dom2, out_q)
    _sweep(p1, p2, q1, q2, opn, oq, _flip(op1), _flip(op2), dom2, out_p)


@njit(cache=True, nogil=True)
def count_groups(
    buf, desc, codes, doms, pa, pb, po, nl, nr, sign, deg_l, deg_r, stamp, stamp_id, todo, nested
):
    """Add ``sign`` x the degrees of every group under predicates ``(pa, pb, po)``.

    ``doms[r]`` bounds the codes of code row ``r``.  A group goes pair by pair
    when it has at most ``nested`` candidate pairs and that is cheaper than the
    closed forms (always, when none applies).
    Rows with a NULL in any code row of ``nl`` (left) / ``nr`` (right) leave their
    side first.  Groups that are neither small nor answerable in closed form
    (more than two predicates, or any non-order predicate) are flagged in
    ``todo`` and left untouched.  Returns the last stamp id used.
    """
    k = pa.shape[0]
    n_ne = 0
    n_ord = 0
    for i in range(k):
        if po[i] >= 2:
            n_ord += 1
        elif po[i] == 1:
            n_ne += 1
    fast = n_ord == k and k <= 2
    # pair by pair beats the closed forms only on small groups: their cost is about
    # (|L| + |R|) x 16 per term, and non-equalities cost 2^j terms
    factor = 16
    if not fast:
        if n_ord == 0 and n_ne == 1 and k == 1:
            factor = 4  # the non-equality kernel answers it in closed form
        elif n_ord <= 2 and n_ord + n_ne == k:
            factor = 16 << min(n_ne, 8)  # inclusion-exclusion: 2^j terms
        else:
            factor = 1 << 40
    max_l = 0
    max_r = 0
    for g in range(desc.shape[0]):
        max_l = max(max_l, side_size(desc, g, 0))
        max_r = max(max_r, side_size(desc, g, 4))
    L = np.empty(max_l, np.int32)
    R = np.empty(max_r, np.int32)
    for g in range(desc.shape[0]):
        ml = gather(buf, desc, g, 0, codes, nl, L)
        if ml == 0:
            continue
        mr = gather(buf, desc, g, 4, codes, nr, R)
        if mr == 0:
            continue
        if ml * mr <= nested and ml * mr <= factor * (ml + mr):
            for a in range(ml):
                t = L[a]
                for b in range(mr):
                    u = R[b]
                    if t != u and holds(codes, pa, pb, po, 0, t, u):
                        deg_l[t] += sign
                        deg_r[u] += sign
            continue
        if not fast:
            todo[g] = True
            continue
        if k == 0:
            for a in range(ml):
                deg_l[L[a]] += sign * mr
            for b in range(mr):
                deg_r[R[b]] += sign * ml
        elif k == 1:
            qa = np.empty(ml, np.int64)
            for a in range(ml):
                qa[a] = codes[pa[0], L[a]]
            pbv = np.empty(mr, np.int64)
            for b in range(mr):
                pbv[b] = codes[pb[0], R[b]]
            cl = np.empty(ml, np.int64)
            d = doms[pb[0]]
            _count_one(qa, pbv, po[0], d, cl)
            cr = np.empty(mr, np.int64)
            _count_one(pbv, qa, _flip(po[0]), d, cr)
            for a in range(ml):
                deg_l[L[a]] += sign * cl[a]
            for b in range(mr):
                deg_r[R[b]] += sign * cr[b]
        else:
            qa1 = np.empty(ml, np.int64)
            qa2 = np.empty(ml, np.int64)
            for a in range(ml):
                qa1[a] = codes[pa[0], L[a]]
                qa2[a] = codes[pa[1], L[a]]
            pb1 = np.empty(mr, np.int64)
            pb2 = np.empty(mr, np.int64)
            for b in range(mr):
                pb1[b] = codes[pb[0], R[b]]
                pb2[b] = codes[pb[1], R[b]]
            cl = np.empty(ml, np.int64)
            cr = np.empty(mr, np.int64)
            d1 = doms[pb[0]]
            d2 = doms[pb[1]]
            if d1 >= d2:  # sweep on the larger domain, Fenwick tree over the smaller
                _count_two(qa1, qa2, pb1, pb2, po[0], po[1], d1, d2, cl, cr)
            else:
                _count_two(qa2, qa1, pb2, pb1, po[1], po[0], d2, d1, cl, cr)
            for a in range(ml):
                deg_l[L[a]] += sign * cl[a]
            for b in range(mr):
                deg_r[R[b]] += sign * cr[b]
        # take off the pairs (t, t)
        stamp_id += 1
        for b in range(mr):
            stamp[R[b]] = stamp_id
        for a in range(ml):
            t = L[a]
            if stamp[t] == stamp_id and holds(codes, pa, pb, po, 0, t, t):
                deg_l[t] -= sign
                deg_r[t] -= sign
    return stamp_id


@njit(cache=True, nogil=True)
def count_nonequality(buf, desc, codes, ra, rb, dom, sign, deg_l, deg_r, stamp, stamp_id):
    """Degrees of every group under one non-equality ``t.<ra> != t'.<rb>`` (the
    functional-dependency shape), in closed form: each side sorted by its code
    once (as a refinement would), then ``deg(t) = |R| - |R with t's code|``.
    Returns the last stamp id used."""
    obuf, info = _copy_sorted(buf, desc, codes, ra, rb, dom)
    ka = codes[ra]
    kb = codes[rb]
    for g in range(info.shape[0]):
        l0 = info[g, 0]
        l1 = l0 + info[g, 1]
        r0 = info[g, 2]
        r1 = r0 + info[g, 3]
        ml = l1 - l0
        mr = r1 - r0
        if ml == 0 or mr == 0:
            continue
        # left rows: everything on the right but the run of equal codes
        p = r0
        i = l0
        while i < l1:
            v = ka[obuf[i]]
            j = i + 1
            while j < l1 and ka[obuf[j]] == v:
                j += 1
            while p < r1 and kb[obuf[p]] < v:
                p += 1
            q = p
            while q < r1 and kb[obuf[q]] == v:
                q += 1
            for x in range(i, j):
                deg_l[obuf[x]] += sign * (mr - (q - p))
            i = j
        p = l0
        i = r0
        while i < r1:
            v = kb[obuf[i]]
            j = i + 1
            while j < r1 and kb[obuf[j]] == v:
                j += 1
            while p < l1 and ka[obuf[p]] < v:
                p += 1
            q = p
            while q < l1 and ka[obuf[q]] == v:
                q += 1
            for x in range(i, j):
                deg_r[obuf[x]] += sign * (ml - (q - p))
            i = j
        # (t, t) counted when t is on both sides and its two codes differ
        if ra == rb:
            continue  # same column: a row never differs from itself
        stamp_id += 1
        for x in range(r0, r1):
            stamp[obuf[x]] = stamp_id
        for x in range(l0, l1):
            t = obuf[x]
            if stamp[t] == stamp_id and ka[t] != kb[t]:
                deg_l[t] -= sign
                deg_r[t] -= sign
    return stamp_id
