"""A run's session: the DCs, their initial pairs and plans, and the engine
that executes them (docs/architecture.md: planner -> engine -> sinks).

Planning asks the engine for statistics (an interface) and hands the pure
planner the shape of each DC's initial pairs; execution goes through the
:class:`~facet.engine.base.Engine` interface only.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from facet.engine.base import Engine
from facet.engine.groups import Groups
from facet.engine.local import LocalEngine
from facet.engine.trace import Trace
from facet.kernels.expand import sides_to_lists
from facet.language.ast import DC
from facet.language.normalize import NormalDC, normalize
from facet.planner.config import Config
from facet.planner.plan import Plan, Stage, make_plan, needs_statistics
from facet.sinks.arrow import block_batch, pair_batch


class Session:
    """Initial pairs and plans of one run's DCs; counts, and expands pairs and
    blocks on demand."""

    def __init__(self, engine: Engine, dcs: list[DC]) -> None:
        self.engine = engine
        self.dcs = dcs
        self.config: Config = engine.config
        self.normal: list[NormalDC] = [normalize(d) for d in dcs]
        self._initial: dict[int, Groups] = {}
        self._plans: dict[tuple[int, str], Plan] = {}
        #: seconds the engine spent on a plan's statistics (explain's breakdown)
        self.statistics_seconds: dict[tuple[int, str], float] = {}
        #: plans carry every estimate (``facet explain``), not only those they need
        self.estimates = False
        #: pairs wanted per DC (``--limit``): pair plans that stream
        self.limit: int | None = None
        #: the run's progress events and deadline (:class:`facet.progress.Monitor`,
        #: duck-typed: ``check()``, ``dc_started(i)``, ``dc_done(i)``), or None
        self.monitor: Any = None

    @property
    def rows(self) -> int:
        return self.engine.rows

    def initial(self, i: int) -> Groups:
        """DC ``i``'s initial pairs (row filters applied)."""
        g = self._initial.get(i)
        if g is None:
            g = self._initial[i] = self.engine.initial_groups(self.normal[i])
        return g

    def plan(self, i: int, output: str = "count", *, ordered: bool = True) -> Plan | None:
        """The plan of DC ``i`` for an output (``None`` for a single-tuple DC);
        ``ordered=False``: a count plan's equalities as written, without
        statistics (an engine that applies them at once)."""
        nd = self.normal[i]
        if nd.arity == 1:
            return None
        ordered = ordered or output != "count"
        key = (i, output) if ordered else (i, "count as written")
        plan = self._plans.get(key)
        if plan is None:
            g = self.initial(i)
            sides = self.engine.sides(g)
            t = time.perf_counter()
            asks = ordered and needs_statistics(nd, output, self.config)
            stats = self.engine.statistics(g) if asks else None
            self.statistics_seconds[key] = time.perf_counter() - t
            plan = self._plans[key] = make_plan(
                nd,
                sides,
                stats,
                self.config,
                output,
                estimates=self.estimates,
                limit=self.limit if output == "pairs" else None,
            )
        return plan

    # ------------------------------------------------------------------ counts
    def count_plan(self, i: int, engine: Engine | None = None) -> Plan | None:
        """The plan :meth:`count` runs for DC ``i``: on an engine that applies
        a count's equalities at once, the statistics that would order them are
        not asked (an explained run keeps the plan explain shows)."""
        caps = (engine or self.engine).capabilities
        return self.plan(i, "count", ordered=self.estimates or not caps.equalities_at_once)

    def count(self, i: int, engine: LocalEngine | None = None) -> tuple[int, int]:
        """``(violations, rows involved)`` of DC ``i`` (``engine``: a worker's own)."""
        engine = engine or self.engine
        monitor = self.monitor
        if monitor is not None:
            monitor.dc_started(i)  # the deadline, checked between DCs
        nd = self.normal[i]
        direct = engine.direct_count(nd) if nd.arity == 2 and not engine.scoped else None
        plan = None if direct is not None else self.count_plan(i, engine)
        if direct is not None:
            answer = direct
        elif plan is None:
            rows = engine.single_rows(nd)
            answer = len(rows), len(rows)
        else:
            answer = engine.count(plan, self.initial(i))
        if monitor is not None:
            monitor.dc_done(i)
        return answer

    # ------------------------------------------------------------------ pairs
    def dc_pairs(
        self, i: int, limit: int | None = None, start: tuple[Groups, list[Stage]] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """Pairs of DC ``i`` as ``(dc, t1, t2)`` batches, at most ``limit``
        (``start``: its groups after shared stages and the stages left, from a trie)."""
        left = limit
        plan = self.plan(i, "pairs")
        chunks: Iterable[tuple[np.ndarray, np.ndarray | None]]
        if plan is None:
            rows = self.engine.single_rows(self.normal[i])
            step = self.config.row_chunk
            chunks = [(rows[s : s + step], None) for s in range(0, len(rows), step)]
        elif start is not None:
            chunks = self.engine.pairs(plan, start[0], start[1])
        else:
            chunks = self.engine.pairs(plan, self.initial(i))
        monitor = self.monitor
        if monitor is not None:
            monitor.dc_started(i)
        ids = self.engine.row_ids
        for t1, t2 in chunks:
            if monitor is not None:
                monitor.check()  # between chunks: a deadline stops a long listing
            if left is not None:
                if left <= 0:
                    return
                if len(t1) > left:
                    t1 = t1[:left]
                    t2 = None if t2 is None else t2[:left]
                left -= len(t1)
            yield pair_batch(i, ids(t1), None if t2 is None else ids(t2))

    def iter_pairs(self, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        for i in range(len(self.dcs)):
            yield from self.dc_pairs(i, limit)

    # ------------------------------------------------------------------ blocks
    def dc_blocks(
        self, i: int, limit: int | None = None, start: tuple[Groups, list[Stage]] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """Blocks of DC ``i`` as ``(dc, block, t1, t2)`` batches, at most ``limit``."""
        plan = self.plan(i, "blocks")
        if plan is None:
            rows = self.engine.row_ids(self.engine.single_rows(self.normal[i]))
            if len(rows) and (limit is None or limit > 0):
                yield block_batch(i, 0, (np.array([0, len(rows)], np.int64), rows), None)
            return
        block = 0
        if start is not None:
            source = self.engine.blocks(plan, start[0], start[1])
        else:
            source = self.engine.blocks(plan, self.initial(i))
        monitor = self.monitor
        if monitor is not None:
            monitor.dc_started(i)
        for groups in source:
            if monitor is not None:
                monitor.check()
            if isinstance(groups, Groups):
                left = sides_to_lists(groups.buf, groups.desc, 0)
                right = sides_to_lists(groups.buf, groups.desc, 4)
            else:  # an engine that lists blocks as (offsets, tids) per side
                left, right = groups
            k = len(left[0]) - 1
            if k <= 0:
                continue
            if limit is not None:
                if block >= limit:
                    return
                if block + k > limit:
                    k = limit - block
                    left, right = _first_lists(left, k), _first_lists(right, k)
            ids = self.engine.row_ids
            yield block_batch(i, block, (left[0], ids(left[1])), (right[0], ids(right[1])))
            block += k

    def row_output(self, output: str, counts: list[int] | None = None) -> pa.Table:
        """``tuples``, ``cells``, ``components`` or ``suspects``
        (:mod:`facet.engine.row_outputs`; ``counts``: each DC's violations, if known)."""
        from facet.engine.row_outputs import row_output

        return row_output(self, output, counts)

    def row_tuples(self, i: int) -> tuple[np.ndarray, ...]:
        """DC ``i``'s rows in a violation, with their pairs and partners, and the
        pairs per row as ``t`` and ``t'`` (:func:`facet.engine.row_outputs.row_tuples`)."""
        from facet.engine.row_outputs import row_tuples

        return row_tuples(self, i)

    def sampled_partners(
        self, i: int, wanted: np.ndarray, k: int, need: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Up to ``k`` partners of each of the ``wanted`` rows under two-tuple DC ``i``
        (:func:`facet.engine.row_outputs.sampled_partners`)."""
        from facet.engine.row_outputs import sampled_partners

        return sampled_partners(self, i, wanted, k, need)

    def iter_blocks(self, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        for i in range(len(self.dcs)):
            yield from self.dc_blocks(i, limit)

    # ------------------------------------------------------------------ explain
    def analyze(self, i: int, output: str) -> dict[str, Any]:
        """Run DC ``i``'s plan for ``output`` under a trace: the report
        :func:`facet.planner.explain.with_actuals` merges into its record."""
        plan = self.plan(i, output)
        t = time.perf_counter()
        if plan is None:
            n = len(self.engine.single_rows(self.normal[i]))
            # a single-tuple DC's violations are rows: each is a row involved
            return {"violations": n, "rows_involved": n, "seconds": time.perf_counter() - t}
        trace = self.engine.trace = Trace()
        try:
            listed = getattr(self.engine, "listed_pairs", None)  # (counted where listed)
            if output == "count":
                violations, rows = self.count(i)
            elif listed is not None:
                violations, rows = listed(self.plan(i, "pairs"), self.initial(i)), None
            else:
                violations, rows = sum(b.num_rows for b in self.dc_pairs(i)), None
        finally:
            self.engine.trace = None
        return {
            **trace.report(plan),
            "violations": violations,
            "rows_involved": rows,
            "seconds": time.perf_counter() - t,
        }


def _first_lists(lists: tuple[np.ndarray, np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k`` lists of ``(offsets, values)``."""
    offsets, values = lists
    return offsets[: k + 1], values[: offsets[k]]
