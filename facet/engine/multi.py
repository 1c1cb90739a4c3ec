"""Running many DCs (paper §4 "Multi-constraint execution", Fig. 1, Fig. 10):
the modes of :mod:`facet.planner.modes` executed.

``sequential`` runs one DC after the other; ``parallel`` runs DCs on worker
threads, one engine (scratch arrays) per worker; the trie modes walk the trie
of shared leading equalities depth first, refining each node once and
handing its groups to every DC below it -- counting answers the rest per DC
with the counting sink, pairs and blocks stream the rest per DC.  A shared
stage's seconds are split evenly among the DCs below it.  Every mode gives
the same answers.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from facet.engine.groups import Groups
from facet.engine.local import LocalEngine
from facet.engine.session import Session
from facet.planner.modes import MODES, TRIE_MODES, trie_stages
from facet.planner.plan import Plan, Stage

__all__ = ["MODES", "count_all", "shared_groups"]


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


def count_all(session: Session, mode: str) -> list[tuple[int, int, float]]:
    """``(violations, rows involved, seconds)`` of every DC of the session."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    n = len(session.dcs)
    if mode == "sequential":
        out = []
        for i in range(n):
            t = time.perf_counter()
            v, r = session.count(i)
            out.append((v, r, time.perf_counter() - t))
        return out
    if mode == "parallel":
        return _count_parallel(session)
    if session.engine.capabilities.distributed:
        return _count_trie_distributed(session, mode)
    out: list[tuple[int, int, float] | None] = [None] * n
    seconds: dict[int, float] = defaultdict(float)
    plans = _plan_pair_dcs(session, out, seconds, initial=True)
    seqs = trie_stages(plans, mode)
    results: dict[int, tuple[int, int]] = {}

    def leaf(i: int, groups: Groups) -> None:
        deg = session.engine.count_sink(plans[i], groups)
        results[i] = deg.totals()

    for ids in _by_initial(session, plans).values():
        run_trie(
            session.engine, session.initial(ids[0]), [(i, seqs[i]) for i in ids], leaf, seconds
        )
    for i in plans:
        out[i] = (*results[i], seconds[i])
    return out  # type: ignore[return-value]


def _plan_pair_dcs(
    session: Session,
    out: list[tuple[int, int, float] | None],
    seconds: dict[int, float],
    initial: bool,
) -> dict[int, Plan]:
    """The count plans of the DCs over pairs (each DC's planning seconds added to
    ``seconds``; ``initial``: its initial groups made now too); a single-tuple
    DC, which has no plan, is counted at once into ``out``."""
    plans: dict[int, Plan] = {}
    for i in range(len(session.dcs)):
        t = time.perf_counter()
        plan = session.plan(i, "count")
        if plan is None:
            v, r = session.count(i)
            out[i] = (v, r, time.perf_counter() - t)
            continue
        plans[i] = plan
        if initial:
            session.initial(i)
        seconds[i] += time.perf_counter() - t
    return plans


def _count_trie_distributed(session: Session, mode: str) -> list[tuple[int, int, float]]:
    """A trie mode on a distributed engine: per set of DCs with the same row
    filters, the engine's ``count_trie`` (DCs sharing a leading equality share
    one shuffle, and each task runs their trie); seconds split evenly."""
    out: list[tuple[int, int, float] | None] = [None] * len(session.dcs)
    plans = _plan_pair_dcs(session, out, defaultdict(float), initial=False)
    seqs = trie_stages(plans, mode)
    for ids in _by_initial(session, plans).values():
        t = time.perf_counter()
        if session.monitor is not None:
            session.monitor.dc_started(ids[0])
        got = session.engine.count_trie(plans, seqs, ids)
        dt = (time.perf_counter() - t) / len(ids)
        for i in ids:
            out[i] = (*got[i], dt)
            if session.monitor is not None:
                session.monitor.dc_done(i)
    return out  # type: ignore[return-value]


def _count_parallel(session: Session) -> list[tuple[int, int, float]]:
    """DCs on worker threads, each with its own single-threaded engine (a
    distributed engine: its jobs run concurrently, on the one engine)."""
    engines: dict[int, LocalEngine] = {}
    distributed = session.engine.capabilities.distributed

    def run(i: int) -> tuple[int, int, float]:
        key = threading.get_ident()
        eng = engines.get(key)
        if eng is None:
            eng = engines[key] = session.engine if distributed else session.engine.worker()
            eng.adopt_thread()
        t = time.perf_counter()
        v, r = session.count(i, engine=eng)
        return v, r, time.perf_counter() - t

    for i in range(len(session.dcs)):  # plans (and statistics) first, on this thread
        session.count_plan(i)
        session.initial(i)
    threads = 4 if distributed else session.engine.threads
    with ThreadPoolExecutor(threads, thread_name_prefix="facet-dc") as pool:
        return list(pool.map(run, range(len(session.dcs))))


def _by_initial(session: Session, plans: dict[int, Plan]) -> dict[tuple, list[int]]:
    """DCs with the same row filters start from the same initial pairs -- in a
    scoped run, DCs with the same predicates too (a scoped run's initial pairs
    are cut to the rows that can pair with the scope: ``filters.semi_join``)."""
    groups: dict[tuple, list[int]] = defaultdict(list)
    scoped = session.engine.scoped
    for i in plans:
        nd = session.normal[i]
        key = (
            tuple(sorted(map(repr, nd.side_filters(0)))),
            tuple(sorted(map(repr, nd.side_filters(1)))),
            tuple(sorted(map(repr, nd.preds))) if scoped else (),
        )
        groups[key].append(i)
    return groups


def shared_groups(
    session: Session, mode: str, output: str
) -> tuple[dict[int, tuple[Groups, list[Stage]]], dict[int, float]]:
    """For pairs/blocks in a trie mode: each DC's groups after its (shared)
    leading equalities with the stages still to run, and the seconds attributed
    to it; empty in the other modes, which stream DC by DC."""
    if mode not in TRIE_MODES:
        return {}, {}
    plans = {i: p for i in range(len(session.dcs)) if (p := session.plan(i, output)) is not None}
    seqs = trie_stages(plans, mode)
    starts: dict[int, tuple[Groups, list[Stage]]] = {}
    seconds: dict[int, float] = defaultdict(float)

    def leaf(i: int, groups: Groups) -> None:
        starts[i] = (groups, plans[i].stages[len(seqs[i]) :])

    for ids in _by_initial(session, plans).values():
        run_trie(
            session.engine, session.initial(ids[0]), [(i, seqs[i]) for i in ids], leaf, seconds
        )
    return starts, dict(seconds)
