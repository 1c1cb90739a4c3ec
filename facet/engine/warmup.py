"""JIT warm-up: compile (first run) or load from numba's cache, once per process,
the kernels a run will use, before anything is timed -- so that per-DC seconds
exclude it (JSON ``warmup_seconds``: the JIT load/compile time of the run).

Only the kernels a run needs are loaded (each costs milliseconds to load from
the cache, seconds to compile): :func:`plan_kernels` maps a plan -- plain data,
its stages' and sink's algorithm names -- to kernels, and :func:`run_kernels`
applies it to the statistics-free plans of a run's DCs before the data is
encoded, adding the kernels of encoding and statistics, and the inequality
algorithms statistics may still choose for ``pairs`` plans.  Nothing here
imports numba until a kernel is warmed: the kernel modules load on demand.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterable
from functools import cache
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from facet.language.ast import DC
    from facet.loading import Source
    from facet.planner.config import Config
    from facet.planner.plan import Plan

#: a plan's algorithm (``Stage.algorithm``, ``CountSink.algorithm``) -> its kernels
ALGORITHM_KERNELS: dict[str, tuple[str, ...]] = {
    "equality": ("refine",),
    "nonequality": ("refine",),
    "hsm": ("refine",),
    "bhsm": ("bhsm",),
    "cdq": ("cdq",),
    "iejoin": ("iejoin",),
    "count-keyed": ("count-keyed",),
    "count-closed": ("count-groups",),
    "count-sort": ("count-groups",),
    "count-fenwick": ("count-groups",),
    "count-cdq": ("count-groups", "cdq"),
}

_lock = threading.Lock()
#: kernels this process has loaded (or compiled)
_loaded: set[str] = set()


def plan_kernels(plan: Plan) -> set[str]:
    """The kernels executing ``plan`` runs (its stages, its counting sink with the
    equality refinements of its inclusion-exclusion terms, pair expansion)."""
    names: set[str] = set()
    for stage in plan.stages:
        names.update(ALGORITHM_KERNELS[stage.algorithm])
    if plan.sink is not None:
        names.update(ALGORITHM_KERNELS[plan.sink.algorithm])
        if plan.sink.nonequalities:  # inclusion-exclusion terms refine equalities
            names.add("refine")
    if plan.output == "pairs":
        names.add("expand")
    elif plan.output == "blocks":
        names.update(("expand", "sides-to-lists"))
    return names


def run_kernels(
    dcs: Iterable[DC],
    config: Config,
    outputs: Iterable[str] = ("count",),
    *,
    source: Source | None = None,
    execute: bool = True,
) -> set[str]:
    """The kernels a run of ``dcs`` over ``source`` will use: text dictionaries
    (when it has text columns; the parallel path from ``Config.parallel_text_rows``
    rows), statistics where a plan asks for them, and (``execute``) the kernels of
    every DC's plans for ``outputs``.  Plans are made without statistics, which
    decide only the order of a plan's stages and, for ``pairs``, which inequality
    algorithms run: those it may choose are all included.  ``source=None``: any
    table (text columns, no parallel paths)."""
    from facet.engine.memory import HUGE_MIN
    from facet.key_tallies import shape as key_shape
    from facet.language.normalize import INEQUALITY, NONEQUALITY, normalize
    from facet.planner.plan import leading_equalities, make_plan, needs_statistics
    from facet.planner.statistics import Sides

    requested = tuple(outputs)
    outputs = tuple(dict.fromkeys(p for o in requested for p in ROW_OUTPUT_PLANS.get(o, (o,))))
    dcs = list(dcs)
    threads = config.workers
    rows = 0 if source is None else source.num_rows
    names: set[str] = set()
    if source is None or source.text or any(map(_is_text, source.table.schema.types)):
        names.add("dictionary")
        # columns compared with each other encode as one array (all their rows)
        if threads > 1 and rows * _widest_component(dcs) >= config.parallel_text_rows:
            names.add("dictionary-parallel")
    if 4 * rows >= HUGE_MIN:
        names.add("tids")  # a big table's tids written onto huge pages (memory.whole_tids)
    for dc in dcs:
        if rows >= config.radix_rank_rows:
            names.add("ranks")  # codes of an integer column (a histogram or radix digits)
        nd = normalize(dc)
        if nd.arity == 1:
            continue
        if "count" in outputs and execute and config.key_prefilter and key_shape(nd):
            names.add("key-candidates")  # a key or FD may be counted directly
        classes = [p.cls for p in dict.fromkeys(nd.preds)]
        ineqs = classes.count(INEQUALITY)
        for output in outputs:
            planned = needs_statistics(nd, output, config)
            if planned:
                names.add("hashing")
                if output == "pairs" and ineqs >= 2:  # pairs estimated on the tid sample
                    names.update(("refine", "count-groups") + (("cdq",) if ineqs > 2 else ()))
            if not execute:
                continue
            plan = make_plan(nd, Sides(rows, rows), None, config, output)
            names |= plan_kernels(plan)
            grouped = output == "count" and config.group_equalities
            if grouped and leading_equalities(plan.stages) >= 2:  # grouped at once
                names.add("group-composite")
            if planned and output == "pairs" and ineqs and (ineqs >= 2 or NONEQUALITY in classes):
                names.update(("bhsm", "cdq") + (("iejoin",) if ineqs == 2 else ()))
    if "refine" in names and threads > 1 and rows >= config.parallel_work * threads:
        names.add("counting-sort")  # a whole-table equality's parallel counting sort
    if execute:  # a row output's own kernels (union-find, the greedy cover)
        names.update(o for o in requested if o in KERNELS)
    return names


#: the plans a row output runs (docs/outputs.md): degrees from count plans,
#: components from them or from blocks, suspects from the pairs
ROW_OUTPUT_PLANS: dict[str, tuple[str, ...]] = {
    "tuples": ("count",),
    "cells": ("count",),
    "components": ("count", "blocks"),
    "suspects": ("pairs",),
}


def _widest_component(dcs: Iterable[DC]) -> int:
    """The most columns any set of columns compared with each other holds."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            x = parent[x]
        return x

    for dc in dcs:
        for p in dc.predicates:
            cols = p.columns()
            for c in cols:
                find(c.name)
            if len(cols) == 2:
                parent[find(cols[0].name)] = find(cols[1].name)
    sizes: dict[str, int] = {}
    for c in parent:
        sizes[find(c)] = sizes.get(find(c), 0) + 1
    return max(sizes.values(), default=1)


