"""Desbordante's DC verifier as a benchmark peer: a DC's violations counted as facet counts them.

    python bench/desbordante_worker.py --table TYPED.parquet --dc DC

The worker reads the typed Parquet (``rid`` plus data columns, docs/semantics.md §4.3) and
hands the DC's columns to Desbordante (``load_seconds``, untimed: reading, converting and
``load_data``), then times Desbordante's verification plus the conversion of its answer to
facet's count (``seconds``) and prints one JSON line::

    {"rows": n, "count": c, "seconds": s, "load_seconds": s, "method": "...", "desbordante": v}

A DC it cannot express (below) prints ``{"error": "unsupported: ..."}`` and exits 2.

**The API** (desbordante 2.5.0): ``desbordante.dc_verification.algorithms.Default``
(= ``DCVerification``); ``load_data(table=pandas.DataFrame)``; ``execute(denial_constraint=
"!(t.A == s.A and t.B > s.B)", do_collect_violations=True)``; ``dc_holds()`` and
``get_violations()``, a ``list[tuple[int, int]]``. The DC text is ``!(p1 and p2 ...)``, each
predicate ``X op Y`` with ``op`` one of ``== != < <= > >=`` (spaces around it required),
``t.NAME`` / ``s.NAME`` a column of the two tuples, anything else a constant parsed in the type
of the column it meets (raw text, no quotes; split on `` and ``).

**What it returns** (checked on small tables, see tests/test_bench_desbordante.py):

* a set of *unordered* pairs of distinct rows: each pair once, whichever of ``(a, b)`` and
  ``(b, a)`` violates (both orders are searched); a single-tuple DC gives ``(r, r)`` per row;
* row numbers as CSV line numbers: the 0-based row + 2 (1-based, after the header line; 1
  when the first column's name is all digits -- the columns are renamed ``c0..`` here, so 2);
* a DC text it cannot parse is no error: it logs, and ``dc_holds()`` is then False (or True)
  with no violations -- so the text is generated here from facet's parsed DC (columns
  renamed, constants checked) and "does not hold, no violations" raises.

**The count.** Single-tuple DC: the number of pairs. Two-tuple DC, symmetric (its predicate
set is the same with ``t`` and ``t'`` swapped, e.g. an FD): twice the number of pairs.
Otherwise, for every reported pair ``{a, b}`` the predicates are evaluated for ``(a, b)`` and
for ``(b, a)`` with numpy, vectorized over the pair list, and the orders that hold are
counted (docs/semantics.md §1: ordered pairs). ``method`` says which.

**Types and values.** Desbordante's DataFrame reader turns every value into text
(``str(v)``; a pandas-null value into its NULL) and infers each column's type from the text;
rows with a NULL *or an empty string* in any column of the DC are skipped. The worker so hands
over only the DC's columns, as object columns, each converted so that Desbordante compares
exactly as facet does:

* integers (and booleans as 0/1): Python ints. Desbordante orders integers through
  ``double``: ``2^62 < 2^62 + 1`` does not hold there. So a column or constant beyond
  ``+-2^53`` is unsupported (a constant beyond the column's values, or a fractional or
  infinite one, is rewritten: ``a < 2.5`` is ``a <= 2``, ``a = 2.5`` is ``a != a`` (false
  for every row), ``a != 2.5`` is ``a == a`` (non-NULL));
* floats: Python floats (``repr`` round-trips exactly; ``-0.0 == 0.0`` and infinities hold
  there); NaN is NULL (docs/semantics.md §2); float16/32 widened, constants rounded to the
  column's width;
* strings: every value prefixed with ``x``: equality and UTF-8 byte order are kept (Desbordante
  compares ``std::string`` s), and the prefix keeps ``""`` (empty: skipped), ``"NULL"`` (its
  NULL) and numeric-looking text (``"01907"`` would become the integer 1907) as the strings
  they are. A string constant with `` and ``, `` OP `` or trailing white space in it cannot be
  written in Desbordante's DC text: unsupported;
* timestamps and dates: integers, nanoseconds since the epoch divided by the coarsest of
  1 s / 1 ms / 1 us / 1 ns that keeps every value (and constant) of the component whole,
  within ``+-2^53``; other types (decimal, binary, time, duration) are unsupported.

**Supported shapes.** Desbordante picks a verifier by the DC's shape. Fuzzing against
tests/naive.py (tests/test_bench_desbordante.py) found two that answer wrongly in 2.5.0, so
only these DCs are run:

* single-tuple DCs, any predicates (column vs column, column vs constant);
* two-tuple DCs whose every predicate compares a column of ``t`` with a column of ``t'``
  (same column or not, any operator), written ``t.A op s.B`` (Desbordante reads ``s.B op t.A``
  as ``t.B op s.A``, so such predicates are flipped), where no column is bounded from one
  direction by two different columns. Desbordante answers these with a hash on the
  ``t.A = t'.A`` columns and a k-d tree searched with two boxes (one per order of the pair):
  ``t.A < t'.B`` bounds one box's ``A`` from above by the row's ``B`` and the other box's
  ``B`` from below by its ``A`` (``!=`` is split into ``<`` and ``>``, ``t.A = t'.B`` into
  ``<=`` and ``>=``). Two such bounds from different columns (``t.A >= t'.A and t.A > t'.B``)
  keep the tighter value but may take the other predicate's open/closed end with it: pairs
  are missed.

Unsupported: two-tuple DCs with a one-tuple predicate or a constant beside the cross-tuple
ones (``t.A = t'.A and t.B > 5``), which Desbordante's ``VerifyMixed`` answers wrongly
(``!(t.b == s.b and s.a == s.a)`` reports pairs with different ``b``, ``!(t.a < s.a and
t.a == t.a)`` none; about 1 in 13 random such DCs on small tables is off, and constants
beside cross-tuple predicates are often rejected), and the two-bound shapes above.
An empty table, or one where a column of the DC is all NULL, counts 0 without running
Desbordante (it rejects a constant on a column it could not type, and there is no pair).

**NULLs** (docs/semantics.md §2, SQL's: a predicate with a NULL operand is false).
Desbordante skips a row with a NULL in *any* of the DC's columns. For a single-tuple DC, and a
two-tuple DC whose ``t`` columns are its ``t'`` columns, that is exactly SQL's answer (such a
row never satisfies every predicate on either side). When they differ (``t.A < t'.B``), a row
with a NULL in ``B`` only may still be the ``t`` of a violation, which Desbordante misses: a
table with such a row (and a row for the other side) is :class:`Unsupported` for that DC.

``run`` starts the worker under ``common.run_worker``'s watchdog. ``count(table, dc_text)`` is
the core (``prepare`` then ``verify``), for tests and ``bench/peer_worker.py``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import sys
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import peer_dc  # noqa: E402

#: Desbordante orders integers as doubles: exact within +-2^53
EXACT = 2**53
#: Desbordante's row numbers: 0-based row + 2 (CSV line numbers after a header line)
OFFSET = 2
#: Desbordante's operators (facet's ``=`` is its ``==``)
D_OP = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_NP_OP = {
    "=": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}
_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


class Unsupported(Exception):
    """A DC (or a DC on this table) that Desbordante cannot answer as facet counts."""


def version() -> str | None:
    return common._version("desbordante")


# --------------------------------------------------------------------------------------------
# columns: values as handed to Desbordante, and as float64 for the numpy check of pair orders


@dataclass
class Column:
    name: str  # facet's name
    alias: str  # c0, c1, ... in Desbordante's table
    kind: str  # int | float | str | time
    typ: pa.DataType
    values: list  # Python values (None = NULL) before the component's conversion
    null: np.ndarray  # bool mask


@dataclass(frozen=True)
class DOperand:
    side: int | None  # 0 t, 1 t', None a constant
    alias: str | None = None
    text: str | None = None  # a constant as Desbordante reads it
    value: Any = None  # a constant as compared (in the component's domain)


@dataclass(frozen=True)
class DPred:
    left: DOperand
    op: str  # facet's operator
    right: DOperand

    def text(self) -> str:
        def t(o: DOperand) -> str:
            return o.text if o.side is None else f"{'ts'[o.side]}.{o.alias}"

        return f"{t(self.left)} {D_OP[self.op]} {t(self.right)}"


@dataclass
class Prepared:
    """A DC ready to verify: Desbordante loaded, the DC text, how to convert its answer."""

    rows: int
    dc_text: str  # Desbordante's
    preds: tuple[DPred, ...]
    single_tuple: bool
    symmetric: bool
    algo: Any = None
    arrays: dict[str, np.ndarray] = field(default_factory=dict)  # alias -> float64 (NaN NULL)
    trivial: str | None = None  # why the count is 0 without Desbordante (it answers no pairs)


def _storage(typ: pa.DataType) -> pa.DataType:
    while isinstance(typ, pa.BaseExtensionType):
        typ = typ.storage_type
    return typ.value_type if pa.types.is_dictionary(typ) else typ


def _column(table: pa.Table, name: str, alias: str) -> Column:
    if name not in table.column_names:
        raise ValueError(f"column {name!r} not in table (columns: {table.column_names})")
    col = table.column(name)
    if isinstance(col.type, pa.BaseExtensionType):
        col = pa.chunked_array([c.storage for c in col.chunks], _storage(col.type))
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    typ = col.type
    if pa.types.is_boolean(typ):
        kind = "int"
        col = col.cast(pa.int8())
    elif pa.types.is_integer(typ):
        kind = "int"
    elif pa.types.is_floating(typ):
        kind = "float"
        col = pc.if_else(pc.is_nan(col.cast(pa.float64())), None, col.cast(pa.float64()))
    elif pa.types.is_string(typ) or pa.types.is_large_string(typ) or str(typ) == "string_view":
        kind = "str"
    elif pa.types.is_timestamp(typ) or pa.types.is_date(typ):
        kind = "time"  # as nanoseconds since the epoch
        if pa.types.is_timestamp(typ):
            ints, factor = col.cast(pa.int64()), _NS[typ.unit]
        elif typ == pa.date32():
            ints, factor = col.cast(pa.int32()).cast(pa.int64()), 86400 * 10**9
        else:
            ints, factor = col.cast(pa.int64()), 10**6
        try:
            col = pc.multiply_checked(ints, factor)
        except pa.ArrowInvalid:
            raise Unsupported(f"column {name!r}: timestamps beyond int64 nanoseconds") from None
    else:
        raise Unsupported(f"column {name!r} of type {typ}")
    null = col.is_null().to_numpy(zero_copy_only=False)
    return Column(name, alias, kind, typ, col.to_pylist(), np.asarray(null, dtype=bool))


def _constant(text: str, c: Column) -> Any:
    """A constant on column ``c`` as a value of its kind (Decimal for an int column)."""
    if c.kind == "str":
        return text
    if c.kind == "int":
        if pa.types.is_boolean(c.typ):
            return int(peer_dc.constant(text, c.typ))
        peer_dc.constant(text, c.typ)  # the number grammar's ValueError
        return Decimal(text.strip())
    if c.kind == "float":
        x = float(peer_dc.constant(text, c.typ))
        width = {16: np.float16, 32: np.float32}.get(c.typ.bit_width)
        if width is not None:
            with np.errstate(over="ignore"):
                x = float(width(x))
        return x
    v = peer_dc.constant(text, pa.timestamp("ns"))  # an ISO date/time; naive = UTC
    if v.tzinfo is None:
        v = v.replace(tzinfo=_dt.UTC)
    delta = v - _EPOCH
    return ((delta.days * 86400 + delta.seconds) * 10**6 + delta.microseconds) * 1000


_BAD_IN_CONSTANT = (" and ",) + tuple(f" {op} " for op in D_OP.values())


def _symmetric(preds: tuple[DPred, ...]) -> bool:
    def key(p: DPred) -> tuple:
        a = (p.left.side, p.left.alias, p.left.value)
        b = (p.right.side, p.right.alias, p.right.value)
        return min((a, p.op, b), (b, peer_dc.FLIP[p.op], a), key=repr)

    def swap(o: DOperand) -> DOperand:
        return o if o.side is None else DOperand(1 - o.side, o.alias, o.text, o.value)

    mine = {key(p) for p in preds}
    swapped = {key(DPred(swap(p.left), p.op, swap(p.right))) for p in preds}
    return mine == swapped


# --------------------------------------------------------------------------------------------
# the core


def prepare(table: pa.Table, dc_text: str) -> Prepared:
    """Check the DC's shape and the table's values, build Desbordante's table and DC text and
    load it (``load_data``). Raises :class:`Unsupported` for what Desbordante cannot answer."""
    shape = peer_dc.parse(dc_text)
    single = shape.single_tuple
    names = shape.columns()
    cols = {n: _column(table, n, f"c{i}") for i, n in enumerate(names)}
    if not single:
        for p in shape.preds:
            if p.left.side is None or p.right.side is None or p.left.side == p.right.side:
                raise Unsupported(
                    "two-tuple DC with a one-tuple predicate or a constant "
                    "(Desbordante's mixed verifier answers wrongly)"
                )

    # components: columns compared with each other share a domain
    parent = {n: n for n in names}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in shape.preds:
        if p.left.column is not None and p.right.column is not None:
            parent[find(p.left.column)] = find(p.right.column)
    comps: dict[str, list[str]] = {}
    for n in names:
        comps.setdefault(find(n), []).append(n)
    for members in comps.values():
        kinds = {cols[n].kind for n in members}
        if len(kinds) > 1 and kinds != {"int", "float"}:
            raise Unsupported(f"columns {members} of kinds {sorted(kinds)} compared")

    # constants, in the column's type; written on the right
    raw: list[tuple[Any, str, Any]] = []  # (column operand, op, column operand or constant)
    for p in shape.preds:
        left, op, right = p.left, p.op, p.right
        if left.side is None:
            left, op, right = right, peer_dc.FLIP[op], left
        if right.side is None:
            raw.append((left, op, _constant(right.text, cols[left.column])))
        else:
            raw.append((left, op, right))

    # timestamps: the coarsest unit that keeps every value and constant whole
    scale: dict[str, int] = {}
    for root, members in comps.items():
        if cols[members[0]].kind != "time":
            continue
        vals = [v for n in members for v in cols[n].values if v is not None]
        vals += [c for lo, _, c in raw if not isinstance(c, peer_dc.Operand)
                 and find(lo.column) == root]  # fmt: skip
        unit = next(u for u in (10**9, 10**6, 10**3, 1) if all(v % u == 0 for v in vals))
        for n in members:
            scale[n] = unit
    for n, c in cols.items():
        if c.kind == "time":
            c.values = [None if v is None else v // scale[n] for v in c.values]
            c.kind = "int"

    for c in cols.values():
        if c.kind == "int" and any(v is not None and abs(v) > EXACT for v in c.values):
            raise Unsupported(
                f"column {c.name!r} has integers beyond 2^53 (Desbordante orders them as doubles)"
            )

    # strings: a domain of ranks (UTF-8 byte order = code point order) for the numpy check
    ranks: dict[str, dict[str, int]] = {}
    for root, members in comps.items():
        if cols[members[0]].kind != "str":
            continue
        vals = {v for n in members for v in cols[n].values if v is not None}
        vals |= {c for lo, _, c in raw if isinstance(c, str) and find(lo.column) == root}
        ranks[root] = {v: i for i, v in enumerate(sorted(vals))}

    preds: list[DPred] = []
    for lo, op, ro in raw:
        c = cols[lo.column]
        left = DOperand(0 if single else lo.side, c.alias)
        if isinstance(ro, peer_dc.Operand):
            right = DOperand(0 if single else ro.side, cols[ro.column].alias)
            if left.side == 1 and right.side == 0:  # Desbordante reads t' op t as t op t'
                left, op, right = right, peer_dc.FLIP[op], left
            preds.append(DPred(left, op, right))
            continue
        if c.kind == "str":
            if any(b in ro for b in _BAD_IN_CONSTANT) or ro[-1:].isspace() or "\n" in ro:
                raise Unsupported(f"string constant {ro!r} in Desbordante's DC text")
            value = float(ranks[find(lo.column)][ro])
            preds.append(DPred(left, op, DOperand(None, text="x" + ro, value=value)))
        elif c.kind == "float":
            preds.append(DPred(left, op, DOperand(None, text=repr(ro), value=ro)))
        else:
            if c.name in scale:  # a time constant: nanoseconds, in the component's unit
                ro = Decimal(ro) / scale[c.name]
            preds.append(_int_constant(left, op, Decimal(ro)))

    if not single:
        _check_bounds(preds)
        _check_nulls(cols, shape)

    prepared = Prepared(
        rows=table.num_rows,
        dc_text="!(" + " and ".join(p.text() for p in preds) + ")",
        preds=tuple(preds),
        single_tuple=single,
        symmetric=not single and _symmetric(tuple(preds)),
    )
    if table.num_rows == 0:
        prepared.trivial = "empty table"
    elif any(c.null.all() for c in cols.values()):
        prepared.trivial = "a column of the DC is all NULL"
    if not single and not prepared.symmetric:
        for n, c in cols.items():
            if c.kind == "str":
                r = ranks[find(n)]
                arr = [math.nan if v is None else r[v] for v in c.values]
            else:
                arr = [math.nan if v is None else v for v in c.values]
            prepared.arrays[c.alias] = np.asarray(arr, dtype=np.float64)

    import desbordante
    import pandas as pd

    data = {}
    for c in cols.values():
        if c.kind == "str":
            data[c.alias] = pd.Series([None if v is None else "x" + v for v in c.values],
                                      dtype=object)  # fmt: skip
        else:
            data[c.alias] = pd.Series(c.values, dtype=object)
    frame = pd.DataFrame(data)
    algo = desbordante.dc_verification.algorithms.Default()
    algo.load_data(table=frame)
    prepared.algo = algo
    return prepared


def _int_constant(left: DOperand, op: str, c: Decimal) -> DPred:
    """``left op c`` on an integer column (values within +-2^53): ``c`` an integer within the
    range as is; else the equivalent bound, or ``left == left`` (non-NULL) / ``left != left``
    (never)."""
    true_ = DPred(left, "=", left)
    false_ = DPred(left, "!=", left)
    if c.is_finite() and c == c.to_integral_value() and abs(c) <= EXACT:
        v = int(c)
        return DPred(left, op, DOperand(None, text=str(v), value=float(v)))
    if op == "=":
        return false_
    if op == "!=":
        return true_
    if c.is_infinite() or abs(c) > EXACT:
        above = c > 0  # c is above every value
        return true_ if (op in ("<", "<=")) == above else false_
    if op in ("<", "<="):
        v = math.floor(c)
        return DPred(left, "<=", DOperand(None, text=str(v), value=float(v)))
    v = math.ceil(c)
    return DPred(left, ">=", DOperand(None, text=str(v), value=float(v)))


def _check_bounds(preds: list[DPred]) -> None:
    """Desbordante searches a k-d tree with two boxes, one per order of the pair: ``t.A < t'.B``
    bounds the first box's ``A`` from above by the row's ``B`` and the second box's ``B`` from
    below by its ``A``. Where two predicates bound one column from the same direction by
    *different* columns, it keeps the tighter value but may take the other predicate's
    open/closed bound with it, and misses pairs (``t.A >= t'.A and t.A > t'.B``). Run only DCs
    where each such bound has one source column (``t.A = t'.A`` is hashed, no bound; ``!=`` is
    split into ``<`` and ``>``; ``t.A = t'.B`` into ``<=`` and ``>=``)."""
    sources: dict[tuple[str, str, bool], set[str]] = {}
    for p in preds:
        a, b = p.left.alias, p.right.alias
        if p.op == "=" and a == b:
            continue
        ups = {"!=": (True, False), "=": (True, False)}.get(p.op, (p.op in ("<", "<="),))
        for up in ups:
            sources.setdefault(("t", a, up), set()).add(b)
            sources.setdefault(("s", b, not up), set()).add(a)
    if any(len(v) > 1 for v in sources.values()):
        raise Unsupported(
            "a column bounded from one direction by two different columns "
            "(Desbordante's search box then misses pairs)"
        )


def _check_nulls(cols: dict[str, Column], shape: peer_dc.Shape) -> None:
    """Desbordante skips a row with a NULL in any DC column; raise where SQL's answer could
    differ: a row that may be one side of a violation but has a NULL on the other side only."""
    s0 = {o.column for p in shape.preds for o in (p.left, p.right) if o.side == 0}
    s1 = {o.column for p in shape.preds for o in (p.left, p.right) if o.side == 1}
    if s0 == s1:
        return
    n = len(next(iter(cols.values())).null)

    def valid(names: set[str]) -> np.ndarray:
        ok = np.ones(n, dtype=bool)
        for name in names:
            ok &= ~cols[name].null
        return ok

    full, vt, vs = valid(s0 | s1), valid(s0), valid(s1)
    if ((vt & ~full).any() and vs.any()) or ((vs & ~full).any() and vt.any()):
        raise Unsupported(
            "NULLs in columns used on one side only: Desbordante skips such rows, "
            "SQL semantics keep them for the other side"
        )


def _holds(p: Prepared, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Does the two-tuple DC hold for ``(t, t') = (a, b)``, per pair (row arrays)?"""
    ok = np.ones(len(a), dtype=bool)
    rows = (a, b)
    for pred in p.preds:
        x = p.arrays[pred.left.alias][rows[pred.left.side]]
        y = p.arrays[pred.right.alias][rows[pred.right.side]]
        ok &= _NP_OP[pred.op](x, y) & ~np.isnan(x) & ~np.isnan(y)
    return ok


def verify(p: Prepared) -> tuple[int, str]:
    """Run Desbordante's verification; facet's count of the violations, and the method."""
    if p.trivial:
        return 0, p.trivial
    p.algo.execute(denial_constraint=p.dc_text, do_collect_violations=True)
    pairs = p.algo.get_violations()
    if not pairs and not p.algo.dc_holds():
        raise RuntimeError(f"Desbordante rejected the DC text {p.dc_text!r}")
    k = len(pairs)
    if p.single_tuple:
        return k, f"desbordante {p.dc_text}: rows"
    if p.symmetric:
        return 2 * k, f"desbordante {p.dc_text}: 2 x unordered pairs (symmetric DC)"
    flat = np.fromiter((i for pair in pairs for i in pair), dtype=np.int64, count=2 * k)
    flat -= OFFSET
    if k and (flat.min() < 0 or flat.max() >= p.rows):
        raise RuntimeError(f"Desbordante's row numbers out of range: {flat.min()}..{flat.max()}")
    a, b = flat[0::2], flat[1::2]
    count = int(_holds(p, a, b).sum() + _holds(p, b, a).sum())
    return count, f"desbordante {p.dc_text}: unordered pairs, both orders checked (numpy)"


def count(table: pa.Table, dc_text: str) -> tuple[int, str]:
    """facet's count of ``dc_text``'s violations in ``table`` by Desbordante, and the method.
    Raises :class:`Unsupported` for a DC (or NULLs) Desbordante cannot answer."""
    return verify(prepare(table, dc_text))


# --------------------------------------------------------------------------------------------
# the worker (its own process) and the parent side


def worker(path: str, dc: str) -> int:
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    table = pq.read_table(path)
    try:
        prepared = prepare(table, dc)
    except Unsupported as e:
        print(json.dumps({"error": f"unsupported: {e}"}))
        return 2
    load = time.perf_counter() - t0
    t1 = time.perf_counter()
    n, method = verify(prepared)
    seconds = time.perf_counter() - t1
    print(
        json.dumps(
            {
                "rows": table.num_rows,
                "count": n,
                "seconds": seconds,
                "load_seconds": load,
                "method": method,
                "desbordante": version(),
            }
        )
    )
    return 0


def run(table: Path, dc: str, timeout: float, rss_limit: int) -> dict:
    """One worker process under the watchdog: ``common.run_worker``'s summary plus the
    count (``violations``), ``seconds``, ``load_seconds``, ``rows`` and ``method``."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--table", str(table), "--dc", dc]
    return common.run_worker(cmd, timeout, rss_limit, ("load_seconds", "rows", "method"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", required=True, help="typed Parquet (with rid)")
    ap.add_argument("--dc", required=True, help="facet's canonical DC text")
    args = ap.parse_args(argv)
    return worker(args.table, args.dc)


if __name__ == "__main__":
    sys.exit(main())
