"""Whether widening CSV int64 columns to float64 would change an answer already
given (docs/semantics.md §11).

A batch that brings a fraction (or a number past int64) into a CSV column typed
int64 makes the table's run type it float64.  The rows already answered were
compared exactly, as integers, and so was every constant they met; read as
float64 a value past 2**53 rounds (``9007199254740993`` to ``2**53``), and so
does a constant (``t.a = 9007199254740993`` against a float64 column is
``t.a = 2**53``).  :func:`first_change` finds a comparison among the table's
rows, or of a row with a constant, whose outcome the rounding would change --
the append that widens is then refused, since the answers given and the ones to
come would disagree with one run of the whole table.  Rounding is monotone, so
only values that float64 cannot hold and the values next to them can change a
comparison: those are checked, exactly, in Python; the others are not read.
"""

from __future__ import annotations

import bisect
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from facet.column_types import NUMBER_RE, TextColumn
from facet.encoding import decimal_constant, one_array
from facet.language.ast import DC, Col, Const, Predicate

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
#: every int64 of a smaller magnitude is a float64 exactly
_EXACT = 2**53


@dataclass
class _Column:
    """A column's non-NULL values, exactly (int64, or float64 for a float column),
    their rows and their images: float64 for a column that widens, else the values."""

    values: np.ndarray
    rows: np.ndarray
    images: np.ndarray
    widens: bool

    def moved(self) -> np.ndarray:
        """Where the image is not the value (a widened int float64 cannot hold)."""
        if not self.widens:
            return np.zeros(self.values.size, np.bool_)
        inside = self.images < 2.0**63  # (2**63 itself is past int64: moved)
        back = np.where(inside, self.images, 0.0).astype(np.int64)
        return ~inside | (back != self.values)

    def big(self) -> np.ndarray:
        """Where a value is of magnitude 2**53 or more (only those can meet a moved one)."""
        v = self.values
        if v.dtype.kind == "f":
            return np.abs(v) >= float(_EXACT)
        return (v >= _EXACT) | (v <= -_EXACT)


def first_change(
    table: pa.Table, widened: set[str], kinds: dict[str, str], dcs: list[DC]
) -> str | None:
    """A comparison among ``table``'s rows (CSV text) or of a row with a constant
    that reading the ``widened`` columns (int64) as float64 would change, described
    for a message; ``None`` when no comparison changes.  ``kinds``: the other
    columns' kinds ('int' or 'float'; a column of another kind meets no widened
    one)."""
    columns: dict[str, _Column] = {}

    def column(name: str) -> _Column:
        if name not in columns:
            text = TextColumn(one_array(table.column(name)))
            widens = name in widened
            typed = text.ints() if widens or kinds.get(name) == "int" else text.floats
            valid = np.flatnonzero(np.asarray(typed.is_valid()))
            dtype = np.int64 if pa.types.is_integer(typed.type) else np.float64
            values = np.asarray(typed.fill_null(0).to_numpy(zero_copy_only=False), dtype)[valid]
            images = values.astype(np.float64) if widens else values
            columns[name] = _Column(values, valid, images, widens)
        return columns[name]

    for dc in dcs:
        for p in dc.predicates:
            if isinstance(p.left, Const):
                p = p.flipped()
            left, right = p.left, p.right
            if not isinstance(left, Col):
                continue  # (two constants: the DC's parser refuses them)
            if isinstance(right, Const):
                if left.name not in widened:
                    continue
                found = _with_constant(column(left.name), p.op, right)
            elif left.name not in widened and right.name not in widened:
                continue
            elif left.tuple == right.tuple:
                if left.name == right.name:
                    continue  # a value against itself: rounding changes nothing
                found = _row_wise(column(left.name), p.op, column(right.name))
            else:
                same = left.name == right.name
                found = _across(column(left.name), p.op, column(right.name), same)
            if found is not None:
                return _described(dc, p, *found)
    return None


#: a change found: the two operands, exactly, and as the widened run reads them
Found = tuple[Any, Any, Any, Any]


def _described(dc: DC, p: Predicate, x: Any, y: Any, fx: Any, fy: Any) -> str:
    """The change for a message: the predicate, its operands, its outcome exactly
    and once float64 rounds them."""
    holds = "holds" if _OPS[p.op](x, y) else "does not hold"
    then = "not" if _OPS[p.op](x, y) else "it does"
    return (
        f"{dc.where()}: {p.text()} {holds} for {_shown(x)} and {_shown(y)}, but {then} once "
        f"float64 rounds them to {_shown(fx)} and {_shown(fy)}"
    )


