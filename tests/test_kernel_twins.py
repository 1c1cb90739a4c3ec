"""Naive twins of the kernels that had none: pair expansion (resumable, capped) and
block lists (``kernels/expand.py``), value hashes and HyperLogLog++ registers
(``kernels/hashing.py``, against datasketch itself), the text dictionary's value
hashes and byte checks (``kernels/dictionary.py``), IEJoin's bit-array scans, the
parallel whole-table equality (``count_codes`` / ``scatter_by_code`` /
``equality_runs``) and the vectorized comparisons.
"""

from __future__ import annotations

import operator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from facet.engine.counting import Degrees
from facet.kernels import dictionary
from facet.kernels.common import OP_CODES, compare_arrays
from facet.kernels.composite import (
    _swapped_keys,
    count_composite,
    equal_degrees,
    group_composite,
    key_candidates,
    key_counts,
    partnered,
)
from facet.kernels.count import degree_totals, sparse_degree_totals
from facet.kernels.expand import expand, sides_to_lists
from facet.kernels.hashing import (
    hash_bytes,
    hash_words,
    hll_registers,
    mix64_array,
    present_codes,
    row_hashes,
)
from facet.kernels.iejoin import _next_set, _next_word
from facet.kernels.refine import KIND_EQ, count_codes, equality_runs, refine, scatter_by_code
from facet.planner.config import DEFAULT, Config
from tests.strategies import code_matrices, examples, group_batches, kernel_tunes, shared_doms

SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]
PY_OPS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
M64 = (1 << 64) - 1


# ------------------------------------------------------------------------ expansion


def side_list(buf, d, s) -> list[int]:
    return [int(buf[i]) for i in range(d[s], d[s + 1]) if not (d[s + 2] <= i < d[s + 3])]


def naive_expand(buf, desc, codes, preds, start) -> list[tuple[int, int]]:
    """Every pair of every group, in order (group, left tid, right tid), with
    ``t != t'`` and predicates ``start..`` holding (NULL: false)."""
    out = []
    for d in desc:
        for t in side_list(buf, d, 0):
            for u in side_list(buf, d, 4):
                if t == u:
                    continue
                ok = True
                for a, op, b in preds[start:]:
                    x, y = int(codes[a, t]), int(codes[b, u])
                    if x < 0 or y < 0 or not PY_OPS[op](x, y):
                        ok = False
                        break
                if ok:
                    out.append((t, u))
    return out


