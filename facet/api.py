"""The Python API: ``facet.detect(data, rules, ...)`` and ``facet.explain``
(docs/semantics.md §7).

Data flows one way: source -> Arrow -> :class:`EncodedTable` -> plan ->
engine -> sinks -> :class:`Result` (docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from facet.column_types import analyze, parse_schema
from facet.encoding import EncodedTable, encode, start_pools
from facet.engine import ENGINES, create_engine
from facet.engine.filters import where_mask
from facet.engine.multi import MODES, count_all, shared_groups
from facet.engine.parallel import pool
from facet.engine.row_outputs import ROW_OUTPUTS, SCHEMAS, row_output
from facet.engine.session import Session
from facet.engine.spark import is_spark_frame, spark_failure, task_input_exception
from facet.engine.warmup import KERNELS, compile_kernels, loaded, run_kernels, warmup
from facet.errors import EngineError, FacetError, FacetInputError
from facet.language.ast import DC
from facet.language.errors import warn
from facet.language.parser import parse_dc, parse_rules, read_rules
from facet.language.where import parse_where
from facet.loading import load, parse_delimiter
from facet.planner.config import Config, config_or_default
from facet.planner.explain import plan_record, with_actuals
from facet.progress import (
    MAX_TIMEOUT,
    DeadlineExceeded,
    Monitor,
    ProgressCallback,
    available_memory,
    deadline_in,
    human_bytes,
    kernels_cache_cold,
    parse_bytes,
)
from facet.result import DCResult, Result
from facet.sinks.arrow import BLOCK_SCHEMA, PAIR_SCHEMA
from facet.sinks.files import TableWriter, TextFile, check_not_input, out_format
from facet.sinks.ordering import sorted_blocks, sorted_pairs
from facet.thread_pools import start_threads

OUTPUTS = ("count", "pairs", "blocks", *ROW_OUTPUTS)
RulesLike = str | os.PathLike | Iterable[str | DC] | None


def load_dcs(rules: RulesLike = None, dcs: Iterable[str | DC] | None = None) -> list[DC]:
    """DCs from a rules file path, rules text or a list of DC strings/objects,
    then ``dcs`` (``--dc``); ids are 0-based in that order."""
    out: list[DC] = []
    if rules is not None:
        if isinstance(rules, os.PathLike) or (
            isinstance(rules, str) and "\n" not in rules and _looks_like_path(rules)
        ):
            out.extend(read_rules(rules))
        elif isinstance(rules, str):
            out.extend(parse_rules(rules, source="<rules>"))
        else:
            for i, r in enumerate(rules):
                out.extend([r] if isinstance(r, DC) else parse_dc(r, source="<rules>", line=i + 1))
    for i, d in enumerate(dcs or []):
        out.extend([d] if isinstance(d, DC) else parse_dc(d, source="--dc", line=i + 1))
    if not out:
        if isinstance(rules, os.PathLike | str) and rules is not None and _looks_like_path(rules):
            raise FacetInputError(
                f"{os.fspath(rules)}: no DC in the rules file (only comments or blank lines); "
                "write one DC per line, e.g. not(t.zip = t'.zip and t.city != t'.city)"
            )
        raise FacetInputError("no denial constraints given; pass a rules file or --dc TEXT")
    return [d.with_id(i) for i, d in enumerate(out)]


def _looks_like_path(s: str) -> bool:
    if os.path.exists(s):
        return True
    # a DC always has a '(' or an '->'; a path does not need them
    return not any(ch in s for ch in "()[]") and "->" not in s and "→" not in s


@dataclass
class Opened:
    """A loaded, typed and encoded table with its DCs, ready to plan and run."""

    session: Session
    source: str
    load_seconds: float
    warmup_seconds: float
    encode_seconds: float
    warnings: list[str]
    #: ``--where``: the expression and the rows it selects (None: the whole table)
    where: str | None = None
    scope_rows: int | None = None
    #: the encoded table (local engine): its types, for an incremental Detector
    enc: Any = None


def open_session(
    data: Any,
    rules: RulesLike = None,
    *,
    dcs: Iterable[str | DC] | None = None,
    schema: str | dict[str, str] | None = None,
    on_warning: Callable[[str], None] | None = None,
    config: Config | None = None,
    engine: str = "local",
    outputs: tuple[str, ...] = ("count",),
    execute: bool = True,
    monitor: Monitor | None = None,
    master: str | None = None,
    id_column: str | None = None,
    where: str | None = None,
    delimiter: str | None = None,
) -> Opened:
    """Parse the DCs, load the columns they use, type and encode them, and
    open a session on the engine.  ``outputs`` / ``execute``: the outputs the run
    plans and whether it runs those plans (the kernels it warms up front).
    ``monitor``: the run's progress events and deadline (the phases ``load``,
    ``compile`` or ``warmup``, ``encode``).  ``where``: scope the run to the rows
    satisfying it (:mod:`facet.language.where`); its comparisons type the
    columns as the DCs' do.  ``delimiter``: a CSV file's (None: sniffed from its
    header, :func:`facet.loading.sniff_delimiter`)."""
    if is_spark_frame(data):
        engine = "spark"
    if engine not in ENGINES:
        raise FacetInputError(f"unknown engine '{engine}'; use one of {', '.join(ENGINES)}")
    config = config_or_default(config)
    dc_list = load_dcs(rules, dcs)
    schema_map = parse_schema(schema)
    delimiter = parse_delimiter(delimiter)  # ("tab" -> a tab, for Spark's reader too)
    scope = None if where is None else parse_where(where)
    if id_column is not None and not is_spark_frame(data):
        raise FacetInputError(
            f"id_column '{id_column}': row ids come from a column of a Spark DataFrame only; "
            "a file or a table is numbered by position (docs/semantics.md §3): drop it, or "
            "pass the data as a Spark DataFrame"
        )
    use = analyze(dc_list + ([] if scope is None else scope.dcs()))
    monitor = monitor or Monitor()
    if engine == "spark":
        monitor.start("load")
        opened = _open_spark(
            data,
            dc_list,
            use,
            schema_map,
            config,
            master,
            id_column,
            on_warning,
            scope,
            delimiter,
            monitor,
        )
        monitor.end()
        # the Python workers import facet and load the kernels the tasks will run,
        # as the local engine does before anything is timed (warmup_seconds)
        from facet.engine.spark.workers import warm_workers

        kernels = run_kernels(dc_list, config.but(threads=1), outputs, execute=execute)
        compiled = load_kernels(kernels, monitor, here=False)  # for the workers to load
        opened.warmup_seconds = compiled + warm_workers(opened.session.engine, kernels)
        monitor.end()
        return opened
    t0 = time.perf_counter()
    monitor.start("load")
    source = load(data, use.columns + [c for c in schema_map if c not in use.columns], delimiter)
    monitor.end()
    opened = open_local(
        source, dc_list, use, schema_map, config, outputs, execute, monitor,
        load_seconds=time.perf_counter() - t0, engine=engine, where=scope, buckets=True,
    )  # fmt: skip
    for w in opened.warnings:
        if on_warning is not None:
            on_warning(w)
    return opened


def open_local(
    source: Any,
    dc_list: list[DC],
    use: Any,
    schema_map: dict[str, str],
    config: Config,
    outputs: tuple[str, ...],
    execute: bool,
    monitor: Monitor,
    *,
    load_seconds: float = 0.0,
    engine: str = "local",
    where: Any = None,
    scope: np.ndarray | None = None,
    encoded: EncodedTable | None = None,
    buckets: bool = False,
) -> Opened:
    """A session on a loaded :class:`facet.loading.Source`: warm the kernels,
    type and encode (unless ``encoded`` is its encoding already), open the
    engine; scoped by ``where`` (a parsed ``--where``) or by ``scope`` (a bool
    per row: an incremental batch's rows).  ``buckets``: see
    :func:`facet.encoding.encode` (a one-shot run's)."""
    kernels = run_kernels(dc_list, config, outputs, source=source, execute=execute)
    warm = load_kernels(kernels, monitor)
    if encoded is None:
        warm += _warm_encoding(source, use, schema_map, config, buckets)
    monitor.end()
    t1 = time.perf_counter()
    monitor.start("encode")
    enc = encode(source, use, schema_map, config, buckets=buckets) if encoded is None else encoded
    monitor.end()
    warnings = list(enc.warnings) + reinterpretation_warnings(
        dc_list, enc.kinds, enc.ordered, enc.from_text, where
    )
    created = create_engine(engine, enc, config)
    if where is not None:
        scope = where_mask(enc, where)
    if scope is not None:
        created.set_scope(scope)
    session = Session(created, dc_list)
    opened = Opened(
        session,
        source.name,
        load_seconds,
        warm,
        time.perf_counter() - t1,
        warnings,
        None if where is None else where.text,
        None if scope is None else int(np.count_nonzero(scope)),
        enc,
    )
    return opened


def load_kernels(kernels: set[str], monitor: Monitor, here: bool = True) -> float:
    """Load a run's ``kernels`` from numba's cache (phase ``warmup``); where the
    cache lacks any of them, compile every kernel (phase ``compile``, one step per
    kernel), so that no later run compiles again, whatever it outputs.  ``here``:
    whether this process runs the kernels (a Spark driver only compiles them for
    its workers to load).  Returns the seconds it took."""
    todo = kernels - loaded()
    if todo and kernels_cache_cold(todo):
        monitor.start("compile", len(set(KERNELS) - loaded()))
        return compile_kernels(
            None, todo if here else (), on_kernel=lambda _: monitor.advance(1), check=monitor.check
        )
    monitor.start("warmup")
    return warmup(kernels) if here else 0.0


#: rows of the table encoded untimed first (see _warm_encoding)
_WARM_ROWS = 64


def _warm_encoding(
    source: Any, use: Any, schema_map: dict[str, str], config: Config, buckets: bool = False
) -> float:
    """A process's first encoding pays one-time costs (thread pools started, Arrow's
    compute functions and numba's dispatch on these column types resolved, ~10-20 ms):
    paid here, untimed like the kernels' warm-up, by starting the pools and encoding the
    first rows. A problem those rows show is left for the real encoding to report."""
    if source.num_rows <= _WARM_ROWS:
        return 0.0
    t = time.perf_counter()
    start_pools(config.workers)
    if config.workers > 1:
        start_threads(pool(config.workers), config.workers)  # the engine's pool
    head = dataclasses.replace(source, table=source.table.slice(0, _WARM_ROWS), num_rows=_WARM_ROWS)
    with contextlib.suppress(FacetError):
        encode(head, use, schema_map, config, buckets=buckets)
    return time.perf_counter() - t


def _open_spark(
    data: Any,
    dc_list: list[DC],
    use: Any,
    schema_map: dict[str, str],
    config: Config,
    master: str | None,
    id_column: str | None,
    on_warning: Callable[[str], None] | None,
    where: Any = None,
    delimiter: str | None = None,
    monitor: Monitor | None = None,
) -> Opened:
    """A session on the Spark engine: the table read and numbered by Spark,
    typed once for all tasks (facet/engine/spark/); scoped by ``where`` (a
    parsed ``--where``), which every task evaluates on its own rows; a
    ``monitor``'s deadline interrupts the run's Spark jobs (``tag_run``)."""
    from facet.engine.spark.connect import spark_session, tag_run
    from facet.engine.spark.engine import SparkEngine
    from facet.engine.spark.table import check_input, spark_table
    from facet.engine.spark.tasks import TaskSpec

    t0 = time.perf_counter()
    if not is_spark_frame(data):  # a misspelt column is refused before a JVM starts
        data = check_input(data, use, schema_map, id_column, delimiter)
    spark = data.sparkSession if is_spark_frame(data) else spark_session(master)
    tag = tag_run(spark, monitor)
    table = spark_table(spark, data, use, schema_map, id_column, delimiter, tag)
    spec = TaskSpec(
        table.name, table.text, table.all_columns, dc_list, use, table.schema,
        config.but(threads=1), frame_names=table.frame_names, where=where,
    )  # fmt: skip
    ordered = {c: comp.ordered for comp in use.components for c in comp.columns}
    warnings = list(table.warnings) + reinterpretation_warnings(
        dc_list, table.schema, ordered, table.text, where
    )
    for w in warnings:
        if on_warning is not None:
            on_warning(w)
    engine = SparkEngine(table, spec, config, tag)
    scope_rows = None if where is None else engine.scope_rows()
    session = Session(engine, dc_list)
    return Opened(
        session, table.name, time.perf_counter() - t0, 0.0, 0.0, warnings,
        None if where is None else where.text, scope_rows,
    )  # fmt: skip


def explain(
    data: Any,
    rules: RulesLike = None,
    *,
    dcs: Iterable[str | DC] | None = None,
    output: str = "count",
    analyze: bool = False,
    schema: str | dict[str, str] | None = None,
    on_warning: Callable[[str], None] | None = None,
    config: Config | None = None,
    engine: str = "local",
    master: str | None = None,
    id_column: str | None = None,
    where: str | None = None,
    progress: ProgressCallback | None = None,
    delimiter: str | None = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """The plan of every DC (``facet explain``): stages, algorithms, storage,
    estimates; with ``analyze=True`` it runs them and adds what actually ran
    (sizes, seconds, storage).  ``where``: plans of a scoped run (as
    :func:`detect`).  ``progress``: the events of opening the run (``load``,
    ``compile`` or ``warmup``, ``encode``), as :func:`detect` reports them.
    Warnings, ``delimiter`` and ``timeout``: as :func:`detect`'s."""
    if on_warning is None:
        on_warning = warn
    if output not in OUTPUTS:
        raise FacetInputError(f"unknown output '{output}'; use one of {', '.join(OUTPUTS)}")
    _check_timeout(timeout)
    monitor = Monitor(progress, timeout)

    def work() -> dict[str, Any]:
        try:
            return _explain(data, rules, dcs, output, analyze, schema, on_warning, config,
                            engine, master, id_column, where, delimiter, monitor)  # fmt: skip
        except DeadlineExceeded:
            raise
        except Exception as err:  # noqa: BLE001 - Spark's errors as facet's
            exceeded = deadline_in(err) or monitor.stopped
            if exceeded is not None:
                raise DeadlineExceeded(exceeded.seconds, exceeded.where) from err
            _raise_spark_error(err)
            raise

    return work() if monitor.deadline is None else within_deadline(work, monitor)


def _check_timeout(timeout: Any) -> None:
    """Refuse a ``timeout`` that is not a number of seconds in (0, MAX_TIMEOUT]."""
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not (0 < timeout <= MAX_TIMEOUT)
    ):
        raise FacetInputError(
            f"--timeout must be a number of seconds > 0 and at most {MAX_TIMEOUT:.0e}, "
            f"got {timeout}"
        )


def _explain(
    data: Any,
    rules: RulesLike,
    dcs: Iterable[str | DC] | None,
    output: str,
    analyze: bool,
    schema: str | dict[str, str] | None,
    on_warning: Callable[[str], None] | None,
    config: Config | None,
    engine: str,
    master: str | None,
    id_column: str | None,
    where: str | None,
    delimiter: str | None,
    monitor: Monitor,
) -> dict[str, Any]:
    opened = open_session(
        data,
        rules,
        dcs=dcs,
        schema=schema,
        on_warning=on_warning,
        config=config,
        engine=engine,
        outputs=(output,),
        execute=analyze,
        master=master,
        id_column=id_column,
        where=where,
        delimiter=delimiter,
        monitor=monitor,
    )
    session = opened.session
    session.estimates = True
    records = []
    if monitor is not None:
        monitor.describe = lambda i: _describe(session.dcs[i], i)
        monitor.start("count", len(session.dcs))
    for i, dc in enumerate(session.dcs):
        if monitor is not None:
            monitor.dc_started(i)
        t = time.perf_counter()
        plan = session.plan(i, output)
        stats_seconds = session.statistics_seconds.get((i, output), 0.0)
        rec = plan_record(
            dc.id if dc.id is not None else i,
            dc.name,
            dc.body(),
            session.normal[i],
            plan,
            output,
            session.config.nested_pairs,
            time.perf_counter() - t - stats_seconds,
            stats_seconds,
            session.config.nested_order_scale,
        )
        if analyze:
            rec = with_actuals(rec, session.analyze(i, output))
        records.append(rec)
    return {
        "rows": session.rows,
        "engine": session.engine.name,
        "source": opened.source,
        "output": output,
        "analyze": analyze,
        **_scope_fields(opened),
        "phases": {
            "load_seconds": round(opened.load_seconds, 6),
            "warmup_seconds": round(opened.warmup_seconds, 6),
            "encode_seconds": round(opened.encode_seconds, 6),
        },
        "dcs": records,
        "warnings": opened.warnings,
    }


def _scope_fields(opened: Opened) -> dict[str, Any]:
    """``where`` and ``scope_rows`` of a scoped run's JSON (none otherwise)."""
    if opened.where is None:
        return {}
    return {"where": opened.where, "scope_rows": opened.scope_rows}


def detect(
    data: Any,
    rules: RulesLike = None,
    *,
    dcs: Iterable[str | DC] | None = None,
    output: str = "count",
    out: str | os.PathLike | None = None,
    limit: int | None = None,
    schema: str | dict[str, str] | None = None,
    on_warning: Callable[[str], None] | None = None,
    config: Config | None = None,
    mode: str = "sequential",
    engine: str = "local",
    progress: ProgressCallback | None = None,
    timeout: float | None = None,
    master: str | None = None,
    id_column: str | None = None,
    where: str | None = None,
    sort: bool = False,
    delimiter: str | None = None,
) -> Result:
    """Find every violation of the DCs in ``data``.

    ``data``: a CSV / Parquet / Arrow IPC path, or a pyarrow, pandas or Polars
    table.  ``rules``: a rules file path, rules text, or a list of DC strings.
    ``output``: ``"count"`` (counts only), ``"pairs"`` or ``"blocks"``; with
    ``out`` those stream to a Parquet/CSV/Arrow file, otherwise they are kept
    in the result (``result.pairs()`` / ``result.blocks()``).  ``limit`` caps
    pairs (blocks) per DC.  ``schema``: ``"col:type,..."`` overriding CSV typing.
    ``delimiter``: a CSV file's delimiter, one character (``"tab"`` for a tab); by
    default it is sniffed from the header among ``, ; tab |`` (``,`` when that is
    ambiguous; docs/semantics.md §4.2).
    ``config``: planning/execution thresholds (:class:`facet.planner.config.Config`).
    ``mode``: how many DCs run -- ``sequential``, ``parallel``, ``cost-trie`` or
    ``freq-trie`` (shared refinement prefixes); every mode gives the same answers.
    ``engine``: ``"local"`` (this machine, all cores) or ``"spark"`` (PySpark:
    ``data`` a path Spark reads or a table facet hands it; a
    ``pyspark.sql.DataFrame`` selects it by itself).  ``master``: the Spark master
    URL when no session is active (default ``local[*]``; ``sc://host`` for Spark
    Connect).  ``id_column``: a column of a Spark DataFrame holding each row's id,
    used as its tid (default: the row's position).

    ``sort``: pairs by ``(dc, t1, t2)`` and blocks by their sorted tid lists
    (:mod:`facet.sinks.ordering`); with ``limit`` the first N of that order.
    Without it their order is the plan's.  Row outputs always come in their
    documented order.

    ``where``: a row condition (``"state = 'NY' and salary > 1000"``, grammar in
    :mod:`facet.language.where`); the run then reports only the violations holding
    at least one row that satisfies it, computed from the scoped initial pairs
    (never by filtering all pairs), in every output.

    ``progress``: called with a :class:`facet.progress.ProgressEvent` at each
    step -- ``event.phase`` (``"load"``, ``"compile"`` when numba compiles the
    kernels, which happens on the first run only, or else ``"warmup"``,
    ``"encode"``, ``"count"``, ``"write"``), ``event.done`` and ``event.total``
    (DCs counted of all for ``count``; pairs, or blocks, listed of all for
    ``write``, whose total is ``None`` for blocks until the last event; 1 step
    for the other phases) and ``event.dc`` (the DC's index, or ``None``).  Each
    phase begins with ``done == 0`` and ends with ``done == total``; ``write``
    comes only with pairs, blocks or ``out``.  In ``parallel`` mode ``count``
    events come from worker threads, one call at a time.  An exception the
    callback raises stops the run.

    ``timeout``: seconds of wall-clock time for the whole run; past it the run
    stops with :class:`facet.progress.DeadlineExceeded` and leaves nothing at
    ``out``, within half a second in any phase: the run then goes on a thread of
    its own, stopped at the deadline (:func:`within_deadline`); a numba kernel
    already running finishes its call on that thread, unwaited for.

    Pairs or blocks kept in memory (no ``out``) are first checked against the
    memory available (``$FACET_MEMORY_AVAILABLE`` overrides the figure): a DC
    whose pairs would not fit raises :class:`FacetInputError` before any is listed.

    Warnings (values read as NULL, a column that compares as numbers or as text;
    docs/semantics.md §9) are kept in ``result.warnings`` and passed to
    ``on_warning``; without it each is issued as a :class:`facet.FacetWarning`
    through Python's :mod:`warnings` (``warnings.simplefilter("error",
    facet.FacetWarning)`` turns them into exceptions).
    """
    if on_warning is None:
        on_warning = warn
    if output not in OUTPUTS:
        raise FacetInputError(f"unknown output '{output}'; use one of {', '.join(OUTPUTS)}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise FacetInputError(f"--limit must be a whole number >= 0, got {limit!r}")
    _check_timeout(timeout)
    out_path = None if out is None else os.fspath(out)
    if out_path is not None:
        out_format(out_path, allow_json=output == "count")
        check_not_input(out_path, [data, rules])
    if mode not in MODES:
        raise FacetInputError(f"unknown mode '{mode}'; use one of {', '.join(MODES)}")
    ignored = None
    if limit is not None and output not in ("pairs", "blocks"):
        what = "no pairs" if output == "count" else "all of its rows"
        ignored = (
            f"--limit caps the pairs or blocks listed per DC; --output {output} lists {what}, "
            "so it is ignored"
        )

    def opener(monitor: Monitor) -> Opened:
        opened = open_session(
            data,
            rules,
            dcs=dcs,
            schema=schema,
            on_warning=on_warning,
            config=config,
            engine=engine,
            outputs=("count", output),  # counts first, then pairs / blocks
            monitor=monitor,
            master=master,
            id_column=id_column,
            where=where,
            delimiter=delimiter,
        )
        if ignored is not None:
            opened.warnings.append(ignored)
            if on_warning is not None:
                on_warning(ignored)
        return opened

    return run_detection(opener, output, out_path, limit, mode, progress, timeout, sort)


def run_detection(
    opener: Callable[[Monitor], Opened],
    output: str,
    out_path: str | None,
    limit: int | None,
    mode: str,
    progress: ProgressCallback | None,
    timeout: float | None,
    sort: bool = False,
) -> Result:
    """A validated run: ``opener`` opens the session (the whole table, or an
    incremental :class:`facet.detector.Detector`'s), then counts and outputs
    under the progress monitor and the deadline; nothing is left at ``out``
    unless it completes."""
    monitor = Monitor(progress, timeout)
    run = _Run()

    def work() -> Result:
        try:
            result = _detect(run, monitor, opener(monitor), output, out_path, limit, mode, sort)
            monitor.check()  # the deadline covers everything but the final rename
            return result
        except DeadlineExceeded:
            raise
        except Exception as err:  # noqa: BLE001 - Spark's errors as facet's
            exceeded = deadline_in(err) or monitor.stopped
            if exceeded is None:
                _raise_spark_error(err)
                raise
            raise DeadlineExceeded(exceeded.seconds, exceeded.where) from err

    try:
        result = work() if monitor.deadline is None else within_deadline(work, monitor, run)
        if run.pending is not None:
            run.pending.close()  # publish: rename into place
            run.pending = None
        if monitor.phase == "write":
            monitor.end()
        return result
    finally:
        if run.pending is not None and not run.abandoned:  # (else its own thread's)
            run.pending.abort()
        if run.session is not None:
            run.session.monitor = None
            run.session.engine.on_step = None


def within_deadline(work: Callable[[], Any], monitor: Monitor, run: _Run | None = None) -> Any:
    """``work()`` on a thread of its own while this one waits for it until the
    monitor's deadline (docs/semantics.md §9): the deadline holds in every phase,
    whatever runs there (a numba kernel, Arrow's reader, a compiling kernel, a
    Spark job), within a fraction of a second.  Past it (or on Ctrl-C here) the
    run is stopped: its next check raises, its Spark jobs are cancelled
    (``Monitor.on_stop``) and its unfinished output file is removed; a kernel
    already running finishes its call on that thread, unwaited for."""
    box: list[tuple[bool, Any]] = []

    def target() -> None:
        try:
            box.append((True, work()))
        except BaseException as err:  # noqa: BLE001 - handed to the waiting thread
            box.append((False, err))
        finally:
            monitor.close()  # (on this thread: a Spark run's jobs untagged here)
            if monitor.stopped is not None and run is not None:  # nobody waits any more
                pending, run.pending = run.pending, None
                if pending is not None:
                    pending.abort()

    thread = threading.Thread(target=target, name="facet-run", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            left = (monitor.deadline or 0.0) - time.monotonic()
            if left <= 0:
                break
            thread.join(min(left, 0.5))
        if thread.is_alive():
            raise monitor.exceeded()
    except BaseException as err:
        monitor.stop(err if isinstance(err, DeadlineExceeded) else None)
        thread.join(0.2)  # a run in Python code stops at its next check
        if thread.is_alive() and run is not None:
            _abandon_output(run)  # (its thread removes what it writes later)
        raise
    ok, value = box[0]
    if ok:
        return value
    raise value


def _abandon_output(run: _Run) -> None:
    """Remove the output file a stopped run's thread is still writing: the thread
    writes on into the removed file, and publishes nothing (its monitor is stopped)."""
    run.abandoned = True
    pending, run.pending = run.pending, None
    tmp = getattr(pending, "tmp", None)
    if tmp is not None:
        with contextlib.suppress(OSError):
            os.remove(tmp)


@dataclass
class _Run:
    """What a failed or stopped :func:`detect` must clean up."""

    session: Session | None = None
    #: the output file written but not yet renamed into place
    pending: Any = None
    #: stopped at its deadline while its thread still ran: that thread cleans up
    abandoned: bool = False


def _detect(
    run: _Run,
    monitor: Monitor,
    opened: Opened,
    output: str,
    out_path: str | None,
    limit: int | None,
    mode: str,
    sort: bool = False,
) -> Result:
    session, dc_list = opened.session, opened.session.dcs
    run.session = session
    session.monitor = monitor
    session.engine.on_step = monitor.step
    monitor.describe = lambda i: _describe(dc_list[i], i)
    shared = opened.encode_seconds / len(dc_list)
    monitor.start("count", len(dc_list))
    counts = count_all(session, mode)
    monitor.end()
    results = [
        DCResult(
            dc.id if dc.id is not None else i,
            dc.name,
            dc.body(),
            v,
            r,
            seconds + shared,
            arity=session.normal[i].arity,
            work=_work(session.engine, i),
        )
        for i, (dc, (v, r, seconds)) in enumerate(zip(dc_list, counts, strict=True))
    ]
    result = Result(
        rows=session.rows,
        dcs=results,
        source=opened.source,
        load_seconds=opened.load_seconds,
        warmup_seconds=opened.warmup_seconds,
        output=output,
        out=out_path,
        warnings=opened.warnings,
        mode=mode,
        engine=session.engine.name,
        where=opened.where,
        scope_rows=opened.scope_rows,
        _session=session,
    )
    if output == "count":
        if out_path is not None:
            monitor.start("write", 1)
            run.pending = _counts_file(result, out_path)
        return result
    if output in ROW_OUTPUTS:
        return _row_output(run, monitor, session, result, output, out_path)
    session.limit = None if sort else limit  # (sorted: every pair is listed)
    if out_path is None:
        _check_memory(session, results, output, limit)
        if session.engine.name == "spark":
            _check_spark_driver(session, results, output, limit)
    elif sort:  # one DC's pairs at a time (at most --limit of them) are held to be sorted
        _check_memory(session, results, output, limit, each=True)
    schema_out = PAIR_SCHEMA if output == "pairs" else BLOCK_SCHEMA
    produce = session.dc_pairs if output == "pairs" else session.dc_blocks
    expected = None
    if output == "pairs":
        expected = sum(r.violations if limit is None else min(r.violations, limit) for r in results)
    monitor.start("write", expected)
    if session.engine.capabilities.frames:
        return _frames_output(
            run, monitor, session, result, output, out_path, limit, schema_out, sort
        )
    finals, shared_out = shared_groups(session, mode, output)
    kept: list[pa.RecordBatch] = []
    if out_path is not None:
        run.pending = TableWriter(out_path, schema_out)
    for i, res in enumerate(results):
        t = time.perf_counter()
        written = 0
        res.seconds += shared_out.get(i, 0.0)
        if not sort:
            batches = produce(i, limit, finals.get(i))
        elif output == "pairs":
            batches = sorted_pairs(
                produce(i, None, finals.get(i)), i, session.rows, limit, session.config.row_chunk
            )
        else:
            batches = sorted_blocks(produce(i, None, finals.get(i)), i, limit)
        for batch in batches:
            written += batch.num_rows
            if run.pending is not None:
                run.pending.write(batch)
            else:
                kept.append(batch)
            monitor.advance(batch.num_rows if output == "pairs" else 0, i)
        if output == "blocks":
            monitor.advance(written, i)
        res.written = written
        res.seconds += time.perf_counter() - t
    if out_path is None:
        table = pa.Table.from_batches(kept, schema=schema_out)
        if output == "pairs":
            result._pairs = table
        else:
            result._blocks = table
    return result


def _raise_spark_error(err: BaseException) -> None:
    """``err`` as facet's error when Spark raised it: bad input found inside a task
    (:class:`FacetInputError`), or the engine failing (:class:`EngineError`: its JVM
    out of memory, say); otherwise nothing (the caller raises ``err``)."""
    raised = task_input_exception(err)
    if raised is not None:
        raise raised from None
    failure = spark_failure(err)
    if failure is not None:
        raise EngineError(failure) from err


def _work(engine: Any, i: int) -> list[dict[str, Any]] | None:
    """The spreads a distributed engine recorded for DC ``i`` (JSON ``work``)."""
    records = [dict(w) for w in getattr(engine, "work", ()) if w.get("dc") == i]
    for w in records:
        w.pop("dc", None)
        if isinstance(w.get("key"), tuple):
            w["key"] = list(w["key"])
        if isinstance(w.get("ranges"), tuple):
            w["ranges"] = list(w["ranges"])
    return records or None


def _describe(dc: DC, i: int) -> str:
    """``DC 4 (rules.txt:5)`` for messages."""
    where = dc.where()
    return f"DC {i}" if where.startswith("DC") else f"DC {i} ({where})"


#: bytes of one pair kept in memory (``dc``, ``t1``, ``t2``: int64 each)
PAIR_BYTES = 24


def _check_memory(
    session: Session,
    results: list[DCResult],
    output: str,
    limit: int | None,
    each: bool = False,
) -> None:
    """Refuse (exit 2) pairs or blocks that would not fit in the memory
    available, before listing any: pairs are known exactly from the counts;
    blocks are estimated from the plan (each dominance split copies its tids
    once per halving of the code range).  ``each``: one DC's are held at a time
    (``--sort`` with ``--out``), not all of them."""
    available = available_memory()
    if available is None:
        return
    need = _pairs_memory(session, results, output, limit)
    total = max(need, default=0) if each else sum(need)
    if total <= available:
        return
    i = max(range(len(need)), key=need.__getitem__)
    what = "violating pairs" if output == "pairs" else "blocks"
    n = results[i].violations if limit is None else min(results[i].violations, limit)
    count = f"{n:,} {what}" if output == "pairs" else what
    everything = f" ({human_bytes(total)} for all DCs)" if total > need[i] else ""
    if each:
        raise FacetInputError(
            f"{_describe(session.dcs[i], i)}: sorting its {count} holds them in memory, "
            f"about {human_bytes(need[i])}, more than the {human_bytes(available)} "
            "available; drop --sort, or keep "
            + ("the first N with --limit N" if limit is None else "fewer with a smaller --limit")
        )
    raise FacetInputError(
        f"{_describe(session.dcs[i], i)}: keeping its {count} in memory takes about "
        f"{human_bytes(need[i])}{everything}, more than the {human_bytes(available)} "
        "available; stream them to a file with --out FILE, keep fewer with --limit N, "
        "or count only with --output count"
    )


#: bytes the Spark driver's JVM holds for each pair it collects (the tasks' Arrow
#: results and their copies on the way to Python), measured: 6M pairs fit its
#: default 1 GiB heap, 10M overran it -- and Spark then hung, its result thread dead
SPARK_DRIVER_PAIR_BYTES = 128
#: the same for a row's degrees (three int64 columns: tid, as t, as t')
SPARK_DRIVER_ROW_BYTES = 192


def _check_spark_driver(
    session: Session, results: list[DCResult], output: str, limit: int | None
) -> None:
    """Refuse (exit 2) what the Spark engine would collect on its driver beyond its
    JVM heap (``spark.driver.memory``), before any job: pairs or blocks kept without
    ``--out`` (all DCs'), and for row outputs each DC's rows in a violation with
    their degrees (``tuples``, ``cells``) or components (``components``), or its
    pairs (``suspects``), one DC at a time; past the heap the JVM fails, or hangs."""
    spark = session.engine.table.frame.sparkSession
    setting = str(spark.conf.get("spark.driver.memory", "1g") or "1g")
    try:  # (a bare number is MiB)
        heap = parse_bytes(setting if setting[-1:].isalpha() else setting + "m")
    except ValueError:
        return
    if output in ("tuples", "cells"):
        need = [r.rows_involved * SPARK_DRIVER_ROW_BYTES for r in results]
    elif output == "components":  # an edge per row and task it is in a violation in
        need = [r.rows_involved * SPARK_DRIVER_PAIR_BYTES for r in results]
    elif output == "suspects":
        need = [r.violations * SPARK_DRIVER_PAIR_BYTES for r in results]
    else:
        kind = "pairs" if output == "pairs" else "blocks"
        need = [b * SPARK_DRIVER_PAIR_BYTES // PAIR_BYTES
                for b in _pairs_memory(session, results, kind, limit)]  # fmt: skip
    total = sum(need) if output in ("pairs", "blocks") else max(need, default=0)
    if total <= heap * 9 // 10:
        return
    i = max(range(len(need)), key=need.__getitem__)
    n = results[i].violations if limit is None else min(results[i].violations, limit)
    what = {
        "pairs": f"its {n:,} violating pairs",
        "suspects": f"its {n:,} violating pairs (which --output suspects covers)",
        "tuples": f"its {results[i].rows_involved:,} violating rows' degrees",
        "cells": f"its {results[i].rows_involved:,} violating rows' degrees",
        "components": f"its {results[i].rows_involved:,} violating rows' components",
    }.get(output, "its blocks")
    how = (
        "have the executors write them with --out FILE, keep fewer with --limit N, "
        if output in ("pairs", "blocks")
        else "run on the local engine, "
    )
    raise FacetInputError(
        f"{_describe(session.dcs[i], i)}: collecting {what} on the Spark driver takes about "
        f"{human_bytes(total)} of its JVM heap, more than its {setting} (spark.driver.memory) "
        f"holds; {how}or give the driver more memory (spark.driver.memory)"
    )


def _pairs_memory(
    session: Session, results: list[DCResult], output: str, limit: int | None
) -> list[int]:
    """Bytes each DC's pairs (or blocks, estimated) take kept in memory."""
    need: list[int] = []
    for i, res in enumerate(results):
        n = res.violations if limit is None else min(res.violations, limit)
        if output == "pairs" or res.arity == 1:
            need.append(n * PAIR_BYTES if output == "pairs" else n * 8)
            continue
        plan = session.plan(i, "blocks")
        assert plan is not None  # a two-tuple DC
        side = plan.left_rows + plan.right_rows
        tids = float(side)
        for stage in plan.stages:
            if stage.algorithm == "cdq":
                tids *= max(1.0, math.log2(max(stage.cardinality or session.rows, 2)))
        # a block of k tids stands for about k / 2 pairs or more
        tids = min(tids, 2.0 * res.violations + side)
        if limit is not None:
            tids = min(tids, float(limit) * side)
        need.append(int(tids * 8))
    return need


def _counts_file(result: Result, path: str) -> Any:
    """The per-DC counts written to a temporary file next to ``path``: JSON (the
    document) or a table whose columns are the JSON entries' keys; the caller
    renames it into place (``close()``) or removes it (``abort()``)."""
    import json

    if out_format(path, allow_json=True) == "json":
        f = TextFile(path)
        try:
            f.write(json.dumps(result.to_dict(), indent=2) + "\n")
        except BaseException:
            f.abort()
            raise
        return f
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("name", pa.string()),
            ("dc", pa.string()),
            ("violations", pa.int64()),
            ("rows_involved", pa.int64()),
            ("seconds", pa.float64()),
        ]
    )
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([d.id for d in result.dcs], pa.int64()),
            pa.array([d.name for d in result.dcs], pa.string()),
            pa.array([d.dc for d in result.dcs], pa.string()),
            pa.array([d.violations for d in result.dcs], pa.int64()),
            pa.array([d.rows_involved for d in result.dcs], pa.int64()),
            pa.array([round(d.seconds, 6) for d in result.dcs], pa.float64()),
        ],
        schema=schema,
    )
    w = TableWriter(path, schema)
    try:
        w.write(batch)
    except BaseException:
        w.abort()
        raise
    return w


