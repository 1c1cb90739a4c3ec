"""The Python API: inputs of every kind, the result object, lazy pairs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import facet
from facet.cli import main

ROOT = Path(__file__).resolve().parent.parent
TAX = ROOT / "data" / "tax" / "tax_dirty_0010k.csv"

ROWS = {
    "zip": ["01907", "01907", "02110", "02110", None],
    "city": ["Lynn", "Salem", "Boston", "Boston", "X"],
    "salary": [100, 200, 150, None, 50],
}


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow", "batch"])
def test_dataframes(kind):
    data = {
        "pandas": pd.DataFrame(ROWS),
        "polars": pl.DataFrame(ROWS),
        "arrow": pa.table(ROWS),
        "batch": pa.RecordBatch.from_pydict(ROWS),
    }[kind]
    res = facet.detect(data, dcs=["zip -> city", "not(t.salary > 120)"], output="pairs")
    assert [d.violations for d in res.dcs] == [2, 2]
    assert [d.rows_involved for d in res.dcs] == [2, 2]
    pairs = res.pairs().to_pylist()
    assert {(p["t1"], p["t2"]) for p in pairs if p["dc"] == 0} == {(0, 1), (1, 0)}


def test_result_object_and_json_match_cli(capsys):
    res = facet.detect(TAX, dcs=["zip -> city", "zip -> state"])
    d = res.to_dict()
    assert d["rows"] == 10_000 and d["engine"] == "local"
    assert [x["violations"] for x in d["dcs"]] == [40552, 39818]
    assert res[0].violations == 40552 and res.total_violations == 40552 + 39818
    main(["detect", str(TAX), "--dc", "zip -> city", "--dc", "zip -> state", "--format", "json"])
    cli = json.loads(capsys.readouterr().out)
    strip = ("seconds", "load_seconds", "warmup_seconds")
    for doc in (d, cli):
        for k in strip:
            doc.pop(k, None)
        for x in doc["dcs"]:
            x.pop("seconds")
    cli["source"] = d["source"]
    assert cli == d


def test_pairs_after_a_count_are_lazy_and_limited():
    res = facet.detect(TAX, dcs=["zip -> city"])
    batches = list(res.iter_pairs(limit=100))
    assert sum(b.num_rows for b in batches) == 100
    assert res.pairs().num_rows == 40552
    blocks = res.blocks()
    expanded = sum(len(r["t1"]) * len(r["t2"]) for r in blocks.to_pylist())
    assert expanded == 40552  # zip -> city blocks are disjoint sides


def test_rules_text_and_lists():
    text = "# two rules\nzip -> city\nbig: not(t.salary > 100)\n"
    a = facet.detect(pa.table(ROWS), text)
    b = facet.detect(pa.table(ROWS), ["zip -> city", "big: not(t.salary > 100)"])
    assert [x.violations for x in a.dcs] == [x.violations for x in b.dcs] == [2, 2]
    assert a.dcs[1].name == "big"


def test_errors_are_facet_input_errors():
    with pytest.raises(facet.FacetInputError):
        facet.detect(pa.table(ROWS), dcs=["not(t.nope = t'.nope)"])
    with pytest.raises(facet.DCSyntaxError):
        facet.detect(pa.table(ROWS), dcs=["not(t.zip == )"])
    with pytest.raises(facet.FacetInputError):
        facet.detect(pa.table(ROWS), dcs=["zip -> city"], output="nope")


def test_a_very_long_unknown_column_name_is_cut_in_its_one_line_error():
    """A 100,000-character name was echoed whole (a 200 KB line), and matched
    against the header for a suggestion."""
    name = "x" * 99_999 + "y"
    table = pa.table({"a": [1, 2], "x" * 100_000: [1, 2]})
    with pytest.raises(facet.FacetInputError) as info:
        facet.detect(table, dcs=[f"not(t.`{name}` = t'.a)"])
    msg = str(info.value)
    assert len(msg) < 300 and "x" * 60 + "... (100,000 characters)" in msg
    assert msg.endswith("check the spelling and the header")


def test_an_impossible_offset_does_not_parse():
    """docs/semantics.md §4.3: offsets up to 23:59 (Arrow reads +05:60 as +06:00)."""
    import pyarrow as pa

    import facet.column_types as ct

    texts = ["2020-01-01T00:00+05:60", "2020-01-01T00:00+0560", "2020-01-01T00:00+24",
             "2020-01-01T00:00-23:59", "2020-01-01T00:00z", "2020-01-01T00:00+05"]  # fmt: skip
    got = [None if v is None else str(v) for v in ct.parse_timestamps(pa.array(texts)).to_pylist()]
    assert got == [None, None, None, "2020-01-01 23:59:00+00:00", "2020-01-01 00:00:00+00:00",
                   "2019-12-31 19:00:00+00:00"]  # fmt: skip


def test_iso_dates_parse_in_bulk_and_zones_only_after_a_time(monkeypatch):
    """A date's '-22' is not a zone: date-only text parses in one Arrow cast (the
    value-by-value fallback is only for impossible dates), zones after a time."""
    import pyarrow as pa
    import pyarrow.compute as pc

    import facet.column_types as ct

    zone = [
        bool(x)
        for x in pc.match_substring_regex(
            pa.array(["2020-01-22", "2020-01-22T10:00-05:00", "2020-01-22 10:00:00Z"]),
            ct._ZONE_RE,
        ).to_pylist()
    ]
    assert zone == [False, True, True]
    calls = []
    real = ct._cast_ts
    monkeypatch.setattr(
        ct,
        "_cast_ts",
        lambda a, tz, unit="us": calls.append((tz, a.to_pylist())) or real(a, tz, unit),
    )
    got = ct.parse_timestamps(
        pa.array(["2020-01-22", "1999-12-31", None, "2020-01-22T01:00+01:00"])
    )
    assert got.to_pylist()[2] is None
    assert [str(v) for v in got.to_pylist() if v is not None] == [
        "2020-01-22 00:00:00+00:00",
        "1999-12-31 00:00:00+00:00",
        "2020-01-22 00:00:00+00:00",
    ]
    # the zoned cast sees only the zoned value (a date there would fail the bulk cast)
    zoned = dict(calls)["UTC"]
    assert [v for v in zoned if v is not None] == ["2020-01-22T01:00+01:00"]


@pytest.mark.parametrize(
    ("dc", "blocks"),
    [
        ("not(t.A = 5 and t'.A = 1)", []),  # the left filter keeps no row
        ("not(t.A = 1 and t'.A = 5)", []),  # the right one keeps none
        ("not(t.A = 2 and t'.A = 2)", []),  # one row facing itself
        ("not(t.A = 2 and t'.B = 2)", []),  # the same row through two filters
        ("not(t.A = 2 and t'.B = 1)", [([1], [0, 2])]),
    ],
)
def test_blocks_hold_at_least_one_pair(dc, blocks):
    """A block stands for its pairs (t, t'), t != t'; row filters that leave a
    side empty, or one row on both, make no block (a contract probe found
    ``[[], [0]]`` written, and counted in ``written``, for 0 violations)."""
    table = pa.table({"A": [1, 2, 1], "B": [1, 2, 1]})
    for mode in ("sequential", "cost-trie"):
        res = facet.detect(table, dcs=[dc], output="blocks", mode=mode)
        got = [(r["t1"], r["t2"]) for r in res.blocks().to_pylist()]
        assert got == blocks, dc
        assert res.dcs[0].written == len(blocks)


def test_groups_with_pairs_reads_single_tids_around_holes():
    """``Groups.with_pairs``: a side of one tid is its range less its hole."""
    from facet.engine.groups import Groups

    buf = np.array([7, 8, 9, 7], np.int32)
    desc = np.array(
        [
            [0, 2, 0, 1, 1, 2, 1, 1],  # {8} x {8}: the hole takes the first tid
            [0, 2, 1, 2, 0, 1, 0, 0],  # {7} x {7}: the hole takes the last one
            [0, 2, 0, 1, 3, 4, 3, 3],  # {8} x {7}
            [0, 0, 0, 0, 0, 3, 0, 0],  # an empty left side
            [0, 1, 0, 0, 0, 1, 0, 0],  # {7} x {7}, one range for both sides
            [0, 2, 0, 0, 0, 2, 0, 0],  # {7, 8} x {7, 8}
        ],
        np.int64,
    )
    got = Groups(buf, desc).with_pairs().tolist()
    assert got == [False, False, True, False, False, True]
