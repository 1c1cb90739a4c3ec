"""Static 2D range counting for the dominance indexes of appends (issue 11;
facet/dominance_index.py, docs/architecture.md "Incremental detection").

A level of an index holds points ``(x, y)`` (dense ranks) sorted by key, then by
``x``; its ``y`` sequence is kept in a wavelet matrix (Claude, Navarro and
Ordóñez, SPIRE 2012), so the points of a position range ``[lo, hi)`` with ``y``
in ``[a, b]`` are counted in O(log σ) without reading them:

* ``wavelet_build``: one bit row per level (highest bit first), each a stable
  partition of the previous level's sequence by the bit (zeros first), packed in
  uint64 words with the ones counted before every word (``ones``);
* ``count_less``: ``#{p in [lo, hi) : y_p < v}`` by walking the levels;
* ``orthant_counts``: per query, the points of its key segment in an orthant
  ``X op a`` and ``Y op b`` (the table's codes, turned into the level's dense
  ranks by binary search in its distinct codes);
* ``union_count``: per key segment, the points in the union of every query's
  two orthants (the rows a batch's violations involve): the union is, at each
  ``x``, one ``y`` interval per orthant family (a staircase), constant between
  the queries' ``x`` bounds, so it is counted slab by slab as
  ``|I1| + |I2| - |I1 ∩ I2|``.

Every kernel has a naive twin in tests/test_kernel_twins.py.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.common import popcount
from facet.kernels.jit import njit

_ONE = np.uint64(1)


@njit(cache=True, nogil=True)
def wavelet_build(values: np.ndarray, nbits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The wavelet matrix of ``values`` (ints in ``[0, 2**nbits)``): ``words``
    (level x word bits), ``ones`` (level x ones before each word, one more slot)
    and ``zeros`` (zeros per level)."""
    m = values.shape[0]
    nw = (m >> 6) + 1
    words = np.zeros((nbits, nw), np.uint64)
    ones = np.zeros((nbits, nw + 1), np.int64)
    zeros = np.zeros(nbits, np.int64)
    cur = values.astype(np.int64)
    nxt = np.empty(m, np.int64)
    for lev in range(nbits):
        bit = nbits - 1 - lev
        nz = 0
        for i in range(m):
            if (cur[i] >> bit) & 1:
                words[lev, i >> 6] |= _ONE << np.uint64(i & 63)
            else:
                nz += 1
        zeros[lev] = nz
        acc = 0
        for w in range(nw):
            ones[lev, w] = acc
            acc += popcount(words[lev, w])
        ones[lev, nw] = acc
        z = 0
        o = nz
        for i in range(m):
            if (cur[i] >> bit) & 1:
                nxt[o] = cur[i]
                o += 1
            else:
                nxt[z] = cur[i]
                z += 1
        cur, nxt = nxt, cur
    return words, ones, zeros


@njit(cache=True, inline="always")
def _rank1(words: np.ndarray, ones: np.ndarray, lev: int, i: int) -> int:
    """Ones of level ``lev`` before position ``i``."""
    w = i >> 6
    r = i & 63
    if r == 0:
        return ones[lev, w]
    return ones[lev, w] + popcount(words[lev, w] & ((_ONE << np.uint64(r)) - _ONE))


@njit(cache=True)
def count_less(
    words: np.ndarray, ones: np.ndarray, zeros: np.ndarray, lo: int, hi: int, v: int
) -> int:
    """``#{p in [lo, hi) : y_p < v}``."""
    nbits = zeros.shape[0]
    if lo >= hi or v <= 0:
        return 0
    if v >= 1 << nbits:
        return hi - lo
    res = 0
    for lev in range(nbits):
        bit = nbits - 1 - lev
        r1lo = _rank1(words, ones, lev, lo)
        r1hi = _rank1(words, ones, lev, hi)
        if (v >> bit) & 1:
            res += (hi - lo) - (r1hi - r1lo)
            lo = zeros[lev] + r1lo
            hi = zeros[lev] + r1hi
        else:
            lo = lo - r1lo
            hi = hi - r1hi
    return res


@njit(cache=True, inline="always")
def _count_in(words, ones, zeros, lo: int, hi: int, ylo: int, yhi: int, ymax: int) -> int:
    """``#{p in [lo, hi) : ylo <= y_p <= yhi}`` for ``y`` in ``[0, ymax]``: one
    walk of the levels when the interval reaches an end of the range."""
    if ylo > yhi or lo >= hi:
        return 0
    below = 0 if ylo <= 0 else count_less(words, ones, zeros, lo, hi, ylo)
    upto = hi - lo if yhi >= ymax else count_less(words, ones, zeros, lo, hi, yhi + 1)
    return upto - below


@njit(cache=True, inline="always")
def _bound(xs: np.ndarray, lo: int, hi: int, v: int) -> int:
    """First position of ``xs[lo:hi]`` (sorted) holding a value ``>= v``: halving
    the length with a select, no branch on the data (the searches are the
    kernels' cost)."""
    n = hi - lo
    if n <= 0:
        return lo
    base = lo
    while n > 1:
        half = n >> 1
        base = base + half if xs[base + half] < v else base
        n -= half
    return base + 1 if xs[base] < v else base


