"""Exact dictionary codes for text (and binary) columns, by hashing.

Rows are hashed (FNV-1a + splitmix64 -- the value hash of
:mod:`facet.kernels.hashing`, so statistics reuse it).  A column with few
distinct values is deduplicated in one pass with one cache-sized table; else
rows are scattered into ``Config.dictionary_partitions`` partitions by the top hash bits and each partition
is deduplicated with a small table.  Every repeat is checked byte by byte
against its code's first value (while deduplicating on the partitioned path;
against a compact arena that stays in cache on the one-table path), so the
codes are exact (a 64-bit collision between different values is reported and
the caller encodes another way).  Codes are dense; equality codes carry no order.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.hashing import hash_row
from facet.kernels.jit import njit
from facet.kernels.tuning import DICT_FEW, DICT_PARTITIONS


@njit(cache=True, nogil=True, inline="always")
def _part_shift(parts):
    """A hash's partition among ``parts`` (a power of two >= 2) is ``h >> shift``:
    its top bits."""
    bits = 0
    while (1 << bits) < parts:
        bits += 1
    return np.uint64(64 - bits)


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


@njit(cache=True, nogil=True, inline="always")
def _probe(slots, hashes, base, h, mask):
    """The slot of hash ``h`` in an open-addressing table whose slots hold codes
    (``hashes[base + code]`` their hashes): its code's slot, or the empty one."""
    j = h & mask
    while slots[j] != -1 and hashes[base + slots[j]] != h:
        j = (j + np.uint64(1)) & mask
    return j


@njit(cache=True, nogil=True)
def _few_values(offsets, data, valid, limit, lo=0, hi=-1, codes=None):
    """One table for rows ``lo:hi`` (all by default) of a column with at most
    ``limit`` distinct values there; ``ok=False`` as soon as there are more.
    Codes (first-occurrence order) go to ``codes[lo:hi]`` (a new array by default)."""
    n = offsets.shape[0] - 1
    if hi < 0:
        hi = n
    if codes is None:
        codes = np.full(n, -1, np.int32)
    cap = 16
    while cap < 2 * limit:
        cap <<= 1
    mask = np.uint64(cap - 1)
    slots = np.full(cap, -1, np.int32)
    first = np.empty(limit, np.int32)
    code_hash = np.empty(limit, np.uint64)
    nxt = 0
    for i in range(lo, hi):
        if not valid[i]:
            codes[i] = -1
            continue
        h = hash_row(offsets, data, i)
        j = _probe(slots, code_hash, 0, h, mask)
        if slots[j] == -1:
            if nxt == limit:
                return codes, first[:0], code_hash[:0], False
            slots[j] = nxt
            first[nxt] = i
            code_hash[nxt] = h
            nxt += 1
        codes[i] = slots[j]
    return codes, first[:nxt], code_hash[:nxt], True


@njit(cache=True, nogil=True)
def _partitioned(offsets, data, valid, parts):
    """Rows scattered into ``parts`` partitions by their hash's top bits, each
    deduplicated with a small table (the kernels of the parallel path below, on
    one range)."""
    n = offsets.shape[0] - 1
    hashes = np.empty(n, np.uint64)
    count = np.zeros(parts, np.int64)
    _hash_rows(offsets, data, valid, 0, n, hashes, count)
    start = np.zeros(parts + 1, np.int64)
    for p in range(parts):
        start[p + 1] = start[p] + count[p]
    m = start[parts]
    rows = np.empty(m, np.int32)
    part_hash = np.empty(m, np.uint64)
    _scatter_rows(valid, hashes, 0, n, start[:parts].copy(), rows, part_hash)
    part_code = np.empty(m, np.int32)
    first_tmp = np.empty(m, np.int32)
    hash_tmp = np.empty(m, np.uint64)
    ndist = np.zeros(parts, np.int64)
    exact = _dedupe_parts(
        offsets, data, start, 0, parts, rows, part_hash, part_code, first_tmp, hash_tmp, ndist
    )
    base = np.zeros(parts + 1, np.int64)
    for p in range(parts):
        base[p + 1] = base[p] + ndist[p]
    d = base[parts]
    codes = np.full(n, -1, np.int32)
    first = np.empty(d, np.int32)
    code_hash = np.empty(d, np.uint64)
    _assign_parts(
        start, base, 0, parts, rows, part_code, first_tmp, hash_tmp, codes, first, code_hash
    )
    return codes, first, code_hash, exact