@settings(max_examples=examples(400, 40), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_expand_resumes_to_the_naive_pairs(data):
    """``expand`` in chunks of ``cap`` (1 and up: a resume after every pair) writes
    exactly the naive pairs, in order, every chunk full but the last."""
    codes, _ = data.draw(code_matrices(rows=3, max_n=30, big_n=120))
    n = codes.shape[1]
    buf, desc = data.draw(group_batches(n))
    k = data.draw(st.integers(0, 3))
    preds = [
        (data.draw(st.integers(0, 2)), data.draw(st.integers(0, 5)), data.draw(st.integers(0, 2)))
        for _ in range(k)
    ]
    start = data.draw(st.integers(0, k))
    cap = data.draw(st.sampled_from([1, 2, 3, 7, 64, 1 << 20]))
    pa = np.array([p[0] for p in preds], np.int64)
    po = np.array([p[1] for p in preds], np.int64)
    pb = np.array([p[2] for p in preds], np.int64)
    want = naive_expand(buf, desc, codes, preds, start)
    got: list[tuple[int, int]] = []
    g, a, b = 0, -1, -1
    out1 = np.empty(cap if cap < 1 << 20 else len(want) + 1, np.int32)
    out2 = np.empty_like(out1)
    calls = 0
    while g < len(desc):
        m, g, a, b = expand(buf, desc, codes, pa, pb, po, start, g, a, b, cap, out1, out2)
        calls += 1
        assert 0 <= m <= cap
        if g < len(desc):
            assert m == cap  # stops only when the chunk is full
        got.extend(zip(out1[:m].tolist(), out2[:m].tolist(), strict=True))
        assert calls <= len(want) + 1
    assert got == want


@settings(max_examples=examples(300, 30), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_sides_to_lists(data):
    """Blocks as list columns: each side's tids in buffer order, holes left out."""
    n = data.draw(st.integers(1, 50))
    buf, desc = data.draw(group_batches(n, max_groups=6))
    for s in (0, 4):
        offsets, values = sides_to_lists(buf, desc, s)
        lists = [side_list(buf, d, s) for d in desc]
        assert offsets.tolist() == np.cumsum([0] + [len(x) for x in lists]).tolist()
        assert values.tolist() == [t for x in lists for t in x]


def test_sides_to_lists_no_groups():
    offsets, values = sides_to_lists(np.empty(0, np.int32), np.empty((0, 8), np.int64), 0)
    assert offsets.tolist() == [0] and values.shape == (0,)


# ------------------------------------------------------------------------- hashing


def py_mix64(x: int) -> int:
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def py_hash_bytes(b: bytes) -> int:
    h = 0xCBF29CE484222325
    for c in b:
        h = ((h ^ c) * 0x100000001B3) & M64
    return py_mix64(h ^ len(b))


def buffers(values: list[bytes]):
    off = np.cumsum([0] + [len(v) for v in values]).astype(np.int64)
    data = np.frombuffer(b"".join(values), np.uint8) if values else np.empty(0, np.uint8)
    return off, data.copy()


@settings(max_examples=examples(200, 20), deadline=None)
@given(st.lists(st.binary(max_size=20), max_size=40), st.lists(st.integers(0, M64), max_size=40))
def test_value_hashes_are_fnv1a_and_splitmix64(values, words):
    """The value hashes are pinned (sketches from other machines merge): FNV-1a over
    the bytes, splitmix64's finalizer with the length; words: splitmix64."""
    off, data = buffers(values)
    assert hash_bytes(off, data).tolist() == [py_hash_bytes(v) for v in values]
    w = np.array(words, np.uint64)
    assert hash_words(w).tolist() == [py_mix64((x + 0x9E3779B97F4A7C15) & M64) for x in words]
    assert mix64_array(w).tolist() == [py_mix64(x) for x in words]


@settings(max_examples=examples(200, 20), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_row_hashes(data):
    """Combined hashes of several columns per row (``code_hash[starts[k] + c]``: the
    hash of code ``c`` of the ``k``-th column); rows with a NULL are left out."""
    codes, doms = data.draw(code_matrices(rows=3, max_n=30, big_n=60))
    doms = np.minimum(doms, 64)
    codes = np.where(codes >= 0, codes % doms[:, None], -1).astype(np.int32)
    rows = data.draw(st.lists(st.integers(0, 2), min_size=0, max_size=3))
    sizes = [int(doms[r]) for r in rows]
    starts = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64) if rows else np.empty(0, np.int64)
    code_hash = np.array(
        data.draw(st.lists(st.integers(0, M64), min_size=sum(sizes), max_size=sum(sizes))),
        np.uint64,
    )
    want = []
    for t in range(codes.shape[1]):
        h = 0x243F6A8885A308D3
        for k, r in enumerate(rows):
            c = int(codes[r, t])
            if c < 0:
                break
            h = py_mix64(h ^ int(code_hash[int(starts[k]) + c]))
        else:
            want.append(h)
    got = row_hashes(codes, np.array(rows, np.int64), code_hash, starts)
    assert got.tolist() == want


@settings(max_examples=examples(150, 20), deadline=None, suppress_health_check=SLOW)
@given(
    st.sampled_from([4, 5, 7, 8, 12, 14, 16]),
    st.lists(
        st.one_of(
            st.integers(0, M64),
            st.sampled_from([0, 1, M64, 1 << 63, (1 << 63) - 1]),
            st.integers(0, 65535),  # index bits only: the longest ranks
            st.integers(0, 63).map(lambda k: 1 << k),
        ),
        max_size=60,
    ),
    st.integers(0, 3000),
    st.integers(0, 2**32 - 1),
)
def test_hll_registers_equal_datasketch(p, hashes, n_random, seed):
    """``hll_registers`` fills exactly the registers datasketch's
    ``HyperLogLogPlusPlus`` does for the same 64-bit hashes (index = low ``p`` bits,
    rank of the rest), so its estimates and merges apply."""
    from datasketch import HyperLogLogPlusPlus

    rng = np.random.default_rng(seed)
    rand = rng.integers(0, M64, n_random, dtype=np.uint64, endpoint=True).tolist()
    all_hashes = hashes + rand
    want = HyperLogLogPlusPlus(p=p, hashfunc=lambda x: x)
    for h in all_hashes:
        want.update(int(h))
    got = hll_registers(np.array(all_hashes, np.uint64), p)
    assert got.dtype == want.reg.dtype
    assert np.array_equal(got, want.reg)


# ------------------------------------------------------------------ text dictionary


def string_buffers(values):
    import pyarrow as pa

    arr = pa.array(values, pa.string())
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], np.int32)[: len(arr) + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
    valid = np.array([v is not None for v in values], bool)
    return off, data, valid


@pytest.mark.parametrize("path", ["one-table", "partitioned"])
@pytest.mark.parametrize("threads", [1, 3])
def test_dictionary_hash_is_the_value_hash(path, threads):
    """Each code's hash from ``encode_bytes`` (and its parallel twin) is
    ``hash_bytes`` of that code's value: statistics reuse the dictionary's hashes
    as the text value hash, so the two must be one function -- on both paths."""
    rng = np.random.default_rng(3)
    pool = ["", "a", "é", "中文", "😀x", "\x00", "long value " * 5] + [f"v{i}" for i in range(300)]
    values = [
        None if rng.random() < 0.1 else pool[int(rng.integers(len(pool)))] for _ in range(900)
    ]
    tune = (DEFAULT if path == "one-table" else Config(dictionary_few=1)).kernel_tuning()
    off, data, valid = string_buffers(values)
    few_ok = dictionary._few_values(off, data, valid, int(tune[8]))[3]
    assert few_ok == (path == "one-table")
    if threads == 1:
        codes, first, code_hash, exact = dictionary.encode_bytes(off, data, valid, tune)
    else:
        with ThreadPoolExecutor(threads) as ex:
            codes, first, code_hash, exact = dictionary.encode_bytes_parallel(
                off, data, valid, ex, threads, tune
            )
    assert exact
    firsts = [values[f].encode() for f in first.tolist()]
    assert code_hash.tolist() == [py_hash_bytes(v) for v in firsts]
    o2, d2 = buffers(firsts)
    assert np.array_equal(code_hash, hash_bytes(o2, d2))
    present = codes >= 0
    assert np.array_equal(code_hash[codes[present]], hash_bytes(off, data)[present])


@pytest.mark.parametrize("in_place", [True, False])
def test_dictionary_verify_catches_a_wrong_code(in_place):
    """The one-table path's byte check (a 64-bit hash collision is reported, so
    the caller encodes another way): in place (most values distinct) and against
    the arena of code values; a length or a byte difference is caught."""
    values = (
        ["abc", "abd", "ab", "x"] if in_place else ["abc"] * 20 + ["abd", "ab", "x"] + ["x"] * 20
    )
    off, data, valid = string_buffers(values)
    codes, first, _, ok = dictionary._few_values(off, data, valid, 16)
    assert ok
    n = len(values)
    arena, key_off = dictionary._arena_for(off, data, first, n)
    assert (key_off.shape[0] == 0) == in_place
    assert dictionary._verify(off, data, codes, first, 0, n, arena, key_off)
    i_abd, i_ab = values.index("abd"), values.index("ab")
    for row in (i_abd, i_ab):  # same length, other byte / other length
        bad = codes.copy()
        bad[row] = codes[values.index("abc")]
        assert not dictionary._verify(off, data, bad, first, 0, n, arena, key_off)
        assert dictionary._verify(off, data, bad, first, 0, row, arena, key_off)


@settings(max_examples=examples(100, 10), deadline=None, suppress_health_check=SLOW)
@given(
    st.lists(st.one_of(st.none(), st.text(max_size=5), st.sampled_from(["a", "b", "é"]))),
    st.integers(2, 4),
    kernel_tunes(),
)
def test_parallel_dictionary_partitions_equal_serial(values, threads, tune):
    """The partitioned path split over threads gives the one-thread partitioned codes."""
    off, data, valid = string_buffers(values)
    n = len(values)
    parts = int(tune[7])
    want = dictionary._partitioned(off, data, valid, parts)
    cuts = np.linspace(0, n, threads + 1).astype(np.int64).tolist()
    ranges = list(zip(cuts[:-1], cuts[1:], strict=True))
    with ThreadPoolExecutor(threads) as ex:
        got = dictionary._partitioned_parallel(
            off, data, valid, ranges, lambda f, xs: list(ex.map(f, xs)), parts
        )
    for w, g in zip(want, got, strict=True):
        assert np.array_equal(w, g)


def test_dictionary_warm():
    dictionary.warm(DEFAULT.kernel_tuning())
    dictionary.warm(Config(dictionary_few=1, dictionary_partitions=2).kernel_tuning())


# ------------------------------------------------------------------ IEJoin bit scans


@settings(max_examples=examples(300, 30), deadline=None)
@given(st.integers(1, 5000), st.data())
def test_bit_array_scans(nr, data):
    """``_next_set`` / ``_next_word`` (the word index skips empty words): the first
    set bit at or after ``p`` / the first non-empty word at or after ``w``, or -1."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    density = data.draw(st.sampled_from([0.0, 0.001, 0.02, 0.5, 1.0]))
    marked = np.flatnonzero(rng.random(nr) < density)
    nwords = (nr + 63) >> 6
    bits = np.zeros(nwords + 1, np.uint64)
    summ = np.zeros(((nwords + 63) >> 6) + 1, np.uint64)
    for q in marked.tolist():
        bits[q >> 6] |= np.uint64(1) << np.uint64(q & 63)
        summ[q >> 12] |= np.uint64(1) << np.uint64((q >> 6) & 63)
    words = np.flatnonzero(bits[:nwords])
    probes = sorted({0, nr - 1, nr, nr + 64, *rng.integers(0, nr + 70, 20).tolist()})
    for p in probes:
        i = np.searchsorted(marked, p)
        assert _next_set(bits, summ, p, nwords) == (int(marked[i]) if i < len(marked) else -1)
    for w in sorted({0, nwords - 1, nwords, nwords + 3, *rng.integers(0, nwords + 2, 10).tolist()}):
        i = np.searchsorted(words, w)
        assert _next_word(summ, w, nwords) == (int(words[i]) if i < len(words) else -1)


# ----------------------------------------------------- parallel whole-table equality


@settings(max_examples=examples(200, 20), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_parallel_equality_equals_serial_refine(data):
    """Row ranges counting codes then scattering (the engine's whole-table equality
    on several threads) give the serial kernel's copy and groups exactly."""
    codes, doms = data.draw(code_matrices(rows=1, big_n=400))
    codes = np.where(codes >= 0, codes % np.minimum(doms, 1 << 16)[:, None], -1).astype(np.int32)
    dom = int(min(doms[0], 1 << 16))
    n = codes.shape[1]
    ranges_n = data.draw(st.integers(1, 4))
    tids = np.arange(n, dtype=np.int32)
    if data.draw(st.booleans()):
        tids = np.random.default_rng(data.draw(st.integers(0, 99))).permutation(tids)
    desc = np.array([[0, n, 0, 0, 0, n, 0, 0]], np.int64)
    want_buf, want_desc = refine(tids, desc, codes, 0, 0, dom, KIND_EQ, 0, DEFAULT.kernel_tuning())
    cuts = np.linspace(0, n, ranges_n + 1).astype(np.int64).tolist()
    ranges = list(zip(cuts[:-1], cuts[1:], strict=True))
    counts = np.zeros((ranges_n, dom), np.int64)
    for i, (lo, hi) in enumerate(ranges):
        count_codes(tids, lo, hi, codes[0], counts[i])
    total = counts.sum(axis=0)
    start = np.zeros(dom, np.int64)
    np.cumsum(total[:-1], out=start[1:])
    cursor = start + np.cumsum(counts, axis=0) - counts
    out = np.empty(int(total.sum()), np.int32)
    for i, (lo, hi) in enumerate(ranges):
        scatter_by_code(tids, lo, hi, codes[0], cursor[i], out)
    assert np.array_equal(out, want_buf)
    assert np.array_equal(equality_runs(total), want_desc)


# ---------------------------------------------------------------------- comparisons


def test_compare_arrays_every_operator():
    x = np.array([0, 1, 2, 2, 5])
    y = np.array([2, 1, 0, 2, 9])
    for name, op in OP_CODES.items():
        want = [PY_OPS[op](a, b) for a, b in zip(x.tolist(), y.tolist(), strict=True)]
        assert compare_arrays(x, op, y).tolist() == want, name
        assert compare_arrays(x, op, 2).tolist() == [PY_OPS[op](a, 2) for a in x.tolist()]


# ------------------------------------------------------------------------ report partners


def naive_partners(blocks, wanted, need):
    """Block by block in order: each wanted row of the left side takes partners
    from the right (as ``t``), then each of the right side from the left (as
    ``t'``), distinct, never itself, until it has ``need`` of them."""
    want = {a: [] for a in wanted}
    for left, right in blocks:
        for side, other, r in ((left, right, 0), (right, left, 1)):
            for a in side:
                if a not in want:
                    continue
                for b in other:
                    taken = [p for p, _ in want[a]]
                    if len(want[a]) < need[a] and b != a and b not in taken:
                        want[a].append((b, r))
    return want


@settings(max_examples=examples(300, 40), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_sample_partners_equal_their_naive_twin(data):
    """The three readers of blocks -- the engine's groups in place (holes and all),
    per-side lists, pairs one by one -- take the naive twin's partners, across
    batches, and say how many wanted rows are still short (0 stops them early)."""
    from facet.kernels.partners import (
        empty_partners,
        sample_group_partners,
        sample_pair_partners,
        sample_partners,
    )

    n = data.draw(st.integers(1, 14))
    buf, desc = data.draw(group_batches(n, max_groups=6))
    blocks = [(side_list(buf, d, 0), side_list(buf, d, 4)) for d in desc]
    wanted = data.draw(st.lists(st.integers(0, n - 1), max_size=n, unique=True))
    k = data.draw(st.integers(1, 4))
    need = {a: data.draw(st.integers(0, k)) for a in wanted}
    slot = np.full(n, -1, np.int64)
    slot[wanted] = np.arange(len(wanted))
    need_arr = np.array([need[a] for a in wanted], np.int64)
    half = data.draw(st.integers(0, len(desc)))
    pairs = [(t, u) for left, right in blocks for t in left for u in right]

    def check(out, role, got, left, blocks_seen):
        want = naive_partners(blocks_seen, wanted, need)
        for a in wanted:
            s = slot[a]
            assert list(zip(out[s, : got[s]].tolist(), role[s, : got[s]].tolist())) == want[a]
            assert (out[s, got[s] :] == -1).all()
        assert left == sum(len(want[a]) < need[a] for a in wanted)

    def start():
        out, role, got = empty_partners(len(wanted), k)
        return out, role, got, int(np.count_nonzero(got < need_arr))

    out, role, got, left = start()
    for part in (desc[:half], desc[half:]):  # batches: got carries over
        left = sample_group_partners(buf, np.ascontiguousarray(part), slot, need_arr,
                                     out, role, got, left)  # fmt: skip
    check(out, role, got, left, blocks)

    out, role, got, left = start()
    for part in (blocks[:half], blocks[half:]):
        lo = np.cumsum([0] + [len(b[0]) for b in part]).astype(np.int64)
        ro = np.cumsum([0] + [len(b[1]) for b in part]).astype(np.int64)
        lv = np.array([t for b in part for t in b[0]], np.int64)
        rv = np.array([t for b in part for t in b[1]], np.int64)
        left = sample_partners(lo, lv, ro, rv, slot, need_arr, out, role, got, left)
    check(out, role, got, left, blocks)

    out, role, got, left = start()
    t1 = np.array([t for t, _ in pairs], np.int64)
    t2 = np.array([u for _, u in pairs], np.int64)
    left = sample_pair_partners(t1, t2, slot, need_arr, out, role, got, left)
    check(out, role, got, left, [([t], [u]) for t, u in pairs])


# ------------------------------------------------------------------------ dense ranks


def _naive_ranks(values: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq = np.unique(values[valid])
    ranks = np.full(values.size, -1, np.int32)
    ranks[valid] = np.searchsorted(uniq, values[valid])
    return ranks, uniq


def _check_dense_ranks(values: np.ndarray, lo: int, bits: int, data) -> None:
    """dense_ranks over ``values`` (all ``lo + k``, ``k < 2**bits``), a random NULL mask,
    against sorting."""
    from facet.kernels.ranks import dense_ranks

    n = len(values)
    valid = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), np.bool_)
    got_ranks, got_uniq = dense_ranks(values, valid, np.int64(lo), max(1, bits))
    want_ranks, want_uniq = _naive_ranks(values, valid)
    assert np.array_equal(got_ranks, want_ranks)
    assert np.array_equal(got_uniq, want_uniq)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=SLOW)
