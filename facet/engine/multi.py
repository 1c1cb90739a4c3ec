"""Many DCs at once (paper §4 "Multi-constraint execution", Fig. 1, Fig. 10).

* ``sequential``: one DC after the other.
* ``parallel``: DCs on worker threads (kernels release the GIL), one engine
  (scratch arrays) per worker.
* ``cost-trie``: every DC keeps its own (cost-based) predicate order; DCs
  whose refinements start the same way share them -- a trie of stages, each
  node refined once, its groups handed to every DC below it.
* ``freq-trie``: predicates are reordered, within their class, by how many DCs
  share them (most shared first), so more prefixes are shared (Fig. 1).

The trie holds the equality stages -- they partition, so a shared node never
holds more than its input; counting answers the rest per DC with the counting
sink, pairs and blocks stream the rest per DC.  A shared stage's seconds are
split evenly among the DCs below it.  Every mode gives the same answers.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from facet.engine.local import LocalEngine
from facet.groups import Groups
from facet.language.normalize import EQUALITY, PairPredicate
from facet.planner.config import Config
from facet.planner.plan import CLASS_ORDER, Plan, Stage

MODES = ("sequential", "parallel", "cost-trie", "freq-trie")


def trie_stages(plans: dict[int, Plan], mode: str) -> dict[int, list[Stage]]:
    """The stage sequence each DC contributes to the trie: its equalities (they
    partition, so a shared node's groups are never bigger than its input)."""
    seqs: dict[int, list[Stage]] = {}
    for i, plan in plans.items():
        seqs[i] = plan.of_class(EQUALITY)
    if mode != "freq-trie":
        return seqs
    freq: Counter[tuple[PairPredicate, ...]] = Counter()
    for stages in seqs.values():
        for s in set(stages):
            freq[s.preds] += 1
    out = {}
    for i, stages in seqs.items():
        pos = {s: k for k, s in enumerate(stages)}
        out[i] = sorted(stages, key=lambda s: (CLASS_ORDER[s.cls], -freq[s.preds], pos[s]))
    return out


def run_trie(
    engine: LocalEngine,
    groups: Groups,
    entries: list[tuple[int, list[Stage]]],
    leaf: Callable[[int, Groups], None],
    seconds: dict[int, float],
    depth: int = 0,
) -> None:
    """Depth first over the trie of ``entries`` (DC id, stages) from ``groups``."""
    branches: dict[Stage, list[tuple[int, list[Stage]]]] = defaultdict(list)
    for i, stages in entries:
        if depth == len(stages):
            t = time.perf_counter()
            leaf(i, groups)
            seconds[i] += time.perf_counter() - t
        else:
            branches[stages[depth]].append((i, stages))
    for stage, sub in branches.items():
        t = time.perf_counter()
        out = engine.refine(groups, stage)
        dt = (time.perf_counter() - t) / len(sub)
        for i, _ in sub:
            seconds[i] += dt
        run_trie(engine, out, sub, leaf, seconds, depth + 1)


def count_all(session, mode: str) -> list[tuple[int, int, float]]:
    """``(violations, rows involved, seconds)`` of every DC of the session."""
    n = len(session.dcs)
    out: list[tuple[int, int, float] | None] = [None] * n
    if mode == "sequential":
        for i in range(n):
            t = time.perf_counter()
            v, r = session.count(i)
            out[i] = (v, r, time.perf_counter() - t)
        return out  # type: ignore[return-value]
    if mode == "parallel":
        threads = session.engine.threads
        inner = Config(**{**session.config.__dict__, "threads": 1})
        engines: dict[int, LocalEngine] = {}

        def run(i: int) -> tuple[int, int, float]:
            import threading

            key = threading.get_ident()
            eng = engines.get(key)
            if eng is None:
                eng = engines[key] = LocalEngine(session.enc, inner)
            t = time.perf_counter()
            v, r = session.count(i, engine=eng)
            return v, r, time.perf_counter() - t

        for i in range(n):  # plans (and statistics) first, on this thread
            session.plan(i, "count")
            session.initial(i)
        with ThreadPoolExecutor(threads, thread_name_prefix="facet-dc") as pool:
            return list(pool.map(run, range(n)))
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    seconds: dict[int, float] = defaultdict(float)
    plans: dict[int, Plan] = {}
    for i in range(n):
        t = time.perf_counter()
        plan = session.plan(i, "count")
        if plan is None:
            v, r = session.count(i)
            out[i] = (v, r, time.perf_counter() - t)
        else:
            plans[i] = plan
            session.initial(i)
            seconds[i] += time.perf_counter() - t
    seqs = trie_stages(plans, mode)
    for i, plan in plans.items():  # an equality the counting sink answers stays out
        eq = plan.count_sink.equality
        seqs[i] = [s for s in seqs[i] if eq is None or s.preds != (eq,)]
    results: dict[int, tuple[int, int]] = {}

    def leaf(i: int, groups: Groups) -> None:
        deg = session.engine.count_sink(plans[i], groups)
        results[i] = (deg.violations, deg.rows_involved)

    for key, ids in _by_initial(session, plans).items():
        del key
        run_trie(
            session.engine, session.initial(ids[0]), [(i, seqs[i]) for i in ids], leaf, seconds
        )
    for i in plans:
        out[i] = (*results[i], seconds[i])
    return out  # type: ignore[return-value]


def _by_initial(session, plans: dict[int, Plan]) -> dict[tuple, list[int]]:
    """DCs with the same row filters start from the same initial pairs."""
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i in plans:
        nd = session.normal[i]
        key = (
            tuple(sorted(map(repr, nd.side_filters(0)))),
            tuple(sorted(map(repr, nd.side_filters(1)))),
        )
        groups[key].append(i)
    return groups


def shared_groups(
    session, mode: str, output: str
) -> tuple[dict[int, tuple[Groups, list[Stage]]], dict[int, float]]:
    """For pairs/blocks in a trie mode: each DC's groups after its (shared)
    equalities with the stages still to run, and the seconds attributed to it;
    empty in the other modes, which stream DC by DC.  The stages after the
    equalities stream per DC as usual (batched, small groups pair by pair)."""
    if mode not in ("cost-trie", "freq-trie"):
        return {}, {}
    plans = {i: p for i in range(len(session.dcs)) if (p := session.plan(i, output)) is not None}
    seqs = trie_stages(plans, mode)
    starts: dict[int, tuple[Groups, list[Stage]]] = {}
    seconds: dict[int, float] = defaultdict(float)

    def leaf(i: int, groups: Groups) -> None:
        rest = [s for s in plans[i].stages if s.cls != EQUALITY]
        starts[i] = (groups, rest)

    for ids in _by_initial(session, plans).values():
        run_trie(
            session.engine, session.initial(ids[0]), [(i, seqs[i]) for i in ids], leaf, seconds
        )
    return starts, dict(seconds)