@njit(cache=True, nogil=True)
def _verify(offsets, data, codes, first, lo, hi, arena, key_off):
    """Rows ``lo:hi`` equal their code's first row byte for byte -- in place when
    most values are distinct (few rows repeat one), else against the compact
    ``arena`` of the codes' values (it stays in cache)."""
    in_place = key_off.shape[0] == 0
    for i in range(lo, hi):
        c = codes[i]
        if c < 0 or first[c] == i:
            continue
        if in_place:
            if not _same(offsets, data, i, first[c]):
                return False
        elif not _matches(offsets, data, i, arena, key_off, c):
            return False
    return True


@njit(cache=True, nogil=True)
def _arena_for(offsets, data, first, n):
    """The arena :func:`_verify` checks against (empty: check in place)."""
    if 8 * first.shape[0] > n:
        return np.empty(0, np.uint8), np.empty(0, np.int64)
    return _arena(offsets, data, first)


@njit(cache=True, nogil=True)
def encode_bytes(offsets, data, valid, tune):
    """Codes (int32, -1 for NULL) of variable-length values (Arrow string /
    binary buffers: ``offsets`` int64, ``data`` uint8), the row of each code's
    first occurrence, each code's value hash, and whether the codes are exact."""
    codes, first, code_hash, ok = _few_values(offsets, data, valid, tune[DICT_FEW])
    if not ok:  # repeats were checked while deduplicating
        return _partitioned(offsets, data, valid, tune[DICT_PARTITIONS])
    n = codes.shape[0]
    arena, key_off = _arena_for(offsets, data, first, n)
    return codes, first, code_hash, _verify(offsets, data, codes, first, 0, n, arena, key_off)


@njit(cache=True, nogil=True)
def gather_codes(entry_codes, indices, valid, off, out, present):
    """Codes of a dictionary-encoded column chunk: ``out[i] = entry_codes[off +
    indices[i]]`` (-1 where ``valid`` is False; ``valid`` empty: no NULLs), and
    ``present[c] = True`` for every code written -- one pass, no temporaries."""
    check = valid.shape[0] > 0
    for i in range(indices.shape[0]):
        if check and not valid[i]:
            out[i] = -1
            continue
        c = entry_codes[off + indices[i]]
        out[i] = c
        if c >= 0:
            present[c] = True


# ---------------------------------------------------------------- parallel path
# The partitioned path split over threads (every kernel below is nogil): row
# ranges hash and scatter, partition ranges deduplicate; codes come out equal to
# those of encode_bytes's partitioned path (partition order, first occurrence).


@njit(cache=True, nogil=True)
def _hash_rows(offsets, data, valid, lo, hi, hashes, counts):
    """Hashes of rows ``lo:hi`` and their count per partition."""
    shift = _part_shift(counts.shape[0])
    for i in range(lo, hi):
        if valid[i]:
            h = hash_row(offsets, data, i)
            hashes[i] = h
            counts[np.int64(h >> shift)] += 1


@njit(cache=True, nogil=True)
def _scatter_rows(valid, hashes, lo, hi, cursor, rows, part_hash):
    """Rows ``lo:hi`` into their partitions (``cursor``: this range's start in each)."""
    shift = _part_shift(cursor.shape[0])
    for i in range(lo, hi):
        if valid[i]:
            h = hashes[i]
            p = np.int64(h >> shift)
            rows[cursor[p]] = i
            part_hash[cursor[p]] = h
            cursor[p] += 1


