"""The Spark engine gives the local engine's answers (facet/engine/spark/).

On the session-scoped ``local[2]`` SparkSession of ``tests/conftest.py``:
random tables and DCs of every shape against ``tests/naive.py`` with tiny
split thresholds (so heavy keys and row blocks are cut into sub-blocks),
every ``data/`` rules file against the local engine, tables loaded by Spark
against facet's loader, a skewed key spread into bounded tasks.  In their own
processes: the CLI, Spark Connect, ``local-cluster`` (two executor JVMs) and a
task that fails once and is retried.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import facet
from facet.api import load_dcs, open_session
from facet.column_types import analyze
from facet.engine.spark.table import _int96_columns, spark_table
from facet.key_tallies import shape as key_shape
from facet.language.ast import DC
from facet.language.where import parse_where
from facet.loading import load
from facet.planner.config import Config
from tests.arrow_strategies import typed_dcs, typed_tables
from tests.naive import naive_cells, naive_pairs
from tests.strategies import dcs, tables
from tests.test_properties import facet_pairs
from tests.test_row_outputs import _cells, _rows, components_from, tuples_from
from tests.test_where import _pairs_of, scope_rows, scoped, where_texts

ROOT = Path(__file__).resolve().parent.parent
TAX = ROOT / "data" / "tax" / "tax_dirty_0010k.csv"
PROPERTY = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _dirtiest(folder: Path) -> list[Path]:
    """The data file a folder's rules are checked on: its dirty one (the tax rules:
    the 10k-row sample), else its only or first CSV."""
    files = sorted(folder.glob("*.csv"))
    dirty = [f for f in files if "dirty" in f.name]
    return (dirty or files)[:1]


#: every data/rules pair
PAIRS = sorted(
    (csv, rules)
    for folder in (ROOT / "data").rglob("*")
    if folder.is_dir()
    for rules in folder.glob("*.txt")
    if "rules" in rules.name or "constraints" in rules.name
    for csv in _dirtiest(folder)
)


def _pairs(table: pa.Table, dc: int) -> set:
    sub = table.filter(pa.compute.equal(table.column("dc"), dc))
    return set(zip(sub.column("t1").to_pylist(), sub.column("t2").to_pylist(), strict=True))


@PROPERTY
@given(data=st.data())
def test_random_tables_and_dcs_equal_naive(spark, data):
    table, kinds = data.draw(tables(max_rows=40))
    dc = data.draw(dcs(kinds))
    config = Config(
        spark_split_rows=data.draw(st.integers(1, 8)), spark_tasks=data.draw(st.integers(1, 5))
    )
    want = naive_pairs(table, dc)
    res = facet.detect(table, dcs=[dc], engine="spark", output="pairs", config=config)
    got = res.dcs[0]
    assert got.violations == len(want), dc.canonical()
    if dc.arity == 1:
        assert set(res.pairs().column("t1").to_pylist()) == want
        return
    assert got.rows_involved == len({t for p in want for t in p}), dc.canonical()
    assert _pairs(res.pairs(), 0) == want, dc.canonical()
    blocks = facet.detect(table, dcs=[dc], engine="spark", output="blocks", config=config)
    listed = set()
    for left, right in zip(
        blocks.blocks().column("t1").to_pylist(), blocks.blocks().column("t2").to_pylist()
    ):
        listed.update((a, b) for a in left for b in right if a != b)
    assert listed == want, dc.canonical()


@settings(PROPERTY, max_examples=8)
@given(data=st.data())
def test_row_outputs_equal_naive_on_spark(spark, data):
    """tuples, cells and components (every DC shape, several tasks, heavy keys cut
    into sub-blocks) from the pairs naive.py finds; suspects as the local engine's
    (tests/test_row_outputs.py checks those against a naive greedy cover)."""
    table, kinds = data.draw(tables(max_rows=30))
    rules = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(1, 3)))]
    config = Config(
        spark_split_rows=data.draw(st.integers(1, 8)), spark_tasks=data.draw(st.integers(1, 5))
    )
    want = {i: naive_pairs(table, dc) for i, dc in enumerate(rules)}
    got = {o: facet.detect(table, dcs=rules, engine="spark", output=o, config=config)
           for o in ("tuples", "cells", "components", "suspects")}  # fmt: skip
    assert _rows(got["tuples"].tuples()) == tuples_from(want)
    assert _rows(got["components"].components()) == components_from(want)
    cells = got["cells"].cells()
    for i, dc in enumerate(rules):
        assert _cells(cells, i) == naive_cells(table, dc), dc.canonical()
    local = facet.detect(table, dcs=rules, output="suspects")
    assert got["suspects"].suspects().equals(local.suspects())


def test_row_outputs_on_spark_equal_the_local_engine_on_tax(spark, tmp_path):
    """``--output tuples|cells|components|suspects --engine spark`` (refused before,
    exit 2): the local engine's tables on relaxed Tax rules, in memory and written
    by the CLI."""
    lines = (ROOT / "data" / "tax" / "dc_rules_relaxed.txt").read_text().splitlines()
    rules = tmp_path / "rules.txt"  # three shapes: 165, 156,732 and 56 violations
    rules.write_text("\n".join(lines[i] for i in (0, 1, 3)) + "\n")
    for output in ("tuples", "components", "suspects"):
        local = getattr(facet.detect(TAX, rules, output=output), output)()
        dist = getattr(facet.detect(TAX, rules, output=output, engine="spark"), output)()
        if output == "suspects":
            assert dist.equals(local)
        else:
            assert local.num_rows > 0 and _sorted(dist).equals(_sorted(local)), output
    files = {}
    for engine in ("local", "spark"):
        files[engine] = tmp_path / f"cells_{engine}.parquet"
        spark_args = ["--engine", "spark", "--master", "local[2]"] if engine == "spark" else []
        p = subprocess.run(
            [sys.executable, "-m", "facet", "detect", str(TAX), "--rules", str(rules),
             "--output", "cells", *spark_args, "--out", str(files[engine])],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert p.returncode == 1, p.stderr
    local, dist = (pq.read_table(files[e]) for e in ("local", "spark"))
    assert local.num_rows > 0 and _sorted(dist).equals(_sorted(local))


@settings(PROPERTY, max_examples=8)
@given(data=st.data())
def test_scoped_runs_on_spark_equal_naive_pairs_touching_the_scope(spark, data):
    """``--where`` on Spark (refused before, exit 2): each task scopes its own
    initial pairs -- equality blocks, heavy keys cut into sub-blocks, range
    partitions (tiny split thresholds) -- and the counts, rows involved, pairs and
    row outputs are naive.py's pairs touching the scope; the shortcuts that know
    no scope (key aggregates, range pairs counted from summaries) stay off."""
    table, kinds = data.draw(tables(max_rows=30))
    rules = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(1, 3)))]
    text = data.draw(where_texts(kinds))
    mode = data.draw(st.sampled_from(["sequential", "cost-trie"]))
    config = Config(
        spark_split_rows=data.draw(st.integers(1, 8)), spark_tasks=data.draw(st.integers(1, 5)),
        scope_semi_join=data.draw(st.booleans()),
    )  # fmt: skip
    scope = scope_rows(parse_where(text), lambda p: naive_pairs(table, DC((p,))), table.num_rows)
    want = {i: scoped(naive_pairs(table, dc), scope) for i, dc in enumerate(rules)}
    run = {"dcs": rules, "engine": "spark", "where": text, "mode": mode, "config": config}
    res = facet.detect(table, output="pairs", **run)
    assert res.scope_rows == len(scope), text
    for i, dc in enumerate(rules):
        assert _pairs_of(res, i) == want[i], (text, dc.canonical())
        rows = {r for p in want[i] for r in (p if isinstance(p, tuple) else (p,))}
        assert (res.dcs[i].violations, res.dcs[i].rows_involved) == (len(want[i]), len(rows))
    counted = facet.detect(table, **run)
    assert [(d.violations, d.rows_involved) for d in counted.dcs] == [
        (d.violations, d.rows_involved) for d in res.dcs
    ], text
    tuples = facet.detect(table, output="tuples", **run).tuples()
    assert _rows(tuples) == tuples_from(want), text


def test_where_on_spark_gives_the_local_answer_on_tax(spark, tmp_path):
    """Tax rules scoped two ways on Spark equal the local engine's scoped run:
    counts, rows involved, pairs, ``explain``'s scope; a key and an FD (counted
    by Spark aggregates unscoped) and a DC without an equality (range pairs from
    summaries unscoped) are among them.  Through the CLI: JSON, and the pairs
    the executors write."""
    lines = (ROOT / "data" / "tax" / "dc_rules_relaxed.txt").read_text().splitlines()
    rules = tmp_path / "rules.txt"
    rules.write_text(
        "\n".join([lines[0], "zip -> city", "not(t.zip = t'.zip)",
                   "not(t.salary > t'.salary and t.rate < t'.rate)", "not(t.rate > 9)"]) + "\n"
    )  # fmt: skip
    config = Config(spark_split_rows=2_000)
    where = "rate <= 0.5 or city is null"
    local = facet.detect(TAX, rules, where=where)
    dist = facet.detect(TAX, rules, where=where, engine="spark", config=config)
    assert dist.scope_rows == local.scope_rows
    assert [(d.violations, d.rows_involved) for d in dist.dcs] == [
        (d.violations, d.rows_involved) for d in local.dcs
    ]
    where = "not (state != 'WY') or rate > 8.5"  # 2.4 million pairs
    plan = facet.explain(TAX, rules, where=where, engine="spark")
    assert plan["where"] == where and plan["scope_rows"] == dist_scope(where) > 0
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    base = [sys.executable, "-m", "facet", "detect", str(TAX), "--rules", str(rules),
            "--where", where, "--format", "json", "--output", "pairs"]  # fmt: skip
    out = {e: tmp_path / f"pairs_{e}.parquet" for e in ("local", "spark")}
    docs = {}
    for e, extra in (("local", []), ("spark", ["--engine", "spark", "--master", "local[2]"])):
        proc = subprocess.run([*base, "--out", str(out[e]), *extra], capture_output=True,
                              text=True, env=env, timeout=600)  # fmt: skip
        assert proc.returncode == 1, proc.stderr[-2000:]
        docs[e] = json.loads(proc.stdout)
    assert (docs["spark"]["where"], docs["spark"]["scope_rows"]) == (where, dist_scope(where))
    assert [(d["violations"], d["rows_involved"]) for d in docs["spark"]["dcs"]] == [
        (d["violations"], d["rows_involved"]) for d in docs["local"]["dcs"]
    ]
    work = {d["id"]: d.get("work", []) for d in docs["spark"]["dcs"]}
    assert not any(w.get("aggregates") for ws in work.values() for w in ws)
    # the key (counted by aggregates unscoped) goes to the tasks by its key
    assert all(w.get("key") == ["zip", "zip"] for w in work[2]) and work[2]
    local, dist = (pq.read_table(out[e]) for e in ("local", "spark"))
    assert local.num_rows > 0 and _sorted(dist).equals(_sorted(local))


def dist_scope(where: str) -> int:
    """Rows of the Tax sample in a scope, by the local engine."""
    return facet.detect(TAX, dcs=["not(t.zip = t'.zip)"], where=where).scope_rows


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by([(c, "ascending") for c in table.column_names])


@pytest.mark.parametrize(("csv", "rules"), PAIRS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_rules_file_counts_as_the_local_engine(spark, csv, rules):
    local = facet.detect(csv, rules)
    dist = facet.detect(csv, rules, engine="spark", config=Config(spark_split_rows=2_000))
    assert dist.engine == "spark"
    got = [(d.dc, d.violations, d.rows_involved) for d in dist.dcs]
    assert got == [(d.dc, d.violations, d.rows_involved) for d in local.dcs]


def _plan_only(record: dict) -> dict:
    """An explain record without the engine's name and timings."""
    out = {k: v for k, v in record.items() if k not in ("engine", "phases")}
    timings = ("planning_seconds", "statistics_seconds")
    out["dcs"] = [{k: v for k, v in d.items() if k not in timings} for d in record["dcs"]]
    return out


@pytest.mark.parametrize(("csv", "rules"), PAIRS, ids=lambda p: str(p.relative_to(ROOT)))
def test_explain_gives_the_local_plan(spark, csv, rules):
    """Same stages, algorithms, estimates and warnings: the statistics (exact
    counts, merged HyperLogLog registers, the tid sample) equal the local ones."""
    local = facet.explain(csv, rules)
    dist = facet.explain(csv, rules, engine="spark")
    assert dist["engine"] == "spark"
    assert _plan_only(dist) == _plan_only(local)


def test_explain_gives_the_local_plan_from_the_sample_above_sketch_rows(spark):
    """Above ``sketch_max_rows`` combinations are estimated from the tid sample."""
    config = Config(sketch_max_rows=1_000, sample_rate=0.1)
    rules = ROOT / "data" / "tax" / "dc_rules.txt"
    local = facet.explain(TAX, rules, config=config)
    # the sample's estimates, not the sketch's
    assert _plan_only(local) != _plan_only(facet.explain(TAX, rules))
    assert _plan_only(facet.explain(TAX, rules, engine="spark", config=config)) == _plan_only(local)


