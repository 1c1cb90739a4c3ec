"""A DC as plain predicates for the benchmark peers (DuckDB, Polars, pandas, Spark SQL, ...).

Every peer worker of ``bench/suite.py`` gets one DC as facet's canonical text (``not(t.A op
t'.B and ...)``, names with odd characters in backticks, string constants in double quotes)
and a typed Parquet table (columns typed as facet types them, docs/semantics.md §4.3, plus
``rid``: the 0-based row number). This module parses the text with facet's own parser, so
every peer reads exactly the DC facet reads, and gives:

* :func:`parse` -- ``Shape``: the predicates as ``Pred(left, op, right)`` of ``Operand`` s
  (``side`` 0 for ``t``, 1 for ``t'``, None for a constant), and whether the DC is
  single-tuple (then every column operand refers to the one row, whichever tuple name it has);
* :func:`constant` -- a constant's value in the type of the column it meets (docs/semantics.md
  §4.4: a constant takes the column's type), as a Python value;
* :func:`sql` -- the count query for SQL peers: ordered pairs of distinct rows
  (``t.rid <> t2.rid``), or rows for a single-tuple DC (docs/semantics.md §1).

NULL semantics are SQL's: a predicate with a NULL operand is false (``!=`` included), so a
non-SQL peer must drop NULLs of every compared column itself.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa

ORDER_OPS = ("<", "<=", ">", ">=")
FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(frozen=True)
class Operand:
    side: int | None  # 0: t, 1: t', None: a constant
    column: str | None = None
    text: str | None = None  # a constant as written (unquoted)
    quoted: bool = False


@dataclass(frozen=True)
class Pred:
    left: Operand
    op: str  # = != < <= > >=
    right: Operand


@dataclass(frozen=True)
class Shape:
    preds: tuple[Pred, ...]
    single_tuple: bool

    def columns(self) -> list[str]:
        seen: dict[str, None] = {}
        for p in self.preds:
            for o in (p.left, p.right):
                if o.column is not None:
                    seen[o.column] = None
        return list(seen)


def parse(dc_text: str) -> Shape:
    """The DC ``dc_text`` (one DC: facet's canonical text) as a :class:`Shape`."""
    from facet.language.ast import Col
    from facet.language.parser import parse_dc

    dcs = parse_dc(dc_text)
    if len(dcs) != 1:
        raise ValueError(f"expected one DC, got {len(dcs)}: {dc_text!r}")
    dc = dcs[0]

    def operand(o: Any) -> Operand:
        if isinstance(o, Col):
            return Operand(o.tuple, o.name)
        return Operand(None, text=o.text, quoted=o.quoted)

    preds = tuple(Pred(operand(p.left), p.op, operand(p.right)) for p in dc.predicates)
    return Shape(preds, dc.arity == 1)


def constant(text: str, typ: pa.DataType) -> Any:
    """``text`` (a constant as written) as a value of the Arrow type ``typ``."""
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return text
    if pa.types.is_boolean(typ):
        low = text.strip().lower()
        if low in ("true", "false"):
            return low == "true"
        raise ValueError(f"{text!r} is not a boolean")
    if pa.types.is_integer(typ):
        d = Decimal(text.strip())
        return int(d) if d == d.to_integral_value() else float(d)
    if pa.types.is_floating(typ) or pa.types.is_decimal(typ):
        return float(Decimal(text.strip()))
    if pa.types.is_timestamp(typ):
        return _dt.datetime.fromisoformat(text.strip())
    if pa.types.is_date(typ):
        return _dt.date.fromisoformat(text.strip())
    raise ValueError(f"no constant of type {typ}")


_SQL_OP = {"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def sql_ident(name: str, quote: str = '"') -> str:
    return quote + name.replace(quote, quote + quote) + quote


def sql_literal(value: Any, backslash: bool = False) -> str:
    """A constant as SQL text (``backslash``: Spark SQL's string escapes)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, _dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, _dt.date):
        return f"DATE '{value.isoformat()}'"
    s = str(value)
    if backslash:
        return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return "'" + s.replace("'", "''") + "'"


def sql(
    dc_text: str,
    schema: pa.Schema,
    table: str = "r",
    quote: str = '"',
    backslash: bool = False,
) -> str:
    """``SELECT count(*)`` of the DC's violations over table ``table`` with ``rid``:
    ordered pairs of distinct rows, or rows for a single-tuple DC. ``quote`` is the
    identifier quote (``"`` DuckDB, `````` Spark SQL)."""
    shape = parse(dc_text)
    alias = ("t",) * 2 if shape.single_tuple else ("t", "t2")
    types = {f.name: f.type for f in schema}

    def other_column(p: Pred, o: Operand) -> str | None:
        for x in (p.left, p.right):
            if x is not o and x.column is not None:
                return x.column
        return None

    def text(p: Pred, o: Operand) -> str:
        if o.side is not None:
            return f"{alias[o.side]}.{sql_ident(o.column, quote)}"
        col = other_column(p, o)
        value = constant(o.text, types[col]) if col is not None else o.text
        return sql_literal(value, backslash)

    where = " AND ".join(
        f"{text(p, p.left)} {_SQL_OP[p.op]} {text(p, p.right)}" for p in shape.preds
    )
    if shape.single_tuple:
        return f"SELECT count(*) FROM {table} t WHERE {where}"
    return f"SELECT count(*) FROM {table} t JOIN {table} t2 ON t.rid <> t2.rid AND {where}"
