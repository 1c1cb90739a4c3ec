"""Kernel-level property tests: every refinement and the counting sink on
arbitrary input batches (reflexive and not, overlapping sides, holes, NULL
codes, ties), against brute force over the input pairs.

The engine-level tests (test_properties.py) compare whole DCs with
tests/naive.py; these reach input shapes a DC run produces only deep in a
pipeline (sides with holes, suffixes of a shared copy, many groups per batch).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facet.kernels.bhsm import refine_bhsm
from facet.kernels.common import OP_FLIP
from facet.kernels.components import (
    component_labels,
    union_blocks,
    union_dominance,
    union_groups,
    union_pairs,
)
from facet.kernels.count import LOPSIDED, _count_two, count_groups, count_keyed
from facet.kernels.decompose import refine_decompose
from facet.kernels.expand import sides_to_lists
from facet.kernels.refine import KIND_EQ, KIND_INEQ, KIND_NE, refine
from facet.kernels.tuning import DICT_FEW
from facet.planner.config import DEFAULT
from tests.strategies import code_matrices, examples, group_batches, kernel_tunes, shared_doms

TUNE = DEFAULT.kernel_tuning()

OPS = {"=": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}
PY = {
    0: lambda a, b: a == b,
    1: lambda a, b: a != b,
    2: lambda a, b: a < b,
    3: lambda a, b: a <= b,
    4: lambda a, b: a > b,
    5: lambda a, b: a >= b,
}
#: the same on arrays (PY's operators work elementwise on numpy arrays)
NP = PY
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]
SETTINGS = settings(max_examples=examples(400, 40), deadline=None, suppress_health_check=SLOW)
#: the largest domain a forced code-indexed array (count_keyed storage=1) may have
DIRECT_MAX = 1 << 20


def side_tids(buf, d, s) -> np.ndarray:
    """The tids of side ``s`` (0 left, 4 right) of descriptor row ``d``."""
    if d[s + 3] > d[s + 2]:
        return np.concatenate([buf[d[s] : d[s + 2]], buf[d[s + 3] : d[s + 1]]]).astype(np.int64)
    return buf[d[s] : d[s + 1]].astype(np.int64)


def group_pairs(buf, d) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(t, u)``, ``t != u``, of one group, as two arrays."""
    left = side_tids(buf, d, 0)
    right = side_tids(buf, d, 4)
    t = np.repeat(left, right.shape[0])
    u = np.tile(right, left.shape[0])
    keep = t != u
    return t[keep], u[keep]


def holds(codes, preds, t, u) -> np.ndarray:
    """Which pairs ``(t[i], u[i])`` satisfy every predicate ``(row a, op, row b)``."""
    ok = np.ones(t.shape[0], bool)
    for a, op, b in preds:
        x, y = codes[a, t], codes[b, u]
        ok &= (x >= 0) & (y >= 0) & NP[op](x, y)
    return ok


def expand(buf, desc) -> list[tuple[int, int]]:
    """The pairs of a batch as a sorted multiset."""
    keys = [(t << 32) | u for t, u in (group_pairs(buf, d) for d in desc)]
    allk = np.sort(np.concatenate(keys)) if keys else np.empty(0, np.int64)
    return list(zip((allk >> 32).tolist(), (allk & 0xFFFFFFFF).tolist(), strict=True))


def expected(buf, desc, codes, preds) -> list[tuple[int, int]]:
    keys = []
    for d in desc:
        t, u = group_pairs(buf, d)
        ok = holds(codes, preds, t, u)
        keys.append((t[ok] << 32) | u[ok])
    allk = np.sort(np.concatenate(keys)) if keys else np.empty(0, np.int64)
    return list(zip((allk >> 32).tolist(), (allk & 0xFFFFFFFF).tolist(), strict=True))


def degrees(buf, desc, codes, preds, sign, n, skip=None):
    """Brute-force degrees: per row, ``sign`` x its satisfying pairs on each side
    (groups flagged in ``skip`` left out)."""
    want_l = np.zeros(n, np.int64)
    want_r = np.zeros(n, np.int64)
    for g, d in enumerate(desc):
        if skip is not None and skip[g]:
            continue
        t, u = group_pairs(buf, d)
        ok = holds(codes, preds, t, u)
        np.add.at(want_l, t[ok], sign)
        np.add.at(want_r, u[ok], sign)
    return want_l, want_r


