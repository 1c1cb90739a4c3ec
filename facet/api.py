"""The Python API: ``facet.detect(data, rules, ...)`` and ``facet.explain``
(docs/semantics.md §7).

Data flows one way: source -> Arrow -> :class:`EncodedTable` -> plan ->
engine -> sinks -> :class:`Result` (docs/architecture.md).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from facet.column_types import analyze, parse_schema
from facet.encoding import EncodedTable, encode
from facet.engine import ENGINES, create_engine
from facet.engine.multi import MODES, count_all, shared_groups
from facet.engine.session import Session
from facet.engine.warmup import warmup
from facet.errors import FacetInputError
from facet.language.ast import DC
from facet.language.parser import parse_dc, parse_rules, read_rules
from facet.loading import load
from facet.planner.config import DEFAULT, Config
from facet.planner.explain import plan_record, with_actuals
from facet.result import DCResult, Result
from facet.sinks.arrow import BLOCK_SCHEMA, PAIR_SCHEMA
from facet.sinks.files import TableWriter, out_format

OUTPUTS = ("count", "pairs", "blocks")
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


def open_session(
    data: Any,
    rules: RulesLike = None,
    *,
    dcs: Iterable[str | DC] | None = None,
    schema: str | dict[str, str] | None = None,
    on_warning: Callable[[str], None] | None = None,
    config: Config | None = None,
    engine: str = "local",
) -> Opened:
    """Parse the DCs, load the columns they use, type and encode them, and
    open a session on the engine."""
    if engine not in ENGINES:
        raise FacetInputError(f"unknown engine '{engine}'; use one of {', '.join(ENGINES)}")
    config = config or DEFAULT
    dc_list = load_dcs(rules, dcs)
    schema_map = parse_schema(schema)
    use = analyze(dc_list)
    t0 = time.perf_counter()
    source = load(data, columns=use.columns + [c for c in schema_map if c not in use.columns])
    load_seconds = time.perf_counter() - t0
    warm = warmup()
    t1 = time.perf_counter()
    enc = encode(source, use, schema_map, config)
    warnings = list(enc.warnings) + _reinterpretation_warnings(dc_list, enc)
    for w in warnings:
        if on_warning is not None:
            on_warning(w)
    session = Session(create_engine(engine, enc, config), dc_list)
    return Opened(session, source.name, load_seconds, warm, time.perf_counter() - t1, warnings)


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
) -> dict[str, Any]:
    """The plan of every DC (``facet explain``): stages, algorithms, storage,
    estimates; with ``analyze=True`` it runs them and adds what actually ran
    (sizes, seconds, storage)."""
    if output not in OUTPUTS:
        raise FacetInputError(f"unknown output '{output}'; use one of {', '.join(OUTPUTS)}")
    opened = open_session(
        data, rules, dcs=dcs, schema=schema, on_warning=on_warning, config=config, engine=engine
    )
    session = opened.session
    session.estimates = True
    records = []
    for i, dc in enumerate(session.dcs):
        t = time.perf_counter()
        plan = session.plan(i, output)
        rec = plan_record(
            dc.id if dc.id is not None else i,
            dc.name,
            dc.body(),
            session.normal[i],
            plan,
            output,
            session.config.nested_pairs,
            time.perf_counter() - t,
        )
        if analyze:
            rec = with_actuals(rec, session.analyze(i, output))
        records.append(rec)
    return {
        "rows": session.rows,
        "engine": engine,
        "source": opened.source,
        "output": output,
        "analyze": analyze,
        "dcs": records,
        "warnings": opened.warnings,
    }


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
) -> Result:
    """Find every violation of the DCs in ``data``.

    ``data``: a CSV / Parquet / Arrow IPC path, or a pyarrow, pandas or Polars
    table.  ``rules``: a rules file path, rules text, or a list of DC strings.
    ``output``: ``"count"`` (counts only), ``"pairs"`` or ``"blocks"``; with
    ``out`` those stream to a Parquet/CSV/Arrow file, otherwise they are kept
    in the result (``result.pairs()`` / ``result.blocks()``).  ``limit`` caps
    pairs (blocks) per DC.  ``schema``: ``"col:type,..."`` overriding CSV typing.
    ``config``: planning/execution thresholds (:class:`facet.planner.config.Config`).
    ``mode``: how many DCs run -- ``sequential``, ``parallel``, ``cost-trie`` or
    ``freq-trie`` (shared refinement prefixes); every mode gives the same answers.
    ``engine``: ``"local"`` (this machine, all cores).
    """
    if output not in OUTPUTS:
        raise FacetInputError(f"unknown output '{output}'; use one of {', '.join(OUTPUTS)}")
    if limit is not None and limit < 0:
        raise FacetInputError(f"--limit must be >= 0, got {limit}")
    out_path = None if out is None else os.fspath(out)
    if out_path is not None:
        out_format(out_path, allow_json=output == "count")
    if mode not in MODES:
        raise FacetInputError(f"unknown mode '{mode}'; use one of {', '.join(MODES)}")
    opened = open_session(
        data, rules, dcs=dcs, schema=schema, on_warning=on_warning, config=config, engine=engine
    )
    session, dc_list = opened.session, opened.session.dcs
    shared = opened.encode_seconds / len(dc_list)
    counts = count_all(session, mode)
    results = [
        DCResult(
            dc.id if dc.id is not None else i,
            dc.name,
            dc.body(),
            v,
            r,
            seconds + shared,
            arity=session.normal[i].arity,
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
        engine=engine,
        _session=session,
    )
    if output == "count":
        if out_path is not None:
            _write_counts(result, out_path)
        return result
    session.limit = limit
    schema_out = PAIR_SCHEMA if output == "pairs" else BLOCK_SCHEMA
    produce = session.dc_pairs if output == "pairs" else session.dc_blocks
    finals, shared_out = shared_groups(session, mode, output)
    writer: TableWriter | None = None
    kept: list[pa.RecordBatch] = []
    try:
        if out_path is not None:
            writer = TableWriter(out_path, schema_out)
        for i, res in enumerate(results):
            t = time.perf_counter()
            written = 0
            res.seconds += shared_out.get(i, 0.0)
            for batch in produce(i, limit, finals.get(i)):
                written += batch.num_rows
                if writer is not None:
                    writer.write(batch)
                else:
                    kept.append(batch)
            res.written = written
            res.seconds += time.perf_counter() - t
        if writer is not None:
            writer.close()
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    if writer is None:
        table = pa.Table.from_batches(kept, schema=schema_out)
        if output == "pairs":
            result._pairs = table
        else:
            result._blocks = table
    return result


def _write_counts(result: Result, path: str) -> None:
    import json

    fmt = out_format(path, allow_json=True)
    if fmt == "json":
        tmp = path + ".part"
        try:
            Path(tmp).write_text(json.dumps(result.to_dict(), indent=2) + "\n")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return
    schema = pa.schema(
        [
            ("dc", pa.int64()),
            ("name", pa.string()),
            ("text", pa.string()),
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
            pa.array([d.seconds for d in result.dcs], pa.float64()),
        ],
        schema=schema,
    )
    w = TableWriter(path, schema)
    try:
        w.write(batch)
        w.close()
    except BaseException:
        w.abort()
        raise


def _reinterpretation_warnings(dcs: list[DC], enc: EncodedTable) -> list[str]:
    """docs/semantics.md §4.3: warn when one DC's order predicate turns another DC's =/!= column numeric."""
    out: list[str] = []
    seen: set[str] = set()
    for dc in dcs:
        ordered_here: set[str] = set()
        for p in dc.predicates:
            if p.is_order:
                ordered_here.update(c.name for c in p.columns())
        for p in dc.predicates:
            if p.is_order:
                continue
            for c in p.columns():
                if (
                    c.name not in ordered_here
                    and enc.ordered.get(c.name)
                    and enc.kinds.get(c.name) in ("int", "float", "timestamp")
                    and c.name not in seen
                    and enc.from_text
                ):
                    seen.add(c.name)
                    out.append(
                        f"{dc.where()}: column '{c.name}' compares as "
                        f"{'numbers' if enc.kinds[c.name] != 'timestamp' else 'timestamps'} "
                        "here because another DC orders it with < <= > >=; "
                        "values that differ as text but not as numbers (5 and 5.0, 01907 and 1907) count as equal"
                    )
    return out
