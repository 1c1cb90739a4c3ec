"""Refinement dispatch: one stage of a plan applied to a batch of groups
(paper §3.2, §5).

:func:`refine` is the one entry point: it routes big groups to compressed
bitmaps when the stage's storage says so (paper §4), gives a whole-table
single-column equality a parallel counting sort, cuts the rest into parts of
equal work on the worker threads, and :func:`run_kernel` maps the stage's
algorithm to its kernel.
"""

from __future__ import annotations

import time

import numpy as np

from facet.engine.bitmaps import refine_bitmaps
from facet.engine.context import Context
from facet.engine.groups import Groups, concat
from facet.engine.parallel import pool, run_parts, split
from facet.kernels.bhsm import refine_bhsm
from facet.kernels.common import LE, LHE, LHS, LS, OP_CODES, RE, RHE, RHS, RS, counting_sort_wins
from facet.kernels.composite import group_composite
from facet.kernels.decompose import refine_decompose
from facet.kernels.iejoin import refine_iejoin
from facet.kernels.refine import (
    KIND_EQ,
    KIND_INEQ,
    KIND_NE,
    composite_keys,
    count_codes,
    equality_runs,
    scatter_by_code,
)
from facet.kernels.refine import (
    refine as refine_runs,
)
from facet.planner.plan import Stage, leading_equalities

_KIND = {"equality": KIND_EQ, "nonequality": KIND_NE, "hsm": KIND_INEQ}

#: leading equalities are grouped at once, serially, over at most this many
#: reflexive groups (the initial pairs)
SERIAL_GROUPS = 4


def refine(ctx: Context, groups: Groups, stage: Stage) -> Groups:
    """The sub-pairs of ``groups`` that satisfy the stage's predicate(s)."""
    if len(groups) == 0:
        return groups
    t0 = time.perf_counter()
    outs: list[Groups] = []
    rest = groups
    on_bitmaps = _bitmap_mask(ctx, groups, stage)
    n_bitmaps = 0
    if on_bitmaps is not None:
        n_bitmaps = int(on_bitmaps.sum())
        p = stage.pred
        outs.append(
            refine_bitmaps(
                groups.select(on_bitmaps), ctx.codes, ctx.row(p.a), ctx.row(p.b), OP_CODES[p.op]
            )
        )
        rest = groups.select(~on_bitmaps)
    if len(rest):
        whole = _whole_table_equality(ctx, rest, stage)
        if whole is not None:
            outs.append(whole)
        else:
            parts = split(rest, ctx.threads, ctx.config.parallel_work)
            outs.extend(run_parts(parts, lambda _, g: run_kernel(ctx, g, stage), ctx.threads))
    out = concat(outs)
    # an equality splits each side by value: disjoint sides stay disjoint
    out.disjoint = groups.disjoint and stage.algorithm == "equality"
    if ctx.trace is not None:
        ctx.trace.refined(stage, time.perf_counter() - t0, groups, out, n_bitmaps)
    return out


def run_kernel(ctx: Context, groups: Groups, stage: Stage) -> Groups:
    """The stage's kernel on one batch (one thread)."""
    p = stage.pred
    alg = stage.algorithm
    codes, tune = ctx.codes, ctx.tune
    ra, rb, op = ctx.row(p.a), ctx.row(p.b), OP_CODES[p.op]
    if alg in _KIND:
        buf, desc = refine_runs(
            groups.buf, groups.desc, codes, ra, rb, ctx.domain(p), _KIND[alg], op, tune
        )
    elif alg == "bhsm":
        buf, desc = refine_bhsm(
            groups.buf, groups.desc, codes, ra, rb, ctx.domain(p), op, ctx.config.bhsm_bins, tune
        )
    elif alg == "cdq":
        buf, desc = refine_decompose(
            groups.buf, groups.desc, codes, ra, rb, ctx.domain(p), op, tune
        )
    elif alg == "iejoin":
        q = stage.preds[1]
        buf, desc = refine_iejoin(
            groups.buf,
            groups.desc,
            codes,
            ra,
            rb,
            op,
            ctx.row(q.a),
            ctx.row(q.b),
            OP_CODES[q.op],
            ctx.domain(p),
            ctx.domain(q),
            tune,
        )
    else:
        raise ValueError(f"unknown refinement algorithm {alg!r}")
    return Groups(buf, desc)


def _bitmap_mask(ctx: Context, groups: Groups, stage: Stage) -> np.ndarray | None:
    """Which groups this refinement keeps on compressed bitmaps (``None``: none)."""
    if stage.storage == "bitmaps":
        return np.ones(len(groups), bool)
    if stage.storage != "hybrid":
        return None
    big = (groups.left_sizes() + groups.right_sizes()) >= ctx.config.bitmap_min_tids
    return big if big.any() else None


def _whole_table_equality(ctx: Context, groups: Groups, stage: Stage) -> Groups | None:
    """A single-column equality on one big reflexive group (the whole table,
    typically): its counting sort split over the threads (row ranges count
    codes, then scatter, stable: the serial kernel's groups); ``None`` where
    that does not apply."""
    if stage.algorithm != "equality" or stage.pred.a != stage.pred.b:
        return None
    tids = _whole_group(ctx, groups)
    if tids is None:
        return None
    dom = ctx.enc.domain[stage.pred.a]
    if not counting_sort_wins(len(tids), dom, ctx.tune):
        return None
    return _parallel_counting_sort(ctx, tids, ctx.enc.column(stage.pred.a), dom)


