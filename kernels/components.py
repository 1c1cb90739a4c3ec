"""Connected components of the conflict graph by union-find over blocks
(BigDansing §5's independent violation components; docs/outputs.md
``components``).

A block ``(L, R)`` stands for every pair ``(a, b)``, ``a`` in ``L``, ``b`` in
``R``, ``a != b``; when ``L ∪ R`` holds two rows or more those pairs connect all
of it, so a block is joined in ``O(|L| + |R|)`` -- never pair by pair.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.common import rows_within
from facet.kernels.expand import _first, _next
from facet.kernels.jit import njit


@njit(cache=True, nogil=True)
def _find(parent, x):
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:  # path compression
        nxt = parent[x]
        parent[x] = root
        x = nxt
    return root


@njit(cache=True, nogil=True)
def _union(parent, a, b):
    ra = _find(parent, a)
    rb = _find(parent, b)
    if ra != rb:
        if ra < rb:  # the smaller tid is the root: roots are components' least rows
            parent[rb] = ra
        else:
            parent[ra] = rb


@njit(cache=True, nogil=True)
def union_blocks(parent, seen, left_off, left, right_off, right):
    """Join the rows of every block ``(left[left_off[k]:left_off[k+1]],
    right[...])`` that holds a pair; mark every row of such a block in ``seen``.
    Rows are dense positions below ``parent``'s length (IndexError otherwise)."""
    n = parent.shape[0]
    if not (rows_within(left, n) and rows_within(right, n)):
        raise IndexError("union_blocks: a row outside 0..rows-1")
    for k in range(left_off.shape[0] - 1):
        ls, le = left_off[k], left_off[k + 1]
        rs, re = right_off[k], right_off[k + 1]
        if le == ls or re == rs:
            continue
        first = left[ls]
        two = False  # does L ∪ R hold a second row?
        for i in range(ls, le):
            if left[i] != first:
                two = True
                break
        if not two:
            for i in range(rs, re):
                if right[i] != first:
                    two = True
                    break
        if not two:
            continue
        for i in range(ls, le):
            seen[left[i]] = True
            _union(parent, first, left[i])
        for i in range(rs, re):
            seen[right[i]] = True
            _union(parent, first, right[i])


@njit(cache=True, nogil=True)
def union_groups(parent, seen, buf, desc):
    """:func:`union_blocks` over groups as the engine holds them: side ``s`` (0
    left, 4 right) of group ``g`` is ``buf[desc[g, s]:desc[g, s+1]]`` without
    the hole ``desc[g, s+2]:desc[g, s+3]`` -- no lists are made."""
    for g in range(desc.shape[0]):
        ls, le, lhs, lhe = desc[g, 0], desc[g, 1], desc[g, 2], desc[g, 3]
        rs, re, rhs, rhe = desc[g, 4], desc[g, 5], desc[g, 6], desc[g, 7]
        a = _first(ls, lhs, lhe)
        b = _first(rs, rhs, rhe)
        if a >= le or b >= re:
            continue
        first = buf[a]
        two = False  # does L ∪ R hold a second row?
        i = a
        while i < le and not two:
            two = buf[i] != first
            i = _next(i, lhs, lhe)
        i = b
        while i < re and not two:
            two = buf[i] != first
            i = _next(i, rhs, rhe)
        if not two:
            continue
        i = a
        while i < le:
            seen[buf[i]] = True
            _union(parent, first, buf[i])
            i = _next(i, lhs, lhe)
        i = b
        while i < re:
            seen[buf[i]] = True
            _union(parent, first, buf[i])
            i = _next(i, rhs, rhe)


@njit(cache=True, nogil=True)
def union_pairs(parent, seen, t1, t2):
    """Join the two rows of every pair (``t2`` -1: a single row, marked only).  Rows
    are dense positions below ``parent``'s length (IndexError otherwise)."""
    n = parent.shape[0]
    if not (rows_within(t1, n) and rows_within(t2, n, True)):
        raise IndexError("union_pairs: a row outside 0..rows-1")
    for k in range(t1.shape[0]):
        seen[t1[k]] = True
        if t2[k] >= 0:
            seen[t2[k]] = True
            _union(parent, t1[k], t2[k])


