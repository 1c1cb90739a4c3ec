"""Counting sinks: exact per-row violation degrees without enumerating pairs
(docs/semantics.md §6).

For each group ``(L, R)`` and the predicates still to apply, every row ``t`` of
``L`` gains ``#{t' in R : they hold}`` in ``deg_l`` and every ``t'`` of ``R``
gains ``#{t in L : they hold}`` in ``deg_r``; pairs ``(t, t)`` are counted and
then taken off for ``t`` in ``L ∩ R`` where the predicates hold for ``(t, t)``.
The violation count is ``deg_l.sum()``; rows involved are the rows with a
non-zero degree on either side.

* no predicate left: closed form ``|R|`` / ``|L|`` per row;
* one equality or one non-equality (``count_keyed``): closed form over the
  codes counted per group, no sort;
* one inequality: codes ranked over the group's values (a radix sort when they
  are wide), then prefix sums of a histogram (O(m));
* two inequalities: the same ranking, a sweep on the first, a Fenwick tree over
  the second (dominance counting, O(m log m));
* a group with at most ``nested`` candidate pairs: pair by pair
  (``nested``), any predicates;
* anything else is reported back (``todo``) for the caller to refine first.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.common import (
    gather,
    holds,
    is_reflexive,
    lower_bound,
    side_size,
)
from facet.kernels.jit import njit
from facet.kernels.ranks import RADIX_BITS
from facet.kernels.tuning import (
    HISTOGRAM_SPAN,
    KEYED_DIRECT_CODES,
    NESTED_COST,
    NESTED_ORDER_COST,
    NESTED_ORDER_SCALE,
    NESTED_TINY,
)

#: a dominance count recodes to the small side's values when the other is this x larger
LOPSIDED = 8
#: ... and counts from a 2D prefix grid while it has at most this many cells a row
#: (a cell costs about a tenth of a row's Fenwick steps)
GRID_CELLS_PER_ROW = 8


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
    """``out[i] = #{j : qk[i] op pk[j]}`` for an order operator ``op``: prefix sums
    of a histogram over the codes (the caller ranks codes wide against the group
    first, so ``dom`` stays within a few times the tids)."""
    m = pk.shape[0]
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


@njit(cache=True, nogil=True)
def _relative_codes(small, large, dom):
    """Both sides' codes in the position space of the small side's values:
    ``pos(y) = 2 #{u in U : u < y} + [y in U]`` for ``U`` the distinct codes of
    ``small``.  Every comparison of a small-side code with any code keeps its
    outcome (only the large side's codes among themselves may tie where they did
    not, and no kernel compares those), and the domain shrinks to ``2|U| + 1``.
    A table over the domain while it is at most about the sides' size, else
    binary search in ``U``.  Returns ``(small', large', domain')``."""
    ms = small.shape[0]
    ml = large.shape[0]
    rs = np.empty(ms, np.int64)
    rl = np.empty(ml, np.int64)
    if dom <= 2 * (ms + ml) + 64:
        table = np.zeros(dom, np.int64)
        for i in range(ms):
            table[small[i]] = 1
        below = 0
        for v in range(dom):
            here = table[v]
            table[v] = 2 * below + here
            below += here
        for i in range(ms):
            rs[i] = table[small[i]]
        for j in range(ml):
            rl[j] = table[large[j]]
        return rs, rl, 2 * below + 1
    u = np.unique(small)
    nu = u.shape[0]
    # a lookup table over the domain's top bits narrows each search to a bucket
    shift = 0
    while ((dom - 1) >> shift) >= 4 * nu + 4:
        shift += 1
    nb = ((dom - 1) >> shift) + 2
    lut = np.empty(nb, np.int64)  # lut[b] = #{u < b << shift}
    k = 0
    for b in range(nb):
        while k < nu and u[k] < (b << shift):
            k += 1
        lut[b] = k
    for i in range(ms):
        rs[i] = 2 * lower_bound(u, nu, small[i]) + 1
    for j in range(ml):
        y = large[j]
        b = y >> shift
        lo = lut[b]
        hi = lut[b + 1]
        while lo < hi:  # binary search within the bucket
            mid = (lo + hi) >> 1
            if u[mid] < y:
                lo = mid + 1
            else:
                hi = mid
        rl[j] = 2 * lo + (1 if lo < nu and u[lo] == y else 0)
    return rs, rl, 2 * nu + 1


@njit(cache=True, nogil=True)
def _union_ranks(a, b, dom):
    """Both sides' codes as dense ranks over the union of their values (order and
    ties kept, domain at most ``|a| + |b|``), by an LSD radix sort of the codes
    (at most ``RADIX_BITS`` a pass, fewer for few codes; O(m) a pass, no
    comparisons).  Returns
    ``(a', b', domain')``."""
    ma = a.shape[0]
    m = ma + b.shape[0]
    bits = 1
    while ((dom - 1) >> bits) > 0:
        bits += 1
    # the digit width with the fewest steps: a pass clears and sums 2^w counts and
    # reads and moves m values, so a small group takes narrow digits (a group's
    # 2^11 counts a pass would cost more than its rows)
    width = RADIX_BITS
    best = -1
    for w in range(4, RADIX_BITS + 1):
        steps = ((bits + w - 1) // w) * (2 * (1 << w) + 2 * m)
        if best < 0 or steps < best:
            best = steps
            width = w
    idx = np.empty(m, np.int64)
    tmp = np.empty(m, np.int64)
    for i in range(m):
        idx[i] = i
    nb = 1 << width
    mask = nb - 1
    count = np.empty(nb + 1, np.int64)
    shift = 0
    while shift < bits:
        count[:] = 0
        for k in range(m):
            i = idx[k]
            v = a[i] if i < ma else b[i - ma]
            count[((v >> shift) & mask) + 1] += 1
        for d in range(nb):
            count[d + 1] += count[d]
        for k in range(m):
            i = idx[k]
            v = a[i] if i < ma else b[i - ma]
            d = (v >> shift) & mask
            tmp[count[d]] = i
            count[d] += 1
        idx, tmp = tmp, idx
        shift += width
    ra = np.empty(ma, np.int64)
    rb = np.empty(m - ma, np.int64)
    r = -1
    last = np.int64(-1)
    for k in range(m):
        i = idx[k]
        v = np.int64(a[i] if i < ma else b[i - ma])
        if r < 0 or v != last:
            r += 1
            last = v
        if i < ma:
            ra[i] = r
        else:
            rb[i - ma] = r
    return ra, rb, r + 1


@njit(cache=True, nogil=True, inline="always")
def _span(op, x, dom):
    """The codes ``[lo, hi)`` of ``p`` with ``x op p``."""
    if op == 2:  # p > x
        return x + 1, dom
    if op == 3:  # p >= x
        return x, dom
    if op == 4:  # p < x
        return 0, x
    return 0, x + 1  # p <= x


@njit(cache=True, nogil=True)
def _grid_counts(q1, q2, p1, p2, op1, op2, dom1, dom2, out):
    """``out[i] = #{j : q1[i] op1 p1[j] and q2[i] op2 p2[j]}`` from a 2D prefix
    sum of the points over both domains (O(points + queries + dom1 x dom2): no
    sort; for domains small against the rows)."""
    w = dom2 + 1
    c = np.zeros((dom1 + 1) * w, np.int64)  # c[a * w + b] = #{p1 < a and p2 < b}
    for j in range(p1.shape[0]):
        c[(p1[j] + 1) * w + p2[j] + 1] += 1
    for a in range(1, dom1 + 1):
        row = a * w
        run = 0
        for b in range(1, w):
            run += c[row + b]
            c[row + b] = c[row - w + b] + run
    for i in range(q1.shape[0]):
        lo1, hi1 = _span(op1, q1[i], dom1)
        lo2, hi2 = _span(op2, q2[i], dom2)
        out[i] = c[hi1 * w + hi2] - c[lo1 * w + hi2] - c[hi1 * w + lo2] + c[lo1 * w + lo2]


@njit(cache=True, nogil=True)
def _buckets(k1, k2, dom1):
    """Rows counting-sorted by ``k1`` (< ``dom1``): bucket starts, their ``k2`` in
    that order (contiguous, for a sweep that reads them in turn) and their
    positions."""
    m = k1.shape[0]
    start = np.zeros(dom1 + 1, np.int64)
    for i in range(m):
        start[k1[i] + 1] += 1
    for v in range(dom1):
        start[v + 1] += start[v]
    fill = start[:-1].copy()
    vals = np.empty(m, np.int64)
    perm = np.empty(m, np.int64)
    for i in range(m):
        k = k1[i]
        at = fill[k]
        vals[at] = k2[i]
        perm[at] = i
        fill[k] = at + 1
    return start, vals, perm


@njit(cache=True, nogil=True, inline="always")
def _insert(fen, pv, lo, hi, dom2):
    """Add the points ``pv[lo:hi]`` to the Fenwick tree; returns how many."""
    for j in range(lo, hi):
        r = pv[j] + 1
        while r <= dom2:
            fen[r] += 1
            r += r & (-r)
    return hi - lo


@njit(cache=True, nogil=True)
def _sweep_buckets(qs, qv, qperm, ps, pv, op1, op2, dom1, dom2, out):
    """Dominance counting (sweep on the first key, Fenwick tree over the second)
    over rows bucketed by their first key (:func:`_buckets`):
    ``out[qperm[k]] = #{points : q1 op1 p1 and q2 op2 p2}`` for the query in
    sorted slot ``k``.  Both sides are read in order, the Fenwick tree is over
    the second key's codes directly (``dom2`` is small here)."""
    fen = np.zeros(dom2 + 1, np.int64)
    ascending = op1 == 4 or op1 == 5  # q > p / q >= p: points with small keys first
    strict = op1 == 2 or op1 == 4
    above = op2 == 2 or op2 == 3
    upper = op2 == 2 or op2 == 5
    inserted = 0
    nxt = 0 if ascending else dom1 - 1  # the next point bucket to insert
    for step in range(dom1):
        x = step if ascending else dom1 - 1 - step
        if qs[x] == qs[x + 1]:
            continue
        if ascending:
            lim = x if strict else x + 1
            while nxt < lim:
                inserted += _insert(fen, pv, ps[nxt], ps[nxt + 1], dom2)
                nxt += 1
        else:
            lim = x if strict else x - 1
            while nxt > lim:
                inserted += _insert(fen, pv, ps[nxt], ps[nxt + 1], dom2)
                nxt -= 1
        for k in range(qs[x], qs[x + 1]):
            r = qv[k] + 1 if upper else qv[k]
            below = 0
            while r > 0:
                below += fen[r]
                r -= r & (-r)
            out[qperm[k]] = inserted - below if above else below


@njit(cache=True, nogil=True)
def _count_two(q1, q2, p1, p2, op1, op2, dom1, dom2, out_q, out_p, tune):
    """Dominance counts of both sides: ``out_q`` per query row (``q op p``) and
    ``out_p`` per point row (the same pairs seen from the other side); the two
    sweeps share one counting sort of each side by the first key.

    A key whose domain is wide against the sides is recoded first, so every sort
    is a counting sort and the Fenwick tree stays in cache: lopsided sides (one at
    least ``LOPSIDED`` x the other: a scoped or appended run's small x whole-table
    groups) to the small side's values (:func:`_relative_codes`, a domain about
    twice the small side's), balanced ones to ranks over both sides' values
    (:func:`_union_ranks`)."""
    mq = q1.shape[0]
    mp = p1.shape[0]
    small = min(mq, mp)
    if small * LOPSIDED <= max(mq, mp):
        if dom1 > 2 * small + 1:
            if mq <= mp:
                q1, p1, dom1 = _relative_codes(q1, p1, dom1)
            else:
                p1, q1, dom1 = _relative_codes(p1, q1, dom1)
        if dom2 > 2 * small + 1:
            if mq <= mp:
                q2, p2, dom2 = _relative_codes(q2, p2, dom2)
            else:
                p2, q2, dom2 = _relative_codes(p2, q2, dom2)
    else:
        # balanced sides: a key whose domain is wide against them is ranked over
        # both sides' values (one radix sort), so the rest is counting sorts and a
        # Fenwick tree over at most |q| + |p| slots -- no comparison sort, no search
        wide = tune[HISTOGRAM_SPAN] * (mq + mp) + 64
        if dom1 > wide:
            q1, p1, dom1 = _union_ranks(q1, p1, dom1)
        if dom2 > wide:
            q2, p2, dom2 = _union_ranks(q2, p2, dom2)
    if (dom1 + 1) * (dom2 + 1) <= GRID_CELLS_PER_ROW * (mq + mp):
        _grid_counts(q1, q2, p1, p2, op1, op2, dom1, dom2, out_q)
        _grid_counts(p1, p2, q1, q2, _flip(op1), _flip(op2), dom1, dom2, out_p)
        return
    qs, qv, qperm = _buckets(q1, q2, dom1)
    ps, pv, pperm = _buckets(p1, p2, dom1)
    _sweep_buckets(qs, qv, qperm, ps, pv, op1, op2, dom1, dom2, out_q)
    _sweep_buckets(ps, pv, pperm, qs, qv, _flip(op1), _flip(op2), dom1, dom2, out_p)


@njit(cache=True, nogil=True)
def _count_two_same(x, y, op1, op2, dom1, dom2, out_q, out_p, tune):
    """:func:`_count_two` of a group whose two sides are the same rows with the
    same codes (a reflexive group under same-column predicates): each key ranked
    once over one side's values, the rows bucketed once, both sweeps over them."""
    m = x.shape[0]
    wide = tune[HISTOGRAM_SPAN] * (2 * m) + 64
    if dom1 > wide:
        x, _, dom1 = _union_ranks(x, x[:0], dom1)
    if dom2 > wide:
        y, _, dom2 = _union_ranks(y, y[:0], dom2)
    if (dom1 + 1) * (dom2 + 1) <= GRID_CELLS_PER_ROW * (2 * m):
        _grid_counts(x, y, x, y, op1, op2, dom1, dom2, out_q)
        _grid_counts(x, y, x, y, _flip(op1), _flip(op2), dom1, dom2, out_p)
        return
    s, v, perm = _buckets(x, y, dom1)
    _sweep_buckets(s, v, perm, s, v, op1, op2, dom1, dom2, out_q)
    _sweep_buckets(s, v, perm, s, v, _flip(op1), _flip(op2), dom1, dom2, out_p)


@njit(cache=True, nogil=True, inline="always")
def _order_form(op):
    """``x op y`` as ``x' <= y'``: ``(neg, strict)`` with ``x' = ±x + strict`` and
    ``y' = ±y`` (negated for ``>`` / ``>=``; ``strict`` 1 for ``<`` and ``>``)."""
    return op >= 4, 1 if op == 2 or op == 4 else 0


@njit(cache=True, nogil=True)
def _tiny_order(L, ml, R, mr, codes, pa, pb, po, sign, deg_l, deg_r):
    """:func:`_nested_order` for a group of a few pairs: the same ``x' <= y'``
    comparisons, each code read where it lies (no operands gathered first: for
    a handful of pairs the vectorized loop's setup costs more than the pairs).
    ``(t, t)`` is skipped."""
    k = pa.shape[0]
    q = min(1, k - 1)
    neg0, st0 = _order_form(po[0])
    neg1, st1 = _order_form(po[q])
    for a in range(ml):
        t = L[a]
        v = codes[pa[0], t]
        x1 = (-v if neg0 else v) + st0
        v = codes[pa[q], t]
        x2 = (-v if neg1 else v) + st1
        c = 0
        for b in range(mr):
            u = R[b]
            w = codes[pb[0], u]
            ok = u != t and x1 <= (-w if neg0 else w)
            if ok and k > 1:
                w = codes[pb[1], u]
                ok = x2 <= (-w if neg1 else w)
            if ok:
                c += 1
                deg_r[u] += sign
        if c:
            deg_l[t] += sign * c


@njit(cache=True, nogil=True)
def _nested_order(L, ml, R, mr, codes, pa, pb, po, sign, deg_l, deg_r, qa, qb, cr, same):
    """A small group pair by pair under one or two order predicates, on codes
    gathered first: ``x op y`` becomes ``x' <= y'`` (:func:`_order_form`), so the
    inner loop is one or two
    integer comparisons over contiguous arrays.  ``(t, t)`` is skipped.
    ``same``: ``R`` is ``L`` and every predicate compares a column with itself,
    so ``y'`` is ``x'`` less ``strict`` (the codes are read once, not twice)."""
    k = pa.shape[0]
    for i in range(k):
        neg, strict = _order_form(po[i])
        for a in range(ml):
            v = codes[pa[i], L[a]]
            qa[i, a] = (-v if neg else v) + strict
        if same:
            for b in range(mr):
                qb[i, b] = qa[i, b] - strict
        else:
            for b in range(mr):
                v = codes[pb[i], R[b]]
                qb[i, b] = -v if neg else v
    for b in range(mr):
        cr[b] = 0
    y1 = qb[0]
    y2 = qb[min(1, k - 1)]
    for a in range(ml):
        t = L[a]
        c = np.int32(0)
        x1 = qa[0, a]
        # branch-free (about half the comparisons hold, at random): vectorizes
        if k == 1:
            for b in range(mr):
                ok = np.int32((x1 <= y1[b]) & (R[b] != t))
                c += ok
                cr[b] += ok
        else:
            x2 = qa[1, a]
            for b in range(mr):
                ok = np.int32((x1 <= y1[b]) & (x2 <= y2[b]) & (R[b] != t))
                c += ok
                cr[b] += ok
        if c:
            deg_l[t] += sign * c
    for b in range(mr):
        if cr[b]:
            deg_r[R[b]] += sign * cr[b]


@njit(cache=True, nogil=True)
def count_groups(
    buf,
    desc,
    codes,
    doms,
    pa,
    pb,
    po,
    nl,
    nr,
    sign,
    deg_l,
    deg_r,
    stamp,
    stamp_id,
    todo,
    nested,
    tune,
):
    """Add ``sign`` x the degrees of every group under predicates ``(pa, pb, po)``.

    ``doms[r]`` bounds the codes of code row ``r``.  A group goes pair by pair
    when it has at most ``nested`` candidate pairs (``nested_order_scale`` x that
    under one or two order predicates only) and that is cheaper than the closed
    forms (always, when none applies).
    Rows with a NULL in any code row of ``nl`` (left) / ``nr`` (right) leave their
    side first.  Groups that are neither small nor answerable in closed form
    (more than two predicates, or any non-order predicate) are flagged in
    ``todo`` and left untouched.  ``tune``: :meth:`Config.kernel_tuning`.
    Returns the last stamp id used.
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
    # (|L| + |R|) x nested_cost per term, and non-equalities cost 2^j terms
    cost = tune[NESTED_COST]
    factor = cost
    ordered = fast and k >= 1
    if ordered:
        # order predicates pair by pair run vectorized on gathered codes
        # (_nested_order), far cheaper per pair than the generic loop
        factor = tune[NESTED_ORDER_COST] * k
        nested = nested * tune[NESTED_ORDER_SCALE]
    elif not fast:
        if n_ord == 0 and n_ne == 1 and k == 1:
            factor = max(cost >> 2, 1)  # the keyed kernel answers it in closed form
        elif n_ord <= 2 and n_ord + n_ne == k:
            factor = cost << min(n_ne, 8)  # inclusion-exclusion: 2^j terms
        else:
            factor = 1 << 40  # no closed form: pair by pair wherever nested allows
    # the sides of a reflexive group hold the same rows with the same codes when
    # every predicate compares a column with itself and both drop the same NULLs
    # a reflexive group's sides are one list of rows when both drop the same NULLs
    same_nulls = nl.shape[0] == nr.shape[0]
    for i in range(nl.shape[0] if same_nulls else 0):
        same_nulls = same_nulls and nl[i] == nr[i]
    same_pred_cols = True
    for i in range(k):
        same_pred_cols = same_pred_cols and pa[i] == pb[i]
    same_cols = fast and k == 2 and same_nulls and same_pred_cols
    max_l = 0
    max_r = 0
    for g in range(desc.shape[0]):
        max_l = max(max_l, side_size(desc, g, 0))
        max_r = max(max_r, side_size(desc, g, 4))
    L = np.empty(max_l, np.int32)
    R = np.empty(max_r, np.int32)
    # int32 (codes are below 2^31 - 1, so +-code + 1 fits): twice the lanes a vector
    xs = np.empty((k, max_l if ordered else 0), np.int32)
    ys = np.empty((k, max_r if ordered else 0), np.int32)
    cnt_r = np.empty(max_r if ordered else 0, np.int32)
    for g in range(desc.shape[0]):
        ml = gather(buf, desc, g, 0, codes, nl, L)
        if ml == 0:
            continue
        refl = same_nulls and is_reflexive(desc, g)
        if refl:  # the right side is the left one: gathered once
            mr = ml
            Rg = L
        else:
            mr = gather(buf, desc, g, 4, codes, nr, R)
            if mr == 0:
                continue
            Rg = R
        if ml * mr <= nested and ml * mr <= factor * (ml + mr):
            if ordered and ml * mr <= tune[NESTED_TINY]:
                _tiny_order(L, ml, Rg, mr, codes, pa, pb, po, sign, deg_l, deg_r)
                continue
            if ordered:
                _nested_order(
                    L, ml, Rg, mr, codes, pa, pb, po, sign, deg_l, deg_r, xs, ys, cnt_r,
                    refl and same_pred_cols,
                )  # fmt: skip
                continue
            for a in range(ml):
                t = L[a]
                for b in range(mr):
                    u = Rg[b]
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
                deg_r[Rg[b]] += sign * ml
        elif k == 1:
            qa = np.empty(ml, np.int64)
            for a in range(ml):
                qa[a] = codes[pa[0], L[a]]
            pbv = np.empty(mr, np.int64)
            for b in range(mr):
                pbv[b] = codes[pb[0], Rg[b]]
            cl = np.empty(ml, np.int64)
            d = doms[pb[0]]
            if d > tune[HISTOGRAM_SPAN] * (ml + mr) + 64:
                # codes wide against the group: ranks over both sides' values (one
                # radix sort), then prefix sums of a histogram instead of sort + search
                qa, pbv, d = _union_ranks(qa, pbv, d)
            _count_one(qa, pbv, po[0], d, cl)
            cr = np.empty(mr, np.int64)
            _count_one(pbv, qa, _flip(po[0]), d, cr)
            for a in range(ml):
                deg_l[L[a]] += sign * cl[a]
            for b in range(mr):
                deg_r[Rg[b]] += sign * cr[b]
        else:
            qa1 = np.empty(ml, np.int64)
            qa2 = np.empty(ml, np.int64)
            for a in range(ml):
                qa1[a] = codes[pa[0], L[a]]
                qa2[a] = codes[pa[1], L[a]]
            cl = np.empty(ml, np.int64)
            cr = np.empty(mr, np.int64)
            d1 = doms[pb[0]]
            d2 = doms[pb[1]]
            if same_cols and refl:  # the right side is the left one
                if d1 >= d2:
                    _count_two_same(qa1, qa2, po[0], po[1], d1, d2, cl, cr, tune)
                else:
                    _count_two_same(qa2, qa1, po[1], po[0], d2, d1, cl, cr, tune)
            else:
                pb1 = np.empty(mr, np.int64)
                pb2 = np.empty(mr, np.int64)
                for b in range(mr):
                    pb1[b] = codes[pb[0], Rg[b]]
                    pb2[b] = codes[pb[1], Rg[b]]
                if d1 >= d2:  # sweep on the larger domain, Fenwick tree over the smaller
                    _count_two(qa1, qa2, pb1, pb2, po[0], po[1], d1, d2, cl, cr, tune)
                else:
                    _count_two(qa2, qa1, pb2, pb1, po[1], po[0], d2, d1, cl, cr, tune)
            for a in range(ml):
                deg_l[L[a]] += sign * cl[a]
            for b in range(mr):
                deg_r[Rg[b]] += sign * cr[b]
        # take off the pairs (t, t)
        stamp_id += 1
        for b in range(mr):
            stamp[Rg[b]] = stamp_id
        for a in range(ml):
            t = L[a]
            if stamp[t] == stamp_id and holds(codes, pa, pb, po, 0, t, t):
                deg_l[t] -= sign
                deg_r[t] -= sign
    return stamp_id


@njit(cache=True, nogil=True, inline="always")
def _slot(keys, mask, v):
    """The slot of code ``v`` in an open-addressing table (empty slots hold -1)."""
    h = (np.uint64(v) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    s = np.int64(h) & mask
    while keys[s] != -1 and keys[s] != v:
        s = (s + 1) & mask
    return s


@njit(cache=True, nogil=True)
def _tally(rows, m, k, direct, cnt, seen, key, keys, tcnt, mask):
    """Count the codes ``k[rows[:m]]``: into the code-indexed ``cnt`` (valid
    where ``seen == key``) when ``direct``, else into the table ``keys/tcnt``
    (cleared here up to ``mask``)."""
    if direct:
        for j in range(m):
            v = k[rows[j]]
            if seen[v] != key:
                seen[v] = key
                cnt[v] = 0
            cnt[v] += 1
        return
    for s in range(mask + 1):
        keys[s] = -1
    for j in range(m):
        v = k[rows[j]]
        s = _slot(keys, mask, v)
        if keys[s] == -1:
            keys[s] = v
            tcnt[s] = 0
        tcnt[s] += 1


@njit(cache=True, nogil=True)
def _lookup(rows, m, k, direct, cnt, seen, key, keys, tcnt, mask, out):
    """``out[i]`` = how often code ``k[rows[i]]`` was counted by the last
    :func:`_tally` (one loop per storage: a branch inside it costs 3x)."""
    if direct:
        for i in range(m):
            v = k[rows[i]]
            out[i] = cnt[v] if seen[v] == key else 0
        return
    for i in range(m):
        v = k[rows[i]]
        s = _slot(keys, mask, v)
        out[i] = tcnt[s] if keys[s] == v else 0


@njit(cache=True, nogil=True)
def count_keyed(
    buf, desc, codes, ra, rb, dom, ne, sign, deg_l, deg_r, stamp, stamp_id, tune, storage=0
):
    """Degrees of every group under one final equality (``ne=False``) or
    non-equality (``ne=True``, the functional-dependency shape)
    ``t.<ra> op t'.<rb>``, in closed form and without sorting: per group, one
    pass counts the codes of each side, then ``deg(t) = c(t)`` for an equality
    and ``|other side| - c(t)`` for a non-equality, where ``c(t)`` counts the
    rows of the other side with ``t``'s code.  Codes are counted in a
    code-indexed array while it stays in cache (a domain of at most
    ``Config.keyed_direct_codes``, or a group about as big as the domain), else
    in an open-addressing table sized to the group (``storage``: 0 chooses, 1
    forces the array, 2 the table).  Only
    non-zero degrees are written.  O(|L| + |R|) per group.
    Returns the last stamp id used."""
    max_l = 0
    max_r = 0
    for g in range(desc.shape[0]):
        max_l = max(max_l, side_size(desc, g, 0))
        max_r = max(max_r, side_size(desc, g, 4))
    big = max(max_l, max_r)
    small_dom = storage == 1 or (storage == 0 and dom <= tune[KEYED_DIRECT_CODES])
    any_direct = small_dom or (storage == 0 and 2 * big >= dom)
    cnt = np.zeros(max(dom, 1) if any_direct else 1, np.int64)
    seen = np.full(max(dom, 1) if any_direct else 1, -1, np.int64)
    cap = 1
    if not small_dom:
        while cap < 2 * big:
            cap <<= 1
    keys = np.empty(cap, np.int64)
    tcnt = np.empty(cap, np.int64)
    L = np.empty(max_l, np.int32)
    R = np.empty(max_r, np.int32)
    C = np.empty(max(max_l, max_r), np.int64)
    nn_a = np.empty(1, np.int64)
    nn_a[0] = ra
    nn_b = np.empty(1, np.int64)
    nn_b[0] = rb
    ka = codes[ra]
    kb = codes[rb]
    key = -1
    for g in range(desc.shape[0]):
        ml = gather(buf, desc, g, 0, codes, nn_a, L)
        if ml == 0:
            continue
        shared = ra == rb and is_reflexive(desc, g)
        if shared:
            mr = ml
            Rg = L
        else:
            mr = gather(buf, desc, g, 4, codes, nn_b, R)
            Rg = R
        if mr == 0:
            continue
        m = max(ml, mr)
        direct = small_dom or (storage == 0 and 2 * m >= dom)
        mask = 0
        if not direct:
            size = 1
            while size < 2 * m:
                size <<= 1
            mask = size - 1
        # left rows against the right side's code counts
        key += 1
        _tally(Rg, mr, kb, direct, cnt, seen, key, keys, tcnt, mask)
        _lookup(L, ml, ka, direct, cnt, seen, key, keys, tcnt, mask, C)
        for i in range(ml):
            t = L[i]
            c = C[i]
            if shared:  # the same rows and codes: equal right degrees; (t, t) is
                d = ml - c if ne else c - 1  # in c for an equality, never for ne
                if d != 0:
                    deg_l[t] += sign * d
                    deg_r[t] += sign * d
            else:
                d = mr - c if ne else c
                if d != 0:
                    deg_l[t] += sign * d
        if shared:
            continue
        key += 1
        _tally(L, ml, ka, direct, cnt, seen, key, keys, tcnt, mask)
        _lookup(Rg, mr, kb, direct, cnt, seen, key, keys, tcnt, mask, C)
        for j in range(mr):
            u = Rg[j]
            c = C[j]
            d = ml - c if ne else c
            if d != 0:
                deg_r[u] += sign * d
        # take off the pairs (t, t) the counts included
        stamp_id += 1
        for j in range(mr):
            stamp[Rg[j]] = stamp_id
        for i in range(ml):
            t = L[i]
            if stamp[t] == stamp_id and (ka[t] != kb[t]) == ne:
                deg_l[t] -= sign
                deg_r[t] -= sign
    return stamp_id


@njit(cache=True, nogil=True)
def degree_totals(deg_l, deg_r):
    """``(violations, rows involved)`` of a DC's degrees: the sum of ``deg_l`` and
    the rows with a positive degree on either side, in one pass."""
    total = 0
    rows = 0
    for t in range(deg_l.shape[0]):
        a = deg_l[t]
        total += a
        rows += (a > 0) | (deg_r[t] > 0)
    return total, rows


@njit(cache=True, nogil=True)
def sparse_degree_totals(n, lt, deg_l, rt, deg_r):
    """:func:`degree_totals` of degrees given by tid (``deg_l[i]`` is row
    ``lt[i]``'s share, never negative; a row may hold several shares a side):
    the rows involved marked in a bitmap of ``n`` bits, not arrays of ``n``
    degrees."""
    bits = np.zeros((n >> 3) + 1, np.uint8)
    total = 0
    rows = 0
    for side in range(2):
        tids = lt if side == 0 else rt
        deg = deg_l if side == 0 else deg_r
        for i in range(tids.shape[0]):
            if side == 0:
                total += deg[i]
            if deg[i] > 0:
                t = tids[i]
                b = np.uint8(1 << (t & 7))
                if not bits[t >> 3] & b:
                    bits[t >> 3] |= b
                    rows += 1
    return total, rows


@njit(cache=True, nogil=True)
def scatter_degrees(out, tids, deg):
    """``out[tids[i]] += deg[i]``: degrees by position spread over the table (a
    row may be in several tid sets)."""
    for i in range(tids.shape[0]):
        out[tids[i]] += deg[i]
