"""Which columns the DCs use and in what type they compare (docs/semantics.md §4).

Columns linked by a column-to-column predicate form a *component*: they are
compared with each other, so they share one type and one code space.  A
component is *ordered* when any predicate compares one of its columns with
``< <= > >=``.  For CSV text, an ordered component is a timestamp when more of
its non-empty values parse as ISO-8601 than as numbers, else a number (int64
when every parsed value is integral, else float64); unparsable cells become
NULL and are counted in a warning.  Every other CSV column is exact text.
Typed inputs (Parquet, Arrow, pandas, Polars) keep their own types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from facet.errors import FacetInputError
from facet.language.ast import DC, Col, Const

NUMBER_RE = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
INT_RE = r"^[+-]?\d+$"
#: a date, optionally a time, and a zone only after a time
ISO_RE = (
    r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?"
    r"(Z|z|[+-]\d{2}(:?\d{2})?)?)?$"
)
_FALSE = pa.scalar(False)
#: the zone of a timestamp (after its time: a date's "-22" is not one)
_ZONE_RE = r"\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|z|[+-]\d{2}(:?\d{2})?)$"

#: names accepted by ``--schema col:type``
SCHEMA_TYPES = {
    "int": "int",
    "integer": "int",
    "int64": "int",
    "bigint": "int",
    "float": "float",
    "double": "float",
    "float64": "float",
    "real": "float",
    "number": "number",
    "numeric": "number",
    "str": "text",
    "string": "text",
    "text": "text",
    "varchar": "text",
    "timestamp": "timestamp",
    "datetime": "timestamp",
    "date": "timestamp",
    "time": "timestamp",
}


@dataclass
class Component:
    """Columns compared with each other, with the constants they meet."""

    columns: list[str]
    ordered: bool = False
    constants: list[Const] = field(default_factory=list)
    #: 'text' | 'int' | 'float' | 'timestamp' | 'binary' | 'bool'
    kind: str = "text"


@dataclass
class ColumnUse:
    """What the DCs of a run need from the table."""

    components: list[Component]
    component_of: dict[str, int]
    #: where each column is first used (for error messages)
    first_use: dict[str, DC]
    #: (column, constant) -> the DC that holds it
    constant_use: dict[tuple[str, Const], DC]

    @property
    def columns(self) -> list[str]:
        return list(self.component_of)


def analyze(dcs: list[DC]) -> ColumnUse:
    """Group the used columns into components and mark the ordered ones."""
    parent: dict[str, str] = {}
    first_use: dict[str, DC] = {}
    ordered: set[str] = set()
    consts: dict[str, list[Const]] = {}
    constant_use: dict[tuple[str, Const], DC] = {}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for dc in dcs:
        for p in dc.predicates:
            cols = p.columns()
            for c in cols:
                if c.name not in parent:
                    parent[c.name] = c.name
                    first_use[c.name] = dc
            if len(cols) == 2:
                a, b = find(cols[0].name), find(cols[1].name)
                if a != b:
                    parent[b] = a
            if p.is_order:
                for c in cols:
                    ordered.add(c.name)
            for c, o in ((p.left, p.right), (p.right, p.left)):
                if isinstance(c, Col) and isinstance(o, Const):
                    lst = consts.setdefault(c.name, [])
                    if o not in lst:
                        lst.append(o)
                    constant_use.setdefault((c.name, o), dc)
    groups: dict[str, list[str]] = {}
    for name in parent:
        groups.setdefault(find(name), []).append(name)
    components: list[Component] = []
    component_of: dict[str, int] = {}
    for members in groups.values():
        comp = Component(members, ordered=any(m in ordered for m in members))
        for m in members:
            component_of[m] = len(components)
            for k in consts.get(m, []):
                if k not in comp.constants:
                    comp.constants.append(k)
        components.append(comp)
    return ColumnUse(components, component_of, first_use, constant_use)


def parse_schema(spec: str | dict[str, str] | None) -> dict[str, str]:
    """``"a:int,b:text"`` (or a dict) -> {column: kind}."""
    if spec is None:
        return {}
    items = spec.items() if isinstance(spec, dict) else []
    if isinstance(spec, str):
        out_items = []
        for part in spec.split(","):
            part = part.strip()
            if not part:
                continue
            if ":" not in part:
                raise FacetInputError(
                    f"--schema: '{part}' is not 'column:type'; "
                    f"types are {', '.join(sorted(set(SCHEMA_TYPES.values())))}"
                )
            col, _, typ = part.rpartition(":")
            out_items.append((col.strip(), typ.strip()))
        items = out_items
    out: dict[str, str] = {}
    for col, typ in items:
        kind = SCHEMA_TYPES.get(str(typ).lower())
        if kind is None:
            raise FacetInputError(
                f"--schema: unknown type '{typ}' for column '{col}'; "
                f"use one of int, float, number, text, timestamp"
            )
        out[col] = kind
    return out


# ---------------------------------------------------------------- CSV text parsing

_NULL_STR = pa.nulls(1, pa.string())[0]


class TextColumn:
    """One CSV text column, with each parse computed at most once."""

    def __init__(self, arr: pa.Array) -> None:
        self.raw = arr
        self.nonempty = len(arr) - arr.null_count
        self._trimmed: pa.Array | None = None
        self._num_ok: pa.Array | None = None
        self._floats: pa.Array | None = None
        self._integral: bool | None = None
        self._n_iso: int | None = None

    @property
    def trimmed(self) -> pa.Array:
        if self._trimmed is None:
            self._trimmed = pc.utf8_trim_whitespace(self.raw)
        return self._trimmed

    @property
    def num_ok(self) -> pa.Array:
        """True where the trimmed text is a number of docs/semantics.md §4.3's grammar."""
        if self._num_ok is None:
            self._num_ok = pc.fill_null(pc.match_substring_regex(self.trimmed, NUMBER_RE), _FALSE)
        return self._num_ok

    @property
    def n_num(self) -> int:
        return int(pc.sum(self.num_ok).as_py() or 0)

    @property
    def n_iso(self) -> int:
        if self._n_iso is None:
            ok = pc.fill_null(pc.match_substring_regex(self.trimmed, ISO_RE), _FALSE)
            self._n_iso = int(pc.sum(ok).as_py() or 0)
        return self._n_iso

    @property
    def floats(self) -> pa.Array:
        """float64, NULL where not a number."""
        if self._floats is None:
            good = pc.if_else(self.num_ok, self.trimmed, _NULL_STR)
            self._floats = pc.cast(good, pa.float64())
        return self._floats

    @property
    def integral(self) -> bool:
        """Every parsed value is a whole number that fits int64."""
        if self._integral is None:
            f = self.floats.to_numpy(zero_copy_only=False)
            finite = f[~np.isnan(f)]
            self._integral = bool(np.all(finite == np.floor(finite))) and (
                finite.size == 0 or float(np.max(np.abs(finite))) < 2.0**63
            )
        return self._integral

    def ints(self) -> pa.Array:
        """Exact int64 (integer literals parsed as integers, others via float)."""
        good = pc.if_else(self.num_ok, self.trimmed, _NULL_STR)
        if not pc.any(pc.starts_with(good, "+")).as_py():
            try:  # fast path: every number is an integer literal
                return pc.cast(good, pa.int64())
            except pa.ArrowInvalid:
                pass
        t = self.trimmed
        pure = pc.fill_null(pc.match_substring_regex(t, INT_RE), _FALSE)
        stripped = pc.replace_substring_regex(t, r"^\+", "")
        try:
            ints = pc.cast(pc.if_else(pure, stripped, _NULL_STR), pa.int64())
        except pa.ArrowInvalid:  # beyond int64
            return self.floats
        other = pc.and_(self.num_ok, pc.invert(pure))
        if pc.any(other).as_py():
            ints = pc.if_else(other, pc.cast(self.floats, pa.int64()), ints)
        return ints

    def parse(self, kind: str) -> pa.Array:
        """The column as ``kind`` ('int', 'float', 'timestamp', 'text'); unparsable -> NULL."""
        if kind == "text":
            return self.raw
        if kind == "timestamp":
            return parse_timestamps(self.raw)
        if kind == "int":
            return self.ints()
        return self.floats


