"""The Python API: ``facet.detect(data, rules, ...)`` (DESIGN §5).

Data flows one way: source -> Arrow -> :class:`EncodedTable` -> plan ->
engine -> sinks -> :class:`Result` (DESIGN §3).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from facet.column_types import analyze, parse_schema
from facet.encoding import EncodedTable, encode
from facet.engine.local import Degrees, LocalEngine
from facet.engine.warmup import warmup
from facet.errors import FacetInputError
from facet.groups import Groups
from facet.kernels.expand import sides_to_lists
from facet.language.ast import DC
from facet.language.normalize import NormalDC, normalize
from facet.language.parser import parse_dc, parse_rules, read_rules
from facet.loading import load
from facet.planner.config import DEFAULT, Config
from facet.planner.plan import Plan, plan_dc
from facet.result import BLOCK_SCHEMA, PAIR_SCHEMA, DCResult, Result
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


class Session:
    """Encoded data + plans of one run; expands pairs and blocks on demand."""

    def __init__(self, enc: EncodedTable, dcs: list[DC], config: Config = DEFAULT) -> None:
        self.enc = enc
        self.dcs = dcs
        self.engine = LocalEngine(enc, config)
        self.normal: list[NormalDC] = [normalize(d) for d in dcs]
        self.plans: list[Plan | None] = [
            plan_dc(nd, config) if nd.arity == 2 else None for nd in self.normal
        ]

    # -- counts
    def count(self, i: int) -> tuple[int, int]:
        nd, plan = self.normal[i], self.plans[i]
        if plan is None:
            rows = self.engine.single_rows(nd)
            return len(rows), len(rows)
        deg: Degrees = self.engine.count(plan)
        return deg.violations, deg.rows_involved

    # -- pairs
    def dc_pairs(self, i: int, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        """Pairs of DC ``i`` as ``(dc, t1, t2)`` batches, at most ``limit``."""
        left = limit
        plan = self.plans[i]
        if plan is None:
            rows = self.engine.single_rows(self.normal[i])
            chunks: Iterable[tuple[np.ndarray, np.ndarray | None]] = [
                (rows[s : s + (1 << 20)], None) for s in range(0, len(rows), 1 << 20)
            ]
        else:
            chunks = self.engine.iter_pairs(plan)
        for t1, t2 in chunks:
            if left is not None:
                if left <= 0:
                    return
                if len(t1) > left:
                    t1 = t1[:left]
                    t2 = None if t2 is None else t2[:left]
                left -= len(t1)
            yield _pair_batch(i, t1, t2)

    def iter_pairs(self, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        for i in range(len(self.dcs)):
            yield from self.dc_pairs(i, limit)

    # -- blocks
    def dc_blocks(self, i: int, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        plan = self.plans[i]
        if plan is None:
            rows = self.engine.single_rows(self.normal[i])
            if len(rows) and (limit is None or limit > 0):
                t1 = pa.ListArray.from_arrays(
                    pa.array([0, len(rows)], pa.int32()), pa.array(rows, pa.int64())
                )
                t2 = pa.nulls(1, pa.list_(pa.int64()))
                yield pa.RecordBatch.from_arrays(
                    [pa.array([i], pa.int64()), pa.array([0], pa.int64()), t1, t2],
                    schema=BLOCK_SCHEMA,
                )
            return
        block = 0
        for groups in self.engine.iter_blocks(plan):
            if len(groups) == 0:
                continue
            if limit is not None:
                if block >= limit:
                    return
                if block + len(groups) > limit:
                    groups = Groups(groups.buf, groups.desc[: limit - block])
            yield _block_batch(i, block, groups)
            block += len(groups)

    def iter_blocks(self, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        for i in range(len(self.dcs)):
            yield from self.dc_blocks(i, limit)


def _pair_batch(dc: int, t1: np.ndarray, t2: np.ndarray | None) -> pa.RecordBatch:
    n = len(t1)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(np.full(n, dc, np.int64)),
            pa.array(t1.astype(np.int64, copy=False)),
            pa.nulls(n, pa.int64()) if t2 is None else pa.array(t2.astype(np.int64, copy=False)),
        ],
        schema=PAIR_SCHEMA,
    )


def _block_batch(dc: int, first: int, groups: Groups) -> pa.RecordBatch:
    k = len(groups)
    lo, lv = sides_to_lists(groups.buf, groups.desc, 0)
    ro, rv = sides_to_lists(groups.buf, groups.desc, 4)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(np.full(k, dc, np.int64)),
            pa.array(np.arange(first, first + k, dtype=np.int64)),
            pa.LargeListArray.from_arrays(pa.array(lo), pa.array(lv)).cast(pa.list_(pa.int64())),
            pa.LargeListArray.from_arrays(pa.array(ro), pa.array(rv)).cast(pa.list_(pa.int64())),
        ],
        schema=BLOCK_SCHEMA,
    )


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
) -> Result:
    """Find every violation of the DCs in ``data``.

    ``data``: a CSV / Parquet / Arrow IPC path, or a pyarrow, pandas or Polars
    table.  ``rules``: a rules file path, rules text, or a list of DC strings.
    ``output``: ``"count"`` (counts only), ``"pairs"`` or ``"blocks"``; with
    ``out`` those stream to a Parquet/CSV/Arrow file, otherwise they are kept
    in the result (``result.pairs()`` / ``result.blocks()``).  ``limit`` caps
    pairs (blocks) per DC.  ``schema``: ``"col:type,..."`` overriding CSV typing.
    ``config``: planning/execution thresholds (:class:`facet.planner.config.Config`).
    """
    if output not in OUTPUTS:
        raise FacetInputError(f"unknown output '{output}'; use one of {', '.join(OUTPUTS)}")
    if limit is not None and limit < 0:
        raise FacetInputError(f"--limit must be >= 0, got {limit}")
    out_path = None if out is None else os.fspath(out)
    if out_path is not None:
        out_format(out_path, allow_json=output == "count")
    dc_list = load_dcs(rules, dcs)
    schema_map = parse_schema(schema)
    use = analyze(dc_list)
    t0 = time.perf_counter()
    source = load(data, columns=use.columns + [c for c in schema_map if c not in use.columns])
    load_seconds = time.perf_counter() - t0
    warm = warmup()
    t1 = time.perf_counter()
    enc = encode(source, use, schema_map)
    warnings = list(enc.warnings) + _reinterpretation_warnings(dc_list, enc)
    for w in warnings:
        if on_warning is not None:
            on_warning(w)
    session = Session(enc, dc_list, config or DEFAULT)
    shared = (time.perf_counter() - t1) / len(dc_list)
    results: list[DCResult] = []
    for i, dc in enumerate(dc_list):
        t = time.perf_counter()
        v, r = session.count(i)
        results.append(
            DCResult(
                dc.id if dc.id is not None else i,
                dc.name,
                dc.body(),
                v,
                r,
                time.perf_counter() - t + shared,
                arity=session.normal[i].arity,
            )
        )
    result = Result(
        rows=enc.n,
        dcs=results,
        source=source.name,
        load_seconds=load_seconds,
        warmup_seconds=warm,
        output=output,
        out=out_path,
        warnings=warnings,
        _session=session,
    )
    if output == "count":
        if out_path is not None:
            _write_counts(result, out_path)
        return result
    schema_out = PAIR_SCHEMA if output == "pairs" else BLOCK_SCHEMA
    produce = session.dc_pairs if output == "pairs" else session.dc_blocks
    writer = TableWriter(out_path, schema_out) if out_path is not None else None
    kept: list[pa.RecordBatch] = []
    try:
        for i, res in enumerate(results):
            t = time.perf_counter()
            written = 0
            for batch in produce(i, limit):
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
        Path(tmp).write_text(json.dumps(result.to_dict(), indent=2) + "\n")
        os.replace(tmp, path)
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
    """DESIGN §1: warn when one DC's order predicate turns another DC's =/!= column numeric."""
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
                        "text that differs but parses equal (01907 vs 1907) counts as equal"
                    )
    return out
