"""Extending an encoded table by a batch without re-encoding its rows (issue 11;
docs/semantics.md §11, docs/architecture.md "Incremental detection").

:func:`facet.encoding.encode` types and codes every row; an append that did so
would cost a pass over the whole table.  Here only the batch is typed, and each
component's codes grow instead:

* dense ranks (numbers, times, decimals as unscaled integers): the batch's values
  are looked up in the sorted dictionary; values it did not hold are inserted,
  and the old codes move up by the number inserted below them (one gather, no
  sort of the old rows);
* equality text: the batch is hashed as :func:`facet.encoding._text_codes`
  hashes, values already coded keep their code (after comparing their bytes with
  the code's value: a hash is not proof) and new values take the next codes.

The result is what encoding the concatenation would give: the same dictionary
(ranks) or codes equal exactly where the values are (text; code numbers are
free).  Whenever a component cannot be extended exactly -- its typing would
change (an int column meeting a fraction), ranks across mixed types, ordered
text, NaN, a hash collision -- :func:`extend` returns ``None`` and the caller
encodes the whole table again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from facet.column_types import ColumnUse, Component, isolate, native_kind
from facet.encoding import (
    NULL,
    EncodedTable,
    HashedDictionary,
    PendingRow,
    coding_values,
    component_parts,
    text_buffers,
)
from facet.errors import FacetError
from facet.kernels.dictionary import encode_bytes
from facet.kernels.ranks import move_codes
from facet.loading import Source
from facet.planner.config import Config

#: a text index's delta is folded into its main array past an eighth of it or this many
_DELTA_MIN = 4096
#: appends a row's old codes may wait for (each keeps an earlier code matrix alive) before
#: the next append writes them: an eighth of a copy of the table per append at most
_MAX_PENDING = 8


@dataclass(frozen=True)
class _TextIndex:
    """An equality text component's codes by hash -- a sorted main array and a
    small sorted delta the batches go into, folded into the main one past an
    eighth of it --, the value of every code (Arrow chunks, to confirm a hash
    match) and the per-code hashes in a buffer with room to grow (the encoded
    table's dictionary is a view of it).  ``main_starts``: where each run of main
    hashes sharing their top ``64 - main_shift`` bits starts (:func:`_directory`),
    so a lookup is a step or two from its slot, not a binary search over the table."""

    main_hashes: np.ndarray
    main_codes: np.ndarray
    delta_hashes: np.ndarray
    delta_codes: np.ndarray
    strings: tuple[pa.Array, ...]
    hashes: np.ndarray
    main_starts: np.ndarray
    main_shift: np.uint64

    def find(self, h: np.ndarray) -> np.ndarray:
        """The code of each hash (``NULL`` where none)."""
        out = np.full(h.size, NULL, np.int64)
        keys = self.main_hashes
        if keys.size:
            top = (h >> self.main_shift).astype(np.intp)
            at = self.main_starts[top].astype(np.intp)
            end = self.main_starts[top + 1]
            live = np.flatnonzero(at < end)
            while live.size:  # step each lookup to the first hash >= it in its run
                below = keys[at[live]] < h[live]
                live = live[below]
                at[live] += 1
                live = live[at[live] < end[live]]
            hit = at < end
            hit[hit] = keys[at[hit]] == h[hit]
            out[hit] = self.main_codes[at[hit]]
        keys = self.delta_hashes
        if keys.size:
            at = np.minimum(np.searchsorted(keys, h), keys.size - 1)
            hit = keys[at] == h
            out[hit] = self.delta_codes[at[hit]]
        return out

    def values(self, codes: np.ndarray) -> pa.ChunkedArray:
        return pa.chunked_array(self.strings, pa.large_binary()).take(pa.array(codes))

    def add(self, d: int, fresh: np.ndarray, strings: pa.Array) -> _TextIndex:
        """Codes ``d, d + 1, ..`` for the hashes ``fresh`` with values ``strings``."""
        codes = d + np.arange(fresh.size, dtype=np.int64)
        order = np.argsort(fresh, kind="stable")
        at = np.searchsorted(self.delta_hashes, fresh[order])
        dh = np.insert(self.delta_hashes, at, fresh[order])
        dc = np.insert(self.delta_codes, at, codes[order])
        mh, mc = self.main_hashes, self.main_codes
        if dh.size > max(_DELTA_MIN, mh.size // 8):
            at = np.searchsorted(mh, dh)
            mh, mc = np.insert(mh, at, dh), np.insert(mc, at, dc)
            dh, dc = dh[:0], dc[:0]
        chunks = (*self.strings, strings.cast(pa.large_binary()))
        if len(chunks) > 32:
            chunks = (pa.concat_arrays(list(chunks)),)
        buf = self.hashes
        if d + fresh.size > buf.size:
            buf = np.empty(max(2 * buf.size, d + fresh.size), np.uint64)
            buf[:d] = self.hashes[:d]
        buf[d : d + fresh.size] = fresh
        starts, shift = (
            (self.main_starts, self.main_shift) if mh is self.main_hashes else _directory(mh)
        )
        return _TextIndex(mh, mc, dh, dc, chunks, buf, starts, shift)


@dataclass
class AppendState:
    """What extending needs beyond the :class:`EncodedTable`: per text component
    (by its first column) the hash index, built from the table on first use."""

    text: dict[str, _TextIndex] = field(default_factory=dict)
    #: the last extension's moved rank columns: ``remap[code]`` is the old
    #: code's new one (the last slot is NULL: code -1 indexes it); what
    #: :mod:`facet.key_tallies` moves its keys by
    remaps: dict[str, np.ndarray] = field(default_factory=dict)


def prepare(
    enc: EncodedTable, table: pa.Table, use: ColumnUse, schema: dict[str, str]
) -> AppendState:
    """The state for the first append to ``table`` (encoded as ``enc``): the hash
    index of every equality text component (one pass over its codes); the
    kernel moving old codes is loaded now, so that the first append does not."""
    one = np.zeros(1, np.int32)
    move_codes(one, one, one.copy(), 0, 1)
    state = AppendState()
    for comp in use.components:
        first = comp.columns[0]
        if enc.recipes.get(first, (None, ""))[1] == "text" and first in enc.index:
            index = _text_index(comp, enc, table, schema, use)
            if index is not None:
                state.text[first] = index
    return state


def extend(
    enc: EncodedTable,
    state: AppendState,
    table: pa.Table,
    batch: Source,
    use: ColumnUse,
    schema: dict[str, str],
    config: Config,
) -> tuple[EncodedTable, AppendState] | None:
    """The encoding of ``table`` (encoded as ``enc``) followed by ``batch``, and
    the state for the next append; ``None`` when some component cannot be
    extended exactly (encode the whole table instead).  ``enc`` and ``state``
    are not changed."""
    if not batch.text:
        null_cols = {
            c
            for c in use.columns
            if c not in schema and native_kind(batch.table.column(c).type) == "null"
        }
        use = isolate(use, null_cols)
    n, m = enc.n, batch.num_rows
    codes = np.empty((enc.matrix.shape[0], n + m), np.int32)
    out = EncodedTable(
        n + m, codes, enc.index, enc.kinds, enc.ordered, dict(enc.const_codes),
        dict(enc.domain), [], enc.from_text, dict(enc.values), dict(enc.distinct),
        enc.recipes,
    )  # fmt: skip
    new_state = AppendState(dict(state.text))
    tune = config.kernel_tuning()
    moves: dict[int, np.ndarray | None] = {}
    for comp in use.components:
        if not _extend_component(
            comp, enc, state, new_state, table, batch, use, schema, out, tune, moves
        ):
            return None
    out.pending.update(_pending_old_codes(enc, moves))
    return out, new_state


def _pending_old_codes(
    enc: EncodedTable, moves: dict[int, np.ndarray | None]
) -> dict[int, PendingRow]:
    """The old rows' part of each row of the extension of ``enc``, left to be
    written when read (:class:`facet.encoding.PendingRow`): ``enc``'s own written
    part through the row's rank remap (``moves[row]``; ``None``: copied), after
    what ``enc`` itself had pending -- an append touches no old row's codes."""
    out: dict[int, PendingRow] = {}
    if enc.n == 0:
        return out
    for row, remap in moves.items():
        was = enc.pending.get(row)
        if was is not None and len(was.segments) >= _MAX_PENDING:
            enc.write(row)  # now: a chain keeps every code matrix it reads from alive
            was = None
        if was is None:
            out[row] = PendingRow(((enc.matrix[row], 0, enc.n, 0),), (remap,), enc.n)
        else:
            mine = (enc.matrix[row], was.end, enc.n, len(was.remaps))
            out[row] = PendingRow((*was.segments, mine), (*was.remaps, remap), enc.n)
    return out


def _extend_component(
    comp: Component,
    enc: EncodedTable,
    state: AppendState,
    new_state: AppendState,
    table: pa.Table,
    batch: Source,
    use: ColumnUse,
    schema: dict[str, str],
    out: EncodedTable,
    tune: np.ndarray,
    moves: dict[int, np.ndarray | None],
) -> bool:
    cols = comp.columns
    recipes = [enc.recipes.get(c) for c in cols]
    route = recipes[0][1] if recipes[0] is not None else None
    if route not in ("ranks", "text") or any(r is None or r[1] != route for r in recipes):
        return False
    try:
        kind, parts, const_keys, warns, typed = component_parts(comp, batch, schema, use)
    except FacetError:
        return False  # the whole table's encoding reports it
    if any(
        kind != enc.kinds[c] or typed[c].type != r[0] for c, r in zip(cols, recipes, strict=True)
    ):
        return False  # the table's typing would change (an int column meeting a fraction)
    if len({p.type for p in parts}) > 1:
        return False
    k = len(cols)
    allv = pa.concat_arrays([p.cast(parts[0].type) for p in parts[:k]])
    if route == "ranks":
        done = _extend_ranks(cols, allv, const_keys, enc, out, new_state, moves)
    else:
        done = _extend_text(comp, allv, enc, state, new_state, table, schema, use, out, tune, moves)
    if done:
        out.warnings.extend(warns)
    return done


def _keys(values: pa.Array) -> np.ndarray | None:
    """Values as a numpy array ordered as the values (``None``: not numeric)."""
    t = values.type
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return np.asarray(values.fill_null(pa.scalar(0, t)) if values.null_count else values)
    if pa.types.is_temporal(t) and t.bit_width in (32, 64):
        ints = pa.int32() if t.bit_width == 32 else pa.int64()
        return _keys(values.view(ints))
    return None


def _extend_ranks(
    cols: list[str],
    allv: pa.Array,
    const_keys: list,
    enc: EncodedTable,
    out: EncodedTable,
    new_state: AppendState,
    moves: dict[int, np.ndarray | None],
) -> bool:
    """Extend a rank component; its rows' old codes move by ``moves[row]``
    (``None``: unchanged)."""
    dictionary = enc.values[cols[0]]
    if not isinstance(dictionary, pa.Array):
        return False
    old = _keys(dictionary)
    vals = coding_values(allv)
    if vals.type != dictionary.type:
        return False
    new = _keys(vals)
    if old is None or new is None:
        return False
    if old.dtype.kind == "f" and (np.isnan(old).any() or np.isnan(new).any()):
        return False
    valid = None if vals.null_count == 0 else ~np.asarray(vals.is_null())
    present, inv = np.unique(new if valid is None else new[valid], return_inverse=True)
    at = np.searchsorted(old, present)  # (in order: each search starts where the last ended)
    held = at < old.size
    held[held] = old[at[held]] == present[held]
    fresh = ~held
    n, d = enc.n, old.size
    if fresh.any():
        slots = at[fresh]  # present[fresh][i] goes before old[slots[i]]
        merged = np.insert(old, slots, present[fresh])
        shift = np.bincount(slots, minlength=d + 1)
        remap = np.empty(d + 1, np.int32)  # remap[c]: old code c's new code; NULL (-1)
        remap[:d] = np.arange(d) + np.cumsum(shift)[:d]  # NULL (-1) indexes the last slot
        remap[d] = NULL
        new_dict = pa.array(merged.astype(old.dtype, copy=False)).view(dictionary.type)
    else:
        remap, new_dict = None, dictionary
    # each value's code in the merged dictionary: its place among the old values plus
    # the new values below it (present is sorted)
    place = (at + np.cumsum(fresh) - fresh).astype(np.int32)
    if valid is None:
        batch_codes = place[inv]
    else:
        batch_codes = np.full(len(new), NULL, np.int32)
        batch_codes[valid] = place[inv]
    m = out.n - n
    for i, c in enumerate(cols):
        row = enc.index[c]
        moves[row] = remap
        out.matrix[row, n:] = batch_codes[i * m : (i + 1) * m]
        out.values[c] = new_dict
        out.domain[c] = len(new_dict)
        if c in out.distinct:
            out.distinct[c] = len(new_dict)
    if remap is not None:
        for c in cols:
            new_state.remaps[c] = remap
        for key in const_keys:
            out.const_codes[key] = int(remap[enc.const_codes[key]])
    return True


def _extend_text(
    comp: Component,
    allv: pa.Array,
    enc: EncodedTable,
    state: AppendState,
    new_state: AppendState,
    table: pa.Table,
    schema: dict[str, str],
    use: ColumnUse,
    out: EncodedTable,
    tune: np.ndarray,
    moves: dict[int, np.ndarray | None],
) -> bool:
    """Extend an equality text component (old codes unchanged)."""
    cols = comp.columns
    dictionary = enc.values[cols[0]]
    t = allv.type
    if not isinstance(dictionary, HashedDictionary) or not (
        pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
    ):
        return False
    index = state.text.get(cols[0])
    if index is None:
        index = _text_index(comp, enc, table, schema, use)
        if index is None:
            return False
    offsets, data, valid = text_buffers(allv)
    local, first, local_hash, exact = encode_bytes(offsets, data, valid, tune)
    if not exact:
        return False
    h = local_hash.astype(np.uint64, copy=False)
    old_code = index.find(h)
    match = old_code >= 0
    if match.any():  # a hash match is confirmed byte for byte
        mine = allv.take(pa.array(first[match])).cast(pa.large_binary())
        theirs = index.values(old_code[match])
        if not pc.all(pc.equal(mine, theirs)).as_py():
            return False
    d = len(dictionary)
    fresh = np.flatnonzero(~match)
    g = old_code.astype(np.int32)
    g[fresh] = d + np.arange(fresh.size, dtype=np.int32)
    glob = np.empty(h.size + 1, np.int32)  # glob[local + 1]; NULL stays
    glob[0] = NULL
    glob[1:] = g
    batch_codes = glob[local.astype(np.int64) + 1]
    n, m = enc.n, out.n - enc.n
    if fresh.size:
        index = index.add(d, h[fresh], allv.take(pa.array(first[fresh])))
    new_dict = HashedDictionary(index.hashes[: d + fresh.size])
    for i, c in enumerate(cols):
        row = enc.index[c]
        moves[row] = None
        out.matrix[row, n:] = batch_codes[i * m : (i + 1) * m]
        out.values[c] = new_dict
        out.domain[c] = len(new_dict)
        if c in out.distinct:
            out.distinct[c] = len(new_dict)
    new_state.text[cols[0]] = index
    return True


def _as_binary(part: pa.Array) -> pa.Array:
    """A component's part as bytes; an all-NULL part (a null-typed column's, which
    meets text of any type) as NULL bytes."""
    if part.null_count == len(part) and not pa.types.is_binary(part.type):
        return pa.nulls(len(part), pa.large_binary())
    return part.cast(pa.large_binary())


def _text_index(
    comp: Component, enc: EncodedTable, table: pa.Table, schema: dict[str, str], use: ColumnUse
) -> _TextIndex | None:
    """The hash index of an equality text component, from the table's rows: the
    value of each code is read at some row holding it (one pass over the codes)."""
    dictionary = enc.values[comp.columns[0]]
    d = len(dictionary)
    source = Source(table, "", enc.from_text, list(table.column_names), table.num_rows)
    try:
        _kind, parts, const_keys, _w, _typed = component_parts(comp, source, schema, use)
    except FacetError:
        return None
    allv = pa.concat_arrays([_as_binary(p) for p in parts])
    k = len(comp.columns)
    n = enc.n
    codes = np.empty(k * n + len(const_keys), np.int64)
    for i, c in enumerate(comp.columns):
        codes[i * n : (i + 1) * n] = enc.codes[enc.index[c]]
    for j, key in enumerate(const_keys):
        codes[k * n + j] = enc.const_codes[key]
    first = np.full(d + 1, -1, np.int64)
    first[codes + 1] = np.arange(codes.size)  # a row holding each code; NULL in slot 0
    first = first[1:]
    if (first < 0).any() or not np.array_equal(codes[first], np.arange(d)):
        return None
    strings = allv.take(pa.array(first))
    hashes = dictionary.hashes.astype(np.uint64, copy=False)
    order = np.argsort(hashes, kind="stable")
    buf = np.empty(max(2 * d, 1024), np.uint64)
    buf[:d] = hashes
    main = hashes[order]
    return _TextIndex(
        main, order.astype(np.int64), _EMPTY_U, _EMPTY_I, (strings,), buf, *_directory(main)
    )


def _directory(keys: np.ndarray) -> tuple[np.ndarray, np.uint64]:
    """Sorted uint64 hashes' directory by their top bits: ``starts[b]`` is where the
    hashes whose top bits read ``b`` begin (``starts[b + 1]`` where they end), with
    about as many runs as hashes -- hashes are uniform, so a run holds one or two."""
    bits = max(1, int(keys.size).bit_length() - 1)
    shift = np.uint64(64 - bits)
    counts = np.bincount((keys >> shift).astype(np.intp), minlength=1 << bits)
    starts = np.zeros((1 << bits) + 1, np.int64 if keys.size >= 2**31 else np.int32)
    np.cumsum(counts, out=starts[1:])
    return starts, shift


_EMPTY_U = np.empty(0, np.uint64)
_EMPTY_I = np.empty(0, np.int64)