def parse_numbers(arr: pa.Array) -> tuple[pa.Array, bool]:
    """Text -> float64 (NULL where not a number); also whether all parsed values are integral."""
    col = TextColumn(arr)
    return col.floats, col.integral


def parse_ints(arr: pa.Array) -> pa.Array:
    """Text of integral numbers -> exact int64."""
    return TextColumn(arr).ints()


def parse_timestamps(arr: pa.Array) -> pa.Array:
    """ISO-8601 text -> timestamp[us, UTC] (naive times are UTC); NULL where not ISO."""
    t = pc.utf8_trim_whitespace(arr)
    ok = pc.fill_null(pc.match_substring_regex(t, ISO_RE), _FALSE)
    zoned = pc.and_(ok, pc.fill_null(pc.match_substring_regex(t, _ZONE_RE), _FALSE))
    naive = pc.and_(ok, pc.invert(zoned))
    t = pc.replace_substring_regex(t, "z$", "Z")
    out_naive = _cast_ts(pc.if_else(naive, t, _NULL_STR), None)
    out_zoned = _cast_ts(pc.if_else(zoned, t, _NULL_STR), "UTC")
    return pc.if_else(naive, out_naive, pc.cast(out_zoned, pa.timestamp("us", tz="UTC")))


def _cast_ts(arr: pa.Array, tz: str | None) -> pa.Array:
    typ = pa.timestamp("us", tz=tz)
    try:
        out = pc.cast(arr, typ)
    except pa.ArrowInvalid:
        # a value that looks ISO but is not a real date (month 13, ...): value by value
        from datetime import datetime

        vals = []
        for v in arr.to_pylist():
            if v is None:
                vals.append(None)
                continue
            try:
                d = datetime.fromisoformat(v.replace("Z", "+00:00"))
            except ValueError:
                vals.append(None)
                continue
            if d.tzinfo is not None:
                d = d.astimezone(UTC).replace(tzinfo=None)
            vals.append(d)
        out = pa.array(vals, pa.timestamp("us"))
    if tz is None:
        out = pc.cast(pc.cast(out, pa.int64()), pa.timestamp("us", tz="UTC"))
    return out


