"""data/flightsgen.py: the Flights-like table of the benchmark suite (paper phi8, phi9)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow.compute as pc

import facet

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "data"))
import flightsgen  # noqa: E402

PHI8 = "not(t.origin = t'.dest and t.dest = t'.origin and t.distance != t'.distance)"
PHI9 = (
    "not(t.origin = t'.origin and t.dest = t'.dest and t.flights > t'.flights and "
    "t.passengers < t'.passengers)"
)


def _counts(table) -> list[int]:
    return [d.violations for d in facet.detect(table, dcs=[PHI8, PHI9]).dcs]


def test_exact_rows_deterministic_and_clean_without_errors():
    clean = flightsgen.generate(20_000, seed=3, error_rate=0.0)
    assert clean.num_rows == 20_000
    assert clean.equals(flightsgen.generate(20_000, seed=3, error_rate=0.0))
    assert not clean.equals(flightsgen.generate(20_000, seed=4, error_rate=0.0))
    assert _counts(clean) == [0, 0]
    assert not pc.any(pc.equal(clean.column("origin"), clean.column("dest"))).as_py()


def test_errors_break_both_dcs():
    dirty = flightsgen.generate(20_000, seed=3, error_rate=0.002)
    phi8, phi9 = _counts(dirty)
    assert phi8 > 0 and phi9 > 0


def test_hubs_carry_a_large_share():
    t = flightsgen.generate(50_000, seed=0)
    _, counts = np.unique(np.asarray(t.column("origin").to_pylist()), return_counts=True)
    top = np.sort(counts)[::-1][: max(1, len(counts) // 20)]
    assert top.sum() > 0.3 * t.num_rows


def test_cli_writes_parquet(tmp_path):
    out = tmp_path / "f.parquet"
    assert flightsgen.main(["--rows", "1000", str(out)]) == 0
    import pyarrow.parquet as pq

    assert pq.read_metadata(out).num_rows == 1000