@st.composite
def cases(draw, ops):
    """Codes (tiny and wide domains, tie runs), a batch, one predicate, a tuning."""
    codes, doms = draw(code_matrices())
    buf, desc = draw(group_batches(codes.shape[1]))
    a = draw(st.integers(0, 2))
    b = a if draw(st.booleans()) else draw(st.integers(0, 2))
    op = draw(st.sampled_from(ops))
    dom = int(max(doms[a], doms[b]))  # one code space for both operands
    return codes, dom, buf, desc, a, b, op, draw(kernel_tunes())


def check_refinement(out_buf, out_desc, buf, desc, codes, preds):
    # a pair standing in two input groups must come out twice, once per group: compare
    # multisets (an output group overlapping another of the same input shows as extra)
    got = expand(out_buf, out_desc)
    assert got == expected(buf, desc, codes, preds)


@SETTINGS
@given(cases([0, 1, 2, 3, 4, 5]))
def test_equality_nonequality_hsm(case):
    codes, dom, buf, desc, a, b, op, tune = case
    kind = {0: KIND_EQ, 1: KIND_NE}.get(op, KIND_INEQ)
    ob, od = refine(buf, desc, codes, a, b, dom, kind, op, tune)
    check_refinement(ob, od, buf, desc, codes, [(a, op, b)])


@SETTINGS
@given(cases([2, 3, 4, 5]), st.sampled_from([0, 1, 2, 3, 5, 64, 500]))
def test_bhsm(case, bins):
    codes, dom, buf, desc, a, b, op, tune = case
    ob, od = refine_bhsm(buf, desc, codes, a, b, dom, op, bins, tune)
    check_refinement(ob, od, buf, desc, codes, [(a, op, b)])


@SETTINGS
@given(cases([2, 3, 4, 5]))
def test_dominance_decomposition(case):
    codes, dom, buf, desc, a, b, op, tune = case
    ob, od = refine_decompose(buf, desc, codes, a, b, dom, op, tune)
    check_refinement(ob, od, buf, desc, codes, [(a, op, b)])


