"""Encoding the used columns as int codes (docs/architecture.md "Types and encoding").

Every component of columns (see :mod:`facet.column_types`) gets one code
space shared by its columns and the constants they meet: dense ranks for
ordered components (code order = value order) and dictionary codes otherwise.
NULL is -1.  Kernels then only compare int32 codes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from facet.column_types import (
    ISO_RE,
    NUMBER_RE,
    ColumnUse,
    Component,
    TextColumn,
    common_kind,
    constant_unit,
    finer_unit,
    finest_unit,
    isolate,
    native_kind,
    normalize_native,
    number_parts,
    parse_timestamps,
    storage_type,
)
from facet.errors import DataError, FacetInputError
from facet.kernels.dictionary import encode_bytes, encode_bytes_parallel, gather_codes
from facet.kernels.ranks import (
    dense_ranks,
    histogram_ranks,
    lookup_range,
    mark_range,
    move_codes,
    range_bitmap,
    rank_marks,
    value_range,
)
from facet.language.ast import Const
from facet.loading import Source
from facet.numeric_ranks import decimals_as_unscaled, rank_numbers
from facet.planner.config import DEFAULT, Config
from facet.thread_pools import start_threads

NULL = -1


@dataclass
class EncodedTable:
    """Codes of the used columns: ``codes[index[col]]`` is an int32 array of length
    ``n``.  ``matrix`` holds them; an append's extension (:mod:`facet.encoding_append`)
    may leave the old rows' part of some of its rows unwritten (``pending``): ``codes``
    and :meth:`column` write it first, :meth:`take` only when the rows asked are in it,
    so an append whose count reads only the batch's rows costs the batch."""

    n: int
    matrix: np.ndarray
    index: dict[str, int]
    kinds: dict[str, str]
    ordered: dict[str, bool]
    #: (column, constant) -> code of the constant in the column's code space
    const_codes: dict[tuple[str, Const], int]
    #: distinct non-NULL values per component, by column
    domain: dict[str, int]
    warnings: list[str] = field(default_factory=list)
    #: the source was CSV text (types inferred from the DCs)
    from_text: bool = True
    #: the value of every code, per column (shared by a component's columns); for
    #: equality text columns only the values' hashes (:class:`HashedDictionary`); for
    #: a column only row filters read, its constants (:class:`ConstantBuckets`)
    values: dict[str, pa.Array | HashedDictionary | ConstantBuckets] = field(default_factory=dict)
    #: exact distinct non-NULL values of the columns encoded alone (no other
    #: column or constant in their code space): the dictionary's size
    distinct: dict[str, int] = field(default_factory=dict)
    #: how each column was coded: its typed Arrow type and the route (``ranks``:
    #: dense ranks over one type, ``text``: equality text codes, ``mixed``: ranks
    #: across types, ``dictionary``: coded dictionaries) -- what
    #: :mod:`facet.encoding_append` needs to extend the codes by a batch
    recipes: dict[str, tuple[pa.DataType | None, str]] = field(default_factory=dict)
    #: rows of ``matrix`` whose first ``PendingRow.end`` codes are still to be written
    pending: dict[int, PendingRow] = field(default_factory=dict)

    @property
    def codes(self) -> np.ndarray:
        """The code matrix, every row written."""
        rows = list(self.pending)
        if len(rows) > 1 and self.n >= DEFAULT.parallel_encode_rows and DEFAULT.workers > 1:
            list(component_pool(DEFAULT.workers).map(self.write, rows))  # (nogil kernel)
        else:
            for row in rows:
                self.write(row)
        return self.matrix

    def column(self, name: str) -> np.ndarray:
        row = self.index[name]
        self.write(row)
        return self.matrix[row]

    def take(self, name: str, rows: slice | np.ndarray) -> np.ndarray:
        """``column(name)[rows]`` (tids, or a slice of them), writing the column's
        pending part only if ``rows`` reach into it."""
        row = self.index[name]
        wait = self.pending.get(row)
        if wait is not None:
            if isinstance(rows, slice):
                first = range(self.n)[rows]
                low = min(first[0], first[-1]) if len(first) else self.n
            else:
                low = int(rows.min()) if rows.size else self.n
            if low < wait.end:
                self.write(row)
        return self.matrix[row][rows]

    def write(self, row: int) -> None:
        """Write row ``row``'s pending codes (if any) now."""
        wait = self.pending.pop(row, None)
        if wait is not None:
            wait.write(self.matrix[row])


@dataclass(frozen=True)
class PendingRow:
    """The old rows' codes of one row of an extended :class:`EncodedTable`, not yet
    written: ``segments`` ``(src, lo, hi, since)`` -- ``src[lo:hi]`` (a written code
    row of an earlier encoding) goes to positions ``lo:hi`` through ``remaps[since]``,
    then each later remap (``remaps[j][c]``: code ``c``'s code after the j-th append,
    the last slot NULL's; None: unchanged).  ``end``: where the written part begins."""

    segments: tuple[tuple[np.ndarray, int, int, int], ...]
    remaps: tuple[np.ndarray | None, ...]
    end: int

    def write(self, out: np.ndarray) -> None:
        """Write the pending codes into ``out`` (the row), each segment through the
        remaps composed from its own on (composed once, from the last back)."""
        after: list[np.ndarray | None] = [None] * (len(self.remaps) + 1)
        for j in range(len(self.remaps) - 1, -1, -1):
            r, later = self.remaps[j], after[j + 1]
            after[j] = r if later is None else (later if r is None else later[r])
        empty = np.zeros(0, np.int32)
        for src, lo, hi, since in self.segments:
            remap = after[since]
            move_codes(src, empty if remap is None else remap, out, lo, hi)


def unknown_column(name: str, source: Source, where: str) -> FacetInputError:
    """The error for a column ``source`` lacks, suggesting the closest name."""
    return unknown_column_named(name, source.all_columns, source.name, where, source.delimiter)


def unknown_column_named(
    name: str, columns: list[str], table: str, where: str, delimiter: str | None = None
) -> FacetInputError:
    """The error for a column ``table`` (of ``columns``) lacks: names are
    case-sensitive, so a name that differs only in case is the first suggestion.
    ``delimiter``: what a CSV file was split on; a header read as one column says
    so, and how to name another delimiter."""
    if delimiter is not None and len(columns) == 1:
        split = "a tab" if delimiter == "\t" else f"'{delimiter}'"
        seen = [c for c in ";|:\t^~# " if c in columns[0] and c != delimiter]
        other = {"\t": "tab", " ": "' '"}.get(seen[0], f"'{seen[0]}'") if seen else "';'"
        return FacetInputError(
            f"{where}: unknown column '{_shown(name)}' in {table}, whose header split on "
            f"{split} is one column, '{_shown(columns[0])}'; if the file uses another "
            f"delimiter, name it with --delimiter (Python: delimiter=), e.g. --delimiter {other}"
        )
    same = [c for c in columns if c.casefold() == name.casefold()]
    if not same and len(name) <= _LONG_NAME:  # (difflib is quadratic in the length)
        same = difflib.get_close_matches(name, [c for c in columns if len(c) <= _LONG_NAME], n=1)
    hint = f"did you mean '{_shown(same[0])}'?" if same else "check the spelling and the header"
    return FacetInputError(f"{where}: unknown column '{_shown(name)}' in {table}; {hint}")


