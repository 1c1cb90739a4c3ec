"""Many DCs at once: which refinements they share (paper §4 "Multi-constraint
execution", Fig. 1, Fig. 10).

* ``sequential``: one DC after the other.
* ``parallel``: DCs on worker threads.
* ``cost-trie``: every DC keeps its own (cost-based) predicate order; DCs whose
  refinements start the same way share them -- a trie of stages, each node
  refined once, its groups handed to every DC below it.
* ``freq-trie``: predicates are reordered, within their class, by how many DCs
  share them (most shared first), so more prefixes are shared (Fig. 1).

The trie holds the leading equality stages: they partition, so a shared node
never holds more than its input.  This module only decides the shapes (pure);
the engine walks the trie.
"""

from __future__ import annotations

from collections import Counter

from facet.language.normalize import CLASSES, EQUALITY, PairPredicate
from facet.planner.plan import Plan, Stage

MODES = ("sequential", "parallel", "cost-trie", "freq-trie")
TRIE_MODES = ("cost-trie", "freq-trie")


def trie_stages(plans: dict[int, Plan], mode: str) -> dict[int, list[Stage]]:
    """The stage sequence each DC contributes to the trie: its leading
    equalities (for a count plan, exactly the stages refined before its sink),
    in the plan's order (``cost-trie``) or the most shared first (``freq-trie``)."""
    seqs: dict[int, list[Stage]] = {}
    for i, plan in plans.items():
        lead: list[Stage] = []
        for s in plan.stages:
            if s.cls != EQUALITY:
                break
            lead.append(s)
        seqs[i] = lead
    if mode != "freq-trie":
        return seqs
    freq: Counter[tuple[PairPredicate, ...]] = Counter()
    for stages in seqs.values():
        for s in set(stages):
            freq[s.preds] += 1
    rank = {c: k for k, c in enumerate(CLASSES)}
    out = {}
    for i, stages in seqs.items():
        pos = {s: k for k, s in enumerate(stages)}
        out[i] = sorted(stages, key=lambda s: (rank[s.cls], -freq[s.preds], pos[s]))
    return out
