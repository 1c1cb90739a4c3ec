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

import contextlib
import re
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from facet.errors import FacetInputError
from facet.language.ast import DC, Col, Const

NUMBER_RE = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
INT_RE = r"^[+-]?\d+$"
#: a date, optionally a time, and a zone only after a time
ISO_RE = (
    r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?"
    r"(Z|z|[+-]([01]\d|2[0-3])(:?[0-5]\d)?)?)?$"
)
_FALSE = pa.scalar(False)
#: the zone of a timestamp (after its time: a date's "-22" is not one); an offset is
#: at most 23:59 (+24 and +05:60 are no offsets)
_ZONE_RE = r"\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|z|[+-]([01]\d|2[0-3])(:?[0-5]\d)?)$"

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
    #: column pairs that a predicate compares with each other
    links: list[tuple[str, str]] = field(default_factory=list)
    #: columns some predicate compares with < <= > >=
    ordered: set[str] = field(default_factory=set)
    #: the constants each column is compared with
    constants: dict[str, list[Const]] = field(default_factory=dict)
    #: the first DC that compares each column with < <= > >= (for error messages)
    order_use: dict[str, DC] = field(default_factory=dict)
    #: the first DC that compares each linked column pair (as in ``links``)
    link_use: dict[tuple[str, str], DC] = field(default_factory=dict)
    #: columns some predicate compares across two tuples (``t.A op t'.B``)
    paired: set[str] = field(default_factory=set)

    @property
    def columns(self) -> list[str]:
        return list(self.component_of)

    def ordering_dc(self, comp: Component, column: str | None = None) -> tuple[DC, str | None]:
        """The DC that makes ``comp`` ordered, for messages: the first to order
        ``column`` itself, else the first to order any of its columns, with the
        column it orders (``None`` when that is ``column``)."""
        if column is not None and column in self.order_use:
            return self.order_use[column], None
        for c in comp.columns:
            if c in self.order_use:
                return self.order_use[c], c
        return self.first_use[comp.columns[0]], None

    def linking_dc(self, a: str, b: str) -> DC | None:
        """The first DC that compares columns ``a`` and ``b`` with each other."""
        return self.link_use.get((a, b)) or self.link_use.get((b, a))


def analyze(dcs: list[DC]) -> ColumnUse:
    """Group the used columns into components and mark the ordered ones."""
    first_use: dict[str, DC] = {}
    order_use: dict[str, DC] = {}
    ordered: set[str] = set()
    consts: dict[str, list[Const]] = {}
    constant_use: dict[tuple[str, Const], DC] = {}
    links: list[tuple[str, str]] = []
    link_use: dict[tuple[str, str], DC] = {}
    paired: set[str] = set()
    for dc in dcs:
        for p in dc.predicates:
            cols = p.columns()
            for c in cols:
                first_use.setdefault(c.name, dc)
            if len({c.tuple for c in cols}) == 2:
                paired.update(c.name for c in cols)
            if len(cols) == 2 and cols[0].name != cols[1].name:
                links.append((cols[0].name, cols[1].name))
                link_use.setdefault((cols[0].name, cols[1].name), dc)
            if p.is_order:
                for c in cols:
                    ordered.add(c.name)
                    order_use.setdefault(c.name, dc)
            for c, o in ((p.left, p.right), (p.right, p.left)):
                if isinstance(c, Col) and isinstance(o, Const):
                    lst = consts.setdefault(c.name, [])
                    if (c.name, o) not in constant_use:  # a dict: long in-lists stay linear
                        lst.append(o)
                        constant_use[(c.name, o)] = dc
    use = ColumnUse(
        [], {}, first_use, constant_use, links, ordered, consts, order_use, link_use, paired
    )
    return _grouped(use, set())


def isolate(use: ColumnUse, alone: set[str]) -> ColumnUse:
    """``use`` with the columns in ``alone`` each in a component of its own.

    For all-NULL (null-type) columns: every predicate over one is false
    (docs/semantics.md §4.1), so it must not link the columns it meets into one
    comparison family."""
    if not alone & set(use.component_of):
        return use
    return _grouped(use, alone)


