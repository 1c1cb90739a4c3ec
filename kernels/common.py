"""Shared numba helpers over pairs of tid sets (docs/architecture.md "Pairs of tid sets").

A batch of groups is a tid buffer ``buf`` (int32) and a descriptor array
``desc`` (int64, one row per group) of eight columns::

    LS, LE, LHS, LHE, RS, RE, RHS, RHE

The left side of group ``g`` is ``buf[LS:LE]`` minus the sub-slice
``buf[LHS:LHE]`` (the *hole*; an empty hole is always written ``LHS == LHE
== LS``), the right side likewise.  A group stands for every ``(t, t')`` with ``t`` in the left side,
``t'`` in the right side and ``t != t'``.  Sides are slices of sorted copies,
so suffixes (HSM) and "all but one value" (non-equality) cost O(1) each.

Predicates are encoded as small int arrays: ``pa[k]``/``pb[k]`` are the rows of
the code matrix for the ``t`` and ``t'`` operand, ``po[k]`` the operator.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.jit import njit
from facet.kernels.tuning import CSORT_DENSE, CSORT_MAX_CODES, CSORT_SPARSE

LS, LE, LHS, LHE, RS, RE, RHS, RHE = range(8)

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_ONE = np.uint64(1)


@njit(cache=True, inline="always")
def popcount(x: np.uint64) -> int:
    """The set bits of a uint64 (LLVM turns this SWAR form into one ``popcnt``)."""
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return int((x * _H01) >> np.uint64(56))


OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE = range(6)
OP_CODES = {"=": OP_EQ, "!=": OP_NE, "<": OP_LT, "<=": OP_LE, ">": OP_GT, ">=": OP_GE}
#: ``a op b`` <=> ``b FLIP[op] a`` on codes
OP_FLIP = np.array([OP_EQ, OP_NE, OP_GT, OP_GE, OP_LT, OP_LE], np.int64)


@njit(cache=True, nogil=True)
def iota(out):
    """``out[i] = i``: the tids of a whole table, written into memory the caller
    chose (:func:`facet.engine.memory.whole_tids`)."""
    for i in range(out.shape[0]):
        out[i] = i


@njit(cache=True, nogil=True)
def rows_within(values, n, allow_none=False):
    """Whether every row id of ``values`` is a dense position ``0..n-1`` (``allow_none``:
    -1 too, a pair's missing second row): a kernel indexing arrays of ``n`` rows with
    ids an engine handed it checks them first."""
    low = -1 if allow_none else 0
    for k in range(values.shape[0]):
        v = values[k]
        if v < low or v >= n:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def compare(a, op, b):
    """``a op b`` on non-NULL codes."""
    if op == 0:
        return a == b
    if op == 1:
        return a != b
    if op == 2:
        return a < b
    if op == 3:
        return a <= b
    if op == 4:
        return a > b
    return a >= b


@njit(cache=True, nogil=True, inline="always")
def holds(codes, pa, pb, po, start, t, u):
    """Do predicates ``start..`` hold for the pair ``(t, u)`` (NULL -> false)?"""
    for k in range(start, pa.shape[0]):
        x = codes[pa[k], t]
        y = codes[pb[k], u]
        if x < 0 or y < 0:
            return False
        if not compare(x, po[k], y):
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def side_size(desc, g, s):
    """Number of tids on side ``s`` (0 = left, 4 = right) of group ``g``."""
    return (desc[g, s + 1] - desc[g, s]) - (desc[g, s + 3] - desc[g, s + 2])


@njit(cache=True, nogil=True, inline="always")
def is_reflexive(desc, g):
    """Both sides are the same set (kernels always write an empty hole as ``(S, S)``)."""
    return (
        desc[g, 0] == desc[g, 4]
        and desc[g, 1] == desc[g, 5]
        and desc[g, 2] == desc[g, 6]
        and desc[g, 3] == desc[g, 7]
    )


@njit(cache=True, nogil=True)
def gather(buf, desc, g, s, col, nonnull_rows, out):
    """Copy the tids of side ``s`` of group ``g`` into ``out``, keeping only rows
    whose codes in every row of ``nonnull_rows`` are non-NULL; returns the count.
    ``col`` is the code matrix."""
    m = 0
    i = desc[g, s]
    e = desc[g, s + 1]
    hs = desc[g, s + 2]
    he = desc[g, s + 3]
    nk = nonnull_rows.shape[0]
    while i < e:
        if i == hs and he > hs:
            i = he
            continue
        t = buf[i]
        ok = True
        for k in range(nk):
            if col[nonnull_rows[k], t] < 0:
                ok = False
                break
        if ok:
            out[m] = t
            m += 1
        i += 1
    return m


def counting_sort_wins(m, domain, tune):
    """Counting sort beats a comparison sort while its count array stays in cache
    (``Config.counting_sort_*``).  Plain Python for callers outside the kernels (a
    call through numba's dispatcher would load a compiled signature of its own);
    the kernels inline :func:`use_counting_sort`."""
    return domain <= m // tune[CSORT_DENSE] + 64 or (
        domain <= tune[CSORT_SPARSE] * m and domain <= tune[CSORT_MAX_CODES]
    )


use_counting_sort = njit(cache=True, nogil=True, inline="always")(counting_sort_wins)


@njit(cache=True, nogil=True)
def sort_by_key(tids, keys, domain, tune):
    """``tids`` ordered by ``keys[tids]``, ties in input order (stable).

    Counting sort when the key domain is small against the input; otherwise one
    int64 sort of ``key << 32 | position`` (cache-friendlier than a counting
    sort over a large domain, and stable by construction)."""
    m = tids.shape[0]
    if m <= 1:
        return tids.copy()
    if domain > 0 and use_counting_sort(m, domain, tune):
        cnt = np.zeros(domain + 1, np.int64)
        for i in range(m):
            cnt[keys[tids[i]] + 1] += 1
        for v in range(domain):
            cnt[v + 1] += cnt[v]
        out = np.empty(m, tids.dtype)
        for i in range(m):
            k = keys[tids[i]]
            out[cnt[k]] = tids[i]
            cnt[k] += 1
        return out
    kv = np.empty(m, np.int64)
    for i in range(m):
        kv[i] = (np.int64(keys[tids[i]]) << 32) | i
    kv.sort()
    out = np.empty(m, tids.dtype)
    for i in range(m):
        out[i] = tids[kv[i] & 0xFFFFFFFF]
    return out


@njit(cache=True, nogil=True)
def stable_order(keys, domain, tune):
    """The stable permutation sorting non-negative ``keys`` (< ``domain``)."""
    m = keys.shape[0]
    if use_counting_sort(m, domain, tune):
        cnt = np.zeros(domain + 1, np.int64)
        for i in range(m):
            cnt[keys[i] + 1] += 1
        for v in range(domain):
            cnt[v + 1] += cnt[v]
        out = np.empty(m, np.int64)
        for i in range(m):
            k = keys[i]
            out[cnt[k]] = i
            cnt[k] += 1
        return out
    kv = np.empty(m, np.int64)
    for i in range(m):
        kv[i] = (np.int64(keys[i]) << 32) | i
    kv.sort()
    out = np.empty(m, np.int64)
    for i in range(m):
        out[i] = kv[i] & 0xFFFFFFFF
    return out


@njit(cache=True, nogil=True, inline="always")
def partners(op, p, q, lo, hi):
    """The slice ``[s0, s1)`` of a right side sorted by code (within ``[lo, hi)``)
    whose codes satisfy ``v op code`` for a left code ``v``, given ``p`` (first
    index with code >= v) and ``q`` (first index with code > v)."""
    if op == 2:  # v < code
        return q, hi
    if op == 3:  # v <= code
        return p, hi
    if op == 4:  # v > code
        return lo, p
    return lo, q  # v >= code


@njit(cache=True, nogil=True, inline="always")
def lower_bound(a, n, x):
    """First index ``i < n`` with ``a[i] >= x`` (``n`` if none)."""
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def compare_arrays(x: np.ndarray, op: int, y) -> np.ndarray:
    """Vectorized ``x op y`` on codes (NULL handling is the caller's)."""
    if op == OP_EQ:
        return x == y
    if op == OP_NE:
        return x != y
    if op == OP_LT:
        return x < y
    if op == OP_LE:
        return x <= y
    if op == OP_GT:
        return x > y
    return x >= y
