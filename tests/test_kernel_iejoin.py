"""The IEJoin refinement kernel (``facet.kernels.iejoin.refine_iejoin``) against brute force.

Property tests: random code matrices (ties from small domains, wide domains up to 2^31,
sparse codes, long tie runs, NULL = -1; tests/strategies.py), random batches
of groups built by hand -- reflexive, non-reflexive with overlapping sides, sides with
holes, sub-slices of another group's slice -- and every one of the 16 operator pairs on
same- and cross-column predicates.  Expanding the output groups must give exactly the
multiset of satisfying pairs ``(t, t')``, ``t != t'``, of the input groups (so no pair
twice), and the output must be well-formed.  Every property test also draws a kernel
tuning with extreme thresholds (insertion sort for every side or none, counting or
comparison sorts).  Plus deterministic cases: the running
examples of Khayyat et al. (PVLDB 2015), ties, all-equal columns, empty sides, one row.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facet.kernels.common import OP_GE, OP_GT, OP_LE, OP_LT, compare_arrays
from facet.kernels.iejoin import refine_iejoin
from facet.planner.config import DEFAULT
from tests.strategies import code_matrices, examples, kernel_tunes

TUNE = DEFAULT.kernel_tuning()

ORDER_OPS = (OP_LT, OP_LE, OP_GT, OP_GE)
OP_PAIRS = list(itertools.product(ORDER_OPS, ORDER_OPS))

CASES = settings(
    max_examples=examples(2500, 60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------- helpers


def side(buf: np.ndarray, s: int, e: int, hs: int, he: int) -> np.ndarray:
    """``buf[s:e]`` minus the hole ``buf[hs:he]``."""
    if he > hs:
        return np.concatenate([buf[s:hs], buf[he:e]])
    return buf[s:e]


def group_pairs(buf, row, keep=None) -> np.ndarray:
    """The pairs ``(t, t')``, ``t != t'``, of one group as ``t * 2**32 + t'`` (int64),
    filtered by ``keep(t_array, u_array) -> bool array`` when given."""
    left = side(buf, *row[0:4]).astype(np.int64)
    right = side(buf, *row[4:8]).astype(np.int64)
    t = np.repeat(left, right.shape[0])
    u = np.tile(right, left.shape[0])
    ok = t != u
    if keep is not None and t.shape[0]:
        ok &= keep(t, u)
    return (t[ok] << 32) | u[ok]


def expand(buf, desc, keep=None) -> np.ndarray:
    """All pairs of a batch (a multiset), sorted."""
    parts = [group_pairs(buf, row, keep) for row in desc]
    if not parts:
        return np.empty(0, np.int64)
    return np.sort(np.concatenate(parts))


def brute(buf, desc, codes, ra1, rb1, op1, ra2, rb2, op2) -> np.ndarray:
    def keep(t, u):
        x, y = codes[ra1, t], codes[rb1, u]
        z, v = codes[ra2, t], codes[rb2, u]
        ok = (x >= 0) & (y >= 0) & (z >= 0) & (v >= 0)
        return ok & compare_arrays(x, op1, y) & compare_arrays(z, op2, v)

    return expand(buf, desc, keep)


def check_layout(obuf, odesc):
    assert obuf.dtype == np.int32 and obuf.ndim == 1
    assert odesc.dtype == np.int64 and odesc.ndim == 2 and odesc.shape[1] == 8
    for row in odesc:
        ls, le, lhs, lhe, rs, re, rhs, rhe = (int(v) for v in row)
        for s, e, hs, he in ((ls, le, lhs, lhe), (rs, re, rhs, rhe)):
            assert 0 <= s <= e <= obuf.shape[0]
            if he == hs:
                assert hs == s, "an empty hole is written (S, S)"
            else:
                assert s <= hs < he <= e
        # every output group holds at least one pair t != t'
        assert group_pairs(obuf, row).shape[0] > 0


def run_and_check(buf, desc, codes, ra1, rb1, op1, ra2, rb2, op2, dom1=None, dom2=None, tune=TUNE):
    dom = int(codes.max(initial=-1)) + 1
    dom1 = dom if dom1 is None else dom1
    dom2 = dom if dom2 is None else dom2
    obuf, odesc = refine_iejoin(
        np.ascontiguousarray(buf, np.int32),
        np.ascontiguousarray(desc, np.int64),
        np.ascontiguousarray(codes, np.int32),
        ra1,
        rb1,
        op1,
        ra2,
        rb2,
        op2,
        dom1,
        dom2,
        tune,
    )
    check_layout(obuf, odesc)
    got = expand(obuf, odesc)
    want = brute(buf, desc, codes, ra1, rb1, op1, ra2, rb2, op2)
    assert got.shape == want.shape and np.array_equal(got, want), (got, want)
    return obuf, odesc


def reflexive(n: int):
    buf = np.arange(n, dtype=np.int32)
    return buf, np.array([[0, n, 0, 0, 0, n, 0, 0]], np.int64)


def pair_group(left, right):
    left = np.asarray(left, np.int32)
    right = np.asarray(right, np.int32)
    a, b = len(left), len(right)
    return np.concatenate([left, right]), np.array([[0, a, 0, 0, a, a + b, a, a]], np.int64)


# --------------------------------------------------------------------------- strategies


def _place(rng, parts, tids, n, hole_p):
    """Append a side holding ``tids`` to ``parts``: a slice, maybe with a hole of
    other tids in the middle; returns ``(S, E, HS, HE)`` relative to the parts so far."""
    start = sum(len(p) for p in parts)
    if len(tids) and rng.random() < hole_p:
        others = np.setdiff1d(np.arange(n), tids)
        h = rng.choice(others, size=min(len(others), int(rng.integers(1, 4))), replace=False)
        cut = int(rng.integers(0, len(tids) + 1))
        parts.append(tids[:cut])
        parts.append(h)
        parts.append(tids[cut:])
        hs = start + cut
        he = hs + len(h)
        if he == hs:
            hs = he = start
        return start, start + len(tids) + len(h), hs, he
    parts.append(tids)
    return start, start + len(tids), start, start


@st.composite
def batches(draw):
    """``(codes, buf, desc, ra1, rb1, op1, ra2, rb2, op2, dom1, dom2, tune)``."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    m = draw(st.integers(1, 4))
    codes, doms = draw(code_matrices(rows=m, max_n=80, big_n=300))
    n = codes.shape[1]
    if draw(st.booleans()):  # one predicate's two operands on one column each
        ra1 = rb1 = draw(st.integers(0, m - 1))
        ra2 = rb2 = draw(st.integers(0, m - 1))
    else:
        ra1, rb1, ra2, rb2 = (draw(st.integers(0, m - 1)) for _ in range(4))
    op1, op2 = draw(st.sampled_from(OP_PAIRS))
    # rows compared with each other share a code space: one bound for both operands
    dom1 = int(max(doms[ra1], doms[rb1]))
    dom2 = int(max(doms[ra2], doms[rb2]))

    n_groups = draw(st.integers(1, 4))
    parts = [np.empty(0, np.int32)]
    rows = []
    for _ in range(n_groups):
        shape = draw(st.sampled_from(["all", "refl", "pair", "pair", "sub"]))
        hole_p = 0.4
        if shape == "all":
            tids = rng.permutation(n).astype(np.int32)
            r = _place(rng, parts, tids, n, 0.0)
            rows.append(r + r)
        elif shape == "refl":
            tids = rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)
            r = _place(rng, parts, tids.astype(np.int32), n, hole_p)
            rows.append(r + r)
        elif shape == "pair":
            lt = rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)
            if rng.random() < 0.3:  # right overlaps left heavily
                extra = rng.choice(n, size=min(n, int(rng.integers(0, 4))), replace=False)
                rt = np.union1d(lt[: int(rng.integers(0, len(lt) + 1))], extra)
                rt = rng.permutation(rt)
            else:
                rt = rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)
            lr = _place(rng, parts, lt.astype(np.int32), n, hole_p)
            rr = _place(rng, parts, rt.astype(np.int32), n, hole_p)
            rows.append(lr + rr)
        else:
            # left = a slice, right = a sub-slice of the same region (no hole)
            tids = rng.permutation(n).astype(np.int32)
            s, e, hs, he = _place(rng, parts, tids, n, 0.0)
            a = s + int(rng.integers(0, n + 1))
            b = int(rng.integers(a, e + 1))
            if draw(st.booleans()):
                rows.append((s, e, hs, he, a, b, a, a))
            else:
                rows.append((a, b, a, a, s, e, hs, he))
    buf = np.concatenate(parts).astype(np.int32)
    desc = np.array(rows, np.int64).reshape(-1, 8)
    return codes, buf, desc, ra1, rb1, op1, ra2, rb2, op2, dom1, dom2, draw(kernel_tunes())


