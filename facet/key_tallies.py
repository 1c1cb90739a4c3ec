"""Appends to key- and FD-shaped DCs counted from per-key tallies (issue 11;
docs/semantics.md §11, docs/architecture.md "Incremental detection").

A DC whose predicates are same-column equalities ``t.X = t'.X`` and at most one
same-column non-equality ``t.Y != t'.Y``, with no one-tuple predicate, is a key
(``X`` identifies a row) or an FD (``X -> Y``).  A pair violates it when both rows
hold the same non-NULL ``X`` (and different non-NULL ``Y``).  Its violations with a
row of a batch ``B`` follow from how many rows hold each key, without reading the
old rows: for ``t`` in ``B``, with ``c(x)`` the rows holding key ``x`` and
``c(x, y)`` those also holding ``y``,

* FD: ``deg(t) = c(x_t) - c(x_t, y_t)``; key: ``deg(t) = c(x_t) - 1``;
* the violations ``(B, all)`` and ``(old, B)`` are ``sum_t deg_all(t) + deg_old(t)``
  (the relation is symmetric);
* rows involved: the batch's rows with ``deg_all > 0``, and for each key the batch
  holds, the old rows holding it (key), or those whose ``Y`` differs from some batch
  row's (FD: all of them when the batch holds two values of ``Y`` there, else
  ``c_old(x) - c_old(x, y)``).

The tallies are kept over the table's codes, each key's codes packed into one int64
(a digit of a power-of-two width per column, with room for the column to grow): a
sorted main array and a small sorted delta the batches are merged into, folded into
the main one when it reaches an eighth of it (so an append costs the batch, and the
main array is rewritten once per eighth of its size).  When an append inserts values
among a column's ranks (``AppendState.remaps``) the keys' digits for that column are
moved (order is kept); a column outgrowing its digit repacks the keys.  Never a pass
over the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from facet.encoding import EncodedTable
from facet.language.normalize import NormalDC

#: packed keys use at most this many bits
_BITS = 62
#: the delta is folded into the main array past this fraction of it (or _DELTA_MIN keys)
_DELTA_SHARE = 8
_DELTA_MIN = 4096
#: a column's digit is at least this wide (room to grow before a repack)
_MIN_WIDTH = 10


def shape(nd: NormalDC) -> tuple[list[str], str | None] | None:
    """``(X columns, Y column or None)`` of a key- or FD-shaped DC, else ``None``."""
    if nd.arity != 2 or nd.filters or not nd.preds:
        return None
    xs: list[str] = []
    y: str | None = None
    for p in nd.preds:
        if p.a != p.b:
            return None
        if p.op == "=":
            if p.a not in xs:
                xs.append(p.a)
        elif p.op == "!=" and y is None:
            y = p.a
        else:
            return None
    if not xs or (y is not None and y in xs):
        return None
    return xs, y


@dataclass(frozen=True)
class _Counts:
    """Sorted distinct packed keys and their counts: main plus delta (a key may be
    in both; its count is the sum)."""

    keys: np.ndarray
    counts: np.ndarray
    dkeys: np.ndarray
    dcounts: np.ndarray

    @staticmethod
    def of(packed: np.ndarray) -> _Counts:
        keys, counts = np.unique(packed, return_counts=True)
        return _Counts(keys, counts.astype(np.int64), _EMPTY, _EMPTY)

    def lookup(self, probe: np.ndarray) -> np.ndarray:
        return _lookup(self.keys, self.counts, probe) + _lookup(self.dkeys, self.dcounts, probe)

    def add(self, keys: np.ndarray, counts: np.ndarray) -> _Counts:
        dkeys, dcounts = _merge(self.dkeys, self.dcounts, keys, counts)
        if dkeys.size > max(_DELTA_MIN, self.keys.size // _DELTA_SHARE):
            k, c = _merge(self.keys, self.counts, dkeys, dcounts)
            return _Counts(k, c, _EMPTY, _EMPTY)
        return _Counts(self.keys, self.counts, dkeys, dcounts)

    def mapped(self, fn) -> _Counts:
        return _Counts(fn(self.keys), self.counts, fn(self.dkeys), self.dcounts)


_EMPTY = np.empty(0, np.int64)


@dataclass(frozen=True)
class KeyTally:
    """Rows per key ``X`` (``x``) and, for an FD, per ``X`` and ``Y`` (``xy``, ``Y``
    the lowest digit), counted over rows with no NULL in ``X`` (nor ``Y``); keys
    packed with ``widths`` bits per column (``X`` columns, then ``Y``)."""

    xs: tuple[str, ...]
    y: str | None
    widths: tuple[int, ...]
    x: _Counts
    xy: _Counts | None

    @property
    def cols(self) -> tuple[str, ...]:
        return self.xs + ((self.y,) if self.y is not None else ())


def _widths(enc: EncodedTable, cols: tuple[str, ...]) -> tuple[int, ...] | None:
    """Bits per column: room to double (at least 1024 codes) while the key fits,
    else just the domain; ``None`` when even that does not fit."""
    tight = [max(int(enc.domain[c]), 1).bit_length() for c in cols]
    roomy = [max(b + 1, _MIN_WIDTH) for b in tight]
    for w in (roomy, tight):
        if sum(w) <= _BITS:
            return tuple(w)
    return None


def _shifts(widths: tuple[int, ...]) -> list[int]:
    """The lowest bit of each column's digit (the last column lowest)."""
    out, at = [], 0
    for w in reversed(widths):
        out.append(at)
        at += w
    return out[::-1]


