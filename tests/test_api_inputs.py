"""Typed inputs of the Python API (docs/semantics.md §3, §4.1, §9): every kind of frame loads
with ids = row positions, and bad frames raise a one-line :class:`facet.errors.DataError`
that names the column and how to fix it -- never a raw pyarrow or pandas error."""

from __future__ import annotations

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import facet
from facet.errors import DataError, FacetError
from facet.language import parse_dc
from facet.loading import load
from tests.naive import naive_pairs

DC = "not(t.k = t'.k and t.v != t'.v)"
ROWS = {"k": ["a", "a", "b", None, "b"], "v": [1, 2, 3, 4, 3]}
WANT = {(0, 1), (1, 0)}


def pairs(data, dc: str = DC) -> set[tuple[int, int]]:
    res = facet.detect(data, dcs=[dc], output="pairs")
    return {(p["t1"], p["t2"]) for p in res.pairs().to_pylist()}


def expected(table: pa.Table, dc: str = DC) -> set[tuple[int, int]]:
    return naive_pairs(table, parse_dc(dc)[0])


def one_line_data_error(data, dc: str, *needles: str) -> str:
    with pytest.raises(DataError) as info:
        facet.detect(data, dcs=[dc])
    msg = str(info.value)
    assert isinstance(info.value, FacetError) and "\n" not in msg
    for needle in needles:
        assert needle in msg, msg
    return msg


