"""facet on every real data file + rules file of data/ (bench/README.md "Rules").

Counts must equal the published expected counts; pair sets and rows involved
must equal DuckDB self-joins (tests/sql_oracle.py), for every DC.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import facet
from facet.planner.config import Config
from tests.sql_oracle import duckdb_violations
from tests.test_oracles import EXPECTED, data_file, read_rules

#: pair sets are compared for DCs with at most this many violations (counts always)
MAX_PAIRS = 400_000


def _params():
    out = []
    for c, r, e in EXPECTED:
        big = "tax" in c and "0010k" not in c
        out.append(
            pytest.param(c, r, e, id=f"{c}+{Path(r).name}", marks=[pytest.mark.slow] if big else [])
        )
    return out


def _resolve(csv_rel: str, rules_rel: str):
    return data_file(csv_rel), data_file(rules_rel)


@pytest.mark.parametrize(("csv_rel", "rules_rel", "expected"), _params())
def test_counts_equal_published(csv_rel, rules_rel, expected):
    path, rules = _resolve(csv_rel, rules_rel)
    res = facet.detect(path, rules)
    assert [d.violations for d in res.dcs] == expected


def _keys(t1: np.ndarray, t2: np.ndarray, n: int) -> np.ndarray:
    return np.sort(t1.astype(np.int64) * (n + 1) + t2.astype(np.int64))


#: every kernel (nested off); pair by pair where cheaper; and the parallel paths from one
#: row (whole-table counting sorts, leading equalities grouped at once, fused counts cut
#: into one range of codes a thread; keys and FDs through their plans) that real tables
#: reach only from ~100k rows
CONFIGS = {
    "kernels": Config(nested_pairs=0),
    "nested": Config(nested_pairs=4096),
    "parallel": Config(threads=2, parallel_work=1, fuse_split_tids=0, key_prefilter=False),
}


@pytest.mark.parametrize(("csv_rel", "rules_rel", "expected"), _params())
@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_pairs_equal_duckdb(csv_rel, rules_rel, expected, config):
    path, rules = _resolve(csv_rel, rules_rel)
    dcs = read_rules(rules)
    oracle = duckdb_violations(path, dcs)
    small = [i for i, e in enumerate(expected) if e <= MAX_PAIRS]
    res = facet.detect(path, rules, output="pairs", config=config)
    n = res.rows
    pairs = res.pairs()
    dc_col = pairs.column("dc").to_numpy()
    for i, d in enumerate(res.dcs):
        want_pairs, want_rows = oracle[i]
        assert d.violations == len(want_pairs) == expected[i], d.dc
        assert d.rows_involved == want_rows, d.dc
        if i not in small:
            continue
        sel = dc_col == i
        t1 = pairs.column("t1").to_numpy()[sel]
        if d.arity == 1:
            assert sorted(t1.tolist()) == sorted(want_pairs)
            continue
        t2 = pairs.column("t2").to_numpy()[sel]
        want = np.array(sorted(want_pairs), np.int64).reshape(-1, 2)
        assert np.array_equal(_keys(t1, t2, n), _keys(want[:, 0], want[:, 1], n)), d.dc