# --------------------------------------------------------------------------- property tests


@CASES
@given(batches())
def test_refine_iejoin_equals_brute_force(case):
    codes, buf, desc, ra1, rb1, op1, ra2, rb2, op2, dom1, dom2, tune = case
    run_and_check(buf, desc, codes, ra1, rb1, op1, ra2, rb2, op2, dom1, dom2, tune)


@settings(
    max_examples=examples(600, 15), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 400),
    dom=st.sampled_from([2, 5, 30, 300, 5000, 2**31 - 1]),
    ops=st.sampled_from(OP_PAIRS),
    tune=kernel_tunes(),
)
def test_single_large_reflexive_group(seed, n, dom, ops, tune):
    """Larger reflexive groups (several bit-array words, both sort paths), one copy."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, dom, size=(2, n)).astype(np.int32)
    if rng.random() < 0.5:  # correlated columns: long runs, contiguous match sets
        codes[1] = np.clip(codes[0] + rng.integers(-2, 3, n), 0, dom - 1)
    codes[rng.random((2, n)) < 0.05] = -1
    buf, desc = reflexive(n)
    run_and_check(buf, desc, codes, 0, 0, ops[0], 1, 1, ops[1], dom, dom, tune)


# --------------------------------------------------------------------------- unit tests


def test_paper_self_join_example():
    """Khayyat et al., Q_p on ``east``: t.dur < t'.dur and t.rev > t'.rev."""
    dur = [140, 100, 90]
    rev = [9, 12, 5]
    codes = np.array(
        [np.unique(dur, return_inverse=True)[1], np.unique(rev, return_inverse=True)[1]]
    )
    buf, desc = reflexive(3)
    obuf, odesc = run_and_check(buf, desc, codes, 0, 0, OP_LT, 1, 1, OP_GT)
    assert expand(obuf, odesc).tolist() == [(1 << 32) | 0]


def test_paper_join_example():
    """Khayyat et al., Q_t on ``west``: t.time > t'.time and t.cost < t'.cost."""
    time = [100, 140, 80, 90]
    cost = [6, 11, 10, 5]
    codes = np.array(
        [np.unique(time, return_inverse=True)[1], np.unique(cost, return_inverse=True)[1]]
    )
    buf, desc = reflexive(4)
    obuf, odesc = run_and_check(buf, desc, codes, 0, 0, OP_GT, 1, 1, OP_LT)
    assert expand(obuf, odesc).tolist() == [(0 << 32) | 2, (3 << 32) | 2]
    # the same as a join of two distinct relations (left = west, right = a copy)
    codes2 = np.concatenate([codes, codes], axis=1)
    buf, desc = pair_group([0, 1, 2, 3], [4, 5, 6, 7])
    obuf, odesc = run_and_check(buf, desc, codes2, 0, 0, OP_GT, 1, 1, OP_LT)
    assert expand(obuf, odesc).tolist() == [(0 << 32) | 6, (3 << 32) | 6]


@pytest.mark.parametrize(("op1", "op2"), OP_PAIRS)
def test_all_equal_columns(op1, op2):
    n = 50
    codes = np.zeros((2, n), np.int32)
    buf, desc = reflexive(n)
    obuf, odesc = run_and_check(buf, desc, codes, 0, 0, op1, 1, 1, op2)
    if op1 in (OP_LE, OP_GE) and op2 in (OP_LE, OP_GE):
        # every pair: one group (all left tuples merged, the whole sorted copy)
        assert odesc.shape[0] == 1
        assert expand(obuf, odesc).shape[0] == n * (n - 1)
    else:
        assert odesc.shape[0] == 0


@pytest.mark.parametrize(("op1", "op2"), OP_PAIRS)
def test_ties_on_small_domain(op1, op2):
    codes = np.array([[0, 1, 1, 2, 2, 2, 0, 1], [2, 2, 1, 1, 0, 0, 1, 2]], np.int32)
    buf, desc = reflexive(8)
    run_and_check(buf, desc, codes, 0, 0, op1, 1, 1, op2)
    run_and_check(buf, desc, codes, 0, 1, op1, 1, 0, op2)  # cross-column
    buf, desc = pair_group([0, 1, 2, 3, 4], [2, 3, 4, 5, 6, 7])
    run_and_check(buf, desc, codes, 0, 0, op1, 1, 1, op2)


def test_empty_sides_and_batches():
    codes = np.array([[0, 1, 2], [2, 1, 0]], np.int32)
    buf, desc = pair_group([], [0, 1, 2])
    obuf, odesc = run_and_check(buf, desc, codes, 0, 0, OP_LT, 1, 1, OP_GT)
    assert odesc.shape == (0, 8)
    buf, desc = pair_group([0, 1, 2], [])
    obuf, odesc = run_and_check(buf, desc, codes, 0, 0, OP_LT, 1, 1, OP_GT)
    assert odesc.shape == (0, 8)
    obuf, odesc = refine_iejoin(
        np.empty(0, np.int32),
        np.empty((0, 8), np.int64),
        codes,
        0,
        0,
        OP_LT,
        1,
        1,
        OP_GT,
        3,
        3,
        TUNE,
    )
    assert obuf.shape == (0,) and odesc.shape == (0, 8)
    # all NULL on one side's columns
    nulls = np.array([[0, 1, 2], [-1, -1, -1]], np.int32)
    buf, desc = reflexive(3)
    obuf, odesc = run_and_check(buf, desc, nulls, 0, 0, OP_LT, 1, 1, OP_GT)
    assert odesc.shape == (0, 8)


@pytest.mark.parametrize(("op1", "op2"), OP_PAIRS)
def test_single_row(op1, op2):
    codes = np.array([[3], [3]], np.int32)
    buf, desc = reflexive(1)
    obuf, odesc = run_and_check(buf, desc, codes, 0, 0, op1, 1, 1, op2, 4, 4)
    assert odesc.shape == (0, 8)  # ({t}, {t}) holds no pair
    buf, desc = pair_group([0], [0])
    obuf, odesc = run_and_check(buf, desc, codes, 0, 0, op1, 1, 1, op2, 4, 4)
    assert odesc.shape == (0, 8)


def test_nulls_are_dropped_per_side():
    # row 1 is NULL in column 1 (only the right operand of p1): still a left tuple
    codes = np.array([[0, 1, 2, 3], [5, -1, 5, 5], [0, 0, 0, 0]], np.int32)
    buf, desc = reflexive(4)
    run_and_check(buf, desc, codes, 0, 1, OP_LT, 2, 2, OP_LE, 6, 6)


def test_dense_output_stays_linear():
    """Perfectly correlated columns: every match set is one run of the sorted right
    copy, so ~n^2/2 pairs cost O(n) buffer."""
    n = 3000
    rng = np.random.default_rng(7)
    a = rng.permutation(n).astype(np.int32)
    codes = np.array([a, n - 1 - a], np.int32)
    buf, desc = reflexive(n)
    obuf, odesc = refine_iejoin(buf, desc, codes, 0, 0, OP_GT, 1, 1, OP_LT, n, n, TUNE)
    assert obuf.shape[0] <= 2 * n
    lsz = odesc[:, 1] - odesc[:, 0]
    rsz = odesc[:, 5] - odesc[:, 4]
    assert int((lsz * rsz).sum()) == n * (n - 1) // 2
    assert expand(obuf, odesc).shape[0] == n * (n - 1) // 2


def test_identical_match_sets_merge():
    """Left tuples with equal keys match the same right tuples: one group."""
    left = np.arange(10)
    right = np.arange(10, 30)
    codes = np.zeros((2, 30), np.int32)
    codes[0, 10:] = np.arange(20) % 4 + 1  # p1: 0 < x for every right tuple
    codes[1, 10:] = np.arange(20) % 3  # p2: 0 <= y for every right tuple
    buf, desc = pair_group(left, right)
    obuf, odesc = run_and_check(buf, desc, codes, 0, 0, OP_LT, 1, 1, OP_LE)
    assert odesc.shape[0] == 1
    # only the right tuples with x in {1, 3} qualify on p2: not one run of the sorted
    # right copy (an explicit list), still one group
    codes[1, :10] = 1
    codes[1, 10:] = np.where(np.arange(20) % 2 == 0, 1, 0)
    obuf, odesc = run_and_check(buf, desc, codes, 0, 0, OP_LT, 1, 1, OP_LE)
    assert odesc.shape[0] == 1