@given(
    st.lists(st.integers(-(2**62), 2**62), max_size=60),
    st.integers(0, 62),
    st.data(),
)
def test_dense_ranks_equal_sorting(raw, bits, data):
    """Dense ranks by radix digits equal ranks by sorting, NULLs (-1) kept out, over spans
    of one digit to 63 bits."""
    lo = raw[0] if raw else 0
    span = 1 << bits
    values = np.array([lo + (abs(x - lo) % span) for x in raw], np.int64)
    _check_dense_ranks(values, lo, bits, data)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=SLOW)
@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=60),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(0, 64),
    st.data(),
)
def test_dense_ranks_equal_sorting_at_any_lo_and_span(raw, lo, bits, data):
    """Spans up to 64 bits (``value - lo`` as uint64: any int64 values above ``lo``),
    ``lo`` anywhere, and narrow spans far from zero (high digits every row shares)."""
    span = 1 << bits
    values = np.array([min(lo + x % span, 2**63 - 1) for x in raw], np.int64)  # >= lo
    _check_dense_ranks(values, lo, bits, data)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=SLOW)
@given(st.lists(st.integers(-(2**40), 2**40), max_size=60), st.integers(1, 300), st.data())
def test_histogram_ranks_equal_sorting(raw, span, data):
    """Ranks from a presence table over a small range equal ranks by sorting, NULLs
    (-1) kept out (their values may lie outside the range), every row valid when
    ``valid`` is empty."""
    from facet.kernels.ranks import histogram_ranks

    lo = raw[0] if raw else 0
    values = np.array([lo + abs(x - lo) % span for x in raw], np.int64)
    if data.draw(st.booleans()):
        valid = np.array(data.draw(st.lists(st.booleans(), min_size=len(raw),
                                            max_size=len(raw))), np.bool_)  # fmt: skip
        values[~valid] = lo - 5  # a NULL's filler outside the range
    else:
        valid = np.ones(len(raw), np.bool_)
    passed = valid if not valid.all() or data.draw(st.booleans()) else np.empty(0, np.bool_)
    out = np.empty(len(values), np.int32)
    got_ranks, got_uniq = histogram_ranks(values, passed, np.int64(lo), span, out)
    assert got_ranks is out or got_ranks.size == 0  # written in place
    want_ranks, want_uniq = _naive_ranks(values, valid)
    assert np.array_equal(got_ranks, want_ranks)
    assert np.array_equal(got_uniq, want_uniq)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=SLOW)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40), st.data())
