"""Value hashing and HyperLogLog registers (paper §6.1; docs/architecture.md "Kernels": statistics
hash values, not codes).

Hashes depend only on values (UTF-8 bytes of text, the int64 of integers and
timestamps, the IEEE bits of floats with -0.0 folded into 0.0), so sketches
built on different partitions or machines merge.  Registers follow
datasketch's ``HyperLogLogPlusPlus`` layout (64-bit hash, index = low ``p``
bits, rank of the rest), so datasketch estimates and merges them.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.jit import njit


@njit(cache=True, nogil=True, inline="always")
def mix64(x):
    """splitmix64 finalizer: a bijective avalanche of a 64-bit word."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def hash_row(offsets, data, i):
    """The 64-bit hash of variable-length value ``i`` (Arrow string/binary
    buffers): FNV-1a over its bytes, then :func:`mix64` with its length.  The
    one value hash of text: statistics and the text dictionary both use it."""
    h = np.uint64(0xCBF29CE484222325)
    for j in range(offsets[i], offsets[i + 1]):
        h = (h ^ np.uint64(data[j])) * np.uint64(0x100000001B3)
    return mix64(h ^ np.uint64(offsets[i + 1] - offsets[i]))


@njit(cache=True, nogil=True)
def hash_bytes(offsets, data):
    """:func:`hash_row` of every value."""
    n = offsets.shape[0] - 1
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = hash_row(offsets, data, i)
    return out


@njit(cache=True, nogil=True)
def hash_words(words):
    """64-bit hashes of fixed-width values given as uint64 words."""
    out = np.empty(words.shape[0], np.uint64)
    for i in range(words.shape[0]):
        out[i] = mix64(words[i] + np.uint64(0x9E3779B97F4A7C15))
    return out


@njit(cache=True, nogil=True)
def hll_registers(hashes, p):
    """HyperLogLog++ registers (``2**p`` of them) of a set of 64-bit hashes."""
    m = 1 << p
    reg = np.zeros(m, np.int8)
    max_rank = 64 - p
    for i in range(hashes.shape[0]):
        h = hashes[i]
        idx = np.int64(h & np.uint64(m - 1))
        bits = h >> np.uint64(p)
        length = 0
        while bits:
            bits >>= np.uint64(1)
            length += 1
        rank = max_rank - length + 1
        if rank > reg[idx]:
            reg[idx] = rank
    return reg


@njit(cache=True, nogil=True)
def present_codes(codes, d):
    """The codes (of ``0..d-1``) a column holds, ascending, and its NULLs (-1):
    one pass over the rows and one over the domain."""
    seen = np.zeros(max(d, 1), np.bool_)
    nulls = 0
    for i in range(codes.shape[0]):
        c = codes[i]
        if c < 0:
            nulls += 1
        else:
            seen[c] = True
    return np.flatnonzero(seen[:d]), nulls


@njit(cache=True, nogil=True)
def mix64_array(words):
    """:func:`mix64` of every word (used for tid sampling)."""
    out = np.empty(words.shape[0], np.uint64)
    for i in range(words.shape[0]):
        out[i] = mix64(words[i])
    return out


@njit(cache=True, nogil=True)
def row_hashes(codes, rows, code_hash, starts):
    """Hashes of the value combinations of several columns, one per row.

    ``rows``: code rows of the columns; ``code_hash[starts[k] + c]`` is the hash of
    code ``c`` of column ``k``.  Rows with a NULL in any column are left out.
    """
    n = codes.shape[1]
    out = np.empty(n, np.uint64)
    m = 0
    for t in range(n):
        h = np.uint64(0x243F6A8885A308D3)
        ok = True
        for k in range(rows.shape[0]):
            c = codes[rows[k], t]
            if c < 0:
                ok = False
                break
            h = mix64(h ^ code_hash[starts[k] + c])
        if ok:
            out[m] = h
            m += 1
    return out[:m]
