"""The Spark engine: the :class:`~facet.engine.base.Engine` interface over a
table on Spark (docs/architecture.md "Spark engine").

Groups are lazy: :class:`SparkGroups` is a DC's initial pairs, how they are
spread over tasks, and the refinements asked for so far; counting, listing
pairs or blocks runs one Spark job whose tasks do all of it locally.

Spreading a DC's pairs (BigDansing §4.2's blocking, with facet's refinements
inside each block):

* led by an equality ``t.A = t'.B``: a row goes to the task of its key as ``t``
  (``A``) and to the task of its key as ``t'`` (``B``) -- led by several, of one key
  combining them all, so their order decides nothing (a count asks no statistics
  to order them); a key of more than
  ``max(rows / tasks, Config.spark_split_rows)`` rows is cut into ``s``
  sub-blocks and its rows go to the ``s x s`` tasks of ordered sub-block pairs
  ``(i, j)`` -- ``L`` the key's rows of block ``i``, ``R`` those of ``j`` -- so
  no task holds more than its share;
* no equality: all rows are one key, cut the same way (``s`` about the square
  root of the tasks).

Counts and rows involved come back as one row per task and are added up on the
driver from those rows (never accumulators: a retried task would count twice);
a row that can be in several tasks sends its tid when involved, and those are
counted distinct.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa

from facet.engine.base import Capabilities, Engine
from facet.engine.counting import Degrees
from facet.engine.spark.connect import RunTag, session_cores
from facet.engine.spark.table import SparkTable
from facet.engine.spark.tasks import (
    BLOCKS_SCHEMA,
    COUNT_SCHEMA,
    DEGREES_SCHEMA,
    EDGES_SCHEMA,
    KEY_L,
    KEY_R,
    LEFT,
    ORDER_L,
    ORDER_R,
    ORDERED_KINDS,
    PAIRS_SCHEMA,
    RIGHT,
    SCOPE_SCHEMA,
    SIDES_SCHEMA,
    SUMMARY_SCHEMA,
    TASK,
    TID,
    TRIE_SCHEMA,
    PairJob,
    RangeSummary,
    TaskSpec,
    TrieJob,
    ddl,
    exact_numbers,
    keyed_job,
    order_keys_job,
    pair_task,
    pairs_satisfying,
    range_summary_job,
    scope_rows_job,
    sides_job,
    single_rows_job,
    summary_mode,
    trie_task,
    typed_columns,
)
from facet.key_tallies import shape as key_shape
from facet.language.normalize import EQUALITY, INEQUALITY, NormalDC, PairPredicate
from facet.planner.config import DEFAULT, Config
from facet.planner.plan import KEYED, Plan, Stage
from facet.planner.statistics import Sides


@dataclass
class SparkGroups:
    """A DC's initial pairs on Spark and the refinements applied to them so far."""

    dc: int
    #: the equality the pairs are spread by: ``(a, b)`` for ``t.a = t'.b``, or None
    key: tuple[str, str] | None = None
    done: list[Stage] = field(default_factory=list)


@dataclass
class Spread:
    """A DC's rows as the tasks get them, and whether each row is in one task."""

    frame: Any
    exclusive: bool
    #: rows per task, the largest and the total (the work recorded per run)
    tasks: int = 0
    #: violations of the range pairs counted from per-range summaries, and what
    #: the tasks need to add the rows those pairs involve
    summed: int = 0
    summary: RangeSummary | None = None
    #: frames persisted for this spread (one Python pass read by several jobs),
    #: released once a count is done with them
    persisted: list[Any] = field(default_factory=list)

    def release(self) -> None:
        for frame in self.persisted:
            frame.unpersist()
        self.persisted.clear()


