"""A table on Spark: its rows with dense tids, and the typing every task uses
(docs/semantics.md §3 for tids, §4 for typing).

* A local CSV file (plain or compressed) is read by facet's loader in one
  executor task, each row with its tid, exactly as the local engine reads it;
  Parquet by Spark's executors, typed; a CSV file behind a URL by Spark's
  reader in facet's dialect as far as it goes (header, RFC 4180 quoting,
  records across lines, every cell text; docs §3 lists what differs).  Other
  inputs (Arrow IPC, pyarrow/pandas/Polars tables) are read by facet's loader
  on the driver and handed to Spark.
* Tids are input positions, found without moving rows: Spark's
  ``monotonically_increasing_id`` (partition index and position in it) turned
  dense by the row counts of the partitions before it.  A DataFrame may name
  its own id column instead: its ids are then the frame's tids, which the tasks
  hand back as they are, and the engine maps to dense positions (their rank)
  wherever the driver indexes rows by them, and back in every output.
* Typing is decided and checked once on the driver
  (:mod:`facet.engine.spark.column_typing`), as the local encoder does for the
  whole file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from facet.column_types import ColumnUse
from facet.encoding import unknown_column_named
from facet.engine.spark.column_typing import type_check
from facet.engine.spark.tasks import (
    INTERNAL,
    TID,
    csv_read_job,
    task_input_error,
)
from facet.errors import DataError, FacetInputError
from facet.loading import (
    Source,
    csv_delimiter,
    csv_header,
    load,
    parquet_folder,
    parquet_folder_files,
    source_name,
)


@dataclass
class SparkTable:
    """The rows a run works on, on Spark: ``frame`` holds ``_facet_tid`` and
    the used columns (persisted: every DC reads it)."""

    frame: Any
    name: str
    text: bool
    all_columns: list[str]
    rows: int
    #: column -> kind for every task (the user's schema and the CSV typing)
    schema: dict[str, str]
    warnings: list[str]
    #: used column -> its plain name in ``frame`` (:func:`frame_column`)
    frame_names: dict[str, str] = field(default_factory=dict)
    #: column -> the input's Arrow type, where facet read it before Spark (warnings
    #: name it, as the local engine's do)
    source_types: dict[str, pa.DataType] = field(default_factory=dict)
    #: the tids are a DataFrame's own ids (``id_column``), not positions: the engine
    #: maps them to dense positions and back (:meth:`SparkEngine.positions`)
    own_ids: bool = False

    def in_frame(self, column: str) -> str:
        """The name ``column`` has in ``frame``."""
        return self.frame_names.get(column, column)


def frame_column(i: int) -> str:
    """The plain name the ``i``-th used column has in a table's frame: pyspark's
    ``mapInArrow`` and ``applyInArrow`` name every column unquoted (``df[name]``),
    which a name holding a dot or a backtick breaks; the tasks map it back
    (``TaskSpec.frame_names``), so messages name the user's columns."""
    return f"_facet_c{i}"


def quoted(name: str) -> str:
    """A column name as Spark's ``col()`` reads it literally."""
    return "`" + name.replace("`", "``") + "`"


def read_frame(
    spark: Any, data: Any, columns: list[str] | None = None, delimiter: str | None = None
) -> tuple[Any, str, bool, list[str], dict[str, pa.DataType]]:
    """``(DataFrame, name, text?, every column, Arrow types)`` for a path or an
    in-memory table; of an in-memory table only ``columns`` (those there) go to
    Spark.  The Arrow types are the input's own, where facet reads them (a
    Parquet file's, an in-memory table's), before Spark's types replace them.
    ``delimiter``: a CSV file's (None: sniffed from a local file's header)."""
    from facet.engine.spark import is_spark_frame

    if is_spark_frame(data):
        return data, source_name(data), False, list(data.columns), {}
    if isinstance(data, str | os.PathLike):
        path = os.fspath(data)
        if not os.path.exists(path) and "://" not in path:
            raise DataError(f"cannot read {path!r}: no such file; check the path")
        if "://" not in path and os.path.isfile(path):
            used = csv_delimiter(Path(path), delimiter)
            if used is not None:
                return (*_csv_frame(spark, path, used, columns or []), {})
        kind = _path_kind(path)
        if kind == "csv":  # a remote store's file: Spark's own reader
            frame = (
                spark.read.option("header", True)
                .option("multiLine", True)
                .option("quote", '"')
                .option("escape", '"')
                .option("mode", "FAILFAST")
                .option("inferSchema", False)
                .option("encoding", "UTF-8")
                .option("sep", delimiter or ("\t" if path.endswith((".tsv", ".tab")) else ","))
                .csv(_literal_path(path))
            )
            return frame, path, True, list(frame.columns), {}
        if kind == "parquet":
            return _parquet_frame(spark, path, columns)
    source = data if isinstance(data, Source) else load(data, delimiter=delimiter)
    if columns is not None:
        keep = [c for c in dict.fromkeys(columns) if c in source.all_columns]
        if all(source.all_columns.count(c) == 1 for c in keep):  # else: a clear error later
            source = Source(source.table.select(keep), source.name, source.text,
                            source.all_columns, source.num_rows)  # fmt: skip
    types = {f.name: f.type for f in source.table.schema}
    return _from_source(spark, source), source.name, source.text, source.all_columns, types