@pytest.mark.parametrize("mode", ["parallel", "cost-trie", "freq-trie"])
@pytest.mark.parametrize(
    "csv", [TAX, ROOT / "data" / "holoclean-hospital" / "hospital.csv"], ids=lambda p: p.name
)
def test_many_dc_modes_count_as_the_local_engine(spark, mode, csv):
    """The trie modes share one shuffle among DCs led by the same equality."""
    rules = next(r for c, r in PAIRS if c == csv)
    local = facet.detect(csv, rules)
    opened = open_session(csv, rules, engine="spark", config=Config(spark_split_rows=2_000))
    from facet.engine.multi import count_all

    got = count_all(opened.session, mode)
    assert [(v, r) for v, r, _ in got] == [(d.violations, d.rows_involved) for d in local.dcs]
    # spreads (a shared one is every sharing DC's entry, counted once)
    keyed = [
        w
        for w in opened.session.engine.work
        if w.get("key") is not None and w.get("shared_by", [w["dc"]])[0] == w["dc"]
    ]
    if mode != "parallel":
        assert len(keyed) < sum(1 for d in local.dcs if d.arity == 2)


def test_pairs_equal_the_local_engine_on_tax(spark):
    rules = ["not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)",
             "zip -> city", "not(t.zip = t'.zip and t.salary != t'.salary)"]  # fmt: skip
    local = facet.detect(TAX, dcs=rules, output="pairs")
    dist = facet.detect(TAX, dcs=rules, output="pairs", engine="spark",
                        config=Config(spark_split_rows=500))  # fmt: skip
    for i in range(len(rules)):
        assert _pairs(dist.pairs(), i) == _pairs(local.pairs(), i)


@pytest.mark.parametrize("csv", sorted({c for c, _ in PAIRS}), ids=lambda p: p.name)
def test_spark_reads_csv_as_the_local_loader(spark, csv):
    """Same rows, same order (tids), same text, NULL for every empty field."""
    local = load(csv).table
    dcs = [f"not(t.`{c}` = t'.`{c}`)" for c in local.column_names]
    use = analyze(load_dcs(dcs=dcs))
    table = spark_table(spark, csv, use, {})
    got = table.frame.toArrow().sort_by("_facet_tid")
    assert table.rows == local.num_rows
    assert got.column("_facet_tid").to_pylist() == list(range(local.num_rows))
    for c in local.column_names:
        values = [None if v == "" else v for v in got.column(table.in_frame(c)).to_pylist()]
        assert values == local.column(c).to_pylist(), c


OUT_RULES = [
    "not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)",
    "not(t.zip = t'.zip and t.city != t'.city)",
    "not(t.salary > t'.salary and t.rate < t'.rate and t.single_exemp > t'.single_exemp "
    "and t.state = 'CA')",
    "not(t.salary < 40000)",
]


def _expand(blocks: pa.Table) -> set:
    """``(dc, t1, t2)`` of every pair a blocks table stands for."""
    out = set()
    for b in blocks.to_pylist():
        if b["t2"] is None:
            out.update((b["dc"], t, None) for t in b["t1"])
        else:
            out.update((b["dc"], a, c) for a in b["t1"] for c in b["t2"] if a != c)
    return out


def _triples(pairs: pa.Table) -> set:
    return set(zip(*[pairs.column(c).to_pylist() for c in ("dc", "t1", "t2")], strict=True))


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_out_files_are_written_by_the_executors(spark, tmp_path, suffix):
    """Pairs and blocks written through Parquet parts give the local engine's
    sets; blocks are numbered 0.. per DC; no part file is left behind."""
    config = Config(spark_split_rows=1_500)
    for output in ("pairs", "blocks"):
        local = facet.detect(TAX, dcs=OUT_RULES, output=output)
        out = tmp_path / f"{output}{suffix}"
        dist = facet.detect(TAX, dcs=OUT_RULES, output=output, out=out, engine="spark",
                            config=config)  # fmt: skip
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            f"{o}{suffix}" for o in ("pairs", "blocks")[: 1 + (output == "blocks")]
        )
        got = pq.read_table(out) if suffix == ".parquet" else _read_csv_out(out, output)
        if output == "pairs":
            assert _triples(got) == _triples(local.pairs())
            assert [d.written for d in dist.dcs] == [d.violations for d in local.dcs]
        else:
            assert _expand(got) == _expand(local.blocks())
            for i, d in enumerate(dist.dcs):
                ids = got.filter(pa.compute.equal(got.column("dc"), i)).column("block")
                assert sorted(ids.to_pylist()) == list(range(d.written))


def _read_csv_out(path: Path, output: str) -> pa.Table:
    import pyarrow.csv as pcsv

    t = pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(strings_can_be_null=True))
    if output == "pairs":
        return t.cast(pa.schema([(n, pa.int64()) for n in t.column_names]))
    lists = {
        c: pa.array([None if v is None else [int(x) for x in v.split()] for v in
                     t.column(c).cast(pa.string()).to_pylist()], pa.list_(pa.int64()))
        for c in ("t1", "t2")
    }  # fmt: skip
    return pa.table({"dc": t.column("dc"), "block": t.column("block"), **lists})


def test_limit_keeps_the_same_pairs_and_frame_gives_a_dataframe(spark):
    """``--limit`` keeps the smallest (t1, t2) of each DC, the same every run;
    without ``out`` the pairs are also a Spark DataFrame."""
    local = facet.detect(TAX, dcs=OUT_RULES, output="pairs")
    runs = [facet.detect(TAX, dcs=OUT_RULES, output="pairs", limit=7, engine="spark")
            for _ in range(2)]  # fmt: skip
    assert (
        runs[0]
        .pairs()
        .sort_by([("dc", "ascending"), ("t1", "ascending")])
        .equals(runs[1].pairs().sort_by([("dc", "ascending"), ("t1", "ascending")]))
    )
    for i in range(len(OUT_RULES)):
        want = sorted(p for p in _triples(local.pairs()) if p[0] == i)[:7]
        assert sorted(p for p in _triples(runs[0].pairs()) if p[0] == i) == want
    frame = runs[0].frame()
    assert frame.columns == ["dc", "t1", "t2"]
    assert frame.count() == sum(min(d.violations, 7) for d in local.dcs)
    with pytest.raises(RuntimeError, match="frame"):
        local.frame()


def test_a_key_with_30_percent_of_the_rows_is_spread(spark):
    n = 60_000
    rng = np.random.default_rng(7)
    key = np.where(rng.random(n) < 0.3, 0, rng.integers(1, 5_000, n))
    table = pa.table({"k": key, "v": rng.integers(0, 1_000, n), "w": rng.integers(0, 50, n)})
    dc = "not(t.k = t'.k and t.v < t'.v and t.w > t'.w)"
    config = Config(spark_split_rows=4_000, spark_tasks=4)
    opened = open_session(table, dcs=[dc], engine="spark", config=config)
    session = opened.session
    sizes = session.engine.task_rows(session.plan(0), session.initial(0))
    # a task's share: max(rows / tasks, spark_split_rows) = 15,000 rows.  The heavy key
    # (about 18,000 rows) alone would be one task of 18,000^2 candidate pairs; cut in
    # 2 sub-blocks it is 4 tasks of one sub-block per side, at most 2 x 15,000 rows
    share = max(-(-n // 4), 4_000)
    assert len(sizes) == 4 + 4  # 4 tasks of light keys, 2 x 2 of the heavy one
    assert max(sizes) <= 2 * share
    heavy = int(np.count_nonzero(key == 0))
    assert heavy > share and sorted(sizes)[-4:] != [2 * heavy] * 4
    local = facet.detect(table, dcs=[dc]).dcs[0]
    assert session.count(0) == (local.violations, local.rows_involved)
    # the run's JSON records the same bound: the largest task's rows
    res = facet.detect(table, dcs=[dc], engine="spark", config=config)
    (work,) = res.to_dict()["dcs"][0]["work"]
    assert work["tasks"] == 8 and work["key"] == ["k", "k"]
    # (rows a task got once each: a row sent as t and as t' counts once)
    assert share < work["largest_task_rows"] <= max(sizes) <= 2 * share
    assert n <= work["task_rows"] <= sum(sizes)
    assert res.dcs[0].violations == local.violations


def test_a_dc_without_equality_is_range_partitioned_and_pruned(spark, tmp_path):
    """Ranges of the first inequality's column: pairs of ranges that cannot
    hold a violation get no task; the count stays exact (NULL, NaN, ties)."""
    n = 20_000
    rng = np.random.default_rng(3)
    price = np.round(rng.random(n) * 1_000, 1)
    price[rng.random(n) < 0.01] = np.nan  # NaN is NULL
    when = pa.array(rng.integers(0, 10**6, n) * 1_000_000, pa.timestamp("us"))
    table = pa.table({"price": price, "discount": rng.integers(0, 11, n), "at": when})
    table = table.set_column(1, "discount", pa.array(
        [None if i % 97 == 0 else int(v) for i, v in enumerate(table.column(1).to_pylist())]
    ))  # fmt: skip
    dcs = ["not(t.price > t'.price and t.discount < t'.discount)",
           "not(t.at <= t'.at and t.price >= t'.price and t.discount != t'.discount)"]  # fmt: skip
    config = Config(spark_split_rows=1_000, spark_tasks=4, spark_task_rows=3_000)
    opened = open_session(table, dcs=dcs, engine="spark", config=config)
    session = opened.session
    local = facet.detect(table, dcs=dcs)
    for i in range(len(dcs)):
        assert session.count(i) == (local.dcs[i].violations, local.dcs[i].rows_involved)
    ranged = [w for w in session.engine.work if w.get("ranges")]
    assert len(ranged) == 2 and all(w["pruned"] > 0 for w in ranged)
    # two predicates over numbers: range pairs on either side of the diagonal
    # are counted from value counts; three predicates: every pair is a task
    assert ranged[0]["summarized"] > 0 and ranged[1]["summarized"] == 0
    assert all(w["tasks"] > 0 and w["ranges"][1] >= 20_000 / 3_000 for w in ranged)
    # the same from CSV: order keys and value counts from facet's typing (tasks)
    csv = tmp_path / "ranges.csv"
    pa.csv.write_csv(table, csv)
    opened = open_session(csv, dcs=dcs[:1], engine="spark", config=config)
    local = facet.detect(csv, dcs=dcs[:1]).dcs[0]
    assert opened.session.count(0) == (local.violations, local.rows_involved)
    assert opened.session.engine.work[-1]["summarized"] > 0
    small = table.slice(0, 600)
    got = facet.detect(small, dcs=dcs, engine="spark", output="pairs",
                       config=Config(spark_split_rows=50, spark_tasks=4))  # fmt: skip
    assert _triples(got.pairs()) == _triples(facet.detect(small, dcs=dcs, output="pairs").pairs())


def _mixed_table() -> pa.Table:
    """Columns of every typing the Spark engine keys itself or hands to the tasks:
    NULLs, empty strings, int32 against int64, booleans, decimals, -0.0 and NaN."""
    n = 3_000
    rng = np.random.default_rng(11)
    words = np.array(["x", "y", "", "x ", "Y", "é"], dtype=object)
    s = [None if i % 50 == 0 else words[v] for i, v in enumerate(rng.integers(0, 6, n))]
    table = pa.table({
        "a": pa.array(rng.integers(0, 40, n), pa.int32()),
        "b": pa.array([None if i % 31 == 0 else int(v) for i, v in
                       enumerate(rng.integers(0, 40, n))], pa.int64()),
        "f": pa.array(rng.integers(0, 2, n).astype(bool)),
        "x": rng.integers(0, 9, n).astype(np.float64),
        "c": pa.array(rng.integers(0, 9, n), pa.int16()),
        "s": pa.array(s, pa.string()),
        "v": rng.integers(0, 100, n),
        "dec": pa.array([None if i % 40 == 0 else Decimal(int(v)) / 4 for i, v in
                         enumerate(rng.integers(0, 30, n))], pa.decimal128(10, 2)),
        "fl": pa.array(rng.choice([-0.0, 0.0, np.nan, 1.5, 2.25], n)),
        "ts": pa.array(rng.integers(0, 20, n) * 1_000_000, pa.timestamp("us", tz="UTC")),
    })  # fmt: skip
    # g: v // 10 but on every 97th row, so v -> g holds for most v and fails for a few
    g = table.column("v").to_numpy() // 10 + (np.arange(n) % 97 == 0)
    return table.append_column("g", pa.array(g))


def test_keys_spark_computes_itself_count_as_the_local_engine(spark, tmp_path):
    """Equality keys of text and whole-number columns are Spark's own hashes (no
    Python pass); a key of other values is the tasks'.  Both give the local
    counts, with NULLs, empty strings, int32 against int64 and booleans."""
    table = _mixed_table()
    native = ["not(t.a = t'.b and t.v < t'.v)", "not(t.s = t'.s and t.v > t'.v)",
              "not(t.f = t'.f and t.a = t'.a and t.v != t'.v)",
              "not(t.dec = t'.dec and t.v < t'.v)", "not(t.fl = t'.fl and t.v > t'.v)",
              "not(t.ts = t'.ts and t.v != t'.v)"]  # fmt: skip
    tasks = ["not(t.x = t'.c and t.v < t'.v)", "not(t.v = t'.v and t.x > t'.x)"]
    csv = tmp_path / "t.csv"
    pa.csv.write_csv(table, csv)
    for data in (table, csv):
        opened = open_session(data, dcs=native + tasks, engine="spark")
        engine = opened.session.engine
        local = facet.detect(data, dcs=native + tasks)
        for i in range(len(native) + len(tasks)):
            got = opened.session.count(i)
            assert got == (local.dcs[i].violations, local.dcs[i].rows_involved), i
        assert engine._native_keys("s", "s") is not None
        assert engine._native_keys("a", "b") is not None  # int32 and int64, or CSV text
        assert engine._native_keys("x", "c") is None  # numbers that are not all whole
        for c in ("dec", "fl", "ts"):  # one column: its own values are keys
            assert engine._native_keys(c, c) is not None
        # an ordered CSV column is a number facet parses; a typed one is Spark's long
        assert (engine._native_keys("v", "v") is None) == (data is csv)


def test_a_count_led_by_equalities_spreads_by_them_all_without_statistics(spark, tmp_path):
    """A count's leading equalities are one combined key (Spark's hashes, or the
    tasks' where any equality has none), so the count asks no statistics to
    order them; heavy combined keys are cut into sub-blocks; the counts are the
    local engine's, NULLs in any key column included.  ``explain`` still asks
    them and shows the local plan."""
    table = _mixed_table()
    dcs = ["not(t.f = t'.f and t.a = t'.a and t.v < t'.v)",
           "not(t.a = t'.b and t.s = t'.s and t.v > t'.v)",
           "not(t.x = t'.c and t.f = t'.f and t.v != t'.v)",
           "not(t.s = t'.s and t.f = t'.f and t.dec = t'.dec and t.v <= t'.v)",
           "not(t.f = t'.f and t.fl = t'.fl and t.v < t'.v)"]  # fmt: skip
    # (as normalized: a same-column equality before a cross-column one)
    keys = [[("f", "f"), ("a", "a")], [("s", "s"), ("a", "b")], [("f", "f"), ("x", "c")],
            [("s", "s"), ("f", "f"), ("dec", "dec")], [("f", "f"), ("fl", "fl")]]  # fmt: skip
    csv = tmp_path / "t.csv"
    pa.csv.write_csv(table, csv)
    for data in (table, csv):
        local = facet.detect(data, dcs=dcs)
        # a task's share: max(3,000 rows / 16 tasks, 200): the last DC's 8 keys are heavy
        config = Config(spark_split_rows=200, spark_tasks=16)
        opened = open_session(data, dcs=dcs, engine="spark", config=config)
        session, engine = opened.session, opened.session.engine
        for i in range(len(dcs)):
            assert session.count(i) == (local.dcs[i].violations, local.dcs[i].rows_involved)
        assert engine._stats is None  # no statistics job
        assert [w["keys"] for w in engine.work] == keys
        assert [w["key"] for w in engine.work] == [k[0] for k in keys]
        assert engine.work[-1]["tasks"] > 16  # heavy keys in sub-blocks
        if data is table:
            assert engine._native_composite(keys[0]) is not None
            assert engine._native_composite(keys[2]) is None  # x = c: the tasks' keys
        # a run through the API (sequential and parallel) is the same
        for mode in ("sequential", "parallel"):
            got = facet.detect(data, dcs=dcs, engine="spark", config=config, mode=mode)
            assert [(d.violations, d.rows_involved) for d in got.dcs] == [
                (d.violations, d.rows_involved) for d in local.dcs
            ]
    assert _plan_only(facet.explain(table, dcs=dcs, engine="spark")) == _plan_only(
        facet.explain(table, dcs=dcs)
    )


def test_combined_keys_are_equal_for_equal_parts_and_null_with_any():
    from facet.engine.spark.tasks import combined_keys

    rng = np.random.default_rng(5)
    h1, h2 = rng.integers(-(2**62), 2**62, (2, 1_000))
    v1, v2 = rng.random((2, 1_000)) < 0.9
    k, valid = combined_keys([(h1, v1), (h2, v2)])
    assert np.array_equal(valid, v1 & v2)
    again, _ = combined_keys([(h1.copy(), v1), (h2.copy(), v2)])
    assert np.array_equal(k, again)
    # the parts' order and values matter: swapped or changed parts give other keys
    assert np.count_nonzero(combined_keys([(h2, v2), (h1, v1)])[0] == k) < 5
    assert np.count_nonzero(combined_keys([(h1, v1), (h2 + 1, v2)])[0] == k) < 5
    assert len(np.unique(k)) == 1_000
    one = combined_keys([(h1, v1)])
    assert one[0] is h1 and one[1] is v1


def test_keys_and_fds_are_counted_by_spark_aggregates(spark, tmp_path):
    """Key- and FD-shaped DCs whose columns Spark compares as facet does are
    counted by Spark's aggregates (no task) and equal the local engine; the
    others go to the tasks."""
    table = _mixed_table()
    rules = ["not(t.s = t'.s)", "not(t.a = t'.a and t.s != t'.s)",
             "not(t.s = t'.s and t.fl != t'.fl)", "not(t.dec = t'.dec and t.ts = t'.ts)",
             "not(t.f = t'.f and t.b != t'.b)", "not(t.fl = t'.fl and t.dec != t'.dec)",
             "not(t.x = t'.x and t.v != t'.v)", "not(t.v < t'.v and t.a > t'.a)",
             "not(t.a = t'.b and t.s != t'.s)", "not(t.v = t'.v and t.g != t'.g)"]  # fmt: skip
    csv = tmp_path / "t.csv"
    pa.csv.write_csv(table, csv)
    for data in (table, csv):
        opened = open_session(data, dcs=rules, engine="spark")
        engine = opened.session.engine
        local = facet.detect(data, dcs=rules)
        for i in range(len(rules)):
            got = opened.session.count(i)
            assert got == (local.dcs[i].violations, local.dcs[i].rows_involved), rules[i]
        counted = {w["dc"] for w in engine.work if w.get("aggregates")}
        want = {
            i for i, dc in enumerate(opened.session.normal)
            if key_shape(dc) is not None
            and all(engine.native_values(c) is not None for p in dc.preds for c in (p.a, p.b))
        }  # fmt: skip
        # the CSV's a (and b, compared with a), v: numbers facet parses (the eighth DC)
        assert counted == want == ({0, 1, 2, 3, 4, 5, 6, 9} if data is table else {0, 2, 3, 5})
    off = open_session(table, dcs=rules, engine="spark",
                       config=Config(spark_key_aggregates=False))  # fmt: skip
    assert [off.session.count(i) for i in range(len(rules))] == [
        (d.violations, d.rows_involved) for d in facet.detect(table, dcs=rules).dcs
    ]
    assert not any(w.get("aggregates") for w in off.session.engine.work)
    # a key's tasks get the rows by the key (the count sink's equality), not all rows
    assert {w["dc"] for w in off.session.engine.work if w.get("key") is not None} >= {0, 3}


OPS = ["<", "<=", ">", ">=", "=", "!="]
_HOLDS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
          "=": np.equal, "!=": np.not_equal}  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    a=st.lists(st.integers(-5, 5), max_size=30),
    b=st.lists(st.integers(-5, 5), max_size=30),
    op=st.sampled_from(OPS),
)
def test_pairs_satisfying_and_has_partner_equal_their_naive_twins(a, b, op):
    """The range summaries' arithmetic: pairs ``x op y`` from value counts, and
    whether a value has a partner, against all pairs."""
    from facet.engine.spark.tasks import has_partner, pairs_satisfying

    x, y = np.asarray(a, np.int64), np.asarray(b, np.int64)
    va, ca = np.unique(x, return_counts=True)
    vb, cb = np.unique(y, return_counts=True)
    want = int(_HOLDS[op](x[:, None], y[None, :]).sum()) if x.size and y.size else 0
    assert pairs_satisfying(va, ca, op, vb, cb) == want
    partner = _HOLDS[op](x[:, None], vb[None, :]).any(axis=1) if vb.size else x < x
    assert np.array_equal(has_partner(x, op, vb), partner)