def test_value_range_is_numpy_min_and_max_of_the_valid_values(raw, data):
    """The encoder's one-pass range (``value_range``) against numpy over the valid
    values: every row valid when ``valid`` is empty, ``(0, -1, 0)`` when none is,
    the int64 extremes included."""
    from facet.kernels.ranks import value_range

    values = np.array(raw, np.int64)
    valid = np.array(data.draw(st.lists(st.booleans(), min_size=len(raw), max_size=len(raw))),
                     np.bool_)  # fmt: skip
    for passed, keep in ((valid, valid), (np.empty(0, np.bool_), np.ones(len(raw), np.bool_))):
        lo, hi, m = value_range(values, passed)
        kept = values[keep]
        want = (int(kept.min()), int(kept.max()), kept.size) if kept.size else (0, -1, 0)
        assert (int(lo), int(hi), int(m)) == want
    # nothing valid, with a mask and without rows
    assert tuple(map(int, value_range(np.array([5, 6], np.int64), np.zeros(2, np.bool_)))) == (
        0,
        -1,
        0,
    )
    assert tuple(map(int, value_range(np.empty(0, np.int64), np.empty(0, np.bool_)))) == (0, -1, 0)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=SLOW)
@given(st.sampled_from([1, 2, 3, 2047, 2048, 2049, 1 << 20, 2**31 - 1]), st.data())
def test_union_ranks_are_dense_ranks_over_both_sides(dom, data):
    """A balanced group's codes ranked over both sides' values (one radix sort, one
    to three digits) equal ranks by sorting their union: order and ties kept across
    the sides, the domain the number of distinct values."""
    from facet.kernels.count import _union_ranks

    side = st.lists(st.integers(0, dom - 1), max_size=80)
    a = np.array(data.draw(side), np.int64)
    b = np.array(data.draw(side), np.int64)
    if len(a) and len(b) and data.draw(st.booleans()):
        b[: min(len(a), len(b)) // 2] = a[: min(len(a), len(b)) // 2]  # ties across sides
    ra, rb, d = _union_ranks(a.astype(np.int32), b.astype(np.int32), dom)
    uniq, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
    assert d == len(uniq)
    assert np.array_equal(ra, inv[: len(a)])
    assert np.array_equal(rb, inv[len(a) :])


def test_union_ranks_take_digits_of_any_width():
    """A radix pass's digit width follows the rows (narrow digits for a few rows,
    up to RADIX_BITS for many): ranks stay dense and exact at every width, one
    side empty (a reflexive group ranks its one side) or both full."""
    from facet.kernels.count import _union_ranks

    rng = np.random.default_rng(3)
    for m in (1, 7, 64, 300, 5000):
        for dom in (2, 1 << 11, 1 << 17, 2**31 - 1):
            a = rng.integers(0, dom, m)
            b = rng.integers(0, dom, m // 2) if m > 64 else a[:0]
            ra, rb, d = _union_ranks(a, b, dom)
            uniq, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
            assert d == len(uniq)
            assert np.array_equal(ra, inv[:m])
            assert np.array_equal(rb, inv[m:])


def test_codes_of_a_wide_integer_column_are_dense_ranks():
    """The encoder's wide-range path (no histogram) orders exactly, NULLs included."""
    import pyarrow as pa

    from facet.encoding import _codes

    radix = DEFAULT.but(radix_rank_rows=1)
    vals = [10**15, None, -(10**15), 7, 7, 2**62, None, -(2**62), 0]
    codes, dictionary = _codes(pa.array(vals, pa.int64()), True, radix)
    order = sorted({v for v in vals if v is not None})
    assert dictionary.to_pylist() == order
    assert codes.tolist() == [-1 if v is None else order.index(v) for v in vals]
    u = pa.array([2**63 - 5, 3, None, 2**62], pa.uint64())
    codes, dictionary = _codes(u, True, radix)
    assert dictionary.to_pylist() == [3, 2**62, 2**63 - 5] and codes.tolist() == [2, 0, -1, 1]
    # a span of 64 bits: the radix passes take value - lo modulo 2**64
    vals = [2**63 - 1, -(2**63), None, 0, -1, 2**63 - 1, 1]
    codes, dictionary = _codes(pa.array(vals, pa.int64()), True, radix)
    order = sorted({v for v in vals if v is not None})
    assert dictionary.to_pylist() == order
    assert codes.tolist() == [-1 if v is None else order.index(v) for v in vals]


@pytest.mark.parametrize("typ", ["float64", "float32"])
@pytest.mark.parametrize("distinct", [True, False, "some"])
def test_codes_of_a_float_column_are_dense_ranks(typ, distinct):
    """Every float route of the encoder (mostly distinct values: radix digits over their
    order-preserving int64 images; few: hashing, then the distinct values sorted; in
    between: the radix digits again) gives dense ranks and their values, NULL -1,
    -0.0 = 0.0, infinities, subnormals and the extremes in order."""
    import pyarrow as pa

    from facet.encoding import _codes, coding_values

    rng = np.random.default_rng(7)
    n = 5000
    if distinct == "some":
        base = rng.integers(-(n // 3), n // 3, n) / 8
    else:
        base = rng.normal(size=n) * 1e3 if distinct else rng.integers(0, 9, n) / 4
    vals = [float(x) for x in base.astype(typ)]
    info = np.finfo(typ)
    vals[:6] = [-0.0, 0.0, float("inf"), float("-inf"), -0.0, float("inf")]
    vals[6:10] = [float(info.max), float(-info.max), float(info.smallest_subnormal),
                  -float(info.smallest_subnormal)]  # fmt: skip
    vals[10::97] = [None] * len(vals[10::97])
    arr = pa.array(vals, getattr(pa, typ)())
    coded = coding_values(arr)
    codes, dictionary = _codes(coded, True, DEFAULT.but(radix_rank_rows=1))
    order = sorted({v for v in vals if v is not None})  # (-0.0 == 0.0: one of them)
    assert dictionary.type == coded.type
    assert dictionary.to_pylist() == order
    assert codes.tolist() == [-1 if v is None else order.index(v) for v in vals]


# ------------------------------------------------------------------ fused keyed counts


def _naive_degrees(lt, rt, codes, ea, eb, ra, rb, ne):
    n = codes.shape[1]
    deg_l = np.zeros(n, np.int64)
    deg_r = np.zeros(n, np.int64)
    for t in lt:
        for u in rt:
            if t == u:
                continue
            ok = all(codes[a, t] >= 0 and codes[a, t] == codes[b, u] for a, b in zip(ea, eb))
            x, y = codes[ra, t], codes[rb, u]
            if ok and x >= 0 and y >= 0 and (x != y) == ne:
                deg_l[t] += 1
                deg_r[u] += 1
    return deg_l, deg_r


@settings(max_examples=examples(400), deadline=None, suppress_health_check=SLOW)
@given(data=st.data())
def test_count_composite_equals_its_naive_twin(data):
    rows = 4
    codes, doms = data.draw(code_matrices(rows=rows, max_n=30, big_n=200))
    n = codes.shape[1]
    k = data.draw(st.integers(0, 3))
    ea = np.array([data.draw(st.integers(0, rows - 1)) for _ in range(k)], np.int64)
    shared = data.draw(st.booleans())
    if shared:
        eb = ea.copy()
        ra = rb = data.draw(st.integers(0, rows - 1))
    else:
        eb = np.array([data.draw(st.integers(0, rows - 1)) for _ in range(k)], np.int64)
        ra, rb = data.draw(st.integers(0, rows - 1)), data.draw(st.integers(0, rows - 1))
    ne = data.draw(st.booleans())
    doms = shared_doms(doms, list(zip(ea, eb)) + [(ra, rb)])
    # a domain bound may be far above the codes: wide bounds take the hashed paths
    widen = data.draw(st.sampled_from([1, 1, 1000, 1 << 20]))
    dom_e = doms[ea] * widen if k else np.empty(0, np.int64)
    dom = int(doms[ra]) * widen
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    if data.draw(st.booleans()):  # every row in row order (a whole table's side)
        lt = np.arange(n, dtype=np.int32)
    else:
        lt = np.sort(rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False))
        lt = lt.astype(np.int32)
    if shared:
        rt = lt
    else:
        rt = rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False).astype(np.int32)
    direct_codes = data.draw(st.sampled_from([0, 4, 1 << 16]))
    deg_l = np.zeros(lt.size, np.int32)  # by position in the sides (int32, as the engine)
    deg_r = np.zeros(rt.size, np.int32)
    total = count_composite(
        lt, rt, codes, ea, eb, dom_e, ra, rb, dom, ne, deg_l, deg_r, direct_codes, shared
    )
    want_l, want_r = _naive_degrees(lt, rt, codes, ea, eb, ra, rb, ne)
    if shared:  # deg_l is both sides' degrees, and deg_r is left alone
        assert not deg_r.any()
        deg_r = deg_l
    assert np.array_equal(deg_l, want_l[lt])
    assert np.array_equal(deg_r, want_r[rt])
    assert total == want_l.sum()
    # the engine's totals, from the degrees by position (no array over the table)
    pieces = [(lt, deg_l, rt, deg_r)]
    assert sparse_degree_totals(n, *pieces[0]) == degree_totals(want_l, want_r)
    dense = Degrees.sparse(n, pieces)
    assert dense.totals() == degree_totals(want_l, want_r)
    assert np.array_equal(dense.left, want_l) and np.array_equal(dense.right, want_r)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=SLOW)
@given(data=st.data())
def test_count_composite_over_swapped_keys_equals_its_naive_twin(data):
    """A symmetric DC on a reflexive pair (``t.A = t'.B and t.B = t'.A``: the right
    key is the left key's columns permuted, one domain, ``ra == rb``) takes one
    counting sort for both sides (``_count_swapped``; a swap that undoes itself,
    as every one of two columns and some of three, tallies each pair of runs
    once, both ways); it meets the naive twin, (t, t) included where
    a row's key is its own permutation."""
    rows = 4
    n = data.draw(st.integers(0, 40))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    dom = data.draw(st.integers(1, 5))
    codes = rng.integers(-1, dom, (rows, n)).astype(np.int32)
    k = data.draw(st.integers(2, 3))
    ea = np.array(data.draw(st.permutations(range(rows)))[:k], np.int64)
    eb = ea[np.array(data.draw(st.permutations(range(k))))]
    ra = rb = data.draw(st.integers(0, rows - 1))
    ne = data.draw(st.booleans())
    doms = np.full(k, dom, np.int64)
    lt = np.sort(rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)).astype(np.int32)
    rt = lt.copy()  # (equal, not the same array: as partnered hands them back)
    assume(dom**k <= 2 * lt.size)
    assert _swapped_keys(lt, rt, ea, eb, doms, ra, rb)
    direct_codes = data.draw(st.sampled_from([0, 1 << 16]))
    deg_l = np.zeros(lt.size, np.int32)
    deg_r = np.zeros(rt.size, np.int32)
    total = count_composite(
        lt, rt, codes, ea, eb, doms, ra, rb, dom, ne, deg_l, deg_r, direct_codes, False
    )
    want_l, want_r = _naive_degrees(lt, rt, codes, ea, eb, ra, rb, ne)
    assert np.array_equal(deg_l, want_l[lt]) and np.array_equal(deg_r, want_r[rt])
    assert total == want_l.sum()
    # a swap that undoes itself gives both sides one degree a row: one array serves
    # as both (``one``), written once -- not for a 3-cycle
    involution = all(eb[int(np.flatnonzero(ea == b)[0])] == a for a, b in zip(ea, eb))
    assert equal_degrees(lt, lt, ea, eb, doms, ra, rb) == involution
    if involution:
        assert np.array_equal(want_l, want_r)
        one = np.zeros(lt.size, np.int32)
        got = count_composite(
            lt, lt, codes, ea, eb, doms, ra, rb, dom, ne, one, one, direct_codes, False, True
        )  # fmt: skip
        assert np.array_equal(one, want_l[lt]) and got == total