def _grouped(use: ColumnUse, alone: set[str]) -> ColumnUse:
    """Components of ``use``'s columns by union-find over its links, skipping
    links that touch a column in ``alone``."""
    parent = {name: name for name in use.first_use}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in use.links:
        if a in alone or b in alone:
            continue
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra
    groups: dict[str, list[str]] = {}
    for name in parent:
        groups.setdefault(find(name), []).append(name)
    components: list[Component] = []
    component_of: dict[str, int] = {}
    for members in groups.values():
        comp = Component(members, ordered=any(m in use.ordered for m in members))
        seen: set[Const] = set()
        for m in members:
            component_of[m] = len(components)
            for k in use.constants.get(m, []):
                if k not in seen:
                    seen.add(k)
                    comp.constants.append(k)
        components.append(comp)
    return ColumnUse(
        components,
        component_of,
        use.first_use,
        use.constant_use,
        use.links,
        use.ordered,
        use.constants,
        use.order_use,
        use.link_use,
        use.paired,
    )


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
        if out.get(col, kind) != kind:
            raise FacetInputError(
                f"--schema: column '{col}' is given two types ({out[col]} and {kind}); keep one"
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
        self._pure: pa.Array | None = None
        self._fast: pa.Array | bool | None = None
        self._n_iso: int | None = None
        self._iso_ok: pa.Array | None = None
        self._timestamps: pa.Array | None = None
        self._exact: dict[int, int | None] | None = None

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
    def iso_ok(self) -> pa.Array:
        """True where the value is an ISO-8601 date/time that exists: an impossible
        date (month 13, February 30, hour 24) is not one, and does not count for
        the column's type (docs/semantics.md §4.3)."""
        if self._iso_ok is None:
            ok = pc.fill_null(pc.match_substring_regex(self.trimmed, ISO_RE), _FALSE)
            if pc.any(ok).as_py():
                ok = pc.is_valid(self.timestamps)
            self._iso_ok = ok
        return self._iso_ok

    @property
    def n_iso(self) -> int:
        if self._n_iso is None:
            self._n_iso = int(pc.sum(self.iso_ok).as_py() or 0)
        return self._n_iso

    @property
    def timestamps(self) -> pa.Array:
        """timestamp[us, UTC], NULL where not an ISO-8601 date/time that exists."""
        if self._timestamps is None:
            self._timestamps = parse_timestamps(self.raw)
        return self._timestamps

    @property
    def floats(self) -> pa.Array:
        """float64, NULL where not a number."""
        if self._floats is None:
            good = pc.if_else(self.num_ok, self.trimmed, _NULL_STR)
            self._floats = pc.cast(good, pa.float64())
        return self._floats

    @property
    def integral(self) -> bool:
        """Every parsed value is a whole number that fits int64 (an integer literal
        up to int64's limits, or a whole number written otherwise, as ``1e3``) --
        judged on the exact decimal value, not on its float64 rounding."""
        if self._integral is None:
            f = self.floats.to_numpy(zero_copy_only=False)  # cached: a float parse needs it
            f = f[~np.isnan(f)]
            if not bool(np.all(f == np.floor(f))):
                self._integral = False  # a fractional value: the usual float column
        if self._integral is None and self._fast_ints() is not None:
            self._integral = True  # every number an integer literal within int64
        if self._integral is None:
            pure = self.pure_ints
            other = pc.and_(self.num_ok, pc.invert(pure))
            ok = True
            if pc.any(pure).as_py():
                try:
                    pc.cast(pc.if_else(pure, self.unsigned, _NULL_STR), pa.int64())
                except pa.ArrowInvalid:  # beyond int64
                    ok = False
            if ok and pc.any(other).as_py():
                f = pc.filter(self.floats, other).to_numpy(zero_copy_only=False)
                # (float64 rounds int64's limits to +-2^63: the rows it may round
                # are judged exactly below, so 2^63 itself passes here)
                ok = bool(np.all(f == np.floor(f))) and float(np.min(f)) >= -(2.0**63)
                ok = ok and float(np.max(f)) <= 2.0**63
                ok = ok and all(v is not None for v in self._exact_whole().values())
            self._integral = ok
        return self._integral

    def _exact_whole(self) -> dict[int, int | None]:
        """The rows whose number is not an integer literal and whose float64 parse
        may not be its exact value (more than 15 significant digits, a magnitude of
        2^53 or more, or a nonzero number that underflows to 0.0, as ``1e-400``):
        each row's exact whole value within int64, or None when
        it is fractional or beyond int64 (the decimal itself, not its rounding:
        ``9007199254740993.0`` is 9007199254740993, ``1.00000000000000001`` is not
        whole).  Few rows in real data; each is read by :func:`whole_int64`."""
        if self._exact is not None:
            return self._exact

        other = pc.and_(self.num_ok, pc.invert(self.pure_ints))
        mantissa = pc.replace_substring_regex(self.trimmed, r"[eE].*$", "")
        digits = pc.replace_substring_regex(mantissa, r"[^0-9]", "")
        significant = pc.replace_substring_regex(
            pc.replace_substring_regex(digits, r"^0+", ""), r"0+$", ""
        )
        big = pc.greater_equal(pc.abs(self.floats), pa.scalar(2.0**53, pa.float64()))
        underflow = pc.and_(
            pc.equal(self.floats, pa.scalar(0.0, pa.float64())),
            pc.greater(pc.utf8_length(significant), 0),
        )
        risky = pc.or_(pc.greater(pc.utf8_length(significant), 15), pc.or_(big, underflow))
        risky = pc.and_(other, risky)
        rows = np.flatnonzero(pc.fill_null(risky, _FALSE).to_numpy(zero_copy_only=False))
        out = {i: whole_int64(self.trimmed[i].as_py()) for i in rows.tolist()}
        self._exact = out
        return out

    def _fast_ints(self) -> pa.Array | None:
        """int64 in one cast when every number is an integer literal within int64
        (Arrow's cast refuses ``+5``, fractions and overflow: then None)."""
        if self._fast is None:
            self._fast = False
            good = pc.if_else(self.num_ok, self.trimmed, _NULL_STR)
            if not pc.any(pc.starts_with(good, "+")).as_py():
                with contextlib.suppress(pa.ArrowInvalid):
                    self._fast = pc.cast(good, pa.int64())
        return None if self._fast is False else self._fast

    @property
    def pure_ints(self) -> pa.Array:
        """True where the trimmed text is an integer literal."""
        if self._pure is None:
            self._pure = pc.fill_null(pc.match_substring_regex(self.trimmed, INT_RE), _FALSE)
        return self._pure

    @property
    def unsigned(self) -> pa.Array:
        """The trimmed text without a leading ``+`` (Arrow's integer cast refuses it)."""
        return pc.replace_substring_regex(self.trimmed, r"^\+", "")

    def ints(self) -> pa.Array:
        """Exact int64: integer literals parsed as integers, whole numbers written
        otherwise (``1e3``, ``2.0``) via float64; a fractional value, or one beyond
        int64, is NULL (the caller warns about it)."""
        fast = self._fast_ints()
        if fast is not None:
            return fast
        pure = self.pure_ints
        texts = pc.if_else(pure, self.unsigned, _NULL_STR)
        try:
            ints = pc.cast(texts, pa.int64())
        except pa.ArrowInvalid:  # some literal beyond int64: those become NULL
            big = pc.greater(pc.utf8_length(pc.replace_substring_regex(texts, "^-", "")), 18)
            fits = [_fits_int64(v) for v in pc.filter(texts, pc.fill_null(big, _FALSE)).to_pylist()]
            if not all(fits):
                keep = np.ones(len(texts), np.bool_)
                big_idx = np.flatnonzero(np.asarray(pc.fill_null(big, _FALSE)))
                keep[big_idx[~np.array(fits, np.bool_)]] = False
                texts = pc.if_else(pa.array(keep), texts, _NULL_STR)
            ints = pc.cast(texts, pa.int64())
        other = pc.and_(self.num_ok, pc.invert(pure))
        if pc.any(other).as_py():
            f = self.floats
            whole = pc.and_(
                pc.equal(f, pc.floor(f)), pc.less(pc.abs(f), pa.scalar(2.0**63, pa.float64()))
            )
            use = pc.fill_null(pc.and_(other, whole), _FALSE)
            as_int = pc.cast(pc.if_else(use, f, pa.scalar(None, pa.float64())), pa.int64())
            exact = self._exact_whole()
            if exact:  # the rows float64 may round: their exact values (None: not whole)
                values = pc.fill_null(as_int, 0).to_numpy().astype(np.int64, copy=True)
                valid = np.asarray(use.to_numpy(zero_copy_only=False), np.bool_).copy()
                for i, v in exact.items():
                    values[i] = 0 if v is None else v
                    valid[i] = v is not None
                as_int = pa.array(values, pa.int64(), mask=~valid)
                use = pa.array(valid)
            ints = pc.if_else(use, as_int, ints)
        return ints

    def parse(self, kind: str) -> pa.Array:
        """The column as ``kind`` ('int', 'float', 'timestamp', 'text'); unparsable -> NULL."""
        if kind == "text":
            return self.raw
        if kind == "timestamp":
            return self.timestamps
        if kind == "int":
            return self.ints()
        return self.floats


def _fits_int64(text: str) -> bool:
    return -(2**63) <= int(text) < 2**63


def number_parts(text: str) -> tuple[bool, str, int] | None:
    """``(negative, digits, power)``: a number written as ``NUMBER_RE`` is exactly
    ``+-int(digits) * 10**power``, ``digits`` without leading or trailing zeros (empty
    for zero); an exponent of more than 30 digits gives a power of +-10**31 (beyond
    every value a column holds). None when ``text`` is no such number."""
    m = re.fullmatch(r"([+-]?)(\d*)\.?(\d*)(?:[eE]([+-]?\d+))?", text, re.ASCII)
    if m is None:
        return None
    sign, whole, frac, exp = m.groups()
    written = (exp or "0").lstrip("+-").lstrip("0") or "0"
    e = int(written) if len(written) <= 30 else 10**31  # (no 10**31-digit int is built)
    e = -e if (exp or "").startswith("-") else e
    digits = (whole + frac).lstrip("0")
    kept = digits.rstrip("0")
    return sign == "-", kept, e - len(frac) + len(digits) - len(kept)


def whole_int64(text: str) -> int | None:
    """The int64 a number written as ``NUMBER_RE`` is exactly, or None when it is
    fractional or beyond int64 -- from its digits and exponent as written
    (:func:`number_parts`: ``1e-400`` is not whole, ``1e-99999999999999999999``
    neither, ``9.223372036854775807e18`` is int64's maximum)."""
    parts = number_parts(text)
    if parts is None:
        return None
    negative, digits, power = parts
    if not digits:
        return 0
    if power < 0 or len(digits) + power > 19:
        return None  # a nonzero digit below the point, or 20 digits or more
    v = int(digits) * 10**power
    v = -v if negative else v
    return v if -(2**63) <= v < 2**63 else None


def parse_numbers(arr: pa.Array) -> tuple[pa.Array, bool]:
    """Text -> float64 (NULL where not a number); also whether all parsed values are integral."""
    col = TextColumn(arr)
    return col.floats, col.integral


def parse_ints(arr: pa.Array) -> pa.Array:
    """Text of integral numbers -> exact int64."""
    return TextColumn(arr).ints()


def parse_timestamps(arr: pa.Array, unit: str = "us") -> pa.Array:
    """ISO-8601 text -> timestamp[``unit``, UTC] (naive times are UTC); NULL where not
    ISO.  At microseconds (CSV columns, docs/semantics.md §4.3) longer fractions are
    cut; constants parse at nanoseconds (§4.4)."""
    t = pc.utf8_trim_whitespace(arr)
    ok = pc.fill_null(pc.match_substring_regex(t, ISO_RE), _FALSE)
    zoned = pc.and_(ok, pc.fill_null(pc.match_substring_regex(t, _ZONE_RE), _FALSE))
    naive = pc.and_(ok, pc.invert(zoned))
    t = pc.replace_substring_regex(t, "z$", "Z")
    # fractions are cut to the unit: microseconds in data, nanoseconds for constants
    digits = {"us": 6, "ns": 9}.get(unit)
    if digits is not None:
        t = pc.replace_substring_regex(t, rf"(\.\d{{{digits}}})\d+", r"\1")
    out_naive = _cast_ts(pc.if_else(naive, t, _NULL_STR), None, unit)
    out_zoned = _cast_ts(pc.if_else(zoned, t, _NULL_STR), "UTC", unit)
    return pc.if_else(naive, out_naive, pc.cast(out_zoned, pa.timestamp(unit, tz="UTC")))


def constant_unit(text: str) -> str:
    """The timestamp unit that holds an ISO constant exactly (by its fraction digits)."""
    m = re.search(r"\d{2}:\d{2}:\d{2}\.(\d+)", text)
    digits = len(m.group(1).rstrip("0")) if m else 0
    return "s" if digits == 0 else "ms" if digits <= 3 else "us" if digits <= 6 else "ns"


#: the fields of an ``ISO_RE`` value that can be out of range
_ISO_FIELDS = (
    r"^(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})(?:[T ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?)?"
)
_DAYS_IN_MONTH = pa.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], pa.int64())


