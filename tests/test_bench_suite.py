"""The benchmark suite's own logic (bench/suite.py, bench/peer_dc.py, bench/peer_worker.py):
SQL of every DC shape against the naive evaluator, facet's typing of real tables, the
cell rules (timeouts skip larger sizes, projection, one run past --once-over, count checks)
and the report. The suite's numbers live in bench/results, never here."""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facet
from tests.naive import naive_count
from tests.strategies import dcs, examples, tables

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import common  # noqa: E402
import peer_dc  # noqa: E402
import suite  # noqa: E402


def _no_nan(table: pa.Table) -> pa.Table:
    """NaN as NULL (docs/semantics.md: float NaN is NULL; SQL engines compare NaN)."""
    cols = []
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_floating(col.type):
            col = pa.array([None if v is not None and math.isnan(v) else v for v in col.to_pylist()],
                           col.type)  # fmt: skip
        cols.append(col)
    return pa.table(cols, names=table.column_names)


def _duckdb_count(table: pa.Table, dc_text: str) -> int:
    t = table.append_column("rid", pa.array(range(table.num_rows), pa.int64()))
    con = duckdb.connect()
    con.register("src", t)
    con.execute("CREATE TABLE r AS SELECT * FROM src")
    return int(con.execute(peer_dc.sql(dc_text, t.schema)).fetchone()[0])