@pytest.mark.parametrize("order", [(1, 2, 0), (0, 2, 1)], ids=["3-cycle", "involution"])
@pytest.mark.parametrize("ne", [False, True])
def test_swapped_keys_whose_key_is_its_own_permutation(order, ne):
    """Keys whose three digits are equal are their own partners under any
    permutation: (t, t) is taken off under a 3-cycle (tallied both sides) and
    under a swap that undoes itself (tallied once) alike."""
    rng = np.random.default_rng(3)
    n = 30
    codes = rng.integers(-1, 2, (4, n)).astype(np.int32)
    codes[1, :20] = codes[2, :20] = codes[0, :20]  # rows 0..19: all three digits equal
    ea = np.array([0, 1, 2], np.int64)
    eb = ea[np.array(order)]
    lt = np.arange(n, dtype=np.int32)
    rt = lt.copy()
    doms = np.full(3, 2, np.int64)
    assert _swapped_keys(lt, rt, ea, eb, doms, 3, 3)
    deg_l = np.zeros(n, np.int32)
    deg_r = np.zeros(n, np.int32)
    total = count_composite(lt, rt, codes, ea, eb, doms, 3, 3, 2, ne, deg_l, deg_r, 1 << 16, False)
    want_l, want_r = _naive_degrees(lt, rt, codes, ea, eb, 3, 3, ne)
    assert np.array_equal(deg_l, want_l) and np.array_equal(deg_r, want_r)
    assert total == want_l.sum() > 0


