"""pandas as a benchmark peer: a DC's violations counted with merges and masks (bench/suite.py).

    python bench/peer_worker.py --system pandas --table TYPED.parquet --dc DC

What a careful pandas user writes, in bounded memory:

* ``load`` (untimed) turns every column into a NumPy array plus a validity mask (integers
  stay int64, decimals become exact unscaled integers, timestamps and dates integers, text
  Python strings);
* each side keeps the rows whose one-tuple predicates hold (constants, ``t.A op t.B``), and
  rows with a NULL in a compared column are dropped (a predicate with NULL is false -- SQL's
  semantics, which pandas' own ``!=`` and merge keys would not give);
* equalities between ``t`` and ``t'`` columns: ``merge`` on those keys, chunked over the
  left rows so that no chunk's merge exceeds ``CHUNK_PAIRS`` rows, then a boolean mask of
  the other predicates and ``rid != rid'``, summed;
* without such an equality: the cross product in chunks of left rows, one NumPy broadcast
  comparison per predicate (``CHUNK_PAIRS`` cells per chunk);
* a single-tuple DC is a boolean mask.
"""

from __future__ import annotations

import operator
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peer_dc  # noqa: E402

#: rows of a merged chunk / cells of a cross-product chunk
CHUNK_PAIRS = 20_000_000
OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
       ">": operator.gt, ">=": operator.ge}  # fmt: skip


class Unsupported(Exception):
    """A DC this worker cannot express with pandas."""


def version() -> str:
    import pandas as pd

    return pd.__version__


