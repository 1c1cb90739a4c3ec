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
    #: BHSM: number of equal-width bins; 0 = the square root of each group's code span.
    #: The paper fixes 500; on this code sqrt bins were fastest for the following stage
    #: at almost every cardinality (bench/results/fig3_thresholds.md, part a)
    bhsm_bins: int = 0
    #: HSM below this many distinct values (joint with preceding equalities), BHSM above
    #: when another refinement follows.  Paper: 10,000; here BHSM with sqrt bins is faster
    #: from 16 values and BHSM-500 from 512 (fig3 part a)
    hsm_max_cardinality: int = 64
    #: IEJoin for a pair of inequalities whose cardinalities all reach this.  Paper: 2^13;
    #: here IEJoin beats the two-stage chains from 8 values and CDQ + HSM from 64 (fig3 b)
    iejoin_min_cardinality: int = 64
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