def test_summary_mode_is_exact_or_none():
    from facet.engine.spark.tasks import exact_numbers, summary_mode

    assert summary_mode([pa.int32(), pa.int64()]) == "int"
    assert summary_mode([pa.bool_(), pa.int8()]) == "int"
    assert summary_mode([pa.timestamp("us"), pa.timestamp("us")]) == "int"
    assert summary_mode([pa.timestamp("us"), pa.timestamp("ns")]) is None
    assert summary_mode([pa.timestamp("us"), pa.int64()]) is None
    assert summary_mode([pa.float32(), pa.float64()]) == "float"
    assert summary_mode([pa.decimal128(15, 2)] * 2) == "int"  # unscaled, one scale
    for bad in ([pa.uint64(), pa.int64()], [pa.int64(), pa.float64()],
                [pa.decimal128(15, 2), pa.decimal128(15, 3)], [pa.decimal128(20, 2)] * 2,
                [pa.decimal256(10, 2)] * 2, [pa.string()] * 2):  # fmt: skip
        assert summary_mode(bad) is None
    dec = pa.array([Decimal("1.25"), None, Decimal("-3.50"), Decimal("9999999999999.99")],
                   pa.decimal128(15, 2))  # fmt: skip
    x, ok = exact_numbers(dec.slice(1), "int")
    assert list(x[ok]) == [-350, 999999999999999] and list(ok) == [False, True, True]
    x, ok = exact_numbers(pa.array([2**62 + 1, None, -3], pa.int64()), "int")
    assert x[0] == 2**62 + 1 and list(ok) == [True, False, True]
    f, ok = exact_numbers(pa.array([-0.0, float("nan"), None, 1.5]), "float")
    assert str(f[0]) == "0.0" and list(ok) == [True, False, False, True]


@PROPERTY
@given(data=st.data())
def test_range_pairs_counted_from_summaries_equal_naive(spark, data):
    """DCs without an equality whose range pairs are counted from value counts
    (two predicates, the first over one column): counts and rows involved as
    naive.py finds them, with NULL, NaN, -0.0, ties and tiny ranges."""
    n = data.draw(st.integers(0, 70))
    ints = st.one_of(st.none(), st.integers(-4, 4))
    floats = st.one_of(st.none(), st.sampled_from([-1.5, -0.0, 0.0, 0.5, 2.0, float("nan")]))
    table = pa.table({
        "a": pa.array(data.draw(st.lists(st.one_of(ints, st.integers(-50, 50)), min_size=n,
                                         max_size=n)), pa.int64()),
        "b": pa.array(data.draw(st.lists(ints, min_size=n, max_size=n)), pa.int64()),
        "d": pa.array(data.draw(st.lists(ints, min_size=n, max_size=n)), pa.int32()),
        "c": pa.array(data.draw(st.lists(floats, min_size=n, max_size=n)), pa.float64()),
        "e": pa.array([None if v is None else Decimal(v) / 4 for v in
                       data.draw(st.lists(ints, min_size=n, max_size=n))], pa.decimal128(9, 2)),
    })  # fmt: skip
    op1 = data.draw(st.sampled_from(OPS[:4]))
    op2 = data.draw(st.sampled_from(OPS))
    x, y = data.draw(st.sampled_from([("b", "b"), ("b", "d"), ("c", "c"), ("e", "e")]))
    dc = f"not(t.a {op1} t'.a and t.{x} {op2} t'.{y})"
    # few summary values: the ranges' min/max by their own job, and no summary
    config = Config(spark_split_rows=1, spark_tasks=data.draw(st.integers(1, 4)),
                    spark_task_rows=data.draw(st.integers(1, 9)),
                    spark_summary_values=data.draw(st.sampled_from([2, 100_000])))  # fmt: skip
    dc_ast = load_dcs(dcs=[dc])[0]
    pairs = naive_pairs(table, dc_ast)
    rows = {t for p in pairs for t in p}
    opened = open_session(table, dcs=[dc], engine="spark", config=config)
    assert opened.session.count(0) == (len(pairs), len(rows)), dc


def test_a_count_releases_the_frames_it_persisted(spark, tmp_path, monkeypatch):
    """A Python pass read by several jobs is persisted once, and unpersisted when
    the count is done (keys and order keys that facet types: CSV numbers)."""
    from facet.engine.spark import engine as spark_engine

    released: list = []
    original = spark_engine.Spread.release

    def release(self):
        released.extend(self.persisted)
        original(self)

    monkeypatch.setattr(spark_engine.Spread, "release", release)
    rng = np.random.default_rng(2)
    csv = tmp_path / "t.csv"
    pa.csv.write_csv(pa.table({"v": rng.integers(0, 30, 400), "x": rng.integers(0, 9, 400)}), csv)
    dcs = ["not(t.v = t'.v and t.x < t'.x)", "not(t.x > t'.x and t.v < t'.v and t.v != t'.v)"]
    config = Config(spark_split_rows=20, spark_tasks=3, spark_task_rows=50)
    opened = open_session(csv, dcs=dcs, engine="spark", config=config)
    local = facet.detect(csv, dcs=dcs)
    for i in range(2):
        assert opened.session.count(i) == (local.dcs[i].violations, local.dcs[i].rows_involved)
    assert len(released) == 2 and not any(frame.is_cached for frame in released)


def test_progress_reports_the_engine_steps(spark):
    events = []
    facet.detect(TAX, dcs=OUT_RULES[:2], engine="spark", progress=events.append)
    phases = [e.phase for e in events]
    assert phases[0] == "load" and phases[-1] == "count"
    steps = [(e.dc, e.step) for e in events if e.step is not None]
    assert (0, "spreading rows") in steps and any(s.endswith(" tasks") for _, s in steps)
    assert all(e.phase == "count" for e in events if e.step is not None)


# ------------------------------------------------------------------ own processes


def _run_python(code: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT,
    )  # fmt: skip