def _numpy(col: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Values comparable with NumPy operators and a validity mask."""
    a = col.combine_chunks()
    valid = ~np.asarray(a.is_null(), dtype=np.bool_) if a.null_count else np.ones(len(a), np.bool_)
    t = a.type
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_duration(t):
        a = a.cast(pa.int64()) if not pa.types.is_date32(t) else a.cast(pa.int32())
    if pa.types.is_decimal128(t) and t.precision <= 18:
        # exact: the unscaled integers (the low 64 bits of each 128-bit value)
        words = np.frombuffer(a.buffers()[1], np.int64)[::2][a.offset : a.offset + len(a)]
        return words.copy(), valid
    if pa.types.is_decimal(t):
        a = a.cast(pa.float64())
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        vals = np.array(a.to_pylist(), dtype=object)
        vals[~valid] = ""
        return vals, valid
    if a.null_count:
        a = pc.fill_null(a, pa.scalar(0, a.type) if not pa.types.is_boolean(a.type) else False)
    return a.to_numpy(zero_copy_only=False), valid


def load(table: pa.Table) -> dict[str, Any]:
    arrays = {name: _numpy(table.column(name)) for name in table.column_names}
    return {"arrays": arrays, "schema": table.schema, "n": table.num_rows}


def _const(text: str, typ: pa.DataType) -> Any:
    if pa.types.is_decimal128(typ) and typ.precision <= 18:
        from decimal import Decimal

        d = Decimal(text.strip()) * 10**typ.scale  # in the column's unscaled units
        return int(d) if d % 1 == 0 else float(d)
    v = peer_dc.constant(text, typ)  # a wide decimal column is float64 here, and so is this
    if pa.types.is_timestamp(typ) or pa.types.is_date(typ):
        arr = pa.array([v]).cast(typ)
        return arr.cast(pa.int64() if not pa.types.is_date32(typ) else pa.int32())[0].as_py()
    return v


def _rows_where(h: dict, preds: list[peer_dc.Pred], cols: list[str]) -> np.ndarray:
    """Row positions where the one-tuple ``preds`` hold and ``cols`` are not NULL."""
    types = {f.name: f.type for f in h["schema"]}
    keep = np.ones(h["n"], np.bool_)
    for c in cols:
        keep &= h["arrays"][c][1]
    for p in preds:
        keep &= _mask(h, types, p, None, None)
    return np.flatnonzero(keep)


def _value(h, types, o, other, rows_of):
    if o.side is None:
        return _const(o.text, types[other.column])
    vals = h["arrays"][o.column][0]
    rows = rows_of(o.side) if rows_of else None
    return vals if rows is None else rows


def _mask(h, types, p, rows_of, _unused):
    """The predicate over whole columns (one-tuple) -- NULLs are dropped by the caller."""
    a = _value(h, types, p.left, p.right, rows_of)
    b = _value(h, types, p.right, p.left, rows_of)
    return np.asarray(OPS[p.op](a, b), dtype=np.bool_)


def _pair_mask(h, types, p, li, ri, lshape, rshape) -> np.ndarray:
    """The predicate over pairs (left rows ``li`` x right rows ``ri`` broadcast, or zipped)."""

    def v(o, other):
        if o.side is None:
            return _const(o.text, types[other.column])
        vals = h["arrays"][o.column][0]
        return vals[li].reshape(lshape) if o.side == 0 else vals[ri].reshape(rshape)

    return np.asarray(OPS[p.op](v(p.left, p.right), v(p.right, p.left)), dtype=np.bool_)


def count(h: dict, dc_text: str) -> tuple[int, str]:
    """facet's count of ``dc_text``'s violations, and the plan used."""
    shape = peer_dc.parse(dc_text)
    types = {f.name: f.type for f in h["schema"]}
    if shape.single_tuple:
        rows = _rows_where(h, list(shape.preds), shape.columns())
        return len(rows), "boolean mask"

    def sides(p):
        return {o.side for o in (p.left, p.right) if o.side is not None}

    def side_cols(s):
        return sorted({o.column for p in shape.preds for o in (p.left, p.right) if o.side == s})

    left = _rows_where(h, [p for p in shape.preds if sides(p) == {0}], side_cols(0))
    right = _rows_where(h, [p for p in shape.preds if sides(p) == {1}], side_cols(1))
    cross = [p for p in shape.preds if sides(p) == {0, 1}]
    keys = [p for p in cross if p.op == "="]
    rest = [p for p in cross if p.op != "="]
    rid = h["arrays"]["rid"][0]
    total = 0
    if keys:
        import pandas as pd

        lk = [(p.left if p.left.side == 0 else p.right).column for p in keys]
        rk = [(p.right if p.left.side == 0 else p.left).column for p in keys]
        lf = pd.DataFrame({f"k{i}": h["arrays"][c][0][left] for i, c in enumerate(lk)})
        lf["pos"] = left
        rf = pd.DataFrame({f"k{i}": h["arrays"][c][0][right] for i, c in enumerate(rk)})
        rf["pos"] = right
        knames = [f"k{i}" for i in range(len(keys))]
        # partners per left row, to cut the left side into chunks of bounded merge size
        sizes = rf.groupby(knames, sort=False).size().rename("m")
        per = lf.merge(sizes, left_on=knames, right_index=True, how="left")["m"].fillna(0)
        cum = np.cumsum(per.to_numpy(np.int64))
        start = 0
        while start < len(lf):
            stop = int(np.searchsorted(cum, cum[start] - per.iat[start] + CHUNK_PAIRS, "right"))
            stop = max(stop, start + 1)
            m = lf.iloc[start:stop].merge(rf, on=knames, suffixes=("", "_r"))
            li, ri = m["pos"].to_numpy(), m["pos_r"].to_numpy()
            ok = rid[li] != rid[ri]
            for p in rest:
                ok &= _pair_mask(h, types, p, li, ri, (-1,), (-1,))
            total += int(ok.sum())
            start = stop
        return total, f"merge on {len(keys)} key(s), chunked + mask"
    step = max(1, CHUNK_PAIRS // max(len(right), 1))
    for start in range(0, len(left), step):
        li = left[start : start + step]
        ok = rid[li].reshape(-1, 1) != rid[right].reshape(1, -1)
        for p in rest:
            ok &= _pair_mask(h, types, p, li, right, (-1, 1), (1, -1))
        total += int(ok.sum())
    return total, f"chunked cross product ({step} left rows per chunk) + masks"


def main(argv: list[str] | None = None) -> int:
    """``python bench/pandas_worker.py --table T --dc DC`` (see bench/peer_worker.py)."""
    import peer_worker

    return peer_worker.main(["--system", "pandas", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