def _naive_partnered(lt, rt, codes, ea, eb, ra, rb, ne):
    """``partnered``'s semi-joins one by one, in sets: each cross-column equality
    (then a cross-column equality sink) keeps, on a side where some code lacks a
    partner, the rows whose code the other side holds."""
    left, right = set(lt.tolist()), set(rt.tolist())
    links = [*zip(ea.tolist(), eb.tolist(), strict=True), *([] if ne else [(ra, rb)])]
    links = [(a, b) for a, b in links if a != b]
    n = codes.shape[1]
    if links and len(lt) == len(rt) == n and {(b, a) for a, b in links} <= set(links):
        # both sides every row, links symmetric: one condition for both, from
        # every row's codes, over the links where a code lacks a partner
        held = {c: set(codes[c].tolist()) - {-1} for ab in links for c in ab}
        cut = [(a, b) for a, b in links if held[a] - held[b]]
        if cut:
            left = right = {t for t in left if all(codes[a, t] in held[b] for a, b in cut)}
        return left, right
    for a, b in links:
        on_l = {int(codes[a, t]) for t in left} - {-1}
        on_r = {int(codes[b, t]) for t in right} - {-1}
        drop_l, drop_r = bool(on_l - on_r), bool(on_r - on_l)
        if drop_l:
            left = {t for t in left if codes[a, t] in on_r}
        if drop_r:
            right = {t for t in right if codes[b, t] in on_l}
    return left, right


@settings(max_examples=examples(300), deadline=None, suppress_health_check=SLOW)
@given(data=st.data())
def test_cross_column_rows_without_partners_drop_and_counts_stay(data):
    """The semi-join before a fused count (``partnered``): cross-column equalities
    over small domains where each side holds codes the other lacks -- it keeps every
    row some pair holds, drops only rows no pair holds, and the count meets naive."""
    n = data.draw(st.integers(1, 40))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    dom = data.draw(st.integers(1, 8))
    codes = rng.integers(-1, dom, (4, n)).astype(np.int32)
    k = data.draw(st.integers(1, 2))
    ea = np.array([0, 2][:k], np.int64)
    eb = np.array([1, 3][:k], np.int64)
    ra, rb = data.draw(st.sampled_from([(2, 3), (3, 2), (2, 2), (0, 1), (1, 0)]))
    ne = data.draw(st.booleans())
    doms = np.full(k, dom, np.int64)
    if data.draw(st.booleans()):  # sides of every row (symmetric links: φ10's shape)
        lt, rt = rng.permutation(n).astype(np.int32), rng.permutation(n).astype(np.int32)
    else:
        lt = np.sort(rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False))
        lt = lt.astype(np.int32)
        rt = rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False).astype(np.int32)
    want_l, want_r = _naive_degrees(lt, rt, codes, ea, eb, ra, rb, ne)
    out_l, out_r = np.empty_like(lt), np.empty_like(rt)  # (the caller's memory)
    before_l, before_r = lt.copy(), rt.copy()
    kept_l, kept_r = partnered(lt, rt, codes, ea, eb, doms, ra, rb, dom, ne, out_l, out_r)
    # a cut side is cut again in place, in out_l / out_r: the sides passed in stay
    assert np.array_equal(lt, before_l) and np.array_equal(rt, before_r)
    assert set(np.flatnonzero(want_l)) <= set(kept_l.tolist()) <= set(lt.tolist())
    assert set(np.flatnonzero(want_r)) <= set(kept_r.tolist()) <= set(rt.tolist())
    # exactly the semi-joins' rows (a side cut too little would still count right)
    twin_l, twin_r = _naive_partnered(lt, rt, codes, ea, eb, ra, rb, ne)
    assert set(kept_l.tolist()) == twin_l and set(kept_r.tolist()) == twin_r
    deg_l = np.zeros(kept_l.size, np.int32)
    deg_r = np.zeros(kept_r.size, np.int32)
    total = count_composite(  # counted over the rows kept, as the engine does
        kept_l, kept_r, codes, ea, eb, doms, ra, rb, dom, ne, deg_l, deg_r, 1 << 16, False
    )
    dense = Degrees.sparse(n, [(kept_l, deg_l, kept_r, deg_r)])
    assert np.array_equal(dense.left, want_l) and np.array_equal(dense.right, want_r)
    assert total == want_l.sum()


@settings(max_examples=examples(300), deadline=None, suppress_health_check=SLOW)
@given(data=st.data())
def test_group_composite_groups_as_naive(data):
    """Leading equalities grouped at once, serially (``group_composite``): the
    runs are the naive groups of tids holding equal codes in every row (NULL in
    none), of two tids or more, each reflexive; narrow and wide domains (a first
    domain too wide to be the ids; pairs past the direct table)."""
    n = data.draw(st.integers(0, 60))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    k = data.draw(st.integers(1, 3))
    dom = data.draw(st.integers(1, 6))
    codes = rng.integers(-1, dom, (k, n)).astype(np.int32)
    widen = data.draw(st.sampled_from([1, 1000, 1 << 20]))
    doms = np.array([dom * (widen if j == 0 or data.draw(st.booleans()) else 1) for j in range(k)])
    tids = np.sort(rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)).astype(np.int32)
    buf, desc = group_composite(tids, codes, np.arange(k, dtype=np.int64), doms.astype(np.int64))
    want: dict[tuple, list[int]] = {}
    for t in tids.tolist():
        key = tuple(codes[:, t].tolist())
        if min(key) >= 0:
            want.setdefault(key, []).append(t)
    assert sorted(buf.tolist()) == sorted(t for g in want.values() for t in g)
    got = [buf[d[0] : d[1]].tolist() for d in desc]
    assert sorted(got) == sorted(g for g in want.values() if len(g) >= 2)  # stable: tid order
    assert (desc[:, 0] == desc[:, 4]).all() and (desc[:, 1] == desc[:, 5]).all()
    assert (desc[:, [2, 3, 6, 7]] == desc[:, [0]]).all()  # no holes