def _row_output(
    run: _Run,
    monitor: Monitor,
    session: Session,
    result: Result,
    output: str,
    out_path: str | None,
) -> Result:
    """``tuples``, ``cells``, ``components`` or ``suspects`` (docs/outputs.md):
    one row per row or cell, from degrees and blocks (no pair is listed; the
    suspects' greedy cover lists them, bounded)."""
    if session.engine.name == "spark":
        _check_spark_driver(session, result.dcs, output, None)
    monitor.start("write", None)
    t = time.perf_counter()
    table = row_output(session, output, [d.violations for d in result.dcs])
    written = None
    if "dc" in table.column_names:
        dcs = table.column("dc").to_numpy()
        written = [int(np.count_nonzero(dcs == res.id)) for res in result.dcs]
    else:  # components and suspects span all DCs
        result.written = table.num_rows
    _share_output_time(result, time.perf_counter() - t, written)
    monitor.advance(table.num_rows)
    if out_path is not None:
        run.pending = TableWriter(out_path, SCHEMAS[output])
        for batch in table.to_batches():
            run.pending.write(batch)
    else:
        result._rows = table
    return result


def _frames_output(
    run: _Run,
    monitor: Monitor,
    session: Session,
    result: Result,
    output: str,
    out_path: str | None,
    limit: int | None,
    schema: pa.Schema,
    sort: bool = False,
) -> Result:
    """Pairs or blocks of an engine that gives them as distributed frames
    (Spark): written by its workers with ``out``, else collected once."""
    from facet.engine.spark.outputs import dc_frame, write_frames

    t = time.perf_counter()
    frames = [dc_frame(session, i, output, limit, sort) for i in range(len(result.dcs))]
    written = [0] * len(frames)

    def advance(i: int, rows: int) -> None:
        written[i] += rows
        monitor.advance(rows if output == "pairs" else 0, i)

    if out_path is not None:
        run.pending = TableWriter(out_path, schema)
        write_frames(frames, out_path, schema, run.pending.write, advance, monitor.dc_started)
    else:
        table = frames[0]
        for f in frames[1:]:
            table = table.unionByName(f)
        got = table.toArrow()
        got = pa.Table.from_batches(
            [pa.RecordBatch.from_arrays([b.column(n).cast(f.type) for n, f in
                                         zip(schema.names, schema, strict=True)], schema=schema)
             for b in got.to_batches()],
            schema=schema,
        )  # fmt: skip
        dcs = got.column("dc").to_numpy()
        for i in range(len(frames)):
            written[i] = int((dcs == i).sum())
        if output == "pairs":
            result._pairs = got
        else:
            result._blocks = got
        result._frame = table
    _share_output_time(result, time.perf_counter() - t, written)
    return result


