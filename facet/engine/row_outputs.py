"""Per-row, per-cell and component outputs for repair tools (docs/outputs.md),
computed from degrees and blocks, never by listing pairs.

* ``tuples (tid, dc, pairs, partners)``: ``pairs`` = ordered violating pairs
  holding the row (as ``t`` plus as ``t'``: the counting sink's degrees);
  ``partners`` = its distinct other rows, ``|out ∪ in| = out + in - |out ∩ in|``
  where ``out ∩ in`` (rows ``b`` with both ``(a, b)`` and ``(b, a)`` violating)
  are the partners of ``a`` as ``t`` under the DC joined with its mirror image
  (every predicate also with ``t`` and ``t'`` swapped) -- a DC itself, counted
  by the same sink; a DC equal to its mirror needs no second count.
* ``cells (tid, column, dc, violations)``: each ordered violating pair adds 1 to
  every cell its row's side of any predicate touches: ``t``'s columns get the
  row's degree as ``t``, ``t'``'s its degree as ``t'``.
* ``suspects (tid, column, score, rank)``: the cells a greedy cover of the
  conflict hypergraph takes (:mod:`facet.kernels.suspects`): a violation is a
  hyperedge over the cells its predicates read on both rows; the cell in the
  most violations not yet covered is taken first (ties: the cell whose column
  is compared with ``!=``, an order or a constant in more of those violations
  -- an FD's right-hand side before its left; then by tid and column),
  ``score`` the violations it covered when taken, ``rank`` its place from 1.
  It lists the violations (at most ``Config.suspect_violations``, below 2^31).
* ``components (tid, component, size)``: the conflict graph over all DCs (rows
  as nodes, violating pairs as edges) by union-find over the final blocks
  (:mod:`facet.kernels.components`); components numbered from 0 in the order of
  their least row.  A row breaking a single-tuple DC is a node.

Single-tuple DCs: a violating row has ``pairs`` 1 (its violation), ``partners``
0, and 1 in each cell the DC touches.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from facet.kernels.common import LE, LHE, LHS, LS, RE, RHE, RHS, RS
from facet.kernels.components import (
    component_labels,
    union_blocks,
    union_dominance,
    union_groups,
    union_pairs,
)
from facet.kernels.partners import (
    empty_partners,
    sample_group_partners,
    sample_pair_partners,
    sample_partners,
)
from facet.kernels.suspects import greedy_cover
from facet.language.ast import FLIP
from facet.language.errors import FacetInputError
from facet.language.normalize import (
    EQUALITY,
    NormalDC,
    PairPredicate,
    RowFilter,
    contradictory,
    equalities_from_bounds,
    side_columns,
    text_order,
)
from facet.planner.plan import KEYED, make_plan, needs_statistics
from facet.progress import available_memory, human_bytes

#: a :class:`facet.engine.session.Session` (the session imports this module)
Session = Any

TUPLES_SCHEMA = pa.schema(
    [("tid", pa.int64()), ("dc", pa.int64()), ("pairs", pa.int64()), ("partners", pa.int64())]
)
CELLS_SCHEMA = pa.schema(
    [("tid", pa.int64()), ("column", pa.string()), ("dc", pa.int64()), ("violations", pa.int64())]
)
COMPONENTS_SCHEMA = pa.schema(
    [("tid", pa.int64()), ("component", pa.int64()), ("size", pa.int64())]
)
SUSPECTS_SCHEMA = pa.schema(
    [("tid", pa.int64()), ("column", pa.string()), ("score", pa.int64()), ("rank", pa.int64())]
)
ROW_OUTPUTS = ("tuples", "cells", "components", "suspects")
SCHEMAS = {
    "tuples": TUPLES_SCHEMA,
    "cells": CELLS_SCHEMA,
    "components": COMPONENTS_SCHEMA,
    "suspects": SUSPECTS_SCHEMA,
}


def mirrored(nd: NormalDC) -> NormalDC:
    """The DC joined with its mirror image: ``(a, b)`` breaks it iff both
    ``(a, b)`` and ``(b, a)`` break ``nd``."""
    preds = list(nd.preds)
    for p in nd.preds:
        q = PairPredicate(p.b, FLIP[p.op], p.a)
        if q not in preds:
            preds.append(q)
    filters = list(nd.filters)
    for f in nd.filters:
        g = RowFilter(1 - f.side, f.column, f.op, f.other)
        if g not in filters:
            filters.append(g)
    # (t.A <= t'.A mirrored is t.A = t'.A: hashed, not swept)
    return NormalDC(nd.dc, nd.arity, tuple(filters), equalities_from_bounds(preds))


def strong_columns(nd: NormalDC, side: int) -> set[str]:
    """Columns of one side that a !=, an order or a constant comparison reads:
    a change there removes the violation where the DC's equalities hold (an
    FD's right-hand side, not its left)."""
    written = nd.written or nd.preds  # (as written: t.X <= t'.X and t.X >= t'.X is strong)
    out = {p.a if side == 0 else p.b for p in written if p.cls != EQUALITY}
    for f in nd.filters:
        if f.side == side and (f.op != "=" or not isinstance(f.other, str)):
            out.add(f.column)  # (t.a = t.b and t.a = t.a compare with = only: weak)
            if isinstance(f.other, str):
                out.add(f.other)
    return out


