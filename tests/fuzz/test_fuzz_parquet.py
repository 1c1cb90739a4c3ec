"""Fuzzing typed inputs (docs/semantics.md §4.1, §4.4): random Arrow tables over many
types, written to Parquet, then ``facet.detect`` with random DCs over them.

Types: integers of every width, signed and unsigned, with their extremes; float16/32/64
with NaN, infinities and -0.0; decimal128/256; timestamps of every unit, with and without
a zone; dates; booleans; the null type; strings, binary and their large variants;
dictionary-encoded columns; UUID and JSON extension types; times and durations.

``detect`` must return counts or raise a :class:`facet.errors.FacetError` with a
one-line message -- never another exception.  When it returns counts and
tests/naive.py can evaluate the DC too, both must agree.
"""

from __future__ import annotations

import datetime as dt
import decimal
import tempfile
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import reject
from hypothesis import strategies as st

import facet
from facet.errors import FacetError
from facet.language import parse_dc
from tests.fuzz.driver import Known, drive, known_issue
from tests.naive import naive_count, naive_rows_involved

#: crashes already pinned by an xfail test: none now (those this fuzzer found --
#: timestamp constants before 1677, null-type columns in timestamp/text/binary/decimal
#: components, times next to a null column in pairs, durations of two units, an empty
#: decimal column meeting an int and a constant finer than int64 can scale -- are fixed,
#: and tests/robustness/test_columns_and_types.py keeps them fixed)
KNOWN: list[Known] = []

_INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64()]
_UINT_TYPES = [pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]
_TIMEZONES = [None, "UTC", "+05:30", "America/New_York"]


def _int_values(typ: pa.DataType) -> st.SearchStrategy:
    bits = typ.bit_width
    lo, hi = (
        (0, 2**bits - 1)
        if pa.types.is_unsigned_integer(typ)
        else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    )
    return st.one_of(
        st.none(), st.sampled_from([lo, hi, 0, 1]), st.integers(max(lo, -3), min(hi, 3))
    )


_FLOATS = st.one_of(
    st.none(),
    st.sampled_from([0.0, -0.0, 1.5, -2.0, float("nan"), float("inf"), float("-inf"), 0.1, 1e300]),
)


@st.composite
def _column(draw: st.DrawFn, n: int) -> pa.Array:
    kind = draw(
        st.sampled_from(
            [
                "int",
                "uint",
                "float",
                "decimal",
                "timestamp",
                "date",
                "bool",
                "null",
                "string",
                "binary",
                "dictionary",
                "uuid",
                "json",
                "time",
                "duration",
            ]
        )
    )
    if kind in ("int", "uint"):
        typ = draw(st.sampled_from(_INT_TYPES if kind == "int" else _UINT_TYPES))
        return pa.array(draw(st.lists(_int_values(typ), min_size=n, max_size=n)), typ)
    if kind == "float":
        width = draw(st.sampled_from([16, 32, 64]))
        vals = draw(st.lists(_FLOATS, min_size=n, max_size=n))
        if width == 16:
            mask = np.array([v is None for v in vals], dtype=bool)
            with np.errstate(over="ignore"):  # 1e300 -> inf, as a float16 stores it
                data = np.array([0.0 if v is None else v for v in vals], dtype=np.float16)
            return pa.array(data, pa.float16(), mask=mask)
        return pa.array(vals, pa.float32() if width == 32 else pa.float64())
    if kind == "decimal":
        wide = draw(st.booleans())
        precision = draw(st.integers(1, 76 if wide else 38))
        scale = draw(st.integers(0, min(precision, 10)))
        top = 10 ** min(precision - 1, 29) - 1 if precision > 1 else 9  # fits, scaled
        ints = draw(st.lists(st.one_of(st.none(), st.integers(-top, top)), min_size=n, max_size=n))
        vals = [None if i is None else str(decimal.Decimal(i).scaleb(-scale)) for i in ints]
        typ = (pa.decimal256 if wide else pa.decimal128)(precision, scale)
        return pa.array(vals, pa.string()).cast(typ)
    if kind == "timestamp":
        unit = draw(st.sampled_from(["s", "ms", "us", "ns"]))
        tz = draw(st.sampled_from(_TIMEZONES))
        per_day = {"s": 86_400, "ms": 86_400_000, "us": 86_400_000_000, "ns": 86_400 * 10**9}[unit]
        ticks = st.one_of(
            st.none(),
            st.integers(-3, 3).map(lambda d: d * per_day),
            st.integers(-(2**62), 2**62)
            if unit == "ns"
            else st.integers(-(10**6) * per_day, 10**6 * per_day),
        )
        return pa.array(draw(st.lists(ticks, min_size=n, max_size=n)), pa.timestamp(unit, tz=tz))
    if kind == "date":
        days = draw(
            st.lists(st.one_of(st.none(), st.integers(-719_162, 2_932_896)), min_size=n, max_size=n)
        )
        vals = [None if d is None else dt.date(1970, 1, 1) + dt.timedelta(days=d) for d in days]
        return pa.array(vals, draw(st.sampled_from([pa.date32(), pa.date64()])))
    if kind == "bool":
        return pa.array(draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n)))
    if kind == "null":
        return pa.nulls(n)
    texts = st.lists(
        st.one_of(st.none(), st.sampled_from(["", "a", "b", "B", "é", "1", "2020-01-01"])),
        min_size=n,
        max_size=n,
    )
    if kind == "string":
        return pa.array(draw(texts), draw(st.sampled_from([pa.string(), pa.large_string()])))
    if kind == "binary":
        vals = [None if v is None else v.encode() for v in draw(texts)]
        return pa.array(vals, draw(st.sampled_from([pa.binary(), pa.large_binary()])))
    if kind == "dictionary":
        if draw(st.booleans()):
            return pa.array(draw(texts)).dictionary_encode()
        return pa.array(
            draw(st.lists(_int_values(pa.int64()), min_size=n, max_size=n))
        ).dictionary_encode()
    if kind == "uuid":
        keys = draw(st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=n, max_size=n))
        storage = pa.array(
            [None if k is None else uuid.UUID(int=k).bytes for k in keys], pa.binary(16)
        )
        return pa.ExtensionArray.from_storage(pa.uuid(), storage)
    if kind == "json":
        vals = draw(
            st.lists(
                st.one_of(st.none(), st.sampled_from(['{"a":1}', "[]", "1", '"x"'])),
                min_size=n,
                max_size=n,
            )
        )
        return pa.ExtensionArray.from_storage(pa.json_(), pa.array(vals, pa.string()))
    if kind == "time":
        micros = draw(
            st.lists(st.one_of(st.none(), st.integers(0, 86_399_999_999)), min_size=n, max_size=n)
        )
        return pa.array(micros, pa.time64("us"))
    secs = draw(
        st.lists(st.one_of(st.none(), st.integers(-(10**9), 10**9)), min_size=n, max_size=n)
    )
    return pa.array(secs, pa.duration(draw(st.sampled_from(["s", "ms", "us", "ns"]))))


