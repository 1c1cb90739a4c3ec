"""Kernel benchmarks of the hot path (paper §4-§5): encoding, refinement, counting.

    bench/kernels.sh                  # run, save JSON, compare with the previous saved run

Inputs are what the engine passes: int32 code rows (dense ranks), one reflexive group of
n = 1,000,000 tids (the whole table before the first refinement), the tuning array. Two code
distributions: ``few`` (50 distinct values in the first row: few large groups, like a state)
and ``many`` (n / 4 distinct values: many small groups, like a zip code). The second row is a
wide rank (price-like) in both. JIT compilation is excluded (one untimed call first); every
benchmark checks its result against a closed form or NumPy so it cannot time a broken call.

* ``text_codes``: exact dictionary codes of 1M short strings (``kernels/dictionary.py``).
* ``dense_ranks``: order codes of 1M wide int64 values by radix digits (``kernels/ranks.py``).
* ``histogram_ranks``: order codes of 1M int64 values over a range of 4M (the widest the
  histogram route takes at 1M rows: a presence bitmap, ones counted a word).
* ``refine_equality`` / ``refine_hsm``: the first refinement, ``t.A = t'.A`` or
  ``t.B > t'.B`` (``kernels/refine.py``).
* ``count_keyed``: degrees under ``t.A = t'.A and t.B != t'.B`` (``kernels/count.py``, the
  FD shape, no sort).
* ``count_two``: degrees of one reflexive group under two inequalities (sweep + Fenwick).
"""

from __future__ import annotations

import numpy as np
import pytest

from facet.kernels.count import _count_two, count_groups, count_keyed
from facet.kernels.dictionary import encode_bytes
from facet.kernels.ranks import dense_ranks, histogram_ranks
from facet.kernels.refine import refine
from facet.planner.config import DEFAULT

N = 1_000_000
TUNE = DEFAULT.kernel_tuning()
OP_GT, OP_LT = 4, 2  # kernels/common.py operator codes (checked below)


def _codes(kind: str) -> tuple[np.ndarray, int, int]:
    rng = np.random.default_rng(0)
    d0 = 50 if kind == "few" else N // 4
    a = rng.integers(0, d0, N)
    b = rng.integers(0, 10**7, N)
    ra = np.unique(a, return_inverse=True)[1]
    rb = np.unique(b, return_inverse=True)[1]
    codes = np.ascontiguousarray(np.vstack([ra, rb]).astype(np.int32))
    return codes, int(ra.max()) + 1, int(rb.max()) + 1


def _whole() -> tuple[np.ndarray, np.ndarray]:
    return np.arange(N, dtype=np.int32), np.array([[0, N, 0, 0, 0, N, 0, 0]], np.int64)


def test_operator_codes():
    from facet.kernels.common import OP_GT as GT
    from facet.kernels.common import OP_LT as LT

    assert (GT, LT) == (OP_GT, OP_LT)


def test_bench_text_codes(benchmark):
    rng = np.random.default_rng(0)
    words = [
        f"{x:03d}-{y:04d}" for x, y in zip(rng.integers(0, 1000, N), rng.integers(0, 10_000, N))
    ]
    data = np.frombuffer("".join(words).encode(), np.uint8)
    offsets = np.arange(0, 8 * N + 1, 8, dtype=np.int64)
    valid = np.ones(N, np.bool_)
    encode_bytes(offsets, data, valid, TUNE)
    codes, _first, _hashes, exact = benchmark.pedantic(
        encode_bytes, args=(offsets, data, valid, TUNE), rounds=7, warmup_rounds=1
    )
    assert exact and int(codes.max()) + 1 == len(set(words))


def test_bench_dense_ranks(benchmark):
    v = np.random.default_rng(0).integers(-(10**7), 10**7, N)
    ok = np.ones(N, np.bool_)
    lo = np.int64(v.min())
    bits = int(v.max() - v.min()).bit_length()
    dense_ranks(v, ok, lo, bits)
    ranks, uniq = benchmark.pedantic(dense_ranks, args=(v, ok, lo, bits), rounds=7, warmup_rounds=1)
    assert np.array_equal(uniq, np.unique(v)) and np.array_equal(uniq[ranks], v)


def test_bench_histogram_ranks(benchmark):
    span = 4 * N
    v = np.random.default_rng(0).integers(0, span, N)
    ok = np.empty(0, np.bool_)  # every row valid
    out = np.empty(N, np.int32)
    histogram_ranks(v, ok, np.int64(0), span, out)
    ranks, uniq = benchmark.pedantic(
        histogram_ranks, args=(v, ok, np.int64(0), span, out), rounds=7, warmup_rounds=1
    )
    assert np.array_equal(uniq, np.unique(v)) and np.array_equal(uniq[ranks], v)


@pytest.mark.parametrize("kind", ["few", "many"])
def test_bench_refine_equality(benchmark, kind):
    codes, d0, _ = _codes(kind)
    buf, desc = _whole()
    args = (buf, desc, codes, 0, 0, d0, 0, 0, TUNE)  # kind 0: equality
    refine(*args)
    obuf, odesc = benchmark.pedantic(refine, args=args, rounds=7, warmup_rounds=1)
    sizes = np.bincount(codes[0], minlength=d0)
    assert len(odesc) == int((sizes > 1).sum())  # a one-row block holds no pair


