"""Incremental detection: the violations each appended batch brings (docs/semantics.md §11).

The Batchwise paper (Berti-Équille et al.) cleans data batch by batch; facet's part is
detection.  A :class:`Detector` holds the table and its DCs; ``append(batch)`` reports the
violations that hold at least one row of the batch -- the initial pairs ``(B, all)`` and
``(old, B)`` of §8, run by the same pipeline as a whole-table run -- with the same result
shape as :func:`facet.detect` (counts, rows involved, every output), and keeps running
totals.  The base run plus every append's violations are the whole table's, exactly.

Types are fixed by the first table (and ``schema``): a CSV column typed as text or as a
time stays so; a numeric column may widen from int64 to float64 once a batch brings a
fraction (ints and floats compare by exact value, so no earlier answer changes), and that
append's result says so -- unless it holds a whole number float64 would round (the batch
is refused).  A batch without a column the DCs use, of another kind (CSV text
against a typed table) or with a column that does not convert to the table's type exactly
is refused with :class:`~facet.errors.FacetInputError` and changes nothing.

An append types and encodes the batch only: the detector keeps the table's encoding and
extends its dictionaries (:mod:`facet.encoding_append`); when a batch changes a column's
typing (an int column meeting a fraction) or a component cannot be extended exactly, the
whole table is encoded again.  Keys and FDs are counted from per-key tallies
(:mod:`facet.key_tallies`) and DCs of two inequalities from dominance indexes
(:mod:`facet.dominance_index`), both kept between appends, so their count-only appends run
no engine.  bench/results/scoped.md measures appends against a full run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import facet.dominance_index as dominance_index
import facet.key_tallies as key_tallies
from facet.api import (
    Opened,
    RulesLike,
    load_dcs,
    open_local,
    reinterpretation_warnings,
    run_detection,
)
from facet.append_widening import first_change
from facet.column_types import TextColumn, analyze, native_kind, parse_schema
from facet.encoding import EncodedTable, one_array, unknown_column
from facet.encoding_append import AppendState, extend, prepare
from facet.errors import FacetInputError
from facet.language.ast import DC
from facet.language.errors import warn
from facet.language.normalize import normalize
from facet.language.where import parse_where
from facet.loading import Source, load
from facet.planner.config import Config, config_or_default
from facet.progress import Monitor, ProgressCallback
from facet.result import DCResult, Result
from facet.scope_columns import ScopeColumns, where_columns


class Detector:
    """Detection over a table that grows by batches (local engine).

    >>> det = Detector("base.csv", "rules.txt")       # doctest: +SKIP
    >>> det.initial.total_violations                   # the base table's run
    >>> res = det.append("batch.csv")                  # violations holding a new row
    >>> det.totals()                                   # running totals per DC

    ``delimiter``: CSV files' delimiter, the table's and every batch's (None: each
    sniffed from its header, as :func:`facet.detect` does).
    """

    def __init__(
        self,
        data: Any,
        rules: RulesLike = None,
        *,
        dcs: Iterable[str | DC] | None = None,
        schema: str | dict[str, str] | None = None,
        config: Config | None = None,
        mode: str = "sequential",
        on_warning: Any = None,
        output: str = "count",
        where_columns: Iterable[str] = (),
        progress: ProgressCallback | None = None,
        delimiter: str | None = None,
    ) -> None:
        self.dcs = load_dcs(rules, dcs)
        self.config = config_or_default(config)
        self.mode = mode
        self._on_warning = on_warning if on_warning is not None else warn
        self._schema = parse_schema(schema)
        self._use = analyze(self.dcs)
        self._columns = self._use.columns + [c for c in self._schema if c not in self._use.columns]
        self._columns += [c for c in dict.fromkeys(where_columns) if c not in self._columns]
        start = time.perf_counter()
        #: CSV files' delimiter, the table's and every batch's (None: sniffed from each)
        self._delimiter = delimiter
        source = load(data, self._columns, delimiter)
        self._load_seconds = time.perf_counter() - start
        for c in where_columns:
            if c not in source.all_columns:
                raise unknown_column(c, source, "where_columns")
        self._all_columns = list(source.all_columns)
        self._name = source.name
        self._text = source.text
        for col in self._columns:
            if col not in source.all_columns:
                break  # encode() reports it against the DC that uses it
        else:
            source = Source(
                source.table.select(self._columns), source.name, source.text,
                list(self._columns), source.num_rows,
            )  # fmt: skip
        self._kinds: dict[str, str] = {}
        self._untyped: set[str] = set()
        self._enc: EncodedTable | None = None
        self._state = AppendState()
        self.initial = self._run(source, None, output, None, None, progress, None)
        self._table = source.table
        self._untyped = self._without_values(self._table, None)
        self._state = self._prepare()
        self._shapes = [self._counter(normalize(dc)) for dc in self.dcs]
        self._tallies = self._build_tallies()
        self._batches = 0
        self._totals = [d.violations for d in self.initial.dcs]
        self._scopes = ScopeColumns(self._text)
        self._scopes.keep(self._table, [c for c in where_columns if c not in self._use.columns])

    # ------------------------------------------------------------------ appending
    @property
    def rows(self) -> int:
        """Rows of the table so far (tids ``0 .. rows - 1``, in arrival order)."""
        return self._table.num_rows

    def append(
        self,
        batch: Any,
        *,
        output: str = "count",
        out: str | os.PathLike | None = None,
        limit: int | None = None,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> Result:
        """Add ``batch`` (a path or a table, like :func:`facet.detect`'s data) and
        return the violations holding at least one of its rows (their tids follow
        the table's).  On any error the detector is left as it was."""
        start = time.perf_counter()
        loaded = load(batch, self._columns, self._delimiter)
        self._load_seconds = time.perf_counter() - start
        missing = [c for c in self._columns if c not in loaded.all_columns]
        if missing:
            raise FacetInputError(
                f"{loaded.name}: the batch has no column {', '.join(map(repr, missing))}; "
                f"a batch needs the columns the DCs use (and the detector's where_columns), "
                f"as {self._name} has them"
            )
        if loaded.text != self._text:
            have, want = ("CSV text", "typed") if loaded.text else ("typed", "CSV text")
            raise FacetInputError(
                f"{loaded.name}: the batch is {have} but the detector's table is {want}; "
                "append batches of the same kind as the first table"
            )
        part = loaded.table.select(self._columns)
        table = self._table  # (a typed column without a value takes the batch's type)
        if not self._text:
            table, part = self._conform(part, loaded.name)
        elif part.schema != self._table.schema:
            part = part.cast(self._table.schema)  # text columns: string layouts only
        if self._text:
            self._refuse_changing_widening(part, loaded.name)
        combined = pa.concat_tables([table, part])
        n_old = table.num_rows
        scope = np.zeros(combined.num_rows, np.bool_)
        scope[n_old:] = True
        earlier = f" + {self._batches} earlier batch{'es' if self._batches > 1 else ''}"
        name = f"{self._name}{earlier if self._batches else ''} + {loaded.name}"
        extended = None
        t0 = time.perf_counter()
        if self._enc is not None and self.config.append_extends:
            cols = list(self._columns)
            batch_source = Source(part, loaded.name, self._text, cols, part.num_rows)
            extended = extend(
                self._enc, self._state, table, batch_source, self._use,
                self._batch_schema(), self.config,
            )  # fmt: skip
        source = Source(combined, name, self._text, list(self._columns), combined.num_rows)
        out_path = None if out is None else os.fspath(out)
        encoded, state = extended if extended is not None else (None, None)
        tallied = None
        if encoded is not None and self._tallies is not None:
            tallied = []
            for s, t in zip(self._shapes, self._tallies, strict=True):
                t = None if t is None else s[0].moved(t, encoded, state.remaps)
                tallied.append(None if t is None else s[0].count_batch(t, encoded, n_old))
        if output == "count" and out_path is None and tallied and any(tallied):
            seconds = time.perf_counter() - t0
            rest = [dc for dc, t in zip(self.dcs, tallied, strict=True) if t is None]
            sub = None
            if rest:  # the DCs without tallies: a scoped run of their own
                sub = self._run(
                    source, scope, output, None, limit, progress, timeout, encoded, rest
                )
            result = self._tallied_result(tallied, encoded, name, scope, seconds, sub)
        else:
            result = self._run(source, scope, output, out_path, limit, progress, timeout, encoded)
        self._table = combined  # the run succeeded: commit
        self._untyped = self._without_values(part, self._untyped)
        self._scopes = self._scopes.appended(part)
        self._state = state if state is not None else self._prepare()
        self._enc = encoded if encoded is not None else self._enc
        if tallied is not None and all(t is not None for t, s in zip(tallied, self._shapes) if s):
            self._tallies = [None if t is None else t[2] for t in tallied]
        else:
            self._tallies = self._build_tallies()
        self._batches += 1
        self._totals = [t + d.violations for t, d in zip(self._totals, result.dcs, strict=True)]
        return result

    def where(
        self,
        expr: str,
        *,
        output: str = "count",
        out: str | os.PathLike | None = None,
        limit: int | None = None,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> Result:
        """The violations of the table as it stands (the base and every append)
        that hold at least one row satisfying ``expr`` (``--where``'s grammar),
        with :func:`facet.detect`'s result shape: Daisy's setting, a scope asked
        of a table kept encoded (docs/semantics.md §11).  ``expr`` may name the
        DCs' columns and the ``where_columns`` the detector was created with;
        DC columns keep the detector's types, the others are typed by ``expr``
        as ``--where`` types them.  Keys, FDs and DCs of two inequalities are
        counted from the appends' tallies and indexes (the scope against the
        whole table, less the scope against itself), other DCs and outputs by a
        scoped run over the kept encoding; the table is neither encoded again
        nor changed."""
        start = time.perf_counter()
        parsed = parse_where(expr)
        named = where_columns(parsed)
        n = self._table.num_rows
        for c in named:
            if c not in self._columns:
                if c in self._all_columns:
                    raise FacetInputError(
                        f"--where: column '{c}' is not kept by this detector; "
                        f"name it in Detector(..., where_columns=[...]) to scope by it"
                    )
                whole = Source(self._table, self._name, self._text, self._all_columns, n)
                raise unknown_column(c, whole, "--where")
        kinds = {c: k for c, k in self._schema_map().items() if c in named}
        mask, said = self._scopes.mask(
            parsed, self._table, self._name, kinds, self.config, self._use.ordered
        )
        tids = np.flatnonzero(mask)
        for w in said:
            if self._on_warning is not None:
                self._on_warning(w)
        enc = self._enc
        counted = None
        if output == "count" and out is None and enc is not None and self._tallies is not None:
            counted = [
                None if s is None or t is None else s[0].count_scope(t, enc, tids)
                for s, t in zip(self._shapes, self._tallies, strict=True)
            ]
        source = self._source()
        if counted is not None and any(c is not None for c in counted):
            assert enc is not None
            seconds = time.perf_counter() - start
            rest = [dc for dc, c in zip(self.dcs, counted, strict=True) if c is None]
            sub = None
            if rest:
                sub = self._run(source, mask, output, None, limit, progress, timeout, enc, rest)
            result = self._tallied_result(counted, enc, source.name, mask, seconds, sub)
        else:
            out_path = None if out is None else os.fspath(out)
            scoped = (parsed.text, int(tids.shape[0]))
            result = self._run(
                source, mask, output, out_path, limit, progress, timeout, enc, where=scoped
            )
        result.where = parsed.text
        result.scope_rows = int(tids.shape[0])
        result.warnings = said + list(result.warnings)
        return result

    def totals(self) -> dict[str, Any]:
        """Violations per DC of the whole table so far (the base run plus every
        append), the rows and the batches appended."""
        return {
            "rows": self.rows,
            "batches": self._batches,
            "total_violations": sum(self._totals),
            "dcs": [
                {"id": d.id, "name": d.name, "dc": d.dc, "violations": v}
                for d, v in zip(self.initial.dcs, self._totals, strict=True)
            ],
        }

    # ------------------------------------------------------------------ internals
    def _source(self) -> Source:
        """The table so far as a source."""
        n = self._table.num_rows
        return Source(self._table, self._name, self._text, list(self._columns), n)

    def _conform(self, part: pa.Table, name: str) -> tuple[pa.Table, pa.Table]:
        """The table and a typed batch's columns in its types, converted exactly or
        refused (docs/semantics.md §11): of the same kind (numbers, booleans among
        them, with numbers; text with text; dates and timestamps with either; ...),
        a float NaN as NULL, and every value the same number, instant or text in
        the table's type (1.23 into a decimal column, a time of day into a date
        column, 2 into a boolean one: refused).  A column of the table that holds
        no value yet (all NULL, or the null type) takes the type of a batch column
        that holds one: no comparison of its rows holds in any type."""
        table = self._table
        cols = []
        for i, field in enumerate(self._table.schema):
            col = part.column(field.name)
            if col.type != field.type:
                if not _holds_value(col):  # NULL in any type
                    col = pa.chunked_array([pa.nulls(len(col), field.type)], field.type)
                elif field.name in self._untyped:
                    field = field.with_type(col.type)
                    old = pa.nulls(table.num_rows, col.type)
                    table = table.set_column(i, field, pa.chunked_array([old], col.type))
                else:
                    col = _converted(col, field, name)
            cols.append(col)
        return table, pa.table(cols, schema=table.schema)

    def _refuse_changing_widening(self, part: pa.Table, name: str) -> None:
        """A CSV batch that widens int64 columns to float64 (a fraction, or a number
        past int64, in a column of their component) is refused when float64 would
        round a value or a constant so that a comparison already answered changes
        (:func:`facet.append_widening.first_change`): the answers given (exact) would
        disagree with the ones to come, and with one run of the whole table."""
        widened: set[str] = set()
        for comp in self._use.components:
            numbers = [c for c in comp.columns if self._schema.get(c, "number") == "number"]
            old = [c for c in numbers if self._kinds.get(c) == "int" and c not in self._untyped]
            if not old or all(TextColumn(one_array(part.column(c))).integral for c in numbers):
                continue
            widened.update(old)
        if not widened:
            return
        change = first_change(self._table, widened, self._kinds, self.dcs)
        if change is not None:
            cols = sorted(widened, key=self._columns.index)
            names = ", ".join(f"'{x}'" for x in cols)
            floats, ints = (",".join(f"{x}:{k}" for x in cols) for k in ("float", "int"))
            types = "columns' types" if len(cols) > 1 else "column's type"
            raise FacetInputError(
                f"{name}: column{'s' if len(cols) > 1 else ''} {names} would widen from "
                f"int64 to float64 (the batch brings a fraction or a number past int64), "
                f"but an answer already given would change: {change}; give the {types} up "
                f"front (schema {floats} reads every value as float64, {ints} reads "
                "fractions as NULL)"
            )

    def _without_values(self, table: pa.Table, among: set[str] | None) -> set[str]:
        """The columns (``among`` them; ``None``: all) in which ``table`` (the base,
        or a batch after rows without any) holds no value: untyped, they take their
        type from the first batch that brings one (docs/semantics.md §11).  CSV: the
        free columns of an ordered component none of which holds a value; typed:
        a column all NULL (NaN, or the null type)."""
        if not self._text:
            cols = self._columns if among is None else [c for c in self._columns if c in among]
            return {c for c in cols if not _holds_value(table.column(c))}
        out: set[str] = set()
        for comp in self._use.components:
            free = [c for c in comp.columns if c not in self._schema]
            if not comp.ordered or not free or (among is not None and free[0] not in among):
                continue
            if all(table.column(c).null_count == table.num_rows for c in free):
                out.update(free)
        return out

    def _schema_map(self) -> dict[str, str]:
        """The types fixed by the first rows holding a value: their CSV kinds (ints
        as numbers, so a batch's fraction widens them; a column without a value yet
        is left to the next run), then the user's schema."""
        fixed = {
            c: ("number" if k in ("int", "float") else k)
            for c, k in self._kinds.items()
            if c not in self._untyped
        }
        return {**fixed, **self._schema}

    def _counter(self, nd: Any) -> tuple[Any, tuple] | None:
        """How an append counts the DC ``nd`` without a scoped run: the module
        (:mod:`facet.key_tallies` for keys and FDs, :mod:`facet.dominance_index`
        for two inequalities) and its ``build`` arguments; ``None``: a scoped run."""
        if self.config.append_tallies and (s := key_tallies.shape(nd)) is not None:
            return key_tallies, s
        if self.config.append_indexes and (d := dominance_index.shape(nd)) is not None:
            return dominance_index, (d,)
        return None

    def _build_tallies(self) -> list[Any] | None:
        """The per-DC counting state of appends over the whole table (per-key
        tallies, dominance indexes); ``None`` when no DC has such a shape (or
        appends do not extend the encoding)."""
        if self._enc is None or not self.config.append_extends or not any(self._shapes):
            return None
        return [None if s is None else s[0].build(self._enc, *s[1]) for s in self._shapes]

    def _tallied_result(
        self,
        tallied: list,
        enc: EncodedTable,
        name: str,
        scope: np.ndarray,
        seconds: float,
        sub: Result | None,
    ) -> Result:
        """The count report of an append or a scope (``scope``: its rows) whose
        DCs are tallied (``seconds``: typing, encoding and counting the batch or
        scope, shared by the DCs) but for those ``sub`` ran (in order); its rows,
        pairs and blocks are computed on demand by a scoped session of every DC."""
        share = seconds / len(self.dcs)
        ran = iter([] if sub is None else sub.dcs)
        dcs = []
        for i, (dc, t) in enumerate(zip(self.dcs, tallied, strict=True)):
            ident = dc.id if dc.id is not None else i
            if t is None:
                d = next(ran)
                dcs.append(DCResult(ident, dc.name, dc.body(), d.violations, d.rows_involved,
                                    d.seconds, arity=d.arity, work=d.work))  # fmt: skip
            else:
                dcs.append(DCResult(ident, dc.name, dc.body(), t[0], t[1], share))
        if sub is None:  # as a run on this encoding would warn
            warnings = list(enc.warnings) + reinterpretation_warnings(
                self.dcs, enc.kinds, enc.ordered, enc.from_text
            )
            for w in warnings:
                if self._on_warning is not None:
                    self._on_warning(w)
        else:
            warnings = sub.warnings  # reported by its run
        return Result(
            rows=enc.n, dcs=dcs, source=name, load_seconds=self._load_seconds,
            warmup_seconds=0.0 if sub is None else sub.warmup_seconds, output="count",
            mode=self.mode, warnings=warnings, _session=_ScopedSession(self, enc, scope, name),
        )  # fmt: skip

    def _batch_schema(self) -> dict[str, str]:
        """The types a CSV batch is read with to extend the encoding: a column the
        table holds as float64 stays so even when the batch has no fraction (a
        fraction in an int64 column changes the typing: the whole table is encoded
        again)."""
        fixed = {c: ("float" if k == "float" else "number" if k == "int" else k)
                 for c, k in self._kinds.items() if c not in self._untyped}  # fmt: skip
        return {**fixed, **self._schema}

    def _prepare(self) -> AppendState:
        """What the next append needs beyond the encoding (text components' hash
        indexes), built now so that the append costs the batch."""
        if self._enc is None or not self.config.append_extends:
            return AppendState()
        return prepare(self._enc, self._table, self._use, self._schema_map())

    def _run(
        self,
        source: Source,
        scope: np.ndarray | None,
        output: str,
        out_path: str | None,
        limit: int | None,
        progress: ProgressCallback | None,
        timeout: float | None,
        encoded: EncodedTable | None = None,
        dcs: list[DC] | None = None,
        where: tuple[str, int] | None = None,
    ) -> Result:
        """A run over ``source`` limited to ``scope``; ``where`` (the expression
        and its rows) goes into the report, and so into a ``.json`` it writes."""
        opened: list[Opened] = []

        def opener(monitor: Any) -> Opened:
            o = open_local(
                source, self.dcs if dcs is None else dcs, self._use, self._schema_map(), self.config,
                ("count", output), True, monitor, scope=scope, load_seconds=self._load_seconds,
                encoded=encoded,
            )  # fmt: skip
            if where is not None:
                o.where, o.scope_rows = where
            opened.append(o)
            return o

        result = run_detection(opener, output, out_path, limit, self.mode, progress, timeout)
        enc = self._enc = opened[0].enc
        kinds = {c: _column_kind(enc, c) for c in self._use.columns} if enc.from_text else {}
        for c, k in kinds.items():
            if self._kinds.get(c) == "int" and k == "float" and c not in self._untyped:
                result.warnings.append(
                    f"{source.name}: column '{c}' widened from int64 to float64 (a batch "
                    "brought a fraction or a number past int64); earlier answers are "
                    "unchanged (exact comparison)"
                )
        self._kinds = kinds
        for w in result.warnings:
            if self._on_warning is not None:
                self._on_warning(w)
        return result


class _ScopedSession:
    """A tallied append's or scope's session, opened when its result is asked for
    rows, pairs or blocks: the scoped run over the table as it was then."""

    def __init__(self, det: Detector, enc: EncodedTable, scope: np.ndarray, name: str) -> None:
        self._args = (det, enc, scope, name)
        self._session: Any = None

    def __getattr__(self, attr: str) -> Any:
        if self._session is None:
            det, enc, scope, name = self._args
            table = det._table if det._table.num_rows == enc.n else det._table.slice(0, enc.n)
            source = Source(table, name, det._text, list(det._columns), enc.n)
            self._session = open_local(
                source, det.dcs, det._use, det._schema_map(), det.config, ("count",), True,
                Monitor(), scope=scope, encoded=enc,
            ).session  # fmt: skip
        return getattr(self._session, attr)


def _column_kind(enc: EncodedTable, c: str) -> str:
    """A CSV column's own kind in ``enc`` ('int' or 'float' for a number; a
    component mixes them where ``schema`` declares one of its columns)."""
    typ = (enc.recipes.get(c) or (None, ""))[0]
    if typ == pa.int64():
        return "int"
    if typ == pa.float64():
        return "float"
    return enc.kinds[c]


def _holds_value(col: pa.ChunkedArray) -> bool:
    """Whether ``col`` holds a value (not NULL, not a float NaN)."""
    n = len(col) - col.null_count
    if n and pa.types.is_floating(col.type):
        n -= int(pc.sum(pc.is_nan(col)).as_py() or 0)
    return n > 0


#: kinds (facet.column_types.native_kind) one family of comparable values
_FAMILY = {"int": "number", "float": "number", "decimal": "number", "bool": "number"}


def _converted(col: pa.ChunkedArray, field: pa.Field, name: str) -> pa.ChunkedArray:
    """``col`` (a batch's) as ``field``'s type, or a refusal naming the column.
    Dictionaries compare by value: either side's is decoded, and a dictionary
    column of the table gets the batch's values dictionary-encoded."""

    def refuse(why: str) -> FacetInputError:
        return FacetInputError(
            f"{name}: column '{field.name}' is {col.type} in the batch but {field.type} "
            f"in the table, and {why}; cast the batch to the table's types"
        )

    have, want = native_kind(col.type), native_kind(field.type)
    if have != "null" and _FAMILY.get(have, have) != _FAMILY.get(want, want):
        raise refuse(f"its values are of another kind ({have}, not {want})")
    values = col
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    target = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
    if pa.types.is_floating(values.type) and values.null_count < len(values):
        values = pc.if_else(pc.is_nan(values), pa.scalar(None, values.type), values)  # NULL
    try:
        out = _exactly(values, target, have, want)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise refuse(f"does not convert exactly ({str(err).splitlines()[0]})") from None
    if out is None:
        raise refuse("does not convert exactly (a value would change)")
    if pa.types.is_dictionary(field.type):
        out = pc.dictionary_encode(out).cast(field.type)
    return out


def _exactly(values: pa.ChunkedArray, target: pa.DataType, have: str, want: str) -> Any:
    """``values`` cast to ``target``, ``None`` where a value would change: each
    value must be the same number (instant, text) in ``target``, by the exact
    comparison a run makes (docs/semantics.md §4.1).  Arrow checks most casts
    value by value (a fraction into an int, a decimal past its precision or
    scale); an int into a float (Arrow refuses any past 2**53, exact or not), a
    float into a decimal (Arrow rounds to the scale) and a decimal into a float
    are compared exactly, per distinct value; the others (a float into a
    narrower float, 2 into a bool, a time of day into a date) are cast back and
    compared."""
    if have == "null":
        return values.cast(target)
    if have == "bool" and want != "bool":
        values, have = values.cast(pa.int8()), "int"
    if want == "decimal" and have == "int":  # (arrow sizes an int's decimal by its type)
        scale = max(target.scale, 0)  # (a negative scale: rescaled below, exactly or not)
        digits = 20 + scale
        wide = pa.decimal128(digits, scale) if digits <= 38 else pa.decimal256(digits, scale)
        values = values.cast(wide)
    if have == "int" and want == "float":
        out = values.cast(target, safe=False)
        return out if _same_numbers(values, out, _past_float_digits(values)) else None
    out = values.cast(target, safe=True)
    if {have, want} == {"float", "decimal"}:
        return out if _same_numbers(values, out) else None
    unchecked = want in ("bool", "timestamp") or (want, have) == ("float", "float")
    if unchecked:
        try:
            same = pc.equal(out.cast(values.type, safe=True), values)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        if same.null_count != values.null_count or pc.all(same).as_py() is False:
            return None
    return out


def _past_float_digits(ints: pa.ChunkedArray) -> pa.Array:
    """Where an integer is past 2**24 in magnitude (below it, float32 and float64
    hold every integer exactly)."""
    v = ints.combine_chunks().fill_null(0).to_numpy(zero_copy_only=False)
    big = v > 2**24 if v.dtype.kind == "u" else (v > 2**24) | (v < -(2**24))
    return pa.array(big)


def _same_numbers(
    before: pa.ChunkedArray, after: pa.ChunkedArray, rows: pa.Array | None = None
) -> bool:
    """Whether each value of ``after`` is the number at its place in ``before``
    (of the ``rows`` only; ``None``: all), by Python's exact comparison of ints,
    floats and decimals -- per distinct pair of values, not per row."""
    pairs = pa.table({"before": before, "after": after})
    if rows is not None:
        pairs = pairs.filter(rows)
    distinct = pairs.group_by(["before", "after"]).aggregate([])
    for x, y in zip(
        distinct.column("before").to_pylist(), distinct.column("after").to_pylist(), strict=True
    ):
        if (x is None) != (y is None) or (x is not None and x != y):
            return False
    return True
