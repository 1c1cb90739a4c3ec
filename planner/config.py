"""Every planning and execution threshold in one place (paper §6; DESIGN §4).

The defaults follow the paper; ``bench/`` experiments re-derive them on this
implementation.  Tests override them (``nested_pairs=0`` forces every group
through the real kernels).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    #: a group with at most this many candidate pairs (|L| * |R|) is finished
    #: pair by pair ("nested")
    nested_pairs: int = 4096
    #: tids of work (sum |L| + |R|) per refinement call on the pairs/blocks path
    batch_work: int = 1 << 22
    #: pairs per expansion chunk (an Arrow batch of the pairs output)
    pair_chunk: int = 1 << 18
    #: BHSM: number of equal-width bins (paper §6.2: stable between 100 and 1000)
    bhsm_bins: int = 500
    #: HSM below this many distinct values (joint with preceding equalities), BHSM above
    hsm_max_cardinality: int = 10_000
    #: IEJoin for a pair of inequalities whose cardinalities all reach this
    iejoin_min_cardinality: int = 1 << 13
    #: ... and whose output (pairs it must write out) stays below this many per row;
    #: more pairs than that: dominance blocks (CDQ) first, which stay O(n log n)
    iejoin_max_pairs_per_row: int = 64
    #: tid storage of refinements: "hybrid" (bitmaps for big groups of non-equality /
    #: HSM / BHSM refinements), "arrays" or "bitmaps" (paper §4, Fig. 7)
    storage: str = "hybrid"
    #: hybrid: a group with at least this many tids (|L| + |R|) goes to bitmaps
    #: (measured by bench/fig7_storage.py, see bench/results/fig7_storage.md)
    bitmap_min_tids: int = 1 << 62
    #: worker threads for independent groups (None: all cores)
    threads: int | None = None
    #: a batch with less work (sum |L| + |R|) than this runs on one thread
    parallel_work: int = 1 << 16
    #: force the algorithm of the inequality stages ("hsm", "bhsm", "cdq", "iejoin" --
    #: the last for a pair of inequalities); None lets the planner choose
    inequality: str | None = None
    #: force the predicate order: "planned" (statistics), "written", or "shuffle:<seed>"
    order: str = "planned"
    #: HyperLogLog precision (2**p registers) and tid sample rate
    hll_p: int = 14
    sample_rate: float = 0.01


DEFAULT = Config()
