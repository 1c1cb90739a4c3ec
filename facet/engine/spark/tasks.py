"""What runs inside Spark's Python workers: the local pipeline on a task's rows.

Every function here takes Arrow data and returns Arrow data; none imports
pyspark.  The driver pickles a :class:`TaskSpec` (the DCs, the typing it
decided for the whole table, the config) into the closures it hands Spark.

A task's rows carry their tid (``_facet_tid``: the row's position in the
input) and, for pair work, the side flags ``_facet_l`` / ``_facet_r``: the
task's initial pairs are ``(L, R)`` (a row may be on both sides, and may come
twice, once per side: the flags of one tid are merged).  Codes are the task's
own (each task encodes its rows); the typing is the table's, so every task
compares values alike (docs/semantics.md §4).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from facet.column_types import ColumnUse
from facet.encoding import EncodedTable, component_arrays, encode
from facet.engine.filters import filter_mask, scoped_pairs, where_mask
from facet.engine.groups import Groups
from facet.engine.local import LocalEngine
from facet.engine.statistics import value_hashes
from facet.errors import DataError, FacetInputError
from facet.kernels import expand, hashing  # modules, not kernels: see below
from facet.language.ast import DC
from facet.language.normalize import NormalDC, normalize
from facet.loading import Source, load
from facet.planner.config import Config
from facet.planner.plan import Plan, Stage

# Kernels are reached through their modules (``hashing.mix64_array``), never
# bound as globals here: Spark pickles the closures below by value, with the
# globals they use, and pickling a numba dispatcher is not safe from several
# driver threads at once (``--mode parallel``).

TID = "_facet_tid"
LEFT = "_facet_l"
RIGHT = "_facet_r"
TASK = "_facet_task"
KEY_L = "_facet_kl"
KEY_R = "_facet_kr"
ORDER_L = "_facet_ol"
ORDER_R = "_facet_or"
#: columns the engine adds to a table's rows
INTERNAL = (TID, LEFT, RIGHT, TASK, KEY_L, KEY_R, ORDER_L, ORDER_R)
#: kinds whose values map to float64 keeping their order (x <= y => f(x) <= f(y))
ORDERED_KINDS = ("int", "float", "decimal", "bool", "timestamp", "date")

_NUMBER_KINDS = ("int", "float", "decimal", "bool")


@dataclass
class TaskSpec:
    """What every task of a run needs: how to type and encode rows, and the DCs."""

    name: str
    #: CSV text (typed by the DCs) or typed input
    text: bool
    all_columns: list[str]
    dcs: list[DC]
    use: ColumnUse
    #: column -> kind for every task (the user's ``schema`` plus the driver's
    #: CSV typing decisions): one typing for the whole table
    schema: dict[str, str]
    config: Config
    normal: list[NormalDC] = field(default_factory=list)
    #: column -> its name in the table's frame, a plain one (pyspark's Arrow
    #: functions name every column unquoted, so a dot or a backtick would break
    #: them); a column not here keeps its name
    frame_names: dict[str, str] = field(default_factory=dict)
    #: a scoped run's ``--where`` (:class:`facet.language.where.Where`): each task
    #: finds its rows in scope and starts from the scoped initial pairs
    where: Any = None

    def __post_init__(self) -> None:
        if not self.normal:
            self.normal = [normalize(d) for d in self.dcs]

    def in_frame(self, column: str) -> str:
        """The name ``column`` has in the table's frame."""
        return self.frame_names.get(column, column)


# ------------------------------------------------------------------ reading

#: brackets a bad-input message raised in a task, for the driver to find in
#: the error Spark reports (:func:`task_input_error`)
INPUT_ERROR = ("<facet-input-error>", "</facet-input-error>")


#: the last line of a worker's traceback when a task raised facet's bad-input error
_RAISED = re.compile(r"^(?:facet\.[\w.]*\.)?(FacetInputError|DataError|DCSyntaxError): (.+)$", re.M)


def task_input_error(err: BaseException) -> str | None:
    """The bad-input message a task raised, if ``err`` (what Spark reports on the
    driver) carries one: bracketed by :data:`INPUT_ERROR`, or as the last line
    of the Python worker's traceback (a typing error found in a task)."""
    got = task_input_exception(err)
    return None if got is None else str(got)