def warmup(
    kernels: Iterable[str] | None = None, on_kernel: Callable[[str], None] | None = None
) -> float:
    """Load (or compile) ``kernels`` (names of :data:`KERNELS`; ``None``: every
    kernel) that this process has not loaded yet, each on a tiny input with the
    argument types the engine passes; returns the seconds it took.  ``on_kernel``
    is called with each kernel's name once it is loaded."""
    names = list(KERNELS) if kernels is None else list(dict.fromkeys(kernels))
    unknown = [n for n in names if n not in KERNELS]
    if unknown:
        raise ValueError(f"unknown kernels {unknown}; known: {', '.join(KERNELS)}")
    with _lock:
        todo = [n for n in names if n not in _loaded]
        if not todo:
            return 0.0
        t = time.perf_counter()
        inputs = _inputs()
        for name in todo:
            KERNELS[name](inputs)
            _loaded.add(name)
            if on_kernel is not None:
                on_kernel(name)
        _dispatch_scalars()  # last: a numba module loaded above may clear numba's cache
        return time.perf_counter() - t


def compile_kernels(
    names: Iterable[str] | None = None,
    first: Iterable[str] = (),
    *,
    jobs: int | None = None,
    on_kernel: Callable[[str], None] | None = None,
    check: Callable[[], None] | None = None,
) -> float:
    """Compile ``names`` (``None``: every kernel) into numba's cache and load them:
    this process compiles ``first`` (the kernels its run needs first) and a share
    of the rest, ``jobs - 1`` helper processes (default: the cores this process
    may use, at most 4) the other shares; numba's cache is safe for that
    (:mod:`facet.kernels.jit`).  A share a helper could not compile is compiled
    here.  ``on_kernel`` is called as each kernel is loaded; ``check`` between
    shares (it raises to stop: the helpers are then killed).  Returns the seconds
    it took."""
    import subprocess
    import sys

    t = time.perf_counter()
    names = [n for n in dict.fromkeys(KERNELS if names is None else names) if n not in _loaded]
    mine = [n for n in names if n in set(first)]
    if jobs is None:
        cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(1)
        jobs = min(max(len(cores), 1), 4)
    shares: list[list[str]] = [mine] + [[] for _ in range(max(jobs, 1) - 1)]
    weights = [sum(COMPILE_WEIGHT.get(n, 1.0) for n in mine)] + [0.0] * (len(shares) - 1)
    for name in sorted(set(names) - set(mine), key=lambda n: -COMPILE_WEIGHT.get(n, 1.0)):
        k = weights.index(min(weights))  # the lightest share takes the next heaviest
        shares[k].append(name)
        weights[k] += COMPILE_WEIGHT.get(name, 1.0)
    code = "import sys; from facet.engine.warmup import warmup; warmup(sys.argv[1:])"
    helpers = [
        (
            subprocess.Popen(
                [sys.executable, "-c", code, *share],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ),
            share,
        )  # fmt: skip
        for share in shares[1:]
        if share
    ]
    try:
        warmup(shares[0], on_kernel)
        for proc, share in helpers:
            while proc.poll() is None:
                if check is not None:
                    check()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(0.05)
            if check is not None:
                check()
            warmup(share, on_kernel)  # from the cache (compiled here if the helper failed)
    finally:
        for proc, _ in helpers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return time.perf_counter() - t


