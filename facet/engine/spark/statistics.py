"""The planner's statistics for a table on Spark (paper §6.1).

* Cardinalities: the distinct keys of the typed values (the same keys that
  spread pairs over tasks), found per batch and counted distinct by Spark --
  exact up to 64-bit hash collisions, as the local engine's dictionary sizes
  are exact.
* Pair estimates: the local engine's tid sample (tids whose hash is below
  ``Config.sample_rate`` of the hash range -- the same rows the local
  statistics sample) is brought to the driver and counted there by the local
  statistics, scaled by ``(n / sample size)^2``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from facet.engine.spark.tasks import TID, distinct_keys_job, encode_rows, sample_job
from facet.language.normalize import PairPredicate


class SparkStatistics:
    """Statistics of one table on Spark, asked lazily and cached."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self._card: dict[tuple[str, ...], float] = {}
        self._sample: Any = None

    def for_dc(self, dc: int) -> DCStatistics:
        return DCStatistics(self, dc)

    def cardinality(self, columns: tuple[str, ...]) -> float:
        from pyspark.sql import functions as F  # noqa: N812

        key = tuple(sorted(columns))
        got = self._card.get(key)
        if got is None:
            frame = self.engine.table.frame
            keys = frame.mapInArrow(distinct_keys_job(self.engine.spec, key), "key bigint")
            row = keys.agg(F.count_distinct("key").alias("d")).collect()[0]
            got = self._card[key] = float(row["d"] or 0)
        return got

    def sample(self) -> tuple[Any, np.ndarray]:
        """The local engine over the sampled rows, and their tids."""
        if self._sample is None:
            from facet.engine.local import LocalEngine

            frame = self.engine.table.frame
            rate = self.engine.config.sample_rate
            table = frame.mapInArrow(sample_job(rate), frame.schema).toArrow()
            table = table.sort_by(TID)
            enc = encode_rows(table, self.engine.spec)
            local = LocalEngine(enc, self.engine.config.but(threads=1))
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
