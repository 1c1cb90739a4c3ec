"""The Spark engine: facet's pipeline distributed through PySpark
(docs/architecture.md "Spark engine"; BigDansing §4-§6 for the distribution).

Spark moves rows; facet's local pipeline does the work inside each task.  The
driver plans every DC as the local engine does; a DC's pairs are spread over
tasks by its leading equality (a hash of the typed key: equal values meet in
one task, a heavy key is cut into sub-blocks processed as all ordered pairs of
sub-blocks), or, without one, as ordered pairs of row blocks.  Each task types
and encodes its rows (the typing decisions are the driver's, made once for the
whole table), builds its initial pairs ``(L, R)`` from the rows' side flags,
and runs the plan's stages and sink with the local engine.

Only public DataFrame APIs are used (``mapInArrow``, ``groupBy().applyInArrow``,
joins, aggregates): no RDD, no ``sparkContext``, no JVM access, so the same
code runs on a classic session and on Spark Connect.  Nothing here imports
pyspark at module level: ``import facet`` never loads it.
"""

from __future__ import annotations

import sys
from typing import Any


def is_spark_frame(obj: Any) -> bool:
    """Whether ``obj`` is a PySpark DataFrame (classic or Spark Connect), told
    apart without importing pyspark."""
    typ = type(obj)
    return typ.__name__ == "DataFrame" and typ.__module__.startswith("pyspark.sql")


def task_input_error(err: BaseException) -> str | None:
    """facet's bad-input message raised inside a Spark task, if ``err`` carries
    one (:func:`facet.engine.spark.tasks.task_input_error`; looked at only when
    the Spark engine is loaded already)."""
    if "facet.engine.spark.tasks" not in sys.modules:
        return None
    from facet.engine.spark.tasks import task_input_error as in_task

    return in_task(err)
