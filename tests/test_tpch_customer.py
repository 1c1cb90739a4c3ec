"""bench/tpch.py's lineitem with its order's customer key (the paper's phi10 table)."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import tpch  # noqa: E402


def test_lineitem_with_customer(tmp_path):
    path = tpch.lineitem_with_customer(3_000, tmp_path)
    plain = pq.read_table(tmp_path / "lineitem_3000.parquet")
    got = pq.read_table(path)
    assert got.num_rows == 3_000
    assert got.drop_columns(["l_custkey"]).equals(plain)  # the same rows, in the same order
    cust = got.column("l_custkey")
    assert cust.null_count == 0 and pc.min(cust).as_py() >= 1
    # one customer per order
    per_order = got.group_by("l_orderkey").aggregate([("l_custkey", "count_distinct")])
    assert pc.max(per_order.column("l_custkey_count_distinct")).as_py() == 1
    assert tpch.lineitem_with_customer(3_000, tmp_path) == path  # cached
