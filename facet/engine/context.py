"""What the local engine's modules run with: the encoded table, the config,
the kernels' tuning array, the worker threads and an optional trace."""

from __future__ import annotations

import numpy as np

from facet.encoding import EncodedTable
from facet.engine.trace import Trace
from facet.kernels.common import OP_CODES
from facet.language.normalize import PairPredicate
from facet.planner.config import Config


class Context:
    """One engine's view of a run (shared read-only by its worker threads)."""

    def __init__(self, enc: EncodedTable, config: Config) -> None:
        self.enc = enc
        self.codes = enc.codes
        self.n = enc.n
        self.config = config
        self.tune = config.kernel_tuning()
        self.threads = config.workers
        #: per-stage actuals, while ``explain --analyze`` asks for them
        self.trace: Trace | None = None
        #: the rows a scoped run's violations must hold one of (``--where``), or None
        self.scope: np.ndarray | None = None
        #: the code domain of every code row
        self.doms = np.zeros(len(enc.index), np.int64)
        for name, row in enc.index.items():
            self.doms[row] = enc.domain[name]

    def row(self, column: str) -> int:
        """The code row of a column."""
        return self.enc.index[column]

    def domain(self, p: PairPredicate) -> int:
        """The code domain of a predicate's two columns."""
        return max(self.enc.domain[p.a], self.enc.domain[p.b])

    def predicate_arrays(
        self, preds: list[PairPredicate]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Predicates as the kernels take them: code rows of ``t``'s and ``t'``'s
        operands and the operator codes."""
        idx = self.enc.index
        pa = np.array([idx[p.a] for p in preds], np.int64)
        pb = np.array([idx[p.b] for p in preds], np.int64)
        po = np.array([OP_CODES[p.op] for p in preds], np.int64)
        return pa, pb, po

    def with_threads(self, threads: int) -> Context:
        """The same view on ``threads`` threads (a worker of the ``parallel`` mode)."""
        other = Context.__new__(Context)
        other.__dict__.update(self.__dict__)
        other.config = self.config.but(threads=threads)
        other.threads = threads
        other.trace = None
        return other