def _degrees(session: Session, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(left, right, mutual)`` per row of two-tuple DC ``i``."""
    engine = session.engine
    plan = session.plan(i, "count")
    deg = engine.degrees(plan, session.initial(i))
    nd = session.normal[i]
    mirror = mirrored(nd)
    if set(mirror.preds) == set(nd.preds) and set(mirror.filters) == set(nd.filters):
        return deg.left, deg.right, deg.left
    if contradictory(mirror.preds):  # (t.X > t'.X: no row pair violates both ways)
        return deg.left, deg.right, np.zeros_like(deg.left)
    groups = engine.initial_groups(mirror)
    sides = engine.sides(groups)
    stats = engine.statistics(groups) if needs_statistics(mirror, "count", session.config) else None
    mplan = make_plan(mirror, sides, stats, session.config, "count")
    return deg.left, deg.right, engine.degrees(mplan, groups).left


def _dc_id(session: Session, i: int) -> int:
    dc = session.dcs[i]
    return dc.id if dc.id is not None else i


def row_tuples(session: Session, i: int) -> tuple[np.ndarray, ...]:
    """``(tids, pairs, partners, left, right)`` of DC ``i``: its rows in a violation
    by tid, the ordered violating pairs holding each and its distinct partners (a
    single-tuple DC's rows: 1 and 0), and the pairs per row (all rows) as ``t``
    and as ``t'`` (None for a single-tuple DC)."""
    if session.normal[i].arity == 1:
        rows = np.asarray(session.engine.single_rows(session.normal[i]), np.int64)
        ones = np.ones(len(rows), np.int64)
        return rows, ones, ones * 0, None, None
    left, right, mutual = _degrees(session, i)
    tids = np.flatnonzero((left > 0) | (right > 0))
    pairs = left[tids] + right[tids]
    return tids, pairs, pairs - mutual[tids], left, right


def tuples_table(session: Session, i: int) -> pa.Table:
    """``tuples`` of DC ``i``, by tid."""
    tids, pairs, partners, _, _ = row_tuples(session, i)
    return _table(TUPLES_SCHEMA, tids, np.full(len(tids), _dc_id(session, i)), pairs, partners)


def cells_table(session: Session, i: int) -> pa.Table:
    """``cells`` of DC ``i``, by tid then column (in the DC's order)."""
    dc = _dc_id(session, i)
    nd = session.normal[i]
    if nd.arity == 1:
        rows = session.engine.single_rows(nd)
        cols = side_columns(nd, 0)
        per_col = {c: np.ones(len(rows), np.int64) for c in cols}
        return _cells(dc, rows, cols, per_col)
    left, right = _left_right(session, i)
    tids = np.flatnonzero((left > 0) | (right > 0))
    t_cols, u_cols = side_columns(nd, 0), side_columns(nd, 1)
    first = text_order(nd)
    cols = sorted(dict.fromkeys(t_cols + u_cols), key=lambda c: first.get(c, len(first)))
    per_col = {
        c: (left[tids] if c in t_cols else 0) + (right[tids] if c in u_cols else 0) for c in cols
    }
    return _cells(dc, tids, cols, per_col)


def _left_right(session: Session, i: int) -> tuple[np.ndarray, np.ndarray]:
    deg = session.engine.degrees(session.plan(i, "count"), session.initial(i))
    return deg.left, deg.right


def _cells(dc: int, tids: np.ndarray, cols: list[str], per_col: dict[str, Any]) -> pa.Table:
    """One row per (tid, column) with violations > 0, by tid then column."""
    k = len(cols)
    if k == 0 or len(tids) == 0:
        return CELLS_SCHEMA.empty_table()
    counts = np.empty((len(tids), k), np.int64)
    for j, c in enumerate(cols):
        counts[:, j] = per_col[c]
    flat = counts.ravel()
    kept = np.flatnonzero(flat)  # (tid, column) slots with violations, by tid then column
    col = (kept % k).astype(np.int32)
    names = pa.DictionaryArray.from_arrays(pa.array(col), pa.array(cols))
    return pa.table(
        {
            "tid": pa.array(np.asarray(tids, np.int64)[kept // k], pa.int64()),
            "column": names.cast(pa.string()),
            "dc": pa.array(np.full(len(kept), dc, np.int64), pa.int64()),
            "violations": pa.array(flat[kept], pa.int64()),
        },
        schema=CELLS_SCHEMA,
    )


def components_table(session: Session) -> pa.Table:
    """``components`` of the conflict graph over all of the session's DCs."""
    engine = session.engine
    n = session.rows
    parent = np.arange(n, dtype=np.int64)
    seen = np.zeros(n, np.bool_)
    for i, nd in enumerate(session.normal):
        if nd.arity == 1:
            rows = np.asarray(engine.single_rows(nd), np.int64)
            union_pairs(parent, seen, rows, np.full(len(rows), -1, np.int64))
            continue
        count, blocks, initial = (
            session.plan(i, "count"),
            session.plan(i, "blocks"),
            session.initial(i),
        )
        edges = engine.component_edges(count, blocks, initial)
        if edges is not None:  # (a distributed engine: each task's rows joined in the task)
            union_pairs(parent, seen, edges[0], edges[1])
            continue
        union_dc(engine, count, blocks, initial, parent, seen)
    tids, comp, size = component_labels(parent, seen)
    return _table(COMPONENTS_SCHEMA, tids, comp, size)


def union_dc(
    engine: Any, count: Any, blocks: Any, initial: Any, parent: np.ndarray, seen: np.ndarray
) -> None:
    """Join in ``parent`` the two rows of every violating pair of one two-tuple DC
    (``count``, ``blocks``: its plans; ``initial``: its initial pairs), marking them
    ``seen``: without listing blocks for the shapes below, else over its blocks."""
    if _one_order_components(engine, count, initial, parent, seen):
        return
    if _dominance_components(engine, count, initial, parent, seen):
        return
    for groups in engine.blocks(blocks, initial):
        if hasattr(groups, "desc"):  # the engine's own groups: read in place
            union_groups(parent, seen, groups.buf, groups.desc)
            continue
        (lo, lv), (ro, rv) = groups  # an engine that lists blocks per side
        union_blocks(parent, seen, np.asarray(lo, np.int64), np.asarray(lv, np.int64),
                     np.asarray(ro, np.int64), np.asarray(rv, np.int64))  # fmt: skip


def component_roots(parent: np.ndarray, seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(root, row)`` for every marked row: ``root`` the least row of its component
    (edges whose union gives the same components)."""
    rows, comp, _ = component_labels(parent, seen)
    if not len(rows):
        return rows, rows
    _, first = np.unique(comp, return_index=True)  # labels follow each component's least row
    return rows[first][comp], rows


def _one_order_components(
    engine: Any, plan: Any, initial: Any, parent: np.ndarray, seen: np.ndarray
) -> bool:
    """Components of a DC made of equalities and one order predicate ``t.x op t'.y``
    without listing blocks: within a group ``(G, G)`` of the equalities, the rows in
    any violation form one component (True: done; False: not that shape).

    Why: let ``M`` maximise ``x`` and ``m`` minimise ``y`` in ``G`` (op ``>``; the
    others alike).  A violation ``(a, b)`` has ``M.x >= a.x > b.y >= m.y``, so ``(a,
    m)``, ``(M, b)`` and ``(M, m)`` violate too whenever their rows differ, and when
    they do not, ``(a, b)`` itself joins the same rows: every violating row reaches
    ``M`` or ``m``, and ``M`` reaches ``m``.  So the count plan's equalities and its
    sink's per-row degrees are all it takes (union-find over rows, never blocks)."""
    sink = plan.sink if plan is not None else None
    if (
        sink is None
        or sink.kind == KEYED
        or len(sink.inequalities) != 1
        or sink.nonequalities
        or any(p.cls != EQUALITY for st in plan.stages for p in st.preds)
        or not hasattr(engine, "count_sink")
    ):
        return False
    groups = initial
    for stage in plan.stages:
        groups = engine.refine(groups, stage)
    d = getattr(groups, "desc", None)
    if d is None:
        return False
    reflexive = (d[:, LS] == d[:, RS]) & (d[:, LE] == d[:, RE])
    no_holes = (d[:, LHS] == d[:, LHE]) & (d[:, RHS] == d[:, RHE])
    if not (reflexive.all() and no_holes.all()):
        return False  # (a scoped run's groups: blocks)
    deg = engine.count_sink(plan, groups)
    involved = (deg.left > 0) | (deg.right > 0)
    lens = d[:, LE] - d[:, LS]
    total = int(lens.sum())
    if total == 0:
        return True
    ends = np.cumsum(lens)
    pos = np.arange(total) - np.repeat(ends - lens, lens) + np.repeat(d[:, LS], lens)
    tids = groups.buf[pos].astype(np.int64)
    group = np.repeat(np.arange(len(d)), lens)
    keep = involved[tids]
    tids, group = tids[keep], group[keep]
    if tids.size == 0:
        return True
    first = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    roots = np.repeat(tids[first], np.diff(np.r_[first, tids.size]))
    union_pairs(parent, seen, roots, tids)
    return True


def _dominance_components(
    engine: Any, plan: Any, initial: Any, parent: np.ndarray, seen: np.ndarray
) -> bool:
    """Components of a DC made of equalities and one or two order predicates,
    over any initial pairs (a scoped run's too), without listing blocks: the
    count plan's equalities, then per group a sweep on the first order predicate
    with a heap on the second, or intervals of the inversions when the group's
    sides are one row set (:func:`facet.kernels.components.union_dominance`,
    ``O(n log n)``; blocks would list the small groups' pairs one by one).  True:
    done; False: not that shape."""
    ctx = getattr(engine, "ctx", None)
    sink = plan.sink if plan is not None else None
    if (
        ctx is None
        or sink is None
        or sink.kind == KEYED
        or not 1 <= len(sink.inequalities) <= 2
        or sink.nonequalities
        or any(p.cls != EQUALITY for st in plan.stages for p in st.preds)
    ):
        return False
    groups = initial
    for stage in plan.stages:
        groups = engine.refine(groups, stage)
    if getattr(groups, "desc", None) is None:
        return False
    pa, pb, po = ctx.predicate_arrays(list(sink.inequalities))
    union_dominance(parent, seen, groups.buf, groups.desc, ctx.codes, pa, pb, po)
    return True


def sampled_partners(
    session: Session, i: int, wanted: np.ndarray, k: int, need: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Up to ``k`` partners of each row of ``wanted`` (distinct tids) under two-tuple
    DC ``i``, read off its blocks (:mod:`facet.kernels.partners`); stops listing
    blocks once every wanted row has ``need`` of them (per row: ``k``, or fewer for a
    row known to have fewer distinct partners -- else one such row makes the walk
    list every block).  ``(out, role, got)`` per wanted row, in order."""
    engine = session.engine
    slot = np.full(session.rows, -1, np.int64)
    slot[wanted] = np.arange(len(wanted))
    need = np.full(len(wanted), k, np.int64) if need is None else np.minimum(need, k)
    need = need.astype(np.int64, copy=False)
    out, role, got = empty_partners(len(wanted), k)
    left = int(np.count_nonzero(got < need))
    plan = session.plan(i, "blocks")
    # the pairs holding a wanted row: a few rows' partners cost a few rows' pairs
    start = engine.touching_groups(session.normal[i], slot >= 0)
    start = session.initial(i) if start is None else start
    for part in engine.blocks(plan, start, pairs_as_is=True):
        if left == 0:
            break
        if hasattr(part, "desc"):  # the engine's own groups: read in place
            left = sample_group_partners(part.buf, part.desc, slot, need, out, role, got, left)
            continue
        if not isinstance(part[0], tuple):  # pairs found one by one: (t, t')
            t1, t2 = (np.asarray(x, np.int64) for x in part)
            left = sample_pair_partners(t1, t2, slot, need, out, role, got, left)
            continue
        (lo, lv), (ro, rv) = part  # an engine that lists blocks per side
        left = sample_partners(np.asarray(lo, np.int64), np.asarray(lv, np.int64),
                               np.asarray(ro, np.int64), np.asarray(rv, np.int64),
                               slot, need, out, role, got, left)  # fmt: skip
    return out, role, got


def _over_budget(budget: int, total: int | None = None) -> FacetInputError:
    have = f"{total:,} violations" if total is not None else f"more than {budget:,} violations"
    return FacetInputError(
        f"--output suspects: the DCs have {have} to cover, more than the "
        f"{budget:,} it lists at most (Config.suspect_violations); use --output cells "
        "(violations per cell, never listing pairs) or narrow the DCs"
    )


#: bytes the greedy cover holds per cell of a listed violation (its id, its strong
#: flag, its place in the cell's list, its dense id) and per violation (its offset):
#: a bound; measured, 14.6M violations of 4 cells each peaked at 890 MB (11 bytes
#: per cell above the process's 250 MB)
SUSPECT_CELL_BYTES = 16
SUSPECT_EDGE_BYTES = 8


def _check_suspects_memory(counts: list[int], widths: list[int]) -> None:
    """Refuse (exit 2) a cover whose violations would not fit in the memory
    available, before any is listed."""
    available = available_memory()
    if available is None:
        return
    need = sum(c * (w * SUSPECT_CELL_BYTES + SUSPECT_EDGE_BYTES)
               for c, w in zip(counts, widths, strict=True))  # fmt: skip
    if need > available:
        raise FacetInputError(
            f"--output suspects: covering the DCs' {sum(counts):,} violations takes about "
            f"{human_bytes(need)}, more than the {human_bytes(available)} available; use "
            "--output cells (violations per cell, never listing pairs) or narrow the DCs"
        )


class _Cells:
    """The listed violations' cells, appended in place: ids (``int32`` while every
    cell id fits) and strong flags (``int8``), grown by half when full (sized
    exactly when the violations are counted)."""

    def __init__(self, capacity: int, wide: bool) -> None:
        self.ids = np.empty(max(capacity, 16), np.int64 if wide else np.int32)
        self.strong = np.empty(len(self.ids), np.int8)
        self.size = 0

    def add(self, cells: np.ndarray, flags: np.ndarray) -> None:
        """``cells``: one row per violation; ``flags``: the strong flag per column."""
        m = cells.size
        if self.size + m > len(self.ids):
            grown = max(self.size + m, len(self.ids) * 3 // 2)
            self.ids = np.resize(self.ids, grown)
            self.strong = np.resize(self.strong, grown)
        end = self.size + m
        self.ids[self.size : end] = cells.reshape(-1)
        self.strong[self.size : end].reshape(-1, len(flags))[:] = flags
        self.size = end


def _within(rows: np.ndarray, n: int) -> bool:
    """Whether every row of ``rows`` (an engine's) is a dense position ``0..n-1``."""
    return not len(rows) or (int(rows.min()) >= 0 and int(rows.max()) < n)


def _dense(ids: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct ids ascending, each id's index among them)`` -- ``np.unique``'s
    answer; by a mark per possible id when there are not many more of those than
    ids (no sort, 4 bytes per id), else by ``np.unique``."""
    if space > 2 * len(ids) + (1 << 24):
        distinct, dense = np.unique(ids, return_inverse=True)
        return distinct, dense.astype(np.int32 if len(distinct) < 2**31 else np.int64)
    seen = np.zeros(space, np.bool_)
    seen[ids] = True
    distinct = np.flatnonzero(seen)
    del seen
    index = np.empty(space, np.int32)
    index[distinct] = np.arange(len(distinct), dtype=np.int32)
    return distinct, index[ids]


def suspects_table(session: Session, counts: list[int] | None = None) -> pa.Table:
    """``suspects`` over all of the session's DCs, by rank (``counts``: each DC's
    violations when known, so that too many, or too many for the memory, fail
    before any is listed)."""
    engine = session.engine
    normal = session.normal
    sides = [(side_columns(nd, 0), side_columns(nd, 1) if nd.arity == 2 else []) for nd in normal]
    # ties go to the column the DCs name first (in id order, each in its text's order)
    names = list(dict.fromkeys(c for nd in normal for c in text_order(nd)))
    col = {c: k for k, c in enumerate(names)}
    width = max(len(names), 1)
    budget = min(session.config.suspect_violations, (1 << 31) - 1)  # the kernel's bound
    widths = [len(t) + len(u) for t, u in sides]
    total = None if counts is None else sum(counts)
    if total is not None:
        if total > budget:
            raise _over_budget(budget, total)
        _check_suspects_memory(counts, widths)
    space = session.rows * width  # cell ids: tid * width + column
    wide = space >= 2**31
    known = sum(c * w for c, w in zip(counts, widths, strict=True)) if counts else 1 << 16
    cells = _Cells(known, wide)
    per_edge: list[np.ndarray] = []  # (violations, width) runs, in order
    listed = 0
    for i, nd in enumerate(normal):
        t_cols = np.array([col[c] for c in sides[i][0]], np.int64)
        u_cols = np.array([col[c] for c in sides[i][1]], np.int64)
        flags = np.array([c in strong_columns(nd, 0) for c in sides[i][0]]
                         + [c in strong_columns(nd, 1) for c in sides[i][1]], np.int8)  # fmt: skip
        if nd.arity == 1:
            parts = [(np.asarray(engine.single_rows(nd), np.int64), None)]
        else:
            plan = session.plan(i, "pairs")
            parts = ((np.asarray(a, np.int64), np.asarray(b, np.int64))
                     for a, b in engine.pairs(plan, session.initial(i)))  # fmt: skip
        for t1, t2 in parts:
            if not (_within(t1, session.rows) and (t2 is None or _within(t2, session.rows))):
                raise IndexError("suspects: a row outside 0..rows-1")  # (cell ids are made of them)
            listed += len(t1)
            if listed > budget:
                raise _over_budget(budget)
            if not len(t1) or not len(flags):
                continue
            block = t1[:, None] * width + t_cols[None, :]
            if t2 is not None:
                block = np.hstack([block, t2[:, None] * width + u_cols[None, :]])
            cells.add(block, flags)
            per_edge.append(np.array([len(t1), len(flags)], np.int64))
    if cells.size == 0:
        return SUSPECTS_SCHEMA.empty_table()
    runs = np.array(per_edge)
    edge_off = np.zeros(int(runs[:, 0].sum()) + 1, np.int64)
    np.cumsum(np.repeat(runs[:, 1], runs[:, 0]), out=edge_off[1:])
    ids, dense = _dense(cells.ids[: cells.size], space)
    strong = cells.strong[: cells.size]
    del cells
    picked, score = greedy_cover(edge_off, dense, strong, len(ids))
    chosen = ids[picked]
    column = pa.DictionaryArray.from_arrays(
        pa.array(chosen % width, pa.int32()), pa.array(names, pa.string())
    )
    return pa.table(
        {
            "tid": pa.array(chosen // width, pa.int64()),
            "column": column.cast(pa.string()),
            "score": pa.array(score, pa.int64()),
            "rank": pa.array(np.arange(1, len(chosen) + 1), pa.int64()),
        },
        schema=SUSPECTS_SCHEMA,
    )


def _table(schema: pa.Schema, *columns: Any) -> pa.Table:
    return pa.table(
        [pa.array(np.asarray(c, np.int64), f.type) for c, f in zip(columns, schema, strict=True)],
        schema=schema,
    )


def row_output(session: Session, output: str, counts: list[int] | None = None) -> pa.Table:
    """One of :data:`ROW_OUTPUTS` over all of the session's DCs (``counts``: each
    DC's violations, when known: suspects refuse more than their budget, or than
    the memory holds, before listing any), its rows named by the table's ids."""
    if output == "components":
        table = components_table(session)
    elif output == "suspects":
        table = suspects_table(session, counts)
    else:
        one = tuples_table if output == "tuples" else cells_table
        parts = [one(session, i) for i in range(len(session.dcs))]
        table = pa.concat_tables(parts) if parts else SCHEMAS[output].empty_table()
    return _named(session.engine, table)


def _named(engine: Any, table: pa.Table) -> pa.Table:
    """``table`` with its ``tid`` column (dense positions, which every function
    above indexes arrays with) as the ids the engine names rows by
    (:meth:`facet.engine.base.Engine.row_ids`: an order-keeping map, so the
    documented orders hold)."""
    positions = table.column("tid").to_numpy()
    ids = engine.row_ids(positions)
    if ids is positions:
        return table
    return table.set_column(0, "tid", pa.array(np.asarray(ids, np.int64), pa.int64()))