def check_input(
    data: Any,
    use: ColumnUse,
    schema: dict[str, str],
    id_column: str | None,
    delimiter: str | None = None,
) -> Any:
    """Before any Spark session starts: the columns the DCs (``--where``, ``--schema``)
    use checked against the input's, read here without Spark -- a local CSV file's
    header, a Parquet file's or folder's footers, an in-memory table or Arrow file
    loaded (what is then handed to Spark: the loaded :class:`Source`; any other input
    as given) -- so a misspelt column is refused in the local engine's words, with
    no JVM started.  A remote path (``s3://...``) is Spark's to read, checked later.
    ``delimiter``: a CSV file's (None: sniffed from its header)."""
    import pyarrow.parquet as pq

    if isinstance(data, str | os.PathLike):
        path = os.fspath(data)
        if "://" in path:
            return data
        if not os.path.exists(path):
            raise DataError(f"cannot read {path!r}: no such file; check the path")
        used = use.columns + list(schema)
        delimiter = None if os.path.isdir(path) else csv_delimiter(Path(path), delimiter)
        if os.path.isdir(path):
            names = parquet_folder(Path(path), path, used).schema.names
        elif delimiter is not None:
            names = csv_header(Path(path), delimiter, path).names or []
        elif _path_kind(path) == "parquet":
            try:
                names = pq.read_schema(path).names
            except (OSError, pa.ArrowInvalid) as err:
                raise DataError(
                    f"{path}: not a readable Parquet file ({str(err).splitlines()[0]})"
                ) from None
        else:
            data = load(data)
            names = data.all_columns
        _check_columns(path, names, use, schema, id_column, delimiter is not None, delimiter)
        return data
    source = load(data)
    _check_columns(source.name, source.all_columns, use, schema, id_column, source.text)
    return source


def _csv_frame(
    spark: Any, path: str, delimiter: str, columns: list[str]
) -> tuple[Any, str, bool, list[str]]:
    """A local CSV file read as the local engine reads it: its header here (the
    same checks), its records by facet's loader in one executor task
    (:func:`csv_read_job`), the used ``columns`` as text with each row's tid."""
    from pyspark.sql import types as T  # noqa: N812 - Spark's convention

    header = csv_header(Path(path), delimiter, path)
    names = header.names or []
    keep = [c for c in dict.fromkeys(columns) if names.count(c) == 1]
    schema = T.StructType(
        [T.StructField(TID, T.LongType(), False)]
        + [T.StructField(c, T.StringType(), True) for c in keep]
    )
    where = os.path.abspath(path)
    seed = spark.createDataFrame([(where,)], "path string").coalesce(1)
    job = csv_read_job(where, path, keep, delimiter)
    return seed.mapInArrow(job, schema), path, True, names


#: characters Hadoop's path globbing reads as a pattern
_GLOB = re.compile(r"([\\\[\]{}*?])")


def _literal_path(path: str) -> str:
    """``path`` as Spark reads it literally: Hadoop expands ``[...]``, ``{...}``,
    ``*`` and ``?`` in a path (``data[1].csv`` read ``data1.csv``), so a local
    path has them escaped; a remote URL is left as given."""
    return path if "://" in path else _GLOB.sub(r"\\\1", path)


