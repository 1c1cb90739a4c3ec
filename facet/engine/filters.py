"""Row filters and initial pairs (docs/semantics.md §1, §8).

A DC's one-tuple predicates (``t.A op t.B``, ``t.A op constant``) filter the
rows of their side before any pair work; a single-tuple DC's violations are
the rows that pass.  The initial pairs of a whole-table run are the reflexive
pair ``(all, all)`` cut by each side's filters.
"""

from __future__ import annotations

import numpy as np

from facet.encoding import EncodedTable
from facet.engine.groups import Groups
from facet.kernels.common import OP_CODES, compare_arrays
from facet.language.normalize import NormalDC, RowFilter


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


def single_rows(enc: EncodedTable, dc: NormalDC) -> np.ndarray:
    """The violating rows of a single-tuple DC (int64 tids, ascending)."""
    mask = filter_mask(enc, list(dc.filters))
    if mask is None:
        return np.arange(enc.n, dtype=np.int64)
    return np.flatnonzero(mask)


def initial_groups(enc: EncodedTable, dc: NormalDC) -> Groups:
    """The reflexive pair ``(all, all)`` cut by each side's row filters."""
    m0 = filter_mask(enc, dc.side_filters(0))
    m1 = filter_mask(enc, dc.side_filters(1))
    allt = np.arange(enc.n, dtype=np.int32)
    left = allt if m0 is None else allt[m0]
    same = (m0 is None and m1 is None) or (
        m0 is not None and m1 is not None and np.array_equal(m0, m1)
    )
    if same:
        return Groups.pair(left)
    right = allt if m1 is None else allt[m1]
    return Groups.pair(left, right)
