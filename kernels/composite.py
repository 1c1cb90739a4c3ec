"""Key and functional-dependency counts of one pair of tid sets over composite
codes: a count plan's equality refinements and its keyed sink in one pass
(paper §3.2 and §5, fused; docs/architecture.md "Kernels").

A count plan whose sink is keyed -- the key shape ``t.A = t'.A and t.B = t'.B``
and the FD shape ``t.A = t'.A and t.B != t'.B`` -- refines its equalities only
to tally codes per group.  Over one pair of tid sets ``(L, R)`` (the initial
pairs) :func:`count_composite` never builds those groups: each side's codes of
the equality prefix become one dense composite id per row (a direct table while
``ids x domain`` stays small, else an open-addressing table), both sides are
counting-sorted by id, and each id's final codes are tallied in a code-indexed
array.  O(|L| + |R| + ids + domain), one allocation of each array per call.

Before it, the engine drops the rows a cross-column equality leaves without a
partner (:func:`partnered`, a semi-join: under ``t.A = t'.B`` most rows of a key
joined to a foreign key find none) and, on several threads, cuts the rest into
ranges of the first equality's codes (:func:`split_by_code`).
"""

from __future__ import annotations

import numpy as np

from facet.kernels.jit import njit
from facet.kernels.refine import count_codes

#: Fibonacci hashing multiplier (2^64 / golden ratio)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def _level(ids_l, ids_r, row_l, lt, row_r, rt, nid, dom):
    """Ids of ``(id, code)`` per row of both sides -- the codes ``row_l[lt[i]]`` /
    ``row_r[rt[i]]``, read where they lie (no copy) --, dense from 0 in the order
    first seen (-1 where either is NULL); returns how many ids there are.  The
    pairs are looked up in a direct table over ``nid x dom`` while that stays
    within a few times the rows, else in an open-addressing table."""
    nl = ids_l.shape[0]
    nr = ids_r.shape[0]
    span = nid * dom
    direct = span <= max(4 * (nl + nr), 1 << 16)
    cap = 1
    bits = 0
    while not direct and cap < 2 * (nl + nr):
        cap <<= 1
        bits += 1
    table = np.full(max(span, 1) if direct else 1, -1, np.int32)
    keys = np.full(cap, -1, np.int64)
    vals = np.empty(cap, np.int32)
    shift = np.uint64(64 - max(bits, 1))
    mask = cap - 1
    nxt = 0
    for side in range(2):
        ids = ids_l if side == 0 else ids_r
        row = row_l if side == 0 else row_r
        tids = lt if side == 0 else rt
        for i in range(ids.shape[0]):
            a = ids[i]
            c = row[tids[i]]
            if a < 0 or c < 0:
                ids[i] = -1
                continue
            k = np.int64(a) * dom + c
            if direct:
                v = table[k]
                if v < 0:
                    v = nxt
                    table[k] = v
                    nxt += 1
                ids[i] = v
                continue
            s = np.int64((np.uint64(k) * _GOLDEN) >> shift) & mask
            while keys[s] >= 0 and keys[s] != k:
                s = (s + 1) & mask
            if keys[s] < 0:
                keys[s] = k
                vals[s] = nxt
                nxt += 1
            ids[i] = vals[s]
    return nxt


@njit(cache=True, nogil=True)
def _composite_ids(lt, rt, codes, ea, eb, doms, rows):
    """Dense composite ids of the rows ``lt`` under the codes of ``ea`` and of
    the rows ``rt`` under those of ``eb`` (domains ``doms``), in one id space
    (:func:`_level` a column at a time; -1 where a code is NULL); the first
    column's codes are the ids as they are while its domain is within a few
    times ``rows``.  Returns ``(ids_l, ids_r, ids)`` (int32: tids, codes and ids
    stay below 2^31; a fresh array's pages cost about as much to fault in as
    the pass that fills them)."""
    nl = lt.shape[0]
    nr = rt.shape[0]
    k = ea.shape[0]
    first = k > 0 and doms[0] <= max(4 * rows, 1 << 16)
    if k == 1 and first and nr == 0 and _every_row(lt, codes.shape[1]):
        # one key column over every row, in row order: its codes are the ids (no copy)
        return codes[ea[0]], np.empty(0, np.int32), max(doms[0], 1)
    ids_l = np.empty(nl, np.int32)
    ids_r = np.empty(nr, np.int32)
    if not first:
        ids_l[:] = 0
        ids_r[:] = 0
    nid = 1
    for j in range(k):
        if j == 0 and first:  # the first column's codes are the ids as they are
            for i in range(nl):
                ids_l[i] = codes[ea[0], lt[i]]
            for i in range(nr):
                ids_r[i] = codes[eb[0], rt[i]]
            nid = max(doms[0], 1)
        else:
            nid = max(_level(ids_l, ids_r, codes[ea[j]], lt, codes[eb[j]], rt, nid, doms[j]), 1)
    return ids_l, ids_r, nid