@njit(cache=True, nogil=True, inline="always")
def _same(offsets, data, i, f):
    """Rows ``i`` and ``f`` hold the same bytes."""
    s = offsets[f]
    length = offsets[f + 1] - s
    if offsets[i + 1] - offsets[i] != length:
        return False
    o = offsets[i]
    for k in range(length):  # noqa: SIM110 - a numba loop, not a generator
        if data[s + k] != data[o + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def _dedupe_parts(
    offsets, data, start, p0, p1, rows, part_hash, part_code, first_tmp, hash_tmp, ndist
):
    """Local codes within partitions ``p0:p1`` (first occurrence order); each
    partition's first rows and hashes at ``start[p] + code``.  A row whose hash
    is already known is checked byte for byte against that code's first row
    there (only repeats are read twice); returns False on a collision."""
    exact = True
    biggest = 16
    for p in range(p0, p1):
        biggest = max(biggest, start[p + 1] - start[p])
    cap = 16
    while cap < 2 * biggest:
        cap <<= 1
    slots = np.empty(cap, np.int32)
    for p in range(p0, p1):
        s0 = start[p]
        s1 = start[p + 1]
        nxt = 0
        if s1 > s0:
            c = 16
            while c < 2 * (s1 - s0):
                c <<= 1
            mask = np.uint64(c - 1)
            slots[:c] = -1
            for r in range(s0, s1):
                h = part_hash[r]
                j = _probe(slots, hash_tmp, s0, h, mask)
                code = slots[j]
                if code == -1:
                    slots[j] = nxt
                    first_tmp[s0 + nxt] = rows[r]
                    hash_tmp[s0 + nxt] = h
                    part_code[r] = nxt
                    nxt += 1
                else:
                    part_code[r] = code
                    if exact:  # a repeat: the same bytes, or a hash collision
                        exact = _same(offsets, data, rows[r], first_tmp[s0 + code])
        ndist[p] = nxt
    return exact


@njit(cache=True, nogil=True)
def _assign_parts(
    start, base, p0, p1, rows, part_code, first_tmp, hash_tmp, codes, first, code_hash
):
    """Global codes ``base[p] + local`` of partitions ``p0:p1``."""
    for p in range(p0, p1):
        s0 = start[p]
        b = base[p]
        for r in range(s0, start[p + 1]):
            codes[rows[r]] = b + part_code[r]
        for k in range(base[p + 1] - b):
            first[b + k] = first_tmp[s0 + k]
            code_hash[b + k] = hash_tmp[s0 + k]


@njit(cache=True, nogil=True)
def _merge_few(firsts, hashes, limit):
    """One dictionary from per-range ones (in range order, so codes keep the
    first-occurrence order): global first rows and hashes, and per range the
    map from its local codes (concatenated, ``firsts``/``hashes`` offsets in
    ``bounds``).  ``ok=False`` beyond ``limit`` distinct values."""
    cap = 16
    while cap < 2 * limit:
        cap <<= 1
    mask = np.uint64(cap - 1)
    slots = np.full(cap, -1, np.int32)
    first = np.empty(limit, np.int32)
    code_hash = np.empty(limit, np.uint64)
    local_map = np.empty(firsts.shape[0], np.int32)
    nxt = 0
    for k in range(firsts.shape[0]):
        h = hashes[k]
        j = _probe(slots, code_hash, 0, h, mask)
        if slots[j] == -1:
            if nxt == limit:
                return first[:0], code_hash[:0], local_map, False
            slots[j] = nxt
            first[nxt] = firsts[k]
            code_hash[nxt] = h
            nxt += 1
        local_map[k] = slots[j]
    return first[:nxt], code_hash[:nxt], local_map, True


@njit(cache=True, nogil=True)
def _remap(codes, lo, hi, local_map, base):
    for i in range(lo, hi):
        c = codes[i]
        if c >= 0:
            codes[i] = local_map[base + c]


def encode_bytes_parallel(
    offsets, data, valid, pool, threads: int, tune: np.ndarray, out: np.ndarray | None = None
):
    """:func:`encode_bytes` on ``threads`` threads of ``pool``: the same codes.

    Few distinct values: a table per row range, merged in range order.  Else
    the partitioned path, row ranges hashing and scattering, partition ranges
    deduplicating (checking repeats as they go); the few-values path's rows are
    then verified by row ranges against the arena.  ``out``: the int32 array to
    write the codes to (a new one by default)."""
    n = offsets.shape[0] - 1
    if threads < 2 or n < 4 * threads:
        return encode_bytes(offsets, data, valid, tune)
    few = int(tune[DICT_FEW])
    cuts = np.linspace(0, n, threads + 1).astype(np.int64)
    ranges = list(zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True))

    def each(fn, items):
        return list(pool.map(fn, items))

    codes = np.empty(n, np.int32) if out is None else out
    local = each(lambda r: _few_values(offsets, data, valid, few, r[0], r[1], codes), ranges)
    ok = all(x[3] for x in local)
    if ok:
        firsts = np.concatenate([x[1] for x in local])
        hashes = np.concatenate([x[2] for x in local])
        first, code_hash, local_map, ok = _merge_few(firsts, hashes, few)
    if ok:
        bases = np.r_[0, np.cumsum([x[1].shape[0] for x in local])[:-1]].astype(np.int64)
        each(lambda k: _remap(codes, *ranges[k], local_map, bases[k]), range(len(ranges)))
    else:  # repeats were checked while deduplicating
        return _partitioned_parallel(
            offsets, data, valid, ranges, each, int(tune[DICT_PARTITIONS]), codes
        )
    arena, key_off = _arena_for(offsets, data, first, n)
    exact = all(each(lambda r: _verify(offsets, data, codes, first, *r, arena, key_off), ranges))
    return codes, first, code_hash, exact