def task_input_exception(err: BaseException) -> FacetInputError | None:
    """The bad-input error a task raised, as the driver's exception of the same
    class (a :class:`DataError` stays one, so ``except DataError`` catches it on
    either engine), if ``err`` carries one; else None."""
    text = str(err)
    start = text.find(INPUT_ERROR[0])
    end = text.find(INPUT_ERROR[1], start + 1)
    if start >= 0 and end >= 0:  # (only the CSV reader's DataError is bracketed)
        return DataError(text[start + len(INPUT_ERROR[0]) : end])
    if "Traceback (most recent call last)" not in text:
        return None
    raised = _RAISED.findall(text)
    if not raised:
        return None
    name, message = raised[-1]
    # a DC syntax error is the driver's to find; one from a task is input all the same
    return (DataError if name == "DataError" else FacetInputError)(message.strip())


def csv_read_job(
    path: str, name: str, columns: list[str], delimiter: str | None = None
) -> Callable:
    """Read the CSV file at ``path`` (absolute, as every executor finds it) as the
    local engine reads it (:func:`facet.loading.load`: RFC 4180, every cell text,
    an empty field NULL, empty lines and bad bytes as docs/semantics.md §4.2 says)
    in the one task that is handed a row: ``columns`` as text, each row with its
    tid (its record's position).  Bad input raises its one-line message, naming
    the file as ``name``, bracketed for the driver.  ``delimiter``: the file's (None:
    sniffed from its header)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        if not sum(b.num_rows for b in batches):
            return
        try:
            source = load(path, columns, delimiter)
        except DataError as err:
            message = str(err).replace(path, name)
            raise DataError(f"{INPUT_ERROR[0]}{message}{INPUT_ERROR[1]}") from None
        tids = pa.array(np.arange(source.num_rows, dtype=np.int64))
        table = pa.table([tids, *source.table.select(columns).columns], names=[TID, *columns])
        yield from table.to_batches(max_chunksize=1 << 17)

    return run


# ------------------------------------------------------------------ typing and encoding


def source_of(table: pa.Table, spec: TaskSpec) -> Source:
    """The used columns of a task's rows as a :class:`Source`: for CSV text an
    empty string is NULL, quoted or not (docs/semantics.md §4.2)."""
    cols = {}
    for c in spec.use.columns:
        arr = table.column(spec.in_frame(c)).combine_chunks()
        if spec.text and (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
            empty = pc.equal(arr, "")
            if pc.any(empty).as_py():
                arr = pc.if_else(empty, pa.nulls(len(arr), arr.type), arr)
        cols[c] = arr
    return Source(
        pa.table(cols) if cols else pa.table({}), spec.name, spec.text, spec.all_columns,
        table.num_rows,
    )  # fmt: skip


def encode_rows(table: pa.Table, spec: TaskSpec) -> EncodedTable:
    return encode(source_of(table, spec), spec.use, spec.schema, spec.config)


def key_hashes(typed: pa.Array, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """A 64-bit key per row such that equal values (by docs/semantics.md §4:
    5 = 5.0 across int, float and decimal columns) get equal keys, and whether
    the row has one (NULL has none).  Unequal values may share a key: a key
    only sends rows to a task, where equality is checked exactly."""
    n = len(typed)
    if kind == "null" or typed.null_count == n:  # no row has a key (a null-type column)
        return np.zeros(n, np.int64), np.zeros(n, bool)
    valid = ~np.asarray(typed.is_null().to_numpy(zero_copy_only=False), bool)
    if kind in _NUMBER_KINDS:
        f = pc.cast(typed, pa.float64(), safe=False)
        x = np.asarray(pc.fill_null(f, 0.0).to_numpy(zero_copy_only=False), np.float64) + 0.0
        h = hashing.hash_words(np.ascontiguousarray(x).view(np.uint64))
    else:
        filled = pc.fill_null(typed, pa.scalar("", typed.type)) if kind == "text" else typed
        if pa.types.is_string_view(filled.type) or pa.types.is_binary_view(filled.type):
            filled = filled.cast(pa.large_binary())
        h = value_hashes(filled)
    return np.asarray(h).view(np.int64), valid


def typed_columns(table: pa.Table, spec: TaskSpec, names: list[str]) -> dict[str, tuple]:
    """``name -> (typed array, kind)`` for each of ``names``, typed with its
    component as the encoder types it."""
    source = source_of(table, spec)
    out: dict[str, tuple] = {}
    for comp in spec.use.components:
        if not any(c in names for c in comp.columns):
            continue
        typed, kind, _ = component_arrays(comp, source, spec.schema, spec.use)
        for c in comp.columns:
            if c in names:
                out[c] = (typed[c], kind)
    return out


# ------------------------------------------------------------------ mapInArrow jobs


def text_facts_job(spec: TaskSpec, columns: list[str]) -> Callable:
    """Per batch and column: non-empty values, numbers, ISO dates, all whole,
    and the first value (by tid) that is not a number and not an ISO date --
    what CSV typing and its warnings come from, merged over the table by the
    driver."""
    from facet.column_types import TextColumn

    def first_bad(t: TextColumn, ok: pa.Array, tids: np.ndarray) -> tuple[str | None, int | None]:
        bad = np.flatnonzero(
            np.asarray(pc.and_(pc.is_valid(t.raw), pc.invert(ok)).to_numpy(zero_copy_only=False))
        )
        if not bad.size:
            return None, None
        i = int(bad[np.argmin(tids[bad])])
        return t.raw[i].as_py(), int(tids[i])

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            table = pa.Table.from_batches([batch])
            source = source_of(table, spec)
            tids = table.column(TID).to_numpy()
            rows: dict[str, list] = {name: [] for name in TEXT_FACTS_SCHEMA.names}
            for c in columns:
                t = TextColumn(source.table.column(c).combine_chunks())
                rows["column"].append(c)
                rows["nonempty"].append(t.nonempty)
                rows["n_num"].append(t.n_num)
                rows["n_iso"].append(t.n_iso)
                rows["integral"].append(bool(t.integral))
                for name, ok in (("bad_num", t.num_ok), ("bad_iso", t.iso_ok)):
                    value, at = first_bad(t, ok, tids)
                    rows[name].append(value)
                    rows[f"{name}_at"].append(at)
            yield pa.RecordBatch.from_pydict(rows, schema=TEXT_FACTS_SCHEMA)

    return run


def unparsed_job(spec: TaskSpec, columns: list[str]) -> Callable:
    """Per batch and column that ``spec.schema`` declares: the values that typing
    turned NULL (their count, the first by tid as its ``repr``, and whether any is
    a number an int column cannot hold) -- the local encoder's warning, merged
    over the table by the driver."""
    from facet.encoding import any_number

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            table = pa.Table.from_batches([batch])
            source = source_of(table, spec)
            typed = typed_columns(table, spec, columns)
            tids = table.column(TID).to_numpy()
            rows: dict[str, list] = {name: [] for name in UNPARSED_SCHEMA.names}
            for c in columns:
                raw = source.table.column(c).combine_chunks()
                lost_at = np.flatnonzero(
                    np.asarray(
                        pc.and_(pc.is_valid(raw), pc.is_null(typed[c][0])).to_numpy(
                            zero_copy_only=False
                        ),
                        bool,
                    )
                )
                if not lost_at.size:
                    continue
                first = int(lost_at[np.argmin(tids[lost_at])])
                lost = raw.take(pa.array(lost_at))
                rows["column"].append(c)
                rows["lost"].append(int(lost_at.size))
                rows["example"].append(repr(raw[first].as_py()))
                rows["example_at"].append(int(tids[first]))
                rows["numbers"].append(spec.schema.get(c) == "int" and any_number(lost))
            yield pa.RecordBatch.from_pydict(rows, schema=UNPARSED_SCHEMA)

    return run


UNPARSED_SCHEMA = pa.schema(
    [("column", pa.string()), ("lost", pa.int64()), ("example", pa.string()),
     ("example_at", pa.int64()), ("numbers", pa.bool_())]
)  # fmt: skip


TEXT_FACTS_SCHEMA = pa.schema(
    [("column", pa.string()), ("nonempty", pa.int64()), ("n_num", pa.int64()),
     ("n_iso", pa.int64()), ("integral", pa.bool_()),
     ("bad_num", pa.string()), ("bad_num_at", pa.int64()),
     ("bad_iso", pa.string()), ("bad_iso_at", pa.int64())]
)  # fmt: skip


def keyed_job(spec: TaskSpec, keys: list[tuple[str, str]]) -> Callable:
    """The rows with their key as ``t`` (columns ``a`` of ``keys``' pairs
    ``(a, b)``: ``t.a = t'.b``) and as ``t'`` (columns ``b``): one equality's
    :func:`key_hashes`, or several combined into one (NULL if any is)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            table = pa.Table.from_batches([batch])
            typed = typed_columns(table, spec, list(dict.fromkeys(c for k in keys for c in k)))
            out = batch
            for name, side in ((KEY_L, 0), (KEY_R, 1)):
                k, valid = combined_keys([key_hashes(*typed[pair[side]]) for pair in keys])
                out = out.append_column(name, pa.array(k, pa.int64(), mask=~valid))
            yield out

    return run


def combined_keys(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """One key per row from several columns' :func:`key_hashes` (equal parts,
    equal keys), valid where every part is."""
    k, valid = parts[0]
    for h, v in parts[1:]:
        mixed = (k.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ h.view(np.uint64)
        k = hashing.mix64_array(mixed).view(np.int64)
        valid = valid & v
    return k, valid


def order_key(typed: pa.Array, kind: str) -> pa.Array:
    """float64 keys in the order of the typed values (rounding is monotonic, so
    ``f(x) > f(y)`` implies ``x > y``); NULL where the value is NULL (a float
    NaN is NULL, docs/semantics.md §4.1)."""
    if kind not in ORDERED_KINDS:
        raise ValueError(f"no order key for {kind} values")
    t = typed.type
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t):
        typed = typed.cast(pa.int64() if t.bit_width == 64 else pa.int32())
    f = pc.cast(typed, pa.float64(), safe=False)
    return pc.if_else(pc.is_nan(f), pa.scalar(None, pa.float64()), f)


def order_keys_job(spec: TaskSpec, a: str, b: str) -> Callable:
    """The rows with the order keys of column ``a`` (as ``t``) and ``b`` (as ``t'``)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            typed = typed_columns(pa.Table.from_batches([batch]), spec, [a, b])
            out = batch
            for name, col in ((ORDER_L, a), (ORDER_R, b)):
                out = out.append_column(name, order_key(*typed[col]))
            yield out

    return run


def exact_numbers(typed: pa.Array, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """A typed column as numbers that compare exactly as its values do
    (``mode`` ``"int"``: int64 -- whole numbers, booleans, dates, times;
    ``"float"``: float64 with ``-0.0 = 0.0``), and which rows have one (NULL and
    NaN have none, docs/semantics.md §4.1)."""
    t = typed.type
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t):
        typed = typed.cast(pa.int64() if t.bit_width == 64 else pa.int32())
    valid = np.asarray(typed.is_valid().to_numpy(zero_copy_only=False), bool)
    if mode == "int" and pa.types.is_decimal(t):  # the unscaled integers of one scale
        if isinstance(typed, pa.ChunkedArray):
            typed = typed.combine_chunks()
        words = np.frombuffer(typed.buffers()[1], np.int64, offset=typed.offset * 16)
        return words[0 : 2 * len(typed) : 2].copy() * valid, valid
    if mode == "int":
        x = pc.fill_null(pc.cast(typed, pa.int64()), 0)
        return np.asarray(x.to_numpy(zero_copy_only=False), np.int64), valid
    x = np.asarray(pc.fill_null(pc.cast(typed, pa.float64()), 0.0).to_numpy(), np.float64) + 0.0
    return x, valid & ~np.isnan(x)


def summary_mode(types: list[pa.DataType]) -> str | None:
    """``"int"`` or ``"float"`` when columns of these Arrow types (typed as the
    encoder types them) compare exactly as int64 or as float64 numbers -- a
    decimal of at most 18 digits as its unscaled integer, when all share one
    type; None otherwise (other decimals, uint64, mixed whole and fractional
    numbers, text)."""
    if all(pa.types.is_decimal128(t) for t in types):
        return "int" if len(set(types)) == 1 and types[0].precision <= 18 else None
    ints = [
        pa.types.is_boolean(t)
        or (pa.types.is_integer(t) and t != pa.uint64())
        or pa.types.is_date(t)
        or pa.types.is_time(t)
        or pa.types.is_timestamp(t)
        for t in types
    ]
    temporal = [t for t in types if pa.types.is_temporal(t)]
    if all(ints) and (not temporal or (len(temporal) == len(types) and len(set(types)) == 1)):
        return "int"
    if all(pa.types.is_floating(t) for t in types):
        return "float"
    return None


def _buckets(keys: pa.Array, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's range (the number of bounds at or below its order key, as the
    driver's Spark expression counts them) and whether it has a key."""
    valid = np.asarray(keys.is_valid().to_numpy(zero_copy_only=False), bool)
    k = np.asarray(pc.fill_null(keys, 0.0).to_numpy(), np.float64)
    return np.searchsorted(bounds, k, side="right").astype(np.int64), valid


SUMMARY_SCHEMA = pa.schema(
    [("side", pa.int64()), ("bucket", pa.int64()), ("ival", pa.int64()),
     ("fval", pa.float64()), ("cnt", pa.int64())]
)  # fmt: skip


def range_summary_job(spec: TaskSpec, a: str, b: str, mode: str, bounds: list[float]) -> Callable:
    """Per batch: how many rows of each range hold each value of column ``a``
    (side 0, the ``t`` rows) and of column ``b`` (side 1, the ``t'`` rows) --
    ranges of the order keys ``ORDER_L`` (side 0) and ``ORDER_R`` (side 1)."""
    edges = np.asarray(bounds, np.float64)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            table = pa.Table.from_batches([batch])
            typed = typed_columns(table, spec, [a, b])
            for side, col, order in ((0, a, ORDER_L), (1, b, ORDER_R)):
                x, ok = exact_numbers(typed[col][0], mode)
                bucket, has = _buckets(table.column(order).combine_chunks(), edges)
                keep = ok & has
                if not keep.any():
                    continue
                pairs = np.empty(int(keep.sum()), [("b", np.int64), ("v", x.dtype)])
                pairs["b"], pairs["v"] = bucket[keep], x[keep]
                uniq, cnt = np.unique(pairs, return_counts=True)
                n = len(uniq)
                ival = pa.array(uniq["v"], pa.int64()) if mode == "int" else pa.nulls(n, pa.int64())
                fval = pa.array(uniq["v"], pa.float64()) if mode == "float" else pa.nulls(n)
                yield pa.RecordBatch.from_arrays(
                    [pa.array(np.full(n, side, np.int64)), pa.array(uniq["b"]), ival,
                     fval.cast(pa.float64()), pa.array(cnt.astype(np.int64))],
                    schema=SUMMARY_SCHEMA,
                )  # fmt: skip

    return run


#: ``x op y`` with the sides swapped: ``y flip(op) x``
FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}


def has_partner(x: np.ndarray, op: str, values: np.ndarray) -> np.ndarray:
    """For each ``x``: whether some ``v`` of the sorted distinct ``values``
    satisfies ``x op v``."""
    if values.size == 0:
        return np.zeros(x.shape, bool)
    if op == "<":
        return x < values[-1]
    if op == "<=":
        return x <= values[-1]
    if op == ">":
        return x > values[0]
    if op == ">=":
        return x >= values[0]
    i = np.minimum(np.searchsorted(values, x), values.size - 1)
    equal = values[i] == x
    if op == "=":
        return equal
    return ~equal | (values.size > 1)


def pairs_satisfying(
    va: np.ndarray, ca: np.ndarray, op: str, vb: np.ndarray, cb: np.ndarray
) -> int:
    """Pairs ``(x, y)`` with ``x op y``, ``x`` taken ``ca`` times from the sorted
    distinct ``va`` and ``y`` ``cb`` times from the sorted distinct ``vb``."""
    if va.size == 0 or vb.size == 0:
        return 0
    c = np.concatenate(([0], np.cumsum(cb, dtype=np.int64)))
    total = c[-1]
    lo = c[np.searchsorted(vb, va, side="left")]
    hi = c[np.searchsorted(vb, va, side="right")]
    n = {
        "<": total - hi,
        "<=": total - lo,
        ">": lo,
        ">=": hi,
        "=": hi - lo,
        "!=": total - (hi - lo),
    }
    return int(np.dot(np.asarray(ca, np.int64), n[op]))


@dataclass
class RangeSummary:
    """What a task of a range paired with itself needs to count its rows
    involved through the range pairs counted from summaries: the DC's other
    predicate ``t.a op t'.b``, how its values compare, and the values of the
    other side that each range's rows are paired with."""

    a: str
    b: str
    op: str
    mode: str
    #: ``(side, range)`` -> sorted distinct values of the other side's column
    #: over the ranges paired with it (side 0: ``t`` rows, column ``a``)
    partners: dict[tuple[int, int], np.ndarray]
    #: task id -> its range
    ranges: dict[int, int] = field(default_factory=dict)


def summary_involved(table: pa.Table, spec: TaskSpec, summary: RangeSummary) -> np.ndarray:
    """For each row of a task's table: whether it has a partner in the range
    pairs counted from summaries (a ``t`` row: ``x op v`` for one of its
    range's partner values; a ``t'`` row: ``v op y``)."""
    n = table.num_rows
    hit = np.zeros(n, bool)
    if n == 0:
        return hit
    k = summary.ranges[int(table.column(TASK)[0].as_py())]
    typed = typed_columns(table, spec, [summary.a, summary.b])
    for side, col, flag in ((0, summary.a, LEFT), (1, summary.b, RIGHT)):
        values = summary.partners.get((side, k))
        if values is None:
            continue
        x, ok = exact_numbers(typed[col][0], summary.mode)
        m = ok & np.asarray(table.column(flag).to_numpy(zero_copy_only=False), bool)
        rel = summary.op if side == 0 else FLIPPED[summary.op]
        hit[m] |= has_partner(x[m], rel, values)
    return hit


def sides_job(spec: TaskSpec, dc: int) -> Callable:
    """Rows passing the left and the right row filters of DC ``dc``, per batch,
    and of those the rows in scope (a scoped run's; else all of them)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        nd = spec.normal[dc]
        for batch in batches:
            enc = encode_rows(pa.Table.from_batches([batch]), spec)
            scope = None if spec.where is None else where_mask(enc, spec.where)
            counts = {}
            for side, name in ((0, "left"), (1, "right")):
                m = filter_mask(enc, nd.side_filters(side))
                m = np.ones(enc.n, bool) if m is None else m
                counts[name] = [int(np.count_nonzero(m))]
                counts[f"{name}_in"] = (
                    counts[name] if scope is None else [int(np.count_nonzero(m & scope))]
                )
            yield pa.RecordBatch.from_pydict(counts, schema=SIDES_SCHEMA)

    return run


SIDES_SCHEMA = pa.schema(
    [("left", pa.int64()), ("right", pa.int64()), ("left_in", pa.int64()),
     ("right_in", pa.int64())]
)  # fmt: skip


def scope_rows_job(spec: TaskSpec) -> Callable:
    """Rows in a scoped run's scope (``spec.where`` true), per batch."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            enc = encode_rows(pa.Table.from_batches([batch]), spec)
            n = int(np.count_nonzero(where_mask(enc, spec.where)))
            yield pa.RecordBatch.from_pydict({"n": [n]}, schema=SCOPE_SCHEMA)

    return run


SCOPE_SCHEMA = pa.schema([("n", pa.int64())])


def single_rows_job(spec: TaskSpec, dc: int) -> Callable:
    """The tids of the rows that break single-tuple DC ``dc``."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        nd = spec.normal[dc]
        for batch in batches:
            table = pa.Table.from_batches([batch])
            enc = encode_rows(table, spec)
            m = filter_mask(enc, list(nd.filters))
            if spec.where is not None:
                scope = where_mask(enc, spec.where)
                m = scope if m is None else m & scope
            tids = table.column(TID).to_numpy()
            hit = tids if m is None else tids[m]
            yield pa.RecordBatch.from_arrays([pa.array(hit, pa.int64())], [TID])

    return run


def sample_job(rate: float) -> Callable:
    """The rows of the tid sample: tids whose hash is below ``rate`` of the hash
    range (the local statistics' sample, docs/architecture.md "Planner")."""
    cut = np.uint64(min(int(rate * 2.0**64), 2**64 - 1))

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            tids = batch.column(TID).to_numpy().astype(np.uint64)
            keep = hashing.mix64_array(tids) < cut
            if keep.any():
                yield batch.filter(pa.array(keep))

    return run


def distinct_values_job(spec: TaskSpec, names: list[str]) -> Callable:
    """Per partition and column of ``names``: the hashes of its distinct non-NULL
    typed values (their count over the table is the column's exact number of
    distinct values, up to 64-bit hash collisions), as ``(column, hash)`` rows."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        parts: dict[int, list[np.ndarray]] = {}
        for batch in batches:
            typed = typed_columns(pa.Table.from_batches([batch]), spec, names)
            for i, c in enumerate(names):
                arr = typed[c][0].drop_null()
                if len(arr):
                    parts.setdefault(i, []).append(np.unique(value_hashes(arr).view(np.int64)))
        for i, hs in parts.items():  # one sort per partition and column
            h = np.unique(np.concatenate(hs))
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.full(h.size, i, np.int64)), pa.array(h, pa.int64())],
                ["key", "hash"],
            )

    return run


def registers_job(spec: TaskSpec, keys: list[tuple[str, ...]]) -> Callable:
    """Per partition and key (one column or several): the HyperLogLog++
    registers of its distinct non-NULL values, as the local statistics build
    them (:meth:`facet.engine.statistics.TableStatistics.registers`); the
    driver merges them by element-wise maximum into the table's registers."""
    from facet.engine.context import Context
    from facet.engine.statistics import TableStatistics

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        merged: dict[int, np.ndarray] = {}
        config = spec.config.but(threads=1)
        for batch in batches:
            stats = TableStatistics(
                Context(encode_rows(pa.Table.from_batches([batch]), spec), config)
            )
            for i, key in enumerate(keys):
                reg = stats.registers(key)
                merged[i] = reg if i not in merged else np.maximum(merged[i], reg)
        if merged:
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(list(merged), pa.int64()),
                    pa.array([r.tobytes() for r in merged.values()], pa.binary()),
                ],
                ["key", "registers"],
            )

    return run


