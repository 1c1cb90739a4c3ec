"""The Spark session the engine runs on: the active one, or one started for
``--master`` (``local[*]`` by default; ``sc://host`` for Spark Connect)."""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import secrets
import sys
from typing import Any

from facet.errors import FacetInputError

#: the log file of the JVM facet started last (where a JVM that died says why)
JVM_LOG: str | None = None
#: the JVM logs a message named (kept when the process exits; the others are removed)
_KEPT: set[str] = set()


def keep_log() -> str | None:
    """The JVM's log, kept past the process's exit because a message names it."""
    if JVM_LOG is not None:
        _KEPT.add(JVM_LOG)
    return JVM_LOG


def _remove_logs(paths: list[str]) -> None:
    """At exit: remove the JVM logs no message named (each run made one in the
    temporary folder; nobody reads a healthy run's start-up chatter)."""
    for path in paths:
        if path not in _KEPT:
            with contextlib.suppress(OSError):
                os.unlink(path)


def quiet_console() -> None:
    """For the command line (which owns its process), unless ``--debug``: a JVM that
    dies, or a ``--timeout`` that interrupts a call into it, makes py4j log the
    broken connection and pyspark's accumulator server print its traceback; facet
    says what happened in one line instead (``spark_failure``)."""
    import logging

    logging.disable(logging.CRITICAL)
    from pyspark import accumulators

    for name in ("AccumulatorTCPServer", "AccumulatorUnixServer", "AccumulatorServer"):
        server = getattr(accumulators, name, None)  # (their names vary across versions)
        if server is not None:
            server.handle_error = lambda self, request, address: None


class RunTag:
    """The tag of one run's Spark jobs, which its deadline cancels.  On a classic
    session a SparkContext job tag (a session's own tags name a thread's operations
    for that thread only, so no watchdog thread could interrupt them), with the
    tasks' threads interrupted on cancel; on Spark Connect a session tag, which the
    server interrupts for any thread.  Tags are kept per thread: :meth:`adopt` tags
    the calling thread, :meth:`release` untags it again (its previous setting of
    interrupting on cancel restored) when the run ends, its other threads gone."""

    #: the local property behind ``setInterruptOnCancel``
    _INTERRUPT = "spark.job.interruptOnCancel"

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.tag = f"facet-{secrets.token_hex(8)}"
        self.classic = not type(spark).__module__.startswith("pyspark.sql.connect")
        self._before: dict[int, Any] = {}
        #: the deadline has cancelled the run's jobs: an error Spark raises now is that
        self.cancelled = False

    def adopt(self) -> None:
        """Tag the jobs this thread starts from now on (once per thread)."""
        import threading

        key = threading.get_ident()
        if key in self._before:
            return
        if self.classic:
            sc = self.spark.sparkContext
            self._before[key] = sc.getLocalProperty(self._INTERRUPT)
            sc.addJobTag(self.tag)
            sc.setInterruptOnCancel(True)
        else:
            self._before[key] = None
            self.spark.addTag(self.tag)

    def cancel(self) -> None:
        """Cancel every running job of the run (from any thread)."""
        self.cancelled = True
        if self.classic:
            self.spark.sparkContext.cancelJobsWithTag(self.tag)
        else:
            self.spark.interruptTag(self.tag)

    def release(self) -> None:
        """Untag this thread (the run is over; the other threads it tagged are gone)."""
        import threading

        key = threading.get_ident()
        if key not in self._before:
            return
        if self.classic:
            sc = self.spark.sparkContext
            sc.removeJobTag(self.tag)
            sc.setLocalProperty(self._INTERRUPT, self._before[key])
        else:
            self.spark.removeTag(self.tag)


def tag_run(spark: Any, monitor: Any) -> RunTag | None:
    """A run with a deadline (``monitor``: a :class:`facet.progress.Monitor`): its Spark
    jobs on this thread tagged (the engine tags its other threads,
    :meth:`RunTag.adopt`), and the deadline cancels them by the tag until the run has
    ended, when the tag is released; None without a deadline."""
    if monitor is None or monitor.deadline is None:
        return None
    run = RunTag(spark)
    run.adopt()
    monitor.on_deadline(run.cancel, run.release)
    return run


