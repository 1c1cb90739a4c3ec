"""Detection results: per-DC counts, JSON (docs/semantics.md §7) and the text table."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from facet.sinks.arrow import BLOCK_SCHEMA, PAIR_SCHEMA


@dataclass
class DCResult:
    """One DC's answer: ordered violating pairs (rows, for a single-tuple DC)."""

    id: int
    name: str | None
    dc: str
    violations: int
    rows_involved: int
    seconds: float
    arity: int = 2
    #: pairs (or blocks) written/kept for this DC when the output asked for them
    written: int | None = None
    #: how a distributed engine spread this DC's pairs (docs/semantics.md §7)
    work: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "dc": self.dc,
            "violations": self.violations,
            "rows_involved": self.rows_involved,
            "seconds": round(self.seconds, 6),
        }
        if self.arity == 1:
            d["single_tuple"] = True
        if self.written is not None:
            d["written"] = self.written
        if self.work:
            d["work"] = self.work
        return d


@dataclass
class Result:
    """What :func:`facet.detect` returns; ``to_dict()`` is the CLI's JSON."""

    rows: int
    dcs: list[DCResult]
    source: str
    load_seconds: float
    warmup_seconds: float
    output: str = "count"
    engine: str = "local"
    mode: str = "sequential"
    out: str | None = None
    warnings: list[str] = field(default_factory=list)
    #: a scoped run's ``--where`` and the rows it selects (None: the whole table)
    where: str | None = None
    scope_rows: int | None = None
    _pairs: pa.Table | None = None
    _blocks: pa.Table | None = None
    _session: Any = None
    #: the Spark engine's pairs or blocks as a Spark DataFrame (no ``out``)
    _frame: Any = None
    #: ``tuples``, ``cells`` or ``components`` kept (no ``out``)
    _rows: pa.Table | None = None
    #: rows of a ``components`` or ``suspects`` output, which span every DC (the
    #: per-DC outputs count theirs in each DC's ``written``)
    written: int | None = None

    @property
    def total_violations(self) -> int:
        return sum(d.violations for d in self.dcs)

    def __getitem__(self, i: int) -> DCResult:
        return self.dcs[i]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "rows": self.rows,
            "engine": self.engine,
            "source": self.source,
            "output": self.output,
            "mode": self.mode,
            "load_seconds": round(self.load_seconds, 6),
            "warmup_seconds": round(self.warmup_seconds, 6),
            **({} if self.where is None else {"where": self.where, "scope_rows": self.scope_rows}),
            "total_violations": self.total_violations,
            "dcs": [x.to_dict() for x in self.dcs],
            "warnings": list(self.warnings),
        }
        if self.written is not None:
            d["written"] = self.written
        if self.out is not None:
            d["out"] = self.out
        return d

    # --------------------------------------------------------------- pairs / blocks

    def _row_output(self, output: str) -> pa.Table:
        if self._rows is not None and self.output == output:
            return self._rows
        if self._session is None:
            raise RuntimeError("this result holds no data to compute rows from")
        return self._session.row_output(output, [d.violations for d in self.dcs])

    def tuples(self) -> pa.Table:
        """``(tid, dc, pairs, partners)``: every row in a violation, per DC
        (docs/outputs.md); computed from the run's session when not kept."""
        return self._row_output("tuples")

    def cells(self) -> pa.Table:
        """``(tid, column, dc, violations)``: violations per cell, per DC."""
        return self._row_output("cells")

    def components(self) -> pa.Table:
        """``(tid, component, size)``: the conflict graph's connected components."""
        return self._row_output("components")

    def suspects(self) -> pa.Table:
        """``(tid, column, score, rank)``: the cells a greedy cover of the
        violations takes, likeliest wrong first (docs/outputs.md)."""
        return self._row_output("suspects")

    def to_html(self, path: str | os.PathLike, data: Any = None, **kw: Any) -> None:
        """Write the HTML report of this run to ``path`` (docs/report.md): one
        offline file; ``data``: the table to show (default: ``source`` read again)."""
        from facet.sinks.html import write_report

        write_report(self, path, data, **kw)

    def frame(self) -> Any:
        """On the Spark engine, the pairs ``(dc, t1, t2)`` or blocks ``(dc,
        block, t1, t2)`` as a Spark DataFrame (lazy: acting on it runs the
        tasks again), for Spark pipelines that go on from the violations."""
        if self._frame is None:
            raise RuntimeError(
                "frame() needs a run on the Spark engine with output pairs or blocks and no out"
            )
        return self._frame

    def iter_pairs(self, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        """Violating pairs as Arrow batches ``(dc, t1, t2)`` (``t2`` NULL for
        single-tuple DCs); ``limit`` is per DC."""
        if self._pairs is not None and limit is None:
            yield from self._pairs.to_batches()
            return
        if self._session is None:
            raise RuntimeError("this result holds no data to expand pairs from")
        yield from self._session.iter_pairs(limit=limit)

    def pairs(self, limit: int | None = None) -> pa.Table:
        """All violating pairs as one Arrow table."""
        if self._pairs is not None and limit is None:
            return self._pairs
        return pa.Table.from_batches(list(self.iter_pairs(limit)), schema=PAIR_SCHEMA)

    def iter_blocks(self, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        """The compact pairs of tid sets ``(dc, block, t1, t2)``: each block stands
        for every ``(a, b)`` with ``a`` in ``t1``, ``b`` in ``t2``, ``a != b``."""
        if self._blocks is not None and limit is None:
            yield from self._blocks.to_batches()
            return
        if self._session is None:
            raise RuntimeError("this result holds no data to build blocks from")
        yield from self._session.iter_blocks(limit=limit)

    def blocks(self, limit: int | None = None) -> pa.Table:
        if self._blocks is not None and limit is None:
            return self._blocks
        return pa.Table.from_batches(list(self.iter_blocks(limit)), schema=BLOCK_SCHEMA)

    def sort_output(self) -> None:
        """Put the pairs (blocks) this result keeps in ``sort=True``'s order
        (:mod:`facet.sinks.ordering`): by ``(dc, t1, t2)``, blocks by their sorted
        tid lists."""
        from facet.sinks.ordering import sort_kept

        if self.output == "pairs":
            self._pairs = sort_kept(self.pairs(), "pairs", self.rows)
        elif self.output == "blocks":
            self._blocks = sort_kept(self.blocks(), "blocks", self.rows)

    # --------------------------------------------------------------- text

    def to_text(self) -> str:
        head = (
            f"{self.source}: {self.rows:,} row{'s' if self.rows != 1 else ''}, {len(self.dcs)} DC"
            f"{'s' if len(self.dcs) != 1 else ''}, {self.total_violations:,} violation"
            f"{'s' if self.total_violations != 1 else ''} "
            f"(load {self.load_seconds:.2f} s)"
        )
        rows = [("id", "name", "violations", "rows", "seconds", "dc")]
        for d in self.dcs:
            v = f"{d.violations:,}" + (" rows" if d.arity == 1 else "")
            rows.append(
                (str(d.id), d.name or "-", v, f"{d.rows_involved:,}", f"{d.seconds:.3f}", d.dc)
            )
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = [head, ""]
        for j, r in enumerate(rows):
            cells = [
                r[0].rjust(widths[0]),
                r[1].ljust(widths[1]),
                r[2].rjust(widths[2]),
                r[3].rjust(widths[3]),
                r[4].rjust(widths[4]),
                r[5],
            ]
            lines.append("  ".join(cells).rstrip())
            if j == 0:
                lines.append("  ".join("-" * w for w in widths) + "  --")
        if self.out is not None:
            lines.append("")
            lines.append(f"{self.output} written to {self.out}")
        return "\n".join(lines)
