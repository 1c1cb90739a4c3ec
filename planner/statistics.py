"""What the planner needs to know about the data, as an interface engines
implement (paper §6.1).

The planner never reads data: :func:`facet.planner.plan.make_plan` asks a
:class:`Statistics` for cardinalities and, for plans that expand many pairs, a
pair-count estimate.  The local engine answers from its encoded table
(``facet/engine/statistics.py``: exact dictionary sizes, HyperLogLog sketches,
the tid sample counted by the counting kernels); a distributed engine merges
per-partition sketches.  Both must answer alike so that plans match.

:func:`hll_cardinality` turns HyperLogLog++ registers (built by
``facet.kernels.hashing.hll_registers``, merged by element-wise maximum) into
an estimate; it is here because the estimator, like the plan, is pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from facet.language.normalize import PairPredicate


class Statistics(Protocol):
    """Estimates for one DC's initial pairs."""

    def cardinality(self, columns: tuple[str, ...]) -> float:
        """Distinct non-NULL combinations of ``columns`` (one column: its values)."""
        ...

    def sample_pairs(self, preds: tuple[PairPredicate, ...]) -> float:
        """Pairs of the initial pairs that satisfy ``preds`` (equalities and
        inequalities), estimated on the tid sample and scaled to the table."""
        ...


@dataclass(frozen=True)
class Sides:
    """The shape of a DC's initial pairs: tuples per side after the row filters,
    and whether both sides are the same set (a reflexive pair)."""

    left: int
    right: int
    reflexive: bool = True


def hll_cardinality(registers: np.ndarray, p: int) -> float:
    """The HyperLogLog++ estimate of ``2**p`` registers (datasketch's estimator:
    bias-corrected raw estimate, linear counting for small sets)."""
    if not np.any(registers):
        return 0.0
    from datasketch import HyperLogLogPlusPlus  # imported when first needed (scipy)

    return float(HyperLogLogPlusPlus(p=p, reg=np.asarray(registers, np.int8)).count())
