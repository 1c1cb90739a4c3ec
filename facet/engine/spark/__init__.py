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
joins, aggregates): no RDD, no JVM access, and ``sparkContext`` only for a
deadline's job tags on a classic session (``connect.RunTag``; Spark Connect
tags its session), so the same code runs on a classic session and on Spark
Connect.  Nothing here imports
pyspark at module level: ``import facet`` never loads it.
"""

from __future__ import annotations

import os
import re
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


def task_input_exception(err: BaseException) -> Exception | None:
    """:func:`task_input_error` as an exception of the class the task raised
    (``DataError`` or ``FacetInputError``)."""
    if "facet.engine.spark.tasks" not in sys.modules:
        return None
    from facet.engine.spark.tasks import task_input_exception as in_task

    return in_task(err)


#: a Java exception's name in a Spark error's text (``java.lang.OutOfMemoryError: ...``)
_JAVA_ERROR = re.compile(r"\b((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error))\b(:[^\n]*)?")


def spark_failure(err: BaseException) -> str | None:
    """One line for an error Spark raised (its JVM through py4j, or a Spark Connect
    server), naming its Java exception and what to try; ``None`` for any other
    error (looked at only when pyspark is loaded already)."""
    if "pyspark" not in sys.modules:
        return None
    gone = _jvm_gone(err)
    if gone is not None:
        return gone
    module = type(err).__module__ or ""
    if not module.startswith(("py4j", "pyspark")):
        return None
    text = str(err)
    found = _JAVA_ERROR.search(text)
    cause = (found.group(1) + (found.group(2) or "")).strip() if found else None
    if cause is None:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        cause = lines[0] if lines else type(err).__name__
    hint = "rerun with --debug for Spark's trace"
    if "OutOfMemoryError" in text or "maxResultSize" in text:
        hint = (
            "give Spark more memory (spark.driver.memory, spark.executor.memory, "
            "spark.driver.maxResultSize), or write pairs and blocks to a file with --out"
        )
    return f"the Spark engine failed: {cause[:300]}; {hint}"


#: py4j's words for a call whose JVM is no longer there
_BROKEN = ("Error while sending or receiving", "Answer from Java side is empty",
           "does not exist in the JVM", "<exception str() failed>")  # fmt: skip


def _jvm_gone(err: BaseException) -> str | None:
    """One line when the JVM facet started stopped answering (out of memory, say:
    py4j's connection breaks, and the next call is refused), naming the last Java
    exception its log holds; ``None`` for other errors."""
    from facet.engine.spark import connect

    text = str(err)
    module = type(err).__module__ or ""
    broken = (isinstance(err, ConnectionError | EOFError) and _raised_in_spark(err)) or (
        module.startswith("py4j") and any(b in text for b in _BROKEN)
    )
    if not broken or connect.JVM_LOG is None:
        return None
    cause = None
    try:
        with open(connect.JVM_LOG, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - (1 << 20)))  # its last MiB
            tail = f.read().decode("utf-8", "replace")
        found = [m for m in _JAVA_ERROR.finditer(tail) if "OutOfMemoryError" in m.group(1)]
        found = found or list(_JAVA_ERROR.finditer(tail))
        if found:
            cause = (found[-1].group(1) + (found[-1].group(2) or "")).strip()
    except OSError:
        pass
    said = f" ({cause[:200]})" if cause else ""
    hint = f"its log: {connect.keep_log()}"
    if cause is not None and "OutOfMemoryError" in cause:
        hint = (
            "give Spark more memory (spark.driver.memory, spark.executor.memory), or write "
            f"pairs and blocks to a file with --out; its log: {connect.JVM_LOG}"
        )
    return f"the Spark engine failed: its JVM stopped answering{said}; {hint}"


def _raised_in_spark(err: BaseException) -> bool:
    """Whether ``err`` was raised inside pyspark's or py4j's code (a connection to
    the JVM), not elsewhere in the process."""
    tb = err.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if f"{os.sep}pyspark{os.sep}" in name or f"{os.sep}py4j{os.sep}" in name:
            return True
        tb = tb.tb_next
    return False
