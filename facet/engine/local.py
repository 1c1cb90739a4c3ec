"""The local engine: initial pairs + plan + kernels + sink (DESIGN §2, §3).

Row filters cut each side of the initial pairs; then

* **count**: equalities are refined (cheap, they partition), and the counting
  sink answers everything else per group -- inequalities in closed form
  (sorting / Fenwick), non-equalities by inclusion-exclusion
  ``count(P and A != B) = count(P, A and B not NULL) - count(P and A = B)``;
  groups with more than two inequalities get one refined first;
* **pairs / blocks**: every stage is refined, depth first over bounded
  batches so output streams and ``--limit`` stops early; groups with at most
  ``config.nested_pairs`` candidate pairs are finished pair by pair.

Initial pairs are a parameter, so scoped and incremental detection (DESIGN §2)
reuse the same pipeline.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from facet.encoding import EncodedTable
from facet.engine.bitmaps import refine_bitmaps
from facet.groups import Groups
from facet.kernels.bhsm import refine_bhsm
from facet.kernels.common import OP_CODES, compare_arrays, use_counting_sort
from facet.kernels.count import count_groups, count_keyed
from facet.kernels.decompose import refine_decompose
from facet.kernels.expand import expand
from facet.kernels.iejoin import refine_iejoin
from facet.kernels.refine import (
    KIND_EQ,
    KIND_INEQ,
    KIND_NE,
    count_codes,
    equality_runs,
    refine,
    scatter_by_code,
)
from facet.language.normalize import (
    EQUALITY,
    NONEQUALITY,
    NormalDC,
    PairPredicate,
    RowFilter,
)
from facet.planner.config import DEFAULT, Config
from facet.planner.plan import Plan, Stage

_KIND = {"equality": KIND_EQ, "nonequality": KIND_NE, "hsm": KIND_INEQ}


@dataclass
class Degrees:
    """Per-row violation degrees of one DC (``t`` side and ``t'`` side)."""

    left: np.ndarray
    right: np.ndarray

    @property
    def violations(self) -> int:
        return int(self.left.sum())

    @property
    def rows_involved(self) -> int:
        return int(np.count_nonzero((self.left > 0) | (self.right > 0)))


@dataclass
class StageRun:
    """What one stage actually did (summed over its calls)."""

    calls: int = 0
    seconds: float = 0.0
    groups_in: int = 0
    tids_in: int = 0
    groups_out: int = 0
    tids_out: int = 0
    #: sum |L| x |R| of the output groups (an upper bound on its pairs)
    candidates_out: int = 0


class Trace:
    """Actual sizes and times per stage (``facet explain --analyze``)."""

    def __init__(self) -> None:
        self.stages: dict[object, StageRun] = {}

    def add(self, key: object, seconds: float, groups_in: Groups, out: Groups | None) -> None:
        r = self.stages.setdefault(key, StageRun())
        r.calls += 1
        r.seconds += seconds
        r.groups_in += len(groups_in)
        r.tids_in += int(groups_in.left_sizes().sum() + groups_in.right_sizes().sum())
        if out is not None:
            r.groups_out += len(out)
            r.tids_out += int(out.left_sizes().sum() + out.right_sizes().sum())
            r.candidates_out += int(out.candidate_pairs().sum())


class LocalEngine:
    """Runs plans over one encoded table."""

    def __init__(self, enc: EncodedTable, config: Config = DEFAULT) -> None:
        self.enc = enc
        self.config = config
        self.n = enc.n
        self._stamp = np.zeros(max(self.n, 1), np.int64)
        self.threads = max(1, config.threads or os.cpu_count() or 1)
        #: per-stage actual sizes and seconds, when explain --analyze asks for them
        self.trace: Trace | None = None
        #: per extra worker: (deg_left, deg_right, stamp, stamp_id)
        self._scratch: list[list] = []
        self._doms = np.zeros(len(enc.index), np.int64)
        for name, row in enc.index.items():
            self._doms[row] = enc.domain[name]
        self._stamp_id = 0

    # ------------------------------------------------------------ filters, initial pairs

    def filter_mask(self, filters: list[RowFilter]) -> np.ndarray | None:
        """Rows satisfying every filter (``None``: no filter)."""
        if not filters:
            return None
        enc = self.enc
        mask = np.ones(self.n, bool)
        for f in filters:
            x = enc.column(f.column)
            if isinstance(f.other, str):
                y = enc.column(f.other)
                ok = (x >= 0) & (y >= 0)
            else:
                y = enc.const_codes[(f.column, f.other)]
                ok = x >= 0
            mask &= ok & compare_arrays(x, OP_CODES[f.op], y)
        return mask

    def single_rows(self, dc: NormalDC) -> np.ndarray:
        """Violating rows of a single-tuple DC."""
        mask = self.filter_mask(list(dc.filters))
        if mask is None:
            return np.arange(self.n, dtype=np.int64)
        return np.flatnonzero(mask)

    def initial_groups(self, dc: NormalDC) -> Groups:
        """The reflexive pair ``(all, all)`` cut by each side's row filters."""
        m0 = self.filter_mask(dc.side_filters(0))
        m1 = self.filter_mask(dc.side_filters(1))
        allt = np.arange(self.n, dtype=np.int32)
        left = allt if m0 is None else allt[m0]
        if (
            m0 is None
            and m1 is None
            or (m0 is not None and m1 is not None and np.array_equal(m0, m1))
        ):
            return Groups.pair(left)
        right = allt if m1 is None else allt[m1]
        return Groups.pair(left, right)

    # ------------------------------------------------------------ refinement

    def _rows(self, preds: list[PairPredicate]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        idx = self.enc.index
        pa = np.array([idx[p.a] for p in preds], np.int64)
        pb = np.array([idx[p.b] for p in preds], np.int64)
        po = np.array([OP_CODES[p.op] for p in preds], np.int64)
        return pa, pb, po

    def _parts(self, groups: Groups) -> list[Groups]:
        """The batch cut into about ``threads`` parts of equal work, when it is
        big enough to be worth running in parallel (kernels release the GIL)."""
        if self.threads == 1 or len(groups) < 2:
            return [groups]
        work = groups.left_sizes() + groups.right_sizes()
        total = int(work.sum())
        if total < self.config.parallel_work:
            return [groups]
        csum = np.cumsum(work)
        cuts = np.searchsorted(csum, [total * k // self.threads for k in range(1, self.threads)])
        bounds = np.unique(np.r_[0, np.minimum(cuts + 1, len(groups)), len(groups)])
        return [
            Groups(groups.buf, np.ascontiguousarray(groups.desc[a:b]), groups.disjoint)
            for a, b in zip(bounds[:-1], bounds[1:], strict=True)
            if b > a
        ]

    def refine(self, groups: Groups, stage: Stage, traced: bool = True) -> Groups:
        """Apply one refinement to a batch (parts in parallel)."""
        if len(groups) == 0:
            return groups
        out = self._refine_any(groups, stage, traced)
        # an equality splits each side by value: disjoint sides stay disjoint
        out.disjoint = groups.disjoint and stage.algorithm == "equality"
        return out

    def _refine_any(self, groups: Groups, stage: Stage, traced: bool) -> Groups:
        if traced and self.trace is not None:
            t = time.perf_counter()
            out = self.refine(groups, stage, traced=False)
            self.trace.add(stage, time.perf_counter() - t, groups, out)
            return out
        on_bitmaps = self._bitmap_groups(groups, stage)
        if on_bitmaps is not None:
            p = stage.pred
            enc = self.enc
            big = refine_bitmaps(
                groups.select(on_bitmaps),
                enc.codes,
                enc.index[p.a],
                enc.index[p.b],
                OP_CODES[p.op],
            )
            rest = groups.select(~on_bitmaps)
            if len(rest) == 0:
                return big
            return _concat([big, self._refine_parts(rest, stage)])
        return self._refine_parts(groups, stage)

    def _bitmap_groups(self, groups: Groups, stage: Stage) -> np.ndarray | None:
        """Which groups this refinement keeps on compressed bitmaps (``None``: none)."""
        storage = self.config.storage
        if storage == "arrays" or len(stage.preds) != 1:
            return None
        # BHSM keeps its bins on arrays: a bitmap merge would hand every suffix back
        # materialized (the bitmap path is HSM's running union)
        if storage == "bitmaps":
            if stage.algorithm not in ("equality", "nonequality", "hsm"):
                return None
            return np.ones(len(groups), bool)
        if stage.algorithm not in ("nonequality", "hsm"):
            return None
        big = (groups.left_sizes() + groups.right_sizes()) >= self.config.bitmap_min_tids
        return big if big.any() else None

    def _refine_parts(self, groups: Groups, stage: Stage) -> Groups:
        parts = self._parts(groups)
        if len(parts) == 1:
            whole = self._refine_whole(groups, stage)
            return whole if whole is not None else self._refine(groups, stage)
        return _concat(list(_pool(self.threads).map(lambda g: self._refine(g, stage), parts)))

    def _refine_whole(self, groups: Groups, stage: Stage) -> Groups | None:
        """A single-column equality on one big reflexive group (the whole table,
        typically), its counting sort split over the threads; ``None`` where
        that does not apply (the serial kernel gives the same groups)."""
        if self.threads == 1 or len(groups) != 1 or stage.algorithm != "equality":
            return None
        p = stage.pred
        d = groups.desc[0]
        if p.a != p.b or not (d[0] == d[4] and d[1] == d[5] and d[2] == d[3]):
            return None
        m = int(d[1] - d[0])
        dom = self.enc.domain[p.a]
        if m < self.config.parallel_work * self.threads or not use_counting_sort(m, dom):
            return None
        tids = groups.buf[d[0] : d[1]]
        k = self.enc.column(p.a)
        cuts = np.linspace(0, m, self.threads + 1).astype(np.int64)
        ranges = list(zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True))
        counts = np.zeros((len(ranges), max(dom, 1)), np.int64)
        pool = _pool(self.threads)
        list(pool.map(lambda i: count_codes(tids, *ranges[i], k, counts[i]), range(len(ranges))))
        total = counts.sum(axis=0)
        start = np.zeros(total.shape[0], np.int64)
        np.cumsum(total[:-1], out=start[1:])
        cursor = start + np.cumsum(counts, axis=0) - counts  # each range's slot per code
        out = np.empty(int(total.sum()), np.int32)
        list(
            pool.map(
                lambda i: scatter_by_code(tids, *ranges[i], k, cursor[i], out),
                range(len(ranges)),
            )
        )
        return Groups(out, equality_runs(total))

    def _refine(self, groups: Groups, stage: Stage) -> Groups:
        p = stage.pred
        enc = self.enc
        if stage.algorithm == "iejoin":
            q = stage.preds[1]
            buf, desc = refine_iejoin(
                groups.buf,
                groups.desc,
                enc.codes,
                enc.index[p.a],
                enc.index[p.b],
                OP_CODES[p.op],
                enc.index[q.a],
                enc.index[q.b],
                OP_CODES[q.op],
                max(enc.domain[p.a], enc.domain[p.b]),
                max(enc.domain[q.a], enc.domain[q.b]),
            )
            return Groups(buf, desc)
        ra, rb = enc.index[p.a], enc.index[p.b]
        dom = max(enc.domain[p.a], enc.domain[p.b])
        alg = stage.algorithm
        op = OP_CODES[p.op]
        if alg in _KIND:
            buf, desc = refine(groups.buf, groups.desc, enc.codes, ra, rb, dom, _KIND[alg], op)
        elif alg == "bhsm":
            buf, desc = refine_bhsm(
                groups.buf, groups.desc, enc.codes, ra, rb, dom, op, self.config.bhsm_bins
            )
        elif alg == "cdq":
            buf, desc = refine_decompose(groups.buf, groups.desc, enc.codes, ra, rb, dom, op)
        else:
            raise ValueError(f"unknown refinement algorithm {alg!r}")
        return Groups(buf, desc)

    # ------------------------------------------------------------ count

    def count(self, plan: Plan, groups: Groups | None = None) -> Degrees:
        """Per-row degrees of a two-tuple DC, never enumerating pairs to count them."""
        if groups is None:
            groups = self.initial_groups(plan.dc)
        sink = plan.count_sink
        for stage in plan.of_class(EQUALITY):
            if sink.equality is not None and stage.pred is sink.equality:
                continue  # the sink answers the last equality itself
            groups = self.refine(groups, stage)
        return self.count_sink(plan, groups)

    def count_sink(self, plan: Plan, groups: Groups) -> Degrees:
        """Degrees of the groups left after the plan's equalities, by the counting
        sink (``groups`` not yet refined by ``plan.count_sink.equality``, if any)."""
        deg = Degrees(np.zeros(self.n, np.int64), np.zeros(self.n, np.int64))
        t_sink = time.perf_counter()
        self._count_rest(plan, groups, deg)
        if self.trace is not None:
            self.trace.add("count-sink", time.perf_counter() - t_sink, groups, None)
        return deg

    def _count_rest(self, plan: Plan, groups: Groups, deg: Degrees) -> None:
        sink = plan.count_sink
        ineqs = list(sink.inequalities)
        neqs = list(sink.nonequalities)
        if sink.equality is not None:
            self._count_keyed(groups, sink.equality, deg)
            return
        if not ineqs and len(neqs) == 1:
            self._count_keyed(groups, neqs[0], deg)
            return
        rest = ineqs + neqs
        idx = self.enc.index
        nl = np.array(sorted({idx[p.a] for p in rest}), np.int64)
        nr = np.array(sorted({idx[p.b] for p in rest}), np.int64)
        big = self._count(groups, rest, nl, nr, 1, deg)
        if len(big) == 0:
            return
        if not neqs:
            self._count_inequalities(big, ineqs, nl, nr, 1, deg)
            return
        for size in range(len(neqs) + 1):
            sign = -1 if size % 2 else 1
            for subset in itertools.combinations(neqs, size):
                g = big
                for p in subset:
                    eq = Stage((PairPredicate(p.a, "=", p.b),), "equality")
                    g = self.refine(g, eq, traced=False)
                self._count_inequalities(g, ineqs, nl, nr, sign, deg)

    def _count(
        self,
        groups: Groups,
        preds: list[PairPredicate],
        nl: np.ndarray,
        nr: np.ndarray,
        sign: int,
        deg: Degrees,
    ) -> Groups:
        """Run the counting kernel; returns the groups it left to the caller."""
        pa, pb, po = self._rows(preds)
        codes, doms, nested = self.enc.codes, self._doms, self.config.nested_pairs

        def kernel(g, left, right, stamp, sid):
            todo = np.zeros(len(g), np.bool_)
            sid = count_groups(
                g.buf, g.desc, codes, doms, pa, pb, po, nl, nr, sign,
                left, right, stamp, sid, todo, nested,
            )  # fmt: skip
            return sid, todo

        return self._degrees(groups, kernel, deg)

    def _count_keyed(self, groups: Groups, p: PairPredicate, deg: Degrees) -> None:
        """Degrees under one final equality or non-equality, in closed form
        (code counts per group, no sort)."""
        enc = self.enc
        ra, rb = enc.index[p.a], enc.index[p.b]
        dom = max(enc.domain[p.a], enc.domain[p.b])
        ne = p.cls == NONEQUALITY

        def kernel(g, left, right, stamp, sid):
            sid = count_keyed(g.buf, g.desc, enc.codes, ra, rb, dom, ne, 1, left, right, stamp, sid)
            return sid, None

        self._degrees(groups, kernel, deg)

    def _degrees(self, groups: Groups, kernel, deg: Degrees) -> Groups:
        """Run a degree kernel over the batch, in parts on all cores (each worker
        adds into its own degree arrays, summed at the end).  ``kernel(g, left,
        right, stamp, stamp_id) -> (stamp_id, todo flags or None)``."""
        if len(groups) == 0:
            return groups
        parts = self._parts(groups)
        while len(self._scratch) < len(parts) - 1:
            self._scratch.append(
                [
                    np.zeros(self.n, np.int64),
                    np.zeros(self.n, np.int64),
                    np.zeros(self.n, np.int64),
                    0,
                ]
            )

        shared = groups.disjoint  # no row in two parts: all write the same degrees

        def run(i: int):
            g = parts[i]
            if i == 0:
                left, right, stamp, sid = deg.left, deg.right, self._stamp, self._stamp_id
            else:
                left, right, stamp, sid = self._scratch[i - 1]
                if shared:
                    left, right = deg.left, deg.right
            sid, todo = kernel(g, left, right, stamp, sid)
            if i == 0:
                self._stamp_id = sid
            else:
                self._scratch[i - 1][3] = sid
            return np.zeros(len(g), np.bool_) if todo is None else todo

        if len(parts) == 1:
            return groups.select(run(0))
        todos = list(_pool(self.threads).map(run, range(len(parts))))
        for i in range(1, 1 if shared else len(parts)):
            sl = self._scratch[i - 1]
            deg.left += sl[0]
            deg.right += sl[1]
            sl[0][:] = 0
            sl[1][:] = 0
        return groups.select(np.concatenate(todos))

    def _count_inequalities(
        self,
        groups: Groups,
        ineqs: list[PairPredicate],
        nl: np.ndarray,
        nr: np.ndarray,
        sign: int,
        deg: Degrees,
    ) -> None:
        while len(groups):
            groups = self._count(groups, ineqs, nl, nr, sign, deg)
            if len(groups) == 0:
                return
            # more than two inequalities on a large group: split one into dominance
            # blocks first (CDQ), then count the rest
            groups = self.refine(groups, Stage((ineqs[0],), "cdq"), traced=False)
            ineqs = ineqs[1:]

    # ------------------------------------------------------------ pairs / blocks

    def _walk_arrays(self, stages: list[Stage]):
        preds = [p for s in stages for p in s.preds]
        pa, pb, po = self._rows(preds)
        starts = np.cumsum([0] + [len(s.preds) for s in stages])
        return pa, pb, po, starts

    def iter_pairs(
        self, plan: Plan, groups: Groups | None = None, stages: list[Stage] | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Violating pairs ``(t, t')`` in chunks, depth first (``stages``: the ones
        still to run on ``groups``, default all of the plan's)."""
        if groups is None:
            groups = self.initial_groups(plan.dc)
        stages = plan.stages if stages is None else stages
        arrays = self._walk_arrays(stages)
        n_preds = int(arrays[3][-1])
        for kind, a, b in self._walk(groups, stages, 0, arrays):
            if kind == "pairs":
                yield a, b
            else:
                yield from self._expand(a, n_preds, *arrays[:3])

    def iter_blocks(
        self, plan: Plan, groups: Groups | None = None, stages: list[Stage] | None = None
    ) -> Iterator[Groups]:
        """The final pairs of tid sets; groups finished pair by pair come as
        one-row-left blocks."""
        if groups is None:
            groups = self.initial_groups(plan.dc)
        stages = plan.stages if stages is None else stages
        arrays = self._walk_arrays(stages)
        for kind, a, b in self._walk(groups, stages, 0, arrays):
            yield _pairs_as_blocks(a, b) if kind == "pairs" else a

    def _walk(self, groups: Groups, stages: list[Stage], k: int, arrays):
        """Depth first through the stages: ``("pairs", t1, t2)`` for groups finished
        pair by pair, ``("groups", final_groups, None)`` for the rest."""
        if len(groups) == 0:
            return
        pa, pb, po, starts = arrays
        if k == len(stages):
            yield "groups", groups, None
            return
        small = groups.candidate_pairs() <= self.config.nested_pairs
        if small.any():
            nested = groups.select(small)
            t = time.perf_counter()
            for t1, t2 in self._expand(nested, int(starts[k]), pa, pb, po):
                yield "pairs", t1, t2
            if self.trace is not None:
                self.trace.add(("nested", stages[k]), time.perf_counter() - t, nested, None)
            groups = groups.select(~small)
        for chunk in groups.split(self.config.batch_work):
            yield from self._walk(self.refine(chunk, stages[k]), stages, k + 1, arrays)

    def _expand(self, groups, start, pa, pb, po):
        g, a, b = 0, -1, -1
        while g < len(groups):
            cap = self.config.pair_chunk
            out1 = np.empty(cap, np.int32)
            out2 = np.empty(cap, np.int32)
            n, g, a, b = expand(
                groups.buf,
                groups.desc,
                self.enc.codes,
                pa,
                pb,
                po,
                start,
                g,
                a,
                b,
                cap,
                out1,
                out2,
            )
            if n:
                yield out1[:n], out2[:n]


def _concat(outs: list[Groups]) -> Groups:
    """Batches side by side in one buffer."""
    sizes = np.array([len(o.buf) for o in outs], np.int64)
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    buf = np.concatenate([o.buf for o in outs])
    desc = np.concatenate([o.desc + off for o, off in zip(outs, offsets, strict=True)])
    return Groups(buf, np.ascontiguousarray(desc), all(o.disjoint for o in outs))


_POOLS: dict[int, ThreadPoolExecutor] = {}


def _pool(threads: int) -> ThreadPoolExecutor:
    """A process-wide pool per size (kernels are ``nogil``, so threads run in parallel)."""
    pool = _POOLS.get(threads)
    if pool is None:
        pool = _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="facet")
    return pool


def _pairs_as_blocks(t1: np.ndarray, t2: np.ndarray) -> Groups:
    """Explicit pairs as groups ``({t}, {t', ...})``, one per distinct ``t``."""
    order = np.lexsort((t2, t1))
    t1 = t1[order]
    t2 = t2[order]
    starts = np.flatnonzero(np.r_[True, t1[1:] != t1[:-1]])
    ends = np.r_[starts[1:], len(t1)]
    k = len(starts)
    buf = np.concatenate([t1[starts], t2]).astype(np.int32)
    desc = np.empty((k, 8), np.int64)
    desc[:, 0] = np.arange(k)
    desc[:, 1] = desc[:, 0] + 1
    desc[:, 2] = desc[:, 0]
    desc[:, 3] = desc[:, 0]
    desc[:, 4] = k + starts
    desc[:, 5] = k + ends
    desc[:, 6] = desc[:, 4]
    desc[:, 7] = desc[:, 4]
    return Groups(buf, desc)