#: names longer than this are cut in messages (and not matched for suggestions)
_LONG_NAME = 200


def _shown(name: str) -> str:
    """``name`` for a one-line message: a very long one is cut, saying its length."""
    if len(name) <= _LONG_NAME:
        return name
    return f"{name[:60]}... ({len(name):,} characters)"


class TextFacts(Protocol):
    """What CSV typing needs to know of a text column (docs/semantics.md §4.3):
    a :class:`TextColumn`, or the same counts merged over a table's partitions."""

    nonempty: int
    n_num: int
    n_iso: int
    integral: bool


def text_kinds(
    comp: Component,
    facts: Mapping[str, TextFacts],
    schema: dict[str, str],
    use: ColumnUse,
    source_name: str,
) -> dict[str, str]:
    """The kind each CSV text column of ``comp`` is read as ('int', 'float',
    'timestamp', 'text', or its ``schema`` kind): an ordered component is
    timestamps when more of its values are ISO dates than numbers, else numbers
    -- int64 when every number is whole and fits, else float64.  Free columns
    that hold no value at all take the kind of the component's declared columns,
    else the one its constants suggest (:func:`kind_without_values`)."""
    inferred = None
    if comp.ordered and any(c not in schema for c in comp.columns):
        free = [facts[c] for c in comp.columns if c not in schema]
        n_nonempty = sum(t.nonempty for t in free)
        n_num = sum(t.n_num for t in free)
        # a value is never both a number and an ISO date: count dates only if they could win
        n_iso = sum(t.n_iso for t in free) if n_nonempty - n_num > n_num else 0
        if n_nonempty == 0:
            inferred = kind_without_values(comp, schema)
        elif n_num == 0 and n_iso == 0:
            cols = ", ".join(f"'{c}'" for c in comp.columns if c not in schema)
            dc, _ = use.ordering_dc(comp)
            raise DataError(
                f"{source_name}: column {cols} is compared with < <= > >= "
                f"({dc.where()}) but none of its values is a number or an ISO date; "
                f"fix the data or declare its type with --schema"
            )
        else:
            inferred = "timestamp" if n_iso > n_num else "number"
        for c in comp.columns:  # an ordered column in which no value parses: an error
            f = facts.get(c)
            if c in schema or f is None or f.nonempty == 0:
                continue
            if (f.n_iso if inferred == "timestamp" else f.n_num) == 0:
                dc, via = use.ordering_dc(comp, c)
                how = (
                    f"is compared with < <= > >= ({dc.where()})"
                    if via is None
                    else f"is compared with column '{via}', which {dc.where()} orders with "
                    "< <= > >=,"
                )
                what = "an ISO date" if inferred == "timestamp" else "a number"
                raise DataError(
                    f"{source_name}: column '{c}' {how} but none of its values is {what}; "
                    "fix the data or declare its type with --schema"
                )
    kinds = {c: schema.get(c) or (inferred if comp.ordered else "text") for c in comp.columns}
    # one numeric type for the inferred columns: int64 only when every value is integral
    numbers = [c for c in comp.columns if kinds[c] == "number"]
    if numbers:
        integral = all(facts[c].integral for c in numbers)
        for c in numbers:
            kinds[c] = "int" if integral else "float"
    return kinds


def kind_without_values(comp: Component, schema: dict[str, str]) -> str:
    """The kind of an ordered CSV component's free columns when none of them holds
    a value (every value NULL: no predicate on them holds, whatever the kind): the
    kind of a column ``schema`` declares in it ('number' for a number kind), else
    'timestamp' when more of its constants are ISO dates than numbers, else
    'number' -- so that neither a declared column nor a constant is a type clash."""
    for c in comp.columns:
        k = schema.get(c)
        if k is not None:
            return "number" if k in ("int", "float", "number") else k
    texts = [k.text.strip() for k in comp.constants]
    n_num = sum(re.fullmatch(NUMBER_RE, t) is not None for t in texts)
    n_iso = sum(re.fullmatch(ISO_RE, t) is not None for t in texts)
    return "timestamp" if n_iso > n_num else "number"


def component_arrays(
    comp: Component, source: Source, schema: dict[str, str], use: ColumnUse
) -> tuple[dict[str, pa.Array], str, list[str]]:
    """Typed arrays of a component's columns, their common kind, and warnings."""
    warnings: list[str] = []
    raw = {c: one_array(source.table.column(c)) for c in comp.columns}
    kinds: dict[str, str] = {}
    typed: dict[str, pa.Array] = {}
    if source.text:
        text = {c: TextColumn(raw[c]) for c in comp.columns}
        kinds.update(text_kinds(comp, text, schema, use, source.name))
        for c in comp.columns:
            parsed = text[c].parse(kinds[c])
            _warn_unparsed(raw[c], parsed, c, kinds[c], source, warnings)
            typed[c] = parsed
    else:
        for c in comp.columns:
            a = raw[c]
            k = native_kind(a.type)
            want = schema.get(c)
            if want == "text":
                typed[c] = normalize_native(a, "text") if k == "text" else pc.cast(a, pa.string())
                kinds[c] = "text"
            elif want is not None:
                typed[c], kinds[c] = _typed_as(a, k, want, c, source, warnings)
            elif k == "other":
                raise DataError(
                    f"{source.name}: column '{c}' has type {a.type}, which facet cannot "
                    "compare; cast it to a number, string or timestamp first"
                )
            else:
                kinds[c] = k
                typed[c] = normalize_native(a, k)
                if k == "text" and comp.ordered:
                    warnings.append(ordered_text_warning(source.name, c, str(a.type), comp, use))
    kind = common_kind(list(kinds.values()))
    if kind is None:
        desc = ", ".join(f"'{c}' ({kinds[c]})" for c in comp.columns)
        # the first DC that compares two columns of types with no common one
        clash = (
            use.linking_dc(a, b)
            for a, b in use.links
            if a in kinds and b in kinds and common_kind([kinds[a], kinds[b]]) is None
        )
        dc = next((d for d in clash if d is not None), use.first_use[comp.columns[0]])
        raise DataError(
            f"{dc.where()}: columns {desc} are compared with each other but have "
            "incompatible types; cast them or use --schema"
        )
    if kind in ("duration", "time"):  # one unit for the component: the finest
        unit = max((t.type.unit for t in typed.values()), key=_UNITS.index)
        target = (
            pa.duration(unit)
            if kind == "duration"
            else (pa.time32(unit) if unit in ("s", "ms") else pa.time64(unit))
        )
        for c, t in typed.items():
            try:
                typed[c] = t.cast(target)
            except pa.ArrowInvalid:  # a time of day always fits; a duration may not
                raise DataError(
                    f"{source.name}: column '{c}' holds a duration outside the range of "
                    f"{target}, the unit of the columns it is compared with; cast the "
                    "columns to one unit first"
                ) from None
    if kind == "timestamp":
        # one unit for the component: the finest of its columns
        unit = finest_unit([t.type for t in typed.values()])
        columns_unit, finer = unit, None
        for k in comp.constants:  # a constant's fraction may need a finer unit
            unit = finer_unit(unit, constant_unit(k.text))
            if unit != columns_unit and finer is None:
                finer = k
        for c, t in typed.items():
            try:
                typed[c] = normalize_native(t, "timestamp", unit)
            except pa.ArrowInvalid:
                if finer is not None:  # the constant's fraction asked for the finer unit
                    holders = (use.constant_use.get((x, finer)) for x in comp.columns)
                    dc = next((d for d in holders if d is not None), None)
                    where = f"{dc.where()}: " if dc is not None else ""
                    raise DataError(
                        f"{where}constant {finer.as_text()} needs timestamp[{unit}], and "
                        f"column '{c}' of {source.name} holds a timestamp outside its range "
                        "(1677-2262 for nanoseconds); write the constant with fewer "
                        "fraction digits"
                    ) from None
                raise DataError(
                    f"{source.name}: column '{c}' holds a timestamp outside the range of "
                    f"timestamp[{unit}], the unit of the columns it is compared with; "
                    "cast the columns to one unit first"
                ) from None
    return typed, kind, warnings


