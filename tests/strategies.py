"""Hypothesis strategies: small typed tables with NULLs/ties/duplicates and random DCs."""

from __future__ import annotations

import math

import pyarrow as pa
from hypothesis import strategies as st

from facet.language.ast import DC, OPS, Col, Const, Predicate

INT_VALUES = st.one_of(st.none(), st.integers(-3, 3))
FLOAT_VALUES = st.one_of(
    st.none(),
    st.sampled_from([-1.5, -0.0, 0.0, 0.5, 1.0, 2.25, math.nan, 1e300]),
)
STR_VALUES = st.one_of(st.none(), st.sampled_from(["", "a", "b", "B", "ab", "é", "z"]))

KINDS = ("int", "float", "str")
_VALUES = {"int": INT_VALUES, "float": FLOAT_VALUES, "str": STR_VALUES}
_ARROW = {"int": pa.int64(), "float": pa.float64(), "str": pa.string()}
_CONSTS = {
    "int": st.sampled_from(["-1", "0", "1", "2", "3", "0.5"]),
    "float": st.sampled_from(["0", "-0.0", "0.5", "1", "2.25", "-3"]),
    "str": st.sampled_from(["a", "b", "", "zz", "5"]),
}


def comparable(k1: str, k2: str) -> bool:
    return (k1 == "str") == (k2 == "str")


@st.composite
def tables(draw, min_rows: int = 1, max_rows: int = 60, max_cols: int = 5):
    """A typed Arrow table ``c0..ck`` (int / float / string columns, NULLs allowed),
    some rows duplicated, plus the kind of each column."""
    ncols = draw(st.integers(2, max_cols))
    kinds = [draw(st.sampled_from(KINDS)) for _ in range(ncols)]
    n = draw(st.integers(min_rows, max_rows))
    rows = []
    for _ in range(n):
        if rows and draw(st.integers(0, 9)) == 0:
            rows.append(draw(st.sampled_from(rows)))  # duplicate row
        else:
            rows.append([draw(_VALUES[k]) for k in kinds])
    cols = {f"c{j}": pa.array([r[j] for r in rows], _ARROW[k]) for j, k in enumerate(kinds)}
    return pa.table(cols), kinds


@st.composite
def predicates(draw, kinds: list[str], two_tuple_bias: int = 3):
    ncols = len(kinds)
    op = draw(st.sampled_from(OPS))
    shape = draw(st.integers(0, 9))
    a = draw(st.integers(0, ncols - 1))
    if shape < two_tuple_bias + 3:
        # t.A op t'.B  (same column half of the time)
        same = draw(st.booleans())
        choices = [j for j in range(ncols) if comparable(kinds[a], kinds[j])]
        b = a if same else draw(st.sampled_from(choices))
        left, right = Col(0, f"c{a}"), Col(1, f"c{b}")
        if draw(st.booleans()):
            left, right = Col(1, f"c{b}"), Col(0, f"c{a}")
        return Predicate(left, op, right)
    side = draw(st.integers(0, 1))
    if shape < 8:
        # constant
        c = Const(draw(_CONSTS[kinds[a]]), quoted=kinds[a] == "str")
        if draw(st.booleans()):
            return Predicate(c, op, Col(side, f"c{a}"))
        return Predicate(Col(side, f"c{a}"), op, c)
    # single-tuple column comparison
    choices = [j for j in range(ncols) if comparable(kinds[a], kinds[j])]
    b = draw(st.sampled_from(choices))
    return Predicate(Col(side, f"c{a}"), op, Col(side, f"c{b}"))


@st.composite
def dcs(draw, kinds: list[str], min_preds: int = 1, max_preds: int = 5):
    m = draw(st.integers(min_preds, max_preds))
    preds = tuple(draw(predicates(kinds)) for _ in range(m))
    dc = DC(preds)
    if dc.arity == 1 and all(
        c.tuple == 1 for p in preds for c in p.columns()
    ):  # the parser maps a lone t' to t; do the same
        preds = tuple(p.swapped_tuples() for p in preds)
        dc = DC(preds)
    return dc