def parse_text_as(arr: pa.Array, kind: str) -> pa.Array:
    """Parse CSV text as ``kind`` ('int', 'float', 'timestamp', 'text'); unparsable -> NULL."""
    return TextColumn(arr).parse(kind)


# ---------------------------------------------------------------- typed columns


def native_kind(typ: pa.DataType) -> str:
    if pa.types.is_integer(typ):
        return "int"
    if pa.types.is_floating(typ) or pa.types.is_decimal(typ):
        return "float"
    if pa.types.is_boolean(typ):
        return "bool"
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        return "text"
    if (
        pa.types.is_binary(typ)
        or pa.types.is_large_binary(typ)
        or pa.types.is_fixed_size_binary(typ)
    ):
        return "binary"
    if pa.types.is_timestamp(typ) or pa.types.is_date(typ):
        return "timestamp"
    if pa.types.is_dictionary(typ):
        return native_kind(typ.value_type)
    if pa.types.is_null(typ):
        return "null"
    if pa.types.is_time(typ):
        return "time"
    if pa.types.is_duration(typ):
        return "duration"
    return "other"


def normalize_native(arr: pa.Array, kind: str) -> pa.Array:
    """A typed column in its comparison type: int64, float64 (NaN -> NULL, -0 -> 0),
    string, binary, timestamp[us, UTC]."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if kind == "int":
        return pc.cast(arr, pa.int64())
    if kind == "bool":
        return pc.cast(pc.cast(arr, pa.int8()), pa.int64())
    if kind == "float":
        f = pc.cast(arr, pa.float64())
        f = pc.if_else(pc.fill_null(pc.is_nan(f), _FALSE), pa.scalar(None, pa.float64()), f)
        return pc.add(f, 0.0)
    if kind == "text":
        return pc.cast(arr, pa.string())
    if kind == "binary":
        return pc.cast(arr, pa.binary())
    if kind == "timestamp":
        typ = arr.type
        if pa.types.is_date(typ):
            arr = pc.cast(pc.cast(arr, pa.timestamp("s")), pa.timestamp("us"))
            return pc.cast(pc.cast(arr, pa.int64()), pa.timestamp("us", tz="UTC"))
        if typ.tz is None:
            arr = pc.cast(arr, pa.timestamp("us"))
            return pc.cast(pc.cast(arr, pa.int64()), pa.timestamp("us", tz="UTC"))
        return pc.cast(arr, pa.timestamp("us", tz="UTC"))
    if kind == "null":
        return pa.nulls(len(arr), pa.int64())
    return arr


def common_kind(kinds: list[str]) -> str | None:
    """The comparison type of columns of these kinds, or None if they cannot be compared."""
    ks = {k for k in kinds if k != "null"}
    if not ks:
        return "int"
    if ks <= {"int", "bool"}:
        return "int"
    if ks <= {"int", "float", "bool"}:
        return "float"
    if len(ks) == 1:
        k = next(iter(ks))
        return k if k in ("text", "binary", "timestamp", "time", "duration") else None
    return None