def test_cli_engine_spark_gives_the_local_counts():
    rules = ROOT / "data" / "tax" / "dc_rules.txt"
    cmd = [sys.executable, "-m", "facet", "detect", str(TAX), "--rules", str(rules),
           "--format", "json", "--exit-zero"]  # fmt: skip
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    local = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    proc = subprocess.run(
        [*cmd, "--engine", "spark", "--master", "local[2]"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    dist = json.loads(proc.stdout)
    assert dist["engine"] == "spark"
    assert [(d["violations"], d["rows_involved"]) for d in dist["dcs"]] == [
        (d["violations"], d["rows_involved"]) for d in local["dcs"]
    ]
    assert "Traceback" not in proc.stderr


def test_cli_bad_input_on_spark_is_one_line(tmp_path):
    """...and the JVM's log (its start-up chatter, in the temporary folder) is removed
    when the process exits: every run left one behind."""
    proc = subprocess.run(
        [sys.executable, "-m", "facet", "detect", str(TAX), "--dc", "not(t.nope = t'.zip)",
         "--engine", "spark", "--master", "local[1]"],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYSPARK_PYTHON=sys.executable, TMPDIR=str(tmp_path)),
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.startswith("facet: error: ") and "unknown column 'nope'" in proc.stderr
    assert "Traceback" not in proc.stderr and "at org.apache" not in proc.stderr
    assert not list(tmp_path.glob("facet-spark-*.log"))


def test_a_jvm_that_cannot_start_is_one_line_and_its_log_is_kept(tmp_path):
    """The log a message names outlives the process (the others are removed)."""
    proc = subprocess.run(
        [sys.executable, "-m", "facet", "detect", str(TAX), "--dc", "zip -> city",
         "--engine", "spark", "--master", "local[1]"],
        capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYSPARK_PYTHON=sys.executable, TMPDIR=str(tmp_path),
                 JAVA_HOME=str(tmp_path / "no-java")),
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith("facet: error: --master local[1]: cannot start Spark (")
    assert proc.stderr.count("\n") == 1 and "Java 17 or 21" in proc.stderr
    (log,) = tmp_path.glob("facet-spark-*.log")
    assert proc.stderr.rstrip().endswith(f"its log: {log}")


CHECK = """
    import sys, json, facet
    from pyspark.sql import SparkSession
    from facet.planner.config import Config
    builder = SparkSession.builder
    spark = (builder.remote(sys.argv[1]) if sys.argv[2] == "connect"
             else builder.master(sys.argv[1]).config("spark.ui.enabled", "false")).getOrCreate()
    tax = sys.argv[3]
    frame = spark.read.option("header", True).csv(tax)
    dcs = ["zip -> city", "not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)",
           "not(t.salary > t'.salary and t.rate < t'.rate)"]
    local = facet.detect(tax, dcs=dcs, schema="salary:int,rate:float")
    dist = facet.detect(frame, dcs=dcs, schema="salary:int,rate:float",
                        config=Config(spark_split_rows=3000))
    same = ([[d.violations, d.rows_involved] for d in dist.dcs] ==
            [[d.violations, d.rows_involved] for d in local.dcs])
    # typed columns as Spark reads them from Parquet itself (uint64 as decimal(20, 0),
    # uint8 as short, date64 as date, dictionaries as strings), on this session
    import os, tempfile
    import pyarrow.parquet as pq
    from tests.test_spark import _typed_corner_table
    folder = tempfile.TemporaryDirectory()  # (removed at exit)
    path = os.path.join(folder.name, "typed.parquet")
    pq.write_table(_typed_corner_table().drop_columns(["f16", "ts_ns", "d256"]), path)
    typed = ["not(t.u8 = t'.u8 and t.u64 < t'.u64)", "not(t.u64 = t'.i64 and t.ls != t'.ls)",
             "not(t.d64 <= t'.d64 and t.dict = t'.dict and t.u8 != t'.u8)",
             "not(t.ts_s < t'.ts_s and t.fb = t'.fb)"]
    local = facet.detect(path, dcs=typed)
    dist = facet.detect(spark.read.parquet(path), dcs=typed)
    same &= ([[d.violations, d.rows_involved] for d in dist.dcs] ==
             [[d.violations, d.rows_involved] for d in local.dcs])
    # a timeout cancels the run's jobs by its tag, then takes the tag off the session
    from facet.progress import DeadlineExceeded
    try:
        facet.detect(frame, dcs=dcs, schema="salary:int,rate:float", timeout=0.5)
    except DeadlineExceeded:
        tags = spark.getTags() if sys.argv[2] == "connect" else spark.sparkContext.getJobTags()
        same &= not set(tags)
    else:
        same = False
    print(json.dumps(same))
    spark.stop()
"""


@pytest.mark.parametrize(
    ("master", "kind"), [("local[2]", "connect"), ("local-cluster[2,1,1024]", "classic")]
)
def test_spark_connect_and_two_executor_jvms(master, kind):
    proc = _run_python(CHECK, master, kind, str(TAX))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "true"


FAIL_ONCE = """
    import os, sys, json, facet
    import facet.engine.spark.tasks
    from facet.engine.spark.engine import SparkEngine
    from facet.engine.spark.connect import spark_session
    marker = sys.argv[1]

    def fail_once(inner):
        def run(table):
            if not os.path.exists(marker):
                open(marker, "w").close()
                raise RuntimeError("injected task failure")
            return inner(table)
        return run

    SparkEngine.task_function = lambda self, job: fail_once(facet.engine.spark.tasks.pair_task(self.spec, job))
    spark = spark_session("local[2,3]")  # 3 attempts per task
    dc = ["not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)"]
    local = facet.detect(sys.argv[2], dcs=dc).dcs[0]
    dist = facet.detect(sys.argv[2], dcs=dc, engine="spark").dcs[0]
    print(json.dumps([os.path.exists(marker), dist.violations == local.violations,
                      dist.rows_involved == local.rows_involved]))
"""


def test_a_task_that_fails_once_is_retried_and_the_count_stays_exact(tmp_path):
    proc = _run_python(FAIL_ONCE, str(tmp_path / "failed"), str(TAX))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [True, True, True]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)
@given(data=st.data())
def test_random_typed_tables_give_the_local_answer_or_one_clear_refusal(spark, data):
    """Typed Arrow input of every width, unit, zone and decimal (tests/arrow_strategies.py:
    uint64 past int64, decimal256, nanosecond and zoned timestamps, float16/32, text
    and binary storages, null-type columns) on the Spark engine: exactly the local
    engine's violations, pairs and rows involved -- or a FacetInputError of one line
    naming the column and what to do, never another error."""
    table, families = data.draw(typed_tables())
    dc = data.draw(typed_dcs(families))
    note(f"schema: {table.schema}")
    note(f"DC: {dc.canonical()}")
    local = facet.detect(table, dcs=[dc], output="pairs")
    config = Config(spark_split_rows=data.draw(st.integers(1, 8)))
    try:
        res = facet.detect(table, dcs=[dc], engine="spark", output="pairs", config=config)
    except facet.FacetInputError as err:
        text = str(err)
        assert "\n" not in text and any(c in text for c in table.column_names), text
        return
    assert res.dcs[0].violations == local.dcs[0].violations
    assert res.dcs[0].rows_involved == local.dcs[0].rows_involved
    assert facet_pairs(res, dc.arity) == facet_pairs(local, dc.arity)


def _typed_corner_table() -> pa.Table:
    """Columns whose types Spark lacks, with values that tell an inexact carrier apart:
    ties only at full precision, neighbours of 2^53 and of int64's end."""
    big = [2**63 - 2, 2**63 - 1, 2**53, 2**53 + 1, 0, None, 2**63 - 1, 2**53 + 1]
    ns = [1_000, 2_000, 1_000, 3_000, None, 2_000, 5_000, 1_000]
    return pa.table({
        "u8": pa.array([1, 255, 3, 255, 0, None, 3, 1], pa.uint8()),
        "u64": pa.array(big, pa.uint64()),
        "i64": pa.array(big, pa.int64()),
        "f16": pa.array(np.array([0.5, 1.5, 0.5, 2.0, 1.5, 0.5, 2.0, 1.0], np.float16)),
        "d256": pa.array([Decimal(v) / 100 if v is not None else None for v in big],
                         pa.decimal256(40, 2)),
        "ts_ns": pa.array(ns, pa.timestamp("ns", tz="+05:30")),
        "ts_s": pa.array([1, 2, 1, 3, None, 2, 5, 1], pa.timestamp("s", tz="UTC")),
        "d64": pa.array([86_400_000 * k for k in (1, 2, 1, 3, 4, 2, 5, 1)], pa.date64()),
        "ls": pa.array(["a", "b", "a", "", None, "b", "é", "a"], pa.large_string()),
        "fb": pa.array([b"ab", b"cd", b"ab", b"ef", None, b"cd", b"gh", b"ab"], pa.binary(2)),
        "dict": pa.array(["x", "y", "x", "z", None, "y", "z", "x"]).dictionary_encode(),
    })  # fmt: skip


_TYPED_CORNER_DCS = [
    "not(t.u8 = t'.u8 and t.u64 < t'.u64)",
    "not(t.u64 = t'.i64 and t.f16 != t'.f16)",
    "not(t.d256 < t'.d256 and t.u8 > t'.u8)",
    "not(t.d256 = t'.d256 and t.ls != t'.ls)",
    "not(t.ts_ns < t'.ts_s and t.fb = t'.fb)",
    "not(t.d64 <= t'.d64 and t.dict = t'.dict and t.u8 != t'.u8)",
    "not(t.ts_ns > '1970-01-01T05:30:00.000002+05:30')",
]


def _same_as_local(data, text: str) -> None:
    """One DC on Spark: the local engine's count, rows involved and pairs."""
    local = facet.detect(data, dcs=[text], output="pairs")
    got = facet.detect(data, dcs=[text], engine="spark", output="pairs")
    assert got.dcs[0].violations == local.dcs[0].violations, text
    assert got.dcs[0].rows_involved == local.dcs[0].rows_involved, text
    assert _pairs(got.pairs(), 0) == _pairs(local.pairs(), 0), text


def test_typed_columns_spark_lacks_are_carried_exactly_or_refused(spark, tmp_path):
    """uint8-uint64, float16, decimal256, ns and second timestamps with zones, date64,
    large strings, fixed-size binary and dictionaries: the local answer on Spark, in
    memory; values no Spark type holds exactly (uint64 past int64, sub-microsecond
    times) are refused in one line naming the column."""
    table = _typed_corner_table()
    for text in _TYPED_CORNER_DCS:
        _same_as_local(table, text)
    # an unused column of a type Spark lacks does not matter
    wide = table.append_column("huge", pa.array([2**64 - 1] * 8, pa.uint64()))
    assert facet.detect(wide, dcs=[_TYPED_CORNER_DCS[0]], engine="spark").dcs[0].violations == (
        facet.detect(table, dcs=[_TYPED_CORNER_DCS[0]]).dcs[0].violations
    )
    with pytest.raises(facet.FacetInputError, match=r"column 'huge' is uint64 .* local engine"):
        facet.detect(wide, dcs=["not(t.huge = t'.huge)"], engine="spark")
    clock = table.append_column("tm", pa.array(range(8), pa.time64("us")))
    with pytest.raises(facet.FacetInputError, match=r"column 'tm' is time64\[us\] .* local engine"):
        facet.detect(clock, dcs=["not(t.tm = t'.tm)"], engine="spark")
    fine = table.set_column(5, "ts_ns", pa.array([1] + [None] * 7, pa.timestamp("ns")))
    with pytest.raises(facet.FacetInputError, match=r"column 'ts_ns' .* exactly"):
        facet.detect(fine, dcs=["not(t.ts_ns = t'.ts_ns)"], engine="spark")


def test_parquet_columns_spark_reads_exactly_or_refuses_in_one_line(spark, tmp_path):
    """A Parquet path is read by Spark's executors: of the used columns only (an
    unused float16 column is no obstacle), uint64 past int64 included (Spark's
    decimal(20, 0)), each giving the local answer; float16, nanosecond times and
    decimal256 are refused naming the column, by the API and by the CLI (exit 2)."""
    table = (
        _typed_corner_table()
        .append_column(
            "huge", pa.array([2**64 - 1, 2**63, 2**64 - 1, 1, None, 2**63, 0, 1], pa.uint64())
        )
        .append_column("dur", pa.array(range(8), pa.duration("s")))
        .append_column("tod", pa.array(range(8), pa.time32("s")))
    )
    path = tmp_path / "typed.parquet"
    pq.write_table(table, path)
    ok = [
        "not(t.u8 = t'.u8 and t.u64 < t'.u64)",
        "not(t.huge = t'.huge and t.u8 != t'.u8)",
        "not(t.huge < t'.i64 and t.ls = t'.ls)",
        "not(t.d64 <= t'.d64 and t.dict = t'.dict and t.u8 != t'.u8)",
        "not(t.ts_s > '1970-01-01T00:00:02Z' and t.fb = t'.fb)",
    ]
    for text in ok:
        _same_as_local(path, text)
    # Spark's own Parquet: timestamps as INT96 (Arrow reads nanoseconds; Spark reads them)
    import datetime

    when = [datetime.datetime(2024, 1, 1, 0, 0, s, 123456) for s in (1, 2, 1, 3, 2, 5)]
    spark.createDataFrame(
        list(zip(range(6), when, [1, 2, 3, 1, 2, 3], strict=True)), "k long, ts timestamp, g int"
    ).coalesce(1).write.parquet(str(tmp_path / "by_spark"))
    (part,) = (tmp_path / "by_spark").glob("*.parquet")  # the local engine reads files
    assert _int96_columns([str(part)]) == {"ts"}
    for text in ("not(t.ts < t'.ts and t.g > t'.g)", "not(t.ts = t'.ts and t.k != t'.k)"):
        _same_as_local(part, text)
    for col, why in [("f16", "float32"), ("ts_ns", "microseconds"), ("d256", "Spark reads"),
                     ("dur", "Spark reads"), ("tod", "Spark reads")]:  # fmt: skip
        with pytest.raises(facet.FacetInputError, match=rf"column '{col}' .*{why}"):
            facet.detect(path, dcs=[f"not(t.{col} = t'.{col})"], engine="spark")
    p = subprocess.run(
        [sys.executable, "-m", "facet", "detect", str(path), "--dc", "not(t.f16 < t'.f16)",
         "--engine", "spark", "--master", "local[1]"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines()[-1].startswith(f"facet: error: {path}: column 'f16'")
    assert "Traceback" not in p.stderr


def _pair_set(result) -> set:
    t = result.pairs()
    cols = [t.column(c).to_pylist() for c in ("dc", "t1", "t2")]
    return set(zip(*cols, strict=True)) if len({*cols[0]}) > 1 else set(zip(*cols[1:], strict=True))


def test_paths_are_read_literally_and_headers_keep_their_case(spark, tmp_path):
    """A probe's findings: Spark expanded ``[1]`` in a path (``data[1].csv`` read
    ``data1.csv`` beside it) and renamed a header ``A,a`` to ``A0,a1``; both now
    read as the local engine reads them."""
    (tmp_path / "data[1].csv").write_text("k,v\n1,a\n1,b\n")
    (tmp_path / "data1.csv").write_text("k,v\n1,a\n1,a\n1,a\n")
    (tmp_path / "case.csv").write_text("A,a\n1,1\n1,2\n2,2\n")
    for name, dc in (("data[1].csv", "k -> v"), ("case.csv", "not(t.A = t'.A and t.a != t'.a)")):
        path = str(tmp_path / name)
        local = facet.detect(path, dcs=[dc], output="pairs")
        dist = facet.detect(path, dcs=[dc], engine="spark", output="pairs")
        assert (
            (dist.rows, dist.dcs[0].violations)
            == (local.rows, local.dcs[0].violations)
            == ((2, 2) if name.startswith("data") else (3, 2))
        )
        assert _pair_set(dist) == _pair_set(local)


def test_a_folder_of_files_numbers_rows_by_sorted_path_then_row(spark, tmp_path):
    """DESIGN §3: tids follow sorted file path, then row -- Spark packs a folder's
    files into partitions by size, so its partition order is not the path order
    (a probe found the largest file's rows first)."""
    folder = tmp_path / "parts"
    folder.mkdir()
    sizes = {"part-0.parquet": 2, "part-1.parquet": 43, "part-2.parquet": 3}
    rows = []
    for i, (name, n) in enumerate(sorted(sizes.items())):
        keys = [i % 2] * n
        vals = [f"{name}-{j}-" + "x" * (200 if n > 40 else 1) for j in range(n)]
        pq.write_table(pa.table({"k": keys, "v": vals}), folder / name)
        rows += list(zip(keys, vals, strict=True))
    dc = "not(t.k = t'.k and t.v < t'.v)"
    want = {(i, j) for i, a in enumerate(rows) for j, b in enumerate(rows)
            if i != j and a[0] == b[0] and a[1] < b[1]}  # fmt: skip
    dist = facet.detect(str(folder), dcs=[dc], engine="spark", output="pairs")
    assert dist.rows == len(rows) and _pair_set(dist) == want


#: CSV files Spark's own reader reads differently from facet's loader (a
#: probe's findings), and files every reader must get right
_CSV_CASES = {
    "empty-lines.csv": b"a\nx\n\nx\n\ny\n",  # one column: an empty line is a NULL row
    "empty-line-2.csv": b"a,b\n1,2\n\n3,4\n",  # several: refused, naming line 3
    "quoted-crlf.csv": b'a,b\n1,"x\r\ny"\n1,"x\ny"\n',  # \r\n and \n differ
    "bad-utf8.csv": b"a,b\n1,\xff\n1,z\n",  # refused in a used column
    "bad-utf8-unused.csv": b"a,c,b\n1,\xff,z\n1,y,z\n",  # fine in an unused one
    "after-quote.csv": b'a,b\n1,"ab"c\n1,abc\n',  # "ab"c reads as abc
    "short.csv": b"a,b\n1,x\n2\n3,c\n",
    "empty.csv": b"",
    "header-only.csv": b"a,b\n",
    "bom.csv": b"\xef\xbb\xbfa,b\n1,x\n1,y\n",
    "quoted-header.csv": b'"a\nz",a,b\n1,1,x\n2,1,y\n',
    "repeated-unused.csv": b"a,c,c,,b\n1,2,3,4,x\n1,2,3,4,y\n",
    "tabs.tsv": b'a\tb\n1\t"x\ty"\n1\tz\n',
    "no-extension": b"a,b\n1,x\n1,y\n",
}


@pytest.mark.parametrize("name", sorted(_CSV_CASES) + ["packed.csv.gz", "packed.csv.xz"])
def test_csv_reads_as_the_local_loader_reads_it(spark, tmp_path, name):
    """A local CSV file is read by facet's loader in an executor, so Spark's
    answer -- rows, tids, pairs, or the one-line error -- is the local one
    (Spark's reader skipped empty lines, turned a quoted \\r\\n into \\n and bad
    bytes into U+FFFD, and its refusals were its own; a probe's findings)."""
    import gzip
    import lzma

    from facet.errors import FacetInputError

    path = tmp_path / name
    pack = {".gz": gzip.compress, ".xz": lzma.compress}.get(path.suffix, lambda b: b)
    path.write_bytes(pack(_CSV_CASES.get(name, b"a,b\n1,x\n1,y\n2,\n")))
    dcs = ["not(t.a = t'.a and t.b != t'.b)", "not(t.a = t'.a)"]
    if name == "empty-lines.csv":
        dcs = ["not(t.a = t'.a)", "not(t.a = t.a)"]
    outcomes = []
    for engine in ("local", "spark"):
        try:
            got = facet.detect(str(path), dcs=dcs, engine=engine, output="pairs")
        except FacetInputError as err:
            outcomes.append(("error", str(err)))
        else:
            outcomes.append((got.rows, [d.violations for d in got.dcs], _pair_set(got)))
    assert outcomes[1] == outcomes[0]
    errors = {"empty-line-2.csv", "bad-utf8.csv", "short.csv", "empty.csv"}
    assert (outcomes[0][0] == "error") == (name in errors), outcomes[0]
    if name == "empty-lines.csv":
        assert outcomes[0][:2] == (5, [2, 3])


def test_an_ordered_csv_column_without_values_types_as_locally(spark, tmp_path):
    """An ordered CSV component without a value takes its declared column's kind,
    else its constants' (docs/semantics.md §4.3; a date constant or a declared
    timestamp column clashed with the int64 it took): Spark decides it as the local
    engine does, from the merged counts."""
    cases = [
        ("d,k\n", ["not(t.d > '2024-01-01')", "not(t.d < t'.d and t.k = t'.k)"], None),
        ("d,k\n,x\n,y\n", ["not(t.d >= '2024-01-01T10:00')"], None),
        ("a,b\n,2024-01-01\n,2024-01-02\n", ["not(t.a < t'.b)", "not(t.b < t'.b)"], "b:timestamp"),
    ]
    for i, (text, rules, schema) in enumerate(cases):
        path = tmp_path / f"e{i}.csv"
        path.write_text(text)
        local = facet.detect(str(path), dcs=rules, schema=schema, output="pairs")
        dist = facet.detect(str(path), dcs=rules, schema=schema, engine="spark", output="pairs")
        got = [[d.violations for d in r.dcs] for r in (local, dist)]
        assert got[0] == got[1] and _pair_set(local) == _pair_set(dist), text
        assert got[0][-1] == (1 if schema else 0), text


@pytest.mark.parametrize("name", ["t.arrow", "t.feather", "t.parq", "t-no-extension"])
def test_files_facet_loads_for_spark_count_as_locally(spark, tmp_path, name):
    """An Arrow IPC file (or a Parquet file by a name Spark's reader does not
    take) is loaded by facet and handed to Spark: its tids were looked up in
    Spark's file metadata, which such a frame has not (an AnalysisException,
    exit 3; a probe's finding)."""
    import pyarrow.feather as feather

    table = pa.table({"k": [1, 1, 2, 2, 2], "v": ["a", "b", "a", "a", "c"]})
    path = tmp_path / name
    if "arrow" in name or "feather" in name:
        feather.write_feather(table, path)
    else:
        pq.write_table(table, path)
    local = facet.detect(str(path), dcs=["k -> v"], output="pairs")
    dist = facet.detect(str(path), dcs=["k -> v"], engine="spark", output="pairs")
    assert dist.dcs[0].violations == local.dcs[0].violations == 6
    assert _pair_set(dist) == _pair_set(local)


def test_bad_input_found_in_a_task_is_one_line_and_case_twins_are_refused(spark, tmp_path):
    """A typing error found inside a task (a text constant meeting a numeric
    column) came back as Spark's PythonException (exit 3); columns differing
    only in case on a session that reads names without case were Spark's
    ambiguity error (probe findings): both are facet's one-line errors now."""
    from facet.errors import FacetInputError

    path = tmp_path / "a.csv"
    path.write_text("n,s\n1,a\n2,b\n")
    dcs = ["not(t.n < t'.n)", "not(t.n = 'abc')"]
    with pytest.raises(FacetInputError) as local:
        facet.detect(str(path), dcs=dcs)
    with pytest.raises(FacetInputError) as dist:
        facet.detect(str(path), dcs=dcs, engine="spark")
    assert str(dist.value) == str(local.value)
    assert str(dist.value).startswith('--dc:2: constant "abc" is compared with numeric column')
    frame = spark.createDataFrame([(1, 1), (1, 2)], "A long, a long")
    spark.conf.set("spark.sql.caseSensitive", "false")
    try:
        with pytest.raises(FacetInputError, match="columns 'A' and 'a' differ only in case"):
            facet.detect(frame, dcs=["not(t.A = t'.A)"])
    finally:
        spark.conf.set("spark.sql.caseSensitive", "true")
    assert facet.detect(frame, dcs=["not(t.A = t'.A and t.a < t'.a)"]).dcs[0].violations == 1


def test_column_names_with_dots_and_backticks_give_the_local_answer_on_spark(spark, tmp_path):
    """pyspark's mapInArrow and applyInArrow name each column unquoted (``df[name]``):
    a name holding a backtick was Spark's INVALID_ATTRIBUTE_NAME_SYNTAX and one with a
    dot UNRESOLVED_COLUMN (exit 3), depending on the DC's shape, then a refusal. The
    frame now holds the used columns under plain names, mapped back in the tasks: every
    shape (keys, FDs, ranges, typed and CSV-typed columns, constants, single-tuple DCs)
    gives the local answer from CSV, Parquet, memory and a DataFrame, and a message
    still names the user's column."""
    from facet.errors import FacetInputError

    rng = np.random.default_rng(5)
    n = 300
    table = pa.table({
        "a.b": rng.integers(0, 6, n), "x`y": rng.integers(0, 40, n).astype(float),
        "p.q": [f"s{v}" for v in rng.integers(0, 5, n)], "k": rng.integers(0, 50, n),
    })  # fmt: skip
    csv = tmp_path / "d.csv"
    pyarrow.csv.write_csv(table, csv)
    parquet = tmp_path / "d.parquet"
    pq.write_table(table, parquet)
    dcs = [
        "not(t.`a.b` = t'.`a.b` and t.`x``y` > t'.`x``y` and t.k < t'.k)",
        "not(t.`x``y` < t'.`x``y` and t.k > t'.k)",
        "`a.b` -> `p.q`",
        "not(t.`p.q` = t'.`p.q` and t.`a.b` != t'.`a.b`)",
        "not(t.`a.b` = t'.k and t.`x``y` >= 20)",
        "not(t.`x``y` > 35 and t.`a.b` < 1)",
    ]
    config = Config(spark_split_rows=40, spark_tasks=3, spark_task_rows=120)
    frame = spark.createDataFrame(table.to_pandas())
    for data in (str(csv), str(parquet), table, frame):
        local = facet.detect(table if data is frame else data, dcs=dcs, output="pairs")
        dist = facet.detect(data, dcs=dcs, engine="spark", output="pairs", config=config)
        assert [d.violations for d in dist.dcs] == [d.violations for d in local.dcs], data
        assert [d.rows_involved for d in dist.dcs] == [d.rows_involved for d in local.dcs]
        assert _pair_set(dist) == _pair_set(local), data
        assert all(d.violations > 0 for d in local.dcs)
    with pytest.raises(FacetInputError) as local:
        facet.detect(str(parquet), dcs=["not(t.`a.b` < t'.`p.q`)"])
    with pytest.raises(FacetInputError) as dist:
        facet.detect(str(parquet), dcs=["not(t.`a.b` < t'.`p.q`)"], engine="spark")
    assert str(dist.value) == str(local.value) and "'a.b'" in str(local.value)


def test_a_repeated_header_name_is_the_local_error_on_spark(spark, tmp_path):
    """The same one line as locally (Spark's lacked how to fix it; a probe's F4)."""
    from facet.errors import DataError

    path = tmp_path / "d.csv"
    path.write_text("a,a,b\n1,2,3\n1,3,3\n")
    with pytest.raises(DataError) as local:
        facet.detect(str(path), dcs=["not(t.a = t'.a)"])
    with pytest.raises(DataError) as dist:
        facet.detect(str(path), dcs=["not(t.a = t'.a)"], engine="spark")
    assert str(dist.value) == str(local.value)
    assert str(local.value).endswith("give every column a distinct name")


def test_typed_corners_answer_or_fail_as_locally(spark, tmp_path):
    """Probe findings on Spark: a text/int clash in a Parquet file was a worker
    exception (exit 3); a null-type column's pairs crashed a task; a negative-
    scale decimal was refused without naming it; a missing file's message had
    no fix.  Each now answers, or fails in the local engine's words."""
    from decimal import Decimal

    from facet.errors import FacetInputError

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"s": ["1", "2"], "i": pa.array([1, 2], pa.int32())}), path)
    for bad in (["not(t.s = t'.i)"], ['not(t.i = "abc")']):
        with pytest.raises(FacetInputError) as local:
            facet.detect(str(path), dcs=bad)
        with pytest.raises(FacetInputError) as dist:
            facet.detect(str(path), dcs=bad, engine="spark")
        assert str(dist.value) == str(local.value)
    with pytest.raises(FacetInputError) as local:
        facet.detect(str(tmp_path / "none.csv"), dcs=["a -> b"])
    with pytest.raises(FacetInputError) as dist:
        facet.detect(str(tmp_path / "none.csv"), dcs=["a -> b"], engine="spark")
    assert str(dist.value) == str(local.value)
    table = pa.table({
        "k": ["a", "b", "a"], "nul": pa.nulls(3),
        "n": pa.array([Decimal("1E+2"), Decimal("-5E+2"), Decimal("1E+2")], pa.decimal128(5, -2)),
    })  # fmt: skip
    texts = ["not(t.nul = t'.nul)", "not(t.nul < t'.k)", "not(t.n < t'.n)", "not(t.n = t'.n)"]
    local = facet.detect(table, dcs=texts, output="pairs")
    dist = facet.detect(table, dcs=texts, engine="spark", output="pairs")
    assert [d.violations for d in dist.dcs] == [d.violations for d in local.dcs] == [0, 0, 2, 2]
    assert _pair_set(dist) == _pair_set(local)