@njit(cache=True, nogil=True, inline="always")
def _every_row(tids, n):
    """Whether ``tids`` is every row of an ``n``-row table in row order."""
    if tids.shape[0] != n:
        return False
    for i in range(n):  # noqa: SIM110 - a numba loop, not a generator
        if tids[i] != i:
            return False
    return True


@njit(cache=True, nogil=True)
def _sort_by_id(ids, tids, codes, row, nid):
    """Offsets (``nid + 1``), then the positions in ``tids`` and their codes in
    ``row``, of the rows with an id, sorted by id (a counting sort; the offsets
    are their own fill pointers: no copy)."""
    start = np.zeros(nid + 2, np.int32)  # (tids, codes and ids fit int32: half the memory)
    for i in range(ids.shape[0]):
        if ids[i] >= 0:
            start[ids[i] + 2] += 1
    for v in range(nid):
        start[v + 2] += start[v + 1]
    out_t = np.empty(start[nid + 1], np.int32)
    out_c = np.empty(start[nid + 1], np.int32)
    for i in range(ids.shape[0]):
        v = ids[i]
        if v >= 0:
            p = start[v + 1]
            out_t[p] = i
            out_c[p] = codes[row, tids[i]]
            start[v + 1] = p + 1
    return start[: nid + 1], out_t, out_c


@njit(cache=True, nogil=True)
def group_composite(tids, codes, rows, doms):
    """``tids`` (one reflexive group) grouped by their codes in every row of
    ``rows`` (domains ``doms``; a NULL in any: in no group): the codes as dense
    composite ids (:func:`_level`, as :func:`count_composite` builds them), then
    one counting sort by id -- several leading equalities in one pass, however
    wide the product of their domains.  Returns ``(buf, desc)``: the tids (int32)
    by id, and a reflexive descriptor for each run of two tids or more."""
    m = tids.shape[0]
    ids, _, nid = _composite_ids(tids, tids[:0], codes, rows, rows, doms, m)
    # a stable counting sort of the tids by id (offsets their own fill pointers)
    start = np.zeros(nid + 2, np.int64)
    for i in range(m):
        if ids[i] >= 0:
            start[ids[i] + 2] += 1
    for v in range(nid):
        start[v + 2] += start[v + 1]
    buf = np.empty(start[nid + 1], np.int32)
    for i in range(m):
        v = ids[i]
        if v >= 0:
            buf[start[v + 1]] = tids[i]
            start[v + 1] += 1
    runs = 0
    for v in range(nid):
        runs += start[v + 1] - start[v] >= 2
    desc = np.empty((runs, 8), np.int64)
    r = 0
    for v in range(nid):
        s, e = start[v], start[v + 1]
        if e - s >= 2:
            desc[r, 0] = desc[r, 2] = desc[r, 3] = desc[r, 4] = s
            desc[r, 6] = desc[r, 7] = s
            desc[r, 1] = desc[r, 5] = e
            r += 1
    return buf, desc


@njit(cache=True, nogil=True, inline="always")
def _slot(c, mark, mask, hkey, hmark):
    """``c``'s slot in the open-addressing table of tally ``mark``."""
    h = np.int64((np.uint64(c) * _GOLDEN) >> np.uint64(32)) & mask
    while hmark[h] == mark and hkey[h] != c:
        h = (h + 1) & mask
    return h


@njit(cache=True, nogil=True, inline="always")
def _tallies(dom, direct_codes, big):
    """The arrays :func:`_tally_lookup` tallies in, for runs of at most ``big``
    rows: code-indexed stamps and counts while the domain is small (or a run
    about as big), else an open-addressing table sized to the biggest run.
    ``(small domain, stamp, cnt, hkey, hmark, hcnt)``."""
    small_dom = dom <= direct_codes
    size = max(dom, 1) if small_dom or 2 * big >= dom else 1
    cap = 1
    while cap < 2 * big:
        cap <<= 1
    return (
        small_dom,
        np.full(size, -1, np.int32),
        np.zeros(size, np.int32),
        np.empty(cap, np.int32),
        np.full(cap, -1, np.int32),
        np.empty(cap, np.int32),
    )


