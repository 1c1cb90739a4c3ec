"""Appends to DCs of two inequalities counted from per-DC dominance indexes
(issue 11; docs/semantics.md §11, docs/architecture.md "Incremental detection").

Shape: same-column equalities on columns ``K`` (none or more) and exactly two
inequalities ``t.A1 op1 t'.X`` and ``t.A2 op2 t'.Y`` with ``{A1, A2} = {X, Y}``
two distinct columns outside ``K``, and no other predicate: price/discount,
salary/rate within a state, ship/receipt dates.  Every row is then a point
``(x, y)`` of one plane under its key, and for a row ``s`` of a batch the rows
``t`` with ``P(s, t)`` are those of ``s``'s key in an orthant (``t.X`` and ``t.Y``
each bounded by one of ``s``'s values), as are those with ``P(t, s)``.  So with
the old rows indexed,

* ``s``'s degrees are two orthant counts per index level (O(log n) each, with a
  wavelet matrix over ``y`` in ``(key, x)`` order: ``kernels/dominance.py``);
* the violations are ``sum_s |O2(s) ∩ old| + |O1(s) ∩ old|`` plus the batch's
  own pairs (the same counts against the batch's level, ``(s, s)`` taken off);
* the old rows involved are the old points in the union of every orthant of
  the batch: per key and per orthant family a staircase, counted slab by slab.

No old row is read.  The index is a list of levels, each sorted and coded on its
own (its distinct ``x`` and ``y`` codes map its dense ranks to the table's
codes; an append inserting values among a column's ranks maps these arrays,
not the points); a batch becomes a level, and the two last levels are merged
while the older is at most twice the newer (an LSM tree: a point is rewritten
O(log n) times).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from facet.encoding import EncodedTable
from facet.kernels.common import stable_order
from facet.kernels.dominance import GE, GT, LE, LT, orthant_counts, union_count, wavelet_build
from facet.language.normalize import NormalDC
from facet.planner.config import DEFAULT

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_OPS = {"<": LT, "<=": LE, ">": GT, ">=": GE}
_BITS = 62
#: the last two levels are merged while the older holds at most this x the newer's points
_MERGE_RATIO = 2


@dataclass(frozen=True)
class Family:
    """The orthant of the rows ``t`` a row ``s`` pairs with in one role:
    ``t.X xop s.[xcol]`` and ``t.Y yop s.[ycol]``."""

    xcol: str
    xop: str
    ycol: str
    yop: str


@dataclass(frozen=True)
class Shape:
    """A DC the index answers: key columns, the plane's columns, the orthant of
    ``P(s, t)`` (``t`` second: ``second``) and of ``P(t, s)`` (``first``), and
    the DC's two inequalities ``(a, op, b)`` (for ``P(s, s)``)."""

    keys: tuple[str, ...]
    x: str
    y: str
    second: Family
    first: Family
    ineqs: tuple[tuple[str, str, str], tuple[str, str, str]]


def shape(nd: NormalDC) -> Shape | None:
    """The index's view of ``nd``, or ``None`` when it has another shape."""
    if nd.arity != 2 or nd.filters:
        return None
    keys: list[str] = []
    ineqs = []
    for p in nd.preds:
        if p.op == "=" and p.a == p.b:
            if p.a not in keys:
                keys.append(p.a)
        elif p.op in _FLIP:
            ineqs.append(p)
        else:
            return None
    if len(ineqs) != 2:
        return None
    p1, p2 = ineqs
    x, y = p1.b, p2.b
    if x == y or {p1.a, p2.a} != {x, y} or x in keys or y in keys:
        return None
    second = Family(p1.a, _FLIP[p1.op], p2.a, _FLIP[p2.op])
    if p1.a == x:
        first = Family(p1.b, p1.op, p2.b, p2.op)
    else:  # t.Y op1 s.X and t.X op2 s.Y
        first = Family(p2.b, p2.op, p1.b, p1.op)
    return Shape(tuple(keys), x, y, second, first, ((p1.a, p1.op, p1.b), (p2.a, p2.op, p2.b)))