def test_sparse_degrees_sum_a_rows_shares_over_pieces():
    """Degrees by position over several pieces (a scoped run's initial pairs: a
    row on the right of both): a row's shares add up, in the totals as when
    spread over the table."""
    n = 10
    pieces = [
        (np.array([1, 2], np.int32), np.array([2, 0]), np.array([5, 6], np.int32), np.array([1, 1])),
        (np.array([7], np.int32), np.array([1]), np.array([5], np.int32), np.array([1])),
    ]  # fmt: skip
    deg = Degrees.sparse(n, pieces)
    assert deg.totals() == (3, 4)  # rows 1, 5, 6, 7
    assert deg.left.tolist() == [0, 2, 0, 0, 0, 0, 0, 1, 0, 0]
    assert deg.right.tolist() == [0, 0, 0, 0, 0, 2, 1, 0, 0, 0]
    assert deg.totals() == degree_totals(deg.left, deg.right)
    assert Degrees.sparse(n, []).totals() == (0, 0)


def test_partnered_reads_a_side_of_every_row_in_row_order():
    """A side holding every row (the initial pairs) is read without its tids, in
    row order: what is kept is the twin's rows, ascending, whatever order the
    side came in; a side of fewer rows keeps its own order."""
    rng = np.random.default_rng(11)
    n = 500
    codes = rng.integers(-1, 30, (2, n)).astype(np.int32)
    codes[0, codes[0] >= 20] -= 15  # column 0 lacks codes 20..29 that column 1 holds
    ea, eb = np.array([0], np.int64), np.array([1], np.int64)
    doms = np.array([30], np.int64)
    every = rng.permutation(n).astype(np.int64)
    for lt, rt in ((every, every), (np.arange(n, dtype=np.int64), every[: n // 2])):
        kept_l, kept_r = partnered(
            lt, rt, codes, ea, eb, doms, 1, 0, 30, False, np.empty_like(lt), np.empty_like(rt)
        )
        twin_l, twin_r = _naive_partnered(lt, rt, codes, ea, eb, 1, 0, False)
        assert set(kept_l.tolist()) == twin_l and set(kept_r.tolist()) == twin_r
        for side, kept in ((lt, kept_l), (rt, kept_r)):
            if side.size == n:
                assert kept.tolist() == sorted(kept.tolist())
            else:
                order = {t: i for i, t in enumerate(side.tolist())}
                assert [order[t] for t in kept.tolist()] == sorted(order[t] for t in kept.tolist())
        assert 0 < kept_r.size < rt.size  # the side was cut


def test_present_codes_are_the_codes_a_column_holds():
    """Statistics' presence pass (``present_codes``) against numpy."""
    rng = np.random.default_rng(7)
    for d in (1, 5, 300):
        col = rng.integers(-1, d, 1000).astype(np.int32)
        present, nulls = present_codes(col, d)
        assert present.tolist() == sorted(set(col[col >= 0].tolist()))
        assert nulls == int(np.count_nonzero(col < 0))
    present, nulls = present_codes(np.full(3, -1, np.int32), 4)
    assert present.size == 0 and nulls == 3


@settings(max_examples=examples(400, 40), deadline=None, suppress_health_check=SLOW)
@given(data=st.data())
def test_key_candidates_are_the_rows_whose_first_value_repeats(data):
    codes, _ = data.draw(code_matrices(rows=3, max_n=30, big_n=200))
    n = codes.shape[1]
    first = data.draw(st.integers(0, 2))
    # the engine's codes are dense (a table's dictionary): rank the first row's
    valued = codes[first] >= 0
    codes[first, valued] = np.unique(codes[first, valued], return_inverse=True)[1]
    others = np.array(
        data.draw(st.lists(st.sampled_from([r for r in range(3) if r != first]), unique=True)),
        np.int64,
    )
    values = [int(v) for v in codes[first] if v >= 0]
    want = [
        i for i in range(n)
        if codes[first, i] >= 0 and values.count(int(codes[first, i])) >= 2
        and all(codes[r, i] >= 0 for r in others)
    ]  # fmt: skip
    limit = data.draw(st.integers(0, n + 1))
    dom = int(codes[first].max()) + 1 + data.draw(st.integers(0, 3))  # any bound above
    tids, ok = key_candidates(codes, first, others, dom, limit)
    if len(want) <= limit:
        assert ok and tids.tolist() == want
    else:  # more rows pass than the limit: the caller counts another way
        assert not ok and tids.size == 0


@settings(max_examples=examples(400, 40), deadline=None, suppress_health_check=SLOW)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), max_size=60), st.booleans())
def test_key_counts_are_the_naive_key_and_fd_counts(rows, fd):
    """``key_counts`` over packed keys (any int64, here ``x << 40``) against the
    pairs themselves: a key's pairs hold one ``x``; an FD's also two ``y``."""
    xs = np.array([x << 40 for x, _ in rows], np.int64)
    xys = np.array([(x << 40) | y for x, y in rows], np.int64)
    pairs = [
        (i, j) for i in range(len(rows)) for j in range(len(rows))
        if i != j and rows[i][0] == rows[j][0] and (not fd or rows[i][1] != rows[j][1])
    ]  # fmt: skip
    violations, involved = key_counts(xs, xys if fd else xys[:0])
    assert violations == len(pairs)
    assert involved == len({r for p in pairs for r in p})