@njit(cache=True, nogil=True, inline="always")
def _tally_lookup(ac, a0, a1, bc, bt, b0, b1, deg, ne, direct, mark, stamp, cnt, hkey, hmark, hcnt):
    """Tally the codes ``ac[a0:a1]``, then add to ``deg[bt[p]]`` the tallied rows
    each ``bc[p]`` (``p`` in ``b0:b1``) pairs with: its code's count (equality)
    or the rows with another code (``ne``).  Returns the sum added to ``deg``."""
    mask = 1
    while mask < 2 * (a1 - a0):
        mask <<= 1
    mask -= 1
    known = 0  # the tallied rows with a code
    for p in range(a0, a1):
        c = ac[p]
        if c < 0:
            continue
        known += 1
        if direct:
            if stamp[c] != mark:
                stamp[c] = mark
                cnt[c] = 0
            cnt[c] += 1
        else:
            h = _slot(c, mark, mask, hkey, hmark)
            if hmark[h] != mark:
                hmark[h] = mark
                hkey[h] = c
                hcnt[h] = 0
            hcnt[h] += 1
    total = 0
    for p in range(b0, b1):
        c = bc[p]
        if c < 0:
            continue
        if direct:
            same = cnt[c] if stamp[c] == mark else 0
        else:
            h = _slot(c, mark, mask, hkey, hmark)
            same = hcnt[h] if hmark[h] == mark else 0
        d = known - same if ne else same
        if d != 0:
            deg[bt[p]] += d
            total += d
    return total


@njit(cache=True, nogil=True)
def partnered(lt, rt, codes, ea, eb, doms, ra, rb, dom, ne, out_l, out_r):
    """``lt`` and ``rt`` less the rows no row of the other side can pair with: a
    semi-join on every cross-column equality (and on a cross-column equality
    sink) in turn -- a row whose code the other side's remaining rows never
    hold, or a NULL, is in no pair.  Same-column equalities over one tid set
    keep every row, so they are not looked at.  The sides come back as sets: a
    side of every row (``codes.shape[1]`` distinct tids) is read in row order,
    and what is kept of it is ascending.  A side cut is written to ``out_l`` /
    ``out_r`` (as long as the side; the caller's memory, e.g. on huge pages),
    and cut again in place."""
    n = codes.shape[1]
    la, lb, ld = _links(ea, eb, doms, ra, rb, dom, ne, lt.shape[0] + rt.shape[0])
    if lt.shape[0] == n and rt.shape[0] == n and la.shape[0] and _symmetric(la, lb):
        return _partnered_whole(lt, rt, codes, la, lb, ld, out_l)
    for j in range(la.shape[0]):
        a, b, d = la[j], lb[j], ld[j]
        on_l = _marks(lt, codes[a], d)
        on_r = _marks(rt, codes[b], d)
        drop_l = drop_r = False
        for c in range(on_l.shape[0]):
            drop_l |= on_l[c] and not on_r[c]
            drop_r |= on_r[c] and not on_l[c]
        if drop_l:
            lt = _present(lt, codes[a], on_r, out_l)
        if drop_r:
            rt = _present(rt, codes[b], on_l, out_r)
    return lt, rt


@njit(cache=True, nogil=True)
def _links(ea, eb, doms, ra, rb, dom, ne, rows):
    """The cross-column equalities :func:`partnered` semi-joins on (the sink's
    last unless ``ne``), as ``(a, b, domain)`` arrays: not ``a == b``, nor a
    domain far above the ``rows`` of both sides (no table worth its size)."""
    k = ea.shape[0]
    la = np.empty(k + 1, np.int64)
    lb = np.empty(k + 1, np.int64)
    ld = np.empty(k + 1, np.int64)
    m = 0
    for j in range(k + 1):
        if j < k:
            a, b, d = ea[j], eb[j], doms[j]
        elif not ne:
            a, b, d = ra, rb, dom
        else:
            break
        if a == b or d > 4 * rows + (1 << 16):
            continue
        la[m], lb[m], ld[m] = a, b, d
        m += 1
    return la[:m], lb[:m], ld[:m]


