"""A :class:`~facet.detector.Detector`'s scopes evaluated over each where-column's
distinct values (issue 11; docs/semantics.md §11, docs/architecture.md
"Incremental detection").

Daisy's setting is many scopes asked of one table.  A scope's mask is a function of
each row's values, and typing and coding a column (what ``--where`` does first) is a
function of its values too, once the kind the column is read as is fixed.  So:

* each where-column is kept dictionary-encoded (its distinct values and, per row, the
  index of its value; NULL ``-1``), extended by appends;
* where the kind a column is read as depends on its values (a CSV column compared
  with ``<``: numbers or dates, by their counts) or its typing may warn (a
  ``schema`` kind, ordered text), the first scope over it (with its use) types and
  encodes it over every row, exactly as ``--where`` does, and records the kind and
  the warnings; other columns' kinds follow from their use and type alone;
* a later scope types and encodes only the distinct values (with the scope's
  constants, in the recorded kind), evaluates the expression over them when it
  names one column, else gathers each column's codes per row and evaluates there.

A scope comparing two columns with each other, or a column whose value array is
itself dictionary-encoded, runs the whole encoding every time.  After an append, a
CSV column compared with ``<`` is typed over every row again (the kind a CSV column
is read as is decided by the counts of its values).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from facet.column_types import analyze, native_kind
from facet.encoding import EncodedTable, encode, one_array
from facet.engine.filters import where_mask
from facet.language.ast import DC, Col, Predicate
from facet.language.where import IsNull, Where
from facet.loading import Source
from facet.planner.config import Config


def where_columns(parsed: Where) -> list[str]:
    """The columns ``parsed`` names, in order of first mention (from its atoms:
    without building its single-tuple DCs)."""
    out: dict[str, None] = {}
    for a in parsed.atoms():
        if isinstance(a, IsNull):
            out[a.column] = None
        else:
            for c in a.pred.columns():
                out[c.name] = None
    return list(out)


@dataclass(frozen=True)
class Dictionary:
    """A column's distinct non-NULL values (first-seen order) and each row's
    index among them (``-1``: NULL)."""

    values: pa.Array
    rows: np.ndarray


def dictionary(column: pa.ChunkedArray | pa.Array) -> Dictionary | None:
    """``column`` dictionary-encoded (``None``: it already is, or is all-NULL)."""
    arr = one_array(column)
    if pa.types.is_dictionary(arr.type) or pa.types.is_null(arr.type):
        return None
    enc = pc.dictionary_encode(arr)
    rows = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return Dictionary(enc.dictionary, rows)


def extended(d: Dictionary, batch: pa.ChunkedArray | pa.Array) -> Dictionary | None:
    """``d`` with the rows of ``batch`` (same type) appended: values it has not
    seen go after the others (``None``: another type)."""
    arr = one_array(batch)
    if arr.type != d.values.type:
        return None
    at = pc.index_in(arr, value_set=d.values)
    unseen = pc.and_(pc.is_null(at), pc.is_valid(arr))
    values = d.values
    if pc.any(unseen).as_py():
        values = pa.concat_arrays([values, pc.unique(pc.filter(arr, unseen))])
        at = pc.index_in(arr, value_set=values)
    rows = at.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return Dictionary(values, np.concatenate([d.rows, rows]))


@dataclass
class ScopeColumns:
    """The where-columns' dictionaries and, per ``(column, ordered)``, the kind
    the first scope read it as (a schema kind; ``None`` for typed input, whose
    type decides) and its warnings."""

    text: bool
    dictionaries: dict[str, Dictionary | None] = field(default_factory=dict)
    learned: dict[tuple[str, bool], tuple[str | None, list[str]]] = field(default_factory=dict)

    def mask(
        self,
        parsed: Where,
        table: pa.Table,
        name: str,
        kinds: dict[str, str],
        config: Config,
        ordered: set[str] = frozenset(),  # type: ignore[assignment]
    ) -> tuple[np.ndarray, list[str]]:
        """The rows of ``table`` where ``parsed`` is true, and the typing's
        warnings; ``kinds``: the schema kinds of columns whose type is fixed;
        ``ordered``: columns compared with ``<`` elsewhere (by the DCs), so that a
        column the scope compares with one of them is typed as in a run of both."""
        own = parsed.dcs()
        marks = [
            DC((Predicate(Col(0, c), "<", Col(0, c)),))
            for c in where_columns(parsed)
            if c in ordered
        ]
        use = analyze(own + marks)
        cols = list(use.columns)
        n = table.num_rows
        key = {c: (c, use.components[use.component_of[c]].ordered) for c in cols}
        for c in cols:
            if c not in self.dictionaries:
                self.dictionaries[c] = dictionary(table.column(c))
        d = {c: self.dictionaries[c] for c in cols}
        for c in cols:  # columns whose kind no count decides and that nothing warns of
            if key[c] not in self.learned and c not in kinds:
                ordered = key[c][1]
                kind = native_kind(table.column(c).type) if not self.text else "text"
                if not ordered or (not self.text and kind != "text"):
                    self.learned[key[c]] = (None, [])
        fast = (
            all(len(comp.columns) == 1 for comp in use.components)
            and all(key[c] in self.learned and d[c] is not None for c in cols)
            and all(d[c].rows.shape[0] == n for c in cols)  # type: ignore[union-attr]
        )
        if not fast:
            enc = encode(Source(table.select(cols), name, self.text, cols, n), use, kinds, config)
            for comp in use.components:
                if len(comp.columns) == 1:
                    c = comp.columns[0]
                    kind = enc.kinds[c]
                    fixed = "number" if kind in ("int", "float") else kind
                    said = [w for w in enc.warnings if f"column '{c}'" in w]
                    self.learned[key[c]] = (kinds.get(c, fixed) if self.text else None, said)
            return where_mask(enc, parsed), list(enc.warnings)
        # every column's distinct values, then one NULL, padded to one length
        width = max(len(d[c].values) for c in cols) + 1  # type: ignore[union-attr]
        small = {}
        for c in cols:
            vals = d[c].values  # type: ignore[union-attr]
            small[c] = pa.concat_arrays([vals, pa.nulls(width - len(vals), vals.type)])
        fixed = dict(kinds)
        for c in cols:
            kind = self.learned[key[c]][0]
            if kind is not None:
                fixed[c] = kind
        warnings = [w for c in cols for w in self.learned[key[c]][1]]
        src = Source(pa.table(small), name, self.text, cols, width)
        enc = encode(src, use, fixed, config)
        if len(cols) == 1:  # the expression over the distinct values, then per row
            at = d[cols[0]].rows  # type: ignore[union-attr]
            return where_mask(enc, parsed)[at], warnings  # -1: the last slot, a NULL
        codes = np.empty((len(cols), n), np.int32)
        for i, c in enumerate(cols):
            codes[i] = enc.take(c, d[c].rows)  # type: ignore[union-attr]
        rows = EncodedTable(
            n, codes, {c: i for i, c in enumerate(cols)}, enc.kinds, enc.ordered,
            enc.const_codes, enc.domain, [], self.text,
        )  # fmt: skip
        return where_mask(rows, parsed), warnings

    def keep(self, table: pa.Table, columns: list[str]) -> None:
        """Dictionary-encode ``columns`` of ``table`` now (the where-columns a
        detector is created with), so that a first scope does not."""
        for c in columns:
            self.dictionaries[c] = dictionary(table.column(c))

    def appended(self, batch: pa.Table) -> ScopeColumns:
        """The state after ``batch`` (the table's columns and types) is appended:
        dictionaries extended; a CSV column compared with ``<`` is typed again by
        its next scope."""
        dicts = {
            c: None if d is None else extended(d, batch.column(c))
            for c, d in self.dictionaries.items()
        }
        dicts = {c: d for c, d in dicts.items() if d is not None}
        learned = {k: v for k, v in self.learned.items() if not (self.text and k[1])}
        return ScopeColumns(self.text, dicts, learned)
