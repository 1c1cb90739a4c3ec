"""Row filters and initial pairs (docs/semantics.md §1, §8).

A DC's one-tuple predicates (``t.A op t.B``, ``t.A op constant``) filter the
rows of their side before any pair work; a single-tuple DC's violations are
the rows that pass.  The initial pairs of a whole-table run are the reflexive
pair ``(all, all)`` cut by each side's filters.  A run scoped to rows ``S``
(``--where``, Daisy) starts from ``(L ∩ S, R)`` and ``(L - S, R ∩ S)``: every
pair with a row of ``S``, each once.
"""

from __future__ import annotations

import numpy as np

from facet.encoding import EncodedTable
from facet.engine.groups import Groups
from facet.engine.memory import whole_tids
from facet.kernels.common import OP_CODES, compare_arrays
from facet.language.ast import DC
from facet.language.normalize import NormalDC, PairPredicate, RowFilter, normalize
from facet.language.where import And, Compare, IsNull, Node, Not, Or, Where


def filter_mask(enc: EncodedTable, filters: list[RowFilter]) -> np.ndarray | None:
    """Rows satisfying every filter (``None``: no filter); NULL fails."""
    if not filters:
        return None
    mask = np.ones(enc.n, bool)
    for f in filters:
        x = enc.column(f.column)
        if isinstance(f.other, str):
            y = enc.column(f.other)
            ok = (x >= 0) & (y >= 0)
        else:
            y = enc.const_codes[(f.column, f.other)]
            ok = x >= 0
        mask &= ok & compare_arrays(x, OP_CODES[f.op], y)
    return mask


def single_rows(enc: EncodedTable, dc: NormalDC, scope: np.ndarray | None = None) -> np.ndarray:
    """The violating rows of a single-tuple DC (int64 tids, ascending), within
    ``scope`` (a bool per row) when given."""
    mask = filter_mask(enc, list(dc.filters))
    if scope is not None:
        mask = scope if mask is None else mask & scope
    if mask is None:
        return np.arange(enc.n, dtype=np.int64)
    return np.flatnonzero(mask)


def scoped_pairs(
    left: np.ndarray,
    right: np.ndarray,
    scope: np.ndarray,
    enc: EncodedTable | None = None,
    preds: tuple[PairPredicate, ...] = (),
) -> Groups:
    """``(L ∩ S, R)`` and ``(L - S, R ∩ S)``: the pairs of ``(L, R)`` holding a row
    of the scope ``S``, each once (empty groups left out).  With ``preds`` (the
    DC's two-tuple predicates) the large side of each is first cut to the rows
    that satisfy every predicate with at least one row of the small side
    (:func:`semi_join`): a violation needs them all."""
    inside = scope[left]
    parts = []
    left_in = left[inside]
    if left_in.size and right.size:
        partners = semi_join(enc, preds, right, 1, left_in, SEMI_JOIN_WHOLE) if preds else right
        if partners.size:
            parts.append((left_in, partners))
    outside = left[~inside]
    right_in = right[scope[right]]
    if outside.size and right_in.size:
        outside = semi_join(enc, preds, outside, 0, right_in, SEMI_JOIN_WHOLE) if preds else outside
        if outside.size:
            parts.append((outside, right_in))
    return Groups.pairs(parts)  # disjoint only when one: R and R ∩ S share rows