@njit(cache=True, nogil=True)
def component_labels(parent, seen):
    """For the marked rows in tid order: ``(tids, component, size)`` with
    components numbered 0, 1, ... in the order of their least row."""
    n = parent.shape[0]
    label = np.full(n, -1, np.int64)
    size = np.zeros(n, np.int64)
    m = 0
    for t in range(n):
        if seen[t]:
            m += 1
            size[_find(parent, t)] += 1
    tids = np.empty(m, np.int64)
    comp = np.empty(m, np.int64)
    sizes = np.empty(m, np.int64)
    next_label = 0
    j = 0
    for t in range(n):
        if not seen[t]:
            continue
        r = _find(parent, t)
        if label[r] < 0:
            label[r] = next_label
            next_label += 1
        tids[j] = t
        comp[j] = label[r]
        sizes[j] = size[r]
        j += 1
    return tids, comp, sizes


@njit(cache=True, nogil=True)
def _heap_push(hk, hv, size, key, val):
    i = size
    hk[i] = key
    hv[i] = val
    while i > 0:
        up = (i - 1) >> 1
        if hk[up] >= hk[i]:
            break
        hk[up], hk[i] = hk[i], hk[up]
        hv[up], hv[i] = hv[i], hv[up]
        i = up
    return size + 1


