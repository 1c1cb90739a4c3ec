"""Predicate order (paper §6.2).

Classes first -- equalities, then inequalities, then non-equalities (higher
selectivity first).  Within a class: predicates on a single column first while
the pipeline still consumes reflexive pairs (they refine without a probe side),
then ascending estimated cardinality (smaller hash tables / fewer runs);
three or more single-column equalities are ordered with GreedyHLL.
"""

from __future__ import annotations

from collections.abc import Callable

from facet.language.normalize import CLASSES, EQUALITY, PairPredicate

Cardinality = Callable[[tuple[str, ...]], float]


def predicate_cardinality(p: PairPredicate, card: Cardinality) -> float:
    """The cardinality a predicate's refinement works with: the larger of its two columns."""
    return max(card((p.a,)), card((p.b,)))


def greedy_hll(preds: list[PairPredicate], card: Cardinality, rows: int) -> list[PairPredicate]:
    """GreedyHLL: order single-column equalities by pairs of ascending
    ``rank = intermediates x cost`` with ``intermediates = (n - |Ai, Aj|) / n``
    and ``cost = (|Ai| + |Ai, Aj|) ** (1/10)`` (``|Ai| <= |Aj|``); each chosen
    pair puts its lower-cardinality predicate first."""
    n = max(rows, 1)
    ranked = []
    for i in range(len(preds)):
        for j in range(i + 1, len(preds)):
            a, b = preds[i], preds[j]
            ca, cb = card((a.a,)), card((b.a,))
            if cb < ca:
                a, b, ca, cb = b, a, cb, ca
            cab = card((a.a, b.a))
            intermediates = max(n - cab, 0.0) / n
            cost = (ca + cab) ** 0.1
            ranked.append((intermediates * cost, ca, a, b))
    ranked.sort(key=lambda r: (r[0], r[1]))
    out: list[PairPredicate] = []
    for _, _, a, b in ranked:
        for p in (a, b):
            if p not in out:
                out.append(p)
        if len(out) == len(preds):
            break
    return out


def order_predicates(
    preds: list[PairPredicate],
    card: Cardinality | None = None,
    rows: int = 0,
    reflexive: bool = True,
) -> list[PairPredicate]:
    """The refinement order of a DC's two-tuple predicates.

    Without statistics (``card=None``) the order within a class is as written.
    """
    preds = list(dict.fromkeys(preds))
    out: list[PairPredicate] = []
    for cls in CLASSES:
        group = [p for p in preds if p.cls == cls]
        if not group:
            continue
        if card is None:
            if reflexive:
                group.sort(key=lambda p: not p.single_column)
            out.extend(group)
            reflexive = reflexive and all(p.single_column for p in group)
            continue
        single = [p for p in group if p.single_column]
        cross = [p for p in group if not p.single_column]
        if not reflexive:
            single, cross = [], sorted(group, key=lambda p: predicate_cardinality(p, card))
        if cls == EQUALITY and len(single) >= 3:
            single = greedy_hll(single, card, rows)
        else:
            single.sort(key=lambda p: predicate_cardinality(p, card))
        cross.sort(key=lambda p: predicate_cardinality(p, card))
        out.extend(single + cross)
        reflexive = reflexive and not cross
    return out