#: every JVM log this process made
_LOGS: list[str] = []
atexit.register(_remove_logs, _LOGS)


def spark_session(master: str | None = None) -> Any:
    """The active SparkSession when ``master`` is None and one exists, else a
    session for ``master``.  Executors run this interpreter (``PYSPARK_PYTHON``),
    so that they import the same facet and numba cache."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    try:
        from pyspark.sql import SparkSession
    except ImportError as err:  # pragma: no cover - pyspark is a dependency
        raise FacetInputError(
            f"the spark engine needs pyspark ({err}); pip install 'pyspark[connect]'"
        ) from None
    if master is None:
        active = SparkSession.getActiveSession()
        if active is not None:
            return active
        master = "local[*]"
    # column names as written: a CSV header "A,a" keeps both (Spark renames them otherwise)
    _check_master(master)
    builder = SparkSession.builder.appName("facet").config("spark.sql.caseSensitive", "true")
    if master.startswith("sc://"):
        builder = builder.remote(master)
    else:
        builder = builder.master(master)
        builder = builder.config("spark.ui.enabled", "false")
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        builder = builder.config("spark.log.level", "ERROR")
        builder = builder.config("spark.sql.shuffle.partitions", str(2 * cores_of(master)))
        builder = builder.config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
    import tempfile
    import warnings

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    # the JVM writes its start-up chatter (and later logs) to the stderr it starts
    # with: give it a log file, so the command's stderr holds facet's lines only
    log = tempfile.NamedTemporaryFile(prefix="facet-spark-", suffix=".log", delete=False)  # noqa: SIM115 - the JVM keeps writing to it
    global JVM_LOG
    JVM_LOG = None if master.startswith("sc://") else log.name  # (Connect: no JVM here)
    _LOGS.append(log.name)
    saved = os.dup(2)
    try:
        sys.stderr.flush()
        os.dup2(log.fileno(), 2)
        return builder.getOrCreate()
    except Exception as err:  # noqa: BLE001 - a JVM that does not start is bad input
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        _KEPT.add(log.name)
        raise FacetInputError(
            f"--master {master}: cannot start Spark ({msg}); Spark needs Java 17 or 21 "
            f"(JAVA_HOME or java on the PATH); its log: {log.name}"
        ) from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        log.close()


#: the master URLs Spark takes: local ones, a cluster manager's, Spark Connect's
_MASTER = re.compile(
    r"local(\[(\d+|\*)(,\s*\d+)?\])?|local-cluster\[\d+,\s*\d+,\s*\d+\]|yarn"
    r"|(spark|k8s|mesos|sc)://\S+"
)


def _check_master(master: str) -> None:
    """Refuse a ``--master`` Spark would not take, before a JVM starts (its error
    would blame Java)."""
    if _MASTER.fullmatch(master.strip()) is None:
        raise FacetInputError(
            f"--master {master}: not a Spark master URL; use local[*] (or local[N]), "
            "spark://HOST:PORT, yarn, k8s://HOST:PORT, or sc://HOST for Spark Connect"
        )


def cores_of(master: str) -> int:
    """Executor cores a master URL names (``local[N]``, ``local[*]``,
    ``local-cluster[W,C,M]``); 8 for a cluster it does not describe."""
    if master in ("local", "local[1]"):
        return 1
    m = re.fullmatch(r"local\[(\d+|\*)(?:,\s*\d+)?\]", master)
    if m:
        return os.cpu_count() or 1 if m.group(1) == "*" else int(m.group(1))
    m = re.fullmatch(r"local-cluster\[(\d+),\s*(\d+),\s*\d+\]", master)
    if m:
        return int(m.group(1)) * int(m.group(2))
    return 8


def session_cores(spark: Any) -> int:
    """Executor cores of a running session, from its configuration only (no
    ``sparkContext``: Spark Connect has none)."""
    conf = spark.conf
    try:
        value = conf.get("spark.default.parallelism", None)
        if value:
            return max(1, int(value))
    except Exception:  # noqa: BLE001 - an unset key raises on some versions
        pass
    try:
        master = conf.get("spark.master", None)
    except Exception:  # noqa: BLE001
        master = None
    return cores_of(master) if master else 8