@dataclass(frozen=True)
class _Level:
    """Points sorted by key, then ``x``: the distinct keys (codes per key column,
    in lexicographic order) and their segments ``seg[i] .. seg[i + 1]``; the
    distinct ``x`` and ``y`` codes (``dx``, ``dy``, increasing) and each point's
    dense ranks in them (``xs``, ``ys``); the wavelet matrix of ``ys``; for a
    level of one segment, the first position of each ``x`` rank (``xstart``,
    one more slot; else empty)."""

    ukeys: tuple[np.ndarray, ...]
    seg: np.ndarray
    dx: np.ndarray
    dy: np.ndarray
    xs: np.ndarray
    ys: np.ndarray
    words: np.ndarray
    ones: np.ndarray
    zeros: np.ndarray
    xstart: np.ndarray

    @property
    def size(self) -> int:
        return int(self.xs.shape[0])

    def points(self) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        """The points' codes (keys, x, y) in the table's current codes."""
        counts = np.diff(self.seg)
        return [np.repeat(k, counts) for k in self.ukeys], self.dx[self.xs], self.dy[self.ys]


def _radix(cols: list[np.ndarray]) -> list[int] | None:
    """Mixed-radix digits packing ``cols`` (non-negative codes) into one int64
    in lexicographic order, or ``None`` when they do not fit."""
    digits = [int(c.max()) + 1 if c.size else 1 for c in cols]
    if sum(max(d - 1, 1).bit_length() for d in digits) > _BITS:
        return None
    return digits


def _pack(cols: list[np.ndarray], digits: list[int]) -> np.ndarray:
    out = np.zeros(cols[0].shape[0], np.int64)
    for c, d in zip(cols, digits, strict=True):
        out *= d
        out += c
    return out


