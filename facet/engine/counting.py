"""Counting sinks: per-row violation degrees of the groups a plan's equalities
leave, never enumerating pairs (docs/semantics.md §6, paper §3.2).

The plan's :class:`~facet.planner.plan.CountSink` says how: ``keyed`` (one
final equality or non-equality, code counts per group) or ``degrees`` (the
inequalities in closed form by the counting kernel, groups with more than two
split into dominance blocks first; the non-equalities by inclusion-exclusion
over its terms).  Small groups go pair by pair inside the kernels where that
is cheaper (at most ``Config.nested_pairs`` candidates, ``nested_order_scale``
x that under order predicates only).  Work is split across threads; each
worker adds into its own degree arrays unless the batch is disjoint.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from facet.encoding import EncodedTable
from facet.engine.context import Context
from facet.engine.groups import Groups
from facet.engine.memory import huge_empty
from facet.engine.parallel import run_parts, split
from facet.engine.refinement import refine, refine_equalities
from facet.kernels.common import LE, LHE, LHS, LS, RE, RHE, RHS, RS
from facet.kernels.composite import (
    count_composite,
    equal_degrees,
    key_candidates,
    key_counts,
    partnered,
    split_by_code,
)
from facet.kernels.count import (
    count_groups,
    count_keyed,
    degree_totals,
    scatter_degrees,
    sparse_degree_totals,
)
from facet.key_tallies import pack
from facet.language.normalize import NONEQUALITY, PairPredicate
from facet.planner.plan import KEYED, CountSink, Plan, Stage


class Degrees:
    """Per-row violation degrees of one DC: ``left[t]`` pairs with ``t`` as
    ``t``, ``right[t]`` pairs with ``t`` as ``t'``.  Dense arrays over the
    table, or (:meth:`sparse`, the fused count) the degrees of the rows of a few
    tid sets by position -- spread over the table only when asked for
    (``left``/``right``); the totals need no array over the table."""

    def __init__(self, left: np.ndarray, right: np.ndarray) -> None:
        self._left: np.ndarray | None = left
        self._right: np.ndarray | None = right
        self._n = left.shape[0]
        #: ``(tids, degrees)`` per side and piece (distinct tids within a side)
        self._sparse: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    @staticmethod
    def zeros(n: int) -> Degrees:
        return Degrees(np.zeros(n, np.int64), np.zeros(n, np.int64))

    @staticmethod
    def sparse(
        n: int, pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    ) -> Degrees:
        """Degrees of ``n`` rows given as ``(lt, deg_l, rt, deg_r)`` per piece:
        ``deg_l[i]`` is row ``lt[i]``'s share (a row on a side of several
        pieces, e.g. a scoped run's two initial pairs, sums its shares)."""
        deg = Degrees(np.empty(0, np.int64), np.empty(0, np.int64))
        deg._left = deg._right = None
        deg._n = n
        deg._sparse = pieces
        return deg

    def _dense(self) -> None:
        left = np.zeros(self._n, np.int64)
        right = np.zeros(self._n, np.int64)
        for lt, dl, rt, dr in self._sparse:
            scatter_degrees(left, lt, dl)
            scatter_degrees(right, rt, dr)
        self._left, self._right, self._sparse = left, right, []

    @property
    def left(self) -> np.ndarray:
        if self._left is None:
            self._dense()
        return self._left  # type: ignore[return-value]

    @left.setter
    def left(self, value: np.ndarray) -> None:  # (``deg.left += part``)
        self.left  # noqa: B018 (dense first)
        self._left = value

    @property
    def right(self) -> np.ndarray:
        if self._right is None:
            self._dense()
        return self._right  # type: ignore[return-value]

    @right.setter
    def right(self, value: np.ndarray) -> None:
        self.right  # noqa: B018
        self._right = value

    @property
    def violations(self) -> int:
        return self.totals()[0]

    @property
    def rows_involved(self) -> int:
        return self.totals()[1]

    def totals(self) -> tuple[int, int]:
        """``(violations, rows involved)`` in one pass over both sides."""
        if self._left is None:
            # a shared piece's right side is its left side: its rows are marked once
            one = [(lt, dl, rt[:0], dr[:0]) if rt is lt and dr is dl else (lt, dl, rt, dr)
                   for lt, dl, rt, dr in self._sparse]  # fmt: skip
            v, r = sparse_degree_totals(self._n, *_joined(one))
        else:
            v, r = degree_totals(self._left, self._right)
        return int(v), int(r)


