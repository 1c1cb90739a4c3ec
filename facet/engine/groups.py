"""Pairs of tid sets as columnar batches (docs/architecture.md "Pairs of tid sets", paper §3.2).

:class:`Groups` wraps the ``(buf, desc)`` layout of :mod:`facet.kernels.common`
with the cheap whole-batch operations the engine needs (sizes, selection,
splitting by work) -- all vectorized, no Python loop per group.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from facet.kernels.common import LE, LHE, LHS, LS, RE, RHE, RHS, RS


@dataclass
class Groups:
    """A batch of groups: ``buf`` (int32 tids) and ``desc`` (int64, ``(g, 8)``)."""

    buf: np.ndarray
    desc: np.ndarray
    #: every tid is on the left side of at most one group and on the right side of
    #: at most one (a single pair, and what equality refinements make of it):
    #: workers on different groups may then write the same per-row arrays
    disjoint: bool = False

    @staticmethod
    def pair(left: np.ndarray, right: np.ndarray | None = None) -> Groups:
        """One group ``(left, right)``; ``right=None`` makes it reflexive ``(left, left)``."""
        left = np.ascontiguousarray(left, dtype=np.int32)
        m = left.shape[0]
        if right is None:
            return Groups(left, np.array([[0, m, 0, 0, 0, m, 0, 0]], np.int64), True)
        right = np.ascontiguousarray(right, dtype=np.int32)
        r = right.shape[0]
        buf = np.concatenate([left, right])
        return Groups(buf, np.array([[0, m, 0, 0, m, m + r, m, m]], np.int64), True)

    @staticmethod
    def pairs(sides: list[tuple[np.ndarray, np.ndarray]]) -> Groups:
        """One group per ``(left, right)``, all in one buffer (one copy)."""
        if not sides:
            return Groups.empty()
        arrays = [a for lr in sides for a in lr]
        sizes = np.array([a.shape[0] for a in arrays], np.int64)
        ends = np.cumsum(sizes)
        starts = ends - sizes
        desc = np.zeros((len(sides), 8), np.int64)
        desc[:, LS], desc[:, LE] = starts[0::2], ends[0::2]
        desc[:, RS], desc[:, RE] = starts[1::2], ends[1::2]
        desc[:, LHS] = desc[:, LHE] = starts[0::2]  # no holes
        desc[:, RHS] = desc[:, RHE] = starts[1::2]
        buf = np.concatenate([a.astype(np.int32, copy=False) for a in arrays])
        return Groups(buf, desc, len(sides) == 1)

    @staticmethod
    def empty() -> Groups:
        return Groups(np.empty(0, np.int32), np.empty((0, 8), np.int64))

    def __len__(self) -> int:
        return int(self.desc.shape[0])

    def left_sizes(self) -> np.ndarray:
        d = self.desc
        return (d[:, LE] - d[:, LS]) - (d[:, LHE] - d[:, LHS])

    def right_sizes(self) -> np.ndarray:
        d = self.desc
        return (d[:, RE] - d[:, RS]) - (d[:, RHE] - d[:, RHS])

    def candidate_pairs(self) -> np.ndarray:
        """``|L| * |R|`` per group (an upper bound on its pairs)."""
        return self.left_sizes() * self.right_sizes()

    def with_pairs(self) -> np.ndarray:
        """Per group, whether it holds a pair ``(t, t')`` with ``t != t'``: both
        sides non-empty, and not one and the same single tid."""
        left, right = self.left_sizes(), self.right_sizes()
        mask = (left > 0) & (right > 0)
        one = mask & (left == 1) & (right == 1)
        if one.any():
            d = self.desc[one]
            # a side of one tid is its range less its hole: the tid before the hole, or after
            lt = self.buf[np.where(d[:, LHS] > d[:, LS], d[:, LS], d[:, LHE])]
            rt = self.buf[np.where(d[:, RHS] > d[:, RS], d[:, RS], d[:, RHE])]
            mask[one] = lt != rt
        return mask

    def select(self, mask: np.ndarray) -> Groups:
        """The groups where ``mask`` is true (sharing the buffer)."""
        return Groups(self.buf, np.ascontiguousarray(self.desc[mask]), self.disjoint)

    def split(self, max_work: int) -> Iterator[Groups]:
        """Consecutive sub-batches of at most ``max_work`` tids (``sum |L| + |R|``)
        each; a single larger group forms a sub-batch of its own."""
        return self._split(self.left_sizes() + self.right_sizes(), max_work)

    def split_candidates(self, max_candidates: int) -> Iterator[Groups]:
        """Consecutive sub-batches of at most ``max_candidates`` candidate pairs
        (``sum |L| * |R|``) each; a single larger group forms one of its own."""
        return self._split(self.candidate_pairs(), max_candidates)

    def _split(self, work: np.ndarray, max_work: int) -> Iterator[Groups]:
        if len(self) == 0:
            return
        total = int(work.sum())
        if total <= max_work:
            yield self
            return
        csum = np.cumsum(work)
        start = 0
        n = len(self)
        while start < n:
            base = csum[start - 1] if start else 0
            end = int(np.searchsorted(csum, base + max_work, side="right"))
            end = max(end, start + 1)
            yield Groups(self.buf, np.ascontiguousarray(self.desc[start:end]), self.disjoint)
            start = end


def concat(batches: list[Groups]) -> Groups:
    """Batches side by side in one buffer."""
    if len(batches) == 1:
        return batches[0]
    sizes = np.array([len(b.buf) for b in batches], np.int64)
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    buf = np.concatenate([b.buf for b in batches])
    desc = np.concatenate([b.desc + off for b, off in zip(batches, offsets, strict=True)])
    return Groups(buf, np.ascontiguousarray(desc), all(b.disjoint for b in batches))


def pairs_as_groups(t1: np.ndarray, t2: np.ndarray) -> Groups:
    """Explicit pairs as groups ``({t}, {t', ...})``, one per distinct ``t``."""
    order = np.lexsort((t2, t1))
    t1 = t1[order]
    t2 = t2[order]
    starts = np.flatnonzero(np.r_[True, t1[1:] != t1[:-1]])
    ends = np.r_[starts[1:], len(t1)]
    k = len(starts)
    buf = np.concatenate([t1[starts], t2]).astype(np.int32)
    desc = np.empty((k, 8), np.int64)
    desc[:, 0] = np.arange(k)
    desc[:, 1] = desc[:, 0] + 1
    desc[:, 2] = desc[:, 0]
    desc[:, 3] = desc[:, 0]
    desc[:, 4] = k + starts
    desc[:, 5] = k + ends
    desc[:, 6] = desc[:, 4]
    desc[:, 7] = desc[:, 4]
    return Groups(buf, desc)