@njit(cache=True, nogil=True)
def _symmetric(la, lb):
    """Whether every link ``(a, b)`` comes with ``(b, a)`` (φ10's ``t.A = t'.B
    and t.B = t'.A``)."""
    for i in range(la.shape[0]):
        found = False
        for j in range(la.shape[0]):
            found |= la[j] == lb[i] and lb[j] == la[i]
        if not found:
            return False
    return True


@njit(cache=True, nogil=True)
def _partnered_whole(lt, rt, codes, la, lb, ld, out):
    """:func:`partnered` where both sides hold every row and the links are
    symmetric: a row of either side needs, for every link ``(a, b)`` where ``a``
    holds a code ``b`` lacks, its code in ``a`` among the codes of ``b`` -- one
    condition for both sides, so each column's codes are marked once, and the
    rows are kept once (ascending, in ``out``: the first such link over every
    row, the next over the rows kept) and returned as both sides; the sides as
    they came when no code lacks a partner."""
    m = la.shape[0]
    n = codes.shape[1]
    # each column's codes, marked once over every row (a flat array, by column)
    off = np.zeros(m + 1, np.int64)
    for i in range(m):
        off[i + 1] = off[i] + max(ld[i], 1)
    on = np.zeros(off[m], np.bool_)
    for i in range(m):
        col = codes[la[i]]
        o = off[i]
        for t in range(n):
            c = col[t]
            if c >= 0:
                on[o + c] = True
    kept = -1  # (every row)
    for i in range(m):
        at = 0  # where the link's b is marked (b is some link's a: they are symmetric)
        for j in range(m):
            if la[j] == lb[i]:
                at = off[j]
        drop = False
        for c in range(ld[i]):
            drop |= on[off[i] + c] and not on[at + c]
        if not drop:
            continue
        col = codes[la[i]]
        if kept < 0:
            kept = 0
            for t in range(n):
                c = col[t]
                out[kept] = t
                kept += (c >= 0) & on[at + max(c, 0)]
            continue
        m2 = 0
        for p in range(kept):
            t = out[p]
            c = col[t]
            out[m2] = t
            m2 += (c >= 0) & on[at + max(c, 0)]
        kept = m2
    if kept < 0:
        return lt, rt
    return out[:kept], out[:kept]


@njit(cache=True, nogil=True)
def _marks(tids, col, d):
    """Which of ``d`` codes ``col`` holds at ``tids`` (``tids`` every row of
    ``col``, as distinct tids: read in row order, without them)."""
    on = np.zeros(max(d, 1), np.bool_)
    if tids.shape[0] == col.shape[0]:
        for i in range(col.shape[0]):
            c = col[i]
            if c >= 0:
                on[c] = True
        return on
    for i in range(tids.shape[0]):
        c = col[tids[i]]
        if c >= 0:
            on[c] = True
    return on


@njit(cache=True, nogil=True)
def _present(tids, col, on, out):
    """The ``tids`` whose code in ``col`` is marked ``on``, written to ``out``
    (which may be ``tids``' own memory: a row is written at or before where it
    is read; pages past the rows kept are never touched) -- ``tids`` every row
    of ``col``: read in row order, and kept ascending.  Branch-free: a few rows
    may pass, at random."""
    m = 0
    if tids.shape[0] == col.shape[0]:
        for i in range(col.shape[0]):
            c = col[i]
            out[m] = i
            m += (c >= 0) & on[max(c, 0)]
        return out[:m]
    for i in range(tids.shape[0]):
        t = tids[i]
        c = col[t]
        out[m] = t
        m += (c >= 0) & on[max(c, 0)]
    return out[:m]