#: a kernel's share of compiling them all (seconds on one core, roughly), to
#: split :func:`compile_kernels` evenly
COMPILE_WEIGHT: dict[str, float] = {
    "dictionary": 15,
    "refine": 18,
    "count-groups": 17,
    "count-keyed": 24,
    "iejoin": 15,
    "components": 8,
    "ranks": 6,
    "bhsm": 4,
    "cdq": 4,
    "dictionary-parallel": 4,
    "hashing": 3,
    "group-composite": 3,
    "dominance": 6,
}


def _dispatch_scalars() -> None:
    """numba types a call's arguments by class (a ``functools.singledispatch``):
    the first value of a class costs about a millisecond (the class's MRO is
    resolved), so the engine's numpy scalar classes are typed here, untimed -- a
    kernel called with a ``numpy.bool`` flag would pay it in a DC's seconds.  Any
    ``typeof`` registration (numba modules make them as they load) clears that
    cache, so this runs after the kernels are loaded."""
    from numba import typeof

    for cls in (np.bool_, np.int8, np.int32, np.int64, np.uint32, np.uint64, np.float64):
        typeof(cls(0))


def loaded() -> frozenset[str]:
    """The kernels this process has warmed."""
    return frozenset(_loaded)


#: Arrow type tests of columns that may be dictionary-encoded as text (the view
#: types exist from pyarrow 16 on)
_TEXT_TYPES = (
    "is_string",
    "is_large_string",
    "is_string_view",
    "is_binary",
    "is_large_binary",
    "is_binary_view",
)


def _is_text(typ: object) -> bool:
    """Whether an Arrow column of this type may be dictionary-encoded as text."""
    import pyarrow as pa

    if pa.types.is_dictionary(typ):
        typ = typ.value_type
    return any(getattr(pa.types, name, lambda _: False)(typ) for name in _TEXT_TYPES)


# ---------------------------------------------------------------------- warmers


