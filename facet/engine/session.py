"""A run's session: encoded data, statistics, one plan per DC and sink, and the
engine that executes them (DESIGN §3: planner -> engine -> sinks).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa

from facet.encoding import EncodedTable
from facet.engine.local import Degrees, LocalEngine
from facet.groups import Groups
from facet.kernels.expand import sides_to_lists
from facet.language.ast import DC
from facet.language.normalize import EQUALITY, INEQUALITY, NONEQUALITY, NormalDC, normalize
from facet.planner.config import DEFAULT, Config
from facet.planner.plan import Plan, make_plan
from facet.planner.stats import Statistics
from facet.result import BLOCK_SCHEMA, PAIR_SCHEMA


class Session:
    """Encoded data, statistics and plans of one run; counts, and expands pairs
    and blocks on demand."""

    def __init__(self, enc: EncodedTable, dcs: list[DC], config: Config = DEFAULT) -> None:
        self.enc = enc
        self.dcs = dcs
        self.config = config
        self.engine = LocalEngine(enc, config)
        self.stats = Statistics(enc, p=config.hll_p, sample_rate=config.sample_rate)
        self.normal: list[NormalDC] = [normalize(d) for d in dcs]
        self._initial: dict[int, Groups] = {}
        self._plans: dict[tuple[int, str], Plan] = {}
        #: plans carry every estimate (``facet explain``), not only those they need
        self.estimates = False
        #: pairs wanted per DC (``--limit``): pair plans that stream
        self.limit: int | None = None

    def initial(self, i: int) -> Groups:
        """DC ``i``'s initial pairs (row filters applied)."""
        g = self._initial.get(i)
        if g is None:
            g = self._initial[i] = self.engine.initial_groups(self.normal[i])
        return g

    def plan(self, i: int, output: str = "count") -> Plan | None:
        """The plan of DC ``i`` for a sink (``None`` for a single-tuple DC)."""
        nd = self.normal[i]
        if nd.arity == 1:
            return None
        key = (i, output)
        plan = self._plans.get(key)
        if plan is None:
            g = self.initial(i)
            left, right = int(g.left_sizes()[0]), int(g.right_sizes()[0])
            reflexive = bool(g.desc[0, 0] == g.desc[0, 4] and g.desc[0, 1] == g.desc[0, 5])
            classes = [p.cls for p in dict.fromkeys(nd.preds)]
            needs = classes.count(EQUALITY) >= 2 or (
                output != "count" and (INEQUALITY in classes or classes.count(NONEQUALITY) >= 2)
            )
            stats = self.stats if needs and self.config.order == "planned" else None
            sample = None
            if stats is not None and output == "pairs" and classes.count(INEQUALITY) >= 2:
                sample = self._sample_pairs(nd, g)
            limit = self.limit if output == "pairs" else None
            plan = make_plan(
                nd,
                stats,
                self.config,
                output,
                left,
                right,
                reflexive,
                sample,
                estimates=self.estimates,
                limit=limit,
            )
            self._plans[key] = plan
        return plan

    def _sample_pairs(self, nd: NormalDC, g: Groups) -> float:
        """Pairs satisfying the DC's equalities and inequalities, estimated by
        counting them on the tid sample (``hash(tid) < rate``) and scaling."""
        sample = self.stats.sample
        if sample.size == 0:
            return 0.0
        d = g.desc[0]
        in_sample = np.zeros(self.enc.n, np.bool_)
        in_sample[sample] = True  # (np.intersect1d sorts or hashes both sides: 100x slower)
        side_l = g.buf[d[0] : d[1]]
        side_r = g.buf[d[4] : d[5]]
        left = np.sort(side_l[in_sample[side_l]])
        right = np.sort(side_r[in_sample[side_r]])
        preds = tuple(p for p in dict.fromkeys(nd.preds) if p.cls != NONEQUALITY)
        mini = make_plan(
            NormalDC(nd.dc, 2, (), preds), None, Config(order="written", threads=1), "count"
        )
        found = self.engine.count(mini, Groups.pair(left, right)).violations
        return found * (self.enc.n / sample.size) ** 2

    # -- counts
    def count(self, i: int, engine: LocalEngine | None = None) -> tuple[int, int]:
        """``(violations, rows involved)`` of DC ``i`` (``engine``: a worker's own)."""
        engine = engine or self.engine
        plan = self.plan(i, "count")
        if plan is None:
            rows = engine.single_rows(self.normal[i])
            return len(rows), len(rows)
        deg: Degrees = engine.count(plan, self.initial(i))
        return deg.violations, deg.rows_involved

    # -- pairs
    def dc_pairs(
        self, i: int, limit: int | None = None, start: tuple[Groups, list] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """Pairs of DC ``i`` as ``(dc, t1, t2)`` batches, at most ``limit``
        (``start``: its groups after shared stages and the stages left, from a trie)."""
        left = limit
        plan = self.plan(i, "pairs")
        if plan is None:
            rows = self.engine.single_rows(self.normal[i])
            chunks: Iterable[tuple[np.ndarray, np.ndarray | None]] = [
                (rows[s : s + (1 << 20)], None) for s in range(0, len(rows), 1 << 20)
            ]
        elif start is not None:
            chunks = self.engine.iter_pairs(plan, start[0], start[1])
        else:
            chunks = self.engine.iter_pairs(plan, self.initial(i))
        for t1, t2 in chunks:
            if left is not None:
                if left <= 0:
                    return
                if len(t1) > left:
                    t1 = t1[:left]
                    t2 = None if t2 is None else t2[:left]
                left -= len(t1)
            yield _pair_batch(i, t1, t2)

    def iter_pairs(self, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        for i in range(len(self.dcs)):
            yield from self.dc_pairs(i, limit)

    # -- blocks
    def dc_blocks(
        self, i: int, limit: int | None = None, start: tuple[Groups, list] | None = None
    ) -> Iterator[pa.RecordBatch]:
        plan = self.plan(i, "blocks")
        if plan is None:
            rows = self.engine.single_rows(self.normal[i])
            if len(rows) and (limit is None or limit > 0):
                t1 = pa.ListArray.from_arrays(
                    pa.array([0, len(rows)], pa.int32()), pa.array(rows, pa.int64())
                )
                t2 = pa.nulls(1, pa.list_(pa.int64()))
                yield pa.RecordBatch.from_arrays(
                    [pa.array([i], pa.int64()), pa.array([0], pa.int64()), t1, t2],
                    schema=BLOCK_SCHEMA,
                )
            return
        block = 0
        if start is not None:
            source = self.engine.iter_blocks(plan, start[0], start[1])
        else:
            source = self.engine.iter_blocks(plan, self.initial(i))
        for groups in source:
            if len(groups) == 0:
                continue
            if limit is not None:
                if block >= limit:
                    return
                if block + len(groups) > limit:
                    groups = Groups(groups.buf, groups.desc[: limit - block])
            yield _block_batch(i, block, groups)
            block += len(groups)

    def iter_blocks(self, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        for i in range(len(self.dcs)):
            yield from self.dc_blocks(i, limit)


def _pair_batch(dc: int, t1: np.ndarray, t2: np.ndarray | None) -> pa.RecordBatch:
    n = len(t1)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(np.full(n, dc, np.int64)),
            pa.array(t1.astype(np.int64, copy=False)),
            pa.nulls(n, pa.int64()) if t2 is None else pa.array(t2.astype(np.int64, copy=False)),
        ],
        schema=PAIR_SCHEMA,
    )


def _block_batch(dc: int, first: int, groups: Groups) -> pa.RecordBatch:
    k = len(groups)
    lo, lv = sides_to_lists(groups.buf, groups.desc, 0)
    ro, rv = sides_to_lists(groups.buf, groups.desc, 4)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(np.full(k, dc, np.int64)),
            pa.array(np.arange(first, first + k, dtype=np.int64)),
            pa.LargeListArray.from_arrays(pa.array(lo), pa.array(lv)).cast(pa.list_(pa.int64())),
            pa.LargeListArray.from_arrays(pa.array(ro), pa.array(rv)).cast(pa.list_(pa.int64())),
        ],
        schema=BLOCK_SCHEMA,
    )
