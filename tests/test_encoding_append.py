"""Extending an encoding by a batch (facet/encoding_append.py): where it extends, the
result codes every row as encoding the whole table does -- the same ranks and
dictionaries for ordered and numeric components, the same equalities for text -- on
random typed tables, random CSV text and the real Tax data; where it cannot (a
typing change, ranks across types, NaN, a hash collision) it declines and the
Detector encodes again, still exact."""

from __future__ import annotations

import dataclasses
import io
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import facet
import facet.detector as detector_module
from facet.api import load_dcs
from facet.column_types import analyze
from facet.encoding import EncodedTable, encode
from facet.encoding_append import _directory, extend, prepare
from facet.errors import FacetError
from facet.loading import Source, load
from facet.planner.config import DEFAULT
from tests.arrow_strategies import typed_dcs, typed_tables
from tests.strategies import dcs, examples, tables

ROOT = Path(__file__).resolve().parent.parent
TAX40 = ROOT / "data" / "tax" / "tax_dirty_0040k.csv"
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]


def _source(table: pa.Table, text: bool) -> Source:
    return Source(table, "t", text, list(table.column_names), table.num_rows)


def _coded_alike(use, got: EncodedTable, want: EncodedTable) -> None:
    """``got`` codes every row as ``want``: NULLs alike; ranks (and their
    dictionaries and constants) equal on rank components; on text components one
    code per value both ways (code numbers are free)."""
    assert got.n == want.n and got.index == want.index and got.kinds == want.kinds
    for comp in use.components:
        cols = comp.columns
        keys = [k for k in want.const_codes if k[0] in cols]
        a = np.concatenate(
            [got.column(c) for c in cols] + [np.array([got.const_codes[k] for k in keys], np.int32)]
        )
        b = np.concatenate(
            [want.column(c) for c in cols]
            + [np.array([want.const_codes[k] for k in keys], np.int32)]
        )
        assert np.array_equal(a < 0, b < 0), cols
        assert got.domain[cols[0]] == want.domain[cols[0]], cols
        if want.recipes[cols[0]][1] == "ranks":
            assert np.array_equal(a, b), cols
            assert got.values[cols[0]].equals(want.values[cols[0]]), cols
        else:
            pairs = np.unique(np.stack([a, b]), axis=1)
            assert np.unique(pairs[0]).size == pairs.shape[1] == np.unique(pairs[1]).size, cols
        for c in cols:
            if c in want.distinct:
                assert got.distinct[c] == want.distinct[c]


def _check_split(table: pa.Table, dc_list, cut: int, text: bool) -> bool:
    """Encode ``table[:cut]``, extend by the rest, compare with encoding it all;
    True when it extended."""
    use = analyze(dc_list)
    base, batch = table.slice(0, cut), table.slice(cut)
    try:
        want = encode(_source(table, text), use, {}, DEFAULT)
        old = encode(_source(base, text), use, {}, DEFAULT)
    except FacetError:
        assume(False)
    state = prepare(old, base, use, {})
    got = extend(old, state, base, _source(batch, text), use, {}, DEFAULT)
    if got is None:
        return False
    _coded_alike(use, got[0], want)
    # and once more on top: the state carried forward extends again
    again = extend(got[0], got[1], table, _source(batch, text), use, {}, DEFAULT)
    if again is not None:
        twice = encode(_source(pa.concat_tables([table, batch]), text), use, {}, DEFAULT)
        _coded_alike(use, again[0], twice)
    return True