def test_a_remote_csv_that_spark_refuses_is_bad_input(spark, tmp_path):
    """A CSV file behind a URL is read by Spark's own reader: a record with too
    few fields (a JVM error, exit 3, before) and an empty file are bad input
    there too: one line, FacetInputError (exit 2)."""
    from facet.errors import FacetInputError

    short = tmp_path / "short.csv"
    short.write_text("k,v\n1,a\n2\n3,c\n")
    with pytest.raises(FacetInputError, match=r"short.csv: a CSV record does not match the header"):
        facet.detect(short.as_uri(), dcs=["k -> v"], engine="spark")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(FacetInputError, match="the file is empty; a CSV file needs a header line"):
        facet.detect(str(empty), dcs=["k -> v"], engine="spark")


def test_typed_text_that_a_dc_orders_warns_as_locally(spark, tmp_path):
    """A string column of a typed input that a DC orders (itself, or through a
    column compared with it) compares as text: Spark warns as the local engine
    does (it said nothing; a probe's finding)."""
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"s": ["10", "9", "x"], "u": ["1", "2", "3"], "k": [1, 1, 2]}), path)
    dcs = ["not(t.k = t'.k and t.s < t'.s)", "not(t.u = t'.s)"]
    local = facet.detect(str(path), dcs=dcs)
    dist = facet.detect(str(path), dcs=dcs, engine="spark")
    assert [d.violations for d in dist.dcs] == [d.violations for d in local.dcs]
    assert len(local.warnings) == 2 and dist.warnings == local.warnings
    # text held as large_string or dictionary: the warning names the input's type, not
    # the string type Spark reads it as (a probe's D2)
    s = pa.array(["10", "9", "x"])
    table = pa.table({"s": s.cast(pa.large_string()), "d": s.dictionary_encode(), "k": [1, 1, 2]})
    pq.write_table(table, path)
    dcs = ["not(t.k = t'.k and t.s < t'.s)", "not(t.d > t'.d)"]
    for data in (table, str(path)):
        local = facet.detect(data, dcs=dcs)
        dist = facet.detect(data, dcs=dcs, engine="spark")
        assert "text (large_string)" in local.warnings[0] and "dictionary<" in local.warnings[1]
        assert dist.warnings == local.warnings


