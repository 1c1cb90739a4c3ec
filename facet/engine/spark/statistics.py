"""The planner's statistics for a table on Spark (paper §6.1), equal to the
local engine's for the same table so that both engines plan alike.

* Single-column cardinality: where the local encoder knows it exactly (a
  column alone in its component, compared with no constant:
  :func:`facet.encoding.counted_exactly`) the distinct hashes of the typed
  values are counted distinct by Spark; elsewhere HyperLogLog++ registers are
  built per partition as the local statistics build them and merged on the
  driver by element-wise maximum -- the registers of the whole table.
* Multi-column cardinality: the same merged registers over the value
  combinations' hashes up to ``Config.sketch_max_rows`` rows, the GEE estimate
  on the tid sample above it, clamped as locally.
* Pair estimates: the local engine's tid sample (tids whose hash is below
  ``Config.sample_rate`` of the hash range -- the same rows the local
  statistics sample) is brought to the driver and counted there by the local
  statistics, scaled by ``(n / sample size)^2``.  In a scoped run the sample's
  pairs are scoped too, their sides cut by the predicates against the sample's
  rows in scope (the local engine cuts them against the whole scope), so a
  scoped plan may differ from the local one; the answer does not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from facet.encoding import counted_exactly
from facet.engine.filters import where_mask
from facet.engine.spark.tasks import (
    TID,
    distinct_values_job,
    encode_rows,
    registers_job,
    sample_job,
)
from facet.engine.statistics import clamp_combinations, sampled_distinct
from facet.language.normalize import PairPredicate
from facet.planner.statistics import hll_cardinality


class SparkStatistics:
    """Statistics of one table on Spark, asked lazily and cached."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.p = engine.config.hll_p
        self._single: dict[str, float] = {}
        self._multi: dict[tuple[str, ...], float] = {}
        self._sample: Any = None
        #: Spark jobs run for statistics (cardinalities and the sample)
        self.jobs = 0

    def for_dc(self, dc: int) -> DCStatistics:
        return DCStatistics(self, dc)

    def cardinality(self, columns: tuple[str, ...]) -> float:
        names = tuple(dict.fromkeys(columns))
        if len(names) == 1:
            return self.single(names[0])
        key = tuple(sorted(names))
        got = self._multi.get(key)
        if got is None:
            singles = [self.single(c) for c in key]
            n = self.engine.rows
            if n <= self.engine.config.sketch_max_rows:
                est = hll_cardinality(self._registers([key])[0], self.p)
            else:
                local, _ = self.sample()
                enc = local.ctx.enc
                est = sampled_distinct([enc.column(c) for c in key], n, singles)
            got = self._multi[key] = clamp_combinations(est, singles, n)
        return got

    def single(self, name: str) -> float:
        """One column's distinct non-NULL values; the first call finds them for
        every column the DCs use, in two Spark jobs."""
        if not self._single:
            spec = self.engine.spec
            exact = counted_exactly(spec.use)
            names = spec.use.columns
            self._single.update(self._exact([c for c in names if c in exact]))
            sketched = [c for c in names if c not in exact]
            for c, reg in zip(sketched, self._registers([(c,) for c in sketched]), strict=True):
                self._single[c] = hll_cardinality(reg, self.p)
        return self._single[name]

    def _exact(self, names: list[str]) -> dict[str, float]:
        if not names:
            return {}
        from pyspark.sql import functions as F  # noqa: N812

        frame = self.engine.table.frame
        got = {c: 0.0 for c in names}
        native = {c: e for c in names if (e := self.engine.native_values(c)) is not None}
        if native:  # values Spark compares as facet does: Spark counts them itself
            row = frame.agg(
                *[F.count_distinct(e).alias(f"d{i}") for i, e in enumerate(native.values())]
            ).collect()[0]
            self.jobs += 1
            for i, c in enumerate(native):
                got[c] = float(row[f"d{i}"])
        rest = [c for c in names if c not in native]
        if not rest:
            return got
        rows = (
            frame.mapInArrow(distinct_values_job(self.engine.spec, rest), "key bigint, hash bigint")
            .groupBy("key")
            .agg(F.count_distinct("hash").alias("d"))
            .collect()
        )
        self.jobs += 1
        for r in rows:
            got[rest[int(r["key"])]] = float(r["d"])
        return got

    def _registers(self, keys: list[tuple[str, ...]]) -> list[np.ndarray]:
        """The table's HyperLogLog++ registers of each key, merged from its partitions'."""
        merged = [np.zeros(1 << self.p, np.int8) for _ in keys]
        if not keys:
            return merged
        frame = self.engine.table.frame
        out = frame.mapInArrow(
            registers_job(self.engine.spec, keys), "key bigint, registers binary"
        ).toArrow()
        self.jobs += 1
        for k, reg in zip(
            out.column("key").to_pylist(), out.column("registers").to_pylist(), strict=True
        ):
            np.maximum(merged[k], np.frombuffer(reg, np.int8), out=merged[k])
        return merged

    def sample(self) -> tuple[Any, np.ndarray]:
        """The local engine over the sampled rows, and their tids."""
        if self._sample is None:
            from facet.engine.local import LocalEngine

            frame = self.engine.table.frame
            rate = self.engine.config.sample_rate
            table = frame.mapInArrow(sample_job(rate), frame.schema).toArrow()
            self.jobs += 1
            table = table.sort_by(TID)
            enc = encode_rows(table, self.engine.spec)
            local = LocalEngine(enc, self.engine.config.but(threads=1))
            if self.engine.spec.where is not None:  # the sample's scoped pairs
                local.set_scope(where_mask(enc, self.engine.spec.where))
            self._sample = (local, table.column(TID).to_numpy())
        return self._sample

    def sample_pairs(self, dc: int, preds: tuple[PairPredicate, ...]) -> float:
        local, tids = self.sample()
        n = self.engine.rows
        s = len(tids)
        if s == 0:
            return 0.0
        stats = local.table_statistics()
        stats._sample = np.arange(s)  # every sampled row (the sample is the table here)
        groups = local.initial_groups(self.engine.spec.normal[dc])
        return stats.sample_pairs(groups, preds) * (n / s) ** 2


class DCStatistics:
    """:class:`facet.planner.statistics.Statistics` for one DC's initial pairs."""

    def __init__(self, table: SparkStatistics, dc: int) -> None:
        self.table = table
        self.dc = dc

    def cardinality(self, columns: tuple[str, ...]) -> float:
        return self.table.cardinality(columns)

    def sample_pairs(self, preds: tuple[PairPredicate, ...]) -> float:
        return self.table.sample_pairs(self.dc, preds)