@settings(max_examples=examples(600, 60), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_counting_sink_degrees(data):
    """count_groups: per-row degrees for 0, 1 or 2 order predicates (closed forms,
    histograms over codes or over ranks of both sides' values, Fenwick trees, sweeps
    on either domain) and, on small groups, any predicates pair by pair."""
    codes, doms = data.draw(code_matrices(rows=4))
    n = codes.shape[1]
    buf, desc = data.draw(group_batches(n))
    k = data.draw(st.integers(0, 3))
    any_ops = data.draw(st.booleans())
    ops = [0, 1, 2, 3, 4, 5] if any_ops else [2, 3, 4, 5]
    preds = [
        (
            data.draw(st.integers(0, 3)),
            data.draw(st.sampled_from(ops)),
            data.draw(st.integers(0, 3)),
        )
        for _ in range(k)
    ]
    nested = data.draw(st.sampled_from([0, 0, 4096, 1 << 40]))
    tune = data.draw(kernel_tunes())
    pa = np.array([p[0] for p in preds], np.int64)
    po = np.array([p[1] for p in preds], np.int64)
    pb = np.array([p[2] for p in preds], np.int64)
    nl = np.array(sorted({p[0] for p in preds}), np.int64)
    nr = np.array(sorted({p[2] for p in preds}), np.int64)
    deg_l = np.zeros(n, np.int64)
    deg_r = np.zeros(n, np.int64)
    todo = np.zeros(len(desc), np.bool_)
    doms = shared_doms(doms, [(a, b) for a, _, b in preds])
    sign = data.draw(st.sampled_from([1, -1]))
    stamp_id = data.draw(st.sampled_from([0, 5]))
    last = count_groups(
        buf, desc, codes, doms, pa, pb, po, nl, nr, sign, deg_l, deg_r,
        np.zeros(n, np.int64), stamp_id, todo, nested, tune,
    )  # fmt: skip
    assert last >= stamp_id
    want_l, want_r = degrees(buf, desc, codes, preds, sign, n, skip=todo)
    assert np.array_equal(deg_l, want_l)
    assert np.array_equal(deg_r, want_r)
    fast = len(preds) <= 2 and all(op >= 2 for _, op, _ in preds)
    if fast:
        assert not todo.any()  # closed forms answer every group


@settings(max_examples=examples(300, 30), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_reflexive_groups_under_two_same_column_inequalities(data):
    """count_groups on reflexive groups (both sides the same rows) under two
    inequalities each comparing a column with itself, in closed form: one side's
    codes ranked and bucketed once, both sweeps over them -- against brute force,
    with NULLs, holes, tied and wide codes, beside non-reflexive groups.  Pair by
    pair (``nested`` above 0) a reflexive group's rows are gathered once for both
    sides, and its codes too where each predicate compares a column with itself
    (``cross``: ``t.a op t'.b and t.b op t'.a``, the same NULLs dropped, codes
    read per side); one predicate or two."""
    codes, doms = data.draw(code_matrices(rows=3))
    n = codes.shape[1]
    buf, desc = data.draw(group_batches(n))
    reflexive = desc.copy()
    reflexive[:, 4:8] = reflexive[:, 0:4]  # the right side made the left one
    if data.draw(st.booleans()):  # beside the original (mostly not reflexive) groups
        reflexive = np.concatenate([reflexive, desc])
    a, b = data.draw(st.permutations([0, 1, 2]))[:2]
    nested = data.draw(st.sampled_from([0, 0, 4096, 1 << 40]))
    cross = nested > 0 and data.draw(st.booleans())
    preds = [(a, data.draw(st.sampled_from([2, 3, 4, 5])), b if cross else a)]
    preds.append((b, data.draw(st.sampled_from([2, 3, 4, 5])), a if cross else b))
    if nested and data.draw(st.booleans()):
        preds = preds[:1] if not cross else preds  # (one same-column predicate)
    pa = np.array([p[0] for p in preds], np.int64)
    pb = np.array([p[2] for p in preds], np.int64)
    po = np.array([p[1] for p in preds], np.int64)
    rows = np.array(sorted({p[0] for p in preds}), np.int64)
    assert set(rows.tolist()) == {p[2] for p in preds}  # one NULL set for both sides
    doms = shared_doms(doms, [(p[0], p[2]) for p in preds])  # (cross: one code space)
    deg_l = np.zeros(n, np.int64)
    deg_r = np.zeros(n, np.int64)
    todo = np.zeros(len(reflexive), np.bool_)
    tune = data.draw(kernel_tunes())
    count_groups(
        buf, reflexive, codes, doms, pa, pb, po, rows, rows, 1, deg_l, deg_r,
        np.zeros(n, np.int64), 0, todo, nested, tune,
    )  # fmt: skip
    want_l, want_r = degrees(buf, reflexive, codes, preds, 1, n)
    assert not todo.any()
    assert np.array_equal(deg_l, want_l)
    assert np.array_equal(deg_r, want_r)


@settings(max_examples=examples(600, 60), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_lopsided_dominance_counts(data):
    """_count_two on a small side against one at least LOPSIDED x larger (a scoped
    or appended run's groups): keys recoded to the small side's values (by table
    or binary search), then a 2D prefix grid or bucketed sweeps -- against brute
    force, either side the small one, every operator pair, tied and wide codes."""
    # up to 12 rows on the small side: the prefix grid; 40-70 distinct wide codes: its
    # grid is too large, so bucketed sweeps
    small = data.draw(st.one_of(st.integers(1, 12), st.integers(40, 70)))
    large = data.draw(st.integers(small * LOPSIDED, small * LOPSIDED + 60))
    mq, mp = (small, large) if data.draw(st.booleans()) else (large, small)
    dom1 = data.draw(st.sampled_from([1, 3, 40, 700, 1 << 20]))
    dom2 = data.draw(st.sampled_from([1, 3, 40, 700, 1 << 20]))

    def keys(m, dom):
        if data.draw(st.booleans()):  # few distinct values: ties across the sides
            pool = data.draw(st.lists(st.integers(0, dom - 1), min_size=1, max_size=4))
            return np.array([pool[i % len(pool)] for i in range(m)], np.int64)[
                np.random.default_rng(m).permutation(m)
            ]
        return np.random.default_rng(data.draw(st.integers(0, 1 << 30))).integers(0, dom, m)

    q1, q2, p1, p2 = keys(mq, dom1), keys(mq, dom2), keys(mp, dom1), keys(mp, dom2)
    op1 = data.draw(st.sampled_from([2, 3, 4, 5]))
    op2 = data.draw(st.sampled_from([2, 3, 4, 5]))
    out_q = np.full(mq, -7, np.int64)
    out_p = np.full(mp, -7, np.int64)
    _count_two(q1, q2, p1, p2, op1, op2, dom1, dom2, out_q, out_p, TUNE)
    ok = PY[op1](q1[:, None], p1[None, :]) & PY[op2](q2[:, None], p2[None, :])
    assert np.array_equal(out_q, ok.sum(axis=1))
    assert np.array_equal(out_p, ok.sum(axis=0))


def test_balanced_dominance_counts_on_wide_codes():
    """_count_two on sides of about one size over codes far wider than the rows: both
    keys ranked over both sides' values (the lopsided route does not apply)."""
    rng = np.random.default_rng(11)
    for op1 in (2, 3, 4, 5):
        for op2 in (2, 3, 4, 5):
            q1, q2 = rng.integers(0, 1 << 20, 30), rng.integers(0, 1 << 20, 30)
            p1, p2 = rng.integers(0, 1 << 20, 40), rng.integers(0, 1 << 20, 40)
            q2[:5] = p2[:5]  # ties across the sides
            out_q, out_p = np.empty(30, np.int64), np.empty(40, np.int64)
            _count_two(q1, q2, p1, p2, op1, op2, 1 << 20, 1 << 20, out_q, out_p, TUNE)
            ok = PY[op1](q1[:, None], p1[None, :]) & PY[op2](q2[:, None], p2[None, :])
            assert np.array_equal(out_q, ok.sum(axis=1))
            assert np.array_equal(out_p, ok.sum(axis=0))


@settings(max_examples=examples(500, 50), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_keyed_sink_degrees(data):
    """count_keyed: per-row degrees under one final equality or non-equality
    (same or cross column, reflexive or not, holes, NULLs), in the code-indexed
    array and in the per-group table, against brute force."""
    codes, doms = data.draw(code_matrices(rows=3))
    n = codes.shape[1]
    buf, desc = data.draw(group_batches(n))
    a = data.draw(st.integers(0, 2))
    b = a if data.draw(st.booleans()) else data.draw(st.integers(0, 2))
    dom = int(max(doms[a], doms[b]))
    ne = data.draw(st.booleans())
    storage = data.draw(st.sampled_from([0, 1, 2] if dom <= DIRECT_MAX else [0, 2]))
    sign = data.draw(st.sampled_from([1, -1]))
    tune = data.draw(kernel_tunes())
    deg_l = np.zeros(n, np.int64)
    deg_r = np.zeros(n, np.int64)
    count_keyed(
        buf, desc, codes, a, b, dom, ne, sign, deg_l, deg_r, np.zeros(n, np.int64), 0, tune, storage
    )
    want_l, want_r = degrees(buf, desc, codes, [(a, 1 if ne else 0, b)], sign, n)
    assert np.array_equal(deg_l, want_l)
    assert np.array_equal(deg_r, want_r)


def test_flip_table():
    for op, f in enumerate(OP_FLIP):
        for x in range(3):
            for y in range(3):
                assert PY[op](x, y) == PY[int(f)](y, x)


def string_buffers(values):
    """Arrow string buffers of ``values`` as the encoder passes them: int32 offsets
    (Arrow's own; tests/test_kernel_twins.py checks int64, a large string's), uint8
    data, validity."""
    import pyarrow as pa

    arr = pa.array(values, pa.string())
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], np.int32)[: len(arr) + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
    valid = np.array([v is not None for v in values], bool)
    return off, data, valid


def value_hashes(values):
    """``hash_bytes`` of each (non-NULL) value on its own: the one text value hash."""
    from facet.kernels.hashing import hash_bytes

    off, data, _ = string_buffers(["" if v is None else v for v in values])
    return hash_bytes(off, data)


@settings(max_examples=examples(300, 15), deadline=None, suppress_health_check=SLOW)
@given(
    st.lists(
        st.one_of(st.none(), st.text(max_size=6), st.sampled_from(["a", "b", "", "é"])),
        max_size=300,
    ),
    st.booleans(),
    kernel_tunes(),
)
def test_text_dictionary_codes(values, many, tune):
    """encode_bytes groups exactly the equal strings (both the one-table and the
    partitioned path: ``many`` adds enough distinct values to force the latter, and
    so does a tiny ``dictionary_few``), and each code's hash is ``hash_bytes`` of its
    value (statistics reuse the dictionary's hashes)."""
    from facet.kernels import dictionary

    if many:
        values = values + [f"v{i}" for i in range(int(tune[DICT_FEW]) + 5)]
    off, data, valid = string_buffers(values)
    codes, first, code_hash, exact = dictionary.encode_bytes(off, data, valid, tune)
    assert exact
    seen: dict = {}
    for v, c in zip(values, codes.tolist(), strict=True):
        if v is None:
            assert c == -1
            continue
        assert seen.setdefault(v, c) == c
    assert len(set(seen.values())) == len(seen) == len(first)
    for v, c in seen.items():
        assert values[first[c]] == v
    assert np.array_equal(code_hash, value_hashes([values[f] for f in first.tolist()]))


@settings(max_examples=examples(150, 12), deadline=None, suppress_health_check=SLOW)
@given(
    st.lists(
        st.one_of(st.none(), st.sampled_from(["a", "b", "", "é", "long value x"]), st.text()),
        max_size=200,
    ),
    st.booleans(),
    st.integers(1, 5),
    kernel_tunes(),
)
def test_parallel_text_dictionary_equals_serial(values, many, threads, tune):
    """encode_bytes_parallel gives encode_bytes's codes, first rows and hashes on
    both its paths (one table per row range merged -- or, past ``dictionary_few``
    distinct values in all, partitions over threads)."""
    from concurrent.futures import ThreadPoolExecutor

    from facet.kernels import dictionary

    if many:
        few = int(tune[DICT_FEW])
        values = values + [f"v{i % (few + 7)}" for i in range(few + 40)]
    off, data, valid = string_buffers(values)
    want = dictionary.encode_bytes(off, data, valid, tune)
    with ThreadPoolExecutor(threads) as pool:
        got = dictionary.encode_bytes_parallel(off, data, valid, pool, threads, tune)
    for w, g in zip(want[:3], got[:3], strict=True):
        assert np.array_equal(w, g)
    assert want[3] and got[3]


@pytest.mark.parametrize("threads", [2, 3])
def test_parallel_text_dictionary_nulls_past_a_failed_one_table_try(threads):
    """A row range whose one-table try stops at ``dictionary_few`` distinct values
    leaves its later rows unwritten; the partitioned path that follows reuses that
    codes array, so its NULL rows (never assigned) must still come out -1."""
    from concurrent.futures import ThreadPoolExecutor

    from facet.kernels import dictionary

    tune = DEFAULT.kernel_tuning()
    few = int(tune[DICT_FEW])
    values = [f"v{i}" for i in range(2 * few + 100)] + [None, "v1", None, "v7"] * 5
    off, data, valid = string_buffers(values)
    want = dictionary.encode_bytes(off, data, valid, tune)
    with ThreadPoolExecutor(threads) as pool:
        got = dictionary.encode_bytes_parallel(off, data, valid, pool, threads, tune)
    assert np.array_equal(want[0], got[0])
    assert (got[0][~valid] == -1).all() and (got[0][valid] >= 0).all()
    assert got[3]


def test_partition_dedupe_reports_a_hash_collision():
    """Two different values under one hash: the dedupe's byte check says so."""
    from facet.kernels import dictionary

    off = np.array([0, 1, 2, 3], np.int64)
    data = np.frombuffer(bytearray(b"aba"), np.uint8)
    rows = np.array([0, 1, 2], np.int64)
    start = np.zeros(DEFAULT.dictionary_partitions + 1, np.int64)
    start[1:] = 3

    def dedupe(hashes):
        part_code = np.empty(3, np.int32)
        first_tmp = np.empty(3, np.int64)
        hash_tmp = np.empty(3, np.uint64)
        ndist = np.zeros(DEFAULT.dictionary_partitions, np.int64)
        ok = dictionary._dedupe_parts(
            off, data, start, 0, 1, rows, np.array(hashes, np.uint64), part_code, first_tmp,
            hash_tmp, ndist,
        )  # fmt: skip
        return ok, part_code.tolist()

    assert dedupe([7, 9, 7]) == (True, [0, 1, 0])  # "a", "b", "a": a true repeat
    assert dedupe([7, 7, 7])[0] is False  # "b" collides with "a"


def test_text_codes_fall_back_on_a_hash_collision(monkeypatch):
    import pyarrow as pa

    import facet.encoding as encoding

    def collided(off, data, valid, tune):
        n = off.shape[0] - 1
        return np.zeros(n, np.int32), np.zeros(1, np.int64), np.zeros(1, np.uint64), False

    monkeypatch.setattr(encoding, "encode_bytes", collided)
    codes, dictionary = encoding._text_codes(pa.array(["x", "y", "x", None]))
    assert codes.tolist()[3] == -1 and codes[0] == codes[2] != codes[1]
    assert len(dictionary) == 2


def test_components_join_blocks_without_pairs():
    """A block joins L ∪ R when it holds a pair; ``{x} x {x}`` holds none."""
    parent = np.arange(10, dtype=np.int64)
    seen = np.zeros(10, np.bool_)
    # blocks: {2}x{2} (no pair), {3,5}x{3}, {6}x{} (empty), {8}x{8,9}, {9}x{8}
    lo = np.array([0, 1, 3, 4, 5, 6], np.int64)
    lv = np.array([2, 3, 5, 6, 8, 9], np.int64)
    ro = np.array([0, 1, 2, 2, 4, 5], np.int64)
    rv = np.array([2, 3, 8, 9, 8], np.int64)
    union_blocks(parent, seen, lo, lv, ro, rv)
    union_pairs(parent, seen, np.array([7, 1, 5], np.int64), np.array([-1, 5, 1], np.int64))
    tids, comp, size = component_labels(parent, seen)
    assert tids.tolist() == [1, 3, 5, 7, 8, 9]
    assert comp.tolist() == [0, 0, 0, 1, 2, 2]
    assert size.tolist() == [3, 3, 3, 1, 2, 2]


@st.composite
def _holed_groups(draw):
    """Groups as the engine holds them: sides ``buf[s:e]`` less a hole ``[hs:he)``."""
    n = draw(st.integers(1, 12))
    buf: list[int] = []
    desc = []
    for _ in range(draw(st.integers(0, 6))):
        row = []
        for _side in range(2):
            vals = draw(st.lists(st.integers(0, n - 1), max_size=6))
            s = len(buf)
            buf.extend(vals)
            e = len(buf)
            hs = draw(st.integers(s, e))
            he = draw(st.integers(hs, e))
            row += [s, e, hs, he]
        desc.append(row)
    return n, np.asarray(buf, np.int32), np.asarray(desc, np.int64).reshape(-1, 8)


@SETTINGS
@given(_holed_groups())
def test_union_groups_equals_union_blocks_over_lists(case):
    """Union-find read from the groups' buffers, holes and all, joins exactly
    what the same blocks joined as lists do."""
    n, buf, desc = case
    got_parent, got_seen = np.arange(n, dtype=np.int64), np.zeros(n, np.bool_)
    union_groups(got_parent, got_seen, buf, desc)
    want_parent, want_seen = np.arange(n, dtype=np.int64), np.zeros(n, np.bool_)
    lo, lv = sides_to_lists(buf, desc, 0)
    ro, rv = sides_to_lists(buf, desc, 4)
    union_blocks(want_parent, want_seen, lo, lv.astype(np.int64), ro, rv.astype(np.int64))
    got = component_labels(got_parent, got_seen)
    want = component_labels(want_parent, want_seen)
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


@SETTINGS
@given(
    case=_holed_groups(),
    data=st.data(),
)
def test_union_dominance_equals_union_over_its_pairs(case, data):
    """The sweep-and-heap components of one or two order predicates join exactly
    the rows union-find over every violating pair ``(a, b)``, ``a != b``, of each
    group joins (holes, repeated rows, NULL codes, every operator)."""
    n, buf, desc = case
    k = data.draw(st.integers(1, 2))
    codes = np.asarray(
        data.draw(st.lists(st.lists(st.integers(-1, 3), min_size=n, max_size=n),
                           min_size=4, max_size=4)), np.int32)  # fmt: skip
    pa = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=k, max_size=k)), np.int64)
    pb = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=k, max_size=k)), np.int64)
    po = np.asarray(data.draw(st.lists(st.integers(2, 5), min_size=k, max_size=k)), np.int64)
    ops = {2: lambda x, y: x < y, 3: lambda x, y: x <= y, 4: lambda x, y: x > y,
           5: lambda x, y: x >= y}  # fmt: skip
    want_parent, want_seen = np.arange(n, dtype=np.int64), np.zeros(n, np.bool_)
    lo, lv = sides_to_lists(buf, desc, 0)
    ro, rv = sides_to_lists(buf, desc, 4)
    t1, t2 = [], []
    for g in range(len(desc)):
        for a in lv[lo[g] : lo[g + 1]]:
            for b in rv[ro[g] : ro[g + 1]]:
                if a != b and all(
                    codes[pa[i], a] >= 0
                    and codes[pb[i], b] >= 0
                    and ops[int(po[i])](codes[pa[i], a], codes[pb[i], b])
                    for i in range(k)
                ):
                    t1.append(a)
                    t2.append(b)
    union_pairs(want_parent, want_seen, np.asarray(t1, np.int64), np.asarray(t2, np.int64))
    got_parent, got_seen = np.arange(n, dtype=np.int64), np.zeros(n, np.bool_)
    union_dominance(got_parent, got_seen, buf, desc, codes, pa, pb, po)
    got = component_labels(got_parent, got_seen)
    want = component_labels(want_parent, want_seen)
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def _union_over_pairs(n, buf, desc, codes, pa, pb, po):
    """The twin: union-find over every violating pair ``(a, b)``, ``a != b``, of
    each group (``sides_to_lists`` reads the groups)."""
    ops = {2: np.less, 3: np.less_equal, 4: np.greater, 5: np.greater_equal}
    parent, seen = np.arange(n, dtype=np.int64), np.zeros(n, np.bool_)
    lo, lv = sides_to_lists(buf, desc, 0)
    ro, rv = sides_to_lists(buf, desc, 4)
    for g in range(len(desc)):
        a, b = np.meshgrid(lv[lo[g] : lo[g + 1]], rv[ro[g] : ro[g + 1]], indexing="ij")
        a, b = a.ravel().astype(np.int64), b.ravel().astype(np.int64)
        hit = a != b
        for i in range(len(po)):
            x, y = codes[pa[i]][a], codes[pb[i]][b]
            hit &= (x >= 0) & (y >= 0) & ops[int(po[i])](x, y)
        union_pairs(parent, seen, a[hit], b[hit])
    return component_labels(parent, seen)