def test_a_data_error_found_in_a_task_is_a_data_error_on_the_driver(spark):
    """A probe's D1: a timestamp constant with nanoseconds meeting a column that
    holds a date outside 1677-2262 is refused inside a task on Spark; the driver
    rebuilt it as a plain FacetInputError, so ``except DataError`` caught it on
    the local engine only."""
    import datetime as dt

    from facet.engine.spark.tasks import task_input_exception
    from facet.errors import DataError, FacetInputError

    table = pa.table(
        {"ts": pa.array([dt.datetime(1, 1, 1), dt.datetime(2024, 1, 1)], pa.timestamp("us"))}
    )
    dc = "not(t.ts > '2023-12-31T23:00:00.0000000001Z')"
    with pytest.raises(DataError) as local:
        facet.detect(table, dcs=[dc])
    with pytest.raises(DataError) as dist:
        facet.detect(table, dcs=[dc], engine="spark")
    assert type(dist.value) is type(local.value) and str(dist.value) == str(local.value)
    worker = "Traceback (most recent call last):\n  ...\nfacet.language.errors.{}: bad thing"
    for name, kind in (("DataError", DataError), ("FacetInputError", FacetInputError),
                       ("DCSyntaxError", FacetInputError)):  # fmt: skip
        got = task_input_exception(RuntimeError(worker.format(name)))
        assert type(got) is kind and str(got) == "bad thing"
    assert task_input_exception(RuntimeError("java.lang.OutOfMemoryError")) is None


def test_typing_is_decided_and_checked_once_for_the_table_on_spark(spark, tmp_path):
    """Probe findings F2, F3, F5: on Spark a type clash was found by the tasks only
    (an empty table answered 0, exit 0; a plain FacetInputError, not DataError);
    values a --schema type turns NULL gave no warning; and --schema ``number`` was
    int64 or float64 per task, not for the table (two whole numbers past 2**53 are
    distinct as int64 and equal as float64, which a fractional value elsewhere in
    the column makes them)."""
    from facet.errors import DataError, FacetInputError

    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"i": pa.array([], pa.int64()), "s": pa.array([], pa.string())}), empty)
    for bad, kind in (("not(t.i < t'.s)", DataError), ('not(t.i = "abc")', FacetInputError)):
        with pytest.raises(kind) as local:
            facet.detect(str(empty), dcs=[bad])
        with pytest.raises(kind) as dist:
            facet.detect(str(empty), dcs=[bad], engine="spark")
        assert type(dist.value) is type(local.value) and str(dist.value) == str(local.value)
    big = 2**53
    csv = tmp_path / "t.csv"
    csv.write_text(f"a,b\n{big},1\n{big + 1},2\nfoo,3\n2.5,4\n,5\n")
    typed = tmp_path / "t.parquet"
    pq.write_table(
        pa.table({"a": [str(big), str(big + 1), "foo", "2.5", None], "b": [1] * 5}), typed
    )
    for path in (csv, typed):
        for declared in ("a:int", "a:number", "a:float", "a:int,b:timestamp"):
            dcs = ["not(t.a = t'.a)", "not(t.a < t'.a and t.b > t'.b)"]
            local = facet.detect(str(path), dcs=dcs, schema=declared, output="pairs")
            dist = facet.detect(str(path), dcs=dcs, schema=declared, engine="spark", output="pairs")
            assert dist.warnings == local.warnings, (path.name, declared)
            assert any("read as NULL" in w for w in local.warnings), (path.name, declared)
            assert [d.violations for d in dist.dcs] == [d.violations for d in local.dcs]
            assert _pair_set(dist) == _pair_set(local), (path.name, declared)
    number = facet.detect(str(csv), dcs=["not(t.a = t'.a)"], schema="a:number", engine="spark")
    assert number.dcs[0].violations == 2  # 2**53 and 2**53 + 1 as float64


@pytest.mark.parametrize("master", ["bogus://nowhere", "local[x]", "localhost"])
def test_a_master_url_spark_would_not_take_is_refused_before_a_jvm(master):
    """A bad --master is bad usage (exit 2) saying which URLs Spark takes; it was
    refused only once the JVM failed, with a message blaming Java (a probe's note)."""
    proc = subprocess.run(
        [sys.executable, "-m", "facet", "detect", str(TAX), "--dc", "zip -> city",
         "--engine", "spark", "--master", master],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        f"facet: error: --master {master}: not a Spark master URL; use local[*] (or local[N]), "
        "spark://HOST:PORT, yarn, k8s://HOST:PORT, or sc://HOST for Spark Connect\n"
    )


@pytest.mark.parametrize("mode", ["cost-trie", "freq-trie"])
def test_dcs_sharing_a_spread_each_record_it(spark, mode):
    """docs/semantics.md §8: every DC's JSON ``work`` holds its spreads -- in the trie
    modes the DCs that share one spread (one shuffle) each hold its entry, ``shared_by``
    naming them (only the first did)."""
    rules = ["not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)",
             "not(t.state = t'.state and t.zip != t'.zip and t.city = t'.city)",
             "not(t.state = t'.state and t.salary < t'.salary and t.zip = t'.zip)"]  # fmt: skip
    local = facet.detect(TAX, dcs=rules)
    dist = facet.detect(TAX, dcs=rules, engine="spark", mode=mode,
                        config=Config(spark_split_rows=2_000))  # fmt: skip
    assert [(d.violations, d.rows_involved) for d in dist.dcs] == [
        (d.violations, d.rows_involved) for d in local.dcs
    ]
    shared = [[w for w in d.work if "shared_by" in w] for d in dist.dcs]
    assert all(len(s) == 1 for s in shared), [d.work for d in dist.dcs]
    assert all(s[0]["shared_by"] == [0, 1, 2] and s[0]["key"] == ["state", "state"]
               for s in shared)  # fmt: skip


def test_a_spark_failure_is_an_engine_error_naming_its_cause(monkeypatch):
    """An error Spark raises (its JVM through py4j: out of heap, say) is facet's
    EngineError, one line naming the Java exception and what to try; in the CLI exit
    3 with that line (it was Spark's traceback)."""
    import pyspark  # noqa: F401 - (a py4j error comes only where pyspark is loaded)

    from facet.engine.spark import spark_failure

    class Py4JJavaError(Exception):  # py4j's, as Spark's driver raises it
        pass

    Py4JJavaError.__module__ = "py4j.protocol"
    oom = Py4JJavaError(
        "An error occurred while calling o233.collectToPython.\n"
        ": java.lang.OutOfMemoryError: Java heap space\n\tat java.base/java.util.Arrays"
    )
    line = spark_failure(oom)
    assert line.startswith("the Spark engine failed: java.lang.OutOfMemoryError: Java heap")
    assert "spark.driver.memory" in line and "--out" in line and "\n" not in line
    assert spark_failure(ValueError("x")) is None

    def failing(*args, **kwargs):
        raise oom

    monkeypatch.setattr(facet.api, "_detect", failing)
    with pytest.raises(facet.EngineError, match="OutOfMemoryError") as got:
        facet.detect(TAX, dcs=["zip -> city"])
    assert isinstance(got.value, facet.FacetError) and got.value.__cause__ is oom
    from facet.cli import main

    assert main(["detect", str(TAX), "--dc", "zip -> city"]) == 3


def test_a_jvm_that_stopped_answering_is_one_line_naming_its_logged_cause(monkeypatch, tmp_path):
    """A JVM that died (out of heap while collecting pairs, a probe's finding) breaks
    py4j's connection: the errors that follow (ConnectionRefusedError, py4j's network
    error) were an "internal error" after pages of py4j's and pyspark's tracebacks.
    They are now the engine's failure, naming the Java exception the JVM's log holds;
    the command line silences py4j's logging and the accumulator server's traceback."""
    import logging

    import pyspark  # noqa: F401 - (looked at only where pyspark is loaded)

    from facet.engine.spark import connect, spark_failure

    log = tmp_path / "facet-spark.log"
    log.write_text("WARN something\njava.lang.OutOfMemoryError: Java heap space\n\tat x.y\n")
    monkeypatch.setattr(connect, "JVM_LOG", str(log))

    class Py4JNetworkError(Exception):  # py4j's, as a broken connection raises it
        pass

    Py4JNetworkError.__module__ = "py4j.protocol"

    def raised_in(path: str, err: BaseException) -> BaseException:
        try:
            exec(compile("raise err", path, "exec"), {"err": err})
        except BaseException as got:  # noqa: BLE001 - what the test raised
            return got
        raise AssertionError("not raised")

    in_pyspark = os.path.join(os.sep, "venv", "pyspark", "accumulators.py")
    refused = ConnectionRefusedError(111, "Connection refused")
    assert spark_failure(raised_in(os.path.join(os.sep, "app", "mine.py"), refused)) is None
    for err in (raised_in(in_pyspark, ConnectionRefusedError(111, "Connection refused")),
                raised_in(in_pyspark, EOFError()),
                Py4JNetworkError("Error while sending or receiving")):  # fmt: skip
        line = spark_failure(err)
        assert line.startswith("the Spark engine failed: its JVM stopped answering "
                               "(java.lang.OutOfMemoryError: Java heap space)")  # fmt: skip
        assert "spark.driver.memory" in line and str(log) in line and "\n" not in line
    monkeypatch.setattr(connect, "JVM_LOG", None)  # no JVM of facet's: not its failure
    assert spark_failure(raised_in(in_pyspark, refused)) is None
    from pyspark import accumulators

    monkeypatch.setattr(accumulators.AccumulatorTCPServer, "handle_error",
                        accumulators.AccumulatorTCPServer.handle_error)  # fmt: skip
    try:
        connect.quiet_console()
        assert logging.root.manager.disable >= logging.CRITICAL
        assert accumulators.AccumulatorTCPServer.handle_error(None, None, None) is None
    finally:
        logging.disable(logging.NOTSET)


