"""A table on Spark: its rows with dense tids, and the typing every task uses
(docs/semantics.md §3 for tids, §4 for typing).

* Paths are read by Spark: CSV in facet's dialect (header, RFC 4180 quoting,
  records across lines, every cell text; an empty field, quoted or not, is
  NULL -- the tasks turn ``""`` into NULL), Parquet as typed.  Other inputs
  (Arrow IPC, pyarrow/pandas/Polars tables) are read by facet's loader and
  handed to Spark.
* Tids are input positions, found without moving rows: Spark's
  ``monotonically_increasing_id`` (partition index and position in it) turned
  dense by the row counts of the partitions before it.  A DataFrame may name
  its own id column instead.
* CSV typing (an ordered component: numbers or ISO timestamps, int64 or
  float64) is decided once on the driver from per-batch counts merged over
  the table, exactly as the local encoder decides it for the whole file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from facet.column_types import ColumnUse
from facet.encoding import text_kinds, unparsed_warning
from facet.engine.spark.tasks import INTERNAL, TEXT_FACTS_SCHEMA, TID, ddl, text_facts_job
from facet.errors import DataError, FacetInputError
from facet.loading import Source, load, source_name


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


def quoted(name: str) -> str:
    """A column name as Spark's ``col()`` reads it literally."""
    return "`" + name.replace("`", "``") + "`"


def read_frame(spark: Any, data: Any) -> tuple[Any, str, bool]:
    """``(DataFrame, name, text?)`` for a path or an in-memory table."""
    from facet.engine.spark import is_spark_frame

    if is_spark_frame(data):
        return data, source_name(data), False
    if isinstance(data, str | os.PathLike):
        path = os.fspath(data)
        if not os.path.exists(path) and "://" not in path:
            raise DataError(f"{path}: no such file")
        kind = _path_kind(path)
        if kind == "csv":
            frame = (
                spark.read.option("header", True)
                .option("multiLine", True)
                .option("quote", '"')
                .option("escape", '"')
                .option("mode", "FAILFAST")
                .option("inferSchema", False)
                .option("encoding", "UTF-8")
                .option("sep", "\t" if path.endswith((".tsv", ".tab")) else ",")
                .csv(path)
            )
            return frame, path, True
        if kind == "parquet":
            return spark.read.parquet(path), path, False
    source = load(data)
    return _from_source(spark, source), source.name, source.text


def _path_kind(path: str) -> str:
    low = path.lower()
    if low.endswith((".parquet", ".pq")) or os.path.isdir(path):
        return "parquet"
    if low.endswith((".csv", ".tsv", ".tab", ".txt")):
        return "csv"
    return "other"


def _from_source(spark: Any, source: Source) -> Any:
    """A table facet loaded, as a Spark DataFrame (text stays text)."""
    return spark.createDataFrame(source.table)


