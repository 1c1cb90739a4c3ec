"""Hypothesis strategies over Arrow types (docs/semantics.md §4.1): typed tables whose
columns span every width, unit, zone, decimal precision and storage facet accepts, and
DCs that compare them with each other and with constants.

A table has a few *families* of columns; columns of one family may be compared with each
other (numbers of any width or kind; timestamps and dates of any unit and zone; text of
any string storage; binary of any storage; booleans).  Values mix a small pool (ties,
equal values across types) with each type's extremes.
"""

from __future__ import annotations

import datetime as _dt
import math
from decimal import Context, Decimal

import pyarrow as pa
from hypothesis import strategies as st

from facet.language.ast import DC, Col, Const, Predicate

INT_TYPES = [
    pa.int8(),
    pa.int16(),
    pa.int32(),
    pa.int64(),
    pa.uint8(),
    pa.uint16(),
    pa.uint32(),
    pa.uint64(),
]
FLOAT_TYPES = [pa.float16(), pa.float32(), pa.float64()]
UNITS = ["s", "ms", "us", "ns"]
ZONES = [None, "UTC", "+05:30", "America/New_York"]

#: numbers that equal each other across types, and neighbours of float rounding
_NUMBER_POOL = [0, 1, -1, 2, 3, 100, 2**53, 2**53 + 1, -(2**53) - 1, 2**62, 2**63 - 1, -(2**63)]
_U64_POOL = [2**63, 2**64 - 1, 2**63 + 1]
_FLOAT_POOL = [0.0, -0.0, 0.5, 1.0, 2.5, 2.0**53, 2.0**62, -(2.0**63), 1e300, math.inf, -math.inf]
_DEC_POOL = ["0", "1", "0.1", "0.10", "2.5", "-1.25", "3"]
#: 2000-01-01 .. 2040-01-01 in seconds: safe in every unit, nanoseconds included
_T0, _T1 = 946684800, 2208988800


_WIDE = Context(prec=100)  # decimal256 holds up to 76 digits


def _int_range(t: pa.DataType) -> tuple[int, int]:
    bits = t.bit_width
    if pa.types.is_signed_integer(t):
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return 0, 2**bits - 1


@st.composite
def _numeric_type(draw) -> pa.DataType:
    kind = draw(st.sampled_from(["int", "int", "float", "decimal"]))
    if kind == "int":
        return draw(st.sampled_from(INT_TYPES))
    if kind == "float":
        return draw(st.sampled_from(FLOAT_TYPES))
    precision = draw(st.integers(1, 40))
    scale = draw(st.integers(0, min(precision, 6)))
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


def _number_values(t: pa.DataType):
    if pa.types.is_integer(t):
        lo, hi = _int_range(t)
        pool = [v for v in _NUMBER_POOL + _U64_POOL if lo <= v <= hi] + [lo, hi]
        return st.one_of(st.sampled_from(pool), st.integers(lo, hi), st.integers(-3, 3)).filter(
            lambda v: lo <= v <= hi
        )
    if pa.types.is_floating(t):
        width = t.bit_width
        return st.one_of(
            st.sampled_from(_FLOAT_POOL + [math.nan]),
            st.floats(width=width, allow_nan=True),
            st.integers(-3, 3).map(float),
        ).map(lambda v: _round_to(v, width))
    precision, scale = t.precision, t.scale
    top = _WIDE.subtract(_WIDE.power(Decimal(10), precision - scale), Decimal(1).scaleb(-scale))
    quant = Decimal(1).scaleb(-scale)
    pool = [Decimal(d).quantize(quant, context=_WIDE) for d in _DEC_POOL if abs(Decimal(d)) <= top]
    return (
        st.one_of(
            st.sampled_from(pool or [Decimal(0).quantize(quant)]),
            st.decimals(min_value=-top, max_value=top, places=scale, allow_nan=False),
        )
        .map(lambda d: d.quantize(quant, context=_WIDE))
        .filter(lambda d: abs(d) <= top)
    )


def _round_to(v: float, width: int) -> float:
    import numpy as np

    if width == 64 or not math.isfinite(v):
        return v
    typ = np.float16 if width == 16 else np.float32
    with np.errstate(over="ignore"):
        return float(typ(v))