def test_explain_analyze_counts_pairs_where_spark_makes_them(spark, monkeypatch):
    """``explain --analyze --output pairs`` on Spark counts the pairs on the executors
    (it collected them on the driver, whose heap a probe's 18.8M pairs overran)."""
    from facet.engine.spark.engine import SparkEngine

    def collected(*args, **kwargs):
        raise AssertionError("pairs collected on the driver")

    monkeypatch.setattr(SparkEngine, "pairs", collected)
    dcs = ["not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)"]
    doc = facet.explain(TAX, dcs=dcs, output="pairs", analyze=True, engine="spark")
    want = facet.detect(TAX, dcs=dcs).dcs[0].violations
    assert doc["dcs"][0]["actual"]["violations"] == want


def test_pairs_too_many_for_the_driver_heap_are_refused_before_a_job(spark, monkeypatch):
    """Pairs collected without ``--out`` pass through the Spark driver's JVM heap
    (``spark.driver.memory``), not only this process's memory: 10M pairs overran
    its default 1 GiB and Spark hung. Past the heap, the run is refused (exit 2)
    before any job lists them, pointing at ``--out``; ``--limit`` bounds it."""
    from facet.engine.spark.engine import SparkEngine
    from facet.errors import FacetInputError

    def collected(*args, **kwargs):
        raise AssertionError("pairs listed")

    dcs = ["not(t.zip = t'.zip and t.city != t'.city)"]  # 40,552 pairs on 10k rows
    monkeypatch.setattr(SparkEngine, "pair_frame", collected)
    monkeypatch.setattr(facet.api, "SPARK_DRIVER_PAIR_BYTES", 128 * 1024)  # a 1g heap: ~7k
    with pytest.raises(FacetInputError, match=r"collecting its 40,552 violating pairs on the "
                       r"Spark driver .*spark.driver.memory.*--out FILE"):  # fmt: skip
        facet.detect(TAX, dcs=dcs, output="pairs", engine="spark")
    monkeypatch.undo()
    got = facet.detect(TAX, dcs=dcs, output="pairs", engine="spark", limit=1000)
    assert got.pairs().num_rows == 1000


def test_components_on_spark_are_joined_in_the_tasks_not_from_collected_blocks(spark, monkeypatch):
    """Each task joins its rows with the local union-find (the dominance sweep for
    order predicates) and sends one edge per row; the driver never collects a DC's
    blocks (it did: about a row list per block, past the heap at 1M rows)."""
    from facet.engine.spark.engine import SparkEngine

    def collected(*args, **kwargs):
        raise AssertionError("blocks collected on the driver")

    dcs = ["not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)",
           "not(t.salary > t'.salary and t.rate < t'.rate)", "zip -> city",
           "not(t.zip = t'.zip and t.salary > t'.salary)"]  # fmt: skip
    local = facet.detect(TAX, dcs=dcs, output="components").components()
    monkeypatch.setattr(SparkEngine, "block_frame", collected)
    config = Config(spark_split_rows=500, spark_tasks=6, spark_task_rows=2_000)
    dist = facet.detect(TAX, dcs=dcs, output="components", engine="spark", config=config)
    assert local.num_rows > 1000 and dist.components().equals(local)


def test_row_outputs_too_big_for_the_driver_heap_are_refused_before_a_job(spark, monkeypatch):
    """Row outputs on Spark collect each DC's degrees (tuples, cells), blocks
    (components) or pairs (suspects) on the driver: past its JVM heap, refused
    (exit 2) before a job makes them, naming the DC; within it, answered."""
    from facet.engine.spark.engine import SparkEngine
    from facet.errors import FacetInputError

    def made(*args, **kwargs):
        raise AssertionError("collected")

    dcs = ["not(t.zip = t'.zip and t.city != t'.city)"]  # 40,552 pairs, 204 rows on 10k
    for name in ("degrees", "component_edges", "block_frame", "pair_frame"):
        monkeypatch.setattr(SparkEngine, name, made)
    monkeypatch.setattr(facet.api, "SPARK_DRIVER_PAIR_BYTES", 2**30)  # a 1g heap: none fit
    monkeypatch.setattr(facet.api, "SPARK_DRIVER_ROW_BYTES", 2**30)
    for output, what in (("tuples", "violating rows' degrees"), ("cells", "rows' degrees"),
                         ("components", "rows' components"),
                         ("suspects", "which --output suspects")):  # fmt: skip
        with pytest.raises(FacetInputError, match=rf"collecting .*{what}.* on the Spark driver"):
            facet.detect(TAX, dcs=dcs, output=output, engine="spark")
    monkeypatch.undo()
    assert facet.detect(TAX, dcs=dcs, output="tuples", engine="spark").tuples().num_rows > 0


def test_writing_pairs_names_each_dc_before_its_job(tmp_path):
    """The executors' write of each DC's pairs is announced (``started``), so the
    progress display and a ``--timeout`` name the DC (the message said only "while
    listing", where the local engine names it)."""
    from facet.engine.spark.outputs import write_frames

    class Writer:
        def mode(self, _):
            return self

        def parquet(self, uri):
            Path(uri.removeprefix("file://")).mkdir(parents=True)

    class Frame:
        write = Writer()

    seen = []
    schema = pa.schema([("dc", pa.int64()), ("t1", pa.int64()), ("t2", pa.int64())])
    write_frames([Frame(), Frame()], str(tmp_path / "p.parquet"), schema, lambda b: None,
                 lambda i, n: None, seen.append)  # fmt: skip
    assert seen == [0, 1]


def test_an_id_column_names_the_rows_and_must_hold_distinct_whole_numbers(spark):
    """``id_column`` (README): a DataFrame's own ids are the tids of its pairs -- the
    local engine's pairs mapped through them. Ids NULL, repeated, or not whole numbers
    are refused in one line (they were taken silently: NULL ids dropped pairs the count
    held, repeated ones merged them; text was a Spark cast error, exit 3), and so is
    id_column on the local engine (ignored before)."""
    from facet.errors import FacetInputError

    g = [1, 1, 1, 2, 2, 3]
    s = ["a", "b", "b", "c", "d", "e"]
    ids = [50, 7, 31, 8, 99, 4]
    frame = spark.createDataFrame(list(zip(g, s, ids, strict=True)), "g long, s string, rid long")
    got = facet.detect(frame, dcs=["g -> s"], output="pairs", id_column="rid")
    local = facet.detect(pa.table({"g": g, "s": s}), dcs=["g -> s"], output="pairs")
    assert got.dcs[0].violations == local.dcs[0].violations == 6
    assert _pairs(got.pairs(), 0) == {(ids[a], ids[b]) for a, b in _pairs(local.pairs(), 0)}
    bad = {
        "NULL": ([50, None, 31, 8, 99, 4], "long", "1 of its 6 ids are NULL"),
        "repeated": ([50, 7, 50, 8, 99, 4], "long", "1 repeated ids"),
        "text": (["50", "b", "31", "8", "99", "4"], "string", "ids are NULL or not whole"),
        "float": ([50.0, 7.0, 31.0, 8.0, 99.0, 4.0], "double", "must be whole numbers"),
    }
    for values, typ, message in bad.values():
        rows = list(zip(g, s, values, strict=True))
        frame = spark.createDataFrame(rows, f"g long, s string, rid {typ}")
        with pytest.raises(FacetInputError, match=message):
            facet.detect(frame, dcs=["g -> s"], id_column="rid")
    whole = spark.createDataFrame(
        [(a, b, Decimal(i)) for a, b, i in zip(g, s, ids, strict=True)],
        "g long, s string, rid decimal(10,0)",
    )  # (whole-number decimals are ids too: Spark reads Parquet's uint64 so)
    got = facet.detect(whole, dcs=["g -> s"], output="pairs", id_column="rid")
    assert _pairs(got.pairs(), 0) == {(ids[a], ids[b]) for a, b in _pairs(local.pairs(), 0)}
    table = pa.table({"g": g, "s": s, "rid": ids})
    for engine in ("local", "spark"):  # a file or a table is numbered by position
        with pytest.raises(FacetInputError, match="Spark DataFrame only"):
            facet.detect(table, dcs=["g -> s"], id_column="rid", engine=engine)


def test_a_folder_without_parquet_files_or_with_parts_of_two_schemas_is_bad_input(spark, tmp_path):
    """An empty folder said "unknown column"; parts that give a used column two types
    failed in Spark (exit 3). Both are bad input in one line (exit 2)."""
    from facet.errors import DataError

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="it is a directory with no Parquet file in it"):
        facet.detect(empty, dcs=["a -> b"], engine="spark")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    pq.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), mixed / "part-0.parquet")
    pq.write_table(pa.table({"a": ["1", "2"], "b": ["x", "z"]}), mixed / "part-1.parquet")
    with pytest.raises(DataError, match=r"column 'a' is int64 in .*part-0.parquet but string"):
        facet.detect(mixed, dcs=["a -> b"], engine="spark")
    # types Spark reads alike agree: a dictionary, string and large_string column
    alike = tmp_path / "alike"
    alike.mkdir()
    b = pa.array(["x", "y"])
    for k, col in enumerate([b, b.dictionary_encode(), b.cast(pa.large_string())]):
        pq.write_table(pa.table({"a": [1, 1], "b": col}), alike / f"part-{k}.parquet")
    got = facet.detect(alike, dcs=["a -> b"], engine="spark")
    # Spark's own parts, timestamps as INT96 (Arrow reads nanoseconds, Spark reads them)
    import datetime

    when = [datetime.datetime(2024, 1, 1, 0, 0, k % 3) for k in range(8)]
    spark.createDataFrame(list(zip(range(8), when, strict=True)), "k long, ts timestamp") \
        .repartition(2).write.parquet(str(tmp_path / "by_spark"))  # fmt: skip
    assert len(list((tmp_path / "by_spark").glob("*.parquet"))) == 2
    got_ts = facet.detect(tmp_path / "by_spark", dcs=["not(t.ts = t'.ts and t.k != t'.k)"],
                          engine="spark")  # fmt: skip
    assert got_ts.dcs[0].violations == 3 * 2 + 3 * 2 + 2 * 1  # 3, 3 and 2 rows per second
    plain = pa.schema([("a", pa.int64()), ("b", pa.string())])
    whole = pa.concat_tables([pq.read_table(f).cast(plain) for f in sorted(alike.iterdir())])
    assert got.dcs[0].violations == facet.detect(whole, dcs=["a -> b"]).dcs[0].violations == 18


#: ids an ``id_column`` may hold, ``n`` of them, distinct (drawn in ``_layout_ids``)
ID_LAYOUTS = ("offset", "sparse", "negative", "int64 ends", "unsorted")


def _layout_ids(data: st.DataObject, layout: str, n: int) -> list[int]:
    def distinct(values: st.SearchStrategy) -> list[int]:
        return data.draw(st.lists(values, min_size=n, max_size=n, unique=True))

    if layout == "offset":  # n consecutive ids from past n
        start = data.draw(st.integers(n, 10**6))
        return list(range(start, start + n))
    if layout == "sparse":  # ascending, with gaps
        return sorted(distinct(st.integers(0, 10**12)))
    if layout == "negative":  # ascending, most below 0
        return sorted(distinct(st.integers(-(10**9), 3)))
    if layout == "int64 ends":  # next to -2^63 and 2^63 - 1, in any order
        return distinct(st.integers(-(2**63), -(2**63) + 40) | st.integers(2**63 - 41, 2**63 - 1))
    return distinct(st.integers(-50, 50))  # unsorted: any order


def _each_output(counts: Any, tables: dict[str, pa.Table], rules: list) -> dict[str, Any]:
    """Every output of a run (``counts``: its DC results; ``tables``: its table of each
    other output), as comparable values."""
    got: dict[str, Any] = {"count": [(d.violations, d.rows_involved) for d in counts]}
    got["pairs"] = {i: {(a, b) if b is not None else a for a, b in _pairs(tables["pairs"], i)}
                    for i in range(len(rules))}  # fmt: skip
    blocks = tables["blocks"]
    listed: dict[int, set] = {i: set() for i in range(len(rules))}
    for dc, left, right in zip(*(blocks.column(c).to_pylist() for c in ("dc", "t1", "t2"))):
        if right is None:
            listed[dc].update(left)
        else:
            listed[dc].update((a, b) for a in left for b in right if a != b)
    got["blocks"] = listed
    got["tuples"] = _rows(tables["tuples"])
    got["cells"] = [_cells(tables["cells"], i) for i in range(len(rules))]
    got["components"] = _rows(tables["components"])
    sus = tables["suspects"]
    got["suspects"] = list(zip(*(sus.column(c).to_pylist() for c in sus.column_names)))
    return got


