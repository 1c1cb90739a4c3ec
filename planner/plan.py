"""Plans: refinement order, algorithm and storage per refinement, the counting
sink, estimates (paper §6).

:func:`make_plan` is a pure step from a DC, the shape of its initial pairs and
statistics (an interface, :mod:`facet.planner.statistics`) to a :class:`Plan`:
plain data -- predicates, algorithm, storage, estimates, sink -- that any
engine executes.  The order comes from :mod:`facet.planner.order`, inequality
algorithms from :mod:`facet.planner.algorithms`.

A plan serves one output.  Counting refines only the equalities (they
partition) and hands the rest to the counting sink (:class:`CountSink`, whose
kind is decided here, once); pairs and blocks refine every stage in order.
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
from facet.planner.algorithms import Choice, choose_inequalities
from facet.planner.config import DEFAULT, Config
from facet.planner.order import order_predicates
from facet.planner.statistics import Sides, Statistics

#: refinement algorithms an engine must implement
ALGORITHMS = ("equality", "nonequality", "hsm", "bhsm", "iejoin", "cdq")
#: algorithms whose big groups may run on compressed bitmaps (paper §4, Fig. 7)
BITMAP_ALGORITHMS = ("equality", "nonequality", "hsm")
#: ... of which "hybrid" storage moves big groups (equalities only partition)
HYBRID_ALGORITHMS = ("nonequality", "hsm")


@dataclass(frozen=True)
class Stage:
    """One refinement: its predicate(s) (two for IEJoin), algorithm and tid
    storage (``arrays``, ``bitmaps``, or ``hybrid``: groups of at least
    ``Config.bitmap_min_tids`` tids on bitmaps)."""

    preds: tuple[PairPredicate, ...]
    algorithm: str
    storage: str = "arrays"
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


#: counting sink kinds
KEYED = "keyed"  # one equality or non-equality: code counts per group, no sort
DEGREES = "degrees"  # inequalities (sort / Fenwick / CDQ), non-equalities by inclusion-exclusion


@dataclass(frozen=True)
class CountSink:
    """How the counting sink answers what the refined equalities leave
    (docs/semantics.md §6): ``keyed`` -- one final equality or non-equality
    (the key and FD shapes) in closed form over the codes counted per group;
    ``degrees`` -- the inequalities by sorting (one), a sweep + Fenwick tree
    (two) or dominance blocks then a sweep (more), and the non-equalities by
    inclusion-exclusion ``count(P and A != B) = count(P, A and B not NULL) -
    count(P and A = B)``."""

    kind: str
    inequalities: tuple[PairPredicate, ...] = ()
    nonequalities: tuple[PairPredicate, ...] = ()
    #: the predicate a keyed sink answers
    keyed: PairPredicate | None = None

    @property
    def predicates(self) -> tuple[PairPredicate, ...]:
        if self.kind == KEYED:
            return (self.keyed,)  # type: ignore[return-value]
        return self.inequalities + self.nonequalities

    @property
    def terms(self) -> list[tuple[int, tuple[PairPredicate, ...]]]:
        """Inclusion-exclusion over the non-equalities: ``(sign, equalities)`` per
        term -- the inequalities are counted on the groups refined by the term's
        equalities (``A = B`` for each non-equality ``A != B`` in the subset)."""
        out: list[tuple[int, tuple[PairPredicate, ...]]] = [(1, ())]
        for p in self.nonequalities:
            eq = PairPredicate(p.a, "=", p.b)
            out += [(-sign, eqs + (eq,)) for sign, eqs in out]
        return sorted(out, key=lambda t: len(t[1]))

    @property
    def algorithm(self) -> str:
        if self.kind == KEYED:
            return "count-keyed"
        k = len(self.inequalities)
        return {0: "count-closed", 1: "count-sort", 2: "count-fenwick"}.get(k, "count-cdq")

    @property
    def method(self) -> str:
        if self.kind == KEYED:
            return "closed form over the codes counted per group (no sort)"
        k = len(self.inequalities)
        base = {0: "closed form", 1: "ranks + histogram", 2: "sweep + Fenwick tree"}.get(
            k, f"cdq x{k - 2} + sweep + Fenwick tree"
        )
        if self.nonequalities:
            j = len(self.nonequalities)
            base += f", inclusion-exclusion over {j} non-equalit{'y' if j == 1 else 'ies'} ({2**j} terms)"
        return base


@dataclass
class Plan:
    """What an engine runs for one two-tuple DC and one output: row filters
    (from the DC), then ``stages`` in order, then for counts the ``sink``."""

    dc: NormalDC
    output: str = "count"
    #: refinements in order (counts: the equalities refined before the sink)
    stages: list[Stage] = field(default_factory=list)
    #: the counting sink (``output == "count"`` only)
    sink: CountSink | None = None
    #: tuples on each side after the row filters
    left_rows: int = 0
    right_rows: int = 0
    est_pairs_in: float = 0.0

    def of_class(self, cls: str) -> list[Stage]:
        return [s for s in self.stages if s.cls == cls]

    @property
    def preds(self) -> list[PairPredicate]:
        """Every predicate the stages refine, in stage order."""
        return [p for s in self.stages for p in s.preds]


def needs_statistics(dc: NormalDC, output: str, config: Config = DEFAULT) -> bool:
    """Whether a plan's choices depend on statistics: the order of equalities
    over two or more sets of columns, or (pairs/blocks) the order and algorithm
    of inequalities and the order of two or more non-equalities.  Equalities over
    one set of columns (``t.A = t'.B and t.B = t'.A``) tie on every estimate
    :func:`~facet.planner.order.order_predicates` ranks them by, so they keep
    their written order with statistics or without."""
    if config.order != "planned":
        return False
    preds = list(dict.fromkeys(dc.preds))
    classes = [p.cls for p in preds]
    if len({frozenset((p.a, p.b)) for p in preds if p.cls == EQUALITY}) >= 2:
        return True
    return output != "count" and (INEQUALITY in classes or classes.count(NONEQUALITY) >= 2)


def make_plan(
    dc: NormalDC,
    sides: Sides,
    stats: Statistics | None = None,
    config: Config = DEFAULT,
    output: str = "count",
    *,
    estimates: bool = False,
    limit: int | None = None,
) -> Plan:
    """Plan a two-tuple DC for ``output`` (``count``, ``pairs`` or ``blocks``).

    ``stats`` is asked only what the choices need (:func:`needs_statistics`);
    ``estimates=True`` also fills the estimates nobody needs but ``facet
    explain`` shows (joint cardinalities of the equality prefix: a pass over
    the rows).  ``limit``: pairs are wanted up to this many per DC (plans that
    stream).  Without statistics the order within a class is as written."""
    preds = list(dict.fromkeys(dc.preds))
    if not needs_statistics(dc, output, config):
        stats = None
    if config.order.startswith("shuffle"):
        rng = random.Random(config.order)
        rng.shuffle(preds)
        return _random_plan(dc, preds, rng, output, sides, config)
    card = None if stats is None else stats.cardinality
    rows = max(sides.left, sides.right)
    ordered = order_predicates(preds, card, rows, sides.reflexive)
    eqs = [p for p in ordered if p.cls == EQUALITY]
    ineqs = [p for p in ordered if p.cls == INEQUALITY]
    neqs = [p for p in ordered if p.cls == NONEQUALITY]
    # estimates beyond what the choices need only for explain (a pass over the rows each)
    if output == "count":
        card_eq = card if estimates else None
    else:
        card_eq = card if (ineqs or estimates) else None
    pairs = float(sides.left) * float(sides.right)
    est_in = pairs
    stages: list[Stage] = []
    eq_cols: list[str] = []
    prev = 1.0
    for p in eqs:
        eq_cols.append(p.a)
        c = card_eq(tuple(eq_cols)) if card_eq else None
        if c:
            pairs *= prev / max(c, 1.0)
            prev = max(c, 1.0)
        stages.append(
            Stage((p,), "equality", storage_for("equality", config), c, pairs if card_eq else None)
        )
    if output == "count":
        if not ineqs and not neqs and eqs:
            sink = CountSink(KEYED, keyed=eqs[-1])
            stages = stages[:-1]
        elif not ineqs and len(neqs) == 1:
            sink = CountSink(KEYED, keyed=neqs[0])
        else:
            sink = CountSink(DEGREES, tuple(ineqs), tuple(neqs))
        return Plan(dc, output, stages, sink, sides.left, sides.right, est_in)
    if ineqs:
        sample = None
        if stats is not None and output == "pairs" and len(ineqs) >= 2:
            sample = stats.sample_pairs(tuple(eqs + ineqs))
        if card is not None or config.inequality:
            joint = [card(tuple(eq_cols) + (p.a,)) if card else 0.0 for p in ineqs]
            choices = choose_inequalities(
                ineqs,
                joint,
                rows / max(prev, 1.0),
                config,
                output,
                sample,
                rows,
                more_after=bool(neqs),
                limit=limit,
            )
        else:
            choices = [_default_choice(p, output) for p in ineqs]
        for k, ch in enumerate(choices):
            pairs *= 0.5 ** len(ch.preds)
            if sample is not None and k == len(choices) - 1:
                pairs = sample
            known = card is not None
            stages.append(
                Stage(
                    ch.preds,
                    ch.algorithm,
                    storage_for(ch.algorithm, config, len(ch.preds)),
                    ch.cardinality if known else None,
                    pairs if known else None,
                    ch.note,
                )
            )
    for p in neqs:
        c = card_eq((p.a,)) if card_eq else None
        if c:
            pairs *= 1.0 - 1.0 / max(c, 1.0)
        stages.append(
            Stage((p,), "nonequality", storage_for("nonequality", config), c, pairs if c else None)
        )
    return Plan(dc, output, stages, None, sides.left, sides.right, est_in)


def storage_for(algorithm: str, config: Config, n_preds: int = 1) -> str:
    """The tid storage of a refinement (paper §4): bitmaps only where the work is
    unions and differences, and only when the config asks for them."""
    if n_preds != 1 or algorithm not in BITMAP_ALGORITHMS:
        return "arrays"
    if config.storage == "bitmaps":
        return "bitmaps"
    if (
        config.storage == "hybrid"
        and algorithm in HYBRID_ALGORITHMS
        and config.bitmap_min_tids < 1 << 62
    ):
        return "hybrid"
    return "arrays"


def _default_choice(p: PairPredicate, output: str) -> Choice:
    if output == "blocks":
        return Choice((p,), "cdq", 0.0, "blocks: compact dominance blocks")
    return Choice((p,), "hsm", 0.0, "no statistics")


def _random_plan(
    dc: NormalDC, preds, rng: random.Random, output: str, sides: Sides, config: Config
) -> Plan:
    """Any order, any algorithm (no plan may change the answer)."""
    pairs_in = float(sides.left) * float(sides.right)
    if output == "count":
        eqs = [p for p in preds if p.cls == EQUALITY]
        rest = [p for p in preds if p.cls != EQUALITY]
        ineqs = tuple(p for p in rest if p.cls == INEQUALITY)
        neqs = tuple(p for p in rest if p.cls == NONEQUALITY)
        stages = [Stage((p,), "equality", storage_for("equality", config)) for p in eqs]
        if eqs and not rest and rng.random() < 0.5:
            sink = CountSink(KEYED, keyed=eqs[-1])
            stages = stages[:-1]
        elif not ineqs and len(neqs) == 1 and rng.random() < 0.5:
            sink = CountSink(KEYED, keyed=neqs[0])
        else:
            sink = CountSink(DEGREES, ineqs, neqs)
        return Plan(dc, output, stages, sink, sides.left, sides.right, pairs_in)
    stages: list[Stage] = []
    i = 0
    while i < len(preds):
        p = preds[i]
        if p.cls == EQUALITY:
            stages.append(Stage((p,), "equality", storage_for("equality", config)))
        elif p.cls == NONEQUALITY:
            stages.append(Stage((p,), "nonequality", storage_for("nonequality", config)))
        else:
            j = next((k for k in range(i + 1, len(preds)) if preds[k].cls == INEQUALITY), None)
            if j is not None and rng.random() < 0.35:
                q = preds.pop(j)
                stages.append(Stage((p, q), "iejoin", note="random"))
            else:
                alg = rng.choice(["hsm", "bhsm", "cdq"])
                stages.append(Stage((p,), alg, storage_for(alg, config), note="random"))
        i += 1
    return Plan(dc, output, stages, None, sides.left, sides.right, pairs_in)


def leading_equalities(stages: list[Stage]) -> int:
    """How many same-column equalities on tid arrays lead ``stages`` (a count plan
    groups them at once: :func:`facet.engine.refinement.refine_equalities`)."""
    eqs = 0
    for s in stages:
        if s.algorithm != "equality" or s.pred.a != s.pred.b or s.storage != "arrays":
            break
        eqs += 1
    return eqs
