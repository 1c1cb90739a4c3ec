"""The obvious O(n^2) evaluator of docs/semantics.md — the reference every engine is compared with.

It works on a *typed* Arrow table (ints, floats, decimals, strings, bools, binary,
timestamps and dates; NULLs) and deliberately does the dumbest correct thing: plain
Python loops over every ordered pair of row positions.  Keep tables small (n <= ~300).

Semantics (docs/semantics.md):

* two-tuple DC: the ordered pairs ``(t, t')`` of row positions with ``t != t'`` for which
  every predicate holds; single-tuple DC: the row positions for which every predicate holds;
* a predicate with a NULL operand is false; float NaN is NULL; ``-0.0 == 0.0``;
* ints, floats and decimals compare numerically and exactly (Python's mixed int/float/Decimal
  comparisons are exact); strings compare by code point (= UTF-8 byte order);
* a constant takes the type of the column it meets: text on a string column; on a numeric
  column a number (a non-number is a ``ValueError``), exact (an int or a ``Decimal``)
  against integers and decimals, the nearest float of the column's width against a float
  column (float16/32/64); ``true``/``false``/``1``/``0`` on a boolean column; an ISO-8601
  date/time on a timestamp/date column (naive = UTC);
* ``t.A op t.B`` (same tuple) is a row condition; ``t.A = t.A`` means "A is not NULL".

Only the DC AST is imported from facet.
"""

from __future__ import annotations

import datetime as _dt
import operator
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa

from facet.language.ast import DC, Col, Const, Predicate

__all__ = [
    "naive_pairs",
    "naive_count",
    "naive_rows_involved",
    "naive_cells",
    "parse_number",
    "parse_iso_ns",
]

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

# docs/semantics.md §4.3 number grammar (ASCII digits only).
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_ISO = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})"
    r"(?:[T ](?P<h>[0-9]{2}):(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2})(?:\.(?P<f>[0-9]{1,9}))?)?"
    r"(?P<tz>Z|[+-][0-9]{2}:[0-9]{2})?)?"
)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_UNIT_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def parse_number(text: str) -> int | float:
    """A numeric constant: int for an integer literal, else float; ValueError otherwise."""
    s = text.strip(" ")
    if not _NUMBER.fullmatch(s):
        raise ValueError(f"constant {text!r} is not a number")
    return int(s) if _INTEGER.fullmatch(s) else float(s)


def parse_iso_ns(text: str) -> int:
    """An ISO-8601 date or date-time as integer nanoseconds since the epoch (naive = UTC)."""
    m = _ISO.fullmatch(text.strip(" "))
    if not m:
        raise ValueError(f"constant {text!r} is not an ISO-8601 date/time")
    g = m.groupdict()
    when = _dt.datetime(
        int(g["y"]),
        int(g["mo"]),
        int(g["d"]),
        int(g["h"] or 0),
        int(g["mi"] or 0),
        int(g["s"] or 0),
        tzinfo=_dt.UTC,
    )
    delta = when - _EPOCH
    ns = ((delta.days * 86400 + delta.seconds) * 10**6 + delta.microseconds) * 1000
    frac = g["f"] or ""
    ns += int(frac.ljust(9, "0")) if frac else 0
    tz = g["tz"]
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        minutes = int(tz[1:3]) * 60 + int(tz[4:6])
        ns -= sign * minutes * 60 * 10**9
    return ns


# ---------------------------------------------------------------------------------------
# Columns as plain Python lists of comparable values (None = NULL), plus a kind that says
# which values a column may be compared with.


def _storage(typ: pa.DataType) -> pa.DataType:
    """Extension types (UUID, JSON) compare by their storage; dictionaries by value."""
    while isinstance(typ, pa.BaseExtensionType):
        typ = typ.storage_type
    return typ.value_type if pa.types.is_dictionary(typ) else typ