def _real_dates(arr: pa.Array) -> pa.Array:
    """True where an ``ISO_RE`` value names a real date and time: month 1-12, a day
    of that month (February 29 in leap years of the proleptic Gregorian calendar,
    year 0 among them, as Arrow counts), hour 0-23, minute and second 0-59 -- all
    arrays, no loop per value."""
    parts = pc.extract_regex(arr, _ISO_FIELDS)

    def field(name: str) -> pa.Array:
        text = pc.struct_field(parts, name)
        return pc.fill_null(pc.cast(pc.if_else(pc.equal(text, ""), None, text), pa.int64()), 0)

    y, mo, d = field("y"), field("mo"), field("d")
    leap = pc.and_(
        pc.equal(pc.bit_wise_and(y, 3), 0),
        pc.or_(pc.not_equal(pc.remainder(y, 100), 0), pc.equal(pc.remainder(y, 400), 0)),
    )
    month_ok = pc.and_(pc.greater_equal(mo, 1), pc.less_equal(mo, 12))
    days = pc.take(_DAYS_IN_MONTH, pc.if_else(month_ok, mo, 0))
    days = pc.add(days, pc.cast(pc.and_(leap, pc.equal(mo, 2)), pa.int64()))
    ok = pc.and_(month_ok, pc.and_(pc.greater_equal(d, 1), pc.less_equal(d, days)))
    ok = pc.and_(ok, pc.less_equal(field("h"), 23))
    ok = pc.and_(ok, pc.and_(pc.less_equal(field("mi"), 59), pc.less_equal(field("s"), 59)))
    return pc.fill_null(ok, _FALSE)