def _share_output_time(result: Result, seconds: float, written: list[int] | None) -> None:
    """An output's time split evenly over the DCs' seconds, and each DC's rows
    written (``None``: the output has no per-DC rows)."""
    for i, res in enumerate(result.dcs):
        res.seconds += seconds / max(len(result.dcs), 1)
        if written is not None:
            res.written = written[i]


#: what an ordered column of CSV text compares as, with values it then holds equal
_AS_ORDERED = {
    False: ("numbers", "5 and 5.0, 01907 and 1907"),
    True: ("timestamps", "2024-01-31 and 2024-01-31T00:00"),
}


def reinterpretation_warnings(
    dcs: list[DC],
    kinds: Mapping[str, str],
    ordered: Mapping[str, bool],
    from_text: bool,
    where: Any = None,
) -> list[str]:
    """docs/semantics.md §4.3: warn when one DC's order predicate turns another
    DC's =/!= column of CSV text numeric (``kinds``: each column's type,
    ``ordered``: whether its component is ordered; ``where``: a parsed ``--where``,
    whose comparisons order columns too).  One warning per cause (what orders
    the columns, and what they compare as), naming its columns and the DCs that
    compare them with =/!= only."""
    if not from_text:
        return []

    def order_columns(group: list[DC]) -> set[str]:
        return {c.name for d in group for p in d.predicates if p.is_order for c in p.columns()}

    by_dcs = order_columns(dcs)
    by_where = set() if where is None else order_columns(where.dcs()) - by_dcs
    #: (why, as timestamps?) -> (its columns, its DCs), in the order first met
    causes: dict[tuple[str, bool], tuple[dict[str, None], dict[int, DC]]] = {}
    for i, dc in enumerate(dcs):
        ordered_here = order_columns([dc])
        for p in dc.predicates:
            if p.is_order:
                continue
            for c in p.columns():
                if (
                    c.name in ordered_here
                    or not ordered.get(c.name)
                    or kinds.get(c.name) not in ("int", "float", "timestamp")
                ):
                    continue
                if c.name in by_dcs:  # (ordered in another DC: not in this one)
                    why = "another DC orders {it}"
                elif c.name in by_where:
                    why = "--where orders {it}"
                else:  # its type came along a column-to-column predicate
                    why = "a column {it} {is} compared with is ordered"
                columns, found = causes.setdefault((why, kinds[c.name] == "timestamp"), ({}, {}))
                columns[c.name] = None
                found[dc.id if dc.id is not None else i] = dc
    return [
        _reinterpretation(list(columns), found, why, timestamps)
        for (why, timestamps), (columns, found) in causes.items()
    ]