@SETTINGS
@given(
    n=st.integers(1, 40),
    sizes=st.lists(st.integers(0, 40), min_size=1, max_size=4),
    values=st.integers(1, 6),
    ops=st.tuples(st.integers(2, 5), st.integers(2, 5)),
    columns=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    seed=st.integers(0, 2**32 - 1),
)
def test_union_dominance_on_sides_of_one_row_set_equals_union_over_its_pairs(
    n, sizes, values, ops, columns, seed
):
    """An unscoped run's groups hold one row set on both sides: two predicates over
    the same columns on both sides take the interval walk over the inversions
    (holes, repeated rows, NULL codes, ties, every pair of operators; groups of
    64 rows or more take the counting sort)."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(-1, values, size=(3, n)).astype(np.int32)
    if values > 3:
        codes = np.where(codes >= 0, codes * 9, codes).astype(np.int32)  # sparse: an argsort
    buf, desc = [], []
    for size in sizes:
        side = rng.integers(0, n, size * 3 if size > 30 else size).tolist()
        hs = int(rng.integers(0, len(side) + 1))
        he = int(rng.integers(hs, len(side) + 1))
        s = len(buf)
        buf += side + side
        m = len(side)
        desc.append([s, s + m, s + hs, s + he, s + m, s + 2 * m, s + m + hs, s + m + he])
    buf = np.asarray(buf, np.int32)
    desc = np.asarray(desc, np.int64).reshape(-1, 8)
    pa = pb = np.asarray(columns, np.int64)
    po = np.asarray(ops, np.int64)
    want = _union_over_pairs(n, buf, desc, codes, pa, pb, po)
    got_parent, got_seen = np.arange(n, dtype=np.int64), np.zeros(n, np.bool_)
    union_dominance(got_parent, got_seen, buf, desc, codes, pa, pb, po)
    got = component_labels(got_parent, got_seen)
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def test_union_dominance_on_a_large_group_of_one_row_set_equals_union_over_its_pairs():
    """An unscoped group of 600 distinct rows (the counting sort's route): every
    pair of operators against the pairs' union, with many components."""
    rng = np.random.default_rng(11)
    n = 600
    x = rng.integers(0, 300, n)
    y = x + rng.integers(0, 6, n)
    codes = np.stack([x, y]).astype(np.int32)
    codes[:, rng.integers(0, n, 30)] = -1
    side = rng.permutation(n).astype(np.int32)
    buf = np.concatenate([side, side])
    desc = np.array([[0, n, 0, 0, n, 2 * n, n, n]], np.int64)
    counts = []
    for po in ([4, 2], [5, 2], [4, 3], [5, 3], [2, 4], [3, 5], [2, 2], [5, 5]):
        pa = np.array([0, 1], np.int64)
        want = _union_over_pairs(n, buf, desc, codes, pa, pa, np.array(po, np.int64))
        got_parent, got_seen = np.arange(n, dtype=np.int64), np.zeros(n, np.bool_)
        union_dominance(got_parent, got_seen, buf, desc, codes, pa, pa, np.array(po, np.int64))
        got = component_labels(got_parent, got_seen)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True)), po
        counts.append(len(np.unique(want[1])))
    assert min(counts[:4]) > 10, counts  # (not one giant component)


