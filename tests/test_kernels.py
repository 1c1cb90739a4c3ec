"""Kernel-level property tests: every refinement and the counting sink on
arbitrary input batches (reflexive and not, overlapping sides, holes, NULL
codes, ties), against brute force over the input pairs.

The engine-level tests (test_properties.py) compare whole DCs with
tests/naive.py; these reach input shapes a DC run produces only deep in a
pipeline (sides with holes, suffixes of a shared copy, many groups per batch).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facet.kernels.bhsm import refine_bhsm
from facet.kernels.common import OP_FLIP
from facet.kernels.count import count_groups, count_keyed
from facet.kernels.decompose import refine_decompose
from facet.kernels.refine import KIND_EQ, KIND_INEQ, KIND_NE, refine
from facet.planner.config import DEFAULT

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
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def code_matrix(draw, rows: int = 3):
    n = draw(st.integers(1, 40))
    dom = draw(st.integers(1, 9))
    codes = np.array(
        [[draw(st.integers(-1, dom - 1)) for _ in range(n)] for _ in range(rows)], np.int32
    )
    return codes, dom


@st.composite
def batches(draw, n: int):
    """A batch of 1-4 groups: reflexive or not, sides as slices with optional holes."""
    parts: list[np.ndarray] = []
    desc = []
    pos = 0

    def side():
        nonlocal pos
        k = draw(st.integers(0, n))
        tids = draw(st.permutations(list(range(n))))[:k]
        arr = np.array(tids, np.int32)
        s = pos
        parts.append(arr)
        pos += k
        e = pos
        if k >= 2 and draw(st.booleans()):
            hs = draw(st.integers(s, e - 1))
            he = draw(st.integers(hs + 1, e))
        else:
            hs = he = s
        return [s, e, hs, he]

    for _ in range(draw(st.integers(1, 4))):
        left = side()
        if draw(st.booleans()):
            desc.append(left + left)  # reflexive
        else:
            desc.append(left + side())
    buf = np.concatenate(parts) if parts else np.empty(0, np.int32)
    return buf.astype(np.int32), np.array(desc, np.int64)


def side_tids(buf, d, s):
    return [int(buf[i]) for i in range(d[s], d[s + 1]) if not (d[s + 2] <= i < d[s + 3])]


def input_pairs(buf, desc):
    """Every (group, t, u) an input batch stands for (t != u)."""
    out = []
    for g, d in enumerate(desc):
        for t in side_tids(buf, d, 0):
            for u in side_tids(buf, d, 4):
                if t != u:
                    out.append((g, t, u))
    return out


def holds(codes, preds, t, u) -> bool:
    for a, op, b in preds:
        x, y = codes[a, t], codes[b, u]
        if x < 0 or y < 0 or not PY[op](x, y):
            return False
    return True


def expand(buf, desc) -> list[tuple[int, int]]:
    out = []
    for d in desc:
        for t in side_tids(buf, d, 0):
            for u in side_tids(buf, d, 4):
                if t != u:
                    out.append((t, u))
    return out


def expected(buf, desc, codes, preds) -> list[tuple[int, int]]:
    return sorted((t, u) for _, t, u in input_pairs(buf, desc) if holds(codes, preds, t, u))


@st.composite
def cases(draw, ops):
    codes, dom = draw(code_matrix())
    buf, desc = draw(batches(codes.shape[1]))
    a = draw(st.integers(0, 2))
    b = a if draw(st.booleans()) else draw(st.integers(0, 2))
    op = draw(st.sampled_from(ops))
    return codes, dom, buf, desc, a, b, op


def check_refinement(out_buf, out_desc, buf, desc, codes, preds):
    # a pair standing in two input groups must come out twice, once per group: compare
    # multisets (an output group overlapping another of the same input shows as extra)
    got = expand(out_buf, out_desc)
    assert sorted(got) == expected(buf, desc, codes, preds)


@SETTINGS
@given(cases([0, 1, 2, 3, 4, 5]))
def test_equality_nonequality_hsm(case):
    codes, dom, buf, desc, a, b, op = case
    kind = {0: KIND_EQ, 1: KIND_NE}.get(op, KIND_INEQ)
    ob, od = refine(buf, desc, codes, a, b, dom, kind, op, TUNE)
    check_refinement(ob, od, buf, desc, codes, [(a, op, b)])


@SETTINGS
@given(cases([2, 3, 4, 5]), st.integers(0, 5))
def test_bhsm(case, bins):
    codes, dom, buf, desc, a, b, op = case
    ob, od = refine_bhsm(buf, desc, codes, a, b, dom, op, bins, TUNE)
    check_refinement(ob, od, buf, desc, codes, [(a, op, b)])


@SETTINGS
@given(cases([2, 3, 4, 5]))
def test_dominance_decomposition(case):
    codes, dom, buf, desc, a, b, op = case
    ob, od = refine_decompose(buf, desc, codes, a, b, dom, op, TUNE)
    check_refinement(ob, od, buf, desc, codes, [(a, op, b)])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_counting_sink_degrees(data):
    """count_groups: per-row degrees for 0, 1 or 2 order predicates (closed forms,
    sort, Fenwick) and, on small groups, any predicates pair by pair."""
    codes, dom = data.draw(code_matrix(rows=4))
    n = codes.shape[1]
    buf, desc = data.draw(batches(n))
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
    nested = data.draw(st.sampled_from([0, 0, 4096]))
    pa = np.array([p[0] for p in preds], np.int64)
    po = np.array([p[1] for p in preds], np.int64)
    pb = np.array([p[2] for p in preds], np.int64)
    nl = np.array(sorted({p[0] for p in preds}), np.int64)
    nr = np.array(sorted({p[2] for p in preds}), np.int64)
    deg_l = np.zeros(n, np.int64)
    deg_r = np.zeros(n, np.int64)
    todo = np.zeros(len(desc), np.bool_)
    doms = np.full(4, dom, np.int64)
    sign = data.draw(st.sampled_from([1, -1]))
    count_groups(
        buf, desc, codes, doms, pa, pb, po, nl, nr, sign, deg_l, deg_r,
        np.zeros(n, np.int64), 0, todo, nested, TUNE,
    )  # fmt: skip
    want_l = np.zeros(n, np.int64)
    want_r = np.zeros(n, np.int64)
    for g, t, u in input_pairs(buf, desc):
        if todo[g]:
            continue
        if holds(codes, preds, t, u):
            want_l[t] += sign
            want_r[u] += sign
    assert np.array_equal(deg_l, want_l)
    assert np.array_equal(deg_r, want_r)
    fast = len(preds) <= 2 and all(op >= 2 for _, op, _ in preds)
    if fast:
        assert not todo.any()  # closed forms answer every group


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_keyed_sink_degrees(data):
    """count_keyed: per-row degrees under one final equality or non-equality
    (same or cross column, reflexive or not, holes, NULLs), in the code-indexed
    array and in the per-group table, against brute force."""
    codes, dom = data.draw(code_matrix(rows=3))
    n = codes.shape[1]
    buf, desc = data.draw(batches(n))
    a = data.draw(st.integers(0, 2))
    b = a if data.draw(st.booleans()) else data.draw(st.integers(0, 2))
    ne = data.draw(st.booleans())
    storage = data.draw(st.sampled_from([0, 1, 2]))
    sign = data.draw(st.sampled_from([1, -1]))
    deg_l = np.zeros(n, np.int64)
    deg_r = np.zeros(n, np.int64)
    count_keyed(
        buf, desc, codes, a, b, dom, ne, sign, deg_l, deg_r, np.zeros(n, np.int64), 0, TUNE, storage
    )
    want_l = np.zeros(n, np.int64)
    want_r = np.zeros(n, np.int64)
    preds = [(a, 1 if ne else 0, b)]
    for _, t, u in input_pairs(buf, desc):
        if holds(codes, preds, t, u):
            want_l[t] += sign
            want_r[u] += sign
    assert np.array_equal(deg_l, want_l)
    assert np.array_equal(deg_r, want_r)


def test_flip_table():
    for op, f in enumerate(OP_FLIP):
        for x in range(3):
            for y in range(3):
                assert PY[op](x, y) == PY[int(f)](y, x)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(st.none(), st.text(max_size=6), st.sampled_from(["a", "b", "", "é"])),
        max_size=300,
    ),
    st.booleans(),
)
def test_text_dictionary_codes(values, many):
    """encode_bytes groups exactly the equal strings (both the one-table and the
    partitioned path: ``many`` adds enough distinct values to force the latter)."""
    import pyarrow as pa

    from facet.kernels import dictionary

    if many:
        values = values + [f"v{i}" for i in range(DEFAULT.dictionary_few + 5)]
    arr = pa.array(values, pa.string())
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], np.int32)[: len(arr) + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
    valid = np.array([v is not None for v in values], bool)
    codes, first, _hash, exact = dictionary.encode_bytes(off, data, valid, TUNE)
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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(st.none(), st.sampled_from(["a", "b", "", "é", "long value x"])), max_size=200
    ),
    st.booleans(),
    st.integers(2, 5),
)
def test_parallel_text_dictionary_equals_serial(values, many, threads):
    """encode_bytes_parallel gives encode_bytes's codes, first rows and hashes on
    both its paths (one table per row range merged; partitions over threads)."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa

    from facet.kernels import dictionary

    if many:
        values = values + [
            f"v{i % (DEFAULT.dictionary_few + 7)}" for i in range(DEFAULT.dictionary_few + 40)
        ]
    arr = pa.array(values, pa.string())
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], np.int32)[: len(arr) + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
    valid = np.array([v is not None for v in values], bool)
    want = dictionary.encode_bytes(off, data, valid, TUNE)
    with ThreadPoolExecutor(threads) as pool:
        got = dictionary.encode_bytes_parallel(off, data, valid, pool, threads, TUNE)
    for w, g in zip(want[:3], got[:3], strict=True):
        assert np.array_equal(w, g)
    assert want[3] and got[3]


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