@settings(max_examples=examples(120), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(st.data())
def test_sql_counts_equal_naive(data):
    """Every DC shape (constants, single-tuple, cross-column, NULLs) as the suite's SQL."""
    table, kinds = data.draw(tables(max_rows=25))
    table = _no_nan(table)
    dc = data.draw(dcs(kinds, max_preds=4))
    assert _duckdb_count(table, dc.canonical()) == naive_count(table, dc)


def test_sql_of_a_single_tuple_dc_on_t_prime_counts_rows():
    table = pa.table({"a": pa.array([1, 5, 7, None], pa.int64())})
    assert _duckdb_count(table, "not(t'.a > 4)") == 2
    assert peer_dc.parse("not(t'.a > 4)").single_tuple


def test_parse_rows():
    assert suite.parse_rows("1m,100k") == [100_000, 1_000_000]
    assert suite.parse_rows("2.5k") == [2_500]
    assert suite.fmt_rows(1_000_000) == "1M" and suite.fmt_rows(100_000) == "100k"


def test_check_counts():
    ok = {"status": "ok", "violations": [3, 4]}
    assert suite.check_counts([ok, dict(ok)]) == "equal"
    assert suite.check_counts([ok, {"status": "ok", "violations": [3, 5]}]) == "MISMATCH"
    # a partial run compares on the DCs it finished
    assert suite.check_counts([ok, {"status": "partial", "violations": [3, None]}]) == "equal"
    assert suite.check_counts([ok, {"status": "partial", "violations": [2, None]}]) == "MISMATCH"
    assert suite.check_counts([ok, {"status": "timeout", "violations": None}]) == "unchecked"
    assert suite.check_counts([ok, {"status": "unstable-count", "violations": None}]) == "MISMATCH"


def test_real_table_keeps_facets_counts(tmp_path, monkeypatch):
    """The typed Parquet every system reads gives facet's counts on the CSV, DC by DC, and
    DuckDB agrees on it."""
    monkeypatch.setattr(suite, "WORK", tmp_path)
    csv = REPO / "data" / "adr" / "hospital" / "dirty.csv"
    rules = REPO / "data" / "adr" / "hospital" / "dc_rules.txt"
    typed = suite.real_table(csv, rules)
    assert "rid" in pq.read_schema(typed).names
    on_csv = [d.violations for d in facet.detect(str(csv), str(rules)).dcs]
    on_parquet = [d.violations for d in facet.detect(str(typed), str(rules)).dcs]
    assert on_parquet == on_csv and sum(on_csv) > 0
    table = pq.read_table(typed)
    con = duckdb.connect()
    con.register("src", table)
    con.execute("CREATE TABLE r AS SELECT * FROM src")
    by_sql = [int(con.execute(peer_dc.sql(t, table.schema)).fetchone()[0])
              for t in suite.rules_dcs(rules)]  # fmt: skip
    assert by_sql == on_csv


def test_peer_worker_prints_one_json_line(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1, 1, 2], "b": ["x", "y", "z"], "rid": [0, 1, 2]}), path)
    out = subprocess.run(
        [sys.executable, str(REPO / "bench" / "peer_worker.py"), "--system", "duckdb",
         "--table", str(path), "--dc", "not(t.a = t'.a and t.b != t'.b)", "--dc",
         "not(t.b = \"z\")"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["rows"] == 3 and [d["count"] for d in doc["dcs"]] == [2, 1]


# ----------------------------------------------------------------------------- cell rules


def _ctx(tmp_path, engines, **kw) -> suite.Ctx:
    ns = argparse.Namespace(
        timeout=100.0, rss_limit_gib=None, repeat=3, master="local[2]", once_over=50.0,
        no_project=False, engines=engines, force=False, jsonl=tmp_path / "s.jsonl",
    )  # fmt: skip
    for k, v in kw.items():
        setattr(ns, k, v)
    ctx = suite.Ctx(ns)
    ctx.command = "python -m bench.suite (test)"
    return ctx


def _fake_runs(monkeypatch, script):
    """``run_once`` answering from ``script[(system, rows)]``: (status, seconds, wall)."""
    calls = []

    def run_once(ctx, system, table, dcs, rules):
        rows = int(table.stem)
        status, seconds, wall = script[(system, rows)]
        calls.append((system, rows))
        r = {"status": status, "wall": wall, "rss": 1, "group_rss": 1, "load1": [0, 0]}
        if status == "ok":
            r.update(seconds=seconds, violations=[7], results=[{"count": 7, "seconds": seconds}])
        return r

    monkeypatch.setattr(suite, "run_once", run_once)
    return calls


def test_timeouts_projection_and_once_over(tmp_path, monkeypatch):
    script = {
        ("facet", 10): ("ok", 0.1, 1.0), ("facet", 100): ("ok", 1.0, 2.0),
        ("slow", 10): ("ok", 20.0, 21.0), ("slow", 100): ("ok", 1.0, 1.0),  # projected at 100
        ("dies", 10): ("timeout", None, 100.0), ("dies", 100): ("ok", 1.0, 1.0),  # skipped
        ("long", 10): ("ok", 60.0, 60.0), ("long", 100): ("ok", 61.0, 61.0),  # one run each
    }  # fmt: skip
    monkeypatch.setattr(suite, "SYSTEMS", (*suite.SYSTEMS, "slow", "dies", "long"))
    engines = ["facet", "slow", "dies", "long"]
    ctx = _ctx(tmp_path, engines)
    calls = _fake_runs(monkeypatch, script)
    done, history = {}, []
    for rows in (10, 100):
        suite.run_cell(ctx, "w", "phi", rows, Path(f"{rows}.parquet"), ["dc"], None, done,
                       history)  # fmt: skip
    recs = {(r["system"], r["rows"]): r for r in history}
    assert recs[("slow", 10)]["status"] == "ok" and recs[("slow", 10)]["runs"] == 3
    assert recs[("slow", 100)]["status"] == "projected" and ("slow", 100) not in calls
    assert recs[("dies", 10)]["status"] == "timeout" and calls.count(("dies", 10)) == 1
    assert recs[("dies", 100)]["status"] == "skipped" and ("dies", 100) not in calls
    assert calls.count(("long", 10)) == 1 and "once-over" in recs[("long", 10)]["note"]
    assert calls.count(("facet", 100)) == 4  # a warm-up and three runs
    assert {r["check"] for r in history if r["rows"] == 10} == {"equal"}
    assert {r["check"] for r in history if r["rows"] == 100} == {"unchecked"}  # facet alone
    # recorded cells are not run again (resumable)
    before = len(calls)
    suite.run_cell(ctx, "w", "phi", 10, Path("10.parquet"), ["dc"], None, done, history)
    assert len(calls) == before
    # the report: every cell, the DuckDB target table, a chart
    monkeypatch.setattr(suite, "RESULTS", tmp_path)
    monkeypatch.setattr(suite, "still_measures", lambda code, system: code == ctx.code)
    md, png = suite.write_report(ctx.args.jsonl, "test")
    text = md.read_text()
    assert "| phi | 100 | A | slow | projected (20.0 s at 10" in text
    assert "timeout (> 100 s)" in text and png.stat().st_size > 10_000


def test_a_count_mismatch_fails_the_suite(tmp_path, monkeypatch):
    ctx = _ctx(tmp_path, ["facet", "duckdb"], repeat=1)

    def run_once(ctx, system, table, dcs, rules):
        n = 7 if system == "facet" else 8
        return {"status": "ok", "wall": 1.0, "rss": 1, "group_rss": 1, "load1": [0, 0],
                "seconds": 0.1, "violations": [n], "results": [{"count": n, "seconds": 0.1}]}  # fmt: skip

    monkeypatch.setattr(suite, "run_once", run_once)
    history: list = []
    suite.run_cell(ctx, "w", "phi", 10, Path("10.parquet"), ["dc"], None, {}, history)
    assert ctx.failed and {r["check"] for r in history} == {"MISMATCH"}


def test_a_record_is_current_while_what_it_measures_is_unchanged(tmp_path, monkeypatch):
    """A change to facet re-runs facet's cells only, a change to a peer's worker that
    peer's; a change to a data generator every cell; a dirty record is never reused."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True,
                              text=True).stdout.strip()  # fmt: skip

    git("init", "-q")
    git("config", "user.email", "t@t")
    git("config", "user.name", "t")
    for rel in ("facet/x.py", "bench/peer_worker.py", "bench/polars_worker.py", "data/taxgen.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("# v1\n")
    git("add", "-A")
    git("commit", "-qm", "v1")
    monkeypatch.setattr(suite, "REPO", tmp_path)

    def current(code: str) -> dict[str, bool]:
        suite.still_measures.cache_clear()
        return {s: suite.still_measures(code, s) for s in ("facet", "duckdb", "polars")}

    v1 = git("rev-parse", "HEAD")[:10]
    assert suite.engine_code() == v1
    assert current(v1) == {"facet": True, "duckdb": True, "polars": True}
    (tmp_path / "bench/peer_worker.py").write_text("# v2\n")  # uncommitted counts too
    assert current(v1) == {"facet": True, "duckdb": False, "polars": True}
    assert suite.engine_code() == v1 + " (dirty)" and not any(current(v1 + " (dirty)").values())
    git("commit", "-qam", "v2")
    (tmp_path / "facet/x.py").write_text("# v2\n")
    git("commit", "-qam", "v3")
    assert current(v1) == {"facet": False, "duckdb": False, "polars": True}
    (tmp_path / "facet/new.py").write_text("")  # an untracked file under facet/
    v3 = git("rev-parse", "HEAD")[:10]
    assert current(v3) == {"facet": False, "duckdb": True, "polars": True}
    (tmp_path / "facet/new.py").unlink()
    (tmp_path / "data/taxgen.py").write_text("# v2\n")
    assert current(v3) == {"facet": False, "duckdb": False, "polars": False}
    suite.still_measures.cache_clear()


@pytest.mark.parametrize("dc", suite.PAPER_DCS, ids=lambda d: d.id)
def test_paper_dcs_parse(dc):
    shape = peer_dc.parse(dc.text)
    assert not shape.single_tuple
    assert dc.equality_only == all(p.op == "=" for p in shape.preds)


def test_a_resumed_run_looks_back_on_cells_not_breakdowns(tmp_path, monkeypatch):
    """A resumed run rebuilds its history from the JSONL, where facet's breakdowns
    (no ``seconds``) sit beside the cells: the budget rules must see cells only."""
    script = {("facet", 10): ("ok", 0.1, 1.0), ("facet", 100): ("ok", 1.0, 2.0),
              ("slow", 10): ("ok", 20.0, 21.0)}  # fmt: skip
    monkeypatch.setattr(suite, "SYSTEMS", (*suite.SYSTEMS, "slow"))
    ctx = _ctx(tmp_path, ["facet", "slow"])
    calls = _fake_runs(monkeypatch, script)
    suite.run_cell(ctx, "w", "phi", 10, Path("10.parquet"), ["dc"], None, {}, [])
    breakdown = {"bench": suite.BENCH, "workload": "breakdown", "dc": "phi", "rows": 10,
                 "system": "facet", "code": ctx.code, "params": ctx.params, "status": "ok"}  # fmt: skip
    common.append_jsonl(ctx.args.jsonl, breakdown)
    history = suite.cell_history(common.read_jsonl(ctx.args.jsonl), ctx.params)
    assert {r["workload"] for r in history} == {"w"} and len(history) == 2
    suite.run_cell(ctx, "w", "phi", 100, Path("100.parquet"), ["dc"], None, {}, history)
    recs = {(r["system"], r["rows"]): r for r in history}
    assert recs[("slow", 100)]["status"] == "projected" and ("slow", 100) not in calls
    assert recs[("facet", 100)]["status"] == "ok"


def test_the_report_names_the_machine_of_every_cell(tmp_path, monkeypatch):
    """Cells measured on different machines (a resumed run on another host) are
    told apart: one header line per machine, a machine column per cell."""
    script = {("facet", 10): ("ok", 0.1, 1.0), ("facet", 100): ("ok", 1.0, 2.0)}
    ctx = _ctx(tmp_path, ["facet"])
    _fake_runs(monkeypatch, script)
    suite.run_cell(ctx, "w", "phi", 10, Path("10.parquet"), ["dc"], None, {}, [])
    ctx.machine = {**ctx.machine, "cpu_model": "Other CPU", "date": "2099-01-01T00:00:00+00:00"}
    suite.run_cell(ctx, "w", "phi", 100, Path("100.parquet"), ["dc"], None, {}, [])
    monkeypatch.setattr(suite, "RESULTS", tmp_path)
    monkeypatch.setattr(suite, "still_measures", lambda code, system: code == ctx.code)
    md, _ = suite.write_report(ctx.args.jsonl, "test")
    text = md.read_text()
    assert "* machine A: " in text and "* machine B: Other CPU" in text
    assert "| phi | 10 | A | facet |" in text and "| phi | 100 | B | facet |" in text
    assert "times across machines do not" in text


def test_the_report_names_every_command_its_cells_came_from(tmp_path, monkeypatch):
    """A report gathers cells from several invocations (a resumed run, a re-run of
    a few cells): each command is listed with how many cells it measured."""
    script = {("facet", 10): ("ok", 0.1, 1.0), ("facet", 100): ("ok", 1.0, 2.0)}
    ctx = _ctx(tmp_path, ["facet"])
    _fake_runs(monkeypatch, script)
    suite.run_cell(ctx, "w", "phi", 10, Path("10.parquet"), ["dc"], None, {}, [])
    ctx.command = "python -m bench.suite --rows 100 --dcs phi"
    ctx.machine = {**ctx.machine, "date": "2099-01-01T00:00:00+00:00"}
    suite.run_cell(ctx, "w", "phi", 100, Path("100.parquet"), ["dc"], None, {}, [])
    monkeypatch.setattr(suite, "RESULTS", tmp_path)
    monkeypatch.setattr(suite, "still_measures", lambda code, system: code == ctx.code)
    md, _ = suite.write_report(ctx.args.jsonl, "test")
    text = md.read_text()
    assert "* commands (in the order they ran; the cells each measured):" in text
    first = text.index("`python -m bench.suite (test)` (1 cell)")
    assert first < text.index("`python -m bench.suite --rows 100 --dcs phi` (1 cell)")
    assert suite.command_lines([{"command": "c", "machine": {"date": "1"}}]) == ["* command: `c`"]


def test_ratios_across_machines_are_marked_and_meet_no_target(tmp_path, monkeypatch):
    """facet re-run on another machine than a peer's recorded cell: the ratio is
    marked, the DuckDB target table gives no verdict, and the header says so."""
    script = {("facet", 10): ("ok", 0.01, 1.0), ("duckdb", 10): ("ok", 1.0, 2.0)}
    ctx = _ctx(tmp_path, ["facet", "duckdb"])
    _fake_runs(monkeypatch, script)
    monkeypatch.setitem(suite.BY_ID, "phi", suite.BY_ID["phi7"])
    suite.run_cell(ctx, "w", "phi", 10, Path("10.parquet"), ["dc"], None, {}, [])
    ctx.machine = {**ctx.machine, "cpu_model": "Other CPU", "date": "2099-01-01T00:00:00+00:00"}
    ctx.args.engines = ["facet"]
    suite.run_cell(ctx, "w", "phi", 10, Path("10.parquet"), ["dc"], None, {}, [])
    monkeypatch.setattr(suite, "RESULTS", tmp_path)
    monkeypatch.setattr(suite, "still_measures", lambda code, system: code == ctx.code)
    md, _ = suite.write_report(ctx.args.jsonl, "test")
    text = md.read_text()
    assert "in 1 DC/size cells facet and a system ran on different ones" in text
    assert "100.0x (machines differ)" in text
    assert "not compared (facet on B, DuckDB on A)" in text
    assert "Every DC meets its target: **NO**" in text


def test_the_report_compares_counts_across_cells_run_apart(tmp_path, monkeypatch):
    """facet and DuckDB measured by separate invocations (each cell "unchecked" when
    it ran, one system in its run): the report compares the counts it shows, and a
    disagreement between them is a MISMATCH there."""
    script = {("facet", 10): ("ok", 0.01, 1.0), ("duckdb", 10): ("ok", 1.0, 2.0)}
    ctx = _ctx(tmp_path, ["facet"])
    _fake_runs(monkeypatch, script)
    monkeypatch.setitem(suite.BY_ID, "phi", suite.BY_ID["phi7"])
    suite.run_cell(ctx, "w", "phi", 10, Path("10.parquet"), ["dc"], None, {}, [])
    ctx.args.engines = ["duckdb"]
    suite.run_cell(ctx, "w", "phi", 10, Path("10.parquet"), ["dc"], None, {}, [])
    recs = [json.loads(line) for line in ctx.args.jsonl.read_text().splitlines()]
    assert {r["check"] for r in recs} == {"unchecked"}
    monkeypatch.setattr(suite, "RESULTS", tmp_path)
    monkeypatch.setattr(suite, "still_measures", lambda code, system: code == ctx.code)
    md, _ = suite.write_report(ctx.args.jsonl, "test")
    rows = [line for line in md.read_text().splitlines() if "| 10 | A |" in line]
    assert len(rows) == 2 and all(line.endswith("| equal |") for line in rows)
    # the same cells with DuckDB counting otherwise
    for r in recs:
        if r["system"] == "duckdb":
            r["violations"] = [8]
    ctx.args.jsonl.write_text("".join(json.dumps(r) + "\n" for r in recs))
    md, _ = suite.write_report(ctx.args.jsonl, "test")
    rows = [line for line in md.read_text().splitlines() if "| 10 | A |" in line]
    assert len(rows) == 2 and all(line.endswith("| MISMATCH |") for line in rows)


def test_the_spark_floor_splits_a_count_by_its_steps():
    import spark_floor_worker

    events = [(1.0, "statistics"), (2.5, "spreading rows"), (3.0, "4 tasks")]
    assert spark_floor_worker._steps(events, 7.0) == {
        "statistics": 1.5,
        "spreading rows": 0.5,
        "tasks": 4.0,
    }
    # a step met twice (two spreads) adds up; no step: nothing
    twice = [(0.0, "spreading rows"), (1.0, "2 tasks"), (3.0, "spreading rows"), (3.5, "8 tasks")]
    assert spark_floor_worker._steps(twice, 4.0) == {"spreading rows": 1.5, "tasks": 2.5}
    assert spark_floor_worker._steps([], 1.0) == {}