def _parquet_frame(
    spark: Any, path: str, columns: list[str] | None
) -> tuple[Any, str, bool, list[str], dict[str, pa.DataType]]:
    """A Parquet file or folder read by Spark's executors, only ``columns`` (its
    schema read here from the footers, so a column Spark cannot read and no DC
    uses is no obstacle), each in the Spark type that holds its values exactly;
    a used column no Spark type reads exactly is refused naming it.  Of a folder,
    Spark reads the files the local engine reads (:func:`parquet_folder`), named
    one by one: none of its own listing's rules (partition discovery, which
    refuses files beside a partition folder, or a plain folder's files left
    unread) applies."""
    import pyarrow.parquet as pq

    if columns is None or "://" in path:  # a remote store: Spark reads it, every column,
        # and every file below a folder (no partition discovery, as the local rule)
        frame = spark.read.option("recursiveFileLookup", True).parquet(_literal_path(path))
        return frame, path, False, list(frame.columns), {}
    if os.path.isdir(path):
        folder = parquet_folder(Path(path), path, columns)
        files, arrow_schema = folder.files, folder.schema
    else:
        try:
            files, arrow_schema = [path], pq.read_schema(path)
        except (OSError, pa.ArrowInvalid) as err:
            raise DataError(
                f"{path}: not a readable Parquet file ({str(err).splitlines()[0]})"
            ) from None
    names = list(arrow_schema.names)
    _check_parts_agree(files, arrow_schema, columns, path)
    int96 = _int96_columns(files)
    from pyspark.sql import types as T  # noqa: N812 - Spark's convention

    fields = []
    for c in dict.fromkeys(columns):
        if c in names and names.count(c) == 1:
            typ = arrow_schema.field(c).type
            spark_type = T.TimestampType() if c in int96 else _spark_parquet_type(typ, c, path)
            fields.append(T.StructField(c, spark_type, True))
    frame = spark.read.schema(T.StructType(fields)).parquet(*map(_literal_path, files))
    types = {f.name: arrow_schema.field(f.name).type for f in fields}
    return frame, path, False, names, types


def _check_parts_agree(files: list[str], schema: pa.Schema, columns: list[str], path: str) -> None:
    """A folder's files must give each used column one type (Spark reads each part
    in one type, and fails on the others): the used columns of every file's footer
    are compared, in the types Spark reads them as, with the first file's that has
    them, and a difference is bad input naming the column and both files."""
    import pyarrow.parquet as pq

    if len(files) < 2:
        return
    used = [c for c in dict.fromkeys(columns) if schema.names.count(c) == 1]
    first: dict[str, tuple[Any, pa.DataType, str]] = {}
    for f in files:
        try:
            sch = pq.read_schema(f)
        except (OSError, pa.ArrowInvalid) as err:
            raise DataError(
                f"{f}: not a readable Parquet file ({str(err).splitlines()[0]})"
            ) from None
        int96 = _int96_columns([f])
        for c in used:
            if sch.names.count(c) != 1:  # (absent: Spark reads NULL; twice: refused later)
                continue
            typ = _spark_read_type(sch.field(c).type, c, f, int96)
            seen = first.setdefault(c, (typ, sch.field(c).type, f))
            if typ != seen[0]:
                raise DataError(
                    f"{path}: column '{c}' is {seen[1]} in {seen[2]} but "
                    f"{sch.field(c).type} in {f}; give the folder's files one schema"
                )


def _spark_read_type(typ: pa.DataType, col: str, path: str, int96: set[str]) -> Any:
    """The Spark type Spark reads a Parquet column of Arrow type ``typ`` as (INT96
    as its timestamps; a dictionary, string and large_string alike)."""
    from pyspark.sql import types as T  # noqa: N812 - Spark's convention

    return T.TimestampType() if col in int96 else _spark_parquet_type(typ, col, path)


def _int96_columns(files: list[str]) -> set[str]:
    """Top-level columns stored as INT96 (the timestamps Spark itself writes by
    default; Arrow reads them as nanoseconds, Spark as its microsecond instants)."""
    import pyarrow.parquet as pq

    out: set[str] = set()
    for f in files:
        schema = pq.ParquetFile(f).schema
        for i in range(len(schema)):
            col = schema.column(i)
            if col.physical_type == "INT96" and "." not in col.path:
                out.add(col.path)
    return out


