"""Plans: the order of refinements and the algorithm of each (paper §6).

This module holds the plan data and the fixed-order planner: equalities, then
inequalities, then non-equalities (paper §6.2: classes by selectivity), and
within a class single-column predicates first (they refine reflexive pairs
without a probe side, §5.1).  Statistics-driven ordering and algorithm choice
plug in here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from facet.language.normalize import (
    EQUALITY,
    INEQUALITY,
    NONEQUALITY,
    NormalDC,
    PairPredicate,
)
from facet.planner.config import DEFAULT, Config

#: refinement algorithms by predicate class
ALGORITHM = {EQUALITY: "equality", NONEQUALITY: "nonequality", INEQUALITY: "hsm"}
_CLASS_RANK = {EQUALITY: 0, INEQUALITY: 1, NONEQUALITY: 2}


@dataclass(frozen=True)
class Stage:
    """One refinement: a predicate and the algorithm that refines it."""

    pred: PairPredicate
    algorithm: str


@dataclass
class Plan:
    """The stages of one DC, in order; row filters run before them."""

    dc: NormalDC
    stages: list[Stage] = field(default_factory=list)

    def of_class(self, cls: str) -> list[Stage]:
        return [s for s in self.stages if s.pred.cls == cls]


def order_predicates(preds: list[PairPredicate]) -> list[PairPredicate]:
    """Fixed order: class (=, then < <= > >=, then !=), single-column first, then as written."""
    keyed = sorted(
        enumerate(preds), key=lambda ip: (_CLASS_RANK[ip[1].cls], not ip[1].single_column, ip[0])
    )
    return [p for _, p in keyed]


def plan_dc(dc: NormalDC, config: Config = DEFAULT) -> Plan:
    """The fixed-order plan of a DC."""
    preds = order_predicates(list(dict.fromkeys(dc.preds)))
    stages = []
    for p in preds:
        alg = ALGORITHM[p.cls]
        if p.cls == INEQUALITY and config.inequality is not None:
            alg = config.inequality
        stages.append(Stage(p, alg))
    return Plan(dc, stages)
