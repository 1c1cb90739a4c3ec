"""A DC in the shape the engine runs (docs/semantics.md §1, paper §3.2).

Every predicate is oriented so that ``t`` is on the left:

* ``t.A op t'.B`` (either written way round) becomes a :class:`PairPredicate`,
  refined on pairs of tid sets;
* a predicate on one tuple only (``t.A op t.B``, ``t.A op 5``, ``t'.A = "x"``)
  becomes a :class:`RowFilter` on that side, applied before any pair work.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from facet.language.ast import DC, Col, Const, Predicate

EQUALITY = "equality"
INEQUALITY = "inequality"
NONEQUALITY = "nonequality"
#: predicate classes in refinement order (paper §6.2: most selective first)
CLASSES = (EQUALITY, INEQUALITY, NONEQUALITY)


@dataclass(frozen=True)
class PairPredicate:
    """``t.a op t'.b``."""

    a: str
    op: str
    b: str

    @property
    def cls(self) -> str:
        if self.op == "=":
            return EQUALITY
        if self.op == "!=":
            return NONEQUALITY
        return INEQUALITY

    @property
    def single_column(self) -> bool:
        return self.a == self.b

    def text(self) -> str:
        return Predicate(Col(0, self.a), self.op, Col(1, self.b)).text()


@dataclass(frozen=True)
class RowFilter:
    """``side.column op other`` where other is a column of the same side or a constant."""

    side: int
    column: str
    op: str
    other: str | Const

    def text(self) -> str:
        right = Col(self.side, self.other) if isinstance(self.other, str) else self.other
        return Predicate(Col(self.side, self.column), self.op, right).text()


@dataclass(frozen=True)
class NormalDC:
    dc: DC
    arity: int
    filters: tuple[RowFilter, ...]
    preds: tuple[PairPredicate, ...]
    #: predicates run in another shape than written, each as "... run as ..." (explain)
    rewrites: tuple[str, ...] = ()
    #: the two-tuple predicates as written (oriented with ``t`` first), before
    #: :func:`equalities_from_bounds` merged any: what reads the DC as its user
    #: wrote it (the suspects' strong columns) takes these
    written: tuple[PairPredicate, ...] = ()

    def side_filters(self, side: int) -> list[RowFilter]:
        return [f for f in self.filters if f.side == side]


def normalize(dc: DC) -> NormalDC:
    filters: list[RowFilter] = []
    preds: list[PairPredicate] = []
    for p in dc.predicates:
        left, op, right = p.left, p.op, p.right
        if isinstance(left, Const):
            p = p.flipped()
            left, op, right = p.left, p.op, p.right
        assert isinstance(left, Col)
        if isinstance(right, Const):
            filters.append(RowFilter(left.tuple, left.name, op, right))
        elif left.tuple == right.tuple:
            filters.append(RowFilter(left.tuple, left.name, op, right.name))
        else:
            if left.tuple == 1:
                p = p.flipped()
                left, op, right = p.left, p.op, p.right
            assert isinstance(left, Col) and isinstance(right, Col)
            preds.append(PairPredicate(left.name, op, right.name))
    merged = equalities_from_bounds(preds)
    rewrites = tuple(
        " and ".join(q.text() for q in dict.fromkeys(preds) if (q.a, q.b) == (p.a, p.b))
        + f" run as {p.text()}"
        for p in merged
        if p.op == "=" and sum((q.a, q.b) == (p.a, p.b) for q in dict.fromkeys(preds)) > 1
    )
    return NormalDC(dc, dc.arity, tuple(filters), merged, rewrites, tuple(dict.fromkeys(preds)))


def equalities_from_bounds(preds: list[PairPredicate]) -> tuple[PairPredicate, ...]:
    """``t.A <= t'.B and t.A >= t'.B`` is ``t.A = t'.B`` (NULL makes all three false), run
    as an equality (hashing) instead of a sweep; an ``=`` makes a ``<=`` or ``>=`` on the
    same operands redundant.  The others stand as written (the DC's text is unchanged)."""
    admits = _admitted(preds)
    out: list[PairPredicate] = []
    for p in preds:
        if admits[(p.a, p.b)] == _EQ and p.op in ("<=", ">=", "="):
            p = PairPredicate(p.a, "=", p.b)
        out.append(p)
    return tuple(dict.fromkeys(out))


#: the relations between two values each order predicate admits (less, equal, greater)
_LT, _EQ, _GT = 1, 2, 4
_ADMITS = {"<": _LT, "<=": _LT | _EQ, "=": _EQ, "!=": _LT | _GT, ">=": _EQ | _GT, ">": _GT}


def contradictory(preds: Iterable[PairPredicate]) -> bool:
    """Whether no pair of rows can satisfy ``preds`` together: two predicates on the
    same operands that admit no common relation (``t.X < t'.X and t.X > t'.X``, or
    ``t.X = t'.X and t.X != t'.X``).  A DC joined with its mirror image is often
    such a DC (``t.X > t'.X`` mirrored is ``t.X < t'.X``), so its count is 0 without
    running it."""
    return any(m == 0 for m in _admitted(preds).values())


def _admitted(preds: Iterable[PairPredicate]) -> dict[tuple[str, str], int]:
    """Per pair of operands, the relations (``_LT | _EQ | _GT``) its predicates all admit."""
    admits: dict[tuple[str, str], int] = {}
    for p in preds:
        key = (p.a, p.b)
        admits[key] = admits.get(key, _LT | _EQ | _GT) & _ADMITS[p.op]
    return admits


def side_columns(nd: NormalDC, side: int) -> list[str]:
    """Columns of ``t`` (side 0) or ``t'`` (side 1) that the DC's predicates touch,
    in the order the DC's text first names them (either side)."""
    out: list[str] = []
    for p in nd.preds:
        out.append(p.a if side == 0 else p.b)
    for f in nd.filters:
        if f.side == side:
            out.append(f.column)
            if isinstance(f.other, str):
                out.append(f.other)
    first = text_order(nd)
    return sorted(dict.fromkeys(out), key=lambda c: first.get(c, len(first)))


def text_order(nd: NormalDC) -> dict[str, int]:
    """Each column the DC names, by the place of its first mention in the DC's text."""
    first: dict[str, int] = {}
    for pred in nd.dc.predicates:
        for col in pred.columns():
            first.setdefault(col.name, len(first))
    return first