def _spark_parquet_type(typ: pa.DataType, col: str, path: str) -> Any:
    """The Spark type Spark's Parquet reader gives a column that Arrow reads as
    ``typ`` (unsigned ints one width up, uint64 as decimal(20, 0), timestamps
    with a zone as instants, without as local date-times), or a refusal."""
    from pyspark.sql import types as T  # noqa: N812 - Spark's convention

    if pa.types.is_dictionary(typ):
        typ = typ.value_type
    simple = {
        pa.int8(): T.ByteType(), pa.int16(): T.ShortType(), pa.int32(): T.IntegerType(),
        pa.int64(): T.LongType(), pa.uint8(): T.ShortType(), pa.uint16(): T.IntegerType(),
        pa.uint32(): T.LongType(), pa.uint64(): T.DecimalType(20, 0),
        pa.float32(): T.FloatType(), pa.float64(): T.DoubleType(), pa.bool_(): T.BooleanType(),
        pa.date32(): T.DateType(), pa.date64(): T.DateType(),
    }  # fmt: skip
    if typ in simple:
        return simple[typ]
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        return T.StringType()
    if (
        pa.types.is_binary(typ)
        or pa.types.is_large_binary(typ)
        or pa.types.is_binary_view(typ)
        or pa.types.is_fixed_size_binary(typ)
    ):
        return T.BinaryType()
    if pa.types.is_decimal(typ) and typ.precision <= 38:
        return T.DecimalType(typ.precision, typ.scale)
    if pa.types.is_timestamp(typ) and typ.unit != "ns":
        return T.TimestampType() if typ.tz is not None else T.TimestampNTZType()
    if pa.types.is_null(typ):
        raise FacetInputError(
            f"{path}: column '{col}' has no type in the Parquet file (only NULLs, Arrow null), "
            "which Spark cannot read; give it a type, or run on the local engine"
        )
    advice = {
        "halffloat": "cast it to float32 in the file",
        "timestamp": "write it in microseconds (e.g. coerce_timestamps='us')",
    }.get(str(typ).split("[")[0], "cast it to a type Spark reads")
    raise FacetInputError(
        f"{path}: column '{col}' is {typ} in the Parquet file, which Spark cannot read "
        f"exactly; {advice}, or run on the local engine"
    )


def _path_kind(path: str) -> str:
    low = path.lower()
    if low.endswith((".parquet", ".pq")) or os.path.isdir(path):
        return "parquet"
    if low.endswith((".csv", ".tsv", ".tab", ".txt")):
        return "csv"
    return "other"


def _from_source(spark: Any, source: Source) -> Any:
    """A table facet loaded, as a Spark DataFrame (text stays text)."""
    from pyspark.errors import PySparkException

    table = spark_types(source.table, source.name)
    try:
        return spark.createDataFrame(table)
    except (TypeError, ValueError, PySparkException) as err:
        raise FacetInputError(
            f"{source.name}: Spark cannot take this table's types ({str(err).splitlines()[0]}); "
            "run it on the local engine, or cast the columns the DCs use"
        ) from None


def spark_types(table: pa.Table, name: str) -> pa.Table:
    """``table`` in Arrow types Spark holds, every value kept exactly (the tasks
    compare values, so a wider carrier type changes no answer): unsigned ints
    widen to the next signed width (uint64 to int64 while its values fit),
    float16 to float32, decimal256 to decimal128 while the precision allows,
    timestamps to microseconds (Spark's unit) while no value is finer, date64 to
    date32, every string and binary storage to Spark's one, extension types to
    their storage, dictionaries decoded.  A column that cannot be carried
    exactly is refused naming it and what to do."""
    columns = []
    for spec, column in zip(table.schema, table.columns, strict=True):
        columns.append(_spark_column(column, spec.name, name))
    return pa.table(columns, names=table.column_names)