@njit(cache=True, nogil=True)
def _heap_pop(hk, hv, size):
    size -= 1
    hk[0] = hk[size]
    hv[0] = hv[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and hk[c + 1] > hk[c]:
            c += 1
        if hk[i] >= hk[c]:
            break
        hk[c], hk[i] = hk[i], hk[c]
        hv[c], hv[i] = hv[i], hv[c]
        i = c
    return size


@njit(cache=True, nogil=True)
def _events(buf, d, s, codes, rows, k, s1, s2, slot, alone, ev, row, second, m):
    """Side ``s`` (0 left, 4 right) of a group (``d``: its descriptor) as sweep
    events from ``m`` on: sort key ``2 * s1 * first operand + slot``, the row, and
    the second operand oriented by ``s2`` (``alone`` with one predicate); rows NULL
    in an operand are left out.  The next free event."""
    i = _first(d[s], d[s + 2], d[s + 3])
    while i < d[s + 1]:
        t = buf[i]
        v1 = codes[rows[0], t]
        v2 = codes[rows[k - 1], t]
        if v1 >= 0 and v2 >= 0:
            ev[m] = 2 * (s1 * np.int64(v1)) + slot
            row[m] = t
            second[m] = s2 * np.int64(v2) if k == 2 else alone
            m += 1
        i = _next(i, d[s + 2], d[s + 3])
    return m


@njit(cache=True, nogil=True)
def _event_order(ev, m, counts):
    """The order of ``ev[:m]``: a counting sort when the keys span at most
    ``len(counts)`` values (codes are dense ranks, so a large group's keys mostly
    do: linear, where an argsort of millions of events dominated the walk), else
    an argsort."""
    lo, span = _span(ev, m)
    if m < 64 or span > counts.shape[0] or span > 4 * m + 2:
        return np.argsort(ev[:m])
    order = np.empty(m, np.int64)
    _counting_pass(ev, lo, span, np.arange(m), order, counts)
    return order


@njit(cache=True, nogil=True)
def _span(keys, m):
    """The least of ``keys[:m]`` and how many values they span."""
    lo = keys[0]
    hi = keys[0]
    for j in range(1, m):
        lo = min(lo, keys[j])
        hi = max(hi, keys[j])
    return lo, hi - lo + 1


@njit(cache=True, nogil=True)
def _same_sides(buf, d):
    """Whether a group's two sides (``d``: its descriptor) hold the same rows in
    the same order (an unscoped run's groups do)."""
    i = _first(d[0], d[2], d[3])
    j = _first(d[4], d[6], d[7])
    while i < d[1] and j < d[5]:
        if buf[i] != buf[j]:
            return False
        i = _next(i, d[2], d[3])
        j = _next(j, d[6], d[7])
    return i >= d[1] and j >= d[5]


@njit(cache=True, nogil=True)
def _counting_pass(keys, lo, span, src, dst, counts):
    """Stable counting sort of the positions ``src`` by ``keys[src] - lo`` into ``dst``."""
    c = counts[:span]
    c[:] = 0
    for j in range(src.shape[0]):
        c[keys[src[j]] - lo] += 1
    total = 0
    for v in range(span):
        n = c[v]
        c[v] = total
        total += n
    for j in range(src.shape[0]):
        v = keys[src[j]] - lo
        dst[c[v]] = src[j]
        c[v] += 1


@njit(cache=True, nogil=True)
def _union_inversions(parent, seen, buf, d, codes, cx, cy, sx, sy, strict1, strict2, counts):
    """Components of a group whose two sides are one row set, under ``t.X op1 t'.X
    and t.Y op2 t'.Y`` oriented as ``x(a) > x(b)`` and ``y(a) < y(b)`` (``>=``,
    ``<=`` where not strict; ``x = sx * X``, ``y = sy * Y``), in linear time after
    one sort.  In the order by ``x`` (ties: by ``y`` ascending when both are
    strict, else descending), the violations are exactly the inversions of ``y``
    (``y(i) > y(j)`` for ``i`` before ``j``; ``>=`` when neither is strict), and
    the components of an inversion graph are intervals: a component ends where
    every ``y`` before is below every ``y`` after (at most, when strict)."""
    m = 0
    i = _first(d[0], d[2], d[3])
    while i < d[1]:
        t = buf[i]
        if codes[cx, t] >= 0 and codes[cy, t] >= 0:
            m += 1
        i = _next(i, d[2], d[3])
    if m < 2:
        return
    rows = np.empty(m, np.int64)
    x = np.empty(m, np.int64)
    y = np.empty(m, np.int64)
    swap = strict1 and not strict2  # x > x', y <= y': as y' >= y, x' < x (-y, -x)
    m = 0
    i = _first(d[0], d[2], d[3])
    while i < d[1]:
        t = buf[i]
        vx = codes[cx, t]
        vy = codes[cy, t]
        if vx >= 0 and vy >= 0:
            rows[m] = t
            if swap:
                x[m] = -sy * np.int64(vy)
                y[m] = -sx * np.int64(vx)
            else:
                x[m] = sx * np.int64(vx)
                y[m] = sy * np.int64(vy)
            m += 1
        i = _next(i, d[2], d[3])
    both_strict = strict1 and strict2
    nonstrict = not strict1 and not strict2
    tie = np.empty(m, np.int64)  # the tie order's key: y ascending or descending
    for j in range(m):
        tie[j] = y[j] if both_strict else -y[j]
    xlo, xspan = _span(x, m)
    tlo, tspan = _span(tie, m)
    if m >= 64 and max(xspan, tspan) <= min(counts.shape[0], 4 * m + 2):
        step = np.arange(m)
        order = np.empty(m, np.int64)
        _counting_pass(tie, tlo, tspan, step, order, counts)  # (LSD: ties, then x)
        _counting_pass(x, xlo, xspan, order, step, counts)
        order = step
    else:
        key = np.empty(m, np.int64)
        for j in range(m):
            key[j] = (x[j] - xlo) * tspan + (tie[j] - tlo)
        order = np.argsort(key)
    low = np.empty(m, np.int64)  # the least y from each position on
    low[m - 1] = y[order[m - 1]]
    for j in range(m - 2, -1, -1):
        low[j] = min(low[j + 1], y[order[j]])
    start = 0
    high = y[order[0]]
    for j in range(m):
        high = max(high, y[order[j]])
        if j < m - 1 and (high > low[j + 1] or (nonstrict and high == low[j + 1])):
            continue  # a violation crosses: the component goes on
        root = rows[order[start]]
        two = False
        for q in range(start + 1, j + 1):
            if rows[order[q]] != root:
                two = True
                break
        if two:
            for q in range(start, j + 1):
                r = rows[order[q]]
                seen[r] = True
                _union(parent, root, r)
        start = j + 1
        if j < m - 1:
            high = y[order[j + 1]]


@njit(cache=True, nogil=True)
def union_dominance(parent, seen, buf, desc, codes, pa, pb, po):
    """Join the rows of every violation of one or two order predicates ``t.x_k op_k
    t'.y_k`` (``pa``/``pb``: code rows, ``po``: operator codes, 2-5) inside each group
    ``(L, R)`` (as :func:`union_groups` reads them), without listing pairs or blocks.

    A sweep over the group's rows by the first predicate's values puts every ``t'``
    row ``b`` that the first predicate admits for the next ``t`` row ``a`` into a
    max-heap keyed by its second operand (oriented so that the second predicate
    reads ``key(b) > v(a)``, or ``>=``).  ``a`` violates with exactly the heap's
    rows above ``v(a)``: they are popped and joined with ``a``, and the one with
    the largest key is pushed back for them all -- a later row that reaches any of
    them reaches that one, and it is in their component.  Each row is pushed once
    and each ``t`` row pushes back once: ``O((|L| + |R|) log)`` per group.  A popped
    row equal to ``a`` (the pair ``(a, a)``) joins nothing.  Rows NULL in an
    operand take no part.  A group whose sides are one row set, under two
    predicates over the same columns on both sides, takes
    :func:`_union_inversions` instead (no heap)."""
    k = pa.shape[0]
    s1 = 1 if po[0] >= 4 else -1  # > >=: the t' value below; < <=: above (negated)
    strict1 = po[0] == 2 or po[0] == 4
    s2 = 1
    strict2 = True
    if k == 2:
        s2 = 1 if po[1] <= 3 else -1  # < <=: the t' value above v; > >=: below (negated)
        strict2 = po[1] == 2 or po[1] == 4
    big = 0
    for g in range(desc.shape[0]):
        m = (desc[g, 1] - desc[g, 0]) - (desc[g, 3] - desc[g, 2])
        m += (desc[g, 5] - desc[g, 4]) - (desc[g, 7] - desc[g, 6])
        big = max(big, m)
    ev = np.empty(big, np.int64)  # event sort keys: 2 * first key + (0 or 1)
    row = np.empty(big, np.int64)
    second = np.empty(big, np.int64)
    hk = np.empty(big + 1, np.int64)
    hv = np.empty(big + 1, np.int64)
    counts = np.empty(4 * big + 2, np.int64)  # (a counting sort's, when keys are dense)
    # at equal first keys, strict: t rows (queries) first; else t' rows (insertions) first
    q_slot = 0 if strict1 else 1
    i_slot = 1 - q_slot
    same_columns = k == 2 and pa[0] == pb[0] and pa[1] == pb[1]
    for g in range(desc.shape[0]):
        if same_columns and _same_sides(buf, desc[g]):
            _union_inversions(
                parent, seen, buf, desc[g], codes, pa[0], pa[1], s1, s2, strict1, strict2, counts
            )
            continue
        # t rows: queries at x1 with v = x2; t' rows: insertions at y1 keyed by y2
        m = _events(buf, desc[g], 0, codes, pa, k, s1, s2, q_slot, 0, ev, row, second, 0)
        m = _events(buf, desc[g], 4, codes, pb, k, s1, s2, i_slot, 1, ev, row, second, m)
        if m < 2:
            continue
        order = _event_order(ev, m, counts)
        size = 0
        for j in range(m):
            e = order[j]
            if (ev[e] & 1) == i_slot:
                size = _heap_push(hk, hv, size, second[e], row[e])
                continue
            a = row[e]
            v = second[e]
            top_key = 0
            top_row = -1
            while size > 0 and (hk[0] > v or (not strict2 and hk[0] == v)):
                b = hv[0]
                if top_row < 0:
                    top_key, top_row = hk[0], b
                size = _heap_pop(hk, hv, size)
                if b != a:
                    seen[a] = True
                    seen[b] = True
                    _union(parent, a, b)
            if top_row >= 0:
                size = _heap_push(hk, hv, size, top_key, top_row)
    return big