@pytest.mark.parametrize("kind", ["few", "many"])
def test_bench_refine_hsm(benchmark, kind):
    codes, _, d1 = _codes(kind)
    buf, desc = _whole()
    args = (buf, desc, codes, 1, 1, d1, 2, OP_GT, TUNE)  # kind 2: one inequality (HSM)
    refine(*args)
    obuf, odesc = benchmark.pedantic(refine, args=args, rounds=7, warmup_rounds=1)
    pairs = int(((odesc[:, 1] - odesc[:, 0]) * (odesc[:, 5] - odesc[:, 4])).sum())
    sizes = np.bincount(codes[1], minlength=d1)
    assert pairs == (N * N - int((sizes.astype(np.int64) ** 2).sum())) // 2


@pytest.mark.parametrize("kind", ["few", "many"])
def test_bench_count_keyed(benchmark, kind):
    codes, d0, d1 = _codes(kind)
    buf, desc = _whole()
    # degrees under t.B != t'.B within one reflexive group (the keyed sink's closed form)
    deg_l, deg_r, stamp = (np.zeros(N, np.int64) for _ in range(3))

    def run():
        deg_l[:] = 0
        deg_r[:] = 0
        return count_keyed(buf, desc, codes, 1, 1, d1, True, 1, deg_l, deg_r, stamp, 0, TUNE)

    run()
    benchmark.pedantic(run, rounds=7, warmup_rounds=1)
    sizes = np.bincount(codes[1], minlength=d1).astype(np.int64)
    assert int(deg_l.sum()) == N * N - int((sizes**2).sum())


def test_bench_count_two_lopsided(benchmark):
    """A scoped run's or an append's group: 10k rows against 1M, both keys over ~1M
    codes (price/discount-like: the second key few codes; recoded to the small
    side's values, counted from the prefix grid)."""
    rng = np.random.default_rng(4)
    m = 10_000
    q1, p1 = rng.integers(0, N, m), rng.integers(0, N, N)
    q2, p2 = rng.integers(0, 11, m), rng.integers(0, 11, N)
    out_q, out_p = np.empty(m, np.int64), np.empty(N, np.int64)

    def run():
        _count_two(q1, q2, p1, p2, OP_GT, OP_LT, N, 11, out_q, out_p, TUNE)

    run()
    benchmark.pedantic(run, rounds=7, warmup_rounds=1)
    assert out_q.sum() == out_p.sum()
    for i in (0, 1, m - 1):  # spot checks against brute force
        assert out_q[i] == int(np.count_nonzero((q1[i] > p1) & (q2[i] < p2)))


def test_bench_dominance_append(benchmark):
    """An append's counts from a dominance index level (facet/dominance_index.py):
    10k batch rows against a level of 1M price/discount-like points -- both orthant
    families in one pass, then the old rows in the union of the batch's orthants."""
    from facet.dominance_index import _level, _orthants, _union, shape
    from facet.language.normalize import normalize
    from facet.language.parser import parse_dc

    rng = np.random.default_rng(6)
    m = 10_000
    x, y = rng.integers(0, N, N), rng.integers(0, 11, N)
    lv = _level([], x, y)
    sh = shape(normalize(parse_dc("not(t.p > t'.p and t.d < t'.d)")[0]))
    qx = np.sort(rng.integers(0, N, m))
    vals = {"p": qx, "d": rng.integers(0, 11, m)}
    lo, hi = np.zeros(m, np.int64), np.full(m, N, np.int64)
    got = {}

    def run():
        (c2, c1), (b2, b1) = _orthants(lv, sh, vals, lo, hi)
        got["c"] = (c2, c1, _union(lv, b2, b1, None, lo, hi))

    run()
    benchmark.pedantic(run, rounds=7, warmup_rounds=1)
    c2, c1, union = got["c"]
    for i in (0, 1, m // 2, m - 1):  # spot checks against brute force
        assert c2[i] == int(np.count_nonzero((qx[i] > x) & (vals["d"][i] < y)))
        assert c1[i] == int(np.count_nonzero((x > qx[i]) & (y < vals["d"][i])))
    # t is involved when some s has s.p > t.p, s.d < t.d, or s.p < t.p, s.d > t.d
    d = vals["d"]
    most = np.array([qx[d < v].max(initial=-1) for v in range(11)])
    least = np.array([qx[d > v].min(initial=N) for v in range(11)])
    assert union == int(np.count_nonzero((x < most[y]) | (x > least[y])))


def test_bench_count_two(benchmark):
    codes, _, _ = _codes("few")
    buf, desc = _whole()
    doms = np.array([int(codes[0].max()) + 1, int(codes[1].max()) + 1], np.int64)
    rows = np.array([0, 1], np.int64)
    ops = np.array([OP_GT, OP_LT], np.int64)
    deg_l, deg_r, stamp = (np.zeros(N, np.int64) for _ in range(3))
    todo = np.zeros(1, np.bool_)

    def run():
        deg_l[:] = 0
        deg_r[:] = 0
        return count_groups(buf, desc, codes, doms, rows, rows, ops, rows, rows, 1,
                            deg_l, deg_r, stamp, 0, todo, 4096, TUNE)  # fmt: skip

    run()
    benchmark.pedantic(run, rounds=7, warmup_rounds=1)
    sub = np.random.default_rng(1).choice(N, 2_000, replace=False)
    a, b = codes[0][sub], codes[1][sub]
    # the sampled rows' degrees equal a direct count against the whole table
    want = [int(((a[i] > codes[0]) & (b[i] < codes[1])).sum()) for i in range(len(sub))]
    assert deg_l[sub].tolist() == want