# ------------------------------------------------------------------ dominance indexes
@settings(max_examples=examples(300, 40), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_wavelet_counts_are_the_naive_counts(data):
    """``count_less`` over every position range equals counting the sequence."""
    from facet.kernels.dominance import count_less, wavelet_build

    ys = np.array(data.draw(st.lists(st.integers(0, 200), min_size=0, max_size=150)), np.int64)
    nbits = max(int(ys.max(initial=0)), 1).bit_length()
    words, ones, zeros = wavelet_build(ys, nbits)
    for _ in range(10):
        lo = data.draw(st.integers(0, ys.size))
        hi = data.draw(st.integers(lo, ys.size))
        v = data.draw(st.integers(-2, (1 << nbits) + 2))
        assert count_less(words, ones, zeros, lo, hi, v) == int((ys[lo:hi] < v).sum())


@settings(max_examples=examples(300, 40), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_orthant_and_union_counts_are_the_naive_counts(data):
    """Points (dense ranks of a level's distinct codes) sorted by segment then
    ``x``: per query the points of its segment in its orthant, given as codes and
    operators, and the points in the union of every query's two orthants."""
    from facet.kernels.dominance import GT, LE, LT, orthant_counts, union_count, wavelet_build

    sizes = data.draw(st.lists(st.integers(0, 30), min_size=1, max_size=4))
    span = data.draw(st.integers(1, 12))
    xs, ys, seg = [], [], [0]
    for m in sizes:
        pts = sorted(data.draw(st.lists(st.tuples(st.integers(0, span), st.integers(0, span)),
                                        min_size=m, max_size=m)))  # fmt: skip
        xs += [p[0] for p in pts]
        ys += [p[1] for p in pts]
        seg.append(seg[-1] + m)
    xs, ys = np.array(xs, np.int32), np.array(ys, np.int64)
    # the level's distinct codes: rank r stands for code 3r (codes between are absent)
    dx, dy = 3 * np.arange(span + 1), 3 * np.arange(span + 1)
    ymax = span
    words, ones, zeros = wavelet_build(ys, max(ymax, 1).bit_length())
    one = len(sizes) == 1 and data.draw(st.booleans())  # one segment: by xstart
    xstart = np.searchsorted(xs, np.arange(span + 2)) if one else np.zeros(0, np.int64)
    # queries grouped by segment (a segment once)
    groups = data.draw(
        st.lists(st.integers(0, len(sizes) - 1), min_size=1, max_size=4, unique=True)
    )
    starts, glo, ghi, qlo, qhi = [0], [], [], [], []
    for g in groups:
        k = data.draw(st.integers(1, 6))
        starts.append(starts[-1] + k)
        glo.append(seg[g])
        ghi.append(seg[g + 1])
        qlo += [seg[g]] * k
        qhi += [seg[g + 1]] * k
    q = starts[-1]
    code = st.integers(-2, 3 * span + 2)
    ops = [data.draw(st.integers(0, 3)) for _ in range(4)]  # x, y of family 1, then 2
    vals = [np.array(data.draw(st.lists(code, min_size=q, max_size=q)), np.int64) for _ in range(4)]
    if data.draw(st.booleans()):  # x values increasing per segment, as a batch sorted by key, x
        for a, b in zip(starts[:-1], starts[1:], strict=True):
            vals[0][a:b].sort()
            vals[2][a:b].sort()
    cmp = [operator.lt, operator.le, operator.gt, operator.ge]
    pos = np.arange(xs.size)

    def inside(i: int, f: int) -> np.ndarray:
        in_x = cmp[ops[2 * f]](dx[xs], vals[2 * f][i])
        in_y = cmp[ops[2 * f + 1]](dy[ys], vals[2 * f + 1][i])
        return in_x & in_y & (pos >= qlo[i]) & (pos < qhi[i])

    lo_a, hi_a = np.array(qlo, np.int64), np.array(qhi, np.int64)
    bounds = []
    # family 1 over (vals[0], vals[1]); family 2 over the same values in one pass, or
    # over its own (vals[2], vals[3])
    shared = data.draw(st.booleans())
    if shared:
        vals[2], vals[3] = vals[0], vals[1]
    calls = [[0, 1]] if shared else [[0], [1]]
    for fs in calls:
        out = np.full((len(fs), q), 7, np.int64)
        bx, by = np.empty((len(fs), q), np.int64), np.empty((len(fs), q), np.int64)
        xops = np.array([ops[2 * f] for f in fs], np.int64)
        yops = np.array([ops[2 * f + 1] for f in fs], np.int64)
        orthant_counts(words, ones, zeros, xs, xstart, dx, dy, lo_a, hi_a,
                       vals[2 * fs[0]], vals[2 * fs[0] + 1], xops, yops, out, bx, by)  # fmt: skip
        for j, f in enumerate(fs):
            assert (out[j] - 7).tolist() == [int(inside(i, f).sum()) for i in range(q)]
            bounds.append((ops[2 * f] <= LE, bx[j], ops[2 * f + 1] >= GT, by[j]))
    assert LT == 0
    union = np.zeros(xs.size, np.bool_)
    for i in range(q):
        union |= inside(i, 0) | inside(i, 1)
    (le1, bx1, ge1, by1), (le2, bx2, ge2, by2) = bounds
    got = union_count(words, ones, zeros, xs, xstart, ymax, np.array(starts, np.int64),
                      np.array(glo, np.int64), np.array(ghi, np.int64),
                      le1, ge1, bx1, by1, le2, ge2, bx2, by2)  # fmt: skip
    assert got == int(union.sum())


@settings(max_examples=examples(200, 30), deadline=None)
@given(st.data())
def test_move_codes_is_a_remapped_copy(data):
    """An append's old codes: through the rank remap (NULL in its last slot) or copied."""
    from facet.kernels.ranks import move_codes

    d = data.draw(st.integers(1, 20))
    src = np.array(data.draw(st.lists(st.integers(-1, d - 1), max_size=50)), np.int32)
    grow = np.sort(np.array(data.draw(st.lists(st.integers(0, 3), min_size=d, max_size=d))))
    remap = np.r_[np.arange(d) + grow, -1].astype(np.int32)
    lo = data.draw(st.integers(0, src.size))
    hi = data.draw(st.integers(lo, src.size))
    for table, want in ((remap, remap[src]), (np.zeros(0, np.int32), src)):
        out = np.full(src.size, 99, np.int32)
        move_codes(src, table, out, lo, hi)
        assert out[lo:hi].tolist() == want[lo:hi].tolist()
        assert (out[:lo] == 99).all() and (out[hi:] == 99).all()


def test_degree_totals_are_the_sum_and_the_rows_with_a_degree():
    """One pass for a DC's count and rows involved, against numpy."""
    from facet.kernels.count import degree_totals

    rng = np.random.default_rng(11)
    for n in (0, 1, 1000):
        left = rng.integers(0, 3, n) * (rng.random(n) < 0.3)
        right = rng.integers(0, 3, n) * (rng.random(n) < 0.3)
        v, rows = degree_totals(left.astype(np.int64), right.astype(np.int64))
        assert v == left.sum()
        assert rows == np.count_nonzero((left > 0) | (right > 0))


@settings(max_examples=examples(200), deadline=None, suppress_health_check=SLOW)
@given(data=st.data())
def test_split_by_code_cuts_both_sides_at_the_same_codes(data):
    """The pieces a fused count runs on threads: every row with a code is in one
    piece, NULLs in none, and a code's rows of both sides are in the same piece."""
    from facet.kernels.composite import split_by_code

    n = data.draw(st.integers(1, 60))
    dom = data.draw(st.integers(1, 12))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    ca = rng.integers(-1, dom, n).astype(np.int32)
    cb = rng.integers(-1, dom, n).astype(np.int32)
    lt = rng.permutation(n)[: int(rng.integers(0, n + 1))].astype(np.int32)
    rt = rng.permutation(n)[: int(rng.integers(0, n + 1))].astype(np.int32)
    parts = data.draw(st.integers(1, 4))
    l_off, lp, r_off, rp = split_by_code(lt, rt, ca, cb, dom, parts)
    assert sorted(lp.tolist()) == sorted(t for t in lt.tolist() if ca[t] >= 0)
    assert sorted(rp.tolist()) == sorted(t for t in rt.tolist() if cb[t] >= 0)
    piece_of: dict[int, int] = {}
    for p in range(parts):
        for t in lp[l_off[p] : l_off[p + 1]]:
            assert piece_of.setdefault(int(ca[t]), p) == p
        for t in rp[r_off[p] : r_off[p + 1]]:
            assert piece_of.setdefault(int(cb[t]), p) == p


def test_stable_order_is_a_stable_argsort():
    """``stable_order`` (counting sort or numpy's) against ``np.argsort(kind='stable')``."""
    from facet.kernels.common import stable_order

    rng = np.random.default_rng(5)
    tune = DEFAULT.kernel_tuning()
    for m, domain in ((0, 1), (50, 4), (300, 10**6), (2000, 100)):
        keys = rng.integers(0, domain, m).astype(np.int64)
        order = stable_order(keys, domain, tune)
        assert order.tolist() == np.argsort(keys, kind="stable").tolist()