def _reinterpretation(columns: list[str], found: dict[int, DC], why: str, timestamps: bool) -> str:
    """One cause's warning: ``file:line: column 'c' compares as numbers here
    because ...`` for one column of one DC, else its columns and ``(DCs 1, 3-5)``."""
    what, alike = _AS_ORDERED[timestamps]
    one = len(columns) == 1
    shown = ", ".join(f"'{c}'" for c in columns[:_NAMED])
    if len(columns) > _NAMED:
        shown += f" and {len(columns) - _NAMED} more"
    subject = f"column {shown} compares" if one else f"columns {shown} compare"
    why = why.format(it="it" if one else "them", **{"is": "is" if one else "are"})
    text = (
        f"as {what} because {why} with < <= > >=; values that differ as text but not as "
        f"{what} ({alike}) count as equal"
    )
    if len(found) == 1:
        (dc,) = found.values()
        return f"{dc.where()}: {subject} {text.replace('because', 'here because', 1)}"
    sources = {dc.source for dc in found.values()}
    (source,) = sources if len(sources) == 1 else (None,)
    prefix = "" if source is None else f"{source}: "
    return f"{prefix}{subject} {text} (DCs {_id_ranges(sorted(found))})"


#: columns a warning names at most
_NAMED = 12


def _id_ranges(ids: list[int]) -> str:
    """``0, 2-5, 9``: sorted ids, runs of three or more as ranges."""
    out: list[str] = []
    k = 0
    while k < len(ids):
        j = k
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.extend([f"{ids[k]}-{ids[j]}"] if j - k >= 2 else map(str, ids[k : j + 1]))
        k = j + 1
    return ", ".join(out)