# ------------------------------------------------------------------ pair work


@dataclass
class PairJob:
    """What one applyInArrow call does with a task's rows."""

    #: "count", "degrees" (per row: pairs as ``t`` and as ``t'``), "components"
    #: (each row in a violation with the least row of its component in the task),
    #: "pairs" or "blocks"
    output: str
    dc: int
    plan: Plan
    #: stages run before ``stages`` (refinements asked for one by one)
    done: list[Stage]
    #: the stages to run (None: the plan's)
    stages: list[Stage] | None
    #: every row is in one task only: counts of rows involved add up
    exclusive: bool
    #: range pairs counted from summaries, whose rows involved the tasks add
    summary: RangeSummary | None = None
    #: "components": the DC's blocks plan, for shapes whose rows are not joined
    #: from the count plan alone
    blocks: Plan | None = None


COUNT_SCHEMA = pa.schema(
    [("violations", pa.int64()), ("rows", pa.int64()), ("tids", pa.list_(pa.int64())),
     ("task_rows", pa.int64())]
)  # fmt: skip
PAIRS_SCHEMA = pa.schema([("t1", pa.int64()), ("t2", pa.int64())])
DEGREES_SCHEMA = pa.schema([("tid", pa.int64()), ("left", pa.int64()), ("right", pa.int64())])
EDGES_SCHEMA = pa.schema([("root", pa.int64()), ("tid", pa.int64())])
BLOCKS_SCHEMA = pa.schema([("t1", pa.list_(pa.int64())), ("t2", pa.list_(pa.int64()))])


