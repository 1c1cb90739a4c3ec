"""The typing every Spark task uses, decided and checked once on the driver
(docs/semantics.md §4), so that a run on Spark types, refuses and warns as the
local engine does on the whole table:

* :func:`decide_typing` -- CSV typing of every ordered component (numbers or ISO
  timestamps, int64 or float64), and ``number`` declared by ``--schema`` read as
  int64 or float64, decided from per-batch counts merged over the table;
* :func:`check_types` -- the local encoder run on an empty table of the frame's
  Arrow types: a type clash, a type facet cannot compare, or a constant a column
  cannot meet is refused before any task runs, on an empty table too;
* :func:`declared_warnings` -- the values that a ``--schema`` type turned NULL,
  counted over the table, in the local engine's warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from facet.column_types import ColumnUse
from facet.encoding import encode, text_kinds, unparsed_warning
from facet.engine.spark.tasks import (
    TEXT_FACTS_SCHEMA,
    TID,
    UNPARSED_SCHEMA,
    TaskSpec,
    ddl,
    source_of,
    text_facts_job,
    unparsed_job,
)


class Table(Protocol):
    """What typing reads and writes of :class:`facet.engine.spark.table.SparkTable`
    (which calls this module: a protocol, not an import, keeps the two apart)."""

    frame: Any
    name: str
    text: bool
    all_columns: list[str]
    schema: dict[str, str]
    warnings: list[str]
    frame_names: dict[str, str]
    source_types: dict[str, pa.DataType]

    def in_frame(self, column: str) -> str: ...


@dataclass
class _Facts:
    nonempty: int = 0
    n_num: int = 0
    n_iso: int = 0
    integral: bool = True
    #: the first value (by tid) that is not a number / not an ISO date
    bad_num: str | None = None
    bad_iso: str | None = None


def _spec(table: Table, use: ColumnUse) -> TaskSpec:
    from facet.planner.config import DEFAULT

    return TaskSpec(
        table.name, table.text, table.all_columns, [], use, dict(table.schema), DEFAULT,
        frame_names=table.frame_names,
    )  # fmt: skip


def _string_columns(table: Table, use: ColumnUse) -> set[str]:
    from pyspark.sql import types as T  # noqa: N812 - Spark's convention

    types = {f.name: f.dataType for f in table.frame.schema.fields}
    text = T.StringType | T.VarcharType | T.CharType
    return {c for c in use.columns if isinstance(types.get(table.in_frame(c)), text)}


def _used(table: Table, use: ColumnUse) -> Any:
    """The frame's tids and used columns."""
    return table.frame.select(TID, *[table.in_frame(c) for c in use.columns])


def decide_typing(table: Table, use: ColumnUse) -> None:
    """The kinds the tasks read text as, decided once from counts merged over the
    table and written into ``table.schema``: CSV columns of ordered components
    that ``--schema`` leaves free, and text columns ``--schema`` declares as
    ``number`` (int64 only when every value is whole; the local encoder decides
    this for the whole file, a task alone would decide it for its rows)."""
    from pyspark.sql import functions as F  # noqa: N812

    free = (
        [
            c
            for comp in use.components
            if comp.ordered
            for c in comp.columns
            if c not in table.schema
        ]
        if table.text
        else []
    )
    strings = set(use.columns) if table.text else _string_columns(table, use)
    numbers = [c for c in use.columns if table.schema.get(c) == "number" and c in strings]
    asked = free + numbers
    if not asked:
        return
    spec = _spec(table, use)
    facts_frame = _used(table, use).mapInArrow(text_facts_job(spec, asked), ddl(TEXT_FACTS_SCHEMA))
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
    facts = {c: _Facts() for c in asked}
    for row in merged:
        facts[row["column"]] = _Facts(
            int(row["nonempty"]), int(row["n_num"]), int(row["n_iso"]), bool(row["integral"]),
            row["bad_num"], row["bad_iso"],
        )  # fmt: skip
    if not table.text:  # a typed text column declared a number: int64 if all of it is whole
        for c in numbers:
            table.schema[c] = "int" if facts[c].integral else "float"
        return
    for comp in use.components:
        if not any(c in facts for c in comp.columns):
            continue
        all_facts = {c: facts.get(c, _Facts()) for c in comp.columns}
        kinds = text_kinds(comp, all_facts, table.schema, use, table.name)
        for c in comp.columns:
            if c not in facts:
                continue
            declared = c in table.schema
            table.schema[c] = kinds[c]
            f = facts[c]
            number = kinds[c] in ("int", "float")
            bad = f.nonempty - (f.n_num if number else f.n_iso)
            if not declared and kinds[c] != "text" and bad > 0:  # declared: declared_warnings
                example = (f.bad_num if number else f.bad_iso) or ""
                table.warnings.append(unparsed_warning(table.name, c, kinds[c], bad, example))


