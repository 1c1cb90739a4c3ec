"""Polars as a benchmark peer: a DC's violations counted with a self-join (bench/suite.py).

    python bench/peer_worker.py --system polars --table TYPED.parquet --dc DC [--threads N]

What a competent Polars user writes, in the lazy API on the streaming engine (so the join's
candidate pairs are filtered and counted as they stream, not materialized):

* each side keeps its rows whose one-tuple predicates hold (constants, ``t.A op t.B``);
* equalities between ``t`` and ``t'`` columns are the keys of an inner ``join`` (NULL keys
  never match); the other predicates and ``rid != rid'`` filter the joined rows;
* without such an equality, ``join_where`` on the order predicates (Polars' IEJoin for one
  or two inequalities), then the filters; a DC with only ``!=`` across the tuples runs
  ``join_where`` on its ``!=`` predicates;
* a single-tuple DC is a ``filter``; the count is ``pl.len()``.

Comparisons with NULL are NULL, which ``filter`` drops: SQL's semantics, as facet's.
``load`` (untimed) turns the Arrow table into a ``DataFrame``; ``count`` is timed.
"""

from __future__ import annotations

import os
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peer_dc  # noqa: E402

SUFFIX = "__r"


class Unsupported(Exception):
    """A DC this worker cannot express in Polars."""


def version() -> str:
    import polars as pl

    return pl.__version__


def load(table: pa.Table) -> tuple[Any, pa.Schema]:
    import polars as pl

    return pl.from_arrow(table), table.schema


def _lit(text: str, typ: pa.DataType) -> Any:
    import polars as pl

    if pa.types.is_decimal(typ):
        return pl.lit(Decimal(text.strip()))
    return pl.lit(peer_dc.constant(text, typ))


def _expr(p: peer_dc.Pred, types: dict[str, pa.DataType], single: bool) -> Any:
    import polars as pl

    def operand(o: peer_dc.Operand, other: peer_dc.Operand) -> Any:
        if o.side is None:
            return _lit(o.text, types[other.column])
        name = o.column if (single or o.side == 0) else o.column + SUFFIX
        return pl.col(name)

    a, b = operand(p.left, p.right), operand(p.right, p.left)
    if p.left.column and p.right.column and types[p.left.column] != types[p.right.column]:
        a, b = a.cast(pl.Float64), b.cast(pl.Float64)  # an int column meets a float column
    return {
        "=": a == b,
        "!=": a != b,
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
    }[p.op]


def _side(p: peer_dc.Pred) -> set[int]:
    return {o.side for o in (p.left, p.right) if o.side is not None}


def count(handle: tuple[Any, pa.Schema], dc_text: str) -> tuple[int, str]:
    """facet's count of ``dc_text``'s violations, and the plan used."""
    import polars as pl

    df, schema = handle
    types = {f.name: f.type for f in schema}
    shape = peer_dc.parse(dc_text)
    if shape.single_tuple:
        cond = pl.all_horizontal([_expr(p, types, True) for p in shape.preds])
        n = df.lazy().filter(cond).select(pl.len()).collect().item()
        return int(n), "filter"
    cols = shape.columns()
    left = df.lazy().select(["rid", *[c for c in cols if c != "rid"]])
    right = left.rename(
        {c: c + SUFFIX for c in ["rid", *cols] if c != "rid"} | {"rid": "rid" + SUFFIX}
    )
    for p in shape.preds:
        sides = _side(p)
        if sides == {0}:
            left = left.filter(_expr(p, types, False))
        elif sides == {1}:
            right = right.filter(_expr(p, types, False))
    cross = [p for p in shape.preds if _side(p) == {0, 1}]
    keys = [p for p in cross if p.op == "="]
    rest = [p for p in cross if p.op != "="]
    distinct = pl.col("rid") != pl.col("rid" + SUFFIX)
    if keys:
        pairs = dict.fromkeys(
            ((p.left if p.left.side == 0 else p.right).column,
             (p.right if p.left.side == 0 else p.left).column + SUFFIX)
            for p in keys
        )  # fmt: skip
        lk, rk = [], []
        for a, b in pairs:
            ta, tb = df.schema[a], df.schema[b[: -len(SUFFIX)]]
            if ta != tb:  # an int key meets a float key: compare as floats
                lk.append(pl.col(a).cast(pl.Float64))
                rk.append(pl.col(b).cast(pl.Float64))
            else:
                lk.append(pl.col(a))
                rk.append(pl.col(b))
        joined = left.join(right, left_on=lk, right_on=rk, how="inner", coalesce=False)
        conds = [_expr(p, types, False) for p in rest] + [distinct]
        q = joined.filter(pl.all_horizontal(conds))
        method = f"join on {len(keys)} key(s) + filter"
    elif not rest:  # the tuples meet in no predicate: every pair of the two sides
        q = left.join(right, how="cross").filter(distinct)
        method = "cross join + filter"
    else:
        order = [p for p in rest if p.op in peer_dc.ORDER_OPS]
        on = order[:2] if order else rest[:1]
        others = [p for p in rest if p not in on]
        q = left.join_where(right, *[_expr(p, types, False) for p in on])
        q = q.filter(pl.all_horizontal([_expr(p, types, False) for p in others] + [distinct]))
        method = f"join_where on {len(on)} predicate(s) + filter"
    n = q.select(pl.len()).collect(engine="streaming").item()
    return int(n), method


def main(argv: list[str] | None = None) -> int:
    """``python bench/polars_worker.py --table T --dc DC`` (see bench/peer_worker.py)."""
    import peer_worker

    args = list(sys.argv[1:] if argv is None else argv)
    if "--threads" in args:
        os.environ["POLARS_MAX_THREADS"] = args[args.index("--threads") + 1]
    return peer_worker.main(["--system", "polars", *args])


if __name__ == "__main__":
    sys.exit(main())