def ddl(schema: pa.Schema) -> str:
    """An Arrow schema of the types above as Spark's DDL string."""
    names = {pa.int64(): "bigint", pa.float64(): "double", pa.bool_(): "boolean",
             pa.string(): "string"}  # fmt: skip

    def one(t: pa.DataType) -> str:
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            return f"array<{one(t.value_type)}>"
        return names[t]

    return ", ".join(f"`{f.name}` {one(f.type)}" for f in schema)


def task_groups(table: pa.Table, spec: TaskSpec, dc: int) -> tuple[LocalEngine, Groups, np.ndarray]:
    """The local engine over a task's rows (one row per tid), its initial pairs
    ``(L, R)`` cut by the DC's row filters, and the rows' tids.  In a scoped run
    (``spec.where``) the initial pairs are ``(L ∩ S, R)`` and ``(L - S, R ∩ S)``
    with ``S`` the task's rows in scope, as the local engine scopes the whole
    table's (:func:`facet.engine.filters.scoped_pairs`): a pair is in one task,
    so the tasks' scoped pairs are the table's."""
    tids = table.column(TID).to_numpy()
    left = np.asarray(table.column(LEFT).to_numpy(zero_copy_only=False), bool)
    right = np.asarray(table.column(RIGHT).to_numpy(zero_copy_only=False), bool)
    if len(tids) > 1:
        uniq, first, inverse = np.unique(tids, return_index=True, return_inverse=True)
        if len(uniq) < len(tids):  # a row sent once per side: merge its flags
            lm = np.zeros(len(uniq), bool)
            rm = np.zeros(len(uniq), bool)
            np.logical_or.at(lm, inverse, left)
            np.logical_or.at(rm, inverse, right)
            table = table.take(pa.array(first))
            tids, left, right = uniq, lm, rm
    enc = encode_rows(table, spec)
    engine = LocalEngine(enc, spec.config)
    nd = spec.normal[dc]
    m0 = filter_mask(enc, nd.side_filters(0))
    m1 = filter_mask(enc, nd.side_filters(1))
    lsel = left if m0 is None else left & m0
    rsel = right if m1 is None else right & m1
    ls = np.flatnonzero(lsel)
    if spec.where is not None:
        scope = where_mask(enc, spec.where)
        preds = nd.preds if spec.config.scope_semi_join else ()
        groups = scoped_pairs(ls, np.flatnonzero(rsel), scope, enc, preds)
    elif np.array_equal(lsel, rsel):
        groups = Groups.pair(ls)
    else:
        groups = Groups.pair(ls, np.flatnonzero(rsel))
    return engine, groups, np.asarray(tids, np.int64)


