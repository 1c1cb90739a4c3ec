"""``--sort`` (facet/sinks/ordering.py, docs/semantics.md §7): pairs in ``(dc, t1,
t2)`` order and blocks by their sorted tid lists, the first N of that order with
``--limit N``, on the local engine (random tables and DCs against ``tests/naive.py``,
every plan configuration), through the CLI (a file, text, ``--append``) and on Spark
(the local engine's sorted tables, row for row)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
from facet.planner.config import Config
from facet.sinks.ordering import sorted_pairs
from tests.naive import naive_pairs
from tests.strategies import dcs, examples, tables

REPO = Path(__file__).resolve().parent.parent

CONFIGS = st.sampled_from(
    [
        Config(nested_pairs=0),
        Config(nested_pairs=0, inequality="cdq"),
        Config(nested_pairs=0, threads=3, parallel_work=1),
        Config(),
    ]
)


def _naive_sorted(table: pa.Table, dc) -> list[tuple]:
    got = naive_pairs(table, dc)
    if dc.arity == 1:
        return sorted((t, None) for t in got)
    return sorted(got)


def _rows(pairs: pa.Table) -> list[tuple]:
    return list(zip(pairs.column("t1").to_pylist(), pairs.column("t2").to_pylist(), strict=True))


@settings(
    max_examples=examples(300, 40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_sorted_pairs_are_the_naive_pairs_in_order(data):
    """Every DC's pairs by ``(t1, t2)``, DCs in id order; with a limit, the first N
    of that order (not the first N the plan meets)."""
    table, kinds = data.draw(tables())
    two = [data.draw(dcs(kinds)) for _ in range(2)]
    limit = data.draw(st.one_of(st.none(), st.integers(0, 15)))
    res = facet.detect(
        table, dcs=two, output="pairs", sort=True, limit=limit, config=data.draw(CONFIGS)
    )
    pairs = res.pairs()
    assert pairs.column("dc").to_pylist() == sorted(pairs.column("dc").to_pylist())
    for i, dc in enumerate(two):
        want = _naive_sorted(table, dc)
        if limit is not None:
            want = want[:limit]
        got = _rows(pairs.filter(pa.compute.equal(pairs.column("dc"), i)))
        assert got == want, dc.canonical()
        assert res.dcs[i].written == len(want)
        assert res.dcs[i].violations == len(naive_pairs(table, dc))


@settings(
    max_examples=examples(200, 30), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.data())
def test_sorted_blocks_are_ordered_by_their_lists(data):
    """Blocks with each tid list ascending, ordered list by list, numbered 0.. in
    that order, expanding to the naive pairs; with a limit, the first N blocks."""
    table, kinds = data.draw(tables())
    dc = data.draw(dcs(kinds))
    limit = data.draw(st.one_of(st.none(), st.integers(0, 6)))
    config = data.draw(CONFIGS)
    res = facet.detect(table, dcs=[dc], output="blocks", sort=True, limit=limit, config=config)
    blocks = res.blocks().to_pylist()
    keys = [(b["t1"], b["t2"] or []) for b in blocks]
    assert all(
        b["t1"] == sorted(b["t1"]) and (b["t2"] or []) == sorted(b["t2"] or []) for b in blocks
    )
    assert keys == sorted(keys)
    assert [b["block"] for b in blocks] == list(range(len(blocks)))
    plain = facet.detect(table, dcs=[dc], output="blocks", config=config).blocks().to_pylist()
    every = sorted((sorted(b["t1"]), sorted(b["t2"] or [])) for b in plain)
    assert keys == every[: len(every) if limit is None else limit]
    if limit is None:
        expanded = set()
        for b in blocks:
            if b["t2"] is None:
                expanded.update(b["t1"])
            else:
                expanded.update((a, c) for a in b["t1"] for c in b["t2"] if a != c)
        assert expanded == naive_pairs(table, dc)


def test_a_limit_selects_while_the_pairs_stream():
    """Keys cut back to the limit as batches pass (more than the buffer between
    cuts) still give the N smallest, in order, in batches of ``chunk`` rows."""
    rng = np.random.default_rng(5)
    rows = 1000
    t1 = rng.integers(0, rows, 3_000_000)
    t2 = rng.integers(0, rows, 3_000_000)
    schema = pa.schema([("dc", pa.int64()), ("t1", pa.int64()), ("t2", pa.int64())])
    batches = [
        pa.RecordBatch.from_arrays(
            [pa.array(np.zeros(s1 - s0, np.int64)), pa.array(t1[s0:s1]), pa.array(t2[s0:s1])],
            schema=schema,
        )
        for s0, s1 in zip(
            range(0, 3_000_000, 400_000), [*range(400_000, 3_000_000, 400_000), 3_000_000]
        )
    ]
    got = list(sorted_pairs(batches, 0, rows, 700_000, 250_000))
    assert [b.num_rows for b in got] == [250_000, 250_000, 200_000]
    keys = np.concatenate([b.column(1).to_numpy() * rows + b.column(2).to_numpy() for b in got])
    assert np.array_equal(keys, np.sort(t1 * rows + t2)[:700_000])


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "facet", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def test_the_cli_sorts_a_file_the_text_and_appended_batches(tmp_path):
    data = tmp_path / "x.csv"
    data.write_text("a,b\n1,5\n2,3\n1,4\n3,1\n2,2\n1,5\n")
    batch = tmp_path / "more.csv"
    batch.write_text("a,b\n0,9\n4,0\n")
    dc = "not(t.a < t'.a and t.b > t'.b)"
    out = tmp_path / "p.parquet"
    r = _cli("detect", str(data), "--dc", dc, "--dc", "not(t.b > 3)", "--output", "pairs",
             "--sort", "--out", str(out), "-q", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 1, r.stderr
    got = pq.read_table(out).to_pylist()
    want = [(0, 0, 1), (0, 0, 3), (0, 0, 4), (0, 1, 3), (0, 2, 1), (0, 2, 3), (0, 2, 4),
            (0, 4, 3), (0, 5, 1), (0, 5, 3), (0, 5, 4), (1, 0, None), (1, 2, None),
            (1, 5, None)]  # fmt: skip
    assert [(p["dc"], p["t1"], p["t2"]) for p in got] == want
    r = _cli("detect", str(data), "--dc", dc, "--output", "pairs", "--sort", "--limit", "2",
             "-q", cwd=tmp_path)  # fmt: skip
    assert r.stdout.splitlines()[-3:] == ["dc,t1,t2", "0,0,1", "0,0,3"]
    r = _cli("detect", str(data), "--dc", dc, "--output", "pairs", "--sort", "--append",
             str(batch), "-q", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    listed = lines[lines.index("== batch 1: " + str(batch) + " (tids 6..7): violations "
                               "holding a row of this batch"):]  # fmt: skip
    rows = [x for x in listed if x.startswith("0,")]
    pairs = [tuple(int(v) for v in x.split(",")[1:]) for x in rows]
    assert pairs == sorted(pairs) and len(pairs) > 1


def test_spark_sorts_as_the_local_engine(spark):
    """Pairs, and blocks with a limit (the first N of the order), row for row the
    local engine's."""
    table = pa.table(
        {
            "k": [1, 1, 2, 2, 1, 2, 1, 1],
            "x": [5, 3, 8, 1, 4, 9, 2, 7],
            "y": [1, 2, 3, 4, 5, 6, 7, 8],
        }
    )
    rules = ["not(t.k = t'.k and t.x > t'.x and t.y < t'.y)", "not(t.x > 4)", "not(t.x > t'.y)"]
    for output, limit in (("pairs", None), ("blocks", 3)):
        local = facet.detect(table, dcs=rules, output=output, sort=True, limit=limit)
        dist = facet.detect(table, dcs=rules, output=output, sort=True, limit=limit, engine="spark")
        a = local.pairs() if output == "pairs" else local.blocks()
        b = dist.pairs() if output == "pairs" else dist.blocks()
        assert b.to_pylist() == a.to_pylist(), (output, limit)


@pytest.mark.parametrize("output", ["pairs", "blocks"])
def test_sort_output_orders_what_a_result_keeps(output):
    table = pa.table({"a": [3, 1, 2, 1], "b": [1, 3, 2, 4]})
    res = facet.detect(table, dcs=["not(t.a < t'.a and t.b > t'.b)", "not(t.a = t'.a)"],
                       output=output)  # fmt: skip
    want = facet.detect(table, dcs=["not(t.a < t'.a and t.b > t'.b)", "not(t.a = t'.a)"],
                        output=output, sort=True)  # fmt: skip
    res.sort_output()
    got = res.pairs() if output == "pairs" else res.blocks()
    assert got.to_pylist() == (want.pairs() if output == "pairs" else want.blocks()).to_pylist()
