"""DuckDB self-join oracle for CSV files under docs/semantics.md §4.3's CSV typing.

Written independently of facet's loader: the CSV is read by DuckDB as text (only empty
fields, quoted or not, are NULL; ``NA``, ``N/A``, ``null`` stay text; RFC 4180 quoting with
multi-line fields), row ids are 0-based file order, and the types come from the DCs:

* *ordered* columns are those used by any ``< <= > >=`` predicate (against a column or a
  constant) in any of the DCs given, closed under "compared in any way with an ordered
  column" along column-to-column predicates (same or different tuple);
* types are decided per connected component of columns linked by column-to-column
  predicates (counts pooled), so cross-column comparisons are well typed;
* an ordered component is a timestamp when more of its non-empty values parse as ISO-8601
  dates/times than as numbers (ties -> number); otherwise numeric: after trimming spaces a
  value must fully match ``[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?`` (else NULL); int64
  when every parsed value is integral (and fits int64), else float64; an ordered column in
  which no value parses is an error (ValueError);
* every other column compares as the exact text; a constant takes its column's type.

Counts are ``SELECT count(*) FROM r t, r t2 WHERE t.rid <> t2.rid AND ...`` (single-tuple
DCs: ``SELECT count(*) FROM r t WHERE ...``).

``python_table`` builds the same typed table as an Arrow table with Python's csv module (no
DuckDB), for the naive evaluator.
"""

from __future__ import annotations

import csv
import datetime as _dt
import os
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation

import duckdb
import pyarrow as pa

from facet.language.ast import DC, Col, Const

__all__ = [
    "NUMBER_RE",
    "ISO_RE",
    "ordered_columns",
    "column_components",
    "csv_types",
    "csv_columns",
    "duckdb_counts",
    "duckdb_records",
    "duckdb_pairs",
    "duckdb_rows_involved",
    "duckdb_violations",
    "dc_sql",
    "python_table",
    "read_csv_records",
]