@dataclass
class TrieJob:
    """Counts of several DCs from one spread: the trie of their leading
    equalities run once per task (paper §4's multi-constraint execution)."""

    dcs: list[int]
    plans: dict[int, Plan]
    #: each DC's stages as the trie takes them (``facet.planner.modes.trie_stages``)
    seqs: dict[int, list[Stage]]
    exclusive: bool


TRIE_SCHEMA = pa.schema(
    [("dc", pa.int64()), ("violations", pa.int64()), ("rows", pa.int64()),
     ("tids", pa.list_(pa.int64()))]
)  # fmt: skip


def trie_task(spec: TaskSpec, job: TrieJob) -> Callable[[pa.Table], pa.Table]:
    """The applyInArrow function of a trie job: one row per DC."""
    from facet.engine.multi import run_trie

    def run(table: pa.Table) -> pa.Table:
        engine, groups, tids = task_groups(table, spec, job.dcs[0])
        out: dict[str, list] = {name: [] for name in TRIE_SCHEMA.names}

        def leaf(i: int, g: Groups) -> None:
            deg = engine.count_sink(job.plans[i], g)
            involved = (deg.left > 0) | (deg.right > 0)
            out["dc"].append(i)
            out["violations"].append(deg.violations)
            out["rows"].append(int(np.count_nonzero(involved)))
            out["tids"].append(None if job.exclusive else tids[np.flatnonzero(involved)])

        seconds: dict[int, float] = dict.fromkeys(job.dcs, 0.0)
        run_trie(engine, groups, [(i, job.seqs[i]) for i in job.dcs], leaf, seconds)
        return pa.table(
            {
                "dc": pa.array(out["dc"], pa.int64()),
                "violations": pa.array(out["violations"], pa.int64()),
                "rows": pa.array(out["rows"], pa.int64()),
                "tids": pa.array(out["tids"], pa.list_(pa.int64())),
            },
            schema=TRIE_SCHEMA,
        )

    return run