class SparkEngine(Engine):
    """Runs plans with Spark moving rows and the local engine in every task."""

    name = "spark"
    capabilities = Capabilities(
        outputs=frozenset({"count", "pairs", "blocks"}),
        modes=frozenset({"sequential", "parallel", "cost-trie", "freq-trie"}),
        distributed=True,
        frames=True,
        scope=True,
        equalities_at_once=True,
    )

    def __init__(
        self, table: SparkTable, spec: TaskSpec, config: Config = DEFAULT, tag: RunTag | None = None
    ) -> None:
        self.table = table
        self.spec = spec
        self.config = config
        self.spark = table.frame.sparkSession
        self.tasks = config.spark_tasks or 2 * session_cores(self.spark)
        self._dc_index: dict[int, int] = {id(nd): i for i, nd in enumerate(spec.normal)}
        self._sides: dict[int, Sides] = {}
        self._stats: Any = None
        self._kinds: dict[str, str] | None = None
        self._types: dict[str, pa.DataType] = {}
        #: per run of pair work: (DC, tasks, largest task's rows, all tasks' rows)
        self.work: list[dict[str, Any]] = []
        #: a table with ids of its own: every id, ascending (a row's dense position is
        #: the rank of its id), collected when first needed
        self._ids: np.ndarray | None = None
        #: the tag of the run's Spark jobs, which its deadline cancels
        #: (:func:`facet.engine.spark.connect.tag_run`)
        self.tag = tag

    # ------------------------------------------------------------------ interface

    @property
    def rows(self) -> int:
        return self.table.rows

    def _id_order(self) -> np.ndarray:
        if self._ids is None:
            got = self.table.frame.select(TID).toArrow().column(TID).to_numpy()
            self._ids = np.sort(np.asarray(got, np.int64))
        return self._ids

    def positions(self, tids: Any) -> np.ndarray:
        """The dense positions ``0..rows-1`` of ``tids`` the tasks gave (the tasks
        name rows by the frame's tids: positions already, or a DataFrame's own
        ids, whose rank is the position); a tid the table does not hold is an
        internal error, never an index."""
        tids = np.asarray(tids, np.int64)
        n = self.rows
        if not self.table.own_ids:
            if len(tids) and (int(tids.min()) < 0 or int(tids.max()) >= n):
                raise RuntimeError(f"a Spark task gave a row position outside 0..{n - 1}")
            return tids
        ids = self._id_order()
        pos = np.searchsorted(ids, tids)
        if len(tids) and (int(pos.max()) >= len(ids) or not np.array_equal(ids[pos], tids)):
            raise RuntimeError("a Spark task gave a row id the table does not hold")
        return pos

    def row_ids(self, positions: np.ndarray) -> np.ndarray:
        """The DataFrame's own ids of the rows at ``positions`` (``id_column``),
        else the positions."""
        if not self.table.own_ids:
            return positions
        return self._id_order()[np.asarray(positions, np.int64)]

    def adopt_thread(self) -> None:
        """Tag this thread's Spark jobs with the run's tag (Spark keeps tags per
        thread): ``parallel`` mode's workers start jobs a deadline must cancel."""
        if self.tag is not None:
            self.tag.adopt()

    def _index(self, dc: NormalDC) -> int:
        """``dc``'s place in the tasks' DCs; a DC the run did not bring (a row
        output's mirror image of one) is added for the jobs made after."""
        i = self._dc_index.get(id(dc))
        if i is None:
            i = next((k for k, nd in enumerate(self.spec.normal) if nd == dc), None)
        if i is None:
            self.spec.normal.append(dc)
            i = len(self.spec.normal) - 1
            self._dc_index[id(dc)] = i
        return i

    def initial_groups(self, dc: NormalDC) -> SparkGroups:
        return SparkGroups(self._index(dc))

    @property
    def scoped(self) -> bool:
        """A scoped run (``--where``): every task scopes its own initial pairs."""
        return self.spec.where is not None

    def scope_rows(self) -> int:
        """Rows in a scoped run's scope, counted by Spark."""
        from pyspark.sql import functions as F  # noqa: N812

        row = (
            self.table.frame.mapInArrow(scope_rows_job(self.spec), ddl(SCOPE_SCHEMA))
            .agg(F.sum("n").alias("n"))
            .collect()[0]
        )
        return int(row["n"] or 0)

    def sides(self, groups: SparkGroups) -> Sides:
        """The shape of a DC's initial pairs (rows passing each side's filters)."""
        got = self._sides.get(groups.dc)
        if got is None:
            nd = self.spec.normal[groups.dc]
            if not nd.side_filters(0) and not nd.side_filters(1) and not self.scoped:
                got = Sides(self.rows, self.rows, True)
            else:
                from pyspark.sql import functions as F  # noqa: N812

                row = (
                    self.table.frame.mapInArrow(sides_job(self.spec, groups.dc), ddl(SIDES_SCHEMA))
                    .agg(*[F.sum(c).alias(c) for c in SIDES_SCHEMA.names])
                    .collect()[0]
                )
                left, right, left_in, right_in = (int(row[c] or 0) for c in SIDES_SCHEMA.names)
                if self.scoped:  # (L ∩ S, R) and (L - S, R ∩ S), each when not empty
                    parts = [(left_in, right), (left - left_in, right_in)]
                    parts = [(a, b) for a, b in parts if a and b]
                    got = Sides(sum(a for a, _ in parts), sum(b for _, b in parts), False)
                else:
                    same = [str(f) for f in nd.side_filters(0)] == [
                        str(f) for f in nd.side_filters(1)
                    ]
                    got = Sides(left, right, same)
            self._sides[groups.dc] = got
        return got

    def single_rows(self, dc: NormalDC) -> np.ndarray:
        got = self.single_rows_frame(dc).toArrow()
        return self.positions(np.sort(got.column(TID).to_numpy()))

    def statistics(self, groups: SparkGroups) -> Any:
        from facet.engine.spark.statistics import SparkStatistics

        self.step("statistics")
        if self._stats is None:
            self._stats = SparkStatistics(self)
        return self._stats.for_dc(groups.dc)

    def refine(self, groups: SparkGroups, stage: Stage) -> SparkGroups:
        key = groups.key
        if key is None and not groups.done:
            key = _spread_key(stage)
        return replace(groups, key=key, done=[*groups.done, stage])

    def count(self, plan: Plan, groups: SparkGroups) -> tuple[int, int]:
        got = self._key_aggregates(groups.dc)
        if got is not None:
            return got
        job, spread = self._job("count", plan, groups, None)
        try:
            return self._count(groups, job, spread)
        finally:
            spread.release()

    def _count(self, groups: SparkGroups, job: PairJob, spread: Spread) -> tuple[int, int]:
        from pyspark.sql import functions as F  # noqa: N812

        self.step(f"{spread.tasks} tasks")
        out = spread.frame.groupBy(TASK).applyInArrow(self.task_function(job), ddl(COUNT_SCHEMA))
        sizes = (F.max("task_rows").alias("largest"), F.sum("task_rows").alias("shipped"))
        if spread.exclusive:  # no row in two tasks: rows involved add up, one job
            row = out.agg(
                F.sum("violations").alias("v"), F.sum("rows").alias("r"), *sizes
            ).collect()[0]
            self._sizes(groups.dc, row)
            return int(row["v"] or 0) + spread.summed, int(row["r"] or 0)
        out = out.persist()
        try:
            totals = out.agg(
                F.sum("violations").alias("v"),
                F.sum(F.when(F.col("tids").isNull(), F.col("rows"))).alias("r"),
                *sizes,
            ).collect()[0]
            self._sizes(groups.dc, totals)
            shared = (
                out.where(F.col("tids").isNotNull())
                .select(F.explode("tids").alias("t"))
                .agg(F.count_distinct("t").alias("r"))
                .collect()[0]
            )
        finally:
            out.unpersist()
        violations = int(totals["v"] or 0) + spread.summed
        return violations, int(totals["r"] or 0) + int(shared["r"] or 0)

    def degrees(self, plan: Plan, groups: SparkGroups) -> Degrees:
        """Per-row degrees of a count plan over the table (row outputs): each task's
        rows' pairs as ``t`` and as ``t'``, summed by Spark per row (a pair is in
        one task; a row may be in several), the rows in a violation collected."""
        from pyspark.sql import functions as F  # noqa: N812

        job, spread = self._job("degrees", plan, groups, None)
        try:
            self.step(f"{spread.tasks} tasks")
            per_task = spread.frame.groupBy(TASK).applyInArrow(
                self.task_function(job), ddl(DEGREES_SCHEMA)
            )
            got = (
                per_task.groupBy("tid")
                .agg(F.sum("left").alias("left"), F.sum("right").alias("right"))
                .toArrow()
            )
        finally:
            spread.release()
        left = np.zeros(self.rows, np.int64)
        right = np.zeros(self.rows, np.int64)
        tids = self.positions(got.column("tid").to_numpy())
        left[tids] = got.column("left").to_numpy()
        right[tids] = got.column("right").to_numpy()
        return Degrees(left, right)

    def component_edges(
        self, count: Plan, blocks: Plan, groups: SparkGroups
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each task joins its rows' violating pairs (the local engine's union-find,
        never listing blocks where the DC's shape allows) and returns, per row in a
        violation, the least row of its component there: a pair is in one task, so
        the union of these edges on the driver is the DC's components."""
        job, spread = self._job("components", count, groups, None)
        try:
            self.step(f"{spread.tasks} tasks")
            got = (
                spread.frame.groupBy(TASK)
                .applyInArrow(self.task_function(replace(job, blocks=blocks)), ddl(EDGES_SCHEMA))
                .toArrow()
            )
        finally:
            spread.release()
        return self.positions(got.column("root")), self.positions(got.column("tid"))

    def direct_count(self, dc: NormalDC) -> tuple[int, int] | None:
        return self._key_aggregates(self._index(dc))

    def _key_aggregates(self, dc: int) -> tuple[int, int] | None:
        """A key- or FD-shaped DC's count (:func:`facet.key_tallies.shape`: ``X``
        identifies a row, or ``X -> Y``) from Spark aggregates, when Spark's
        values of its columns compare as facet's (:meth:`native_values`); else
        None.  Over the rows with no NULL in ``X`` (nor ``Y``), with ``c(x)`` the
        rows of key ``x`` and ``c(x, y)`` those also holding ``y``: a key's
        violations are ``sum c(x) (c(x) - 1)`` and its rows involved the rows of
        keys held twice; an FD's violations are ``sum_x c(x)^2 - sum_y c(x, y)^2``
        (the ordered pairs of a key whose ``Y`` differ) and its rows involved the
        rows of keys holding two values of ``Y``."""
        if not self.config.spark_key_aggregates or self.scoped:  # (aggregates see no scope)
            return None
        got = key_shape(self.spec.normal[dc])
        if got is None:
            return None
        xs, y = got
        cols = [*xs, *([y] if y is not None else [])]
        values = [self.native_values(c) for c in cols]
        if any(v is None for v in values):
            return None
        from pyspark.sql import functions as F  # noqa: N812

        self.step("aggregates")
        names = [f"_facet_c{i}" for i in range(len(cols))]
        rows = self.table.frame.select(*[v.alias(n) for v, n in zip(values, names, strict=True)])
        rows = rows.dropna(subset=names)
        one = F.count(F.lit(1))
        keys = names[: len(xs)]
        if y is None:
            per = rows.groupBy(*keys).agg(one.alias("c"))
            row = per.agg(
                F.sum(F.col("c") * (F.col("c") - 1)).alias("v"),
                F.sum(F.when(F.col("c") >= 2, F.col("c"))).alias("r"),
            ).collect()[0]
        else:
            per_xy = rows.groupBy(*keys, names[-1]).agg(one.alias("c"))
            per_x = per_xy.groupBy(*keys).agg(
                F.sum("c").alias("cx"), F.sum(F.col("c") * F.col("c")).alias("sq"),
                one.alias("ny"),
            )  # fmt: skip
            row = per_x.agg(
                F.sum(F.col("cx") * F.col("cx") - F.col("sq")).alias("v"),
                F.sum(F.when(F.col("ny") >= 2, F.col("cx"))).alias("r"),
            ).collect()[0]
        self.work.append({"dc": dc, "aggregates": True})
        return int(row["v"] or 0), int(row["r"] or 0)

    def count_trie(
        self, plans: dict[int, Plan], seqs: dict[int, list[Stage]], ids: list[int]
    ) -> dict[int, tuple[int, int]]:
        """Counts of DCs ``ids`` (same row filters): those whose trie starts with
        the same equality share one spread (one shuffle) and every task runs
        their trie once (``--mode cost-trie|freq-trie``); the others are
        counted one by one."""
        from pyspark.sql import functions as F  # noqa: N812

        out: dict[int, tuple[int, int]] = {}
        by_key: dict[tuple[str, str], list[int]] = {}
        for i in ids:
            key = _spread_key(seqs[i][0]) if seqs[i] else None
            if key is None:
                out[i] = self.count(plans[i], self.initial_groups(self.spec.normal[i]))
            else:
                by_key.setdefault(key, []).append(i)
        for key, dcs in by_key.items():
            if len(dcs) == 1:
                i = dcs[0]
                out[i] = self.count(plans[i], self.initial_groups(self.spec.normal[i]))
                continue
            spread = self._spread(dcs[0], [key])
            self._share_work(dcs)
            self.step(f"{len(dcs)} DCs share a shuffle: {spread.tasks} tasks")
            job = TrieJob(dcs, {i: plans[i] for i in dcs}, {i: seqs[i] for i in dcs},
                          spread.exclusive)  # fmt: skip
            fn = self.task_function(job)
            rows = spread.frame.groupBy(TASK).applyInArrow(fn, ddl(TRIE_SCHEMA)).persist()
            spread.persisted.append(rows)
            try:
                totals = {
                    int(r["dc"]): (int(r["v"] or 0), int(r["r"] or 0))
                    for r in rows.groupBy("dc")
                    .agg(
                        F.sum("violations").alias("v"),
                        F.sum(F.when(F.col("tids").isNull(), F.col("rows"))).alias("r"),
                    )
                    .collect()
                }
                shared = {
                    int(r["dc"]): int(r["r"] or 0)
                    for r in rows.where(F.col("tids").isNotNull())
                    .select("dc", F.explode("tids").alias("t"))
                    .groupBy("dc")
                    .agg(F.count_distinct("t").alias("r"))
                    .collect()
                }
            finally:
                spread.release()
            for i in dcs:
                v, r = totals.get(i, (0, 0))
                out[i] = (v, r + shared.get(i, 0))
        return out

    def pair_frame(self, plan: Plan, groups: SparkGroups, stages: list[Stage] | None = None) -> Any:
        """The violating pairs as a Spark DataFrame ``(t1, t2)``, not collected."""
        job, spread = self._job("pairs", plan, groups, stages)
        self.step(f"{spread.tasks} tasks")
        return spread.frame.groupBy(TASK).applyInArrow(self.task_function(job), ddl(PAIRS_SCHEMA))

    def block_frame(
        self, plan: Plan, groups: SparkGroups, stages: list[Stage] | None = None
    ) -> Any:
        """The final pairs of tid sets as a Spark DataFrame of tid lists ``(t1, t2)``."""
        job, spread = self._job("blocks", plan, groups, stages)
        self.step(f"{spread.tasks} tasks")
        return spread.frame.groupBy(TASK).applyInArrow(self.task_function(job), ddl(BLOCKS_SCHEMA))

    def single_rows_frame(self, dc: NormalDC) -> Any:
        """The violating rows of a single-tuple DC as a Spark DataFrame ``(_facet_tid)``."""
        job = single_rows_job(self.spec, self._index(dc))
        return self.table.frame.mapInArrow(job, f"{TID} bigint")

    def listed_pairs(self, plan: Plan, groups: SparkGroups) -> int:
        """How many pairs :meth:`pairs` would list, counted by Spark where they are
        made (``explain --analyze``: nothing is collected on the driver)."""
        return int(self.pair_frame(plan, groups).count())

    def pairs(
        self, plan: Plan, groups: SparkGroups, stages: list[Stage] | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for batch in _batches(self.pair_frame(plan, groups, stages)):
            if batch.num_rows:
                yield self.positions(batch.column(0)), self.positions(batch.column(1))

    def blocks(
        self,
        plan: Plan,
        groups: SparkGroups,
        stages: list[Stage] | None = None,
        pairs_as_is: bool = False,
    ) -> Iterator[Any]:
        for batch in _batches(self.block_frame(plan, groups, stages)):
            if batch.num_rows:
                (lo, lv), (ro, rv) = _lists(batch.column(0)), _lists(batch.column(1))
                yield (lo, self.positions(lv)), (ro, self.positions(rv))

    def task_function(self, job: PairJob | TrieJob) -> Any:
        """The function every task of ``job`` runs (a test wraps it to fail once)."""
        if isinstance(job, TrieJob):
            return trie_task(self.spec, job)
        return pair_task(self.spec, job)

    def task_rows(self, plan: Plan, groups: SparkGroups) -> list[int]:
        """Rows each task of a count of ``plan`` gets, largest first: the
        per-task work a skewed key is spread into."""
        from pyspark.sql import functions as F  # noqa: N812

        _, spread = self._job("count", plan, groups, None)
        try:
            sizes = spread.frame.groupBy(TASK).agg(F.count(F.lit(1)).alias("n")).collect()
        finally:
            spread.release()
        return sorted((int(r["n"]) for r in sizes), reverse=True)

    # ------------------------------------------------------------------ spreading

    def _job(
        self, output: str, plan: Plan, groups: SparkGroups, stages: list[Stage] | None
    ) -> tuple[PairJob, Spread]:
        keys = [groups.key] if groups.key is not None else []
        if not keys and not groups.done:
            keys = _spread_keys(plan.stages if stages is None else stages)
        sink = plan.sink if stages is None else None
        if not keys and not groups.done and sink is not None and sink.kind == KEYED:
            key = sink.keyed
            if key is not None and key.cls == EQUALITY:  # a key's shape: spread by it
                keys = [(key.a, key.b)]
        # range pairs counted from summaries know nothing of a scope
        whole = output == "count" and not groups.done and stages is None and not self.scoped
        spread = self._spread(groups.dc, keys, summarize=whole)
        job = PairJob(
            output, groups.dc, plan, list(groups.done), stages, spread.exclusive, spread.summary
        )
        return job, spread

    def _spread(self, dc: int, keys: list[tuple[str, str]], summarize: bool = False) -> Spread:
        """Rows with ``_facet_task`` and side flags for DC ``dc``'s pair work,
        spread by the equalities ``keys`` (``(a, b)``: ``t.a = t'.b``) as one
        key, or none (``summarize``: the whole DC is counted, so range pairs may
        be summarized)."""
        from pyspark.sql import functions as F  # noqa: N812

        self.step("spreading rows")
        frame = self.table.frame
        n = self.rows
        tasks = max(1, self.tasks)
        limit = min(
            max(math.ceil(n / tasks), self.config.spark_split_rows), self.config.spark_task_rows
        )
        if not keys:
            pred = self._range_predicate(dc) if n > limit else None
            if pred is not None:
                # with summaries only the ranges' own pairs are tasks: as many as
                # the tasks; else every range pair may be one: about sqrt(2 tasks)
                s = max(2, tasks, math.ceil(n / limit))
                rest = self._summary_predicate(dc, pred) if summarize else None
                if rest is None:
                    s = max(2, round(math.sqrt(2 * tasks)), math.ceil(n / limit))
                self.step(f"ranges of {pred.a}")
                return self._ranges(dc, pred, s, rest)
            s = max(1, round(math.sqrt(tasks))) if n > limit else 1
            rows = frame.withColumn("_facet_k", F.lit(0).cast("long"))
            rows = rows.withColumn(LEFT, F.lit(True)).withColumn(RIGHT, F.lit(True))
            heavy = [(0, s)]
            spread = self._blocks(rows, heavy, tasks_base=0, light_tasks=0)
            self._record(dc, [], s * s, n)
            return Spread(spread, exclusive=s == 1, tasks=s * s)
        same = all(a == b for a, b in keys)  # a row's key is the same as t and as t'
        native = self._native_composite(keys)
        if native is not None:  # keys computed by Spark itself: no Python pass
            keyed = frame.withColumn(KEY_L, native[0]).withColumn(KEY_R, native[1])
        else:
            keyed = frame.mapInArrow(keyed_job(self.spec, keys), _with_keys(frame.schema))
        lefts = keyed.where(F.col(KEY_L).isNotNull()).select(
            F.col(KEY_L).alias("_facet_k"),
            *[c for c in frame.columns],
            F.lit(True).alias(LEFT),
            F.lit(same).alias(RIGHT),
        )
        rows = lefts
        if not same:
            rights = keyed.where(F.col(KEY_R).isNotNull()).select(
                F.col(KEY_R).alias("_facet_k"),
                *[c for c in frame.columns],
                F.lit(False).alias(LEFT),
                F.lit(True).alias(RIGHT),
            )
            rows = lefts.unionByName(rights)
        persisted = []
        if native is None:  # the Python pass once, not once per job reading it
            rows = rows.persist()
            persisted.append(rows)
        counts = (
            rows.groupBy("_facet_k")
            .agg(F.count(F.lit(1)).alias("n"))
            .where(F.col("n") > limit)
            .collect()
        )
        heavy = [(int(r["_facet_k"]), math.ceil(int(r["n"]) / limit)) for r in counts]
        heavy.sort()
        frame_out = self._blocks(rows, heavy, tasks_base=tasks, light_tasks=tasks)
        self._record(dc, keys, tasks + sum(s * s for _, s in heavy), n)
        return Spread(
            frame_out, exclusive=same and not heavy, tasks=tasks + sum(s * s for _, s in heavy),
            persisted=persisted,
        )  # fmt: skip

    def native_values(self, column: str) -> Any:
        """A Spark expression whose values are equal exactly when facet finds
        ``column``'s values equal (docs/semantics.md §4), else None: text
        compared as text (byte for byte; an empty CSV field is NULL), and typed
        columns of the kind their Spark type gives -- whole numbers, booleans,
        decimals and timestamps as they are, floats with NaN as NULL and
        ``-0.0`` as ``0.0``.  Values typed by facet (CSV numbers and times, a
        ``schema=`` override, a component mixing kinds) have none."""
        from pyspark.sql import functions as F  # noqa: N812
        from pyspark.sql import types as T  # noqa: N812

        name = self.spec.in_frame(column)
        typ = next((f.dataType for f in self.table.frame.schema.fields if f.name == name), None)
        kind = self._kind(column)
        col = F.col(name)
        if kind == "text":
            if not _binary_string(typ):
                return None
            return F.when(col != F.lit(""), col) if self.spec.text else col
        natural = {
            "int": T.IntegralType, "bool": T.BooleanType, "decimal": T.DecimalType,
            "timestamp": T.TimestampType | T.TimestampNTZType, "float": T.FloatType | T.DoubleType,
        }  # fmt: skip
        if self.spec.text or kind not in natural or not isinstance(typ, natural[kind]):
            return None
        if kind == "float":
            return F.when(~F.isnan(col), col + F.lit(0.0).cast(typ))
        return col

    def _native_order(self, column: str) -> Any:
        """A Spark expression for a float64 order key of ``column`` (as
        :func:`tasks.order_key`: ``f(x) > f(y)`` implies ``x > y``; NULL for
        NULL and NaN) when Spark's values are facet's (:meth:`native_values`)
        and are numbers or timestamps, else None."""
        from pyspark.sql import functions as F  # noqa: N812
        from pyspark.sql.types import TimestampType

        values = self.native_values(column)
        kind = self._kind(column)
        if values is None or kind not in ("int", "bool", "decimal", "float", "timestamp"):
            return None
        if kind == "timestamp":
            name = self.spec.in_frame(column)
            typ = next(f.dataType for f in self.table.frame.schema.fields if f.name == name)
            if not isinstance(typ, TimestampType):
                return None
            return F.unix_micros(values).cast("double")
        return values.cast("double")

    def _native_keys(self, a: str, b: str) -> tuple[Any, Any] | None:
        """Spark expressions for the keys of ``t.a = t'.b`` when Spark's own
        values compare as facet compares them (:meth:`native_values`; across two
        columns: text with text, or whole numbers of integral or boolean types);
        None for every other typing, which the tasks key."""
        from pyspark.sql import functions as F  # noqa: N812
        from pyspark.sql.types import BooleanType, IntegralType

        types = {f.name: f.dataType for f in self.table.frame.schema.fields}
        out = []
        for c in dict.fromkeys((a, b)):
            values = self.native_values(c)
            if values is None:
                return None
            kind = self._kind(c)
            if a == b or kind == "text":
                out.append(F.when(values.isNotNull(), F.xxhash64(values)))
            elif kind in ("int", "bool") and isinstance(
                types.get(self.spec.in_frame(c)), IntegralType | BooleanType
            ):
                out.append(F.when(values.isNotNull(), F.xxhash64(values.cast("long"))))
            else:
                return None
        if a == b:
            return out[0], out[0]
        if self._kind(a) != self._kind(b):
            return None
        return out[0], out[1]

    def _native_composite(self, keys: list[tuple[str, str]]) -> tuple[Any, Any] | None:
        """:meth:`_native_keys` of several equalities combined into one key per
        side (NULL where any is), or None if any has none."""
        from pyspark.sql import functions as F  # noqa: N812

        parts = [self._native_keys(a, b) for a, b in keys]
        if any(p is None for p in parts):
            return None
        if len(parts) == 1:
            return parts[0]
        out = []
        for side in (0, 1):
            cols = [p[side] for p in parts]
            present = cols[0].isNotNull()
            for c in cols[1:]:
                present = present & c.isNotNull()
            out.append(F.when(present, F.xxhash64(*cols)))
        return out[0], out[1]

    def _range_predicate(self, dc: int) -> PairPredicate | None:
        """The DC's first order predicate over columns whose values have a
        float64 order key (numbers, dates, times), if any."""
        for p in self.spec.normal[dc].preds:
            if p.cls == INEQUALITY and all(self._kind(c) in ORDERED_KINDS for c in (p.a, p.b)):
                return p
        return None

    def _kind(self, column: str) -> str:
        if self._kinds is None:
            # the table as ``toArrow`` would type it, with no rows and no Spark job
            from facet.engine.spark.column_typing import empty_table

            empty = empty_table(self.table.frame)
            typed = typed_columns(empty, self.spec, self.spec.use.columns)
            self._kinds = {c: kind for c, (_, kind) in typed.items()}
            self._types = {c: arr.type for c, (arr, _) in typed.items()}
        return self._kinds.get(column, "text")

    def _summary_predicate(self, dc: int, pred: PairPredicate) -> tuple[PairPredicate, str] | None:
        """The DC's other predicate, and how its values compare as numbers, when
        range pairs that satisfy ``pred`` for every row can be counted from
        per-range value counts: two predicates, ``pred`` over one column (so two
        different ranges hold different rows), no row filters, values that
        compare exactly as int64 or float64 (the value counts may still turn
        out too many: :meth:`_summarize`)."""
        nd = self.spec.normal[dc]
        preds = list(dict.fromkeys(nd.preds))
        if len(preds) != 2 or pred.a != pred.b or nd.side_filters(0) or nd.side_filters(1):
            return None
        q = preds[1] if preds[0] == pred else preds[0]
        self._kind(q.a)
        mode = summary_mode([self._types[q.a], self._types[q.b]])
        if mode is None:
            return None
        return q, mode

    def _ranges(
        self, dc: int, pred: PairPredicate, s: int, rest: tuple[PairPredicate, str] | None = None
    ) -> Spread:
        """Range partitioning for a DC without an equality: rows cut into ``s``
        ranges of ``pred``'s column on each side (``t.a`` for ``L``, ``t'.b`` for
        ``R``, bounds from approximate quantiles); a pair of ranges whose
        min/max show that no pair of theirs satisfies ``pred`` gets no task, every
        other pair is one task -- except, with ``rest`` (the DC's other predicate
        ``q`` and how its values compare), a pair of two ranges whose min/max
        show that every pair of theirs satisfies ``pred``: those are counted from
        the ranges' value counts of ``q``'s columns, and the rows they involve
        found from the values each range is paired with.  Rows with NULL in
        ``pred``'s column satisfy no predicate and go nowhere."""
        from pyspark.sql import functions as F  # noqa: N812

        frame = self.table.frame
        persisted: list[Any] = []
        native = [self._native_order(c) for c in (pred.a, pred.b)]
        if all(x is not None for x in native):  # order keys by Spark itself: no Python pass
            keyed = frame.withColumn(ORDER_L, native[0]).withColumn(ORDER_R, native[1])
        else:
            schema = _with_orders(frame.schema)
            keyed = frame.mapInArrow(order_keys_job(self.spec, pred.a, pred.b), schema).persist()
            persisted.append(keyed)
        values = keyed.select(F.col(ORDER_L).alias("v"))
        if pred.a != pred.b:
            values = values.unionByName(keyed.select(F.col(ORDER_R).alias("v")))
        bounds = self._sampled_bounds(values, s, pred.a != pred.b)

        def bucket(col: str) -> Any:
            out = F.lit(0)
            for x in bounds:
                out = out + (F.col(col) >= F.lit(float(x))).cast("int")
            return out.cast("long")

        cols = [c for c in frame.columns]
        lefts = keyed.where(F.col(ORDER_L).isNotNull()).withColumn("_facet_i", bucket(ORDER_L))
        rights = keyed.where(F.col(ORDER_R).isNotNull()).withColumn("_facet_j", bucket(ORDER_R))
        folded = None
        if rest is not None and pred.a == pred.b and rest[0].a == rest[0].b:
            folded = self._range_counts(lefts, rest)
        if folded is not None:
            lo_hi_l = folded[0]
        else:
            lo_hi_l = {
                int(r["b"]): (r["lo"], r["hi"])
                for r in lefts.groupBy(F.col("_facet_i").alias("b"))
                .agg(F.min(ORDER_L).alias("lo"), F.max(ORDER_L).alias("hi"))
                .collect()
            }
        lo_hi_r = lo_hi_l  # one column: the same ranges on both sides
        if pred.a != pred.b:
            lo_hi_r = {
                int(r["b"]): (r["lo"], r["hi"])
                for r in rights.groupBy(F.col("_facet_j").alias("b"))
                .agg(F.min(ORDER_R).alias("lo"), F.max(ORDER_R).alias("hi"))
                .collect()
            }
        pairs = [
            (i, j)
            for i in sorted(lo_hi_l)
            for j in sorted(lo_hi_r)
            if not _never(pred.op, lo_hi_l[i], lo_hi_r[j])
        ]
        always = []
        if rest is not None:
            always = [
                (i, j) for i, j in pairs if i != j and _always(pred.op, lo_hi_l[i], lo_hi_r[j])
            ]
        counted = set(always)
        diagonal = all(i == j for i, j in pairs if (i, j) not in counted)
        summary = None
        if always and diagonal:
            summary = self._summarize(
                keyed, lefts, rights, rest, bounds, always, same=pred.a == pred.b,
                counts=None if folded is None else folded[1],
            )  # fmt: skip
        if summary is not None:
            pairs = [p for p in pairs if p not in counted]
        self.work.append(
            {"dc": dc, "key": None, "ranges": (pred.text(), len(bounds) + 1),
             "tasks": len(pairs), "pruned": len(lo_hi_l) * len(lo_hi_r) - len(pairs)
             - (len(always) if summary is not None else 0),
             "summarized": len(always) if summary is not None else 0, "rows": self.rows}
        )  # fmt: skip
        summed = 0
        if summary is not None:  # every task is a range with itself: its rows are its own
            summed, summary = summary
            summary.ranges = {t: i for t, (i, _) in enumerate(pairs)}
        if not pairs:
            empty = frame.limit(0).select(F.lit(0).cast("long").alias(TASK), *cols)
            empty = empty.withColumn(LEFT, F.lit(True)).withColumn(RIGHT, F.lit(True))
            return Spread(empty, exclusive=True, tasks=0, summed=summed, summary=summary,
                          persisted=persisted)  # fmt: skip
        spark = frame.sparkSession
        # a range paired with itself over one column holds the same rows on both
        # sides: they travel once, as t and t'
        table = spark.createDataFrame(
            [(i, j, t, i == j and pred.a == pred.b) for t, (i, j) in enumerate(pairs)],
            "_facet_pi long, _facet_pj long, _facet_pt long, _facet_pd boolean",
        )
        as_left = lefts.join(F.broadcast(table), F.col("_facet_i") == F.col("_facet_pi")).select(
            F.col("_facet_pt").alias(TASK),
            *cols,
            F.lit(True).alias(LEFT),
            F.col("_facet_pd").alias(RIGHT),
        )
        as_right = (
            rights.join(F.broadcast(table), F.col("_facet_j") == F.col("_facet_pj"))
            .where(~F.col("_facet_pd"))
            .select(F.col("_facet_pt").alias(TASK), *cols, F.lit(False).alias(LEFT),
                    F.lit(True).alias(RIGHT))
        )  # fmt: skip
        return Spread(
            as_left.unionByName(as_right), exclusive=summary is not None, tasks=len(pairs),
            summed=summed, summary=summary, persisted=persisted,
        )  # fmt: skip

    def _sampled_bounds(self, values: Any, s: int, two_columns: bool) -> list[float]:
        """Cut points of ``s`` ranges of about equal rows over the order keys
        ``values`` (column ``v``): quantiles of a seeded Bernoulli sample of about
        ``Config.range_sample`` keys, collected as Arrow.  Any cut points give the
        same answer (they only decide which task sees which rows); a sample is one
        parallel scan where Spark's ``approxQuantile`` merged GK summaries (10M
        rows, 2 cores: 0.5 s against 3-4 s, and it hardly used the second core)."""
        if s < 2:
            return []
        from pyspark.sql import functions as F  # noqa: N812

        keys = self.rows * (2 if two_columns else 1)
        fraction = min(1.0, self.config.range_sample / max(keys, 1))
        picked = values.where(F.col("v").isNotNull())
        if fraction < 1.0:
            picked = picked.sample(withReplacement=False, fraction=fraction, seed=0x5EED)
        got = picked.toArrow().column("v").to_numpy(zero_copy_only=False)
        got = got[~np.isnan(got)]
        if not got.size:
            return []
        cuts = np.quantile(got, [k / s for k in range(1, s)], method="inverted_cdf")
        return sorted({float(x) for x in cuts})

    def _range_counts(
        self, lefts: Any, rest: tuple[PairPredicate, str]
    ) -> tuple[dict[int, tuple[Any, Any]], tuple[np.ndarray, ...]] | None:
        """For a DC whose range predicate and other predicate ``q`` are each over
        one column: one job giving each range's min and max order key and its
        count of each value of ``q``'s column (what :meth:`_summarize` would ask
        of a second job); None when Spark has no exact values of that column or
        there are more than ``Config.spark_summary_values`` (range, value)
        groups -- the ranges' min/max then come from their own job."""
        from pyspark.sql import functions as F  # noqa: N812

        q, mode = rest
        v = self.native_values(q.a)
        if v is None:
            return None
        cap = self.config.spark_summary_values
        got = (
            lefts.groupBy(F.col("_facet_i").alias("bucket"), v.alias("v"))
            .agg(
                F.count(F.lit(1)).alias("cnt"),
                F.min(ORDER_L).alias("lo"),
                F.max(ORDER_L).alias("hi"),
            )
            .limit(cap + 1)
            .toArrow()
        )
        if got.num_rows > cap:
            return None
        lo_hi: dict[int, tuple[Any, Any]] = {}
        for b, lo, hi in zip(*(got.column(c).to_pylist() for c in ("bucket", "lo", "hi")),
                             strict=True):  # fmt: skip
            have = lo_hi.get(b)
            lo_hi[b] = (lo, hi) if have is None else (min(have[0], lo), max(have[1], hi))
        x, ok = exact_numbers(got.column("v").combine_chunks(), mode)
        bucket, cnt = got.column("bucket").to_numpy(), got.column("cnt").to_numpy()
        return lo_hi, (bucket[ok], x[ok], cnt[ok])

    def _summarize(
        self,
        keyed: Any,
        lefts: Any,
        rights: Any,
        rest: tuple[PairPredicate, str],
        bounds: list[float],
        always: list[tuple[int, int]],
        same: bool = False,
        counts: tuple[np.ndarray, ...] | None = None,
    ) -> tuple[int, RangeSummary] | None:
        """The violations of the range pairs ``always`` (every pair of rows
        satisfies the range predicate; only ``q`` decides) from value counts
        per range, and the values each range's rows are paired with (the tasks
        find the rows those pairs involve); None when the counts hold more than
        ``Config.spark_summary_values`` values.  ``same``: the ranges are of one
        column on both sides (so, when ``q`` is too, both sides' counts are one
        job's).  ``counts``: one side's ``(range, value, count)`` arrays, already
        counted (:meth:`_range_counts`), the same on both sides."""
        from pyspark.sql import functions as F  # noqa: N812

        q, mode = rest
        self.step("range summaries")
        cap = self.config.spark_summary_values
        va, vb = self.native_values(q.a), self.native_values(q.b)
        if counts is not None:
            b0, x0, c0 = counts
            side = np.r_[np.zeros(b0.shape[0], np.int64), np.ones(b0.shape[0], np.int64)]
            bucket, value, cnt = np.r_[b0, b0], np.r_[x0, x0], np.r_[c0, c0]
        elif va is not None and vb is not None:  # counted by Spark itself
            parts = []
            sides = [(0, lefts, "_facet_i", va), (1, rights, "_facet_j", vb)]
            for side, rows, bucket_col, v in sides[:1] if same and q.a == q.b else sides:
                got = (
                    rows.where(v.isNotNull())
                    .groupBy(F.col(bucket_col).alias("bucket"), v.alias("v"))
                    .agg(F.count(F.lit(1)).alias("cnt"))
                    .limit(cap + 1)
                    .toArrow()
                )
                x, ok = exact_numbers(got.column("v").combine_chunks(), mode)
                parts.append((np.full(int(ok.sum()), side), got.column("bucket").to_numpy()[ok],
                              x[ok], got.column("cnt").to_numpy()[ok]))  # fmt: skip
            if len(parts) == 1:  # one column on both sides: the same counts as t'
                parts.append((np.ones_like(parts[0][0]), *parts[0][1:]))
            side, bucket, value, cnt = (np.concatenate(c) for c in zip(*parts, strict=True))
        else:
            counts = (
                keyed.mapInArrow(
                    range_summary_job(self.spec, q.a, q.b, mode, bounds), ddl(SUMMARY_SCHEMA)
                )
                .groupBy("side", "bucket", "ival", "fval")
                .agg(F.sum("cnt").alias("cnt"))
                .limit(cap + 1)
                .toArrow()
            )
            column = counts.column("ival" if mode == "int" else "fval")
            value = column.to_numpy(zero_copy_only=False)
            side = counts.column("side").to_numpy()
            bucket = counts.column("bucket").to_numpy()
            cnt = counts.column("cnt").to_numpy()
        if len(value) > cap:
            return None
        hists: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        for key in set(zip(side.tolist(), bucket.tolist(), strict=True)):
            m = (side == key[0]) & (bucket == key[1])
            order = np.argsort(value[m], kind="stable")
            hists[key] = (value[m][order], cnt[m][order])
        empty = (value[:0], cnt[:0])

        def merged(keys: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
            parts = [hists.get(k, empty) for k in keys]
            vals, inv = np.unique(np.concatenate([v for v, _ in parts]), return_inverse=True)
            return vals, np.bincount(inv, np.concatenate([c for _, c in parts])).astype(np.int64)

        violations = 0
        partners: dict[tuple[int, int], np.ndarray] = {}
        for i in sorted({i for i, _ in always}):
            vb, cb = merged([(1, j) for i2, j in always if i2 == i])
            va, ca = hists.get((0, i), empty)
            violations += pairs_satisfying(va, ca, q.op, vb, cb)
            partners[(0, i)] = vb
        for j in sorted({j for _, j in always}):
            partners[(1, j)] = merged([(0, i) for i, j2 in always if j2 == j])[0]
        return violations, RangeSummary(q.a, q.b, q.op, mode, partners)

    def _blocks(self, rows: Any, heavy: list[tuple[int, int]], tasks_base: int, light_tasks: int):
        """Task ids: light keys hash to ``0..light_tasks-1``; heavy key ``k`` with
        ``s`` sub-blocks owns tasks ``base_k + i*s + j`` for sub-blocks ``(i, j)``."""
        from pyspark.sql import functions as F  # noqa: N812

        keep = [c for c in rows.columns if c not in ("_facet_k",)]
        if not heavy:
            return rows.withColumn(TASK, F.pmod(F.col("_facet_k"), F.lit(light_tasks))).select(
                TASK, *keep
            )
        table = []
        base = tasks_base
        for k, s in heavy:
            table.append((k, base, s))
            base += s * s
        spark = rows.sparkSession
        heavy_df = spark.createDataFrame(table, "_facet_hk long, _facet_base long, _facet_s long")
        joined = rows.join(F.broadcast(heavy_df), F.col("_facet_k") == F.col("_facet_hk"), "left")
        light = joined.where(F.col("_facet_base").isNull())
        light = light.withColumn(TASK, F.pmod(F.col("_facet_k"), F.lit(max(light_tasks, 1))))
        big = joined.where(F.col("_facet_base").isNotNull())
        sub = F.pmod(F.col(TID), F.col("_facet_s"))
        big = big.withColumn("_facet_sub", sub).withColumn(
            "_facet_j", F.explode(F.sequence(F.lit(0).cast("long"), F.col("_facet_s") - 1))
        )
        s, i, j, base_c = (
            F.col("_facet_s"),
            F.col("_facet_sub"),
            F.col("_facet_j"),
            F.col("_facet_base"),
        )
        as_left = big.where(F.col(LEFT)).select(
            (base_c + i * s + j).alias(TASK),
            *[F.col(c) for c in keep if c not in (LEFT, RIGHT)],
            F.lit(True).alias(LEFT),
            F.lit(False).alias(RIGHT),
        )
        as_right = big.where(F.col(RIGHT)).select(
            (base_c + j * s + i).alias(TASK),
            *[F.col(c) for c in keep if c not in (LEFT, RIGHT)],
            F.lit(False).alias(LEFT),
            F.lit(True).alias(RIGHT),
        )
        light = light.select(TASK, *keep)
        return light.unionByName(as_left).unionByName(as_right)

    def _sizes(self, dc: int, row: Any) -> None:
        """Adds the rows the largest task got and all tasks got together to the
        DC's latest spread (the per-task work a skewed key is bounded by)."""
        for w in reversed(self.work):
            if w["dc"] == dc:
                w["largest_task_rows"] = int(row["largest"] or 0)
                w["task_rows"] = int(row["shipped"] or 0)
                return

    def _share_work(self, dcs: list[int]) -> None:
        """The spread recorded for ``dcs[0]`` is every DC's of ``dcs`` (one shuffle
        serves them all): each gets the entry, ``shared_by`` naming them."""
        first = next((w for w in reversed(self.work) if w["dc"] == dcs[0]), None)
        if first is None:
            return
        first["shared_by"] = list(dcs)
        self.work.extend({**first, "dc": i} for i in dcs[1:])

    def _record(self, dc: int, keys: list[tuple[str, str]], tasks: int, rows: int) -> None:
        key = {"key": keys[0], "keys": keys} if keys else {"key": None}
        self.work.append({"dc": dc, **key, "tasks": tasks, "rows": rows})


def _binary_string(typ: Any) -> bool:
    """Whether a Spark type is a string compared byte for byte (not a collated one)."""
    from pyspark.sql.types import StringType

    return isinstance(typ, StringType) and getattr(typ, "collation", None) in (
        None,
        "UTF8_BINARY",
    )


def _spread_keys(stages: list[Stage]) -> list[tuple[str, str]]:
    """The equalities leading ``stages``: the pairs are spread by all of them
    at once (one combined key), so their order decides nothing."""
    keys = []
    for stage in stages:
        key = _spread_key(stage)
        if key is None:
            break
        keys.append(key)
    return keys


def _spread_key(stage: Stage) -> tuple[str, str] | None:
    """The equality a stage lets the pairs be spread by, if it is one."""
    if stage.algorithm != "equality" or len(stage.preds) != 1:
        return None
    p = stage.preds[0]
    return (p.a, p.b) if p.cls == EQUALITY else None


def _never(op: str, left: tuple[float, float], right: tuple[float, float]) -> bool:
    """Whether no ``x`` in ``[left]`` and ``y`` in ``[right]`` (float64 order keys
    of the values: ``f(x) > f(y)`` implies ``x > y``) satisfy ``x op y``."""
    (lo_l, hi_l), (lo_r, hi_r) = left, right
    if op in ("<", "<="):
        return lo_l > hi_r
    return hi_l < lo_r


def _always(op: str, left: tuple[float, float], right: tuple[float, float]) -> bool:
    """Whether every ``x`` in ``[left]`` and ``y`` in ``[right]`` (order keys as
    in :func:`_never`) satisfy ``x op y``: a strict comparison of the keys is a
    strict one of the values, so ``>=`` and ``<=`` are asked strictly too."""
    (lo_l, hi_l), (lo_r, hi_r) = left, right
    if op in ("<", "<="):
        return hi_l < lo_r
    return lo_l > hi_r


def _with_orders(schema: Any) -> Any:
    from pyspark.sql.types import DoubleType, StructField, StructType

    return StructType(
        [*schema.fields, StructField(ORDER_L, DoubleType(), True),
         StructField(ORDER_R, DoubleType(), True)]
    )  # fmt: skip


def _with_keys(schema: Any) -> Any:
    from pyspark.sql.types import LongType, StructField, StructType

    return StructType(
        [*schema.fields, StructField(KEY_L, LongType(), True), StructField(KEY_R, LongType(), True)]
    )


def _batches(frame: Any) -> Iterator[pa.RecordBatch]:
    """A result frame's rows as Arrow batches on the driver, collected at once
    (what ``result.pairs()`` keeps anyway; ``--out`` has the executors write
    instead: :mod:`facet.engine.spark.outputs`)."""
    yield from frame.toArrow().to_batches()


def _lists(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A list column as ``(offsets from 0, values)``."""
    offsets = np.asarray(arr.offsets, np.int64)
    return offsets - offsets[0], arr.flatten().to_numpy()