def _cast_ts(arr: pa.Array, tz: str | None, unit: str = "us") -> pa.Array:
    """``ISO_RE`` text (NULL elsewhere) as timestamps; a value that is not a real
    date or time (month 13, February 30, hour 24) is NULL.  Arrow's cast refuses a
    whole array for one such value: then those are found (:func:`_real_dates`) and
    the cast runs again without them.  A value beyond the unit's range still
    raises ``ArrowInvalid`` (the caller says which)."""
    typ = pa.timestamp(unit, tz=tz)
    try:
        out = pc.cast(arr, typ)
    except pa.ArrowInvalid:
        out = pc.cast(pc.if_else(_real_dates(arr), arr, _NULL_STR), typ)
    if tz is None:
        out = pc.cast(pc.cast(out, pa.int64()), pa.timestamp(unit, tz="UTC"))
    return out


def parse_text_as(arr: pa.Array, kind: str) -> pa.Array:
    """Parse CSV text as ``kind`` ('int', 'float', 'timestamp', 'text'); unparsable -> NULL."""
    return TextColumn(arr).parse(kind)


# ---------------------------------------------------------------- typed columns


def storage_type(typ: pa.DataType) -> pa.DataType:
    """An extension type's storage (UUID: 16 bytes, JSON: text); others as they are."""
    while isinstance(typ, pa.BaseExtensionType):
        typ = typ.storage_type
    return typ