def _kind(typ: pa.DataType) -> str:
    typ = _storage(typ)
    if pa.types.is_dictionary(typ):
        return _kind(typ.value_type)
    if pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_decimal(typ):
        return "num"
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or _is_string_view(typ):
        return "str"
    if pa.types.is_boolean(typ):
        return "bool"
    if pa.types.is_null(typ):
        return "null"  # every value NULL: compares with anything, never holds
    if pa.types.is_timestamp(typ) or pa.types.is_date(typ):
        return "time"
    if pa.types.is_time(typ):
        return "clock"  # time of day: compares with other times of day
    if pa.types.is_duration(typ):
        return "duration"
    if (
        pa.types.is_binary(typ)
        or pa.types.is_large_binary(typ)
        or pa.types.is_fixed_size_binary(typ)
    ):
        return "bytes"
    raise TypeError(f"naive: unsupported column type {typ}")


def _is_string_view(typ: pa.DataType) -> bool:
    f = getattr(pa.types, "is_string_view", None)
    return bool(f and f(typ))


def _values(table: pa.Table, name: str) -> tuple[str, list[Any]]:
    if name not in table.column_names:
        raise KeyError(f"column {name!r} not in table (columns: {table.column_names})")
    col = table.column(name)
    if isinstance(col.type, pa.BaseExtensionType):
        col = pa.chunked_array([c.storage for c in col.chunks], _storage(col.type))
    typ = col.type
    if pa.types.is_dictionary(typ):
        col = col.cast(typ.value_type)
        typ = typ.value_type
    kind = _kind(typ)
    if kind in ("clock", "duration"):
        factor = _UNIT_NS[typ.unit]
        raw = col.cast(pa.int64() if typ.bit_width == 64 else pa.int32()).to_pylist()
        return kind, [None if v is None else v * factor for v in raw]
    if kind == "time":
        if pa.types.is_timestamp(typ):
            factor = _UNIT_NS[typ.unit]
            raw = col.cast(pa.int64()).to_pylist()
        elif typ == pa.date32():
            factor = 86400 * 10**9
            raw = col.cast(pa.int32()).to_pylist()
        else:  # date64: milliseconds
            factor = 10**6
            raw = col.cast(pa.int64()).to_pylist()
        return kind, [None if v is None else v * factor for v in raw]
    vals = col.to_pylist()
    if kind == "num":
        out: list[Any] = []
        for v in vals:
            if v is None or _is_nan(v):  # NaN is NULL
                out.append(None)
            elif isinstance(v, float) and v == 0.0:
                out.append(0.0)  # -0.0 == 0.0 (Python agrees anyway; be explicit)
            else:
                out.append(v)
        return kind, out
    return kind, vals


def _is_nan(v: Any) -> bool:
    if isinstance(v, float):
        return v != v
    return isinstance(v, Decimal) and v.is_nan()


def _const_value(const: Const, kind: str, typ: pa.DataType | None = None) -> Any:
    text = const.text
    if kind == "null":
        return None
    if kind == "str":
        return text
    if kind == "num":
        s = text.strip(" ")
        if not _NUMBER.fullmatch(s):
            raise ValueError(f"constant {text!r} is not a number")
        if typ is not None and pa.types.is_floating(typ):
            x = float(Decimal(s))
            width = {16: np.float16, 32: np.float32}.get(typ.bit_width)
            if width is None:
                return x
            with np.errstate(over="ignore"):  # beyond the width's range: +-inf
                return float(width(x))
        return int(s) if _INTEGER.fullmatch(s) else Decimal(s)
    if kind == "bool":
        low = text.strip(" ").lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        if _NUMBER.fullmatch(low):  # a boolean is the number 0 or 1 (§4.4)
            return int(low) if _INTEGER.fullmatch(low) else Decimal(low)
        raise ValueError(f"constant {text!r} is not a boolean")
    if kind == "time":
        return parse_iso_ns(text)
    if kind == "bytes":
        return text.encode("utf-8")
    raise AssertionError(kind)


# An operand getter maps (row of t, row of t') to a value or None.
Getter = Callable[[int, int], Any]