def _partitioned_parallel(offsets, data, valid, ranges, each, parts, codes=None):
    """The partitioned path on row and partition ranges; ``codes``: an int32 array
    of the rows to write the codes to (a new one by default).  Row numbers and
    first rows are int32 (below 2^31 rows): a fresh array's pages cost about as
    much to fault in as the pass that fills them."""
    n = offsets.shape[0] - 1
    hashes = np.empty(n, np.uint64)
    counts = np.zeros((len(ranges), parts), np.int64)
    each(
        lambda k: _hash_rows(offsets, data, valid, *ranges[k], hashes, counts[k]),
        range(len(ranges)),
    )
    start = np.zeros(parts + 1, np.int64)
    np.cumsum(counts.sum(axis=0), out=start[1:])
    cursor = start[:-1] + np.cumsum(counts, axis=0) - counts  # each range's start per partition
    m = int(start[-1])
    rows = np.empty(m, np.int32)
    part_hash = np.empty(m, np.uint64)
    each(
        lambda k: _scatter_rows(valid, hashes, *ranges[k], cursor[k], rows, part_hash),
        range(len(ranges)),
    )
    # partition ranges of about equal rows
    pcuts = np.searchsorted(start, np.linspace(0, m, len(ranges) + 1)).clip(0, parts)
    pcuts[0], pcuts[-1] = 0, parts
    pranges = [(int(a), int(b)) for a, b in zip(pcuts[:-1], pcuts[1:], strict=True) if b > a]
    part_code = np.empty(m, np.int32)
    first_tmp = np.empty(m, np.int32)
    hash_tmp = np.empty(m, np.uint64)
    ndist = np.zeros(parts, np.int64)
    exact = all(
        each(
            lambda r: _dedupe_parts(
                offsets,
                data,
                start,
                r[0],
                r[1],
                rows,
                part_hash,
                part_code,
                first_tmp,
                hash_tmp,
                ndist,
            ),  # fmt: skip
            pranges,
        )
    )
    base = np.zeros(parts + 1, np.int64)
    np.cumsum(ndist, out=base[1:])
    d = int(base[-1])
    if codes is None:
        codes = np.empty(n, np.int32)
    codes[~valid] = -1  # (every valid row gets its code below)
    first = np.empty(d, np.int32)
    code_hash = np.empty(d, np.uint64)
    each(
        lambda r: _assign_parts(
            start, base, r[0], r[1], rows, part_code, first_tmp, hash_tmp, codes, first, code_hash
        ),
        pranges,
    )
    return codes, first, code_hash, exact


def warm(tune: np.ndarray) -> None:
    """Compile (or load from the cache) every kernel above, both paths."""

    def each(fn, items):
        return list(map(fn, items))

    class _Serial:
        map = staticmethod(map)

    off = np.arange(17, dtype=np.int32)  # (a string column's offsets, as Arrow holds them)
    data = np.frombuffer(bytearray(b"abcdefghijklmnop"), np.uint8)
    valid = np.ones(16, np.bool_)
    encode_bytes(off, data, valid, tune)
    encode_bytes_parallel(off, data, valid, _Serial, 2, tune)
    _partitioned_parallel(off, data, valid, [(0, 8), (8, 16)], each, 4)
