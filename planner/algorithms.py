"""Algorithm choice for inequalities (paper §6.2, Fig. 3).

* A single inequality: HSM below ``hsm_max_cardinality`` distinct values, BHSM
  above -- unless fewer tuples than bins reach the stage, where binning cannot
  pay off ("binning dropped").
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
) -> list[Choice]:
    """Stages for the inequalities of a DC, in order.

    ``joint_card[i]``: the estimated cardinality of ``ineqs[i]``'s columns joint
    with the preceding equalities; ``tuples_per_group``: how many tuples an
    average group holds when the inequalities start.
    """
    forced = config.inequality
    if output == "blocks" and forced is None:
        return [
            Choice((p,), "cdq", c, "blocks: compact dominance blocks")
            for p, c in zip(ineqs, joint_card, strict=True)
        ]
    if (
        forced in (None, "iejoin")
        and len(ineqs) == 2
        and (forced == "iejoin" or min(joint_card) >= config.iejoin_min_cardinality)
    ):
        note = (
            "forced"
            if forced
            else f"pair of inequalities, cardinality >= {config.iejoin_min_cardinality}"
        )
        return [Choice(tuple(ineqs), "iejoin", min(joint_card), note)]
    out: list[Choice] = []
    for p, c in zip(ineqs, joint_card, strict=True):
        if forced is not None and forced != "iejoin":
            out.append(Choice((p,), forced, c, "forced"))
        elif c < config.hsm_max_cardinality:
            out.append(Choice((p,), "hsm", c, f"cardinality < {config.hsm_max_cardinality}"))
        elif tuples_per_group < config.bhsm_bins:
            out.append(
                Choice(
                    (p,),
                    "hsm",
                    c,
                    f"binning dropped: ~{tuples_per_group:.0f} tuples per group < {config.bhsm_bins} bins",
                )
            )
        else:
            out.append(Choice((p,), "bhsm", c, f"cardinality >= {config.hsm_max_cardinality}"))
    return out
