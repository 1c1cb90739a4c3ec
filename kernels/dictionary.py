"""Exact dictionary codes for text (and binary) columns, by hashing.

Rows are hashed (FNV-1a + splitmix64 -- the value hash of
:mod:`facet.kernels.hashing`, so statistics reuse it).  A column with few
distinct values is deduplicated in one pass with one cache-sized table; else
rows are scattered into 256 partitions by the top hash bits and each partition
is deduplicated with a small table.  Every row is then checked byte by byte
against its code's value, kept in a compact arena that stays in cache, so the
codes are exact (a 64-bit collision between different values is reported and
the caller encodes another way).  Codes are dense; equality codes carry no order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from facet.kernels.hashing import mix64

_PARTS = 256
_FEW = 1 << 15


@njit(cache=True, nogil=True, inline="always")
def _hash_row(offsets, data, i):
    h = np.uint64(0xCBF29CE484222325)
    for k in range(offsets[i], offsets[i + 1]):
        h = (h ^ np.uint64(data[k])) * np.uint64(0x100000001B3)
    return mix64(h ^ np.uint64(offsets[i + 1] - offsets[i]))


@njit(cache=True, nogil=True)
def _arena(offsets, data, first):
    """The values of the codes' first rows, copied contiguously."""
    d = first.shape[0]
    key_off = np.empty(d + 1, np.int64)
    total = 0
    for c in range(d):
        key_off[c] = total
        total += offsets[first[c] + 1] - offsets[first[c]]
    key_off[d] = total
    arena = np.empty(total, np.uint8)
    for c in range(d):
        s = offsets[first[c]]
        arena[key_off[c] : key_off[c + 1]] = data[s : s + key_off[c + 1] - key_off[c]]
    return arena, key_off


@njit(cache=True, nogil=True)
def _matches(offsets, data, i, arena, key_off, c):
    s = offsets[i]
    length = offsets[i + 1] - s
    if key_off[c + 1] - key_off[c] != length:
        return False
    k0 = key_off[c]
    for k in range(length):  # noqa: SIM110 - a numba loop, not a generator
        if arena[k0 + k] != data[s + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def _few_values(offsets, data, valid, limit):
    """One table for columns with at most ``limit`` distinct values; ``ok=False``
    as soon as there are more."""
    n = offsets.shape[0] - 1
    cap = 16
    while cap < 2 * limit:
        cap <<= 1
    mask = np.uint64(cap - 1)
    slots = np.full(cap, -1, np.int32)
    codes = np.full(n, -1, np.int32)
    first = np.empty(limit, np.int64)
    code_hash = np.empty(limit, np.uint64)
    nxt = 0
    for i in range(n):
        if not valid[i]:
            continue
        h = _hash_row(offsets, data, i)
        j = h & mask
        while True:
            code = slots[j]
            if code == -1:
                if nxt == limit:
                    return codes, first[:0], code_hash[:0], False
                slots[j] = nxt
                first[nxt] = i
                code_hash[nxt] = h
                codes[i] = nxt
                nxt += 1
                break
            if code_hash[code] == h:
                codes[i] = code
                break
            j = (j + np.uint64(1)) & mask
    return codes, first[:nxt], code_hash[:nxt], True


@njit(cache=True, nogil=True)
def _partitioned(offsets, data, valid):
    n = offsets.shape[0] - 1
    hashes = np.empty(n, np.uint64)
    count = np.zeros(_PARTS + 1, np.int64)
    for i in range(n):
        if valid[i]:
            h = _hash_row(offsets, data, i)
            hashes[i] = h
            count[np.int64(h >> np.uint64(56)) + 1] += 1
    for p in range(_PARTS):
        count[p + 1] += count[p]
    m = count[_PARTS]
    rows = np.empty(m, np.int64)
    part_hash = np.empty(m, np.uint64)
    cursor = count[:_PARTS].copy()
    for i in range(n):
        if valid[i]:
            h = hashes[i]
            p = np.int64(h >> np.uint64(56))
            rows[cursor[p]] = i
            part_hash[cursor[p]] = h
            cursor[p] += 1
    part_code = np.empty(m, np.int32)
    first = np.empty(m, np.int64)
    code_hash = np.empty(m, np.uint64)
    biggest = 16
    for p in range(_PARTS):
        biggest = max(biggest, count[p + 1] - count[p])
    cap = 16
    while cap < 2 * biggest:
        cap <<= 1
    slots = np.empty(cap, np.int32)
    nxt = 0
    for p in range(_PARTS):
        s0 = count[p]
        s1 = count[p + 1]
        if s1 == s0:
            continue
        c = 16
        while c < 2 * (s1 - s0):
            c <<= 1
        mask = np.uint64(c - 1)
        slots[:c] = -1
        for r in range(s0, s1):
            h = part_hash[r]
            j = h & mask
            while True:
                code = slots[j]
                if code == -1:
                    slots[j] = nxt
                    first[nxt] = rows[r]
                    code_hash[nxt] = h
                    part_code[r] = nxt
                    nxt += 1
                    break
                if code_hash[code] == h:
                    part_code[r] = code
                    break
                j = (j + np.uint64(1)) & mask
    codes = np.full(n, -1, np.int32)
    for r in range(m):
        codes[rows[r]] = part_code[r]
    return codes, first[:nxt], code_hash[:nxt]


@njit(cache=True, nogil=True)
def encode_bytes(offsets, data, valid):
    """Codes (int32, -1 for NULL) of variable-length values (Arrow string /
    binary buffers: ``offsets`` int64, ``data`` uint8), the row of each code's
    first occurrence, each code's value hash, and whether the codes are exact."""
    codes, first, code_hash, ok = _few_values(offsets, data, valid, _FEW)
    if not ok:
        codes, first, code_hash = _partitioned(offsets, data, valid)
    n = codes.shape[0]
    if 8 * first.shape[0] > n:
        # mostly distinct values: few rows repeat one, check those in place
        for i in range(n):
            c = codes[i]
            if c >= 0 and first[c] != i:
                f = first[c]
                s = offsets[f]
                length = offsets[f + 1] - s
                if offsets[i + 1] - offsets[i] != length:
                    return codes, first, code_hash, False
                for k in range(length):
                    if data[s + k] != data[offsets[i] + k]:
                        return codes, first, code_hash, False
        return codes, first, code_hash, True
    arena, key_off = _arena(offsets, data, first)
    for i in range(n):
        c = codes[i]
        if c >= 0 and first[c] != i and not _matches(offsets, data, i, arena, key_off, c):
            return codes, first, code_hash, False
    return codes, first, code_hash, True