def _ranks(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``v`` (non-negative codes), increasing, and each
    value's dense rank among them: by a count per code when the codes are dense
    against ``v``, else by sorting."""
    top = int(v.max()) + 1 if v.shape[0] else 0
    if top <= 4 * v.shape[0] + 64:
        present = np.bincount(v, minlength=top) > 0
        return np.flatnonzero(present), (np.cumsum(present) - 1)[v]
    d, inv = np.unique(v, return_inverse=True)
    return d, inv


def _level(keys: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> _Level | None:
    """A level over the points ``(keys, x, y)`` (codes, no NULL): sorted by key,
    then ``x``, with two stable counting passes (``x``, then the key)."""
    dx, xl = _ranks(x)
    dy, yl = _ranks(y)
    tune = DEFAULT.kernel_tuning()
    order = stable_order(xl, max(dx.shape[0], 1), tune)
    if keys:
        digits = _radix(keys)
        if digits is None:
            return None
        uk, kid = _ranks(_pack(keys, digits))
        order = order[stable_order(kid[order], max(uk.shape[0], 1), tune)]
        seg = np.r_[0, np.cumsum(np.bincount(kid, minlength=uk.shape[0]))].astype(np.int64)
        first = order[seg[:-1]]
        ukeys = tuple(k[first] for k in keys)
        xstart = np.zeros(0, np.int64)
    else:
        seg = np.array([0, x.shape[0]], np.int64)
        ukeys = ()
        xstart = np.r_[0, np.cumsum(np.bincount(xl, minlength=dx.shape[0]))].astype(np.int64)
    xs = xl[order].astype(np.int32)
    ys = yl[order].astype(np.int64)
    nbits = max(int(dy.shape[0]) - 1, 1).bit_length()
    words, ones, zeros = wavelet_build(ys, nbits)
    dx, dy = dx.astype(np.int64), dy.astype(np.int64)
    return _Level(ukeys, seg, dx, dy, xs, ys, words, ones, zeros, xstart)


@dataclass(frozen=True)
class DominanceIndex:
    """The levels of one DC's index (oldest, largest first)."""

    shape: Shape
    levels: tuple[_Level, ...]


def _points(enc: EncodedTable, sh: Shape, rows: slice | np.ndarray):
    """The rows ``rows`` of ``enc`` with no NULL in the DC's columns: their
    positions (in ``rows``) and codes (keys, x, y)."""
    cols = list(sh.keys) + [sh.x, sh.y]
    codes = [enc.take(c, rows) for c in cols]
    ok = np.ones(codes[0].shape[0], np.bool_)
    for c in codes:
        ok &= c >= 0
    at = np.flatnonzero(ok)
    picked = [c[at].astype(np.int64) for c in codes]
    return at, picked[:-2], picked[-2], picked[-1]


def build(enc: EncodedTable, sh: Shape) -> DominanceIndex | None:
    """The index of every row of ``enc`` (``None``: keys too wide to pack); the
    counting kernels are loaded now, so that the first append does not."""
    _, keys, x, y = _points(enc, sh, slice(0, enc.n))
    warm()
    if x.shape[0] == 0:
        return DominanceIndex(sh, ())
    level = _level(keys, x, y)
    return None if level is None else DominanceIndex(sh, (level,))


def warm() -> None:
    """Every kernel of :func:`build` and :func:`count_batch` called once on tiny
    input (``facet.engine.warmup``'s ``dominance``)."""
    for keys in ([], [np.zeros(1, np.int64)]):
        lv = _level(keys, np.zeros(1, np.int64), np.zeros(1, np.int64))
        assert lv is not None
        e = np.zeros(0, np.int64)
        e2 = np.zeros((1, 0), np.int64)
        o = np.zeros(1, np.int64)
        orthant_counts(lv.words, lv.ones, lv.zeros, lv.xs, lv.xstart, lv.dx, lv.dy, e, e,
                       e, e, o, o, e2, e2, e2)  # fmt: skip
        for le in (False, True):
            for ge in (False, True):
                for le2 in (False, True):
                    for ge2 in (False, True):
                        union_count(lv.words, lv.ones, lv.zeros, lv.xs, lv.xstart, 0,
                                    np.zeros(1, np.int64), e, e, le, ge, e, e, le2, ge2, e, e)  # fmt: skip


def moved(
    index: DominanceIndex, enc: EncodedTable, remaps: dict[str, np.ndarray]
) -> DominanceIndex:
    """The index in the codes of an extended encoding: the levels' distinct
    codes of a column whose ranks moved are mapped (``remaps[col][code]``, order
    kept); the points are not touched."""
    sh = index.shape
    if not any(c in remaps for c in (*sh.keys, sh.x, sh.y)):
        return index

    def m(col: str, codes: np.ndarray) -> np.ndarray:
        return remaps[col][codes].astype(np.int64) if col in remaps else codes

    levels = tuple(
        replace(
            lv,
            ukeys=tuple(m(c, k) for c, k in zip(sh.keys, lv.ukeys, strict=True)),
            dx=m(sh.x, lv.dx),
            dy=m(sh.y, lv.dy),
        )
        for lv in index.levels
    )
    return DominanceIndex(sh, levels)


def _segments(lv: _Level, keys: list[np.ndarray], digits: list[int] | None):
    """Each batch row's key segment in ``lv`` (``[lo, hi)``, empty when absent)."""
    q = keys[0].shape[0] if keys else None
    if not keys:
        return None, np.zeros(0, np.int64)
    assert digits is not None and q is not None
    level_keys = _pack(list(lv.ukeys), digits)
    probe = _pack(keys, digits)
    at = np.minimum(np.searchsorted(level_keys, probe), max(level_keys.shape[0] - 1, 0))
    hit = level_keys[at] == probe if level_keys.shape[0] else np.zeros(q, np.bool_)
    gid = np.where(hit, at, -1)
    return gid, lv.seg


def _orthants(lv: _Level, sh: Shape, vals, seg_lo, seg_hi):
    """Each batch row's points of ``lv`` in its orthant of each family (``second``,
    then ``first``; within its segment), and the orthants' dense-rank bounds
    ``(le, bx, ge, by)``: ``x <= bx`` (``le``) or ``x >= bx``, and ``y >= by``
    (``ge``) or ``y <= by``.  Families over the same columns share one pass (the
    same family, as in a symmetric DC, is counted once)."""
    fams = [sh.second, sh.first]
    if fams[0] == fams[1]:
        groups = [[0]]
    elif (fams[0].xcol, fams[0].ycol) == (fams[1].xcol, fams[1].ycol):
        groups = [[0, 1]]
    else:
        groups = [[0], [1]]
    q = seg_lo.shape[0]
    counts: list = [None, None]
    bounds: list = [None, None]
    for g in groups:
        xops = np.array([_OPS[fams[f].xop] for f in g], np.int64)
        yops = np.array([_OPS[fams[f].yop] for f in g], np.int64)
        out = np.zeros((len(g), q), np.int64)
        bx, by = np.empty((len(g), q), np.int64), np.empty((len(g), q), np.int64)
        f0 = fams[g[0]]
        orthant_counts(
            lv.words, lv.ones, lv.zeros, lv.xs, lv.xstart, lv.dx, lv.dy, seg_lo, seg_hi,
            vals[f0.xcol], vals[f0.ycol], xops, yops, out, bx, by,
        )  # fmt: skip
        for j, f in enumerate(g):
            counts[f] = out[j]
            bounds[f] = (xops[j] <= LE, bx[j], yops[j] >= GT, by[j])
    if counts[1] is None:
        counts[1], bounds[1] = counts[0], bounds[0]
    return counts, bounds


def _holds(a: np.ndarray, op: str, b: np.ndarray) -> np.ndarray:
    return {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}[op](a, b)


def count_batch(
    index: DominanceIndex, enc: EncodedTable, n_old: int
) -> tuple[int, int, DominanceIndex] | None:
    """The violations holding a row of the batch (rows ``n_old ..`` of ``enc``,
    whose codes ``index`` is in -- see :func:`moved`), the rows they involve, and
    the index with the batch added; ``None`` when the keys no longer pack."""
    sh = index.shape
    counted = _counted(index, enc, slice(n_old, enc.n), own_union=False)
    if counted is None:
        return None
    if counted == ():
        return 0, 0, index
    new, (old_first, old_second, involved_old), (new_first, new_second, _), self_pair = counted
    violations = int(old_first.sum() + old_second.sum() + (new_first - self_pair).sum())
    deg = old_first + old_second + new_first + new_second - 2 * self_pair
    involved = int(np.count_nonzero(deg)) + involved_old
    return violations, involved, DominanceIndex(sh, _merged(index.levels + (new,), sh))


def count_scope(
    index: DominanceIndex, enc: EncodedTable, rows: np.ndarray
) -> tuple[int, int] | None:
    """The violations holding a row of the scope ``rows`` (tids of ``enc``, every
    row of which ``index`` holds) and the rows they involve (``None``: the keys
    no longer pack).  The scope's rows are a level of their own: with ``A`` the
    orthant counts against the index (the scope's points included) and ``S``
    those against the scope's level, the violations are ``sum A1 + A2 - S1 -
    P(s, s)`` and the other rows involved those in the union of the scope's
    orthants less the scope's own (Daisy's scoped detection, issue 11)."""
    counted = _counted(index, enc, rows)
    if counted is None:
        return None
    if counted == ():
        return 0, 0
    _, (all_first, all_second, involved_all), (own_first, _, involved_own), self_pair = counted
    violations = int(all_first.sum() + all_second.sum() - own_first.sum() - self_pair.sum())
    deg = all_first + all_second - 2 * self_pair
    return violations, int(np.count_nonzero(deg)) + involved_all - involved_own


def _counted(
    index: DominanceIndex, enc: EncodedTable, rows: slice | np.ndarray, own_union: bool = True
):
    """The orthant counts of the rows ``rows`` (no NULL; ``()``: none) against the
    index's levels and against a level of their own (each: counts as ``s`` in
    ``P(s, t)``, as ``s`` in ``P(t, s)``, and the level's points in the union of
    the rows' orthants; 0 against their own level unless ``own_union``), that
    level, and whether ``P(s, s)``; ``None`` when the keys do not pack."""
    sh = index.shape
    _, keys, x, y = _points(enc, sh, rows)
    q = x.shape[0]
    if q == 0:
        return ()
    # the rows in (key, x) order: the levels' lookups then walk their arrays forward
    if keys:
        digits = _radix(keys)
        if digits is None:
            return None
        order = np.lexsort((x, _pack(keys, digits)))
        keys = [k[order] for k in keys]
    else:
        order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    new = _level(keys, x, y)
    if new is None:
        return None
    digits = None
    if keys:
        digits = _radix([np.array([int(enc.domain[c])], np.int64) for c in sh.keys])
        if digits is None:
            return None
    vals = {sh.x: x, sh.y: y}
    first = np.zeros(q, np.int64)  # P(s, t), t of the levels
    second = np.zeros(q, np.int64)  # P(t, s)
    involved = 0
    for lv in index.levels:
        c2, c1, union = _against(lv, sh, keys, vals, digits, q)
        first += c2
        second += c1
        involved += union
    (a1, op1, b1), (a2, op2, b2) = sh.ineqs
    self_pair = (_holds(vals[a1], op1, vals[b1]) & _holds(vals[a2], op2, vals[b2])).astype(np.int64)
    own = _against(new, sh, keys, vals, digits, q, own_union)
    return new, (first, second, involved), own, self_pair


def _against(lv: _Level, sh: Shape, keys, vals, digits, q: int, union: bool = True):
    """The rows' orthant counts in ``lv`` (``P(s, t)``, ``P(t, s)``) and the
    points of ``lv`` in the union of their orthants."""
    gid, seg = _segments(lv, keys, digits)
    if gid is None:
        seg_lo = np.zeros(q, np.int64)
        seg_hi = np.full(q, lv.size, np.int64)
    else:
        seg_lo = np.where(gid >= 0, seg[np.maximum(gid, 0)], 0)
        seg_hi = np.where(gid >= 0, seg[np.maximum(gid, 0) + 1], 0)
    (c2, c1), (b2, b1) = _orthants(lv, sh, vals, seg_lo, seg_hi)
    return c2, c1, _union(lv, b2, b1, gid, seg_lo, seg_hi) if union else 0


def _union(lv: _Level, b2, b1, gid, seg_lo, seg_hi) -> int:
    """The points of ``lv`` in the union of the batch rows' orthants (both roles;
    ``b2``, ``b1``: their bounds).  The batch is in key order, as ``lv``'s keys
    are, so the rows of a segment are consecutive."""
    if gid is None:
        starts = np.array([0, seg_lo.shape[0]], np.int64)
        glo, ghi = seg_lo[:1], seg_hi[:1]
        pick = slice(None)
    else:
        pick = np.flatnonzero(gid >= 0)
        if pick.size == 0:
            return 0
        g = gid[pick]
        cut = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        starts = np.r_[cut, pick.shape[0]].astype(np.int64)
        glo, ghi = seg_lo[pick[cut]], seg_hi[pick[cut]]
    (le2, bx2, ge2, by2), (le1, bx1, ge1, by1) = b2, b1
    return int(
        union_count(
            lv.words,
            lv.ones,
            lv.zeros,
            lv.xs,
            lv.xstart,
            lv.dy.shape[0] - 1,
            starts,
            glo,
            ghi,
            le2,
            ge2,
            bx2[pick],
            by2[pick],
            le1,
            ge1,
            bx1[pick],
            by1[pick],
        )  # fmt: skip
    )


def _merged(levels: tuple[_Level, ...], sh: Shape) -> tuple[_Level, ...]:
    """The levels with the last two merged while the older is at most
    ``_MERGE_RATIO`` x the newer."""
    out = list(levels)
    while len(out) >= 2 and out[-2].size <= _MERGE_RATIO * out[-1].size:
        b = out.pop()
        a = out.pop()
        ka, xa, ya = a.points()
        kb, xb, yb = b.points()
        keys = [np.concatenate([u, v]) for u, v in zip(ka, kb, strict=True)]
        level = _level(keys, np.concatenate([xa, xb]), np.concatenate([ya, yb]))
        assert level is not None  # the codes packed in each level and in the table
        out.append(level)
    return tuple(out)