@SETTINGS
@given(
    m=st.integers(1, 500),
    span=st.sampled_from([1, 3, 50, 400, 2_000, 2**40]),
    seed=st.integers(0, 2**32 - 1),
)
def test_event_order_sorts_the_sweep_events(m, span, seed):
    """The sweep's event order: a counting sort for dense keys (64 events or more
    spanning at most about 4 per event), an argsort otherwise -- both sort."""
    from kernels.components import _event_order

    keys = np.random.default_rng(seed).integers(-span, span, m, endpoint=True)
    order = _event_order(keys, len(keys), np.empty(4 * len(keys) + 2, np.int64))
    assert sorted(order.tolist()) == list(range(len(keys)))
    assert np.all(np.diff(keys[order]) >= 0)


def test_union_dominance_on_a_large_group_equals_union_over_its_pairs():
    """Groups of hundreds of rows take the counting sort (dense codes): the same
    components as union-find over every violating pair."""
    rng = np.random.default_rng(7)
    n = 600
    x = rng.integers(0, 1000, n)
    y = x + rng.integers(0, 12, n)  # nearly sorted together: many small components
    codes = np.stack([x, y]).astype(np.int32)
    codes[:, rng.integers(0, n, 30)] = -1  # NULLs
    buf = np.concatenate([rng.permutation(n)[:500], rng.permutation(n)[:450]]).astype(np.int32)
    desc = np.array([[0, 500, 0, 0, 500, 950, 500, 500]], np.int64)
    ops = {2: np.less, 3: np.less_equal, 4: np.greater, 5: np.greater_equal}
    sizes = []
    for po in ([4, 2], [5, 3], [2, 5], [3, 4], [4], [3]):
        k = len(po)
        pa, pb = np.array([0, 1][:k], np.int64), np.array([0, 1][:k], np.int64)
        a, b = np.meshgrid(buf[:500].astype(np.int64), buf[500:].astype(np.int64), indexing="ij")
        hit = a != b
        for i in range(k):
            x, y = codes[pa[i]][a], codes[pb[i]][b]
            hit &= (x >= 0) & (y >= 0) & ops[po[i]](x, y)
        want_parent, want_seen = np.arange(n, dtype=np.int64), np.zeros(n, np.bool_)
        union_pairs(want_parent, want_seen, a[hit], b[hit])
        got_parent, got_seen = np.arange(n, dtype=np.int64), np.zeros(n, np.bool_)
        union_dominance(got_parent, got_seen, buf, desc, codes, pa, pb, np.array(po, np.int64))
        got = component_labels(got_parent, got_seen)
        want = component_labels(want_parent, want_seen)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True)), po
        sizes.append(len(np.unique(want[1])))
    assert min(sizes[:4]) > 20, sizes  # (two predicates: not one giant component)