# docs/semantics.md §4.3 number grammar; ASCII digits only (Python's \d would accept other scripts).
NUMBER_RE = r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
INT_RE = r"[+-]?[0-9]+"
# ISO-8601 date, or date-time with optional seconds, fraction and offset (Z or +HH:MM).
ISO_RE = (
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?"
)
_NUMBER = re.compile(NUMBER_RE)
_INT = re.compile(INT_RE)
_ISO = re.compile(ISO_RE)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
ORDER_OPS = ("<", "<=", ">", ">=")
SQL_OPS = {"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


# ---------------------------------------------------------------------------------------
# value parsing (Python side)


def _trim(v: str) -> str:
    return v.strip(" ")


def parses_as_number(v: str) -> bool:
    return _NUMBER.fullmatch(_trim(v)) is not None


def parse_timestamp(v: str) -> _dt.datetime | None:
    """ISO-8601 value -> aware UTC datetime (naive = UTC), or None."""
    s = _trim(v)
    if not _ISO.fullmatch(s):
        return None
    try:
        when = _dt.datetime.fromisoformat(s)
    except ValueError:  # e.g. 2021-02-30
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    return when.astimezone(_dt.UTC)


def parses_as_timestamp(v: str) -> bool:
    return parse_timestamp(v) is not None


def _integral(v: str) -> bool:
    """Is the (grammar-matching) value a whole number that fits int64?"""
    try:
        d = Decimal(_trim(v))
    except InvalidOperation:  # pragma: no cover - grammar already checked
        return False
    if not d.is_finite() or d != d.to_integral_value():
        return False
    if d.adjusted() > 20:  # far beyond int64; avoid materialising huge ints
        return False
    return _INT64_MIN <= int(d) <= _INT64_MAX


# ---------------------------------------------------------------------------------------
# which columns are ordered, and how they are linked


def _columns(dcs: Iterable[DC]) -> list[str]:
    out: dict[str, None] = {}
    for dc in dcs:
        for p in dc.predicates:
            for c in p.columns():
                out.setdefault(c.name, None)
    return list(out)


def column_components(dcs: Sequence[DC]) -> dict[str, str]:
    """Union-find over the columns the DCs use; maps each column to its component's root."""
    parent: dict[str, str] = {c: c for c in _columns(dcs)}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for dc in dcs:
        for p in dc.predicates:
            if isinstance(p.left, Col) and isinstance(p.right, Col):
                a, b = find(p.left.name), find(p.right.name)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    return {c: find(c) for c in parent}


def ordered_columns(dcs: Sequence[DC]) -> set[str]:
    """Columns in an order predicate, closed along column-to-column predicates."""
    comp = column_components(dcs)
    roots = {
        comp[c.name] for dc in dcs for p in dc.predicates if p.op in ORDER_OPS for c in p.columns()
    }
    return {c for c, r in comp.items() if r in roots}


# ---------------------------------------------------------------------------------------
# loading with DuckDB


def _q(name: str) -> str:
    """SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    """SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute("SET threads = 1")  # file order is row order
    con.execute("SET preserve_insertion_order = true")
    con.execute("SET TimeZone = 'UTC'")
    return con


def _read_csv_sql(path: str | os.PathLike) -> str:
    return (
        f"read_csv({_lit(os.fspath(path))}, all_varchar = true, header = true, delim = ',', "
        "quote = '\"', escape = '\"', null_padding = false, nullstr = '', "
        "allow_quoted_nulls = true, strict_mode = true, auto_detect = false, "
        f"columns = {_columns_struct(path)})"
    )


def csv_columns(path: str | os.PathLike) -> list[str]:
    """Header of a CSV file (Python's csv module, RFC 4180)."""
    with open(path, newline="", encoding="utf-8") as f:
        header = next(csv.reader(f))
    if header and header[0].startswith("\ufeff"):
        header[0] = header[0][1:]
    return header


def _columns_struct(path) -> str:
    cols = csv_columns(path)
    return "{" + ", ".join(f"{_lit(c)}: 'VARCHAR'" for c in cols) + "}"


def _load_raw(con: duckdb.DuckDBPyConnection, path) -> list[str]:
    con.execute(f"CREATE OR REPLACE TABLE raw AS SELECT * FROM {_read_csv_sql(path)}")
    return csv_columns(path)


def duckdb_records(path: str | os.PathLike) -> list[tuple[str | None, ...]]:
    """All records as DuckDB reads them (text, NULL for empty fields), in row-id order."""
    con = _connect()
    try:
        _load_raw(con, path)
        return con.execute("SELECT * FROM raw ORDER BY rowid").fetchall()
    finally:
        con.close()


def _raw_values(con, name: str) -> list[str]:
    return [
        v
        for (v,) in con.execute(
            f"SELECT {_q(name)} FROM raw WHERE {_q(name)} IS NOT NULL"
        ).fetchall()
    ]


def _decide_types(columns: list[str], dcs: Sequence[DC], values_of) -> dict[str, str]:
    for c in _columns(dcs):
        if c not in columns:
            raise KeyError(f"column {c!r} used by a DC is not in the file (columns: {columns})")
    comp = column_components(dcs)
    ordered = ordered_columns(dcs)
    types = {c: "text" for c in comp}
    groups: dict[str, list[str]] = {}
    for c in comp:
        if c in ordered:
            groups.setdefault(comp[c], []).append(c)
    for members in groups.values():
        n_num = n_ts = 0
        integral = True
        per_col: dict[str, tuple[int, int]] = {}
        for c in members:
            vals = [v for v in values_of(c) if v != ""]
            num = [v for v in vals if parses_as_number(v)]
            ts = sum(1 for v in vals if parses_as_timestamp(v))
            n_num += len(num)
            n_ts += ts
            integral = integral and all(_integral(v) for v in num)
            per_col[c] = (len(num), ts)
        if n_ts > n_num:
            typ = "timestamp"
            bad = [c for c in members if per_col[c][1] == 0]
        else:
            typ = "int" if integral else "float"
            bad = [c for c in members if per_col[c][0] == 0]
        if bad:
            raise ValueError(f"ordered column(s) {bad} have no value that parses as {typ}")
        for c in members:
            types[c] = typ
    return types


def csv_types(path: str | os.PathLike, dcs: Sequence[DC]) -> dict[str, str]:
    """Column -> 'text' | 'int' | 'float' | 'timestamp' for the columns the DCs use."""
    con = _connect()
    try:
        columns = _load_raw(con, path)
        return _decide_types(columns, dcs, lambda c: _raw_values(con, c))
    finally:
        con.close()


def _typed_expr(name: str, typ: str) -> str:
    x = f"trim({_q(name)}, ' ')"
    if typ == "text":
        return _q(name)
    if typ == "int":
        return (
            f"CASE WHEN regexp_full_match({x}, {_lit(INT_RE)}) THEN CAST({x} AS BIGINT) "
            f"WHEN regexp_full_match({x}, {_lit(NUMBER_RE)}) THEN CAST(CAST({x} AS DOUBLE) AS BIGINT) END"
        )
    if typ == "float":
        v = f"CAST({x} AS DOUBLE)"
        return (
            f"CASE WHEN regexp_full_match({x}, {_lit(NUMBER_RE)}) THEN "
            f"(CASE WHEN {v} = 0 THEN CAST(0 AS DOUBLE) ELSE {v} END) END"
        )
    if typ == "timestamp":  # microseconds since the epoch, UTC
        return (
            f"CASE WHEN regexp_full_match({x}, {_lit(ISO_RE)}) "
            f"THEN epoch_us(TRY_CAST({x} AS TIMESTAMPTZ)) END"
        )
    raise ValueError(f"unknown type {typ!r}")


def _rid_name(columns: list[str]) -> str:
    rid = "rid"
    while rid in columns:
        rid = "_" + rid
    return rid


def _build_typed(con, path, dcs: Sequence[DC], types: dict[str, str] | None) -> tuple[str, dict]:
    columns = _load_raw(con, path)
    if types is None:
        types = _decide_types(columns, dcs, lambda c: _raw_values(con, c))
    rid = _rid_name(columns)
    used = [c for c in _columns(dcs)]
    select = ", ".join(
        [f"rowid AS {_q(rid)}"] + [f"{_typed_expr(c, types[c])} AS {_q(c)}" for c in used]
    )
    con.execute(f"CREATE OR REPLACE TABLE r AS SELECT {select} FROM raw")
    return rid, types


def _const_sql(const: Const, typ: str) -> str:
    text = const.text
    if typ == "text":
        return _lit(text)
    s = _trim(text)
    if typ in ("int", "float"):
        if not _NUMBER.fullmatch(s):
            raise ValueError(f"constant {text!r} is not a number")
        if _INT.fullmatch(s):
            return f"CAST({_lit(s)} AS HUGEINT)"
        return f"CAST({_lit(s)} AS DOUBLE)"
    if typ == "timestamp":
        if parse_timestamp(s) is None:
            raise ValueError(f"constant {text!r} is not an ISO-8601 date/time")
        return f"epoch_us(CAST({_lit(s)} AS TIMESTAMPTZ))"
    raise ValueError(typ)


def dc_sql(dc: DC, types: dict[str, str], rid: str = "rid", select: str = "count(*)") -> str:
    """The self-join query for one DC over table ``r`` (aliases ``t`` and ``t2``)."""
    single = dc.arity == 1
    alias = ("t", "t") if single else ("t", "t2")

    def operand(o, other) -> str:
        if isinstance(o, Col):
            return f"{alias[o.tuple]}.{_q(o.name)}"
        if not isinstance(other, Col):
            raise ValueError("predicate compares two constants")
        return _const_sql(o, types[other.name])

    conds = [] if single else [f"t.{_q(rid)} <> t2.{_q(rid)}"]
    for p in dc.predicates:
        conds.append(f"({operand(p.left, p.right)} {SQL_OPS[p.op]} {operand(p.right, p.left)})")
    where = " AND ".join(conds) if conds else "true"
    source = "r t" if single else "r t, r t2"
    return f"SELECT {select} FROM {source} WHERE {where}"


def duckdb_counts(
    path: str | os.PathLike, dcs: Sequence[DC], types: dict[str, str] | None = None
) -> list[int]:
    """One exact violation count per DC; types inferred from all ``dcs`` unless given."""
    con = _connect()
    try:
        rid, types = _build_typed(con, path, dcs, types)
        return [int(con.execute(dc_sql(dc, types, rid)).fetchone()[0]) for dc in dcs]
    finally:
        con.close()


def duckdb_pairs(
    path: str | os.PathLike,
    dc: DC,
    type_dcs: Sequence[DC] | None = None,
    types: dict[str, str] | None = None,
) -> set[tuple[int, int]] | set[int]:
    """Violating ordered pairs (row ids, 0-based file order), or rows for a single-tuple DC.

    Types come from ``types``, else from ``type_dcs`` (e.g. the whole rules file; must
    include ``dc``), else from ``dc`` alone.
    """
    dcs = list(type_dcs) if type_dcs is not None else [dc]
    if dc not in dcs:
        dcs.append(dc)
    con = _connect()
    try:
        rid, types = _build_typed(con, path, dcs, types)
        if dc.arity == 1:
            return {
                int(i) for (i,) in con.execute(dc_sql(dc, types, rid, f"t.{_q(rid)}")).fetchall()
            }
        q = dc_sql(dc, types, rid, f"t.{_q(rid)}, t2.{_q(rid)}")
        return {(int(i), int(j)) for i, j in con.execute(q).fetchall()}
    finally:
        con.close()


def duckdb_rows_involved(
    path: str | os.PathLike,
    dc: DC,
    type_dcs: Sequence[DC] | None = None,
    types: dict[str, str] | None = None,
) -> int:
    """Distinct rows in any violating pair (either side), or violating rows."""
    dcs = list(type_dcs) if type_dcs is not None else [dc]
    if dc not in dcs:
        dcs.append(dc)
    con = _connect()
    try:
        rid, types = _build_typed(con, path, dcs, types)
        if dc.arity == 1:
            return int(con.execute(dc_sql(dc, types, rid)).fetchone()[0])
        left = dc_sql(dc, types, rid, f"t.{_q(rid)} AS x")
        right = dc_sql(dc, types, rid, f"t2.{_q(rid)} AS x")
        return int(con.execute(f"SELECT count(*) FROM ({left} UNION {right})").fetchone()[0])
    finally:
        con.close()


def duckdb_violations(
    path: str | os.PathLike, dcs: Sequence[DC], types: dict[str, str] | None = None
) -> list[tuple[set, int]]:
    """For each DC: (violating pairs or rows, rows involved), loading the file once.

    Types are inferred from all ``dcs`` unless given.
    """
    con = _connect()
    try:
        rid, types = _build_typed(con, path, dcs, types)
        out: list[tuple[set, int]] = []
        for dc in dcs:
            if dc.arity == 1:
                rows = {
                    int(i)
                    for (i,) in con.execute(dc_sql(dc, types, rid, f"t.{_q(rid)}")).fetchall()
                }
                out.append((rows, len(rows)))
                continue
            q = dc_sql(dc, types, rid, f"t.{_q(rid)}, t2.{_q(rid)}")
            pairs = {(int(i), int(j)) for i, j in con.execute(q).fetchall()}
            left = dc_sql(dc, types, rid, f"t.{_q(rid)} AS x")
            right = dc_sql(dc, types, rid, f"t2.{_q(rid)} AS x")
            involved = int(
                con.execute(f"SELECT count(*) FROM ({left} UNION {right})").fetchone()[0]
            )
            out.append((pairs, involved))
        return out
    finally:
        con.close()


# ---------------------------------------------------------------------------------------
# the same typed table via Python's csv module (for the naive evaluator)


def read_csv_records(path: str | os.PathLike) -> tuple[list[str], list[list[str]]]:
    """Header and records (RFC 4180; blank lines skipped, as DuckDB does)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f, strict=True) if r != []]
    header, records = rows[0], rows[1:]
    if header and header[0].startswith("\ufeff"):
        header[0] = header[0][1:]
    for i, rec in enumerate(records):
        if len(rec) != len(header):
            raise ValueError(f"{path}: record {i} has {len(rec)} fields, header has {len(header)}")
    return header, records


def python_table(
    path: str | os.PathLike, dcs: Sequence[DC] = (), types: dict[str, str] | None = None
) -> pa.Table:
    """Typed Arrow table of the whole CSV: DC columns typed, all others strings.

    Empty field -> NULL; numbers per the grammar (else NULL); timestamps as UTC microseconds.
    Types are inferred from ``dcs`` with Python only, unless given.
    """
    header, records = read_csv_records(path)
    cols = {name: [rec[k] for rec in records] for k, name in enumerate(header)}
    if types is None:
        types = _decide_types(header, dcs, lambda c: [v for v in cols[c] if v != ""])
    arrays = []
    for name in header:
        raw = cols[name]
        typ = types.get(name, "text")
        if typ == "text":
            arrays.append(pa.array([None if v == "" else v for v in raw], pa.string()))
        elif typ == "int":
            arrays.append(pa.array([_py_int(v) for v in raw], pa.int64()))
        elif typ == "float":
            arrays.append(pa.array([_py_float(v) for v in raw], pa.float64()))
        elif typ == "timestamp":
            arrays.append(pa.array([_py_ts(v) for v in raw], pa.timestamp("us", tz="UTC")))
        else:
            raise ValueError(typ)
    return pa.table(arrays, names=header)


def _py_int(v: str) -> int | None:
    if v == "" or not parses_as_number(v):
        return None
    s = _trim(v)
    return int(s) if _INT.fullmatch(s) else int(Decimal(s))


def _py_float(v: str) -> float | None:
    if v == "" or not parses_as_number(v):
        return None
    return float(_trim(v)) + 0.0  # -0.0 + 0.0 == 0.0


def _py_ts(v: str) -> _dt.datetime | None:
    return None if v == "" else parse_timestamp(v)