@st.composite
def tables(draw: st.DrawFn) -> pa.Table:
    n = draw(st.integers(0, 8))
    k = draw(st.integers(1, 4))
    return pa.table({f"c{i}": draw(_column(n)) for i in range(k)})


CONSTANTS = [
    "0",
    "1",
    "-1",
    "2.5",
    "-0.0",
    "0.1",
    "1e300",
    "1e-300",
    "1.0000000000000000001",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "'x'",
    "''",
    "'a'",
    "'é'",
    "true",
    "false",
    "'TRUE'",
    "'2020-01-01'",
    "'2020-01-01T00:00:00.123456789Z'",
    "'1969-12-31T23:59:59+05:30'",
    "'9999-12-31'",
    "'1677-09-21'",
    "'{\"a\":1}'",
    "'00000000-0000-0000-0000-000000000001'",
]
OPS = ["=", "!=", "<", "<=", ">", ">="]


@st.composite
def dc_texts(draw: st.DrawFn, names: list[str]) -> str:
    preds = []
    for _ in range(draw(st.integers(1, 3))):
        left = f"{draw(st.sampled_from(['t', 't' + chr(39)]))}.{draw(st.sampled_from(names))}"
        if draw(st.booleans()):
            right = f"{draw(st.sampled_from(['t', 't' + chr(39)]))}.{draw(st.sampled_from(names))}"
        else:
            right = draw(st.sampled_from(CONSTANTS))
        preds.append(f"{left} {draw(st.sampled_from(OPS))} {right}")
    return "not(" + " and ".join(preds) + ")"


@st.composite
def cases(draw: st.DrawFn) -> tuple[pa.Table, list[str], str]:
    table = draw(tables())
    dcs = draw(st.lists(dc_texts(table.column_names), min_size=1, max_size=3))
    output = draw(st.sampled_from(["count", "count", "pairs"]))
    return table, dcs, output


def detect_typed(stats, case: tuple[pa.Table, list[str], str]) -> None:
    table, dcs, output = case
    with tempfile.TemporaryDirectory() as d:
        path = f"{d}/t.parquet"
        try:
            pq.write_table(table, path)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
            stats.outcomes["not writable as Parquet"] += 1
            reject()
        read_back = pq.read_table(path)
        try:
            res = facet.detect(path, dcs=dcs, output=output)
        except FacetError as err:
            stats.outcomes[type(err).__name__] += 1
            msg = str(err)
            assert msg.strip() and len(msg.splitlines()) == 1, repr(msg)
            return
        except Exception as err:  # a crash: known (an xfail test pins it), or a failure
            known = known_issue(err, KNOWN)
            if known is None:
                raise
            stats.outcomes[f"known: {known.xfail.rsplit('[', 1)[-1].rstrip(']')}"] += 1
            return
    stats.outcomes["counts"] += 1
    got = [(d.violations, d.rows_involved) for d in res.dcs]
    assert all(v >= 0 and r >= 0 for v, r in got)
    expected = []
    for text in dcs:
        dc = parse_dc(text)[0]
        try:
            expected.append((naive_count(read_back, dc), naive_rows_involved(read_back, dc)))
        except (ValueError, TypeError, KeyError, OverflowError, ArithmeticError):
            stats.outcomes["naive cannot evaluate"] += 1
            return
    stats.outcomes["checked against naive"] += 1
    assert got == expected, (dcs, read_back.schema, read_back.to_pylist())


def test_fuzz_parquet_typing() -> None:
    drive("parquet typing", detect_typed, {"case": cases()}, examples=60, share=0.4)