@cache
def _inputs() -> SimpleNamespace:
    """Tiny inputs of the types the engine passes (int32 C-ordered code rows, a
    reflexive and a two-sided group, the tuning array)."""
    from facet.engine.groups import Groups
    from facet.planner.config import DEFAULT

    n = 64
    rng = np.random.default_rng(0)
    return SimpleNamespace(
        n=n,
        tune=DEFAULT.kernel_tuning(),
        codes=np.ascontiguousarray(rng.integers(-1, 6, size=(2, n)).astype(np.int32)),
        groups=(
            Groups.pair(np.arange(n, dtype=np.int32)),
            Groups.pair(np.arange(n // 2, dtype=np.int32), np.arange(n // 4, n, dtype=np.int32)),
        ),
    )


def _dictionary(t: SimpleNamespace) -> None:
    from facet.kernels.dictionary import encode_bytes, gather_codes

    off = np.arange(17, dtype=np.int32)  # (a string column's offsets, as Arrow holds them)
    data = np.frombuffer(bytearray(b"abcdefghijklmnop"), np.uint8)
    codes = encode_bytes(off, data, np.ones(16, np.bool_), t.tune)[0]
    # dictionary-encoded text: Arrow's indices reach it read-only
    indices = np.zeros(4, np.int32)
    indices.flags.writeable = False
    out = np.empty((2, 4), np.int32)[1]
    for valid in (np.empty(0, np.bool_), np.ones(4, np.bool_)):
        gather_codes(codes, indices, valid, 0, out, np.zeros(16, np.bool_))


def _dictionary_parallel(t: SimpleNamespace) -> None:
    from facet.kernels.dictionary import warm

    warm(t.tune)


def _ranks(t: SimpleNamespace) -> None:
    from facet.kernels.ranks import (
        dense_ranks,
        histogram_ranks,
        lookup_range,
        mark_range,
        move_codes,
        range_bitmap,
        rank_marks,
        value_range,
    )

    # values straight from Arrow are read-only arrays (another numba signature)
    frozen = np.arange(4, dtype=np.int64)
    frozen.flags.writeable = False
    bits = range_bitmap(4)
    before, _ = rank_marks(bits, np.int64(0))
    for values in (np.arange(4, dtype=np.int64), frozen):
        dense_ranks(values, np.ones(4, np.bool_), np.int64(0), 2)
        for valid in (np.empty(0, np.bool_), np.ones(4, np.bool_)):
            out = np.empty((2, 2), np.int32).reshape(-1)
            histogram_ranks(values, valid, np.int64(0), 4, out)
            # a component's integer columns ranked part by part (facet/encoding.py)
            value_range(values, valid)
            mark_range(values, valid, np.int64(0), bits)
            lookup_range(values, valid, np.int64(0), bits, before, out[:4])
    one = np.zeros(1, np.int32)  # an append's old codes moved among the ranks (encoding.py)
    move_codes(one, one, one.copy(), 0, 1)


def _hashing(t: SimpleNamespace) -> None:
    from facet.kernels.hashing import (
        hash_bytes,
        hash_words,
        hll_registers,
        mix64_array,
        present_codes,
        row_hashes,
    )

    words = np.arange(8, dtype=np.uint64)
    hashes = hash_words(words)
    hll_registers(hashes, 4)
    hash_bytes(np.array([0, 1, 3], np.int64), np.frombuffer(b"abc", np.uint8))
    mix64_array(words)
    present_codes(t.codes[0], 6)
    row_hashes(t.codes, np.array([0, 1], np.int64), hashes, np.array([0, 0], np.int64))
    # the HyperLogLog++ bias tables: a module of text parsed once (~2 ms)
    from facet.planner.config import DEFAULT
    from facet.planner.statistics import load_bias_table

    load_bias_table(DEFAULT.hll_p)


def _refine(t: SimpleNamespace) -> None:
    from facet.kernels.refine import refine

    for g in t.groups:
        for kind in (0, 1, 2):  # equality, non-equality, HSM
            refine(g.buf, g.desc, t.codes, 0, 1, 6, kind, kind, t.tune)
            refine(g.buf, g.desc, t.codes, 0, 0, 6, kind, kind, t.tune)


def _counting_sort(t: SimpleNamespace) -> None:
    from facet.kernels.refine import composite_keys, count_codes, scatter_by_code

    tids = np.arange(t.n, dtype=np.int32)
    counts = np.zeros((2, 6), np.int64)
    count_codes(tids, 0, t.n, t.codes[0], counts[0])
    scatter_by_code(tids, 0, t.n, t.codes[0], counts[1], np.empty(t.n, np.int32))
    # leading equalities as one composite code (facet.engine.refinement.refine_equalities)
    rows = np.array([0, 1], np.int64)
    composite_keys(t.codes, rows, np.array([6, 6], np.int64), tids, np.empty(t.n, np.int32))


def _tids(t: SimpleNamespace) -> None:
    from facet.kernels.common import iota

    iota(np.empty(t.n, np.int32))


def _group_composite(t: SimpleNamespace) -> None:
    """Leading equalities grouped at once, serially (refine_equalities)."""
    from facet.kernels.composite import group_composite

    tids = np.arange(t.n, dtype=np.int32)
    rows = np.array([0, 1], np.int64)
    for doms in ([6, 6], [1 << 20, 6]):  # (a first domain too wide to be the ids)
        group_composite(tids, t.codes, rows, np.array(doms, np.int64))


def _bhsm(t: SimpleNamespace) -> None:
    from facet.kernels.bhsm import refine_bhsm

    for g in t.groups:
        refine_bhsm(g.buf, g.desc, t.codes, 0, 1, 6, 2, 2, t.tune)


def _cdq(t: SimpleNamespace) -> None:
    from facet.kernels.decompose import refine_decompose

    for g in t.groups:
        refine_decompose(g.buf, g.desc, t.codes, 0, 1, 6, 3, t.tune)


def _iejoin(t: SimpleNamespace) -> None:
    from facet.kernels.iejoin import refine_iejoin

    for g in t.groups:
        refine_iejoin(g.buf, g.desc, t.codes, 0, 1, 2, 1, 0, 5, 6, 6, t.tune)


def _count_groups(t: SimpleNamespace) -> None:
    from facet.kernels.count import count_groups, degree_totals

    rows = np.array([0, 1], np.int64)
    doms = np.array([6, 6], np.int64)
    for g in t.groups:
        deg_l, deg_r, stamp = (np.zeros(t.n, np.int64) for _ in range(3))
        todo = np.zeros(len(g), np.bool_)
        for k in (0, 1, 2, 3):  # closed form, one, two inequalities, handed back
            pa = rows[:1].repeat(k) if k else np.empty(0, np.int64)
            po = np.full(k, 2, np.int64)
            count_groups(
                g.buf, g.desc, t.codes, doms, pa, pa, po, rows, rows, 1,
                deg_l, deg_r, stamp, 0, todo, 4, t.tune,
            )  # fmt: skip
        degree_totals(deg_l, deg_r)


def _count_keyed(t: SimpleNamespace) -> None:
    from facet.kernels.composite import count_composite, equal_degrees, partnered, split_by_code
    from facet.kernels.count import (
        count_keyed,
        degree_totals,
        scatter_degrees,
        sparse_degree_totals,
    )

    rows = np.array([0, 1], np.int64)
    doms = np.array([6, 6], np.int64)
    for g in t.groups:
        deg_l, deg_r, stamp = (np.zeros(t.n, np.int64) for _ in range(3))
        for ne in (False, True):
            count_keyed(g.buf, g.desc, t.codes, 0, 1, 6, ne, 1, deg_l, deg_r, stamp, 0, t.tune)
            # a keyed plan over the initial pairs runs fused (facet.engine.counting)
            lt = g.buf[g.desc[0, 0] : g.desc[0, 1]]
            rt = g.buf[g.desc[0, 4] : g.desc[0, 5]]
            for shared in (False, True):  # degrees by position in the sides
                dl = np.zeros(len(lt), np.int32)
                dr = dl if shared else np.zeros(len(rt), np.int32)
                count_composite(
                    lt, rt, t.codes, rows, rows, doms, 0, 1, 6, ne, dl, dr, 4, shared, shared
                )  # fmt: skip
                sparse_degree_totals(t.n, lt, dl, lt[:0] if shared else rt, dr)
                scatter_degrees(deg_l, lt, dl)
        degree_totals(deg_l, deg_r)
        split_by_code(lt, rt, t.codes[0], t.codes[1], 6, 2)  # pieces for the threads
        equal_degrees(lt, lt, rows, rows[::-1].copy(), doms, 0, 0)
        partnered(
            lt, rt, t.codes, rows, rows[::-1].copy(), doms, 0, 1, 6, False,
            np.empty_like(lt), np.empty_like(rt),
        )  # fmt: skip


def _key_candidates(t: SimpleNamespace) -> None:
    from facet.kernels.composite import key_candidates, key_counts

    key_candidates(t.codes, 0, np.array([1], np.int64), 6, 8)
    keys = np.arange(4, dtype=np.int64)
    key_counts(keys, keys[:0])
    key_counts(keys, keys)


def _expand(t: SimpleNamespace) -> None:
    from facet.kernels.expand import expand

    pa = np.array([0], np.int64)
    po = np.array([2], np.int64)
    for g in t.groups:
        out1 = np.empty(16, np.int32)
        out2 = np.empty(16, np.int32)
        expand(g.buf, g.desc, t.codes, pa, pa, po, 0, 0, -1, -1, 16, out1, out2)


def _sides_to_lists(t: SimpleNamespace) -> None:
    from facet.kernels.expand import sides_to_lists

    for g in t.groups:
        sides_to_lists(g.buf, g.desc, 0)


def _partners(t: SimpleNamespace) -> None:
    """Sampled partners of rows (row_outputs.sampled_partners: the report's)."""
    from facet.kernels.partners import (
        empty_partners,
        sample_group_partners,
        sample_pair_partners,
        sample_partners,
    )

    slot = np.full(t.n, -1, np.int64)
    slot[:2] = (0, 1)
    need = np.ones(2, np.int64)
    tids = np.arange(4, dtype=np.int64)
    for g in t.groups:
        out, role, got = empty_partners(2, 1)
        sample_group_partners(g.buf, g.desc, slot, need, out, role, got, 2)
    out, role, got = empty_partners(2, 1)
    sample_pair_partners(tids, tids[::-1].copy(), slot, need, out, role, got, 2)
    out, role, got = empty_partners(2, 1)
    sample_partners(tids, tids, tids, tids, slot, need, out, role, got, 2)


def _dominance(t: SimpleNamespace) -> None:
    """The dominance indexes of appends (facet.dominance_index)."""
    from facet.dominance_index import warm

    warm()


def _components(t: SimpleNamespace) -> None:
    from facet.kernels.components import (
        component_labels,
        union_dominance,
        union_groups,
        union_pairs,
    )

    parent = np.arange(t.n, dtype=np.int64)
    seen = np.zeros(t.n, np.bool_)
    rows = np.zeros(1, np.int64)
    for g in t.groups:
        union_groups(parent, seen, g.buf, g.desc)
        for ops in ([2], [2, 4]):  # one order predicate, then two
            rows = np.zeros(len(ops), np.int64)
            union_dominance(
                parent, seen, g.buf, g.desc, t.codes, rows, rows, np.array(ops, np.int64)
            )
    tids = np.arange(4, dtype=np.int64)
    union_pairs(parent, seen, tids, tids[::-1].copy())
    component_labels(parent, seen)


def _suspects(t: SimpleNamespace) -> None:
    from facet.kernels.suspects import greedy_cover

    edge_off = np.array([0, 2, 4], np.int64)
    cells = np.array([0, 1, 1, 2], np.int32)  # (dense ids and flags as row_outputs passes them)
    greedy_cover(edge_off, cells, np.array([1, 0, 1, 1], np.int8), 3)


#: kernel name -> what loads it
KERNELS: dict[str, Callable[[SimpleNamespace], None]] = {
    "dictionary": _dictionary,
    "dictionary-parallel": _dictionary_parallel,
    "ranks": _ranks,
    "hashing": _hashing,
    "refine": _refine,
    "tids": _tids,
    "counting-sort": _counting_sort,
    "group-composite": _group_composite,
    "bhsm": _bhsm,
    "cdq": _cdq,
    "iejoin": _iejoin,
    "count-groups": _count_groups,
    "count-keyed": _count_keyed,
    "key-candidates": _key_candidates,
    "expand": _expand,
    "sides-to-lists": _sides_to_lists,
    "components": _components,
    "suspects": _suspects,
    "partners": _partners,
    "dominance": _dominance,
}


if __name__ == "__main__":
    import sys

    from facet.progress import kernels_cache_cold

    jobs = int(sys.argv[1]) if len(sys.argv) > 1 else None
    if kernels_cache_cold() is False:
        print("facet: the kernels are compiled (numba's cache)", flush=True)
        sys.exit(0)
    print("facet: compiling the kernels into numba's cache (once; 1-3 minutes) ...", flush=True)
    print(f"facet: kernels compiled in {compile_kernels(jobs=jobs):.0f} s", flush=True)