def _joined(
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pieces' sides end to end (one piece: as they are)."""
    if len(pieces) == 1:
        return pieces[0]
    if not pieces:
        e = np.empty(0, np.int64)
        return e, e, e, e
    return tuple(np.concatenate([p[k] for p in pieces]) for k in range(4))  # type: ignore[return-value]


class Scratch:
    """Reusable per-worker arrays of the degree kernels: worker 0 writes the
    result's degrees; the others their own degrees (summed at the end), and
    each its stamps (marking ``L ∩ R`` to take the ``(t, t)`` pairs off)."""

    def __init__(self, n: int) -> None:
        self.n = max(n, 1)
        self.stamp = [np.zeros(self.n, np.int64)]
        self.stamp_id = [0]
        self.left: list[np.ndarray] = [np.empty(0, np.int64)]
        self.right: list[np.ndarray] = [np.empty(0, np.int64)]

    def ensure(self, workers: int) -> None:
        while len(self.stamp) < workers:
            self.stamp.append(np.zeros(self.n, np.int64))
            self.stamp_id.append(0)
            self.left.append(np.zeros(self.n, np.int64))
            self.right.append(np.zeros(self.n, np.int64))


#: ``kernel(groups, deg_left, deg_right, stamp, stamp_id) -> (stamp_id, todo or None)``
Kernel = Callable[[Groups, np.ndarray, np.ndarray, np.ndarray, int], tuple[int, np.ndarray | None]]


def count_plan(ctx: Context, plan: Plan, groups: Groups, scratch: Scratch) -> Degrees:
    """Degrees of a count plan over ``groups``: its equality stages, then its sink
    -- fused into one pass over composite codes (:func:`count_fused`) where the
    sink is keyed and ``groups`` are a few whole pairs of tid sets (the initial
    pairs); else leading same-column equalities over the whole table grouped at
    once (:func:`facet.engine.refinement.refine_equalities`), then the rest."""
    if fuses(ctx, plan, groups):
        return count_fused(ctx, plan, groups)
    groups, done = refine_equalities(ctx, groups, plan.stages)
    for stage in plan.stages[done:]:
        groups = refine(ctx, groups, stage)
    return count_sink(ctx, plan.sink, groups, scratch)


#: at most this many groups go through the fused pass (the initial pairs: one, or
#: two for a scoped run)
FUSED_GROUPS = 4


def fuses(ctx: Context, plan: Plan, groups: Groups) -> bool:
    """Whether :func:`count_plan` runs ``plan`` fused: a keyed sink, equality stages
    on tid arrays, a few groups without holes, and a shape and size where one pass
    wins (bench/results/fused_keyed.md, 2 cores): two equalities, a final
    non-equality, or a cross-column equality (the fused pass first drops the rows
    no row of the other side shares its code with, ``partnered``: φ10 customer =
    supplier keeps 44k of 1M rows a side), on one thread or up to
    ``Config.fuse_keyed_tids`` tids (100k rows: φ5 zip -> city 5.4 -> 2.8 ms, φ6
    3.7 -> 2.7, φ8 18.5 -> 5.3); above that only with a cross-column equality,
    which has no parallel counting sort to refine it (1M: φ8 174 -> 57 ms; φ5 and
    φ6 refine faster, 17 vs 34 and 26 vs 38 ms).  One same-column equality before
    a final one (φ4) refines as fast as it fuses."""
    if not ctx.config.fuse_keyed or plan.sink is None or plan.sink.kind != KEYED:
        return False
    if not 0 < len(groups) <= FUSED_GROUPS:
        return False
    if any(s.algorithm != "equality" or s.storage != "arrays" for s in plan.stages):
        return False
    d = groups.desc
    if not (np.all(d[:, LHS] == d[:, LHE]) and np.all(d[:, RHS] == d[:, RHE])):
        return False
    key = plan.sink.keyed
    cross = any(s.pred.a != s.pred.b for s in plan.stages) or (
        key.cls != NONEQUALITY and key.a != key.b
    )
    if len(plan.stages) < 2 and key.cls != NONEQUALITY and not cross:
        return False
    tids = int(groups.left_sizes().sum() + groups.right_sizes().sum())
    if ctx.threads == 1 or tids <= ctx.config.fuse_keyed_tids:
        return True
    return cross


def count_fused(ctx: Context, plan: Plan, groups: Groups) -> Degrees:
    """A keyed count plan in one pass per group (:mod:`facet.kernels.composite`):
    the rows without a partner under a cross-column equality dropped, then the
    equalities' codes as composite ids, a counting sort by id, code tallies --
    on several threads, one range of the first equality's codes each
    (:func:`facet.kernels.composite.split_by_code`), from ``Config.fuse_split_tids``
    tids."""
    t0 = time.perf_counter()
    eqs = [s.pred for s in plan.stages]
    ea = np.array([ctx.row(p.a) for p in eqs], np.int64)
    eb = np.array([ctx.row(p.b) for p in eqs], np.int64)
    doms = np.array([ctx.domain(p) for p in eqs], np.int64)
    key = plan.sink.keyed
    ne = key.cls == NONEQUALITY
    done: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    ra, rb = ctx.row(key.a), ctx.row(key.b)
    same_columns = ra == rb and bool(np.array_equal(ea, eb))
    for d in groups.desc:
        lt = groups.buf[d[LS] : d[LE]]
        rt = groups.buf[d[RS] : d[RE]]
        shared = same_columns and d[LS] == d[RS] and d[LE] == d[RE]
        if not shared:  # rows no row of the other side shares a code with: gone first
            lt, rt = partnered(
                lt, rt, ctx.codes, ea, eb, doms, ra, rb, ctx.domain(key), ne,
                huge_empty(len(lt), lt.dtype), huge_empty(len(rt), rt.dtype),
            )  # fmt: skip
        pieces = [(lt, rt)]
        if len(eqs) and ctx.threads > 1 and len(lt) + len(rt) >= ctx.config.fuse_split_tids:
            # a pair lies within one range of the first equality's codes: one range a
            # thread, each writing the degrees of its own rows (a row is in one range a side)
            l_off, lp, r_off, rp = split_by_code(
                lt, rt, ctx.codes[ea[0]], ctx.codes[eb[0]], doms[0], ctx.threads
            )
            pieces = [
                (lp[l_off[i] : l_off[i + 1]], rp[r_off[i] : r_off[i + 1]])
                for i in range(ctx.threads)
            ]

        def run(_: int, piece: tuple[np.ndarray, np.ndarray], shared: bool = shared) -> tuple:
            lp, rp = piece[0], piece[0] if shared else piece[1]
            # degrees by position in the piece's sides (kernels/composite.py); one
            # array for both sides where their degrees are equal: a shared piece, or
            # one list of rows under swapped keys (φ8; equal_degrees)
            # (int32: a degree is below either side's size; half the fresh pages)
            one = shared or (_same_array(lp, rp) and equal_degrees(lp, rp, ea, eb, doms, ra, rb))
            dl = np.zeros(len(lp), np.int32)
            dr = dl if one else np.zeros(len(rp), np.int32)
            count_composite(
                lp, rp, ctx.codes, ea, eb, doms, ra, rb, ctx.domain(key), ne, dl, dr,
                ctx.config.keyed_direct_codes, shared, one,
            )  # fmt: skip
            return lp, dl, lp if one else rp, dr

        done.extend(run_parts(pieces, run, ctx.threads))
    if ctx.trace is not None:
        ctx.trace.counted(time.perf_counter() - t0, groups, fused=len(eqs))
    return Degrees.sparse(ctx.n, done)


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays are one (a kernel returning one array twice hands back
    two views of it)."""
    return a is b or (
        a.shape == b.shape and a.strides == b.strides and a.ctypes.data == b.ctypes.data
    )


def count_sink(ctx: Context, sink: CountSink, groups: Groups, scratch: Scratch) -> Degrees:
    """Degrees of ``groups`` under the sink's predicates."""
    t0 = time.perf_counter()
    deg = Degrees.zeros(ctx.n)
    if sink.kind == KEYED:
        _run(ctx, groups, _keyed_kernel(ctx, sink.keyed), deg, scratch)
    else:
        ineqs = list(sink.inequalities)
        rest = ineqs + list(sink.nonequalities)
        nl = np.array(sorted({ctx.row(p.a) for p in rest}), np.int64)
        nr = np.array(sorted({ctx.row(p.b) for p in rest}), np.int64)
        # small groups pair by pair under every predicate; the others come back
        big = _run(ctx, groups, _degree_kernel(ctx, rest, nl, nr, 1), deg, scratch)
        for sign, equalities in sink.terms if len(big) else ():
            g = big
            for eq in equalities:
                g = refine(ctx, g, Stage((eq,), "equality"))
            count_inequalities(ctx, g, ineqs, nl, nr, sign, deg, scratch)
    if ctx.trace is not None:
        ctx.trace.counted(time.perf_counter() - t0, groups)
    return deg


def count_inequalities(
    ctx: Context,
    groups: Groups,
    ineqs: list[PairPredicate],
    nl: np.ndarray,
    nr: np.ndarray,
    sign: int,
    deg: Degrees,
    scratch: Scratch,
) -> None:
    """Add ``sign`` x the degrees of ``groups`` under inequalities only: the
    counting kernel answers up to two; a group it hands back gets its first
    inequality split into dominance blocks (CDQ), until two remain."""
    while len(groups):
        groups = _run(ctx, groups, _degree_kernel(ctx, ineqs, nl, nr, sign), deg, scratch)
        if len(groups) == 0:
            return
        groups = refine(ctx, groups, Stage((ineqs[0],), "cdq"))
        ineqs = ineqs[1:]


def _degree_kernel(
    ctx: Context, preds: list[PairPredicate], nl: np.ndarray, nr: np.ndarray, sign: int
) -> Kernel:
    pa, pb, po = ctx.predicate_arrays(preds)
    codes, doms, nested, tune = ctx.codes, ctx.doms, ctx.config.nested_pairs, ctx.tune

    def kernel(g, left, right, stamp, sid):
        todo = np.zeros(len(g), np.bool_)
        sid = count_groups(
            g.buf, g.desc, codes, doms, pa, pb, po, nl, nr, sign,
            left, right, stamp, sid, todo, nested, tune,
        )  # fmt: skip
        return sid, todo

    return kernel


def _keyed_kernel(ctx: Context, p: PairPredicate) -> Kernel:
    ra, rb, dom, ne = ctx.row(p.a), ctx.row(p.b), ctx.domain(p), p.cls == NONEQUALITY
    codes, tune = ctx.codes, ctx.tune

    def kernel(g, left, right, stamp, sid):
        sid = count_keyed(g.buf, g.desc, codes, ra, rb, dom, ne, 1, left, right, stamp, sid, tune)
        return sid, None

    return kernel


def _run(ctx: Context, groups: Groups, kernel: Kernel, deg: Degrees, scratch: Scratch) -> Groups:
    """``kernel`` over the batch in parts on the worker threads; returns the
    groups it handed back (``todo``)."""
    if len(groups) == 0:
        return groups
    parts = split(groups, ctx.threads, ctx.config.parallel_work)
    scratch.ensure(len(parts))
    shared = groups.disjoint  # no row in two parts: all may write the same degrees

    def run(i: int, g: Groups) -> np.ndarray:
        mine = i == 0 or shared
        left = deg.left if mine else scratch.left[i]
        right = deg.right if mine else scratch.right[i]
        scratch.stamp_id[i], todo = kernel(g, left, right, scratch.stamp[i], scratch.stamp_id[i])
        return np.zeros(len(g), np.bool_) if todo is None else todo

    todos = run_parts(parts, run, ctx.threads)
    if not shared:
        for i in range(1, len(parts)):
            deg.left += scratch.left[i]
            deg.right += scratch.right[i]
            scratch.left[i][:] = 0
            scratch.right[i][:] = 0
    return groups.select(np.concatenate(todos))


#: key columns' codes are packed into one int64 while their widths sum to at most this
PACKED_BITS = 62


def count_key_candidates(ctx: Context, xs: list[str], y: str | None) -> tuple[int, int, int] | None:
    """``(violations, rows involved, rows counted)`` of a key (``y`` None: pairs of
    distinct rows holding the same non-NULL ``xs``) or an FD (``xs -> y``: ... and
    different non-NULL ``y``) over the whole table, from the few rows whose value of
    the most distinct key column two rows hold (:func:`facet.kernels.composite.key_candidates`):
    their keys (packed into an int64, else numbered column by column) are tallied
    (:func:`facet.kernels.composite.key_counts`) -- ``sum c(x) (c(x) - 1)`` and the
    rows of keys held twice (key); ``sum_x c(x)^2 - sum_y c(x, y)^2`` and the rows of
    keys holding two values of ``y`` (FD).  ``None`` when more than
    ``Config.key_prefilter_share`` of the rows pass (the plan counts faster then);
    known without a pass when the column has too few values for fewer to pass
    (of ``n`` rows over ``d`` values, at least ``n - d`` hold a repeated one)."""
    enc = ctx.enc
    n = enc.n
    limit = int(ctx.config.key_prefilter_share * n) + 1024
    first = max(xs, key=lambda c: enc.domain[c])
    dom = int(enc.domain[first])
    if n - dom > limit or dom > 4 * n + 1024:  # (codes are dense: never wider)
        return None
    cols = [*xs, *([y] if y is not None else [])]
    others = np.array([ctx.row(c) for c in cols if c != first], np.int64)
    tids, ok = key_candidates(enc.codes, ctx.row(first), others, dom, limit)
    if not ok:
        return None
    m = int(tids.size)
    widths = tuple(max(int(enc.domain[c]), 1).bit_length() for c in cols)
    if sum(widths) <= PACKED_BITS:  # keys packed into one int64 (Y the lowest digit)
        packed = pack([enc.column(c)[tids] for c in cols], widths)
        xkeys = packed >> widths[-1] if y is not None else packed
    else:
        xkeys = packed = _numbered(enc, xs, tids)
        if y is not None:
            packed = _numbered(enc, [y], tids, xkeys)
    v, r = key_counts(xkeys, packed if y is not None else packed[:0])
    return int(v), int(r), m


def _numbered(
    enc: EncodedTable, cols: list[str], tids: np.ndarray, ids: np.ndarray | None = None
) -> np.ndarray:
    """Dense numbers of the rows ``tids``' values of ``cols`` (after ``ids``, their
    numbers so far): one column at a time, ``id * domain + code`` renumbered by
    :func:`numpy.unique` (it stays below ``rows x domain``, far from overflowing)."""
    for c in cols:
        codes = enc.column(c)[tids].astype(np.int64)
        if ids is None:
            ids = codes
            continue
        _, ids = np.unique(ids * max(int(enc.domain[c]), 1) + codes, return_inverse=True)
    assert ids is not None
    return ids