#: comparison codes of ``orthant_counts``: ``t.X op v``
LT, LE, GT, GE = 0, 1, 2, 3


@njit(cache=True, inline="always")
def _gallop(a: np.ndarray, start: int, hi: int, v: int) -> int:
    """``_bound(a, start, hi, v)`` by steps doubling from ``start``: cheap when
    the answer is near ``start`` (queries in increasing order)."""
    lo = start
    step = 1
    while lo + step <= hi and a[lo + step - 1] < v:
        lo += step
        step *= 2
    return _bound(a, lo, min(lo + step - 1, hi), v)


@njit(cache=True, inline="always")
def _position(xs, xstart, s0: int, s1: int, r: int, start: int) -> int:
    """The first position of segment ``[s0, s1)`` with ``x >= r``: from
    ``xstart`` (a level of one segment: the first position of each rank) or by
    a search from ``start`` (at least ``s0``, at most the position)."""
    if xstart.shape[0] > 0:
        return xstart[min(max(r, 0), xstart.shape[0] - 1)]
    return _gallop(xs, start, s1, r)


@njit(cache=True, nogil=True)
def orthant_counts(
    words: np.ndarray,
    ones: np.ndarray,
    zeros: np.ndarray,
    xs: np.ndarray,
    xstart: np.ndarray,
    dx: np.ndarray,
    dy: np.ndarray,
    seg_lo: np.ndarray,
    seg_hi: np.ndarray,
    vx: np.ndarray,
    vy: np.ndarray,
    xops: np.ndarray,
    yops: np.ndarray,
    out: np.ndarray,
    bx: np.ndarray,
    by: np.ndarray,
) -> None:
    """Per query ``i`` and orthant family ``f``: add to ``out[f, i]`` the points of
    segment ``[seg_lo[i], seg_hi[i])`` with ``X xops[f] vx[i]`` and ``Y yops[f]
    vy[i]`` (codes; the level's distinct codes ``dx``, ``dy``), and leave the
    orthant's dense-rank bounds in ``bx[f, i]``, ``by[f, i]``: ``x <= bx`` for
    ``LT``/``LE``, ``x >= bx`` for ``GT``/``GE`` (``y`` alike).
    The families of one query search the same arrays one after the other (their
    cache lines are shared)."""
    nf = xops.shape[0]
    nd, ny = dx.shape[0], dy.shape[0]
    ymax = ny - 1
    # one search per query for every family: where vx's run starts and ends in dx
    # (and vy's in dy), and the segment's positions of both; queries in increasing
    # (segment, vx) order search on from the last answers
    at_d = 0
    at_x = 0
    for i in range(vx.shape[0]):
        s0, s1 = seg_lo[i], seg_hi[i]
        if i == 0 or vx[i] < vx[i - 1] or s0 != seg_lo[i - 1]:
            at_d = 0
            at_x = s0
        v = vx[i]
        lbx = _gallop(dx, at_d, nd, v)
        at_d = lbx
        ubx = lbx + 1 if lbx < nd and dx[lbx] == v else lbx
        w = vy[i]
        lby = _bound(dy, 0, ny, w)
        uby = lby + 1 if lby < ny and dy[lby] == w else lby
        p_lb = p_ub = s0
        if s0 < s1:
            p_lb = _position(xs, xstart, s0, s1, lbx, at_x)
            at_x = p_lb
            p_ub = p_lb if ubx == lbx else _position(xs, xstart, p_lb, s1, ubx, p_lb)
        for f in range(nf):
            xop, yop = xops[f], yops[f]
            b = lbx - 1 if xop == LT else ubx - 1 if xop == LE else ubx if xop == GT else lbx
            c = lby - 1 if yop == LT else uby - 1 if yop == LE else uby if yop == GT else lby
            bx[f, i] = b
            by[f, i] = c
            if s0 >= s1:
                continue
            if xop <= LE:
                lo, hi = s0, (p_lb if xop == LT else p_ub)
            else:
                lo, hi = (p_ub if xop == GT else p_lb), s1
            if yop >= GT:
                out[f, i] += _count_in(words, ones, zeros, lo, hi, c, ymax, ymax)
            else:
                out[f, i] += _count_in(words, ones, zeros, lo, hi, 0, c, ymax)