def _compile(table: pa.Table, pred: Predicate, cache: dict) -> tuple[Getter, Callable, Getter]:
    def column(c: Col) -> tuple[str, Getter]:
        if c.name not in cache:
            cache[c.name] = _values(table, c.name)
        kind, vals = cache[c.name]
        if c.tuple == 0:
            return kind, lambda i, j: vals[i]
        return kind, lambda i, j: vals[j]

    left, right = pred.left, pred.right
    if isinstance(left, Const) and isinstance(right, Const):
        raise ValueError(f"predicate {pred.text()} compares two constants")
    if isinstance(left, Col) and isinstance(right, Col):
        lk, lget = column(left)
        rk, rget = column(right)
        if lk != rk and "null" not in (lk, rk) and {lk, rk} != {"num", "bool"}:
            raise ValueError(f"predicate {pred.text()} compares a {lk} column with a {rk} column")
        return lget, _OPS[pred.op], rget
    if isinstance(left, Col):
        lk, lget = column(left)
        cv = _const_value(right, lk, _storage(table.column(left.name).type))
        return lget, _OPS[pred.op], lambda i, j: cv
    rk, rget = column(right)
    cv = _const_value(left, rk, _storage(table.column(right.name).type))
    return (lambda i, j: cv), _OPS[pred.op], rget


def _holds(compiled, i: int, j: int) -> bool:
    for lget, op, rget in compiled:
        a = lget(i, j)
        if a is None:
            return False
        b = rget(i, j)
        if b is None:
            return False
        if not op(a, b):
            return False
    return True


def naive_pairs(table: pa.Table, dc: DC) -> set[tuple[int, int]] | set[int]:
    """Violations of ``dc`` in ``table``: ordered row pairs (two-tuple DC) or rows (single-tuple)."""
    cache: dict = {}
    compiled = [_compile(table, p, cache) for p in dc.predicates]
    n = table.num_rows
    if dc.arity == 1:
        # Single-tuple DC: every column reference (t or t') reads the same row.
        return {i for i in range(n) if _holds(compiled, i, i)}
    out: set[tuple[int, int]] = set()
    for i in range(n):
        for j in range(n):
            if i != j and _holds(compiled, i, j):
                out.add((i, j))
    return out


def naive_count(table: pa.Table, dc: DC) -> int:
    """Number of violations (ordered pairs, or rows for a single-tuple DC)."""
    return len(naive_pairs(table, dc))


def naive_rows_involved(table: pa.Table, dc: DC) -> int:
    """Distinct rows in any violating pair (either side), or the violating rows."""
    pairs = naive_pairs(table, dc)
    if dc.arity == 1:
        return len(pairs)
    rows: set[int] = set()
    for i, j in pairs:
        rows.add(i)
        rows.add(j)
    return len(rows)


def naive_cells(table: pa.Table, dc: DC) -> dict[tuple[int, str], int]:
    """docs/semantics.md §7 ``cells``: each violation adds 1 to every cell its rows' sides touch.

    For a two-tuple violation ``(t, t')`` the cells are ``(t, A)`` for every column ``A`` of
    ``t`` in any predicate and ``(t', B)`` for every column ``B`` of ``t'``; for a single-tuple
    violation, the row's cells of every column in the DC.  Returns ``{(tid, column): count}``.
    """
    side_cols: tuple[list[str], list[str]] = ([], [])
    for p in dc.predicates:
        for c in p.columns():
            side = 0 if dc.arity == 1 else c.tuple
            if c.name not in side_cols[side]:
                side_cols[side].append(c.name)
    out: dict[tuple[int, str], int] = {}
    pairs = naive_pairs(table, dc)
    for v in pairs:
        i, j = (v, v) if dc.arity == 1 else v
        for name in side_cols[0]:
            out[(i, name)] = out.get((i, name), 0) + 1
        if dc.arity == 2:
            for name in side_cols[1]:
                out[(j, name)] = out.get((j, name), 0) + 1
    return out