def _spark_column(column: pa.ChunkedArray, col: str, name: str) -> pa.ChunkedArray:
    typ = column.type
    if isinstance(typ, pa.BaseExtensionType):
        column = pa.chunked_array([c.storage for c in column.chunks], typ.storage_type)
        typ = typ.storage_type
    if pa.types.is_dictionary(typ):
        column = column.cast(typ.value_type)
        typ = typ.value_type
    target = None
    if pa.types.is_time(typ):
        raise FacetInputError(
            f"{name}: column '{col}' is {typ} (a time of day), which Spark has no type for; "
            "run it on the local engine, or cast it to int64 (e.g. microseconds since midnight)"
        )
    if pa.types.is_unsigned_integer(typ):
        target = {8: pa.int16(), 16: pa.int32(), 32: pa.int64(), 64: pa.int64()}[typ.bit_width]
        if typ.bit_width == 64:
            top = pc.max(column).as_py()
            if top is not None and top >= 2**63:
                raise FacetInputError(
                    f"{name}: column '{col}' is uint64 with values past 2^63 - 1 (e.g. {top}), "
                    "which Spark has no exact type for; run it on the local engine, or cast "
                    "it to decimal128(20, 0)"
                )
    elif pa.types.is_float16(typ):
        target = pa.float32()
    elif pa.types.is_decimal(typ) and typ.scale < 0:  # Spark refuses a negative scale:
        target = pa.decimal128(typ.precision - typ.scale, 0)  # the same integers, scale 0
    elif pa.types.is_decimal(typ) and typ.precision > 38:
        target = pa.decimal128(38, min(typ.scale, 38))
    elif pa.types.is_timestamp(typ) and typ.unit != "us":
        target = pa.timestamp("us", typ.tz)
    elif pa.types.is_date64(typ):
        target = pa.date32()
    elif pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        target = pa.string()
    elif (
        pa.types.is_large_binary(typ)
        or pa.types.is_binary_view(typ)
        or pa.types.is_fixed_size_binary(typ)
    ):
        target = pa.binary()
    if target is None:
        return column
    try:
        return column.cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        why = str(err).splitlines()[0]
        raise FacetInputError(
            f"{name}: column '{col}' ({typ}) has values Spark cannot hold exactly as {target} "
            f"({why}); run it on the local engine, or round the column first"
        ) from None


def spark_table(
    spark: Any,
    data: Any,
    use: ColumnUse,
    schema: dict[str, str],
    id_column: str | None = None,
    delimiter: str | None = None,
    tag: Any = None,
) -> SparkTable:
    """Read ``data`` on Spark, number its rows and decide its typing (``delimiter``:
    a CSV file's, None: sniffed from its header; ``tag``: the run's
    :class:`facet.engine.spark.connect.RunTag`, if a deadline may cancel it)."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    frame, name, text, all_columns, types = read_frame(
        spark, data, use.columns + list(schema), delimiter
    )
    for c in all_columns:
        if c in INTERNAL:
            raise FacetInputError(f"{name}: column name '{c}' is reserved by facet; rename it")
    split = None
    if text and isinstance(data, str | os.PathLike) and os.path.isfile(data):
        split = csv_delimiter(Path(data), delimiter)
    _check_columns(name, all_columns, use, schema, id_column, text, split)
    _check_case(spark, frame, name, use.columns + list(schema) + [id_column or ""])
    names = {c: frame_column(i) for i, c in enumerate(use.columns)}
    cols = [F.col(quoted(c)).alias(names[c]) for c in use.columns]
    try:  # the first actions read the rows: Spark's CSV reader may refuse one
        framed, rows = _numbered(spark, frame, data, text, cols, id_column)
    except Exception as err:  # noqa: BLE001 - re-raised unless it is that refusal
        if tag is not None and tag.cancelled:  # (the deadline: its text costs JVM calls)
            raise
        message = task_input_error(err)
        if message is not None:
            raise DataError(message) from None
        malformed = malformed_record(err)
        if malformed is None:
            raise
        raise DataError(
            f"{name}: a CSV record does not match the header ({malformed}); fix the file "
            "(the local engine's error names the line)"
        ) from None
    table = SparkTable(framed, name, text, all_columns, rows, dict(schema), [], names, types,
                       own_ids=id_column is not None)  # fmt: skip
    type_check(table, use, schema)
    return table


def _is_spark_text(typ: Any) -> bool:
    from pyspark.sql import types as T  # noqa: N812 - Spark's convention

    return isinstance(typ, T.StringType | T.VarcharType | T.CharType)


def _numbered(
    spark: Any, frame: Any, data: Any, text: bool, cols: list[Any], id_column: str | None
) -> tuple[Any, int]:
    """The used columns with their tids, persisted, and the row count."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    from facet.engine.spark.connect import session_cores

    if TID in frame.columns:  # a local CSV file, read with its tids in one task:
        # kept while the rows are spread by tid ranges over every core
        read = frame.select(TID, *cols).persist()
        rows = read.count()
        framed = read.repartitionByRange(2 * session_cores(spark), TID).persist()
        framed.count()
        read.unpersist()
        return framed, rows
    if id_column is not None:
        return _own_ids(frame, cols, id_column)
    if _read_by_spark_locally(data):
        # a file or a folder of files: tids follow the files' order, then row
        split = [
            F.col("_metadata.file_path").alias(_FILE),
            F.col("_metadata.file_block_start").alias(_START),
        ]
        rank = _file_rank(os.fspath(data))
        framed = with_dense_ids(
            frame.select(*cols, *split), TID, (_FILE, _START), lambda run: (rank(run[0]), run[1])
        )
    else:
        framed = with_dense_ids(frame.select(*cols), TID)
    if text and isinstance(data, str | os.PathLike):
        # a multi-line CSV is read as one partition per file: spread its numbered
        # rows by tid ranges, so the per-batch jobs run on every core
        framed = framed.repartitionByRange(2 * session_cores(spark), TID)
    framed = framed.persist()
    return framed, framed.count()


