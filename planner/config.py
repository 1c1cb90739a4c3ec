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
    #: worker threads for independent groups (None: all cores)
    threads: int | None = None
    #: a batch with less work (sum |L| + |R|) than this runs on one thread
    parallel_work: int = 1 << 16
    #: force the algorithm of every single-inequality stage ("hsm", "bhsm", "cdq");
    #: None lets the planner choose (tests use this to cover every kernel)
    inequality: str | None = None


DEFAULT = Config()
