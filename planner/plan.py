"""Plans: refinement order, algorithm per refinement, estimates (paper §6).

:func:`make_plan` is a pure step from statistics to a plan: the order comes
from :mod:`facet.planner.order`, inequality algorithms from
:mod:`facet.planner.algorithms`, and every stage carries its estimated
cardinality and output pairs for ``facet explain``.

A plan serves two sinks.  Counting refines only the equalities (they
partition) and hands the rest to the counting sink (:class:`CountSink`);
pairs and blocks refine every stage in order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from facet.language.normalize import (
    EQUALITY,
    INEQUALITY,
    NONEQUALITY,
    NormalDC,
    PairPredicate,
)
from facet.planner.algorithms import choose_inequalities
from facet.planner.config import DEFAULT, Config
from facet.planner.order import order_predicates

ALGORITHMS = ("equality", "nonequality", "hsm", "bhsm", "iejoin", "cdq")
#: classes in refinement order (paper §6.2)
CLASS_ORDER = {EQUALITY: 0, INEQUALITY: 1, NONEQUALITY: 2}


@dataclass(frozen=True)
class Stage:
    """One refinement: its predicate(s) (two for IEJoin) and algorithm."""

    preds: tuple[PairPredicate, ...]
    algorithm: str
    #: estimated distinct values the refinement works with (joint with prior equalities)
    cardinality: float | None = None
    #: estimated pairs after this stage
    est_pairs: float | None = None
    note: str = ""

    @property
    def pred(self) -> PairPredicate:
        return self.preds[0]

    @property
    def cls(self) -> str:
        return self.preds[0].cls

    def text(self) -> str:
        return " and ".join(p.text() for p in self.preds)


@dataclass(frozen=True)
class CountSink:
    """How the counting sink answers what the equalities leave."""

    inequalities: tuple[PairPredicate, ...]
    nonequalities: tuple[PairPredicate, ...]
    #: an equality-only DC's last equality, answered by the sink instead of refined
    equality: PairPredicate | None = None

    @property
    def keyed(self) -> bool:
        """Answered by code counts per group (one equality or non-equality left)."""
        return self.equality is not None or (not self.inequalities and len(self.nonequalities) == 1)

    @property
    def predicates(self) -> tuple[PairPredicate, ...]:
        eq = () if self.equality is None else (self.equality,)
        return eq + self.inequalities + self.nonequalities

    @property
    def method(self) -> str:
        if self.keyed:
            return "closed form over the codes counted per group (no sort)"
        k = len(self.inequalities)
        base = {0: "closed form", 1: "sort + binary search", 2: "sweep + Fenwick tree"}.get(
            k, f"cdq x{k - 2} + sweep + Fenwick tree"
        )
        if self.nonequalities:
            j = len(self.nonequalities)
            base += f", inclusion-exclusion over {j} non-equalit{'y' if j == 1 else 'ies'} ({2**j} terms)"
        return base

    @property
    def algorithm(self) -> str:
        k = len(self.inequalities)
        return {0: "count-closed", 1: "count-sort", 2: "count-fenwick"}.get(k, "count-cdq")


@dataclass
class Plan:
    """The stages of one DC, in order; row filters run before them."""

    dc: NormalDC
    stages: list[Stage] = field(default_factory=list)
    output: str = "count"
    #: tuples on each side after the row filters
    left_rows: int = 0
    right_rows: int = 0
    est_pairs_in: float = 0.0

    def of_class(self, cls: str) -> list[Stage]:
        return [s for s in self.stages if s.cls == cls]

    @property
    def preds(self) -> list[PairPredicate]:
        """Every predicate, in stage order."""
        return [p for s in self.stages for p in s.preds]

    @property
    def count_sink(self) -> CountSink:
        ineqs = tuple(p for s in self.of_class(INEQUALITY) for p in s.preds)
        neqs = tuple(p for s in self.of_class(NONEQUALITY) for p in s.preds)
        eqs = self.of_class(EQUALITY)
        last = eqs[-1].pred if eqs and not ineqs and not neqs else None
        return CountSink(ineqs, neqs, last)


class NoStats:
    """Stand-in statistics: no estimates, plans keep the written order in each class."""

    rows = 0

    def multi_cardinality(self, names) -> float:  # pragma: no cover - never called
        raise NotImplementedError


def make_plan(
    dc: NormalDC,
    stats=None,
    config: Config = DEFAULT,
    output: str = "count",
    left_rows: int = 0,
    right_rows: int = 0,
    reflexive: bool = True,
    sample_pairs: float | None = None,
    estimates: bool = True,
    limit: int | None = None,
) -> Plan:
    """Plan a two-tuple DC.  ``stats``: a :class:`facet.planner.stats.Statistics`
    (or ``None``: no estimates, written order within classes); ``sample_pairs``:
    pairs satisfying the equalities and inequalities, estimated from the tid
    sample.  ``estimates=False`` skips the joint cardinalities of the equality
    prefix (a full pass over the rows) when nothing downstream needs them:
    no inequality to choose an algorithm for, and nobody to show them to.
    ``limit``: pairs are wanted up to this many per DC (plans that stream)."""
    preds = list(dict.fromkeys(dc.preds))
    card = None
    if stats is not None:

        def card(cols: tuple[str, ...]) -> float:
            return stats.multi_cardinality(cols)

    rows = max(left_rows, right_rows)
    if config.order.startswith("shuffle"):
        rng = random.Random(config.order)
        rng.shuffle(preds)
        return _random_plan(dc, preds, rng, output, left_rows, right_rows)
    if config.order == "written":
        ordered = order_predicates(preds, None, rows, reflexive)
    else:
        ordered = order_predicates(preds, card, rows, reflexive)
    # estimates and algorithm choice
    pairs = float(left_rows) * float(right_rows)
    est_in = pairs
    eq_cols: list[str] = []
    stages: list[Stage] = []
    eqs = [p for p in ordered if p.cls == EQUALITY]
    ineqs = [p for p in ordered if p.cls == INEQUALITY]
    neqs = [p for p in ordered if p.cls == NONEQUALITY]
    prev = 1.0
    if not ineqs and not estimates:
        card = None  # the order is chosen; the rest would only be displayed
    for p in eqs:
        eq_cols.append(p.a)
        c = card(tuple(eq_cols)) if card else None
        if c:
            pairs *= prev / max(c, 1.0)
            prev = max(c, 1.0)
        stages.append(Stage((p,), "equality", c, pairs if card else None))
    groups = prev if card else 1.0
    joint = [card(tuple(eq_cols) + (p.a,)) if card else 0.0 for p in ineqs]
    if ineqs:
        choices = (
            choose_inequalities(
                ineqs,
                joint,
                rows / max(groups, 1.0),
                config,
                output,
                sample_pairs,
                rows,
                more_after=bool(neqs),
                limit=limit,
            )
            if card or config.inequality
            else [_default_choice(p, config, output) for p in ineqs]
        )
        for k, ch in enumerate(choices):
            pairs *= 0.5 ** len(ch.preds)
            if sample_pairs is not None and k == len(choices) - 1:
                pairs = sample_pairs
            stages.append(
                Stage(
                    ch.preds,
                    ch.algorithm,
                    ch.cardinality if card else None,
                    pairs if card else None,
                    ch.note,
                )
            )
    for p in neqs:
        c = card((p.a,)) if card else None
        if c:
            pairs *= 1.0 - 1.0 / max(c, 1.0)
        stages.append(Stage((p,), "nonequality", c, pairs if card else None))
    return Plan(dc, stages, output, left_rows, right_rows, est_in)


def _default_choice(p: PairPredicate, config: Config, output: str):
    from facet.planner.algorithms import Choice

    if output == "blocks":
        return Choice((p,), "cdq", 0.0, "blocks: compact dominance blocks")
    return Choice((p,), "hsm", 0.0, "no statistics")


def _random_plan(dc, preds, rng, output, left_rows, right_rows) -> Plan:
    """Any order, any algorithm (the plan must never change the answer)."""
    stages: list[Stage] = []
    i = 0
    while i < len(preds):
        p = preds[i]
        if p.cls == EQUALITY:
            stages.append(Stage((p,), "equality"))
        elif p.cls == NONEQUALITY:
            stages.append(Stage((p,), "nonequality"))
        else:
            j = next((k for k in range(i + 1, len(preds)) if preds[k].cls == INEQUALITY), None)
            if j is not None and rng.random() < 0.35:
                q = preds.pop(j)
                stages.append(Stage((p, q), "iejoin", note="random"))
            else:
                stages.append(Stage((p,), rng.choice(["hsm", "bhsm", "cdq"]), note="random"))
        i += 1
    return Plan(dc, stages, output, left_rows, right_rows, float(left_rows) * float(right_rows))


def plan_dc(dc: NormalDC, config: Config = DEFAULT) -> Plan:
    """A plan without statistics (written order within classes)."""
    return make_plan(dc, None, config)