@njit(cache=True, nogil=True)
def count_composite(
    lt, rt, codes, ea, eb, doms, ra, rb, dom, ne, deg_l, deg_r, direct_codes, shared, one=False
):
    """Add to ``deg_l[i]`` / ``deg_r[j]`` the pairs ``(t, t')``, ``t = lt[i]``,
    ``t' = rt[j]``, ``t != t'`` (degrees by position in the sides, not by tid:
    the sides are often a small part of the table, whose every row's degree
    would be fresh pages to touch), with ``codes[ea[j], t] = codes[eb[j], t']`` for
    every ``j`` (``doms[j]``: their code domain) and ``codes[ra, t] op
    codes[rb, t']`` (``op``: ``!=`` if ``ne`` else ``=``; ``dom``: its domain);
    NULL (-1) satisfies nothing.  A run's final codes are tallied in a
    code-indexed array up to ``direct_codes`` codes (``Config.keyed_direct_codes``)
    or when the run is about as big as the domain, else in a table sized to the
    run.  ``shared``: ``lt`` is ``rt``, ``ea`` is ``eb`` and ``ra == rb`` (a reflexive
    pair under same-column predicates): one side is sorted and tallied, and
    ``deg_l`` holds both sides' degrees (they are equal; ``deg_r`` is not
    written).  ``one``: ``deg_l`` is ``deg_r``, one array for both sides' equal
    degrees, where :func:`equal_degrees` holds (written once, not added twice).
    Returns the violations added."""
    nl = lt.shape[0]
    nr = rt.shape[0]
    # (``one`` is passed only where equal_degrees held: the keys are swapped)
    if not shared and (one or _swapped_keys(lt, rt, ea, eb, doms, ra, rb)):
        return _count_swapped(
            lt, codes, ea, eb, doms[0], ra, ne, deg_l, deg_r, direct_codes, dom, one
        )  # fmt: skip
    ids_l, ids_r, nid = _composite_ids(lt, rt[:0] if shared else rt, codes, ea, eb, doms, nl + nr)
    start_l, tl, cl_ = _sort_by_id(ids_l, lt, codes, ra, nid)
    if shared:
        start_r, tr, cr_ = start_l, tl, cl_
    else:
        start_r, tr, cr_ = _sort_by_id(ids_r, rt, codes, rb, nid)
    # a run's final codes are tallied in a code-indexed array while the domain is
    # small (or the run about as big), else in an open-addressing table sized to it
    big = 0
    for v in range(nid):
        big = max(big, start_l[v + 1] - start_l[v], start_r[v + 1] - start_r[v])
    small_dom, stamp, cnt, hkey, hmark, hcnt = _tallies(dom, direct_codes, big)
    total = 0
    mark = 0
    for v in range(nid):
        l0, l1 = start_l[v], start_l[v + 1]
        r0, r1 = start_r[v], start_r[v + 1]
        if l0 == l1 or r0 == r1:
            continue
        # tally one side's final codes, look the other side's up
        direct = small_dom or 2 * max(l1 - l0, r1 - r0) >= dom
        mark += 1
        total += _tally_lookup(
            cr_, r0, r1, cl_, tl, l0, l1, deg_l, ne, direct, mark, stamp, cnt, hkey, hmark, hcnt
        )
        if shared:  # the same rows and codes on both sides: the same degrees
            continue
        mark += 1
        _tally_lookup(
            cl_, l0, l1, cr_, tr, r0, r1, deg_r, ne, direct, mark, stamp, cnt, hkey, hmark, hcnt
        )
    # (t, t) is no pair: take it off where t is on both sides and satisfies everything
    return total - _take_self_pairs(lt, rt, codes, ea, eb, ra, rb, ne, deg_l, deg_r, shared)


@njit(cache=True, nogil=True)
def _swapped_keys(lt, rt, ea, eb, doms, ra, rb):
    """Whether the right key is the left key's columns in another order, over
    the same rows: ``eb`` a permutation of ``ea`` (distinct columns, one
    domain), ``ra == rb``, ``lt`` equal to ``rt`` -- a symmetric DC such as
    ``t.origin = t'.dest and t.dest = t'.origin`` on a reflexive pair -- with
    few enough key combinations (``domain ** k``) to be ids as they are."""
    k = ea.shape[0]
    if k < 2 or ra != rb or lt.shape[0] != rt.shape[0]:
        return False
    span = 1
    for j in range(k):
        if doms[j] != doms[0]:
            return False
        span *= max(doms[0], 1)
        if span > lt.shape[0] + rt.shape[0]:
            return False
        found = 0
        for i in range(k):
            found += eb[i] == ea[j]
            if i != j and ea[i] == ea[j]:
                return False
        if found != 1:
            return False
    for i in range(lt.shape[0]):  # noqa: SIM110 - a numba loop, not a generator
        if lt[i] != rt[i]:
            return False
    return True


