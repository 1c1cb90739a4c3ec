"""Algorithm choice for inequalities (paper §6.2, Fig. 3).

* A single inequality: HSM below ``hsm_max_cardinality`` distinct values, BHSM
  above -- unless too few tuples per group reach the stage for the bins to pay
  off ("binning dropped"), or nothing follows it (the last refinement).
* Exactly one pair of inequalities whose columns all reach
  ``iejoin_min_cardinality`` distinct values: one IEJoin refinement for both.
* The cardinality a refinement perceives is the joint cardinality with the
  equalities before it (``|E, A|``), not the column's alone.
* ``--output blocks`` wants a compact answer more than fast enumeration: its
  inequalities use the dominance decomposition (``cdq``), whose blocks stay
  O(n log n) in size whatever the number of pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

from facet.language.normalize import PairPredicate
from facet.planner.config import Config


@dataclass(frozen=True)
class Choice:
    """Algorithm for one stage (one or two inequality predicates)."""

    preds: tuple[PairPredicate, ...]
    algorithm: str
    #: the (joint) cardinality the choice was based on
    cardinality: float
    note: str = ""


def choose_inequalities(
    ineqs: list[PairPredicate],
    joint_card: list[float],
    tuples_per_group: float,
    config: Config,
    output: str = "pairs",
    est_ineq_pairs: float | None = None,
    rows: int = 0,
    more_after: bool = False,
    limit: int | None = None,
) -> list[Choice]:
    """Stages for the inequalities of a DC, in order.

    ``joint_card[i]``: the estimated cardinality of ``ineqs[i]``'s columns joint
    with the preceding equalities; ``tuples_per_group``: how many tuples an
    average group holds when the inequalities start; ``est_ineq_pairs``: the
    estimated pairs that satisfy the equalities and inequalities (from the tid
    sample).  IEJoin writes every match out, so it is only chosen when that
    output stays below ``iejoin_max_pairs_per_row`` x rows; above it, the first
    inequality is split into dominance blocks (CDQ), whose size does not grow
    with the number of pairs.  BHSM pays off only for what a *following* stage
    reads (its right sides stay within a bin), so the last refinement before
    expansion uses HSM (``more_after``: non-equalities follow the inequalities).
    ``limit``: pairs under a ``--limit``, so the plan should hand out its first
    pairs early -- neither IEJoin nor dominance blocks (both work through the
    whole input before the first pair) when more pairs than that are expected,
    and more than IEJoin would list in about a sort's time (fewer are sparse: a
    streaming walk may cross most of the input before it finds them).
    """
    forced = config.inequality
    if output == "blocks" and forced is None:
        return [
            Choice((p,), "cdq", c, "blocks: compact dominance blocks")
            for p, c in zip(ineqs, joint_card, strict=True)
        ]
    big_output = (
        forced is None
        and len(ineqs) >= 2
        and est_ineq_pairs is not None
        and est_ineq_pairs > config.iejoin_max_pairs_per_row * max(rows, 1)
    )
    # streaming finds its first pairs quickly only where they are dense: with few pairs
    # expected (IEJoin lists them all in about a sort's time) it may walk most of the
    # input for the first ones, so it is chosen only where listing them all would not do
    stream_big = (
        forced is None
        and output == "pairs"
        and limit is not None
        and est_ineq_pairs is not None
        and est_ineq_pairs > limit
        and est_ineq_pairs > config.iejoin_max_pairs_per_row * max(rows, 1)
    )
    if stream_big:
        big_output = False  # no dominance blocks first: HSM / BHSM stream
    if (
        forced in (None, "iejoin")
        and len(ineqs) == 2
        and not big_output
        and not stream_big
        and (forced == "iejoin" or min(joint_card) >= config.iejoin_min_cardinality)
    ):
        note = (
            "forced"
            if forced
            else f"pair of inequalities, cardinality >= {config.iejoin_min_cardinality}"
        )
        return [Choice(tuple(ineqs), "iejoin", min(joint_card), note)]
    out: list[Choice] = []
    for k, (p, c) in enumerate(zip(ineqs, joint_card, strict=True)):
        if big_output and k == 0:
            out.append(
                Choice(
                    (p,),
                    "cdq",
                    c,
                    f"~{est_ineq_pairs:.3g} pairs expected: dominance blocks first",
                )
            )
        elif forced is not None and forced != "iejoin":
            out.append(Choice((p,), forced, c, "forced"))
        elif k == len(ineqs) - 1 and not more_after:
            out.append(Choice((p,), "hsm", c, "last refinement: nothing reads its right sides"))
        elif c < config.hsm_max_cardinality:
            out.append(Choice((p,), "hsm", c, f"cardinality < {config.hsm_max_cardinality}"))
        elif tuples_per_group < 2 * (config.bhsm_bins or c**0.5):
            bins = config.bhsm_bins or round(c**0.5)
            out.append(
                Choice(
                    (p,),
                    "hsm",
                    c,
                    f"binning dropped: ~{tuples_per_group:.0f} tuples per group for {bins} bins",
                )
            )
        else:
            out.append(Choice((p,), "bhsm", c, f"cardinality >= {config.hsm_max_cardinality}"))
    return out