def spark_table(
    spark: Any,
    data: Any,
    use: ColumnUse,
    schema: dict[str, str],
    id_column: str | None = None,
) -> SparkTable:
    """Read ``data`` on Spark, number its rows and decide its typing."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    frame, name, text = read_frame(spark, data)
    all_columns = list(frame.columns)
    for c in all_columns:
        if c in INTERNAL:
            raise FacetInputError(f"{name}: column name '{c}' is reserved by facet; rename it")
    _check_columns(name, all_columns, use, schema, id_column)
    used = [c for c in use.columns]
    cols = [F.col(quoted(c)) for c in used]
    if id_column is not None:
        framed = frame.select(F.col(quoted(id_column)).cast("long").alias(TID), *cols)
    else:
        framed = with_dense_ids(frame.select(*cols), TID)
    if text and isinstance(data, str | os.PathLike):
        # a multi-line CSV is read as one partition per file: spread its numbered
        # rows by tid ranges, so the per-batch jobs run on every core
        from facet.engine.spark.connect import session_cores

        framed = framed.repartitionByRange(2 * session_cores(spark), TID)
    framed = framed.persist()
    rows = framed.count()
    table = SparkTable(framed, name, text, all_columns, rows, dict(schema), [])
    if text:
        decide_text_typing(table, use)
    return table


def _check_columns(
    name: str, all_columns: list[str], use: ColumnUse, schema: dict[str, str], id_column: str | None
) -> None:
    import difflib

    def unknown(col: str, where: str) -> FacetInputError:
        close = difflib.get_close_matches(col, all_columns, n=1)
        hint = f"did you mean '{close[0]}'?" if close else "check the spelling and the header"
        return FacetInputError(f"{where}: unknown column '{col}' in {name}; {hint}")

    for c in schema:
        if c not in all_columns:
            raise unknown(c, "--schema")
    for c in use.columns:
        if c not in all_columns:
            raise unknown(c, use.first_use[c].where())
        if all_columns.count(c) > 1:
            raise FacetInputError(
                f"{use.first_use[c].where()}: column '{c}' appears more than once in {name}"
            )
    if id_column is not None and id_column not in all_columns:
        raise unknown(id_column, "id_column")


def with_dense_ids(frame: Any, column: str) -> Any:
    """``frame`` with ``column``: its rows' positions, 0..n-1, computed from
    per-partition row counts (no row goes through one partition)."""
    from pyspark.sql import functions as F  # noqa: N812

    mid = "_facet_mid"
    tagged = frame.withColumn(mid, F.monotonically_increasing_id())
    part = F.shiftright(F.col(mid), 33)
    counts = tagged.groupBy(part.alias("p")).agg(F.count(F.lit(1)).alias("n")).collect()
    start = 0
    offsets = []
    for row in sorted(counts, key=lambda r: r["p"]):
        offsets.append((int(row["p"]), start))
        start += int(row["n"])
    if not offsets:
        return tagged.withColumn(column, F.col(mid)).drop(mid)
    spark = frame.sparkSession
    # internal names: a user's column may be called p or s
    starts = spark.createDataFrame(offsets, "_facet_p long, _facet_s long")
    local = F.col(mid).bitwiseAND(F.lit((1 << 33) - 1))
    return (
        tagged.join(F.broadcast(starts), part == F.col("_facet_p"))
        .withColumn(column, F.col("_facet_s") + local)
        .drop(mid, "_facet_p", "_facet_s")
    )


@dataclass
class _Facts:
    nonempty: int = 0
    n_num: int = 0
    n_iso: int = 0
    integral: bool = True
    #: the first value (by tid) that is not a number / not an ISO date
    bad_num: str | None = None
    bad_iso: str | None = None


def decide_text_typing(table: SparkTable, use: ColumnUse) -> None:
    """The CSV typing of every ordered component, decided once from counts
    merged over the table; written into ``table.schema`` for the tasks."""
    from pyspark.sql import functions as F  # noqa: N812

    from facet.engine.spark.tasks import TaskSpec
    from facet.planner.config import DEFAULT

    free = [
        c for comp in use.components if comp.ordered for c in comp.columns if c not in table.schema
    ]
    if not free:
        return
    spec = TaskSpec(table.name, True, table.all_columns, [], use, {}, DEFAULT)
    facts_frame = table.frame.select(TID, *[F.col(quoted(c)) for c in use.columns]).mapInArrow(
        text_facts_job(spec, free), ddl(TEXT_FACTS_SCHEMA)
    )
    merged = (
        facts_frame.groupBy("column")
        .agg(
            F.sum("nonempty").alias("nonempty"),
            F.sum("n_num").alias("n_num"),
            F.sum("n_iso").alias("n_iso"),
            F.min(F.col("integral").cast("int")).alias("integral"),
            F.min_by("bad_num", "bad_num_at").alias("bad_num"),
            F.min_by("bad_iso", "bad_iso_at").alias("bad_iso"),
        )
        .collect()
    )
    facts = {c: _Facts() for c in free}
    for row in merged:
        facts[row["column"]] = _Facts(
            int(row["nonempty"]), int(row["n_num"]), int(row["n_iso"]), bool(row["integral"]),
            row["bad_num"], row["bad_iso"],
        )  # fmt: skip
    for comp in use.components:
        if not comp.ordered or not any(c in facts for c in comp.columns):
            continue
        all_facts = {c: facts.get(c, _Facts()) for c in comp.columns}
        kinds = text_kinds(comp, all_facts, table.schema, use, table.name)
        for c in comp.columns:
            if c in facts:
                table.schema[c] = kinds[c]
                f = facts[c]
                number = kinds[c] in ("int", "float")
                bad = f.nonempty - (f.n_num if number else f.n_iso)
                if kinds[c] != "text" and bad > 0:
                    example = (f.bad_num if number else f.bad_iso) or ""
                    table.warnings.append(unparsed_warning(table.name, c, kinds[c], bad, example))