def _own_ids(frame: Any, cols: list[Any], id_column: str) -> tuple[Any, int]:
    """The used columns with the ids of ``id_column`` as tids, persisted, and the
    row count.  Ids are pairs' ``t1``/``t2`` and what ``t != t'`` compares
    (semantics §3), so they must be whole numbers, none NULL, no two alike: a
    column that is not is refused (one aggregate job reads them)."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention
    from pyspark.sql import types as T  # noqa: N812 - Spark's convention

    typ = frame.schema[id_column].dataType
    column = F.col(quoted(id_column))
    if isinstance(typ, T.ByteType | T.ShortType | T.IntegerType | T.LongType):
        ids = column.cast("long")
    elif _is_spark_text(typ) or (isinstance(typ, T.DecimalType) and typ.scale == 0):
        ids = column.try_cast("long")  # (text: whole numbers; beyond int64: NULL, refused)
    else:
        raise FacetInputError(
            f"id_column '{id_column}': ids must be whole numbers (int64), the column is "
            f"{typ.simpleString()}; give a column of distinct integers, or drop id_column"
        )
    framed = frame.select(ids.alias(TID), *cols).persist()
    got = framed.agg(F.count(F.lit(1)), F.count(TID), F.count_distinct(TID)).first()
    rows, valued, distinct = int(got[0]), int(got[1]), int(got[2])
    problem = None
    if valued < rows:
        what = "NULL" if not _is_spark_text(typ) else "NULL or not whole numbers"
        problem = f"{rows - valued:,} of its {rows:,} ids are {what}"
    elif distinct < rows:
        problem = (
            f"it holds {rows - distinct:,} repeated ids ({distinct:,} distinct in {rows:,} rows)"
        )
    if problem is not None:
        framed.unpersist()
        raise FacetInputError(
            f"id_column '{id_column}': {problem}; every row needs an id of its own "
            "(pairs name rows by it), or drop id_column to number rows by position"
        )
    return framed, rows


def _check_case(spark: Any, frame: Any, name: str, used: list[str]) -> None:
    """A used column beside one whose name differs only in case cannot be
    selected on a session that reads names without case (a user's own session:
    facet's sessions set ``spark.sql.caseSensitive``): a one-line refusal, not
    Spark's ambiguity error."""
    if str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true":
        return
    columns = list(frame.columns)
    for c in dict.fromkeys(u for u in used if u):
        twin = next((o for o in columns if o != c and o.lower() == c.lower()), None)
        if twin is not None:
            raise FacetInputError(
                f"{name}: columns '{c}' and '{twin}' differ only in case, and this Spark "
                "session reads column names without case (spark.sql.caseSensitive is "
                "false); set it to true, or rename one of them"
            )


def _read_by_spark_locally(data: Any) -> bool:
    """Whether ``read_frame`` had Spark's reader read ``data`` from local files
    (a Parquet file or folder), so its rows carry ``_metadata``; an Arrow IPC
    file, say, is loaded by facet and handed over, without it."""
    if not isinstance(data, str | os.PathLike) or "://" in os.fspath(data):
        return False
    path = os.fspath(data)
    return _path_kind(path) == "parquet" and not (
        os.path.isfile(path) and csv_delimiter(Path(path)) is not None
    )


def _file_rank(path: str) -> Any:
    """For a local Parquet file or folder: the place of a file Spark read (its
    ``_metadata.file_path``, a URL) in the order the local engine reads the
    files in (:func:`parquet_folder_files`)."""
    from urllib.parse import unquote, urlsplit

    files = parquet_folder_files(Path(path)) if os.path.isdir(path) else [path]
    places: dict[str, int] = {}
    for k, f in enumerate(files):
        places.setdefault(os.path.abspath(f), k)
        places.setdefault(os.path.realpath(f), k)

    def rank(url: str) -> int:
        parts = urlsplit(url)
        local = unquote(parts.path) if parts.scheme in ("", "file") else url
        found = places.get(os.path.abspath(local), places.get(os.path.realpath(local)))
        if found is None:
            raise RuntimeError(f"Spark read {url}, which is not among {path}'s files")
        return found

    return rank


def _check_columns(
    name: str,
    all_columns: list[str],
    use: ColumnUse,
    schema: dict[str, str],
    id_column: str | None,
    text: bool,
    delimiter: str | None = None,
) -> None:
    def unknown(col: str, where: str) -> FacetInputError:
        return unknown_column_named(col, all_columns, name, where, delimiter)

    for c in schema:
        if c not in all_columns:
            raise unknown(c, "--schema")
    for c in use.columns:
        if c not in all_columns:
            raise unknown(c, use.first_use[c].where())
        if all_columns.count(c) > 1:  # (the local loader's words)
            what = f"the header names column '{c}'" if text else f"column '{c}' appears"
            raise DataError(
                f"{name}: {what} {all_columns.count(c)} times; give every column a distinct name"
            )
    if id_column is not None and id_column not in all_columns:
        raise unknown(id_column, "id_column")


def malformed_record(err: BaseException) -> str | None:
    """Spark's CSV reader's refusal of a record (too few or too many fields), as
    one line; None for any other error (it comes from the executors as a JVM
    error when the rows are first read)."""
    text = str(err)
    for mark in ("MALFORMED_RECORD_IN_PARSING", "Malformed records are detected"):
        if mark in text:
            line = next((x.strip() for x in text.splitlines() if mark in x), mark)
            return line.removeprefix("Caused by: ")[:200]
    return None


#: a file split's path and start, while tids are numbered (internal names)
_FILE, _START = "_facet_file", "_facet_start"


def with_dense_ids(frame: Any, column: str, runs: tuple[str, ...] = (), order: Any = None) -> Any:
    """``frame`` with ``column``: its rows' positions, 0..n-1, computed from row
    counts per run of rows (no row goes through one partition).  A run is a
    partition, taken in partition order; or, with ``runs`` (columns naming a file
    split: its path and start), a split, taken in the order of those columns, or
    of ``order`` (a sort key of a run's values) -- a folder's files in the local
    engine's order, then row (a partition may hold several splits, packed by size,
    each one contiguous there).  ``runs`` are dropped."""
    from pyspark.sql import functions as F  # noqa: N812

    mid = "_facet_mid"
    tagged = frame.withColumn(mid, F.monotonically_increasing_id())
    if runs:
        keys = [F.col(c) for c in runs]
    else:
        keys = [F.shiftright(F.col(mid), 33).alias("_facet_p")]
    names = list(runs) if runs else ["_facet_p"]
    agg = F.count(F.lit(1)).alias("_facet_n"), F.min(mid).alias("_facet_m")
    counts = tagged.groupBy(*keys).agg(*agg).collect()
    start = 0
    deltas = []  # per run: what its rows' mid is shifted by to make their tids
    key = order or (lambda values: values)
    for row in sorted(counts, key=lambda r: key(tuple(r[n] for n in names))):
        deltas.append((*(row[n] for n in names), start - int(row["_facet_m"])))
        start += int(row["_facet_n"])
    if not deltas:
        return tagged.withColumn(column, F.col(mid)).drop(mid, *runs)
    spark = frame.sparkSession
    types = {n: f.dataType.simpleString() for f in tagged.schema.fields for n in [f.name]}
    ddl = (
        ", ".join(f"_facet_r{i} {types.get(n, 'long')}" for i, n in enumerate(names))
        + ", _facet_d long"
    )
    table = spark.createDataFrame(deltas, ddl)
    on = [
        (F.shiftright(F.col(mid), 33) if n == "_facet_p" else F.col(n)) == F.col(f"_facet_r{i}")
        for i, n in enumerate(names)
    ]
    joined = tagged.join(F.broadcast(table), on)
    return joined.withColumn(column, F.col(mid) + F.col("_facet_d")).drop(
        mid, "_facet_d", *runs, *(f"_facet_r{i}" for i in range(len(names)))
    )