@settings(max_examples=examples(300, 40), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_extended_typed_tables_code_as_encoding_all(data):
    """Typed Arrow tables (every numeric width, decimals, times, text, NULLs) and DCs
    over them, cut anywhere."""
    table, families = data.draw(typed_tables())
    dc_list = [data.draw(typed_dcs(families)) for _ in range(data.draw(st.integers(1, 2)))]
    _check_split(table, dc_list, data.draw(st.integers(0, table.num_rows)), text=False)


@settings(max_examples=examples(300, 40), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_extended_csv_text_codes_as_encoding_all(data):
    """CSV text (types inferred from the DCs) cut anywhere."""
    table, kinds = data.draw(tables(max_rows=30))
    dc_list = [data.draw(dcs(kinds)) for _ in range(data.draw(st.integers(1, 3)))]
    buf = io.BytesIO()
    pacsv.write_csv(table, buf)
    text = load(_csv_path(buf.getvalue())).table
    _check_split(text, dc_list, data.draw(st.integers(0, table.num_rows)), text=True)


#: the CSV files the tests write (removed when the process exits; 5,000 a run were left)
_CSV_DIR = tempfile.TemporaryDirectory(prefix="facet-test-append-")


def _csv_path(content: bytes) -> str:
    with tempfile.NamedTemporaryFile("wb", suffix=".csv", delete=False, dir=_CSV_DIR.name) as f:
        f.write(content)
    return f.name


def test_the_common_columns_extend():
    """Ints, floats, decimals, timestamps, dates and equality text all extend (with
    new values, NULLs and constants), so the property tests above are not vacuous."""
    n = 400
    rng = np.random.default_rng(3)
    table = pa.table(
        {
            "i": pa.array(rng.integers(-50, 50, n)),
            "f": pa.array(np.round(rng.normal(size=n), 2)),
            "d": pa.array([f"{v:.2f}" for v in rng.uniform(0, 99, n)]).cast(pa.decimal128(9, 2)),
            "ts": pa.array(rng.integers(0, 10**6, n) * 1000, pa.timestamp("us")),
            "day": pa.array(rng.integers(0, 2000, n).astype(np.int32), pa.int32()).cast(
                pa.date32()
            ),
            "s": pa.array([None if v == 0 else f"v{v}" for v in rng.integers(0, 60, n)]),
            "s2": pa.array([f"v{v}" for v in rng.integers(30, 90, n)]),
        }
    )
    rules = load_dcs(
        None,
        [
            "not(t.i < t'.i and t.f > t'.f and t.d <= t'.d)",
            "not(t.ts < t'.ts and t.day > t'.day and t.i > 3)",
            "not(t.s = t'.s2 and t.s != 'v7')",
        ],
    )
    for cut in (0, 1, 250, 399):
        assert _check_split(table, rules, cut, text=False), cut
    buf = io.BytesIO()
    pacsv.write_csv(table, buf)
    text = load(_csv_path(buf.getvalue())).table
    for cut in (1, 250):
        assert _check_split(text, rules, cut, text=True), cut


def test_text_codes_through_many_appends(monkeypatch):
    """Equality text through ten appends, the hash index's delta folded into its
    main array at once (and not): every append codes as encoding all would."""
    import facet.encoding_append as ea

    rng = np.random.default_rng(9)
    words = np.array([f"w{i}" for i in range(300)], dtype=object)
    table = pa.table(
        {"s": pa.array(words[rng.integers(0, 300, 1000)].tolist()), "k": rng.integers(0, 9, 1000)}
    )
    rules = load_dcs(None, ["not(t.s = t'.s and t.k != t'.k)"])
    use = analyze(rules)
    for fold in (0, 4096):
        monkeypatch.setattr(ea, "_DELTA_MIN", fold)
        enc = encode(_source(table.slice(0, 100), False), use, {}, DEFAULT)
        state = prepare(enc, table.slice(0, 100), use, {})
        for hi in range(200, 1001, 100):
            out = extend(
                enc,
                state,
                table.slice(0, hi - 100),
                _source(table.slice(hi - 100, 100), False),
                use,
                {},
                DEFAULT,
            )
            assert out is not None
            enc, state = out
            _coded_alike(use, enc, encode(_source(table.slice(0, hi), False), use, {}, DEFAULT))


@pytest.mark.parametrize(
    ("base", "batch", "dc"),
    [
        # the batch's typing differs (an int column meeting fractions)
        (pa.table({"x": [1, 2, 3]}), pa.table({"x": [2.5, 1.0]}), "not(t.x < t'.x)"),
        # ranks across types (int against float, by exact value)
        (
            pa.table({"x": [1, 2], "y": [1.5, 0.5]}),
            pa.table({"x": [3], "y": [2.5]}),
            "not(t.x < t'.y)",
        ),
        # ordered text
        (pa.table({"x": ["b", "a"]}), pa.table({"x": ["c", "a"]}), "not(t.x < t'.x)"),
    ],
)
def test_declines_where_it_cannot_extend_exactly(base, batch, dc):
    rules = load_dcs(None, [dc])
    use = analyze(rules)
    old = encode(_source(base, False), use, {}, DEFAULT)
    state = prepare(old, base, use, {})
    assert extend(old, state, base, _source(batch, False), use, {}, DEFAULT) is None
    if base.schema == batch.schema:  # the detector still answers exactly, encoding again
        det = facet.Detector(base, dcs=rules)
        got = det.initial.total_violations + det.append(batch).total_violations
        whole = pa.concat_tables([base, batch])
        assert got == facet.detect(whole, dcs=rules).total_violations


def test_a_hash_collision_declines(monkeypatch):
    """A batch value whose hash equals an old value's but whose bytes differ is not
    given that value's code."""
    base = pa.table({"s": ["alpha", "beta"], "k": [1, 2]})
    batch = pa.table({"s": ["gamma"], "k": [3]})
    rules = load_dcs(None, ["not(t.s = t'.s and t.k != t'.k)"])
    use = analyze(rules)
    old = encode(_source(base, False), use, {}, DEFAULT)
    state = prepare(old, base, use, {})
    index = state.text["s"]
    real = extend(old, state, base, _source(batch, False), use, {}, DEFAULT)
    assert real is not None  # without a collision it extends
    gamma = real[0].values["s"].hashes[-1]
    hashes = index.main_hashes.copy()
    hashes[0] = gamma  # pretend an old value hashes as "gamma"
    order = np.argsort(hashes, kind="stable")
    state.text["s"] = dataclasses.replace(
        index,
        main_hashes=hashes[order],
        main_codes=index.main_codes[order],
        **dict(zip(("main_starts", "main_shift"), _directory(hashes[order]), strict=True)),
    )
    assert extend(old, state, base, _source(batch, False), use, {}, DEFAULT) is None


@pytest.mark.slow
def test_tax_batches_extend_and_stay_exact(monkeypatch):
    """Tax (CSV) in 8 batches: every append extends, and the counts add up to the
    full run's, with the appends' encodings equal to encoding all."""
    calls = []
    real = detector_module.extend

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(detector_module, "extend", spy)
    rules = ROOT / "data" / "tax" / "dc_rules.txt"
    lines = TAX40.read_text().splitlines(keepends=True)
    head, body = lines[0], lines[1:]
    size = len(body) // 8 + 1
    paths = []
    for k in range(0, len(body), size):
        paths.append(_csv_path((head + "".join(body[k : k + size])).encode()))
    det = facet.Detector(paths[0], rules)
    counts = np.array([d.violations for d in det.initial.dcs])
    for p in paths[1:]:
        counts += [d.violations for d in det.append(p).dcs]
    full = facet.detect(TAX40, rules)
    assert counts.tolist() == [d.violations for d in full.dcs]
    assert calls and all(calls), calls


@settings(max_examples=60, deadline=None)
@given(
    keys=st.sets(st.integers(0, 2**64 - 1), max_size=300),
    probes=st.lists(st.integers(0, 2**64 - 1), max_size=50),
    crowd=st.integers(0, 40),
)
def test_the_text_index_finds_exactly_the_hashes_it_holds(keys, probes, crowd):
    """The hash index's lookup (a directory by the hashes' top bits, then a step or
    two; the delta by binary search) against a dict: hashes at 0 and 2**64 - 1, runs
    of hashes sharing their top bits (``crowd`` of them in one run), misses beside
    hits, in the main array and in the delta."""
    from facet.encoding_append import _EMPTY_I, _EMPTY_U, _TextIndex

    keys = set(keys) | {0, 2**64 - 1} | {2**63 + j for j in range(crowd)}
    held = np.array(sorted(keys), np.uint64)
    codes = np.arange(held.size, dtype=np.int64)[::-1].copy()
    buf = np.zeros(held.size, np.uint64)
    main = _TextIndex(held, codes, _EMPTY_U, _EMPTY_I, (), buf, *_directory(held))
    want = dict(zip(held.tolist(), codes.tolist(), strict=True))
    asked = np.array(
        probes + held.tolist()[::3] + [k + 1 for k in held.tolist() if k < 2**64 - 1], np.uint64
    )
    assert main.find(asked).tolist() == [want.get(k, -1) for k in asked.tolist()]
    half = held.size // 2  # the other half in the delta
    split = _TextIndex(held[:half], codes[:half], held[half:], codes[half:], (), buf,
                       *_directory(held[:half]))  # fmt: skip
    assert split.find(asked).tolist() == [want.get(k, -1) for k in asked.tolist()]


@pytest.mark.parametrize(("read_at", "cap"), [((), 8), ((3,), 8), ((1, 4), 8), ((), 2)])
def test_old_codes_are_written_when_read_through_every_remap_since(read_at, cap, monkeypatch):
    """An extension writes only the batch's codes: each row's old part is left
    pending (EncodedTable.pending) and written when read -- ``codes``, ``column``,
    or ``take`` reaching into it, not ``take`` of the batch's rows -- through the
    remap of every append since (ranks move when values are inserted below them).
    Six appends, read after none, one or two of them: the codes encoding all gives.
    A row waits for at most ``_MAX_PENDING`` appends (``cap``), then the next append
    writes it (a chain keeps the code matrices it reads from alive)."""
    import facet.encoding_append as ea

    monkeypatch.setattr(ea, "_MAX_PENDING", cap)
    rng = np.random.default_rng(3)
    n = 700
    table = pa.table(
        {
            "x": pa.array(
                [None if k % 9 == 0 else int(v) for k, v in enumerate(rng.integers(0, 10**6, n))]
            ),  # fmt: skip
            "f": rng.random(n).round(3),
            "s": [f"w{i}" for i in rng.integers(0, 90, n)],
        }
    )
    rules = load_dcs(None, ["not(t.x < t'.x and t.f > t'.f)", "not(t.s = t'.s and t.x != t'.x)"])
    use = analyze(rules)
    enc = encode(_source(table.slice(0, 100), False), use, {}, DEFAULT)
    state = prepare(enc, table.slice(0, 100), use, {})
    for step, hi in enumerate(range(200, n + 1, 100)):
        out = extend(
            enc, state, table.slice(0, hi - 100), _source(table.slice(hi - 100, 100), False),
            use, {}, DEFAULT,
        )  # fmt: skip
        assert out is not None
        enc, state = out
        assert set(enc.pending) == set(enc.index.values())  # no old code written
        longest = max(len(p.segments) for p in enc.pending.values())
        assert longest <= cap
        if not read_at:  # a segment per append since the last write
            assert longest == step % cap + 1
        want = encode(_source(table.slice(0, hi), False), use, {}, DEFAULT)
        batch = np.arange(hi - 100, hi)
        assert np.array_equal(enc.take("x", batch), want.column("x")[batch])
        assert np.array_equal(enc.take("f", slice(hi - 100, None)), want.column("f")[hi - 100 :])
        assert set(enc.pending) == set(enc.index.values())  # the batch's rows: none written
        if step in read_at:
            assert np.array_equal(enc.take("x", batch - 1), want.column("x")[batch - 1])
            assert enc.index["x"] not in enc.pending  # reached into the old rows: written
            _coded_alike(use, enc, want)
            assert not enc.pending
    _coded_alike(use, enc, encode(_source(table, False), use, {}, DEFAULT))
    assert not enc.pending