def check_types(table: Table, use: ColumnUse) -> None:
    """The local encoder on no rows of the frame's Arrow types (those the tasks
    receive): what it refuses by type alone is refused here, before any task and
    on an empty table too; its warnings (text that a DC orders) are the run's."""

    empty = empty_table(_used(table, use))
    for c in use.columns:  # text the input held as another Arrow type: named as locally
        typ = table.source_types.get(c)
        name = table.in_frame(c)
        if (
            typ is not None
            and _text_type(typ)
            and pa.types.is_string(empty.schema.field(name).type)
        ):
            i = empty.schema.get_field_index(name)
            empty = empty.set_column(i, name, pa.array([], typ))
    spec = _spec(table, use)
    encoded = encode(source_of(empty, spec), use, spec.schema, spec.config)
    table.warnings.extend(w for w in encoded.warnings if w not in table.warnings)


def _text_type(typ: pa.DataType) -> bool:
    """Text however Arrow holds it (Spark reads each as its one string type)."""
    if pa.types.is_dictionary(typ):
        typ = typ.value_type
    return pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ)


def empty_table(frame: Any) -> pa.Table:
    """No rows of ``frame`` in the Arrow types its Arrow functions receive (no Spark
    job runs; a timestamp's zone does not matter to its kind)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(frame.schema, timezone="UTC").empty_table()


class _Shown(str):
    """A value's ``repr`` made in a task: shown as it is."""

    def __repr__(self) -> str:
        return str(self)


def declared_warnings(table: Table, use: ColumnUse, declared: dict[str, str]) -> None:
    """The local encoder's warning for each column ``declared`` (the user's
    ``--schema``) whose values its type turned NULL, counted over the table."""
    from pyspark.sql import functions as F  # noqa: N812

    columns = [c for c in use.columns if declared.get(c) not in (None, "text")]
    if not columns:
        return
    spec = _spec(table, use)
    merged = (
        _used(table, use)
        .mapInArrow(unparsed_job(spec, columns), ddl(UNPARSED_SCHEMA))
        .groupBy("column")
        .agg(
            F.sum("lost").alias("lost"),
            F.min_by("example", "example_at").alias("example"),
            F.max(F.col("numbers").cast("int")).alias("numbers"),
        )
        .collect()
    )
    found = {row["column"]: row for row in merged}
    for c in columns:  # in the order the local encoder warns: the columns' use
        row = found.get(c)
        if row is None or not row["lost"]:
            continue
        kind = table.schema[c]
        table.warnings.append(
            unparsed_warning(
                table.name, c, kind, int(row["lost"]), _Shown(row["example"]), bool(row["numbers"])
            )
        )


def type_check(table: Table, use: ColumnUse, declared: dict[str, str]) -> None:
    """Every typing decision and check of a Spark run, in the local engine's order."""
    decide_typing(table, use)
    check_types(table, use)
    declared_warnings(table, use, declared)