@njit(cache=True, nogil=True)
def equal_degrees(lt, rt, ea, eb, doms, ra, rb):
    """Whether :func:`count_composite` gives both sides the same degrees, so one
    array may serve as both (``one``): the sides one list of rows and the right
    key the left key's columns swapped by a permutation that undoes itself
    (φ8's ``t.origin = t'.dest and t.dest = t'.origin``), which makes the DC
    symmetric -- ``(t, t')`` violates iff ``(t', t)`` does."""
    return _swapped_keys(lt, rt, ea, eb, doms, ra, rb) and _undoes_itself(_swap_targets(ea, eb))


@njit(cache=True, nogil=True, inline="always")
def _undoes_itself(to):
    """Whether the permutation ``to`` applied twice is the identity."""
    for j in range(to.shape[0]):  # noqa: SIM110 - a numba loop, not a generator
        if to[to[j]] != j:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _swap_targets(ea, eb):
    """Where each left key column goes in the right key: ``eb[j] = ea[to[j]]``."""
    k = ea.shape[0]
    to = np.empty(k, np.int64)
    for j in range(k):
        for i in range(k):
            if ea[i] == eb[j]:
                to[j] = i
    return to


@njit(cache=True, nogil=True)
def _count_swapped(lt, codes, ea, eb, d, r, ne, deg_l, deg_r, direct_codes, dom, one):
    """:func:`count_composite` where :func:`_swapped_keys` holds: a row's right
    key is its left key's digits permuted, so one counting sort by the left key
    (mixed-radix ids over the domain ``d``, no renumbering) answers both sides --
    the rows whose right key is ``v`` are those whose left key is ``v``'s digits
    put back in order.  Returns the violations added."""
    m = lt.shape[0]
    k = ea.shape[0]
    d = max(d, 1)
    span = 1
    for _ in range(k):
        span *= d
    to = _swap_targets(ea, eb)  # where each left digit goes in the right key
    ids = np.empty(m, np.int32)
    for i in range(m):
        t = lt[i]
        v = 0
        for j in range(k):
            c = codes[ea[j], t]
            if c < 0:
                v = -1
                break
            v = v * d + c
        ids[i] = v
    start, pos, fin = _sort_by_id(ids, lt, codes, r, span)
    big = 0
    for v in range(span):
        big = max(big, start[v + 1] - start[v])
    small_dom, stamp, cnt, hkey, hmark, hcnt = _tallies(dom, direct_codes, big)
    digits = np.empty(k, np.int64)
    # a swap that undoes itself (``t.A = t'.B and t.B = t'.A``) makes the DC
    # symmetric: (t, t') violates iff (t', t) does, so a row's two degrees are
    # equal -- runs ``v`` and ``w`` (each the other's partner) are tallied once,
    # both ways, into one array that serves both sides, a run that is its own
    # partner one way
    involution = _undoes_itself(to)
    # (``one``: the caller's one array for both sides, written once)
    separate = involution and not one
    got = np.zeros_like(deg_l) if separate else deg_l
    into_l = got if involution else deg_l
    into_r = got if involution else deg_r
    total = 0
    mark = 0
    for v in range(span):
        l0, l1 = start[v], start[v + 1]
        if l0 == l1:
            continue
        # the rows t' pairing with key v on the left hold v as their right key:
        # codes[ea[to[j]], t'] = digit j of v, so their left key is w
        w = _partner_key(v, k, d, to, digits)
        if involution and w < v:
            continue  # (tallied with run w)
        r0, r1 = start[w], start[w + 1]
        if r0 == r1:
            continue
        direct = small_dom or 2 * max(l1 - l0, r1 - r0) >= dom
        mark += 1
        found = _tally_lookup(
            fin, r0, r1, fin, pos, l0, l1, into_l, ne, direct, mark, stamp, cnt, hkey, hmark, hcnt
        )
        total += found
        if not (involution and v == w):
            mark += 1
            _tally_lookup(
                fin, l0, l1, fin, pos, r0, r1, into_r, ne, direct, mark, stamp, cnt, hkey, hmark,
                hcnt,
            )  # fmt: skip
            if involution:
                total += found  # (t', t) for every (t, t')
        if v == w and not ne:  # (t, t) is no pair: t meets its own key and code
            for p in range(l0, l1):
                if fin[p] >= 0:
                    into_l[pos[p]] -= 1
                    if not involution:
                        deg_r[pos[p]] -= 1
                    total -= 1
    if separate:
        for i in range(got.shape[0]):
            deg_l[i] += got[i]
            deg_r[i] += got[i]
    return total