def native_kind(typ: pa.DataType) -> str:
    """The comparison family of an Arrow type (docs/semantics.md §4.1)."""
    typ = storage_type(typ)
    if pa.types.is_integer(typ):
        return "int"
    if pa.types.is_floating(typ):
        return "float"
    if pa.types.is_decimal(typ):
        return "decimal"
    if pa.types.is_boolean(typ):
        return "bool"
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        return "text"
    if (
        pa.types.is_binary(typ)
        or pa.types.is_large_binary(typ)
        or pa.types.is_fixed_size_binary(typ)
        or pa.types.is_binary_view(typ)
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


_UNIT_RANK = {"s": 0, "ms": 1, "us": 2, "ns": 3}


def finest_unit(types: list[pa.DataType]) -> str:
    """The finest timestamp unit among these types (dates count as seconds, text
    timestamps as microseconds): the unit a timestamp component compares in."""
    unit = "s"
    for t in types:
        t = storage_type(t)
        u = t.unit if pa.types.is_timestamp(t) else ("us" if pa.types.is_string(t) else "s")
        if _UNIT_RANK[u] > _UNIT_RANK[unit]:
            unit = u
    return unit


def finer_unit(a: str, b: str) -> str:
    """The finer of two timestamp units."""
    return a if _UNIT_RANK[a] >= _UNIT_RANK[b] else b


def normalize_native(arr: pa.Array, kind: str, unit: str | None = None) -> pa.Array:
    """A typed column in its comparison type, without losing a value: int64 (or
    uint64 when a value exceeds int64), float64 (float16/32 widened exactly; NaN ->
    NULL, -0 -> 0), decimal as it is, string, binary, timestamp[``unit``, UTC] (``None``: the column's own unit)."""
    if isinstance(arr.type, pa.BaseExtensionType):
        arr = arr.storage
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if kind == "int":
        if pa.types.is_uint64(arr.type) and (pc.max(arr).as_py() or 0) >= 2**63:
            return arr  # beyond int64: ranked exactly with the other numbers
        return pc.cast(arr, pa.int64())
    if kind == "bool":
        return pc.cast(pc.cast(arr, pa.int8()), pa.int64())
    if kind == "float":
        f = pc.cast(arr, pa.float64())
        f = pc.if_else(pc.fill_null(pc.is_nan(f), _FALSE), pa.scalar(None, pa.float64()), f)
        return pc.add(f, 0.0)
    if kind == "decimal":
        return arr
    if kind == "text":
        return pc.cast(arr, pa.string())
    if kind == "binary":
        return pc.cast(arr, pa.binary())
    if kind == "timestamp":
        return _timestamps_in(arr, unit)
    if kind == "null":
        return pa.nulls(len(arr), pa.int64())
    return arr


def _timestamps_in(arr: pa.Array, unit: str | None) -> pa.Array:
    """Dates and timestamps of any unit and zone as timestamp[``unit``, UTC]
    (naive values are UTC); a value the finer unit cannot hold is an error."""
    typ = arr.type
    if pa.types.is_date(typ):
        arr = pc.cast(arr, pa.timestamp("s"))
        typ = arr.type
    target = pa.timestamp(unit or typ.unit, tz="UTC")
    if typ.tz is None:
        arr = pc.cast(pc.cast(arr, pa.int64()), pa.timestamp(typ.unit, tz="UTC"))
    return pc.cast(arr, target)


def common_kind(kinds: list[str]) -> str | None:
    """The comparison family of columns of these kinds, or None if they cannot be
    compared: numbers of any kinds compare by exact value (``float`` when a float
    takes part, ``decimal`` when a decimal does, else ``int``; booleans are 0/1)."""
    ks = {k for k in kinds if k != "null"}
    if not ks:
        return "null"
    if ks == {"bool"}:
        return "bool"
    if ks <= {"int", "float", "decimal", "bool"}:
        if "float" in ks:
            return "float"
        return "decimal" if "decimal" in ks else "int"
    if len(ks) == 1:
        k = next(iter(ks))
        return k if k in ("text", "binary", "timestamp", "time", "duration") else None
    return None