def ordered_text_warning(name: str, c: str, typ: str, comp: Component, use: ColumnUse) -> str:
    """docs/semantics.md §4.1: a typed text column that a DC orders (itself, or
    through a column it is compared with) compares as text; say so, and how to
    read it as numbers or dates."""
    dc, via = use.ordering_dc(comp, c)
    why = (
        f"{dc.where()} orders it"
        if via is None
        else f"it is compared with column '{via}', which {dc.where()} orders"
    )
    return (
        f"{name}: column '{c}' is text ({typ}) and {why} with < <= > >=, so it compares as "
        f"text, character by character; if it holds numbers or dates, pass "
        f"schema={{'{c}': 'number'}} (CLI: --schema {c}:number) or 'timestamp'"
    )


def _typed_as(
    a: pa.Array, k: str, want: str, c: str, source: Source, warnings: list[str]
) -> tuple[pa.Array, str]:
    """A typed column read as ``--schema``'s ``want`` (int, float, number, timestamp);
    values the type cannot hold exactly (a fractional value as int) are NULL, with a
    warning."""
    if k == "text":
        tc = TextColumn(normalize_native(a, "text"))
        if want == "number":
            want = "int" if tc.integral else "float"
        parsed = tc.parse(want)
        _warn_unparsed(a, parsed, c, want, source, warnings)
        return parsed, want
    numeric = k in ("int", "float", "decimal", "bool")
    if want == "number" and numeric:
        return normalize_native(a, k), k
    try:
        if want == "int" and k in ("float", "decimal"):
            f = normalize_native(a, "float") if k == "float" else a
            whole = pc.equal(f, pc.floor(f)) if k == "float" else pc.equal(f, pc.round(f))
            if k == "float":
                whole = pc.and_(whole, pc.less(pc.abs(f), pa.scalar(2.0**63)))
            keep = pc.fill_null(whole, _FALSE_SCALAR)
            vals = pc.cast(pc.if_else(keep, f, pa.scalar(None, f.type)), pa.int64())
            _warn_unparsed(a, vals, c, "int", source, warnings)
            return vals, "int"
        if want == "float" and numeric:
            # float is what was asked for: the nearest float64, as a cast rounds
            return normalize_native(pc.cast(a, pa.float64(), safe=False), "float"), "float"
        want = "int" if want == "number" else want
        return normalize_native(pc.cast(a, _arrow_type(want)), want), want
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise DataError(
            f"{source.name}: --schema cannot read column '{c}' ({a.type}) as "
            f"{want}: {str(err).splitlines()[0]}"
        ) from None


_FALSE_SCALAR = pa.scalar(False)


def _warn_unparsed(
    raw: pa.Array, parsed: pa.Array, c: str, kind: str, source: Source, warnings: list[str]
) -> None:
    """Warn about values that became NULL when read as ``kind``."""
    if kind == "text":
        return
    lost = lost_values(raw, parsed)
    if len(lost):
        fractions = kind == "int" and any_number(lost)
        warnings.append(
            unparsed_warning(source.name, c, kind, len(lost), lost[0].as_py(), fractions)
        )


def lost_values(raw: pa.Array, parsed: pa.Array) -> pa.Array:
    """The values of ``raw`` that are NULL in ``parsed`` (its values read as a type)."""
    if (len(raw) - raw.null_count) == (len(parsed) - parsed.null_count):
        return raw.slice(0, 0)
    return pc.filter(raw, pc.and_(pc.is_valid(raw), pc.is_null(parsed)))


def any_number(values: pa.Array) -> bool:
    """Whether any of ``values`` reads as a number (one that an int column lost is
    fractional or beyond int64)."""
    text = pc.utf8_trim_whitespace(values.cast(pa.string()))
    return bool(pc.any(pc.match_substring_regex(text, NUMBER_RE)).as_py())


def unparsed_warning(
    name: str, column: str, kind: str, bad: int, example: str, fractions: bool = False
) -> str:
    """The warning for ``bad`` values of a CSV column that are NULL once read as
    ``kind`` (``example``: the first of them; ``fractions``: some of them are numbers,
    fractional or beyond int64, that an int column -- declared so -- cannot hold)."""
    one, many = {
        "timestamp": ("an ISO-8601 date/time", "ISO-8601 dates/times"),
        "int": ("a whole number within int64", "whole numbers within int64")
        if fractions
        else ("a number", "numbers"),
    }.get(kind, ("a number", "numbers"))
    if bad == 1:
        return f"{name}: column '{column}': 1 value not {one} (e.g. {example!r}) read as NULL"
    return f"{name}: column '{column}': {bad} values not {many} (e.g. {example!r}) read as NULL"