@njit(cache=True, nogil=True, inline="always")
def _partner_key(v, k, d, to, digits):
    """The left key of the rows that pair with left key ``v`` (their right key
    is ``v``): ``v``'s digits put back in order."""
    x = v
    for j in range(k - 1, -1, -1):
        digits[j] = x % d
        x //= d
    w = 0
    for i in range(k):
        for j in range(k):
            if to[j] == i:
                w = w * d + digits[j]
    return w


@njit(cache=True, nogil=True, inline="always")
def _self_pair(t, codes, ea, eb, ra, rb, ne):
    """Whether ``(t, t)`` satisfies the equalities and the final predicate."""
    for j in range(ea.shape[0]):
        a = codes[ea[j], t]
        if a < 0 or a != codes[eb[j], t]:
            return False
    a = codes[ra, t]
    b = codes[rb, t]
    return a >= 0 and b >= 0 and (a != b) == ne


@njit(cache=True, nogil=True)
def _take_self_pairs(lt, rt, codes, ea, eb, ra, rb, ne, deg_l, deg_r, shared):
    """Take ``(t, t)`` off the positional degrees for each ``t`` on both sides
    that satisfies every predicate (``shared``: ``lt`` is ``rt``, and ``deg_l``
    is both sides'); returns how many.  The rows of ``lt`` that pair with
    themselves (under a cross-column equality, few) are found first, sorted, and
    each row of ``rt`` is looked up among them -- no table over the tids."""
    if shared and ne:
        return 0  # (the same column on both sides: no row differs from itself)
    if shared:  # one pass: the degrees are deg_l's on both sides
        m = 0
        for i in range(lt.shape[0]):
            if _self_pair(lt[i], codes, ea, eb, ra, rb, ne):
                deg_l[i] -= 1
                m += 1
        return m
    nl = lt.shape[0]
    selfs = np.empty(nl, np.bool_)
    m = 0
    for i in range(nl):
        selfs[i] = _self_pair(lt[i], codes, ea, eb, ra, rb, ne)
        m += selfs[i]
    if m == 0:
        return 0
    aligned = nl == rt.shape[0]  # the same rows at the same positions (partnered's
    for i in range(nl):  # sides of a whole table): a row's two degrees sit at i
        if not aligned or lt[i] != rt[i]:
            aligned = False
            break
    if aligned:
        for i in range(nl):
            if selfs[i]:
                deg_l[i] -= 1
                deg_r[i] -= 1
        return m
    cand = np.empty(m, np.int64)
    pos = np.empty(m, np.int64)
    m = 0
    for i in range(nl):
        if selfs[i]:
            cand[m] = lt[i]
            pos[m] = i
            m += 1
    order = np.argsort(cand)
    cand = cand[order]
    pos = pos[order]
    taken = 0
    for j in range(rt.shape[0]):
        t = rt[j]
        if not _self_pair(t, codes, ea, eb, ra, rb, ne):
            continue  # (a few code reads: cheaper than the search it spares)
        k = np.searchsorted(cand, t)
        if k < m and cand[k] == t:
            deg_l[pos[k]] -= 1
            deg_r[j] -= 1
            taken += 1
    return taken


@njit(cache=True, nogil=True)
def key_candidates(codes, first, others, dom, limit):
    """The rows that can be in a violation of a key or FD (ascending tids): no NULL
    in row ``first`` of ``codes`` (the key column with the most values) nor in the
    rows ``others`` (the other key columns, and ``Y``), and a value of ``first``
    that two rows or more hold.  Two rows of one key both pass, so the key's and
    the FD's counts over these rows are the table's.  ``(tids, True)``; or
    ``(empty, False)`` as soon as more than ``limit`` rows pass (the caller
    counts another way).  Two passes over the rows, one array of ``dom`` counts."""
    n = codes.shape[1]
    cnt = np.zeros(max(dom, 1), np.int32)
    for i in range(n):
        v = codes[first, i]
        if v >= 0:
            cnt[v] += 1
    out = np.empty(min(limit, n), np.int64)
    m = 0
    for i in range(n):
        v = codes[first, i]
        if v < 0 or cnt[v] < 2:
            continue
        ok = True
        for j in range(others.shape[0]):
            if codes[others[j], i] < 0:
                ok = False
                break
        if not ok:
            continue
        if m == out.shape[0]:
            return out[:0], False
        out[m] = i
        m += 1
    return out[:m], True


