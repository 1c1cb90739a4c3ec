"""JIT warm-up: compile (first run) or load from numba's cache every kernel once,
so that per-DC timings exclude it (JSON ``warmup_seconds``)."""

from __future__ import annotations

import time

import numpy as np

_done = False


def warmup() -> float:
    """Touch every kernel on a tiny input; returns the seconds it took (0 after the first call)."""
    global _done
    if _done:
        return 0.0
    t = time.perf_counter()
    from facet.engine.groups import Groups
    from facet.kernels import dictionary
    from facet.kernels.bhsm import refine_bhsm
    from facet.kernels.count import count_groups, count_keyed
    from facet.kernels.decompose import refine_decompose
    from facet.kernels.expand import expand, sides_to_lists
    from facet.kernels.hashing import (
        hash_bytes,
        hash_words,
        hll_registers,
        mix64_array,
        row_hashes,
    )
    from facet.kernels.iejoin import refine_iejoin
    from facet.kernels.refine import count_codes, refine, scatter_by_code
    from facet.planner.config import DEFAULT

    tune = DEFAULT.kernel_tuning()
    rng = np.random.default_rng(0)
    n = 64
    codes = np.ascontiguousarray(rng.integers(-1, 6, size=(2, n)).astype(np.int32))
    g = Groups.pair(np.arange(n, dtype=np.int32))
    g2 = Groups.pair(np.arange(n // 2, dtype=np.int32), np.arange(n // 4, n, dtype=np.int32))
    for grp in (g, g2):
        for kind, op in ((0, 0), (1, 1), (2, 2)):
            refine(grp.buf, grp.desc, codes, 0, 1, 6, kind, op, tune)
            refine(grp.buf, grp.desc, codes, 0, 0, 6, kind, op, tune)
        refine_bhsm(grp.buf, grp.desc, codes, 0, 1, 6, 2, 2, tune)
        refine_decompose(grp.buf, grp.desc, codes, 0, 1, 6, 3, tune)
        refine_iejoin(grp.buf, grp.desc, codes, 0, 1, 2, 1, 0, 5, 6, 6, tune)
        deg_l = np.zeros(n, np.int64)
        deg_r = np.zeros(n, np.int64)
        stamp = np.zeros(n, np.int64)
        todo = np.zeros(len(grp), np.bool_)
        rows = np.array([0, 1], np.int64)
        doms = np.array([6, 6], np.int64)
        for k in (0, 1, 2, 3):
            pa = rows[:1].repeat(k) if k else np.empty(0, np.int64)
            po = np.full(k, 2, np.int64)
            count_groups(
                grp.buf, grp.desc, codes, doms, pa, pa, po, rows, rows, 1,
                deg_l, deg_r, stamp, 0, todo, 4, tune,
            )  # fmt: skip
        for ne in (False, True):
            count_keyed(grp.buf, grp.desc, codes, 0, 1, 6, ne, 1, deg_l, deg_r, stamp, 0, tune)
        out1 = np.empty(16, np.int32)
        out2 = np.empty(16, np.int32)
        pa = np.array([0], np.int64)
        po = np.array([2], np.int64)
        expand(grp.buf, grp.desc, codes, pa, pa, po, 0, 0, -1, -1, 16, out1, out2)
        sides_to_lists(grp.buf, grp.desc, 0)
    dictionary.warm(tune)
    tids = np.arange(n, dtype=np.int32)
    counts = np.zeros((2, 6), np.int64)
    count_codes(tids, 0, n, codes[0], counts[0])
    scatter_by_code(tids, 0, n, codes[0], counts[1], np.empty(n, np.int32))
    words = np.arange(8, dtype=np.uint64)
    hll_registers(hash_words(words), 4)
    hash_bytes(np.array([0, 1, 3], np.int64), np.frombuffer(b"abc", np.uint8))
    mix64_array(words)
    row_hashes(codes, np.array([0, 1], np.int64), hash_words(words), np.array([0, 0], np.int64))
    _done = True
    return time.perf_counter() - t
