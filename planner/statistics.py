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
an estimate; it is here because the estimator, like the plan, is pure.  It is
facet's own (numpy and the bias tables of :mod:`facet.planner.hll_bias`), equal
to datasketch's ``HyperLogLogPlusPlus.count()``, which stays a test twin only:
importing datasketch (and with it scipy) cost more than the planning it served.
"""

from __future__ import annotations

import functools
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


#: HyperLogLog precisions the estimator knows (those with a bias table)
HLL_PRECISIONS = range(4, 17)


def _alpha(m: int) -> float:
    """HyperLogLog's bias constant for ``m`` registers (Flajolet et al. 2007)."""
    return {16: 0.673, 32: 0.697, 64: 0.709}.get(m, 0.7213 / (1.0 + 1.079 / m))


@functools.cache
def _bias_table(p: int) -> tuple[np.ndarray, np.ndarray]:
    """HyperLogLog++'s raw estimates and their bias for precision ``p``."""
    from facet.planner.hll_bias import BIASES, RAW_ESTIMATES

    raw = np.array([float(x) for x in RAW_ESTIMATES[p].split()])
    bias = np.array([float(x) for x in BIASES[p].split()])
    return raw, bias


def load_bias_table(p: int) -> None:
    """Parse precision ``p``'s bias table now (a process's first estimate pays
    ~2 ms for the module and its text otherwise)."""
    _bias_table(p)


def hll_cardinality(registers: np.ndarray, p: int) -> float:
    """The HyperLogLog++ estimate of ``2**p`` registers (Heule et al. 2013, as
    datasketch's ``HyperLogLogPlusPlus.count()`` computes it, step for step, so the
    two agree exactly): linear counting ``m ln(m / zeros)`` while it stays below the
    precision's threshold, else the raw estimate ``alpha m^2 / sum 2^-reg``, minus the
    mean empirical bias of the 6 nearest tabulated raw estimates while it is at most
    ``5 m`` (:mod:`facet.planner.hll_bias`)."""
    reg = np.asarray(registers, np.int8)
    m = reg.size
    if p not in HLL_PRECISIONS or m != 1 << p:
        raise ValueError(f"HyperLogLog++ needs 2**p registers with p in 4..16, got {m} for p={p}")
    zeros = m - np.count_nonzero(reg)
    if zeros == m:
        return 0.0
    from facet.planner.hll_bias import THRESHOLDS

    if zeros > 0:
        linear = m * np.log(m / float(zeros))
        if linear <= THRESHOLDS[p]:
            return float(linear)
    e = _alpha(m) * float(m**2) / np.sum(2.0 ** (-reg))
    if e <= 5 * m:
        raw, bias = _bias_table(p)
        nearest = np.argsort((e - raw) ** 2)[:6]
        return float(e - np.mean(bias[nearest]))
    return float(e)