@njit(cache=True, nogil=True, inline="always")
def _find(table, mask, key):
    """``key``'s slot in the open-addressing ``table`` (-1: empty)."""
    h = np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(32)) & mask
    while table[h] != -1 and table[h] != key:
        h = (h + 1) & mask
    return h


@njit(cache=True, nogil=True)
def key_counts(xkeys, xykeys):
    """``(violations, rows involved)`` of rows whose key is ``xkeys[i]`` (packed,
    >= 0): a key's -- the ordered pairs of rows holding one key, the rows of keys
    held twice -- when ``xykeys`` is empty; else an FD's (``xykeys[i]``: the row's
    key and ``Y``, packed) -- the pairs holding one key and two values of ``Y``,
    the rows of keys holding two values.  Hash tables sized to the rows."""
    m = xkeys.shape[0]
    fd = xykeys.shape[0] == m and m > 0
    cap = 2
    while cap < 2 * m:
        cap <<= 1
    mask = cap - 1
    keys = np.full(cap, -1, np.int64)
    cnt = np.zeros(cap, np.int64)
    values = np.zeros(cap, np.int64)  # FD: values of Y per key
    pkeys = np.full(cap if fd else 1, -1, np.int64)
    pcnt = np.zeros(cap if fd else 1, np.int64)
    for i in range(m):
        h = _find(keys, mask, xkeys[i])
        keys[h] = xkeys[i]
        cnt[h] += 1
        if fd:
            g = _find(pkeys, mask, xykeys[i])
            if pkeys[g] == -1:
                pkeys[g] = xykeys[i]
                values[h] += 1
            pcnt[g] += 1
    violations = 0
    rows = 0
    for h in range(cap):
        c = cnt[h]
        if c == 0:
            continue
        if fd:
            violations += c * c
            if values[h] >= 2:
                rows += c
        else:
            violations += c * (c - 1)
            if c >= 2:
                rows += c
    if fd:
        for g in range(cap):
            violations -= pcnt[g] * pcnt[g]
    return violations, rows


@njit(cache=True, nogil=True)
def split_by_code(lt, rt, ca, cb, dom, parts):
    """``lt`` and ``rt`` cut into ``parts`` pieces by their code of one equality
    (``ca[t]`` for ``t`` in ``lt``, ``cb[t']`` for ``t'`` in ``rt``; domain ``dom``):
    ranges of codes holding about equal rows of both sides, so a pair lies within
    one piece and pieces count independently (on separate threads).  NULLs are
    in no piece.  Returns ``(l_off, l_tids, r_off, r_tids)``: piece ``p`` is
    ``l_tids[l_off[p]:l_off[p + 1]]`` and ``r_tids[r_off[p]:r_off[p + 1]]``."""
    cnt_l = np.zeros(max(dom, 1), np.int64)
    cnt_r = np.zeros(max(dom, 1), np.int64)
    count_codes(lt, 0, lt.shape[0], ca, cnt_l)
    count_codes(rt, 0, rt.shape[0], cb, cnt_r)
    total = 0
    for c in range(dom):
        total += cnt_l[c] + cnt_r[c]
    piece = np.empty(max(dom, 1), np.int64)
    l_off = np.zeros(parts + 1, np.int64)
    r_off = np.zeros(parts + 1, np.int64)
    acc = 0
    p = 0
    for c in range(dom):
        piece[c] = p
        l_off[p + 1] += cnt_l[c]
        r_off[p + 1] += cnt_r[c]
        acc += cnt_l[c] + cnt_r[c]
        if p < parts - 1 and acc * parts >= (p + 1) * total:
            p += 1
    for q in range(parts):
        l_off[q + 1] += l_off[q]
        r_off[q + 1] += r_off[q]
    return (
        l_off,
        _by_piece(lt, ca, piece, l_off, parts),
        r_off,
        _by_piece(rt, cb, piece, r_off, parts),
    )


@njit(cache=True, nogil=True)
def _by_piece(tids, col, piece, off, parts):
    """``tids`` (NULL codes dropped) ordered by the piece of their code, stably."""
    out = np.empty(off[parts], tids.dtype)
    fill = off[:parts].copy()
    for i in range(tids.shape[0]):
        c = col[tids[i]]
        if c >= 0:
            q = piece[c]
            out[fill[q]] = tids[i]
            fill[q] += 1
    return out
