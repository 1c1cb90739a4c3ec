"""Dense ranks of integer keys by LSD radix sort (the order codes of paper §4.1's
encoding step for wide integer columns: decimals as unscaled integers, prices, ids).

A column whose range is too wide for a histogram is sorted by ``RADIX_BITS``-bit digits
of ``value - lo`` (one stable counting pass per digit: O(n) per pass, no comparisons),
then each run of equal keys gets the next rank. NULL rows (``valid`` false) get -1 and
take no rank. A column whose range is small against its rows gets the same ranks from a
presence bitmap over the range, its ones counted before each word (:func:`histogram_ranks`).
"""

from __future__ import annotations

import numpy as np

from facet.kernels.common import popcount
from facet.kernels.jit import njit

#: bits per counting pass (2,048 buckets: the counts stay in L1)
RADIX_BITS = 11
_ONE = np.uint64(1)


@njit(cache=True, nogil=True)
def dense_ranks(values, valid, lo, span_bits):
    """``(ranks, uniq)``: ``ranks[i]`` the 0-based dense rank of ``values[i]`` among the
    valid values (-1 where ``valid[i]`` is false) and ``uniq`` the distinct valid values
    in increasing order. Every valid value is ``lo + k`` with ``0 <= k < 2**span_bits``
    (``span_bits <= 64``: ``k`` is taken modulo 2**64, so any two int64 values do).

    The offsets ``k`` travel with their rows through the passes (each pass reads them in
    order); the digits' counts come from one pass first, and a digit every row shares
    is no pass at all (the high digits of a narrow span)."""
    n = values.size
    m = 0
    for i in range(n):
        if valid[i]:
            m += 1
    idx = np.empty(m, np.int64)
    key = np.empty(m, np.uint64)
    vu = values.view(np.uint64)
    base = np.empty(1, np.int64)
    base[0] = lo
    ulo = base.view(np.uint64)[0]
    nb = 1 << RADIX_BITS
    mask = np.uint64(nb - 1)
    nd = max(1, (span_bits + RADIX_BITS - 1) // RADIX_BITS)
    count = np.zeros((nd, nb), np.int64)
    j = 0
    for i in range(n):
        if valid[i]:
            k = vu[i] - ulo
            idx[j] = i
            key[j] = k
            j += 1
            for d in range(nd):
                count[d, (k >> np.uint64(d * RADIX_BITS)) & mask] += 1
    tmp_i = np.empty(m, np.int64)
    tmp_k = np.empty(m, np.uint64)
    for d in range(nd):
        at = 0
        single = False
        for b in range(nb):
            c = count[d, b]
            single |= c == m
            count[d, b] = at
            at += c
        if single:
            continue  # every row has this digit: the order stands
        shift = np.uint64(d * RADIX_BITS)
        for q in range(m):
            k = key[q]
            b = (k >> shift) & mask
            p = count[d, b]
            tmp_i[p] = idx[q]
            tmp_k[p] = k
            count[d, b] = p + 1
        idx, tmp_i = tmp_i, idx
        key, tmp_k = tmp_k, key
    ranks = np.full(n, -1, np.int32)
    uniq = np.empty(m, values.dtype)
    r = -1
    for q in range(m):
        i = idx[q]
        if r < 0 or key[q] != key[q - 1]:
            r += 1
            uniq[r] = values[i]
        ranks[i] = r
    return ranks, uniq[: r + 1]


@njit(cache=True, nogil=True)
def move_codes(src, remap, out, lo, hi):
    """``out[lo:hi]``: ``src[lo:hi]`` through ``remap`` (``remap[c]`` the new code
    of old code ``c``; its last slot is NULL's, -1's) or copied when ``remap`` is
    empty -- an append's old codes when values were inserted among the ranks."""
    if remap.shape[0] == 0:
        for i in range(lo, hi):
            out[i] = src[i]
        return
    last = remap.shape[0] - 1
    for i in range(lo, hi):
        c = src[i]
        out[i] = remap[c] if c >= 0 else remap[last]


@njit(cache=True, nogil=True)
def value_range(values, valid):
    """``(lo, hi, m)``: the least and greatest valid value and how many are valid
    (``valid`` empty: every one), in one pass -- numpy's ``min`` and ``max`` are
    two, over a masked copy where there are NULLs.  ``(0, -1, 0)`` when none is."""
    n = values.size
    if valid.size == 0:
        if n == 0:
            return np.int64(0), np.int64(-1), 0
        lo = values[0]
        hi = values[0]
        for i in range(1, n):
            x = values[i]
            lo = min(lo, x)
            hi = max(hi, x)
        return np.int64(lo), np.int64(hi), n
    lo = np.iinfo(np.int64).max
    hi = np.iinfo(np.int64).min
    m = 0
    for i in range(n):
        ok = valid[i]
        x = np.int64(values[i])
        lo = min(lo, x) if ok else lo
        hi = max(hi, x) if ok else hi
        m += ok
    if m == 0:
        return np.int64(0), np.int64(-1), 0
    return lo, hi, m


@njit(cache=True, nogil=True)
def histogram_ranks(values, valid, lo, span, out):
    """``(ranks, uniq)`` as :func:`dense_ranks` gives them, for values in the small range
    ``lo .. lo + span - 1``: a presence bitmap over the range with the ones counted
    before each 64-bit word, then one lookup per row (O(n + span / 64), no sort; the
    bitmap and its counts take 1.5 bits a value of the range, not an int32 each).
    ``valid`` empty: every row is valid.  The ranks are written to ``out`` (int32,
    one per value; the encoder passes the code matrix's rows) and returned."""
    bits = range_bitmap(span)
    mark_range(values, valid, lo, bits)
    before, uniq = rank_marks(bits, lo)
    lookup_range(values, valid, lo, bits, before, out)
    return out, uniq


@njit(cache=True, nogil=True)
def range_bitmap(span):
    """An empty presence bitmap over ``span`` values (uint64 words)."""
    return np.zeros((span + 63) >> 6, np.uint64)


@njit(cache=True, nogil=True)
def mark_range(values, valid, lo, bits):
    """Set the bit of ``v - lo`` for each valid value ``v`` (``valid`` empty: every
    one): :func:`histogram_ranks`'s presence bitmap, filled part by part when a
    component's columns are ranked together without being concatenated."""
    every = valid.size == 0
    for i in range(values.size):
        if every or valid[i]:
            k = values[i] - lo
            bits[k >> 6] |= _ONE << np.uint64(k & 63)


@njit(cache=True, nogil=True)
def rank_marks(bits, lo):
    """``(before, uniq)``: the ones of the presence bitmap before each word (a value's
    rank is that plus the ones below it in its word) and the values present,
    ascending."""
    nw = bits.size
    before = np.empty(nw, np.int32)
    d = 0
    for w in range(nw):
        before[w] = d
        d += popcount(bits[w])
    uniq = np.empty(d, np.int64)
    j = 0
    for w in range(nw):
        x = bits[w]
        base = lo + (w << 6)
        while x:
            low = x & (~x + _ONE)  # the lowest set bit
            uniq[j] = base + popcount(low - _ONE)
            j += 1
            x ^= low
    return before, uniq


@njit(cache=True, nogil=True)
def lookup_range(values, valid, lo, bits, before, out):
    """``out[i]``: the rank of ``values[i]`` (-1 where not valid), from the bitmap
    and the ones before each word (:func:`rank_marks`)."""
    every = valid.size == 0
    for i in range(values.size):
        if every or valid[i]:
            k = values[i] - lo
            w = k >> 6
            below = bits[w] & ((_ONE << np.uint64(k & 63)) - _ONE)
            out[i] = before[w] + popcount(below)
        else:
            out[i] = -1
