"""The Polars and pandas benchmark peers (bench/polars_worker.py, bench/pandas_worker.py)
count exactly what the naive evaluator counts, on every DC shape: no equality,
cross-column, constants, single-tuple, ``!=``, NULLs."""

from __future__ import annotations

import datetime as dt
import json
import math
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facet.language.parser import parse_dc
from tests.naive import naive_count
from tests.strategies import dcs, examples, tables

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import pandas_worker  # noqa: E402
import polars_worker  # noqa: E402

WORKERS = {"polars": polars_worker, "pandas": pandas_worker}


def _count(worker, table: pa.Table, dc_text: str) -> int:
    t = table.append_column("rid", pa.array(range(table.num_rows), pa.int64()))
    return worker.count(worker.load(t), dc_text)[0]


def _no_nan(table: pa.Table) -> pa.Table:
    cols = []
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_floating(col.type):
            col = pa.array([None if v is not None and math.isnan(v) else v for v in col.to_pylist()],
                           col.type)  # fmt: skip
        cols.append(col)
    return pa.table(cols, names=table.column_names)


@pytest.mark.parametrize("name", WORKERS)
@settings(max_examples=examples(80), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
@given(data=st.data())
def test_counts_equal_naive(name, data):
    table, kinds = data.draw(tables(max_rows=25))
    table = _no_nan(table)  # the suite's typed tables hold NULLs, never NaN
    dc = data.draw(dcs(kinds, max_preds=4))
    assert _count(WORKERS[name], table, dc.canonical()) == naive_count(table, dc)


@pytest.mark.parametrize("name", WORKERS)
def test_typed_corners(name):
    """Timestamps, dates, decimals and text constants; NULLs never match, not even with !=."""
    from decimal import Decimal

    ts = [dt.datetime(2020, 1, d) for d in (1, 2, 3)] + [None]
    table = pa.table({
        "ts": pa.array(ts, pa.timestamp("us")),
        "d": pa.array([dt.date(2020, 1, d) for d in (3, 2, 1)] + [None], pa.date32()),
        "p": pa.array([Decimal("1.10"), Decimal("2.25"), None, Decimal("0.05")],
                      pa.decimal128(15, 2)),
        "s": pa.array(["a", None, "b", "a"]),
    })  # fmt: skip
    for text in (
        "not(t.ts < t'.ts and t.d > t'.d)",
        "not(t.s != t'.s)",
        'not(t.p > t\'.p and t.s = "a")',
        'not(t.ts >= "2020-01-02")',
        "not(t.p <= 1.1)",
        "not(t.ts < t'.ts and t.p != t'.p)",
    ):
        (dc,) = parse_dc(text)
        assert _count(WORKERS[name], table, dc.canonical()) == naive_count(table, dc), text


@pytest.mark.parametrize("name", WORKERS)
def test_worker_process(tmp_path, name):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1, 1, 2, None], "b": ["x", "y", "z", "x"],
                             "rid": [0, 1, 2, 3]}), path)  # fmt: skip
    out = subprocess.run(
        [sys.executable, str(REPO / "bench" / f"{name}_worker.py"), "--table", str(path),
         "--dc", "not(t.a = t'.a and t.b != t'.b)", "--dc", "not(t.a < t'.a)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["system"] == name and [d["count"] for d in doc["dcs"]] == [2, 2]