def _arrow_type(kind: str) -> pa.DataType:
    return {
        "int": pa.int64(),
        "float": pa.float64(),
        "text": pa.string(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }[kind]


_NUMERIC = ("int", "float", "decimal", "bool")
_UNITS = ["s", "ms", "us", "ns"]


def _constant_value(
    const: Const,
    kind: str,
    column: str,
    use: ColumnUse,
    column_type: pa.DataType,
) -> pa.Array:
    """The constant as a one-value array in the type of the column it meets
    (docs/semantics.md §4.4): a float32 column's constant is rounded to float32, a
    decimal column's is an exact decimal, an integer column's stays exact (a
    fractional one too: ``t.A < 2.9999999999999999999`` is not ``t.A < 3``)."""
    where = use.constant_use[(column, const)].where()
    text = const.text.strip()
    if kind == "null" or pa.types.is_null(column_type):
        # an all-NULL column: no comparison holds, any value of the component's type will do
        return pa.array([0], pa.int64()) if kind in ("null", *_NUMERIC) else pa.nulls(1)
    if kind == "text":
        return pa.array([const.text], pa.string())
    if kind == "binary":
        return pa.array([const.text.encode()], pa.binary())
    if kind in _NUMERIC:
        boolean = kind == "bool" or pa.types.is_boolean(column_type)
        if boolean and text.lower() in ("true", "false"):
            return pa.array([1 if text.lower() == "true" else 0], pa.int64())
        if not re.fullmatch(NUMBER_RE, text):
            what = "boolean" if boolean else "numeric"
            hint = "true, false, 1 or 0" if boolean else "a number"
            raise FacetInputError(
                f"{where}: constant {const.as_text()} is compared with {what} column "
                f"'{column}'; write {hint}, or declare the column as text with --schema"
            )
        return _number_constant(decimal_constant(text), column_type)
    if kind == "timestamp":
        unit = "ns" if constant_unit(const.text) == "ns" else "us"  # ns only when needed
        try:
            ts = parse_timestamps(pa.array([const.text], pa.string()), unit)
        except pa.ArrowInvalid:
            raise FacetInputError(
                f"{where}: constant {const.as_text()} (against timestamp column '{column}') "
                "is outside the range of timestamps facet can compare; write a date between "
                "1677 and 2262 for nanoseconds"
            ) from None
        if ts.null_count:
            raise FacetInputError(
                f"{where}: constant {const.as_text()} is compared with timestamp column "
                f"'{column}'; write an ISO-8601 date/time such as \"2024-01-31\""
            )
        try:
            return ts.cast(column_type)
        except pa.ArrowInvalid:
            unit = getattr(column_type, "unit", "ns")
            raise FacetInputError(
                f"{where}: constant {const.as_text()} is outside the range of column "
                f"'{column}', which compares in timestamp[{unit}] (1677-2262 for "
                "nanoseconds); write a date inside it, or cast the column to a coarser "
                "unit (e.g. microseconds)"
            ) from None
    raise FacetInputError(
        f"{where}: constant {const.as_text()} cannot be compared with column '{column}' "
        f"({kind}); compare it with another {kind} column, or cast the column to a number "
        "or text first"
    )


#: a number whose leading digit lies beyond 10**+-this is beyond every value a column
#: holds (float64 reaches 1.8e308 and 5e-324, decimal256 10**+-76)
_FAR_EXPONENT = 1000


def decimal_constant(text: str) -> Decimal:
    """A number constant's exact value (``text`` matches ``NUMBER_RE``); one far beyond
    every column value (its leading digit beyond 10**+-1000) as +-1e1000 or
    +-1e-1000, which compare alike with every column value and which ``Decimal``
    holds (it refuses an exponent of 10**18 and more)."""
    parts = number_parts(text)
    if parts is None:
        return Decimal(text)
    negative, digits, power = parts
    if not digits:
        return Decimal(0)
    sign = "-" if negative else ""
    top = power + len(digits) - 1  # the power of ten of the leading digit
    if abs(top) > _FAR_EXPONENT:
        return Decimal(f"{sign}1e{_FAR_EXPONENT if top > 0 else -_FAR_EXPONENT}")
    return Decimal(f"{sign}{digits}E{power}")


def _between_units(d: Decimal, scale: int) -> Decimal:
    """``d`` where it is a multiple of ``10**-scale`` (exactly, in the fewest digits),
    else the midpoint of the two multiples around it: either compares with every
    multiple of ``10**-scale`` -- every value of an integer (scale 0) or decimal
    column -- as ``d`` does."""
    sign, digits, exp = d.as_tuple()
    n = int("".join(map(str, digits)) or "0")
    n = -n if sign else n
    k = exp + scale  # d * 10**scale == n * 10**k
    if k >= 0:
        return Decimal(f"{n * 10**k}E{-scale}")
    if -k > len(str(abs(n))):  # |d| below one unit: between 0 and +-1 unit
        q, r = (0, n) if n > 0 else (-1, n)
    else:
        q, r = divmod(n, 10**-k)  # floor
    if r == 0:
        return Decimal(f"{q}E{-scale}")
    return Decimal(f"{10 * q + 5}E{-(scale + 1)}")


def _number_constant(d: Decimal, column_type: pa.DataType) -> pa.Array:
    """An exact decimal constant in a numeric column's type."""
    if pa.types.is_floating(column_type):
        width = {16: np.float16, 32: np.float32}.get(column_type.bit_width)
        with np.errstate(over="ignore"):  # beyond float16/32's range: +-inf, as a cast gives
            v = float(d) if width is None else float(width(float(d)))
        return pa.array([v + 0.0], pa.float64())
    if d == d.to_integral_value():
        i = int(d)
        if -(2**63) <= i < 2**63:
            return pa.array([i], pa.int64())
        if 0 <= i < 2**64:
            return pa.array([i], pa.uint64())
    elif not pa.types.is_decimal(column_type) and Decimal(float(d)) == d:
        return pa.array([float(d)], pa.float64())  # exactly a float: the fast route
    sign_digits_exp = d.as_tuple()
    scale = max(0, -sign_digits_exp.exponent)
    precision = max(1, len(sign_digits_exp.digits) + sign_digits_exp.exponent) + scale
    if precision > 76:  # beyond decimal256
        decimal = pa.types.is_decimal(column_type)
        if decimal or pa.types.is_integer(column_type) or pa.types.is_boolean(column_type):
            # more digits than the column's values hold: a value with as few that
            # compares as d with every one of them (1.000...0001 against integers: 1.5)
            near = _between_units(d, column_type.scale if decimal else 0)
            if near != d and len(near.as_tuple().digits) <= 76:
                return _number_constant(near, column_type)
        return pa.array([float(d)], pa.float64())  # no column value comes near it
    typ = pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    return pa.array([format(d, "f")], pa.string()).cast(typ)


def _codes(
    values: pa.Array, ordered: bool, config: Config = DEFAULT, out: np.ndarray | None = None
) -> tuple[np.ndarray, pa.Array]:
    """Dense int32 codes (-1 for NULL) and the value of each code (the dictionary).

    Unordered: dictionary codes (hashing, O(n)).  Ordered: dense ranks, by the
    cheapest exact route -- a histogram over a small integer range
    (``Config.rank_histogram_span``), hashing plus sorting only the distinct
    values when they are few (``Config.rank_few_distinct``), else a full sort.

    ``out``: an int32 array of ``len(values)`` (the code matrix's rows) the hashing
    and histogram routes write the codes to; the codes come back in it or, from
    another route, in an array of their own.
    """
    n = len(values)
    values = coding_values(values)
    if n == 0:
        return np.empty(0, np.int32), values
    if not ordered and (pa.types.is_string(values.type) or pa.types.is_binary(values.type)):
        return _text_codes(values, config, out)
    valid = None if values.null_count == 0 else ~np.asarray(values.is_null())
    if pa.types.is_integer(values.type):
        v = (
            values.to_numpy(zero_copy_only=False)
            if valid is None
            else np.asarray(pc.fill_null(values, pa.scalar(0, values.type)))
        )
        # the kernels take int64: every integer type but uint64 converts exactly
        kernels = n >= config.radix_rank_rows and (v.dtype.kind == "i" or v.dtype.itemsize < 8)
        w = v.astype(np.int64, copy=False) if kernels else v
        ok = np.empty(0, np.bool_) if valid is None else valid
        if kernels:  # the range in one pass (numpy: two, over a masked copy)
            lo, hi, m = (int(x) for x in value_range(w, ok))
        else:
            vv = v if valid is None else v[valid]
            m = vv.size
            lo, hi = (int(vv.min()), int(vv.max())) if m else (0, -1)
        if m == 0:
            return np.full(n, NULL, np.int32), values.drop_null()
        small_range = hi - lo <= config.rank_histogram_span * n + 64
        if small_range and kernels:
            # a presence table over the range in one kernel (kernels/ranks.py): no GIL
            # held while other components encode (numpy's below holds it for small tables)
            got, uniq = histogram_ranks(
                w, ok, np.int64(lo), hi - lo + 1, np.empty(n, np.int32) if out is None else out
            )
            return got, pa.array(uniq.astype(v.dtype, copy=False), values.type)
        if small_range:
            vv = v if valid is None else v[valid]
            base = vv.dtype.type(lo)  # in the column's dtype: uint64 beyond int64 too
            present = np.zeros(hi - lo + 1, np.int32)
            present[vv - base] = 1
            rank = np.cumsum(present, dtype=np.int64) - 1
            out = rank[v - base].astype(np.int32) if valid is None else np.full(n, NULL, np.int32)
            if valid is not None:
                out[valid] = rank[vv - base]
            dictionary = pa.array(np.flatnonzero(present).astype(vv.dtype) + base, values.type)
            return out, dictionary
        if kernels:
            # wide range: LSD radix sort of value - lo (kernels/ranks.py), O(n) per digit
            full = np.ones(n, np.bool_) if valid is None else valid
            out, uniq = dense_ranks(w, full, np.int64(lo), max(1, (hi - lo).bit_length()))
            return out, pa.array(uniq.astype(v.dtype, copy=False), values.type)
    floats = pa.types.is_float32(values.type) or pa.types.is_float64(values.type)
    if floats and config.rank_sort_floats and n >= config.radix_rank_rows:
        v = (values if valid is None else pc.fill_null(values, 0.0)).to_numpy(zero_copy_only=False)
        vv = v if valid is None else v[valid]
        sample = vv[:: max(1, vv.size // _DISTINCT_SAMPLE)]
        if np.unique(sample).size >= 0.9 * sample.size:
            # mostly distinct (a sample says): one sort gives the distinct values in
            # order and every row's rank (hashing them first, then sorting the
            # distinct values, costs more than the sort: 170 -> 13 ms at 400k rows)
            return _float_ranks(v, valid, values.type)
    uniq = pc.unique(values.drop_null())
    d = len(uniq)
    srt = pc.take(uniq, pc.sort_indices(uniq))
    if d * config.rank_few_distinct <= n:
        # few distinct values: sort those only, then look every value up (hashing)
        return _filled(pc.index_in(values, value_set=srt)), srt
    if pa.types.is_floating(values.type) or pa.types.is_integer(values.type):
        # fill NULLs first: an int array with NULLs would come out as float64 (lossy)
        v = pc.fill_null(values, pa.scalar(0, values.type)).to_numpy(zero_copy_only=False)
        if v.dtype.kind == "f" and n >= config.radix_rank_rows:
            return _float_ranks(v, valid, values.type)[0], srt
        out = np.full(n, NULL, np.int32)
        vv = v if valid is None else v[valid]
        _, inv = np.unique(vv, return_inverse=True)
        if valid is None:
            out[:] = inv
        else:
            out[valid] = inv
        return out, srt
    ranks = pc.rank(values, sort_keys="ascending", tiebreaker="dense")
    r = ranks.to_numpy().astype(np.int64) - 1
    if valid is not None:
        r[~valid] = NULL
    return r.astype(np.int32), srt


class ConstantBuckets:
    """The code space of a column only row filters read (:func:`_bucket_codes`): its
    constants in order; ``2 j + 1`` is the j-th constant's code, ``2 j`` the values
    between it and the one before (``2 k`` above the last).  Codes compare with the
    constants' codes as the values do (on text no filter orders, every value that is
    no constant is coded 0)."""

    def __init__(self, constants: pa.Array) -> None:
        self.constants = constants

    def __len__(self) -> int:
        return 2 * len(self.constants) + 1


#: constants ordered text may meet and still be coded by buckets (each one is a pass);
#: past it numbers search the constants
_MAX_BUCKET_CONSTANTS = 16


def _bucket_codes(
    parts: list[pa.Array], config: Config, ordered: bool = True
) -> tuple[np.ndarray, ConstantBuckets] | None:
    """Codes of a column (``parts[0]``) and its constants (the other parts) that keep
    only the order against the constants -- all a row filter reads: 2 x (constants
    below the value) + (1 where it equals one), -1 for NULL.  Numbers: two passes per
    constant (numpy's comparisons), two binary searches past a few constants; text
    only ``=``/``!=``/``in`` read (not ``ordered``): one hash lookup among the
    constants, every other value coded 0 (nothing reads its order); other text: two
    passes per constant (Arrow's, exact in the column's type), where ranks would sort
    or hash the whole column.  ``None`` where it does not apply: constants of another
    type than the column (they compare by exact value through the ranks), more than a
    few of them on ordered text, or a small table (the ranks are cheap)."""
    column, consts = parts[0], parts[1:]
    n = len(column)
    if n < config.radix_rank_rows:
        return None
    if any(p.type != column.type for p in consts):
        return None
    column = coding_values(column)
    given = coding_values(_joined(consts)) if consts else column.slice(0, 0)
    srt = pc.take(given, pc.sort_indices(given))
    srt = pc.unique(srt)  # (unique keeps the order it meets them in)
    numeric = pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
    if not numeric and ordered and len(srt) > _MAX_BUCKET_CONSTANTS:
        return None

    def coded(values: pa.Array) -> np.ndarray:
        if not numeric and not ordered:
            at = pc.index_in(values, value_set=srt).to_numpy(zero_copy_only=False)
            found = ~np.isnan(at)  # (no match or NULL: NaN)
            out = np.zeros(len(values), np.int32)
            out[found] = 2 * at[found].astype(np.int32) + 1
        elif numeric:
            v = (values if values.null_count == 0 else pc.fill_null(values, 0)).to_numpy(
                zero_copy_only=False
            )
            cs = srt.to_numpy(zero_copy_only=False)
            if len(cs) > _MAX_BUCKET_CONSTANTS:
                out = np.searchsorted(cs, v, "left").astype(np.int32)
                out += np.searchsorted(cs, v, "right").astype(np.int32)
            else:
                out = np.zeros(len(values), np.int32)
                for c in cs:
                    above = v > c
                    out += above
                    out += above
                    out += v == c
        else:
            out = np.zeros(len(values), np.int32)
            for c in srt:
                above = np.asarray(pc.fill_null(pc.greater(values, c), False))
                out += above
                out += above
                out += np.asarray(pc.fill_null(pc.equal(values, c), False))
        if values.null_count:
            out[np.asarray(values.is_null())] = NULL
        return out

    return np.concatenate([coded(column), coded(given)]), ConstantBuckets(srt)


#: values sampled to tell a float column of mostly distinct values (see _codes)
_DISTINCT_SAMPLE = 2048
#: a float's bits but the sign: flipped for a negative float, its int64 image then orders
#: as the float (IEEE 754: sign and magnitude)
_FLOAT_ORDER_MASK = np.int64(0x7FFF_FFFF_FFFF_FFFF)


def _float_ranks(
    v: np.ndarray, valid: np.ndarray | None, typ: pa.DataType
) -> tuple[np.ndarray, pa.Array]:
    """Dense ranks of a float column (``v``: its values, anything where ``valid`` is
    false) and its distinct values in order: kernels/ranks.py's radix digits over the
    values' order-preserving int64 images (-0.0 as 0.0) -- 2-2.5x numpy's sort at 800k
    rows (56 vs 129 ms, uniform doubles)."""
    key = (v.astype(np.float64) + 0.0).view(np.int64)  # a copy; -0.0 + 0.0 is 0.0
    key ^= (key >> 63) & _FLOAT_ORDER_MASK
    ok = np.ones(v.size, np.bool_) if valid is None else valid
    lo, hi, m = (int(x) for x in value_range(key, ok))
    if m == 0:
        return np.full(v.size, NULL, np.int32), pa.array([], typ)
    codes, uniq = dense_ranks(key, ok, np.int64(lo), max(1, (hi - lo).bit_length()))
    uniq ^= (uniq >> 63) & _FLOAT_ORDER_MASK  # the same flip undoes itself
    return codes, pa.array(uniq.view(np.float64).astype(v.dtype, copy=False), typ)


def _integer_parts_codes(
    parts: list[pa.Array], config: Config, out: np.ndarray | None
) -> tuple[np.ndarray, pa.Array] | None:
    """Codes of a component's integer parts (its columns, then its constants) ranked
    together by :func:`_codes`'s histogram route -- one presence table over their
    joint range, filled and read part by part (``kernels/ranks.py``), so the parts
    are never concatenated (a copy of every column: 16 MB for two 1M-row int64
    columns).  ``out``: as :func:`_codes`.  ``None`` where that route does not apply
    (other types, a wide range, few rows, every value NULL)."""
    typ = parts[0].type
    if not pa.types.is_integer(typ) or any(p.type != typ for p in parts):
        return None
    total = sum(len(p) for p in parts)
    if total < config.radix_rank_rows:
        return None
    arrays: list[tuple[np.ndarray, np.ndarray]] = []
    for p in parts:
        if p.null_count == 0:
            v, ok = p.to_numpy(zero_copy_only=False), _NO_MASK
        else:
            v = np.asarray(pc.fill_null(p, pa.scalar(0, typ)))
            ok = ~np.asarray(p.is_null())
        if v.dtype.kind != "i" and v.dtype.itemsize >= 8:
            return None  # uint64: beyond the int64 the kernels take
        arrays.append((v.astype(np.int64, copy=False), ok))
    # a part a thread from Config.parallel_text_rows rows (the text pool: the
    # component pool's tasks wait on it); each part's presence marked apart
    threads = min(config.workers, len(arrays)) if total >= config.parallel_text_rows else 1
    each = _text_pool(config.workers).map if threads > 1 else map
    ranges = [tuple(int(x) for x in r) for r in each(lambda a: value_range(*a), arrays)]
    seen = [(plo, phi) for plo, phi, m in ranges if m]
    if not seen:
        return None
    lo, hi = min(r[0] for r in seen), max(r[1] for r in seen)
    if hi - lo > config.rank_histogram_span * total + 64:
        return None
    out = np.empty(total, np.int32) if out is None else out
    if threads > 1:
        marks = list(each(lambda a: _marked(a, lo, hi), arrays))
        bits = marks[0]
        for m in marks[1:]:
            np.bitwise_or(bits, m, out=bits)
    else:
        bits = range_bitmap(hi - lo + 1)
        for v, ok in arrays:
            mark_range(v, ok, np.int64(lo), bits)
    before, uniq = rank_marks(bits, np.int64(lo))
    starts = np.cumsum([0] + [v.size for v, _ in arrays]).tolist()
    list(
        each(
            lambda i: lookup_range(
                *arrays[i], np.int64(lo), bits, before, out[starts[i] : starts[i + 1]]
            ),
            range(len(arrays)),
        )
    )
    return out, pa.array(uniq.astype(typ.to_pandas_dtype(), copy=False), typ)


def _marked(part: tuple[np.ndarray, np.ndarray], lo: int, hi: int) -> np.ndarray:
    """One part's presence bitmap over ``lo..hi`` (``kernels/ranks.mark_range``)."""
    bits = range_bitmap(hi - lo + 1)
    mark_range(*part, np.int64(lo), bits)
    return bits


class HashedDictionary:
    """The distinct values of an equality text column, known by their hashes
    only (materializing them would cost a random gather per value)."""

    def __init__(self, hashes: np.ndarray) -> None:
        self.hashes = hashes

    def __len__(self) -> int:
        return int(self.hashes.size)


def _text_codes(
    values: pa.Array, config: Config = DEFAULT, out: np.ndarray | None = None
) -> tuple[np.ndarray, pa.Array | HashedDictionary]:
    """Exact equality codes of a text column: partitioned hashing in numba
    (kernels/dictionary.py, on all of ``config``'s threads for a column of at
    least ``Config.parallel_text_rows``), Arrow's dictionary encoding on a hash
    collision."""
    offsets, data, valid = text_buffers(values)
    n = len(values)
    threads = config.workers
    tune = config.kernel_tuning()
    if threads > 1 and n >= config.parallel_text_rows:
        codes, _first, code_hash, exact = encode_bytes_parallel(
            offsets, data, valid, _text_pool(threads), threads, tune, out
        )
    else:
        codes, _first, code_hash, exact = encode_bytes(offsets, data, valid, tune)
    if exact:
        return codes, HashedDictionary(code_hash)
    enc = pc.dictionary_encode(values)
    return _filled(enc.indices), enc.dictionary


_TEXT_POOLS: dict[int, ThreadPoolExecutor] = {}


def _text_pool(threads: int) -> ThreadPoolExecutor:
    """The text dictionary's own pool (the component pool's tasks wait on it)."""
    pool = _TEXT_POOLS.get(threads)
    if pool is None:
        pool = _TEXT_POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="facet-text")
    return pool


_COMPONENT_POOLS: dict[int, ThreadPoolExecutor] = {}


def component_pool(threads: int) -> ThreadPoolExecutor:
    """The process-wide pool components encode on (threads start once, not per table)."""
    pool = _COMPONENT_POOLS.get(threads)
    if pool is None:
        pool = _COMPONENT_POOLS[threads] = ThreadPoolExecutor(
            threads, thread_name_prefix="facet-encode"
        )
    return pool


def start_pools(threads: int) -> None:
    """Start the encoding pools' threads now (a warm-up: not on the clock)."""
    if threads <= 1:
        return
    for p in (component_pool(threads), _text_pool(threads)):
        start_threads(p, threads)


def _is_dictionary_text(typ: pa.DataType) -> bool:
    return pa.types.is_dictionary(typ) and (
        pa.types.is_string(typ.value_type) or pa.types.is_large_string(typ.value_type)
    )


def _dictionary_text_codes(
    comp: Component,
    source: Source,
    schema: dict[str, str],
    use: ColumnUse,
    config: Config,
    rows: list[np.ndarray],
) -> tuple[pa.Array | HashedDictionary, list[tuple[str, Const]], list[int]] | None:
    """Codes of an equality text component whose columns arrived dictionary-encoded
    (Parquet dictionary pages, pandas categoricals): the dictionaries and the
    constants are coded (exactly, as any text), and each row takes its dictionary
    entry's code -- O(distinct) hashing instead of O(rows) -- written straight into
    ``rows`` (the code matrix's row of each column: no copy).  The codes are then
    made dense over the values present (a dictionary may hold unused or repeated
    entries).  Returns the dictionary, the constants' keys and their codes; ``None``
    when the component is not such: the general route."""
    if source.text or comp.ordered:
        return None
    cols = [source.table.column(c) for c in comp.columns]
    if any(schema.get(c, "text") != "text" for c in comp.columns) or not all(
        _is_dictionary_text(c.type) for c in cols
    ):
        return None
    dicts: list[pa.Array] = []
    chunks: list[tuple[int, int, pa.Array]] = []  # (column, offset of its dictionary, indices)
    base = 0
    for k, col in enumerate(cols):
        for chunk in col.chunks:
            d = chunk.dictionary.cast(pa.string())
            dicts.append(d)
            chunks.append((k, base, chunk.indices))
            base += len(d)
    const_keys = [k for c in comp.columns for k in use.constant_use if k[0] == c]
    consts = [pa.array([k[1].text], pa.string()) for k in const_keys]
    entries = dicts + consts or [pa.array([], pa.string())]  # (no chunks: no rows)
    joined = entries[0] if len(entries) == 1 else pa.concat_arrays(entries)  # (no copy of one)
    entry_codes, dictionary = _text_codes(joined, config)
    d = len(dictionary)
    present = np.zeros(max(d, 1), np.bool_)
    at = [0] * len(cols)
    for k, off, idx in chunks:
        m = len(idx)
        if m == 0:
            continue
        out = rows[k][at[k] : at[k] + m]
        at[k] += m
        if idx.null_count == m:  # every row NULL (its dictionary may be empty)
            out[:] = NULL
            continue
        indices = np.asarray(idx.fill_null(0) if idx.null_count else idx)
        if indices.dtype != np.int32:  # (Parquet's are int32; a categorical's narrower)
            indices = indices.astype(np.int32)
        valid = ~np.asarray(idx.is_null()) if idx.null_count else _NO_MASK
        gather_codes(entry_codes, indices, valid, off, out, present)
    const_codes = entry_codes[base:]
    present[const_codes[const_codes >= 0]] = True
    # dense over the values present: codes of unused dictionary entries are dropped
    if d and not present[:d].all():
        keep = np.flatnonzero(present[:d])
        remap = np.full(d + 1, NULL, np.int32)
        remap[keep] = np.arange(keep.size, dtype=np.int32)
        for row in rows:
            row[:] = remap[row]  # NULL stays NULL (the last slot)
        const_codes = remap[const_codes]
        dictionary = (
            HashedDictionary(dictionary.hashes[keep])
            if isinstance(dictionary, HashedDictionary)
            else dictionary.take(pa.array(keep))
        )
    return dictionary, const_keys, [int(c) for c in const_codes]


#: "no NULLs" for :func:`facet.kernels.dictionary.gather_codes`
_NO_MASK = np.empty(0, np.bool_)


def _filled(idx: pa.Array) -> np.ndarray:
    return (
        pc.fill_null(idx, pa.scalar(NULL, idx.type)).to_numpy(zero_copy_only=False).astype(np.int32)
    )


def counted_exactly(use: ColumnUse) -> set[str]:
    """The columns whose dictionary is exactly their distinct values (so the
    statistics know their cardinality exactly): alone in their component and
    compared with no constant."""
    with_constants = {col for col, _ in use.constant_use}
    return {
        c.columns[0]
        for c in use.components
        if len(c.columns) == 1 and c.columns[0] not in with_constants
    }


def component_parts(
    comp: Component, source: Source, schema: dict[str, str], use: ColumnUse
) -> tuple[str, list[pa.Array], list[tuple[str, Const]], list[str], dict[str, pa.Array]]:
    """A component typed for coding: its kind, the parts to code (its columns then
    the constants it meets, decimals as int64 multiples of one scale where they
    fit), the constants' keys, warnings, and the typed columns."""
    typed, kind, warns = component_arrays(comp, source, schema, use)
    consts: list[pa.Array] = []
    const_keys: list[tuple[str, Const]] = []
    for col in comp.columns:
        col_type = typed[col].type
        if kind in _NUMERIC and not source.text and col not in schema:
            # a typed column's own width: a float32 column's constants are float32
            col_type = storage_type(source.table.column(col).type)
            if pa.types.is_dictionary(col_type):
                col_type = col_type.value_type
        for k in use.constant_use:
            if k[0] == col:
                consts.append(_constant_value(k[1], kind, col, use, col_type))
                const_keys.append(k)
    parts = [typed[c] for c in comp.columns] + consts
    if kind == "decimal":  # exact int64 multiples of one scale where they fit
        parts = decimals_as_unscaled(parts) or parts
    return kind, parts, const_keys, warns, typed


def _joined(parts: list[pa.Array]) -> pa.Array:
    """Parts of one type as one array (the type of the first); one part is
    itself (Arrow's concatenation would copy it)."""
    typ = parts[0].type
    if len(parts) == 1:
        return parts[0]
    return pa.concat_arrays([p.cast(typ) for p in parts])


def one_array(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A column as one array: its only chunk as it is (combining would copy it)."""
    if isinstance(column, pa.ChunkedArray):
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


def coding_values(values: pa.Array) -> pa.Array:
    """Values as :func:`_codes` compares them: timestamps as int64, floats with
    -0.0 as 0.0."""
    if pa.types.is_timestamp(values.type):
        values = pc.cast(values, pa.int64())
    if pa.types.is_floating(values.type):
        values = pc.add(values, 0.0)  # -0.0 == 0.0 (constants included)
    return values


def text_buffers(values: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A string or binary array's offsets (int32, int64 for a large type: as Arrow
    holds them, not copied), data bytes and validity."""
    values = pa.concat_arrays([values]) if values.offset else values
    bufs = values.buffers()
    width = (
        np.int64
        if pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
        else np.int32
    )
    n = len(values)
    offsets = np.frombuffer(bufs[1], width)[: n + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
    valid = np.ones(n, np.bool_) if values.null_count == 0 else ~np.asarray(values.is_null())
    return offsets, data, valid


def encode(
    source: Source,
    use: ColumnUse,
    schema: dict[str, str] | None = None,
    config: Config = DEFAULT,
    *,
    buckets: bool = False,
) -> EncodedTable:
    """Type and encode every column the DCs use (one code space per component),
    on ``config``'s threads.  ``buckets``: a column that only row filters read (no
    ``t.A op t'.B`` and no other column compares with it) is coded by where its
    values fall among its constants (:func:`_bucket_codes`), not ranked -- for a
    run whose codes nobody extends or reads as values later (not a Detector's)."""
    schema = schema or {}
    for col in schema:
        if col not in source.all_columns:
            raise unknown_column(col, source, "--schema")
    for col in use.columns:
        if col not in source.all_columns:
            raise unknown_column(col, source, use.first_use[col].where())
    if not source.text:  # all-NULL columns link nothing (every predicate on one is false)
        use = isolate(
            use,
            {
                c
                for c in use.columns
                if c not in schema and native_kind(source.table.column(c).type) == "null"
            },
        )
    n = source.num_rows
    names = use.columns
    codes = np.empty((len(names), n), np.int32)
    index = {c: i for i, c in enumerate(names)}
    kinds: dict[str, str] = {}
    ordered: dict[str, bool] = {}
    const_codes: dict[tuple[str, Const], int] = {}
    domain: dict[str, int] = {}
    values: dict[str, pa.Array] = {}
    distinct: dict[str, int] = {}
    warnings: list[str] = []

    def one(comp: Component):
        """Type and encode one component (independent of the others)."""
        rows = [codes[index[col]] for col in comp.columns]
        coded = _dictionary_text_codes(comp, source, schema, use, config, rows)
        if coded is not None:  # text that arrived dictionary-encoded: code the dictionaries
            dictionary, const_keys, const_codes = coded
            consts_of = dict(zip(const_keys, const_codes, strict=True))
            return (
                "text",
                dictionary,
                [],
                consts_of,
                {c: (None, "dictionary") for c in comp.columns},
            )
        kind, parts, const_keys, warns, typed = component_parts(comp, source, schema, use)
        region = None
        got = None
        if buckets and len(comp.columns) == 1 and comp.columns[0] not in use.paired:
            got = _bucket_codes(parts, config, comp.ordered)
        if got is not None:
            c_codes, dictionary = got
            route = "buckets"
        elif kind in _NUMERIC and len({p.type for p in parts}) > 1:
            c_codes, dictionary = rank_numbers(parts)  # mixed types: by exact value
            route = "mixed"
        else:
            # the component's rows of the code matrix, when they lie together and no
            # constant's code follows them: the codes are written there, not copied
            at = index[comp.columns[0]]
            if not const_keys and all(index[c] == at + i for i, c in enumerate(comp.columns)):
                region = codes[at : at + len(comp.columns)].reshape(-1)
            got = _integer_parts_codes(parts, config, region) if len(parts) > 1 else None
            if got is None:
                got = _codes(_joined(parts), comp.ordered, config, region)
            c_codes, dictionary = got
            route = "text" if isinstance(dictionary, HashedDictionary) else "ranks"
        if c_codes is not region:
            for i, col in enumerate(comp.columns):
                codes[index[col]] = c_codes[i * n : (i + 1) * n]
        base = len(comp.columns) * n
        return (
            kind,
            dictionary,
            warns,
            {key: int(c_codes[base + j]) for j, key in enumerate(const_keys)},
            {c: (typed[c].type, route) for c in comp.columns},
        )

    comps = use.components
    alone = counted_exactly(use)
    if len(comps) > 1 and n >= config.parallel_encode_rows and config.workers > 1:
        # pyarrow and numpy release the GIL: components encode on all cores
        done = list(component_pool(config.workers).map(one, comps))
    else:
        done = [one(c) for c in comps]
    recipes: dict[str, tuple[pa.DataType | None, str]] = {}
    for comp, (kind, dictionary, warns, consts_of, recipe) in zip(comps, done, strict=True):
        warnings.extend(warns)
        const_codes.update(consts_of)
        recipes.update(recipe)
        for col in comp.columns:
            kinds[col] = kind
            ordered[col] = comp.ordered
            domain[col] = len(dictionary)
            values[col] = dictionary
        exact = not isinstance(dictionary, ConstantBuckets)  # (buckets: not its values)
        if len(comp.columns) == 1 and comp.columns[0] in alone and exact:
            distinct[comp.columns[0]] = len(dictionary)
    return EncodedTable(
        n,
        codes,
        index,
        kinds,
        ordered,
        const_codes,
        domain,
        warnings,
        source.text,
        values,
        distinct,
        recipes,
    )
