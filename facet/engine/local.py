"""The local engine: initial pairs + plan + kernels + sink on one machine
(paper §3-§5; docs/architecture.md "Engine").

It composes one module per job -- :mod:`.filters` (row filters, initial
pairs), :mod:`.refinement` (stage -> kernel, storage, threads),
:mod:`.counting` (counting sinks), :mod:`.walk` (pairs and blocks),
:mod:`.statistics` (the planner's statistics) and :mod:`.trace` -- over one
:class:`~facet.engine.context.Context`.  Initial pairs are a parameter, so
scoped and incremental detection reuse the same pipeline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from facet.encoding import EncodedTable
from facet.engine import counting, filters, refinement, walk
from facet.engine.base import Capabilities, Engine
from facet.engine.context import Context
from facet.engine.counting import Degrees, Scratch
from facet.engine.groups import Groups
from facet.engine.statistics import PairStatistics, TableStatistics
from facet.engine.trace import Trace
from facet.key_tallies import shape as key_shape
from facet.language.normalize import NormalDC
from facet.planner.config import DEFAULT, Config
from facet.planner.plan import Plan, Stage
from facet.planner.statistics import Sides


class LocalEngine(Engine):
    """Runs plans over one encoded table, on all cores."""

    name = "local"
    capabilities = Capabilities(
        outputs=frozenset({"count", "pairs", "blocks"}),
        modes=frozenset({"sequential", "parallel", "cost-trie", "freq-trie"}),
        trace=True,
        bitmaps=True,
        scope=True,
    )

    def __init__(self, enc: EncodedTable, config: Config = DEFAULT) -> None:
        self.ctx = Context(enc, config)
        self.scratch = Scratch(enc.n)
        self._stats: TableStatistics | None = None

    @property
    def enc(self) -> EncodedTable:
        return self.ctx.enc

    @property
    def config(self) -> Config:
        return self.ctx.config

    @property
    def rows(self) -> int:
        return self.ctx.n

    @property
    def threads(self) -> int:
        return self.ctx.threads

    @property
    def trace(self) -> Trace | None:
        return self.ctx.trace

    @trace.setter
    def trace(self, trace: Trace | None) -> None:
        self.ctx.trace = trace

    def worker(self) -> LocalEngine:
        """An engine on the same table for one worker thread (``parallel`` mode)."""
        other = LocalEngine.__new__(LocalEngine)
        other.ctx = self.ctx.with_threads(1)
        other.scratch = Scratch(self.ctx.n)
        other._stats = self._stats
        return other

    # ------------------------------------------------------------------ interface
    def initial_groups(self, dc: NormalDC) -> Groups:
        return filters.initial_groups(
            self.ctx.enc, dc, self.ctx.scope, self.ctx.config.scope_semi_join
        )

    def touching_groups(self, dc: NormalDC, rows: np.ndarray) -> Groups | None:
        if self.ctx.scope is not None:
            return None
        return filters.initial_groups(self.ctx.enc, dc, rows, self.ctx.config.scope_semi_join)

    def set_scope(self, scope: np.ndarray | None) -> None:
        self.ctx.scope = None if scope is None else np.asarray(scope, np.bool_)

    @property
    def scoped(self) -> bool:
        return self.ctx.scope is not None

    def sides(self, groups: Groups) -> Sides:
        if len(groups) == 0:
            return Sides(0, 0, False)
        d = groups.desc[0]
        return Sides(
            int(groups.left_sizes().sum()),
            int(groups.right_sizes().sum()),
            bool(len(groups) == 1 and d[0] == d[4] and d[1] == d[5]),
        )

    def single_rows(self, dc: NormalDC) -> np.ndarray:
        return filters.single_rows(self.ctx.enc, dc, self.ctx.scope)

    def table_statistics(self) -> TableStatistics:
        if self._stats is None:
            self._stats = TableStatistics(self.ctx)
        return self._stats

    def statistics(self, groups: Groups) -> PairStatistics:
        return self.table_statistics().for_pairs(groups)

    def refine(self, groups: Groups, stage: Stage) -> Groups:
        return refinement.refine(self.ctx, groups, stage)

    def count(self, plan: Plan, groups: Groups) -> tuple[int, int]:
        deg = counting.count_plan(self.ctx, plan, groups, self.scratch)
        return deg.totals()

    def direct_count(self, dc: NormalDC) -> tuple[int, int] | None:
        """A key- or FD-shaped DC (:func:`facet.key_tallies.shape`) counted over the
        rows whose most distinct key column holds a repeated value, when they are few
        (:func:`facet.engine.counting.count_key_candidates`; ``Config.key_prefilter``):
        no statistics, no plan, no groups.  ``None``: the plan counts it."""
        if not self.ctx.config.key_prefilter or self.ctx.scope is not None:
            return None
        got = key_shape(dc)
        if got is None:
            return None
        t = time.perf_counter()
        counted = counting.count_key_candidates(self.ctx, *got)
        if counted is None:
            return None
        if self.ctx.trace is not None:
            self.ctx.trace.direct = {"rows": counted[2], "seconds": time.perf_counter() - t}
        return counted[0], counted[1]

    def degrees(self, plan: Plan, groups: Groups) -> Degrees:
        """Per-row degrees of a count plan: its equalities refined, then its sink."""
        return counting.count_plan(self.ctx, plan, groups, self.scratch)

    def count_sink(self, plan: Plan, groups: Groups) -> Degrees:
        """Degrees of ``groups`` already refined by the plan's stages (a trie leaf)."""
        return counting.count_sink(self.ctx, plan.sink, groups, self.scratch)

    def pairs(
        self, plan: Plan, groups: Groups, stages: list[Stage] | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return walk.iter_pairs(self.ctx, groups, plan.stages if stages is None else stages)

    def blocks(
        self,
        plan: Plan,
        groups: Groups,
        stages: list[Stage] | None = None,
        pairs_as_is: bool = False,
    ) -> Iterator[Groups | tuple[np.ndarray, np.ndarray]]:
        stages = plan.stages if stages is None else stages
        return walk.iter_blocks(self.ctx, groups, stages, pairs_as_is)