def pack(columns: list[np.ndarray], widths: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(columns[0].shape[0], np.int64)
    for col, sh in zip(columns, _shifts(widths), strict=True):
        out |= col.astype(np.int64) << sh
    return out


def _rows(enc: EncodedTable, cols: tuple[str, ...], rows: int | np.ndarray) -> list[np.ndarray]:
    """Rows ``rows ..`` of ``enc`` (an int: from that row on; an array: those
    tids) with no NULL in ``cols`` (their codes, per column)."""
    pick = slice(rows, None) if isinstance(rows, int) else rows
    codes = [enc.take(c, pick) for c in cols]
    ok = np.ones(codes[0].shape[0], np.bool_)
    for c in codes:
        ok &= c >= 0
    return [c[ok] for c in codes]


def build(enc: EncodedTable, xs: list[str], y: str | None) -> KeyTally | None:
    """The tallies of every row of ``enc`` (``None``: keys too wide to pack)."""
    cols = tuple(xs) + ((y,) if y is not None else ())
    widths = _widths(enc, cols)
    if widths is None:
        return None
    packed = pack(_rows(enc, cols, 0), widths)
    if y is None:
        return KeyTally(tuple(xs), y, widths, _Counts.of(packed), None)
    return KeyTally(tuple(xs), y, widths, _Counts.of(packed >> widths[-1]), _Counts.of(packed))


def moved(tally: KeyTally, enc: EncodedTable, remaps: dict[str, np.ndarray]) -> KeyTally | None:
    """The tallies in the codes of an extended encoding ``enc``: digits of a column
    whose ranks moved (``remaps[col][code]``, order kept) are mapped, and the
    keys are repacked when a column outgrew its digit; ``None`` when they no longer
    fit."""
    cols = tally.cols
    widths = tally.widths
    if all(int(enc.domain[c]) <= 1 << w for c, w in zip(cols, widths, strict=True)):
        new_widths = widths
    else:
        new_widths = _widths(enc, cols)
        if new_widths is None:
            return None
    if new_widths == widths and not any(c in remaps for c in cols):
        return tally

    def fn(keys: np.ndarray, names: tuple[str, ...], old_w, new_w) -> np.ndarray:
        digits = []
        for c, sh, w in zip(names, _shifts(old_w), old_w, strict=True):
            d = (keys >> sh) & ((1 << w) - 1)
            digits.append(remaps[c][d].astype(np.int64) if c in remaps else d)
        return pack(digits, new_w) if keys.size else keys

    nx = len(tally.xs)
    x = tally.x.mapped(lambda k: fn(k, tally.xs, widths[:nx], new_widths[:nx]))
    xy = None if tally.xy is None else tally.xy.mapped(lambda k: fn(k, cols, widths, new_widths))
    return KeyTally(tally.xs, tally.y, new_widths, x, xy)


def _lookup(sorted_keys: np.ndarray, counts: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """``counts`` of each probed key (0 where absent)."""
    if not sorted_keys.size:
        return np.zeros(probe.shape[0], np.int64)
    order = np.argsort(probe)  # searched in order: each search starts where the last ended
    keys = probe[order]
    at = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    out = np.empty(probe.shape[0], np.int64)
    out[order] = np.where(sorted_keys[at] == keys, counts[at], 0)
    return out


def _merge(
    keys: np.ndarray, counts: np.ndarray, add: np.ndarray, add_counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys with ``add`` (sorted, distinct) counted in."""
    if not add.size:
        return keys, counts
    if not keys.size:
        return add, add_counts.astype(np.int64)
    at = np.searchsorted(keys, add)
    hit = keys[np.minimum(at, keys.size - 1)] == add
    counts = counts.copy()
    counts[at[hit]] += add_counts[hit]
    new = ~hit
    return np.insert(keys, at[new], add[new]), np.insert(counts, at[new], add_counts[new])


def count_batch(tally: KeyTally, enc: EncodedTable, n_old: int) -> tuple[int, int, KeyTally]:
    """The violations holding a row of the batch (rows ``n_old ..`` of ``enc``,
    whose codes ``tally`` is in -- see :func:`moved`), the rows they involve, and
    the tallies with the batch counted in."""
    packed = pack(_rows(enc, tally.cols, n_old), tally.widths)
    violations, involved, (ux, cb, uxy, cxyb) = _count(tally, packed, counted=False)
    xy = None if tally.xy is None else tally.xy.add(uxy, cxyb)
    return violations, involved, KeyTally(tally.xs, tally.y, tally.widths, tally.x.add(ux, cb), xy)


def count_scope(tally: KeyTally, enc: EncodedTable, rows: np.ndarray) -> tuple[int, int]:
    """The violations holding a row of the scope ``rows`` (tids of ``enc``, every
    row of which ``tally`` counts), and the rows they involve: the scope is the
    batch and the other rows the old ones, their tallies the whole table's less
    the scope's (Daisy's scoped detection, issue 11)."""
    packed = pack(_rows(enc, tally.cols, rows), tally.widths)
    violations, involved, _ = _count(tally, packed, counted=True)
    return violations, involved


def _count(tally: KeyTally, packed: np.ndarray, counted: bool):
    """The violations holding a row of ``packed`` (the keys of some rows ``B``) and
    the rows they involve, ``tally`` counting the other rows (``counted``: and
    ``B`` too); with ``B``'s distinct keys and counts (``X``, then ``X`` and ``Y``)."""
    wy = tally.widths[-1] if tally.y is not None else 0
    bx = packed >> wy
    ux, inv, cb = np.unique(bx, return_inverse=True, return_counts=True)
    c_old_u = tally.x.lookup(ux)
    if counted:
        c_old_u = c_old_u - cb
    c_old = c_old_u[inv]
    c_all = c_old + cb[inv]
    uxy, cxyb = _EMPTY, _EMPTY
    if tally.y is None:
        deg_all = c_all - 1
        deg_old = c_old
        involved_old = int(c_old_u.sum())
    else:
        assert tally.xy is not None
        uxy, invxy, cxyb = np.unique(packed, return_inverse=True, return_counts=True)
        cxy_old_u = tally.xy.lookup(uxy)
        if counted:
            cxy_old_u = cxy_old_u - cxyb
        cxy_old = cxy_old_u[invxy]
        deg_all = c_all - (cxy_old + cxyb[invxy])
        deg_old = c_old - cxy_old
        # per key of B: how many Y values it brings (uxy is key-major, so each
        # key's values are one run, in the order of ux)
        x_of = uxy >> wy
        starts = np.flatnonzero(np.r_[True, x_of[1:] != x_of[:-1]]) if uxy.size else _EMPTY
        single = np.diff(np.r_[starts, uxy.size]) == 1
        # several values: every old row of the key differs from one; one value
        # ``s``: the old rows of the key whose Y is not ``s``
        involved_old = int(
            c_old_u[~single].sum() + (c_old_u[single] - cxy_old_u[starts[single]]).sum()
        )
    violations = int(deg_all.sum() + deg_old.sum())
    involved = int(np.count_nonzero(deg_all > 0)) + involved_old
    return violations, involved, (ux, cb, uxy, cxyb)