def refine_equalities(ctx: Context, groups: Groups, stages: list[Stage]) -> tuple[Groups, int]:
    """The plan's leading same-column equalities as one: on one big reflexive group
    (the whole table) a composite code per row over their columns, then one
    parallel counting sort by it; on up to :data:`SERIAL_GROUPS` reflexive groups
    without holes otherwise, serially (:func:`_grouped_serially`) -- instead of
    one refinement each, the later ones over many small groups (φ9's origin then
    dest: 56k groups).  Returns the groups and how many stages they answer (0:
    none, the groups as they were)."""
    eqs = leading_equalities(stages)
    if eqs < 2 or not ctx.config.group_equalities or len(groups) == 0:
        return groups, 0
    cols = [s.pred.a for s in stages[:eqs]]
    doms = np.array([max(ctx.enc.domain[c], 1) for c in cols], np.int64)
    tids = _whole_group(ctx, groups)
    if tids is None:
        d = groups.desc
        reflexive = (d[:, LS] == d[:, RS]) & (d[:, LE] == d[:, RE])
        holes = (d[:, LHS] != d[:, LHE]) | (d[:, RHS] != d[:, RHE])
        if len(groups) > SERIAL_GROUPS or not (reflexive & ~holes).all():
            return groups, 0
        return _grouped_serially(ctx, groups, stages[:eqs], cols, doms), eqs
    span = 1
    for d in doms.tolist():
        span *= d
    if span >= 2**31 or not counting_sort_wins(len(tids), span, ctx.tune):
        return groups, 0
    t0 = time.perf_counter()
    rows = np.array([ctx.row(c) for c in cols], np.int64)
    keys = np.empty(ctx.n, np.int32)
    composite_keys(ctx.codes, rows, doms, tids, keys)
    out = _parallel_counting_sort(ctx, tids, keys, span)
    out.disjoint = groups.disjoint
    if ctx.trace is not None:
        ctx.trace.grouped(stages[:eqs], time.perf_counter() - t0, groups, out)
    return out, eqs


def _grouped_serially(
    ctx: Context, groups: Groups, stages: list[Stage], cols: list[str], doms: np.ndarray
) -> Groups:
    """The equalities over each reflexive group (the whole table below the
    parallel sort's size, or on one thread) on one thread: dense composite ids,
    one counting sort per group (:func:`facet.kernels.composite.group_composite`),
    instead of a refinement each -- the later ones over many small groups."""
    rows = np.array([ctx.row(c) for c in cols], np.int64)
    t0 = time.perf_counter()
    bufs, descs, at = [], [], 0
    for d in groups.desc:
        buf, desc = group_composite(groups.buf[d[0] : d[1]], ctx.codes, rows, doms)
        bufs.append(buf)
        descs.append(desc + at)
        at += len(buf)
    out = Groups(
        np.concatenate(bufs) if len(bufs) != 1 else bufs[0],
        np.concatenate(descs) if len(descs) != 1 else descs[0],
    )
    out.disjoint = groups.disjoint
    if ctx.trace is not None:
        ctx.trace.grouped(stages, time.perf_counter() - t0, groups, out)
    return out


def _whole_group(ctx: Context, groups: Groups) -> np.ndarray | None:
    """The tids of ``groups`` when it is one reflexive group big enough to split
    over the threads (the whole table, typically), else ``None``."""
    if ctx.threads == 1 or len(groups) != 1:
        return None
    d = groups.desc[0]
    if not (d[0] == d[4] and d[1] == d[5] and d[2] == d[3]):
        return None
    if int(d[1] - d[0]) < ctx.config.parallel_work * ctx.threads:
        return None
    return groups.buf[d[0] : d[1]]


def _parallel_counting_sort(ctx: Context, tids: np.ndarray, k: np.ndarray, dom: int) -> Groups:
    """``tids`` grouped by ``k[t]`` (codes below ``dom``; NULLs dropped): row ranges
    count codes on the threads, then scatter -- stable, the serial kernel's groups."""
    m = len(tids)
    cuts = np.linspace(0, m, ctx.threads + 1).astype(np.int64)
    ranges = list(zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True))
    counts = np.zeros((len(ranges), max(dom, 1)), np.int64)
    workers = pool(ctx.threads)
    list(workers.map(lambda i: count_codes(tids, *ranges[i], k, counts[i]), range(len(ranges))))
    # each range's first slot per code: the code's start plus the earlier ranges'
    # rows of it (row by row: numpy's cumsum down a short axis runs column by column)
    total = counts[0].copy()
    for i in range(1, len(ranges)):
        total += counts[i]
    start = np.zeros(total.shape[0], np.int64)
    np.cumsum(total[:-1], out=start[1:])
    cursor = np.empty_like(counts)
    cursor[0] = start
    for i in range(1, len(ranges)):
        np.add(cursor[i - 1], counts[i - 1], out=cursor[i])
    out = np.empty(int(total.sum()), np.int32)
    list(
        workers.map(
            lambda i: scatter_by_code(tids, *ranges[i], k, cursor[i], out), range(len(ranges))
        )
    )
    return Groups(out, equality_runs(total))
