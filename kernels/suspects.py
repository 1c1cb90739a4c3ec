"""Suspect cells: a greedy cover of the conflict hypergraph (docs/outputs.md
``suspects``), the holistic-repair heuristic -- a violation is removed by
changing any one of the cells its predicates read, so the cells that meet the
most violations not yet removed are the likeliest to be wrong.

Cells are integer ids; a violation (hyperedge) is the list of its cells, each
marked *strong* when its column takes part in a != / order / constant
comparison of that DC (an FD's right-hand side is strong, its left-hand side
is not).  The greedy cover repeatedly takes the cell in the most uncovered
violations (ties: the cell strong in more of them, then the lower cell id --
deterministic) and marks its violations covered, until none is left.  A
max-heap of packed keys with lazy updates keeps each step ``O(log cells)``.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.jit import njit

#: bits of the strong count in a packed heap key: degree << 31 | strong
_STRONG_BITS = 31


@njit(cache=True, nogil=True, inline="always")
def _above(hk, hc, i, j):
    """Heap entry ``i`` ranks above ``j``: a larger key, then a lower cell."""
    return hk[i] > hk[j] or (hk[i] == hk[j] and hc[i] < hc[j])


@njit(cache=True, nogil=True)
def _push(hk, hc, size, key, cell):
    i = size
    hk[i] = key
    hc[i] = cell
    while i > 0:
        parent = (i - 1) >> 1
        if not _above(hk, hc, i, parent):
            break
        hk[parent], hk[i] = hk[i], hk[parent]
        hc[parent], hc[i] = hc[i], hc[parent]
        i = parent
    return size + 1


@njit(cache=True, nogil=True)
def _pop(hk, hc, size):
    key, cell = hk[0], hc[0]
    size -= 1
    hk[0], hc[0] = hk[size], hc[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        big = left
        if left + 1 < size and _above(hk, hc, left + 1, left):
            big = left + 1
        if not _above(hk, hc, big, i):
            break
        hk[i], hk[big] = hk[big], hk[i]
        hc[i], hc[big] = hc[big], hc[i]
        i = big
    return key, cell, size


@njit(cache=True, nogil=True)
def greedy_cover(edge_off, edge_cells, edge_strong, ncells):
    """Cells in the order the greedy cover takes them, with the violations each
    covered when taken.  ``edge_off``/``edge_cells``: the violations as lists of
    distinct cell ids below ``ncells`` (any integer type); ``edge_strong``: per
    listed cell, 1 when it is strong in that violation, else 0.  Fewer than 2^31
    violations."""
    nedges = edge_off.shape[0] - 1
    deg = np.zeros(ncells, np.int64)
    strong = np.zeros(ncells, np.int64)
    for k in range(edge_cells.shape[0]):
        deg[edge_cells[k]] += 1
        strong[edge_cells[k]] += edge_strong[k]
    cell_off = np.zeros(ncells + 1, np.int64)
    for c in range(ncells):
        cell_off[c + 1] = cell_off[c] + deg[c]
    fill = cell_off[:-1].copy()
    cell_edges = np.empty(edge_cells.shape[0], np.int32)  # (fewer than 2^31 violations)
    for e in range(nedges):
        for k in range(edge_off[e], edge_off[e + 1]):
            c = edge_cells[k]
            cell_edges[fill[c]] = e
            fill[c] += 1
    # the heap holds one entry per cell at most: a stale one popped is pushed back
    # in its place, a current one is taken
    hk = np.empty(ncells + 1, np.int64)
    hc = np.empty(ncells + 1, np.int64)
    size = 0
    for c in range(ncells):
        if deg[c] > 0:
            size = _push(hk, hc, size, (deg[c] << _STRONG_BITS) | strong[c], c)
    covered = np.zeros(nedges, np.bool_)
    picked = np.empty(ncells, np.int64)
    scores = np.empty(ncells, np.int64)
    n = 0
    while size > 0:
        key, c, size = _pop(hk, hc, size)
        now = (deg[c] << _STRONG_BITS) | strong[c]
        if key != now:  # stale: re-queue with what is left
            if deg[c] > 0:
                size = _push(hk, hc, size, now, c)
            continue
        picked[n] = c
        scores[n] = deg[c]
        n += 1
        for k in range(cell_off[c], cell_off[c + 1]):
            e = cell_edges[k]
            if covered[e]:
                continue
            covered[e] = True
            for j in range(edge_off[e], edge_off[e + 1]):
                deg[edge_cells[j]] -= 1
                strong[edge_cells[j]] -= edge_strong[j]
    return picked[:n], scores[:n]