@njit(cache=True)
def _staircase(bx: np.ndarray, by: np.ndarray, le: bool, ge_y: bool, at: np.ndarray) -> np.ndarray:
    """For each ``x`` of ``at`` (increasing), the ``y`` threshold of the union of
    the orthants ``{x <= bx_j (le) or x >= bx_j, y >= by_j (ge_y) or y <= by_j}``:
    the least ``by_j`` (``ge_y``) or the greatest over the orthants holding ``x``;
    ``2**62`` / ``-1`` where none does.  ``bx`` already increasing (a batch sorted
    by ``x``) is not sorted again."""
    none = (1 << 62) if ge_y else -1
    k = bx.shape[0]
    ordered = True
    for j in range(1, k):
        if bx[j] < bx[j - 1]:
            ordered = False
            break
    order = np.arange(k) if ordered else np.argsort(bx, kind="mergesort")
    acc = np.empty(k, np.int64)  # running best over the orthants holding x
    best = none
    if le:  # orthants holding x: bx_j >= x, a suffix in bx order
        for j in range(k - 1, -1, -1):
            b = by[order[j]]
            best = min(best, b) if ge_y else max(best, b)
            acc[j] = best
    else:  # bx_j <= x: a prefix
        for j in range(k):
            b = by[order[j]]
            best = min(best, b) if ge_y else max(best, b)
            acc[j] = best
    out = np.empty(at.shape[0], np.int64)
    j = 0  # le: the first orthant with bx >= x; else: the orthants with bx <= x
    for i in range(at.shape[0]):
        if le:
            while j < k and bx[order[j]] < at[i]:
                j += 1
            out[i] = acc[j] if j < k else none
        else:
            while j < k and bx[order[j]] <= at[i]:
                j += 1
            out[i] = acc[j - 1] if j > 0 else none
    return out


@njit(cache=True, inline="always")
def _count_union(
    words, ones, zeros, lo: int, hi: int, ymax: int, t1: int, ge1: bool, t2: int, ge2: bool
) -> int:
    """The points of ``[lo, hi)`` with ``y`` in the union of two staircase
    intervals: ``y >= t`` (``ge``) or ``y <= t`` (empty when ``t`` is out of
    ``[0, ymax]`` on the wrong side)."""
    if ge1 == ge2:  # both rays point the same way: the wider one
        if ge1:
            return _count_in(words, ones, zeros, lo, hi, min(t1, t2), ymax, ymax)
        return _count_in(words, ones, zeros, lo, hi, 0, max(t1, t2), ymax)
    lo_t, hi_t = (t2, t1) if ge1 else (t1, t2)  # y <= lo_t or y >= hi_t
    if lo_t < 0:
        return _count_in(words, ones, zeros, lo, hi, hi_t, ymax, ymax)
    if hi_t > ymax:
        return _count_in(words, ones, zeros, lo, hi, 0, lo_t, ymax)
    if hi_t <= lo_t + 1:  # the rays cover every y
        return hi - lo
    return (hi - lo) - _count_in(words, ones, zeros, lo, hi, lo_t + 1, hi_t - 1, ymax)


@njit(cache=True, nogil=True)
def union_count(
    words: np.ndarray,
    ones: np.ndarray,
    zeros: np.ndarray,
    xs: np.ndarray,
    xstart: np.ndarray,
    ymax: int,
    starts: np.ndarray,
    seg_lo: np.ndarray,
    seg_hi: np.ndarray,
    le1: bool,
    ge1: bool,
    bx1: np.ndarray,
    by1: np.ndarray,
    le2: bool,
    ge2: bool,
    bx2: np.ndarray,
    by2: np.ndarray,
) -> int:
    """The points in the union of every query's two orthants within its segment:
    queries ``starts[g] .. starts[g + 1]`` share segment ``[seg_lo[g], seg_hi[g])``;
    orthant family ``f`` of query ``j`` is ``x <= bxf[j]`` (``lef``; else
    ``x >= bxf[j]``) and ``y >= byf[j]`` (``gef``; else ``y <= byf[j]``), with ``y``
    in ``[0, ymax]`` (an empty orthant has its bounds out of range)."""
    total = 0
    for g in range(starts.shape[0] - 1):
        a, b = starts[g], starts[g + 1]
        s0, s1 = seg_lo[g], seg_hi[g]
        # slab bounds: where some orthant's x condition starts or stops holding
        cuts = np.empty(2 * (b - a) + 1, np.int64)
        cuts[0] = 0
        c = 1
        for j in range(a, b):
            cuts[c] = bx1[j] + 1 if le1 else bx1[j]
            cuts[c + 1] = bx2[j] + 1 if le2 else bx2[j]
            c += 2
        cuts = np.unique(cuts)
        t1 = _staircase(bx1[a:b], by1[a:b], le1, ge1, cuts)
        t2 = _staircase(bx2[a:b], by2[a:b], le2, ge2, cuts)
        # a slab runs on while both thresholds stay (only the batch's Pareto
        # points move a staircase: few slabs on most data)
        nc = cuts.shape[0]
        hi = _position(xs, xstart, s0, s1, cuts[0], s0)
        i = 0
        while i < nc:
            j = i + 1
            while j < nc and t1[j] == t1[i] and t2[j] == t2[i]:
                j += 1
            lo = hi
            hi = s1 if j == nc else _position(xs, xstart, lo, s1, cuts[j], lo)
            if lo < hi:
                total += _count_union(words, ones, zeros, lo, hi, ymax, t1[i], ge1, t2[i], ge2)
            i = j
    return total