@SETTINGS
@given(
    edges=st.lists(
        st.dictionaries(st.integers(0, 9), st.integers(0, 1), min_size=1, max_size=4), max_size=25
    )
)
def test_greedy_cover_equals_its_naive_twin(edges):
    """The suspects' greedy cover: the cell in the most uncovered hyperedges
    first (ties: the cell strong in more of them, then the lower cell), until
    every edge is covered.  ``edges``: cell -> strong flag, per hyperedge."""
    from facet.kernels.suspects import greedy_cover

    cells = np.array([c for e in edges for c in sorted(e)], np.int64)
    flags = np.array([e[c] for e in edges for c in sorted(e)], np.int64)
    off = np.cumsum([0] + [len(e) for e in edges]).astype(np.int64)
    picked, scores = greedy_cover(off, cells, flags, 10)
    # as the engine passes them: dense int32 ids, int8 flags
    narrow = greedy_cover(off, cells.astype(np.int32), flags.astype(np.int8), 10)
    assert picked.tolist() == narrow[0].tolist() and scores.tolist() == narrow[1].tolist()
    left, want = list(edges), []
    while left:
        deg = {c: sum(c in e for e in left) for c in range(10)}
        strong = {c: sum(e.get(c, 0) for e in left) for c in range(10)}
        best = min((c for c in deg if deg[c]), key=lambda c: (-deg[c], -strong[c], c))
        want.append((best, deg[best]))
        left = [e for e in left if best not in e]
    assert list(zip(picked.tolist(), scores.tolist(), strict=True)) == want


def test_value_hashes_of_columns_with_nulls_warn_nothing():
    """An int column with NULLs went through NaN on its way to int64: numpy's
    "invalid value encountered in cast" in every Spark task's stderr."""
    import warnings

    import pyarrow as pa

    from facet.engine.statistics import value_hashes

    with warnings.catch_warnings():  # (only this one: without the JIT, the hash's
        # wrapping multiplications warn of overflow, as they are meant to wrap)
        warnings.filterwarnings("error", message="invalid value encountered in cast")
        for a in (pa.array([1, None, 3]), pa.array([True, None]), pa.array([None], pa.int8())):
            assert len(value_hashes(a)) == len(a)
        assert value_hashes(pa.array([1, None, 3]))[2] == value_hashes(pa.array([1, 2, 3]))[2]
