"""Suspect cells: a greedy cover of the conflict hypergraph (docs/outputs.md
``suspects``), the holistic-repair heuristic -- a violation is removed by
changing any one of the cells its predicates read, so the cells that meet the
most violations not yet removed are the likeliest to be wrong.

Cells are integer ids; a violation (hyperedge) is the list of its cells.  The
greedy cover repeatedly takes the cell in the most uncovered violations
(ties: the lower ``priority``, then the lower cell id -- deterministic) and
marks its violations covered, until none is left.  A max-heap of packed keys
with lazy updates keeps each step ``O(log cells)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: bits of a packed heap key: degree << 32 | (1 - priority) << 31 | ~cell
_CELL_BITS = 31


@njit(cache=True, nogil=True, inline="always")
def _key(deg, prio, cell):
    return (deg << 32) | ((1 - prio) << _CELL_BITS) | ((1 << _CELL_BITS) - 1 - cell)


@njit(cache=True, nogil=True)
def _push(heap, size, key):
    i = size
    heap[i] = key
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] >= heap[i]:
            break
        heap[parent], heap[i] = heap[i], heap[parent]
        i = parent
    return size + 1


@njit(cache=True, nogil=True)
def _pop(heap, size):
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        big = left
        if left + 1 < size and heap[left + 1] > heap[left]:
            big = left + 1
        if heap[i] >= heap[big]:
            break
        heap[i], heap[big] = heap[big], heap[i]
        i = big
    return top, size


@njit(cache=True, nogil=True)
def greedy_cover(edge_off, edge_cells, ncells, priority):
    """Cells in the order the greedy cover takes them, with the violations each
    covered when taken.  ``edge_off``/``edge_cells``: the violations as lists of
    distinct cell ids below ``ncells`` (< 2^31); ``priority``: 0 or 1 per cell."""
    nedges = edge_off.shape[0] - 1
    deg = np.zeros(ncells, np.int64)
    for k in range(edge_cells.shape[0]):
        deg[edge_cells[k]] += 1
    cell_off = np.zeros(ncells + 1, np.int64)
    for c in range(ncells):
        cell_off[c + 1] = cell_off[c] + deg[c]
    fill = cell_off[:-1].copy()
    cell_edges = np.empty(edge_cells.shape[0], np.int64)
    for e in range(nedges):
        for k in range(edge_off[e], edge_off[e + 1]):
            c = edge_cells[k]
            cell_edges[fill[c]] = e
            fill[c] += 1
    heap = np.empty(ncells + edge_cells.shape[0] + 1, np.int64)
    size = 0
    for c in range(ncells):
        if deg[c] > 0:
            size = _push(heap, size, _key(deg[c], priority[c], c))
    covered = np.zeros(nedges, np.bool_)
    picked = np.empty(ncells, np.int64)
    scores = np.empty(ncells, np.int64)
    n = 0
    mask = (1 << _CELL_BITS) - 1
    while size > 0:
        key, size = _pop(heap, size)
        c = mask - (key & mask)
        d = key >> 32
        if d != deg[c]:  # stale: re-queue with what is left
            if deg[c] > 0:
                size = _push(heap, size, _key(deg[c], priority[c], c))
            continue
        picked[n] = c
        scores[n] = d
        n += 1
        for k in range(cell_off[c], cell_off[c + 1]):
            e = cell_edges[k]
            if covered[e]:
                continue
            covered[e] = True
            for j in range(edge_off[e], edge_off[e + 1]):
                deg[edge_cells[j]] -= 1
    return picked[:n], scores[:n]
