"""The pairs walk: every stage refined, depth first over bounded batches, so
that output streams and ``--limit`` stops early; small groups are finished
pair by pair, and the final groups are expanded into pairs in bounded chunks
(docs/semantics.md §7: pairs and blocks).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from facet.engine.context import Context
from facet.engine.groups import Groups, pairs_as_groups
from facet.engine.refinement import refine
from facet.kernels.expand import expand
from facet.planner.plan import Stage

Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def iter_pairs(
    ctx: Context, groups: Groups, stages: list[Stage]
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Violating pairs ``(t, t')`` of ``groups`` under ``stages``, in chunks."""
    arrays = _arrays(ctx, stages)
    n_preds = int(arrays[3][-1])
    for kind, a, b in _walk(ctx, groups, stages, 0, arrays):
        if kind == "pairs":
            yield a, b
        else:
            yield from _expand(ctx, a, n_preds, arrays)


def iter_blocks(
    ctx: Context, groups: Groups, stages: list[Stage], pairs_as_is: bool = False
) -> Iterator[Groups | tuple[np.ndarray, np.ndarray]]:
    """The final pairs of tid sets; groups finished pair by pair come as
    one-tid-left blocks (``pairs_as_is``: as the ``(t, t')`` arrays they are, for
    a reader that takes pairs too -- grouping them sorts).  A group that holds no
    pair (an empty side, as row filters alone can leave, or one tid facing
    itself) is not a block."""
    arrays = _arrays(ctx, stages)
    for kind, a, b in _walk(ctx, groups, stages, 0, arrays):
        if kind == "pairs":
            yield (a, b) if pairs_as_is else pairs_as_groups(a, b)
            continue
        keep = a.with_pairs()
        if keep.all():
            yield a
        elif keep.any():
            yield a.select(keep)


def _arrays(ctx: Context, stages: list[Stage]) -> Arrays:
    """Every stage's predicates as kernel arrays, and where each stage starts."""
    pa, pb, po = ctx.predicate_arrays([p for s in stages for p in s.preds])
    starts = np.cumsum([0] + [len(s.preds) for s in stages])
    return pa, pb, po, starts


def _walk(ctx: Context, groups: Groups, stages: list[Stage], k: int, arrays: Arrays):
    """Depth first through the stages: ``("pairs", t1, t2)`` for groups finished
    pair by pair, ``("groups", final_groups, None)`` for the rest."""
    if len(groups) == 0:
        return
    if k == len(stages):
        yield "groups", groups, None
        return
    small = groups.candidate_pairs() <= ctx.config.nested_pairs
    if small.any():
        nested = groups.select(small)
        t = time.perf_counter()
        for t1, t2 in _expand(ctx, nested, int(arrays[3][k]), arrays):
            yield "pairs", t1, t2
        if ctx.trace is not None:
            ctx.trace.finished_nested(stages[k], time.perf_counter() - t, nested)
        groups = groups.select(~small)
    for chunk in groups.split(ctx.config.batch_work):
        yield from _walk(ctx, refine(ctx, chunk, stages[k]), stages, k + 1, arrays)


def _expand(ctx: Context, groups: Groups, start: int, arrays: Arrays):
    """The pairs of ``groups`` that satisfy predicates ``start..``, in chunks of
    at most ``Config.pair_chunk``; each call scans at most about
    ``Config.expand_candidates`` candidates (a stopped run, or a signal, acts
    when a call returns)."""
    pa, pb, po, _ = arrays
    cap = ctx.config.pair_chunk
    for part in groups.split_candidates(ctx.config.expand_candidates):
        g, a, b = 0, -1, -1
        while g < len(part):
            out1 = np.empty(cap, np.int32)
            out2 = np.empty(cap, np.int32)
            n, g, a, b = expand(
                part.buf, part.desc, ctx.codes, pa, pb, po, start, g, a, b, cap, out1, out2
            )
            if n:
                yield out1[:n], out2[:n]