def _time_values(t: pa.DataType):
    if pa.types.is_date32(t):
        return st.integers(_T0 // 86400, _T1 // 86400).map(
            lambda d: _dt.date(1970, 1, 1) + _dt.timedelta(days=d)
        )
    if pa.types.is_date64(t):
        return st.integers(_T0 // 86400, _T1 // 86400).map(lambda d: d * 86_400_000)
    per_s = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[t.unit]
    pool = [_T0 * per_s, _T0 * per_s + 1, (_T0 + 1) * per_s, (_T0 + 86400) * per_s]
    return st.one_of(st.sampled_from(pool), st.integers(_T0 * per_s, _T1 * per_s))


@st.composite
def _time_type(draw) -> pa.DataType:
    kind = draw(st.sampled_from(["ts", "ts", "ts", "date32", "date64"]))
    if kind == "date32":
        return pa.date32()
    if kind == "date64":
        return pa.date64()
    return pa.timestamp(draw(st.sampled_from(UNITS)), tz=draw(st.sampled_from(ZONES)))


_TEXT_TYPES = [pa.string(), pa.large_string(), pa.string_view(), pa.json_(), "dict"]
_BINARY_TYPES = [pa.binary(), pa.large_binary(), pa.binary(2), pa.uuid()]


def _column_array(values: list, t, null_mask: list[bool]) -> pa.Array:
    vals = [None if m else v for v, m in zip(values, null_mask, strict=True)]
    if t == "dict":
        return pa.array(vals, pa.string()).dictionary_encode()
    if isinstance(t, pa.BaseExtensionType):
        return pa.ExtensionArray.from_storage(t, pa.array(vals, t.storage_type))
    if pa.types.is_date64(t):
        return pa.array(vals, pa.int64()).cast(pa.date64())
    if pa.types.is_timestamp(t):
        return pa.array(vals, pa.int64()).cast(pa.timestamp(t.unit)).cast(t)
    if pa.types.is_decimal(t):  # via text: pa.array's Decimal inference trips on some values
        return pa.array([None if v is None else str(v) for v in vals], pa.string()).cast(t)
    return pa.array(vals, t)


@st.composite
def typed_tables(draw, max_rows: int = 12):
    """``(table, families)``: a typed Arrow table and, per column, its family
    ('num', 'time', 'text', 'binary', 'bool', 'null')."""
    n = draw(st.integers(1, max_rows))
    ncols = draw(st.integers(1, 4))
    fams = draw(
        st.lists(
            st.sampled_from(
                ["num", "num", "num", "time", "time", "text", "binary", "bool", "null"]
            ),
            min_size=ncols,
            max_size=ncols,
        )
    )
    cols: dict[str, pa.Array] = {}
    for i, fam in enumerate(fams):
        nulls = draw(st.lists(st.booleans(), min_size=n, max_size=n).map(lambda m: m))
        if not draw(st.booleans()):
            nulls = [False] * n
        if fam == "num":
            t = draw(_numeric_type())
            vals = draw(st.lists(_number_values(t), min_size=n, max_size=n))
        elif fam == "time":
            t = draw(_time_type())
            vals = draw(st.lists(_time_values(t), min_size=n, max_size=n))
        elif fam == "text":
            t = draw(st.sampled_from(_TEXT_TYPES))
            alphabet = st.sampled_from(["a", "b", "", "ab", "é", "10", "9", '{"k":1}'])
            vals = draw(st.lists(alphabet, min_size=n, max_size=n))
        elif fam == "binary":
            t = draw(st.sampled_from(_BINARY_TYPES))
            width = 16 if t == pa.uuid() else 2 if t == pa.binary(2) else None
            size = st.just(width) if width else st.integers(0, 3)
            vals = draw(
                st.lists(
                    size.flatmap(lambda k: st.binary(min_size=k, max_size=k)),
                    min_size=n,
                    max_size=n,
                )
            )
        elif fam == "bool":
            t = pa.bool_()
            vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        else:
            t = pa.null()
            vals = [None] * n
        cols[f"c{i}"] = _column_array(vals, t, nulls)
    return pa.table(cols), fams


def _iso(seconds: int, frac: str, zone: str) -> str:
    d = _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=seconds)
    return d.strftime("%Y-%m-%dT%H:%M:%S") + frac + zone


@st.composite
def _constant(draw, fam: str) -> Const | None:
    if fam == "num":
        v = draw(
            st.one_of(
                st.sampled_from(["0", "1", "-1", "0.1", "2.5", "1e3", "2.9999999999999999999"]),
                st.sampled_from([str(v) for v in _NUMBER_POOL + _U64_POOL]),
                st.sampled_from(["9007199254740992.5", "4611686018427387904.5", "1e30"]),
            )
        )
        return Const(v)
    if fam == "time":
        s = draw(st.integers(_T0, _T1))
        frac = draw(st.sampled_from(["", ".5", ".000001", ".000000001", ".123456789"]))
        zone = draw(st.sampled_from(["", "Z", "+05:30"]))
        if draw(st.booleans()):
            return Const((_dt.date(1970, 1, 1) + _dt.timedelta(seconds=s)).isoformat())
        return Const(_iso(s, frac, zone), quoted=True)
    if fam == "text":
        return Const(draw(st.sampled_from(["a", "", "10", "é"])), quoted=True)
    if fam == "bool":
        return Const(draw(st.sampled_from(["true", "false", "1", "0"])), quoted=True)
    if fam == "null":
        return Const(draw(st.sampled_from(["x", "1"])), quoted=True)
    return None  # binary: column-to-column only


_ORDERABLE = {"num", "time", "text", "binary", "bool", "null"}


@st.composite
def typed_dcs(draw, families: list[str], max_preds: int = 3) -> DC:
    """A DC over a :func:`typed_tables` table: columns compared within their family."""
    k = draw(st.integers(1, max_preds))
    preds = []
    two_tuple = draw(st.booleans())
    for _ in range(k):
        a = draw(st.integers(0, len(families) - 1))
        fam = families[a]
        op = draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]))
        same = [j for j, f in enumerate(families) if f == fam]
        const = _constant(fam)
        use_const = fam != "binary" and draw(st.integers(0, 3)) == 0
        if use_const:
            preds.append(Predicate(Col(0, f"c{a}"), op, draw(const)))
            continue
        b = draw(st.sampled_from(same))
        tb = 1 if two_tuple else 0
        preds.append(Predicate(Col(0, f"c{a}"), op, Col(tb, f"c{b}")))
    return DC(tuple(preds))
