"""Connected components of the conflict graph by union-find over blocks
(BigDansing §5's independent violation components; docs/outputs.md
``components``).

A block ``(L, R)`` stands for every pair ``(a, b)``, ``a`` in ``L``, ``b`` in
``R``, ``a != b``; when ``L ∪ R`` holds two rows or more those pairs connect all
of it, so a block is joined in ``O(|L| + |R|)`` -- never pair by pair.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.expand import _first, _next
from facet.kernels.jit import njit


@njit(cache=True, nogil=True)
def _find(parent, x):
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:  # path compression
        nxt = parent[x]
        parent[x] = root
        x = nxt
    return root


@njit(cache=True, nogil=True)
def _union(parent, a, b):
    ra = _find(parent, a)
    rb = _find(parent, b)
    if ra != rb:
        if ra < rb:  # the smaller tid is the root: roots are components' least rows
            parent[rb] = ra
        else:
            parent[ra] = rb


@njit(cache=True, nogil=True)
def union_blocks(parent, seen, left_off, left, right_off, right):
    """Join the rows of every block ``(left[left_off[k]:left_off[k+1]],
    right[...])`` that holds a pair; mark every row of such a block in ``seen``."""
    for k in range(left_off.shape[0] - 1):
        ls, le = left_off[k], left_off[k + 1]
        rs, re = right_off[k], right_off[k + 1]
        if le == ls or re == rs:
            continue
        first = left[ls]
        two = False  # does L ∪ R hold a second row?
        for i in range(ls, le):
            if left[i] != first:
                two = True
                break
        if not two:
            for i in range(rs, re):
                if right[i] != first:
                    two = True
                    break
        if not two:
            continue
        for i in range(ls, le):
            seen[left[i]] = True
            _union(parent, first, left[i])
        for i in range(rs, re):
            seen[right[i]] = True
            _union(parent, first, right[i])


@njit(cache=True, nogil=True)
def union_groups(parent, seen, buf, desc):
    """:func:`union_blocks` over groups as the engine holds them: side ``s`` (0
    left, 4 right) of group ``g`` is ``buf[desc[g, s]:desc[g, s+1]]`` without
    the hole ``desc[g, s+2]:desc[g, s+3]`` -- no lists are made."""
    for g in range(desc.shape[0]):
        ls, le, lhs, lhe = desc[g, 0], desc[g, 1], desc[g, 2], desc[g, 3]
        rs, re, rhs, rhe = desc[g, 4], desc[g, 5], desc[g, 6], desc[g, 7]
        a = _first(ls, lhs, lhe)
        b = _first(rs, rhs, rhe)
        if a >= le or b >= re:
            continue
        first = buf[a]
        two = False  # does L ∪ R hold a second row?
        i = a
        while i < le and not two:
            two = buf[i] != first
            i = _next(i, lhs, lhe)
        i = b
        while i < re and not two:
            two = buf[i] != first
            i = _next(i, rhs, rhe)
        if not two:
            continue
        i = a
        while i < le:
            seen[buf[i]] = True
            _union(parent, first, buf[i])
            i = _next(i, lhs, lhe)
        i = b
        while i < re:
            seen[buf[i]] = True
            _union(parent, first, buf[i])
            i = _next(i, rhs, rhe)


@njit(cache=True, nogil=True)
def union_pairs(parent, seen, t1, t2):
    """Join the two rows of every pair (``t2 < 0``: a single row, marked only)."""
    for k in range(t1.shape[0]):
        seen[t1[k]] = True
        if t2[k] >= 0:
            seen[t2[k]] = True
            _union(parent, t1[k], t2[k])


@njit(cache=True, nogil=True)
def component_labels(parent, seen):
    """For the marked rows in tid order: ``(tids, component, size)`` with
    components numbered 0, 1, ... in the order of their least row."""
    n = parent.shape[0]
    label = np.full(n, -1, np.int64)
    size = np.zeros(n, np.int64)
    m = 0
    for t in range(n):
        if seen[t]:
            m += 1
            size[_find(parent, t)] += 1
    tids = np.empty(m, np.int64)
    comp = np.empty(m, np.int64)
    sizes = np.empty(m, np.int64)
    next_label = 0
    j = 0
    for t in range(n):
        if not seen[t]:
            continue
        r = _find(parent, t)
        if label[r] < 0:
            label[r] = next_label
            next_label += 1
        tids[j] = t
        comp[j] = label[r]
        sizes[j] = size[r]
        j += 1
    return tids, comp, sizes