@pytest.mark.parametrize("layout", ID_LAYOUTS)
@settings(PROPERTY, max_examples=1)
@given(data=st.data())
def test_every_output_names_rows_by_an_id_column_of_any_layout(spark, layout, data):
    """``id_column`` with ids that are not 0..n-1 (offset, sparse, negative, next to
    int64's ends, in any order): every output on Spark names the rows by their ids, as
    tests/naive.py's pairs mapped through them say (the row outputs from them, the
    greedy cover's ties by the lower id); so does the local engine over the rows in id
    order with its positions mapped to the ids.  (components killed the process: a
    union-find of n rows indexed by ids; tuples, cells and suspects raised IndexError
    on an id >= n and named rows that do not exist for a negative one.)"""
    from facet.api import OUTPUTS
    from facet.sinks.arrow import BLOCK_SCHEMA, PAIR_SCHEMA
    from tests.test_row_outputs import suspects_from

    table, kinds = data.draw(tables(max_rows=12))
    rules = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(1, 2)))]
    ids = _layout_ids(data, layout, table.num_rows)
    note(f"ids {ids}")
    want_pairs = {i: naive_pairs(table, dc) for i, dc in enumerate(rules)}
    named = {i: {(ids[p[0]], ids[p[1]]) if isinstance(p, tuple) else ids[p] for p in pairs}
             for i, pairs in want_pairs.items()}  # fmt: skip
    involved = [
        {t for p in s for t in (p if isinstance(p, tuple) else (p,))} for s in named.values()
    ]
    want = {
        "count": [(len(named[i]), len(involved[i])) for i in range(len(rules))],
        "pairs": named,
        "blocks": named,
        "tuples": tuples_from(named),
        "cells": [{(ids[t], c): v for (t, c), v in naive_cells(table, dc).items()} for dc in rules],
        "components": components_from(named),
        "suspects": suspects_from(rules, named),
    }
    config = Config(spark_split_rows=data.draw(st.integers(1, 4)), spark_tasks=3)
    frame = spark.createDataFrame(table.append_column("rid", pa.array(ids, pa.int64())))
    run = {
        o: facet.detect(frame, dcs=rules, output=o, id_column="rid", config=config)
        for o in ("pairs", "blocks")
    }  # (the executors' frames)
    session = run["blocks"]._session  # (the row outputs of one session: fewer Spark jobs)
    got = {"pairs": run["pairs"].pairs(), "blocks": run["blocks"].blocks()}
    got |= {o: session.row_output(o) for o in ("tuples", "cells", "components", "suspects")}
    on_spark = _each_output(run["pairs"].dcs, got, rules)
    # pairs and blocks listed on the driver (``Result.pairs(limit)``), not by the executors
    listed = {
        "pairs": pa.Table.from_batches(list(session.iter_pairs()), schema=PAIR_SCHEMA),
        "blocks": pa.Table.from_batches(list(session.iter_blocks()), schema=BLOCK_SCHEMA),
    }
    on_driver = _each_output(run["pairs"].dcs, got | listed, rules)
    order = sorted(range(len(ids)), key=ids.__getitem__)  # the rows in id order, locally
    by_id = table.take(pa.array(order, pa.int64()))
    runs = {o: facet.detect(by_id, dcs=rules, output=o) for o in OUTPUTS}
    got = {o: getattr(runs[o], o)() for o in OUTPUTS if o != "count"}
    local = _renamed(_each_output(runs["count"].dcs, got, rules), sorted(ids))
    for output, expected in want.items():
        assert on_spark[output] == expected, (output, [dc.canonical() for dc in rules])
        assert on_driver[output] == expected, (output, [dc.canonical() for dc in rules])
        assert local[output] == expected, (output, [dc.canonical() for dc in rules])


def _renamed(got: dict[str, Any], ids: list[int]) -> dict[str, Any]:
    """:func:`_each_output`'s values with each row position ``t`` named ``ids[t]``."""

    def pair(p: Any) -> Any:
        return (ids[p[0]], ids[p[1]]) if isinstance(p, tuple) else ids[p]

    return {
        "count": got["count"],
        "pairs": {i: {pair(p) for p in s} for i, s in got["pairs"].items()},
        "blocks": {i: {pair(p) for p in s} for i, s in got["blocks"].items()},
        "tuples": {(ids[t], *rest) for t, *rest in got["tuples"]},
        "cells": [{(ids[t], c): v for (t, c), v in d.items()} for d in got["cells"]],
        "components": {(ids[t], *rest) for t, *rest in got["components"]},
        "suspects": [(ids[t], *rest) for t, *rest in got["suspects"]],
    }


@pytest.mark.parametrize("output", ["count", "pairs", "tuples", "components", "suspects"])
def test_repeated_or_null_ids_are_one_line_of_bad_input_for_every_output(spark, output):
    """Ids NULL or repeated are refused before any output is made, in one line."""
    from facet.errors import FacetInputError

    for ids, what in (([3, None, 9], "1 of its 3 ids are NULL"), ([3, 9, 3], "1 repeated")):
        frame = spark.createDataFrame(list(zip([1, 1, 1], [1, 2, 3], ids, strict=True)),
                                      "g long, s long, rid long")  # fmt: skip
        with pytest.raises(FacetInputError, match=what) as err:
            facet.detect(frame, dcs=["g -> s"], output=output, id_column="rid")
        assert "\n" not in str(err.value)


#: Parquet folder layouts: each file (path below the folder) and whether it is read
FOLDER_LAYOUTS = {
    "partition folders": {"k=1/a.parquet": True, "k=2/b.parquet": True, "k=2/c.parquet": True},
    "nested partition folders": {
        "k=1/j=x/a.parquet": True, "k=1/j=y/b.parquet": True, "k=2/j=x/c.parquet": True,
    },
    "plain subfolders": {"one/a.parquet": True, "two/b.parquet": True},
    "nested subfolders": {"one/two/a.parquet": True, "one/b.parquet": True, "c.parquet": True},
    "files beside a partition folder": {"a.parquet": True, "k=1/b.parquet": True},
    "hidden and bookkeeping files": {
        "part-0.parquet": True, "sub/part 1.parquet": True, "part%1!.parquet": True,
        "_SUCCESS": False, ".part-9.parquet.crc": False, "_metadata": False,
        "_common_metadata": False, "_temporary/0/part-9.parquet": False,
        ".hidden/part-8.parquet": False, "sub/_part-7.parquet": False,
    },
}  # fmt: skip


@pytest.mark.parametrize("layout", FOLDER_LAYOUTS)
def test_a_parquet_folder_reads_the_same_files_and_rows_on_both_engines(spark, tmp_path, layout):
    """A folder of Parquet files in any layout: both engines read every file below it
    (plain, nested and partition folders alike) except names starting with . or _, in
    the order of their paths, so rows, counts and pairs agree (Spark read no file one
    level down -- "0 rows, no violations" -- and the local engine refused a folder)."""
    folder = tmp_path / "data"
    read = []
    for k, (name, kept) in enumerate(FOLDER_LAYOUTS[layout].items()):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        rows = pa.table({"g": [k % 2, k % 2, 5], "s": [f"{k}a", f"{k}b", "x"]})
        if name in ("_SUCCESS", ".part-9.parquet.crc"):  # (a checksum of no file here)
            path.write_bytes(b"")
        else:  # (a bookkeeping file that is Parquet: its rows must not be read)
            pq.write_table(rows, path)
        if kept:
            read.append((str(path), rows))
    whole = pa.concat_tables([rows for _, rows in sorted(read)])
    rules = ["g -> s"]
    want = facet.detect(whole, dcs=rules, output="pairs")
    for engine in ("local", "spark"):
        got = facet.detect(folder, dcs=rules, output="pairs", engine=engine)
        assert got.rows == whole.num_rows, engine
        assert got.dcs[0].violations == want.dcs[0].violations > 0, engine
        assert _pairs(got.pairs(), 0) == _pairs(want.pairs(), 0), engine


def test_a_partition_key_a_dc_uses_is_refused_alike_on_both_engines(spark, tmp_path):
    """Partition folders' ``key=value`` names are not columns: a DC using the key is
    bad input naming it, in the same line on both engines; a folder holding a file
    that is not Parquet is bad input naming the file."""
    from facet.errors import DataError

    for k in (1, 2):
        (tmp_path / f"k={k}").mkdir()
        pq.write_table(pa.table({"g": [1, 1], "s": ["a", "b"]}), tmp_path / f"k={k}" / "p.parquet")
    said = set()
    for engine in ("local", "spark"):
        with pytest.raises(DataError, match=r"column 'k' is the key of its partition folders") as e:
            facet.detect(tmp_path, dcs=["k -> s"], engine=engine)
        said.add(str(e.value))
    assert len(said) == 1
    (tmp_path / "notes.txt").write_text("not parquet\n")
    for engine in ("local", "spark"):
        with pytest.raises(DataError, match=r"notes.txt: not a readable Parquet file"):
            facet.detect(tmp_path, dcs=["g -> s"], engine=engine)


def test_a_misspelt_column_is_refused_before_any_spark_session(tmp_path, monkeypatch):
    """The columns the DCs, ``--where`` and ``--schema`` name are checked against the
    input's own (a CSV header, Parquet footers, a loaded table) before a Spark session
    starts, in the local engine's words (the JVM started first: 6-25 s)."""
    import pandas as pd

    import facet.engine.spark.connect as connect
    from facet.errors import FacetInputError

    def no_session(master=None):
        raise AssertionError("a Spark session was started")

    monkeypatch.setattr(connect, "spark_session", no_session)
    table = pa.table({"zip": [1, 1], "city": ["a", "b"]})
    pyarrow.csv.write_csv(table, tmp_path / "t.csv")
    pq.write_table(table, tmp_path / "t.parquet")
    (tmp_path / "folder" / "k=1").mkdir(parents=True)
    pq.write_table(table, tmp_path / "folder" / "k=1" / "p.parquet")
    with pa.OSFile(str(tmp_path / "t.arrow"), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table)
    inputs = [tmp_path / "t.csv", str(tmp_path / "t.parquet"), tmp_path / "folder",
              tmp_path / "t.arrow", table, table.to_pandas(), pd.DataFrame()]  # fmt: skip
    asks = [{"dcs": ["zipp -> city"]}, {"dcs": ["zip -> city"], "where": "cityy = 'a'"},
            {"dcs": ["zip -> city"], "schema": "zipp:int"}]  # fmt: skip
    for data in inputs:
        for ask in asks:
            with pytest.raises(FacetInputError) as local:
                facet.detect(data, **ask)
            with pytest.raises(FacetInputError) as spark:
                facet.detect(data, engine="spark", **ask)
            assert str(spark.value) == str(local.value), (data, ask)


def test_cli_misspelt_column_on_spark_is_refused_without_a_jvm(tmp_path):
    """``facet detect x.csv --engine spark`` with a misspelt column: exit 2, the local
    engine's line, and no JVM (none could start here: JAVA_HOME names no Java)."""
    data = tmp_path / "x.csv"
    data.write_text("zip,city\n1,a\n1,b\n")
    cmd = [sys.executable, "-m", "facet", "detect", str(data), "--dc", "not(t.zipp = t'.zip)"]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, JAVA_HOME=str(tmp_path / "no-java"),
               PATH=os.path.dirname(sys.executable), TMPDIR=str(tmp_path))  # fmt: skip
    local = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    spark = subprocess.run([*cmd, "--engine", "spark"], capture_output=True, text=True,
                           env=env, timeout=300)  # fmt: skip
    assert local.returncode == spark.returncode == 2, spark.stderr
    assert spark.stderr == local.stderr
    assert spark.stderr.startswith("facet: error: --dc:1: unknown column 'zipp' in ")
    assert not list(tmp_path.glob("facet-spark-*.log"))  # (a JVM started would leave one)


def test_a_timeout_cancels_the_spark_jobs_it_started(spark, tmp_path, capfd, caplog):
    """Past ``timeout`` a Spark run raises facet's deadline error within 0.5 s, with none
    of its jobs left running and nothing printed (the alarm raised inside a call into
    the JVM: the job ran on, and py4j logged the broken call with its traceback)."""
    import logging
    import time

    from facet.progress import DeadlineExceeded

    rng = np.random.default_rng(7)
    n = 8000  # (16M violating pairs: listing them takes far longer than counting)
    frame = spark.createDataFrame(
        pa.table({"a": rng.integers(0, 10**6, n), "b": rng.integers(0, 10**6, n)})
    ).persist()
    frame.count()
    rules = ["not(t.a < t'.a and t.b > t'.b)"]
    t0 = time.monotonic()
    assert facet.detect(frame, dcs=rules).dcs[0].violations > 10**7
    timeout = time.monotonic() - t0 + 1.0  # (past the counts, while the pairs are written)
    out = tmp_path / "pairs.parquet"
    sc = spark.sparkContext
    capfd.readouterr()
    t0 = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="time limit of .* reached while"):
        facet.detect(frame, dcs=rules, output="pairs", out=out, timeout=timeout)
    late = time.monotonic() - t0 - timeout
    assert late < 0.5
    assert sc.statusTracker().getActiveJobsIds() == []
    assert not set(sc.getJobTags()) and sc.getLocalProperty("spark.job.interruptOnCancel") is None
    assert not out.exists()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "py4j" not in err, err
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.records


def test_a_parquet_folder_behind_a_url_is_read_to_its_last_file(spark, tmp_path):
    """A folder Spark lists itself (a URL: ``s3://``, ``file://``) is read at every depth,
    partition folders too, with no partition columns: Spark's own listing left the files
    of plain subfolders unread ("0 rows") and refused files beside a partition folder."""
    folder = tmp_path / "data.parquet"  # (a URL names Parquet by its extension)
    files = ["top.parquet", "k=1/a.parquet", "k=2/j=x/b.parquet", "one/two/c.parquet"]
    for k, name in enumerate([*files, "_SUCCESS", ".part-9.parquet.crc", "_tmp/d.parquet"]):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"g": [1, 1], "s": [f"{k}a", f"{k}b"]}), path)
    got = facet.detect(folder.as_uri(), dcs=["g -> s"], engine="spark")
    assert got.rows == 2 * len(files)
    assert got.dcs[0].violations == 2 * len(files) * (2 * len(files) - 1)
