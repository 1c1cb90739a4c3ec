"""Every tunable number of facet in one place (paper §6; docs/architecture.md "Planner").

Planning thresholds follow the paper where this code agrees with it and are
re-derived by ``bench/`` experiments where it does not (each field says which).
Kernels read the numbers they need from :meth:`Config.kernel_tuning` (one
int64 array passed as an argument), never from module constants.  Tests
override fields (``nested_pairs=0`` forces every group through the real
kernels; tiny thresholds reach every branch on small inputs).  Every field is
checked when a Config is built (``_RULES``): a value no kernel can run with raises
:class:`FacetInputError` naming the field, the value and the valid range.
"""

from __future__ import annotations

import math
import operator
import os
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from facet.kernels.tuning import TUNING_FIELDS
from facet.language.errors import FacetInputError


@dataclass(frozen=True)
class Config:
    # ------------------------------------------------------------------ planning
    #: predicate order: "planned" (statistics), "written", or "shuffle:<seed>"
    #: (any order, any algorithm: for the tests that no plan changes the answer)
    order: str = "planned"
    #: force the algorithm of the inequality stages ("hsm", "bhsm", "cdq", "iejoin" --
    #: the last for a pair of inequalities); None lets the planner choose
    inequality: str | None = None
    #: HSM below this many distinct values (joint with preceding equalities), BHSM above
    #: when another refinement follows.  Paper: 10,000; here BHSM with sqrt bins is faster
    #: from 16 values and BHSM-500 from 512 (bench/results/fig3_thresholds.md, part a)
    hsm_max_cardinality: int = 64
    #: BHSM: number of equal-width bins; 0 = the square root of each group's code span.
    #: The paper fixes 500; on this code sqrt bins were fastest for the following stage
    #: at almost every cardinality (fig3 part a)
    bhsm_bins: int = 0
    #: IEJoin for a pair of inequalities whose cardinalities all reach this.  Paper: 2^13;
    #: here IEJoin beats the two-stage chains from 8 values and CDQ + HSM from 64 (fig3 b)
    iejoin_min_cardinality: int = 64
    #: ... and whose output (pairs it must write out) stays below this many per row;
    #: more pairs than that: dominance blocks (CDQ) first, which stay O(n log n)
    iejoin_max_pairs_per_row: int = 64
    #: tid storage of refinements: "hybrid" (bitmaps for big groups of non-equality /
    #: HSM refinements), "arrays" or "bitmaps" (paper §4, Fig. 7)
    storage: str = "hybrid"
    #: hybrid: a group with at least this many tids (|L| + |R|) goes to bitmaps.
    #: bench/fig7_storage.py found bitmaps slower in every case, so: never
    bitmap_min_tids: int = 1 << 62

    # ------------------------------------------------------------------ statistics
    #: HyperLogLog precision (2**p registers, ~1.04 / sqrt(2**p) error)
    hll_p: int = 14
    #: the tid sample: tids whose hash falls below this fraction of the hash range
    sample_rate: float = 0.01
    #: multi-column cardinalities from a sketch of every row up to this many rows,
    #: from the tid sample (GEE) above
    sketch_max_rows: int = 50_000_000

    # ------------------------------------------------------------------ execution
    #: worker threads for independent groups and encoding (None: all cores)
    threads: int | None = None
    #: a batch with less work (sum |L| + |R|) than this runs on one thread
    parallel_work: int = 1 << 16
    #: a group with at most this many candidate pairs (|L| * |R|) is finished
    #: pair by pair ("nested"; docs/semantics.md §6's tiny-group exception)
    nested_pairs: int = 4096
    #: tids of work (sum |L| + |R|) per refinement call on the pairs/blocks path
    batch_work: int = 1 << 22
    #: pairs per expansion chunk (an Arrow batch of the pairs output)
    pair_chunk: int = 1 << 18
    #: candidate pairs (|L| * |R|) per expansion call of small groups: a call that
    #: finds few pairs among many candidates still returns (a deadline or a signal
    #: is seen between calls: about 0.1 s each)
    expand_candidates: int = 1 << 24
    #: rows per output batch of a single-tuple DC
    row_chunk: int = 1 << 20

    # ------------------------------------------------------------------ outputs
    #: ``suspects`` lists the violations to cover them greedily: at most this many
    #: (ordered pairs plus single-tuple violations) in all, else the run fails
    #: with exit 2 before listing any (``cells`` needs no such bound)
    suspect_violations: int = 20_000_000

    # ------------------------------------------------------------------ Spark engine
    #: tasks a DC's pairs are spread over (0: twice the executor cores Spark reports,
    #: else the cores of a ``local[N]`` master, else 8)
    spark_tasks: int = 0
    #: a key with more rows than this (or than rows / tasks, whichever is larger) is
    #: split into sub-blocks processed as all ordered pairs of sub-blocks (skew)
    spark_split_rows: int = 200_000
    #: the most rows of one key (or one range) a task gets on a side, whatever the
    #: rows per task: bounds a Python worker's memory (about 3 GiB at 10M rows)
    spark_task_rows: int = 10_000_000
    #: rows per Arrow batch handed to and from the Python workers
    spark_batch_rows: int = 100_000
    #: range partitioning: pairs of ranges that satisfy the order predicate for every
    #: row are counted from per-range value counts of the other predicate's columns
    #: when there are at most this many (distinct values x ranges), else by tasks
    spark_summary_values: int = 2_000_000
    #: a key- or FD-shaped DC whose columns Spark compares as facet does is counted by
    #: Spark's own aggregates (rows per key and per key and value), no Python task
    #: (False: by the tasks; the answer is the same)
    spark_key_aggregates: bool = True
    #: order keys sampled to cut a DC without an equality into ranges on Spark
    range_sample: int = 65_536

    # ------------------------------------------------------------------ encoding
    #: several components encode on parallel threads from this many rows
    parallel_encode_rows: int = 100_000
    #: a text column encodes on all threads from this many rows
    parallel_text_rows: int = 200_000
    #: integer ranks by a histogram while the value span is at most this x rows (+ 64)
    rank_histogram_span: int = 4
    #: ... else by sorting only the distinct values while rows >= this x distinct values
    rank_few_distinct: int = 8
    #: ... else, from this many rows, by radix digits (kernels/ranks.py; below it a sort)
    radix_rank_rows: int = 20_000
    #: a float column of mostly distinct values (a sample says), from radix_rank_rows
    #: rows, is ranked by one sort of its values (False: hashed first, then its distinct
    #: values sorted, as any other type; the answer is the same)
    rank_sort_floats: bool = True

    # ------------------------------------------------------------------ kernels
    #: counting sort (else a comparison sort) while the code domain is at most
    #: rows / this + 64 ...
    counting_sort_dense: int = 4
    #: ... or at most this x rows and at most ``counting_sort_max_codes`` codes
    #: (measured: 20k keys over 1e5 codes 6x faster; 1M keys over 1M codes 1.5x slower)
    counting_sort_sparse: int = 8
    counting_sort_max_codes: int = 1 << 18
    #: one inequality counted from a histogram (else binary search) while the
    #: domain is at most this x tids (+ 64)
    count_histogram_span: int = 4
    #: a keyed count uses a code-indexed array up to this domain (else a hash table,
    #: unless the group is about as large as the domain)
    keyed_direct_codes: int = 1 << 16
    #: a count plan's leading same-column equalities over the initial pairs (a few
    #: reflexive groups) run as one: composite codes, one counting sort
    #: (:func:`facet.engine.refinement.refine_equalities`; False: one refinement a
    #: stage; the answer is the same)
    group_equalities: bool = True
    #: a keyed count plan over the initial pairs runs its equalities and sink as one
    #: pass over composite codes (:mod:`facet.kernels.composite`) instead of refining
    #: groups (False: always refine; the answer is the same)
    fuse_keyed: bool = True
    #: ... up to this many tids on both sides together (above, on several threads,
    #: only with a cross-column equality: refining wins otherwise)
    fuse_keyed_tids: int = 1 << 20
    #: a fused count cuts its rows into one range of codes a thread from this many
    #: tids (below, the pieces' fixed costs outweigh the second thread)
    fuse_split_tids: int = 1 << 18
    #: a key- or FD-shaped DC of a whole-table count is counted directly from the rows
    #: whose value of its most distinct key column two rows hold
    #: (:func:`facet.engine.counting.count_key_candidates`) when at most this fraction
    #: of the rows (+ 1024) are such rows (False: always the plan; the answer is the same)
    key_prefilter: bool = True
    key_prefilter_share: float = 0.125
    #: a scoped run cuts each initial pair's large side to the rows that can pair
    #: with its small side (:func:`facet.engine.filters.semi_join`; False: not;
    #: the answer is the same)
    scope_semi_join: bool = True
    #: Detector.append extends the table's encoding by the batch
    #: (facet/encoding_append.py) instead of encoding the whole table again
    #: (False: always encode again; the answer is the same)
    append_extends: bool = True
    #: ... and counts a key- or FD-shaped DC's appends from per-key tallies
    #: (facet/key_tallies.py) instead of a scoped run (False: always the scoped run)
    append_tallies: bool = True
    #: ... and a two-inequality DC's appends from a dominance index
    #: (facet/dominance_index.py) instead of a scoped run (False: the scoped run)
    append_indexes: bool = True
    #: a small group goes pair by pair when |L||R| <= this x (|L| + |R|) (the cost of
    #: a closed form per tid, in pair checks)
    nested_cost: int = 16
    #: ... under one or two order predicates only (the counting sinks' pair-by-pair
    #: loop over gathered codes, which vectorizes): when |L||R| <= this x k (|L| + |R|)
    #: for k predicates, and |L||R| <= nested_order_scale x nested_pairs
    #: (bench/nested_crossover.py measures both against the closed forms)
    nested_order_cost: int = 64
    nested_order_scale: int = 16
    #: ... and a group of at most this many candidate pairs reads its codes pair by
    #: pair instead of gathering them first (a vectorized loop's setup outweighs a
    #: few pairs; on φ9's groups at 100k, 16 to 32 did best, 128 worse than none)
    nested_tiny_pairs: int = 32
    #: IEJoin sorts sides of up to this many tids in place by insertion
    insertion_sort: int = 24
    #: text dictionary: hash partitions, and the distinct values of the one-table path
    dictionary_partitions: int = 256
    dictionary_few: int = 1 << 15

    def __post_init__(self) -> None:
        for f in fields(self):
            object.__setattr__(self, f.name, _RULES[f.name].check(f.name, getattr(self, f.name)))

    @property
    def workers(self) -> int:
        """The number of worker threads this config runs on."""
        return max(1, self.threads or os.cpu_count() or 1)

    def kernel_tuning(self) -> np.ndarray:
        """The kernel fields as the int64 array every kernel takes (``TUNING_FIELDS`` order)."""
        return np.array([getattr(self, f) for f in TUNING_FIELDS], np.int64)

    def but(self, **changes: Any) -> Config:
        """A copy with some fields changed."""
        unknown = [k for k in changes if k not in _RULES]
        if unknown:
            raise FacetInputError(
                f"Config has no field '{unknown[0]}'; its fields are: {', '.join(_RULES)}"
            )
        return replace(self, **changes)