def _shown(v: Any) -> str:
    """A value as written: a whole float as its integer (2**53 as 9007199254740992)."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _with_constant(col: _Column, op: str, const: Const) -> Found | None:
    """A value of ``col`` whose comparison with ``const`` changes: ``(x, const)``."""
    text = const.text.strip()
    if not re.fullmatch(NUMBER_RE, text):
        return None  # not a number: the run says so
    exact = decimal_constant(text)
    image = float(exact)
    same = np.flatnonzero(col.images == image)  # rounding is monotone: only these move
    f = _OPS[op]
    for x in np.unique(col.values[same]).tolist():
        if f(x, exact) != f(float(x), image):
            return x, exact, float(x), image
    return None


def _row_wise(a: _Column, op: str, b: _Column) -> Found | None:
    """A row whose ``a op b`` changes (``t.a op t.b``): ``(a, b)`` there."""
    _, ia, ib = np.intersect1d(a.rows, b.rows, assume_unique=True, return_indices=True)
    f = _OPS[op]
    if a.widens and b.widens:  # int64 against int64, float64 against float64: exact
        changed = f(a.values[ia], b.values[ib]) != f(a.images[ia], b.images[ib])
        touched = np.flatnonzero(changed)[:1]
    else:
        touched = np.flatnonzero(a.moved()[ia] | b.moved()[ib])
    for k in touched.tolist():
        x, y = a.values[ia[k]].item(), b.values[ib[k]].item()
        fx, fy = a.images[ia[k]].item(), b.images[ib[k]].item()
        if f(x, y) != f(fx, fy):
            return x, y, fx, fy
    return None


def _across(a: _Column, op: str, b: _Column, same: bool) -> Found | None:
    """Values ``x`` of ``a`` and ``y`` of ``b``, in two different rows, whose
    ``x op y`` changes (``t.a op t'.b``; ``same``: ``a`` is ``b``)."""
    f = _OPS[op]
    only = None
    if a.widens and b.widens:  # values of different images keep their order
        only = _shared_images(a, b)
    sides = [_Distinct(a, only), _Distinct(b, only)]
    for k, (mine, other) in enumerate((sides, sides[::-1])):
        for x, fx in mine.moved():
            for y, fy in other.near(x, fx):
                pair = (x, y) if k == 0 else (y, x)
                images = (fx, fy) if k == 0 else (fy, fx)
                if f(*pair) == f(*images):
                    continue
                if same or not _one_row(sides[0], pair[0], sides[1], pair[1]):
                    return (*pair, *images)
    return None


def _shared_images(a: _Column, b: _Column) -> np.ndarray:
    """The images (sorted) that more than one distinct value of ``a`` and ``b``
    round to: where two widened columns' values can change their comparison."""
    images = np.concatenate([a.images[a.big()], b.images[b.big()]])
    values = np.concatenate([a.values[a.big()], b.values[b.big()]])
    pairs = np.unique(np.stack([images.view(np.int64), values]), axis=1)
    shared, counts = np.unique(pairs[0], return_counts=True)
    return shared[counts > 1].view(np.float64)


class _Distinct:
    """A column's distinct values of magnitude 2**53 or more (of the images
    ``only``; ``None``: all) as Python numbers, in order, each with its image, the
    number of rows holding it and one of them."""

    def __init__(self, col: _Column, only: np.ndarray | None = None) -> None:
        big = col.big()
        if only is not None:
            big &= np.isin(col.images, only)
        big = np.flatnonzero(big)
        values, first, counts = np.unique(col.values[big], return_index=True, return_counts=True)
        self.values: list[Any] = values.tolist()
        self.images: list[float] = col.images[big][first].tolist()
        self.rows: list[int] = col.rows[big][first].tolist()
        self.counts: list[int] = counts.tolist()
        self.moving = col.moved()[big][first].tolist()
        self.by_image: dict[float, list[int]] = {}
        if col.widens:
            for i, fv in enumerate(self.images):
                self.by_image.setdefault(fv, []).append(i)
        self.at = {v: i for i, v in enumerate(self.values)}

    def moved(self) -> list[tuple[Any, float]]:
        return [(v, fv) for v, fv, m in zip(self.values, self.images, self.moving) if m]

    def near(self, x: Any, fx: float) -> list[tuple[Any, float]]:
        """The values a comparison with ``x`` (image ``fx``) may change for: those
        between ``x`` and ``fx`` (ends included), and those rounding to ``fx``."""
        lo, hi = (x, fx) if x <= fx else (fx, x)
        start = bisect.bisect_left(self.values, lo)
        end = bisect.bisect_right(self.values, hi)
        found = set(range(start, end)) | set(self.by_image.get(fx, ()))
        return [(self.values[i], self.images[i]) for i in sorted(found)]


def _one_row(a: _Distinct, x: Any, b: _Distinct, y: Any) -> bool:
    """Whether ``x`` of ``a`` and ``y`` of ``b`` are held by one row only, the same."""
    i, j = a.at[x], b.at[y]
    return a.counts[i] == 1 and b.counts[j] == 1 and a.rows[i] == b.rows[j]