def pair_task(spec: TaskSpec, job: PairJob) -> Callable[[pa.Table], pa.Table]:
    """The applyInArrow function of one DC's pair work."""

    def run(table: pa.Table) -> pa.Table:
        engine, groups, tids = task_groups(table, spec, job.dc)
        for stage in job.done:
            groups = engine.refine(groups, stage)
        if job.output == "count":
            for stage in job.plan.stages if job.stages is None else job.stages:
                groups = engine.refine(groups, stage)
            deg = engine.count_sink(job.plan, groups)
            involved = (deg.left > 0) | (deg.right > 0)
            if job.summary is not None:
                hit = summary_involved(table, spec, job.summary)
                involved |= np.isin(tids, table.column(TID).to_numpy()[hit])
            rows = int(np.count_nonzero(involved))
            listed = None if job.exclusive else [tids[np.flatnonzero(involved)]]
            return pa.table(
                {
                    "violations": pa.array([deg.violations], pa.int64()),
                    "rows": pa.array([rows], pa.int64()),
                    "tids": pa.array(listed or [None], pa.list_(pa.int64())),
                    "task_rows": pa.array([len(tids)], pa.int64()),
                },
                schema=COUNT_SCHEMA,
            )
        if job.output == "degrees":  # each pair is in one task: a row's degrees add up
            for stage in job.plan.stages if job.stages is None else job.stages:
                groups = engine.refine(groups, stage)
            deg = engine.count_sink(job.plan, groups)
            hit = np.flatnonzero((deg.left > 0) | (deg.right > 0))
            return pa.table(
                {"tid": tids[hit], "left": deg.left[hit].astype(np.int64),
                 "right": deg.right[hit].astype(np.int64)},
                schema=DEGREES_SCHEMA,
            )  # fmt: skip
        if job.output == "components":  # the task's components; the driver joins them
            from facet.engine.row_outputs import component_roots, union_dc

            parent = np.arange(len(tids), dtype=np.int64)
            seen = np.zeros(len(tids), np.bool_)
            union_dc(engine, job.plan, job.blocks, groups, parent, seen)
            roots, rows = component_roots(parent, seen)
            return pa.table({"root": tids[roots], "tid": tids[rows]}, schema=EDGES_SCHEMA)
        if job.output == "pairs":
            t1s, t2s = [], []
            for t1, t2 in engine.pairs(job.plan, groups, job.stages):
                t1s.append(tids[t1])
                t2s.append(tids[t2])
            t1 = np.concatenate(t1s) if t1s else np.empty(0, np.int64)
            t2 = np.concatenate(t2s) if t2s else np.empty(0, np.int64)
            return pa.table({"t1": t1, "t2": t2}, schema=PAIRS_SCHEMA)
        lefts, rights = [], []
        for g in engine.blocks(job.plan, groups, job.stages):
            if len(g) == 0:
                continue
            for side, out in ((0, lefts), (4, rights)):
                offsets, values = expand.sides_to_lists(g.buf, g.desc, side)
                out.append(
                    pa.ListArray.from_arrays(
                        pa.array(offsets.astype(np.int32)), pa.array(tids[values])
                    )
                )
        if not lefts:
            return BLOCKS_SCHEMA.empty_table()
        return pa.table(
            {"t1": pa.concat_arrays(lefts), "t2": pa.concat_arrays(rights)}, schema=BLOCKS_SCHEMA
        )

    return run