# ---------------------------------------------------------------------- validation
# Every field is checked when a Config is built (docs/architecture.md "Planner"): a
# value no kernel or engine module can run with raises FacetInputError naming the
# field, the value and the valid range.  Upper bounds keep a kernel's arithmetic on
# them within int64 and its allocations within what the table itself takes.

#: thresholds compared with sizes, or with sums of sizes, held in int64
_BIG = 1 << 62
#: a kernel multiplies it by a group's size (int64 arithmetic)
_FACTOR = 1 << 30


@dataclass(frozen=True)
class _Rule:
    """The values a field takes: ``kind`` one of ``int``, ``pow2`` (a power of two),
    ``float``, ``bool``, ``choice`` (one of ``choices``) or ``order``; ``none``:
    None is valid too; ``open_lo``: a float above ``lo``, not equal to it."""

    kind: str
    lo: float = 0
    hi: float = _BIG
    choices: tuple[str, ...] = ()
    none: bool = False
    open_lo: bool = False

    def valid(self) -> str:
        """The valid values, for the message."""
        none = "None or " if self.none else ""
        if self.kind == "bool":
            return "True or False"
        if self.kind == "choice":
            return f"{none}one of {', '.join(repr(c) for c in self.choices)}"
        if self.kind == "order":
            return "'planned', 'written' or 'shuffle:<seed>'"
        if self.kind == "float":
            lo = f"> {self.lo:g}" if self.open_lo else f">= {self.lo:g}"
            return f"{none}a number {lo} and <= {self.hi:g}"
        what = "a power of two" if self.kind == "pow2" else "a whole number"
        return f"{none}{what} from {_shown(self.lo)} to {_shown(self.hi)}"

    def check(self, name: str, value: Any) -> Any:
        """``value`` as the field holds it (a Python int, float or bool), or the error."""
        if value is None and self.none:
            return None
        ok, got = self._convert(value)
        if not ok:
            raise FacetInputError(
                f"Config.{name}={_repr(value)}: expected {self.valid()}"
                + (f" (got {type(value).__name__})" if got is None else "")
            )
        return got

    def _convert(self, value: Any) -> tuple[bool, Any]:
        """(valid?, the value converted; None when its type is wrong)."""
        is_bool = isinstance(value, bool | np.bool_)
        if self.kind == "bool":
            return is_bool, bool(value) if is_bool else None
        if self.kind in ("choice", "order"):
            if not isinstance(value, str):
                return False, None
            if self.kind == "order":
                seed = value.partition("shuffle:")[2] if value.startswith("shuffle:") else ""
                return value in ("planned", "written") or bool(seed), value
            return value in self.choices, value
        if is_bool:
            return False, None
        if self.kind == "float":
            if not isinstance(value, int | float | np.integer | np.floating):
                return False, None
            v = float(value)
            low = v > self.lo if self.open_lo else v >= self.lo
            return math.isfinite(v) and low and v <= self.hi, v
        try:
            v = operator.index(value)
        except TypeError:
            return False, None
        in_range = self.lo <= v <= self.hi
        return in_range and (self.kind != "pow2" or v & (v - 1) == 0), v