def semi_join(
    enc: EncodedTable,
    preds: tuple[PairPredicate, ...],
    rows: np.ndarray,
    side: int,
    anchors: np.ndarray,
    whole_above: float = 1.0,
) -> np.ndarray:
    """The ``rows`` (ascending tids of tuple ``side``: 0 for ``t``, 1 for ``t'``)
    that satisfy every predicate ``t.a op t'.b`` of ``preds`` with at least one of
    ``anchors`` (tids of the other tuple): an equality keeps the values the anchors
    hold, an order predicate the values on the right side of the anchors' extreme,
    a non-equality drops only the anchors' one value when they hold one (and is
    skipped otherwise); NULL satisfies nothing (a row kept here is still checked
    by every predicate later).  Exact for every output: a row dropped here is in no
    violating pair with the anchors.  One pass over the codes per predicate.
    ``rows`` comes back whole when more than the fraction ``whole_above`` of it
    would stay (uncut, a whole table refines fastest: its equality stage sorts by
    counting on every core)."""
    if whole_above < 1.0 and rows.size > 8 * _SAMPLE:
        # likely to keep the side whole: a strided sample says so without the full pass
        sample = rows[:: rows.size // _SAMPLE]
        if semi_join(enc, preds, sample, side, anchors).size > (whole_above + 0.1) * sample.size:
            return rows
    whole = rows.size == enc.n  # ascending and distinct: every tid, in order
    keep: np.ndarray | None = None
    for p in preds:
        mine, theirs = (p.a, p.b) if side == 0 else (p.b, p.a)
        y = enc.column(theirs)[anchors]
        y = y[y >= 0]
        if not y.size:
            return rows[:0]
        op = p.op if side == 0 else _FLIPPED[p.op]  # as "row op anchor"
        if op == "!=" and y.min() != y.max():
            continue  # it would drop only NULLs (later stages do): not worth a pass
        x = enc.column(mine) if whole else enc.column(mine)[rows]
        if op == "=":
            seen = np.zeros(enc.domain[theirs] + 1, np.bool_)
            seen[y] = True
            seen[-1] = False  # NULL (-1) indexes the last slot
            ok = seen[x]
        elif op == "!=":
            ok = (x >= 0) & (x != y[0])  # the anchors hold one value
        elif op in ("<", "<="):
            ok = (x >= 0) & (x < y.max() if op == "<" else x <= y.max())
        else:
            ok = (x >= 0) & (x > y.min() if op == ">" else x >= y.min())
        keep = ok if keep is None else keep & ok
    if keep is None:
        return rows
    kept = int(np.count_nonzero(keep))
    if kept == rows.size or kept > whole_above * rows.size:
        return rows
    return rows[keep]


#: a scoped run keeps a side whole when the semi-join would keep more than this of it
#: (tax, 300k rows, 1% scope: cutting 300k to 237k rows made state/salary/rate's
#: equality stage 4x slower -- no counting sort on every core -- for 20% fewer tids)
SEMI_JOIN_WHOLE = 0.5

#: rows of a large side the semi-join first tries on
_SAMPLE = 2048

#: ``a op b`` as ``b op' a``
_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def initial_groups(
    enc: EncodedTable, dc: NormalDC, scope: np.ndarray | None = None, semi: bool = True
) -> Groups:
    """The reflexive pair ``(all, all)`` cut by each side's row filters (scoped by
    :func:`scoped_pairs` when ``scope`` is given, its sides cut by :func:`semi_join`
    unless ``semi`` is False)."""
    m0 = filter_mask(enc, dc.side_filters(0))
    m1 = filter_mask(enc, dc.side_filters(1))
    allt = whole_tids(enc.n)  # (on huge pages: a million rows' tids fault a few times)
    left = allt if m0 is None else allt[m0]
    same = (m0 is None and m1 is None) or (
        m0 is not None and m1 is not None and np.array_equal(m0, m1)
    )
    right = left if same else (allt if m1 is None else allt[m1])
    if scope is not None:
        return scoped_pairs(left, right, scope, enc, dc.preds if semi else ())
    if same:
        return Groups.pair(left)
    return Groups.pair(left, right)


def where_mask(enc: EncodedTable, where: Where) -> np.ndarray:
    """The rows where ``where`` is true (SQL's three values: a comparison with a
    NULL is unknown, and so is its negation).  Each comparison is evaluated as
    the single-tuple DC filter it is, over the run's codes and types; an ``in``
    list (equalities of one column with constants) is one ``np.isin`` over the
    codes.  Masks combine in place: no loop per row, one pass per comparison."""

    def known(columns: list[str]) -> np.ndarray:
        ok = np.ones(enc.n, bool)
        for c in columns:
            ok &= enc.column(c) >= 0
        return ok

    def in_list(node: Or) -> tuple[str, list[int]] | None:
        """``(column, constant codes)`` when every branch is ``column = constant``."""
        column, codes = None, []
        for a in node.args:
            if not isinstance(a, Compare) or a.pred.op != "=":
                return None
            nd = normalize(DC((a.pred,)))
            f = nd.filters[0]
            if isinstance(f.other, str) or (column is not None and f.column != column):
                return None
            column = f.column
            codes.append(enc.const_codes[(f.column, f.other)])
        return (column, codes) if column is not None else None

    def ev(node: Node) -> tuple[np.ndarray, np.ndarray]:  # (true, false)
        if isinstance(node, Compare):
            nd = normalize(DC((node.pred,)))
            true = filter_mask(enc, list(nd.filters))
            assert true is not None
            cols = [c.name for c in node.pred.columns()]
            return true, known(cols) & ~true
        if isinstance(node, IsNull):
            null = enc.column(node.column) < 0
            return null, ~null
        if isinstance(node, Not):
            true, false = ev(node.arg)
            return false, true
        if isinstance(node, Or):
            listed = in_list(node)
            if listed is not None:
                x = enc.column(listed[0])
                valued = x >= 0
                true = valued & np.isin(x, np.asarray(listed[1], x.dtype))
                return true, valued & ~true
        true, false = ev(node.args[0])
        true, false = true.copy(), false.copy()
        for a in node.args[1:]:
            t, f = ev(a)
            if isinstance(node, And):
                true &= t
                false |= f
            else:
                true |= t
                false &= f
        return true, false

    return ev(where.expr)[0]
