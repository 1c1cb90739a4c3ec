"""Kernel benchmarks for the IEJoin refinement (``facet.kernels.iejoin.refine_iejoin``).

    .venv/bin/python -m pytest bench/test_bench_iejoin.py --benchmark-enable

One reflexive group of n = 100,000 rows refined by the DC pair of the paper's Figure 3
experiment, ``t.A > t'.A and t.B < t'.B`` (codes are dense ranks, as the engine's):

* ``low``: B increases with A (for each A value, B in {2A, 2A + 1}; 50,000 distinct A
  values), then 0.1% of the rows get B raised -- about 1e4 violating pairs;
* ``high``: B = A + Gaussian noise (sigma 180) over a permutation A -- about 1e7 pairs;
* ``dense``: B = -A, every pair with A > A' violates (~5e9 pairs): each match set is one
  run of the sorted copy, so the output stays O(n);
* ``small_groups``: 25,000 reflexive groups of 4 rows (per-group overhead), independent
  random A and B.

JIT compilation is excluded (one untimed call first).  Timings are not asserted.
"""

from __future__ import annotations

import numpy as np
import pytest

from facet.kernels.common import OP_GT, OP_LT
from facet.kernels.iejoin import refine_iejoin
from facet.planner.config import DEFAULT

N = 100_000


def _rank(x: np.ndarray) -> tuple[np.ndarray, int]:
    values, inv = np.unique(x, return_inverse=True)
    return inv.astype(np.int32), int(values.shape[0])


def _case(name: str):
    rng = np.random.default_rng(0)
    if name == "low":
        a = rng.integers(0, 50_000, N)
        b = 2 * a + rng.integers(0, 2, N)
        bad = rng.choice(N, N // 1000, replace=False)
        b[bad] += rng.integers(1, 200, bad.shape[0])
    elif name == "high":
        a = rng.permutation(N)
        b = np.round(a + rng.normal(0.0, 180.0, N)).astype(np.int64)
    elif name == "dense":
        a = rng.permutation(N)
        b = -a
    else:
        a = rng.permutation(N)
        b = rng.permutation(N)
    ca, da = _rank(a)
    cb, db = _rank(b)
    codes = np.ascontiguousarray(np.vstack([ca, cb]), np.int32)
    buf = np.arange(N, dtype=np.int32)
    if name == "small_groups":
        starts = np.arange(0, N, 4)
        desc = np.zeros((starts.shape[0], 8), np.int64)
        desc[:, 0] = starts
        desc[:, 1] = np.minimum(starts + 4, N)
        desc[:, 2] = starts
        desc[:, 3] = starts
        desc[:, 4:] = desc[:, :4]
    else:
        desc = np.array([[0, N, 0, 0, 0, N, 0, 0]], np.int64)
    return buf, desc, codes, 0, 0, OP_GT, 1, 1, OP_LT, da, db, DEFAULT.kernel_tuning()


def _pairs(odesc: np.ndarray) -> int:
    """Pairs of the output (both operators strict: no group pairs a tuple with itself)."""
    return int(((odesc[:, 1] - odesc[:, 0]) * (odesc[:, 5] - odesc[:, 4])).sum())


@pytest.mark.parametrize("name", ["low", "high", "dense", "small_groups"])
def test_bench_refine_iejoin(benchmark, name):
    args = _case(name)
    obuf, odesc = refine_iejoin(*args)  # compile / load the cache, untimed
    pairs = _pairs(odesc)
    benchmark.extra_info.update(
        rows=N, pairs=pairs, groups=int(odesc.shape[0]), buffer=int(obuf.shape[0])
    )
    obuf, odesc = benchmark.pedantic(refine_iejoin, args=args, rounds=15, warmup_rounds=2)
    assert _pairs(odesc) == pairs
    if name == "low":
        assert 1_000 <= pairs <= 100_000
    elif name == "high":
        assert 5_000_000 <= pairs <= 20_000_000
    elif name == "dense":
        assert pairs == N * (N - 1) // 2