def _shown(v: float) -> str:
    """A bound as the message shows it: 2^k for big powers of two."""
    v = int(v)
    if v >= 1 << 16 and v & (v - 1) == 0:
        return f"2^{v.bit_length() - 1}"
    return f"{v:,}"


def _repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


#: every field's valid values (its uses in kernels/ and facet/engine/ set them)
_RULES: dict[str, _Rule] = {
    "order": _Rule("order"),
    "inequality": _Rule("choice", choices=("hsm", "bhsm", "cdq", "iejoin"), none=True),
    "hsm_max_cardinality": _Rule("int"),
    # the BHSM kernel's bins over int32 codes (0: sqrt per group)
    "bhsm_bins": _Rule("int", hi=(1 << 31) - 1),
    "iejoin_min_cardinality": _Rule("int"),
    "iejoin_max_pairs_per_row": _Rule("int"),
    "storage": _Rule("choice", choices=("hybrid", "arrays", "bitmaps")),
    "bitmap_min_tids": _Rule("int"),
    # HyperLogLog++'s bias tables (planner/hll_bias.py) cover these precisions
    "hll_p": _Rule("int", lo=4, hi=16),
    "sample_rate": _Rule("float", lo=0.0, hi=1.0, open_lo=True),
    "sketch_max_rows": _Rule("int"),
    "threads": _Rule("int", lo=1, hi=1024, none=True),
    "parallel_work": _Rule("int"),
    # the count kernels multiply it by nested_order_scale
    "nested_pairs": _Rule("int", hi=1 << 32),
    # at least one tid per call, or no call would make progress
    "batch_work": _Rule("int", lo=1),
    # two int32 arrays of this many pairs per expansion call
    "pair_chunk": _Rule("int", lo=1, hi=1 << 24),
    "expand_candidates": _Rule("int", lo=1),
    "row_chunk": _Rule("int", lo=1),
    "suspect_violations": _Rule("int"),
    "spark_tasks": _Rule("int", hi=1 << 20),
    "spark_split_rows": _Rule("int", lo=1),
    # rows are divided by it
    "spark_task_rows": _Rule("int", lo=1),
    "spark_batch_rows": _Rule("int", lo=1, hi=1 << 30),
    "spark_summary_values": _Rule("int"),
    "spark_key_aggregates": _Rule("bool"),
    # keys collected on the driver
    "range_sample": _Rule("int", lo=1, hi=1 << 24),
    "parallel_encode_rows": _Rule("int"),
    "parallel_text_rows": _Rule("int"),
    # a presence table of this x rows entries: bounded by the column's own size
    "rank_histogram_span": _Rule("int", hi=64),
    "rank_few_distinct": _Rule("int"),
    "radix_rank_rows": _Rule("int"),
    "rank_sort_floats": _Rule("bool"),
    # rows are divided by it
    "counting_sort_dense": _Rule("int", lo=1),
    "counting_sort_sparse": _Rule("int", hi=_FACTOR),
    # a counting sort's array of this many codes
    "counting_sort_max_codes": _Rule("int", hi=1 << 24),
    "count_histogram_span": _Rule("int", hi=_FACTOR),
    # two int64 arrays of this many codes per keyed count
    "keyed_direct_codes": _Rule("int", hi=1 << 24),
    "group_equalities": _Rule("bool"),
    "fuse_keyed": _Rule("bool"),
    "fuse_keyed_tids": _Rule("int"),
    "fuse_split_tids": _Rule("int"),
    "key_prefilter": _Rule("bool"),
    "key_prefilter_share": _Rule("float", lo=0.0, hi=1.0),
    "scope_semi_join": _Rule("bool"),
    "append_extends": _Rule("bool"),
    "append_tallies": _Rule("bool"),
    "append_indexes": _Rule("bool"),
    "nested_cost": _Rule("int", hi=_FACTOR),
    "nested_order_cost": _Rule("int", hi=_FACTOR),
    "nested_order_scale": _Rule("int", hi=_FACTOR),
    "nested_tiny_pairs": _Rule("int"),
    "insertion_sort": _Rule("int", hi=_FACTOR),
    # partitions by a hash's top bits (kernels/dictionary.py)
    "dictionary_partitions": _Rule("pow2", lo=2, hi=1 << 16),
    # a hash table of twice this many slots per text column
    "dictionary_few": _Rule("int", hi=1 << 22),
}


DEFAULT = Config()


def config_or_default(config: Any) -> Config:
    """``config`` (None: :data:`DEFAULT`), refused unless it is a :class:`Config`."""
    if config is None:
        return DEFAULT
    if not isinstance(config, Config):
        raise FacetInputError(
            f"config={_repr(config)}: expected a facet.Config (e.g. facet.Config(threads=2)), "
            f"got {type(config).__name__}"
        )
    return config