class Stream:
    """Only the Arrow PyCapsule stream protocol (as other libraries' frames have)."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)


class Array:
    """Only the Arrow PyCapsule array protocol (a record batch)."""

    def __init__(self, batch: pa.RecordBatch) -> None:
        self.batch = batch

    def __arrow_c_array__(self, requested_schema=None):
        return self.batch.__arrow_c_array__(requested_schema)


FRAMES = {
    "pandas": lambda: pd.DataFrame(ROWS),
    "pandas-index": lambda: pd.DataFrame(ROWS, index=[40, 30, 20, 10, 0]),
    "polars": lambda: pl.DataFrame(ROWS),
    "polars-lazy": lambda: pl.LazyFrame(ROWS),
    "arrow-table": lambda: pa.table(ROWS),
    "arrow-chunked": lambda: pa.Table.from_batches(pa.table(ROWS).to_batches(max_chunksize=2)),
    "arrow-batch": lambda: pa.RecordBatch.from_pydict(ROWS),
    "arrow-reader": lambda: pa.table(ROWS).to_reader(max_chunksize=2),
    "c-stream": lambda: Stream(pa.table(ROWS)),
    "c-array": lambda: Array(pa.RecordBatch.from_pydict(ROWS)),
}


@pytest.mark.parametrize("kind", list(FRAMES))
def test_every_kind_of_frame_loads_with_positions_as_ids(kind):
    assert expected(pa.table(ROWS)) == WANT
    assert pairs(FRAMES[kind]()) == WANT
    src = load(FRAMES[kind]())
    assert src.all_columns == ["k", "v"] and src.num_rows == 5 and not src.text
    assert src.table.column("k").to_pylist() == ROWS["k"]


@pytest.mark.parametrize("kind", ["pandas", "polars", "polars-lazy", "arrow-table"])
def test_only_used_columns_are_read_and_rows_still_count(kind):
    src = load(FRAMES[kind](), ["v"])
    assert src.table.column_names == ["v"] and src.num_rows == 5
    assert src.all_columns == ["k", "v"]
    src = load(FRAMES[kind](), [])
    assert src.table.num_columns == 0 and src.num_rows == 5


# --- pandas ------------------------------------------------------------------------------


def test_pandas_mixed_object_column_is_a_data_error():
    df = pd.DataFrame({"k": pd.Series([1, "a", None, "a"], dtype=object), "v": [1, 2, 3, 4]})
    msg = one_line_data_error(df, "not(t.k = t'.k)", "column 'k'", "astype('string')")
    assert msg.startswith("<pandas.DataFrame>: ")
    one_line_data_error(df, "not(t.v < t'.k)", "column 'k'")
    # the hint works: NULL stays NULL, 1 becomes the text '1'
    fixed = df.assign(k=df["k"].astype("string"))
    assert pairs(fixed, "not(t.k = t'.k)") == {(1, 3), (3, 1)}
    # a column that no DC uses is not converted
    assert pairs(df, "not(t.v > t'.v)") == expected(
        pa.table({"v": [1, 2, 3, 4]}), "not(t.v > t'.v)"
    )


def test_pandas_duplicate_names():
    df = pd.DataFrame([["a", 1, "x"], ["a", 2, "y"], ["b", 2, "z"]], columns=["k", "v", "v"])
    one_line_data_error(df, "not(t.v = t'.v)", "column 'v' appears 2 times", "distinct name")
    df.columns = ["k", "dup", "dup"]
    assert pairs(df, "not(t.k = t'.k)") == {(0, 1), (1, 0)}
    assert load(df, ["k"]).all_columns == ["k", "dup", "dup"]


def test_pandas_non_string_column_names_are_their_str():
    df = pd.DataFrame([["a", 1], ["a", 2], ["b", 2]], columns=[0, 1])
    assert load(df).all_columns == ["0", "1"]
    assert pairs(df, "not(t.0 = t'.0 and t.`1` != t'.`1`)") == {(0, 1), (1, 0)}
    with pytest.raises(facet.FacetInputError, match="unknown column"):
        facet.detect(df, dcs=["not(t.2 = t'.2)"])
    # 1 and "1" are the same name
    clash = pd.DataFrame([[1, 2]], columns=[1, "1"])
    one_line_data_error(clash, "not(t.`1` = t'.`1`)", "column '1' appears 2 times")


def test_pandas_nulls_and_extension_types():
    df = pd.DataFrame(
        {
            "k": pd.array(["a", "a", None, "a"], dtype="string"),
            "v": pd.array([1, 2, None, 1], dtype="Int64"),
            "f": [1.0, float("nan"), 1.0, 2.0],
            "c": pd.Categorical(["x", "y", "x", "x"]),
        }
    )
    table = pa.table(
        {
            "k": ["a", "a", None, "a"],
            "v": [1, 2, None, 1],
            "f": [1.0, None, 1.0, 2.0],
            "c": ["x", "y", "x", "x"],
        }
    )
    for dc in [DC, "not(t.k = t'.k and t.f < t'.f)", "not(t.c = t'.c and t.v != t'.v)"]:
        assert pairs(df, dc) == expected(table, dc)


def test_pandas_series_and_other_objects_are_data_errors():
    with pytest.raises(DataError, match="to_frame"):
        facet.detect(pd.Series([1, 2]), dcs=["not(t.a = t'.a)"])
    with pytest.raises(DataError, match="cannot read data of type dict"):
        facet.detect({"a": [1, 2]}, dcs=["not(t.a = t'.a)"])


# --- polars and arrow -------------------------------------------------------------------


def test_polars_object_column():
    df = pl.DataFrame({"k": ["a", "a"], "o": pl.Series([object(), object()], dtype=pl.Object)})
    assert pairs(df, "not(t.k = t'.k)") == {(0, 1), (1, 0)}
    one_line_data_error(df, "not(t.o = t'.o)", "<polars.DataFrame>: column 'o'", "plain type")


def test_arrow_duplicate_names():
    table = pa.Table.from_arrays(
        [pa.array(["a", "a", "b"]), pa.array([1, 2, 3]), pa.array([4, 5, 6])],
        names=["k", "x", "x"],
    )
    assert pairs(table, "not(t.k = t'.k)") == {(0, 1), (1, 0)}
    one_line_data_error(table, "not(t.x = t'.x)", "column 'x' appears 2 times")
    one_line_data_error(Stream(table), "not(t.x = t'.x)", "column 'x' appears 2 times")


def test_broken_stream_is_a_data_error():
    class Broken:
        def __arrow_c_stream__(self, requested_schema=None):
            raise pa.ArrowInvalid("no stream today")

    one_line_data_error(Broken(), DC, "no stream today")
