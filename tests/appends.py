"""The check shared by the append tests (tests/test_key_tallies.py,
tests/test_dominance_index.py): a Detector on the table's first rows, then one
append per cut, each equal to the naive violations holding a row of its batch."""

from __future__ import annotations

import pyarrow as pa

import facet
from facet.detector import _ScopedSession
from tests.naive import naive_pairs


def within(pairs: set, lo: int, hi: int) -> set:
    """The violations among rows ``lo .. hi - 1`` (a single-tuple DC's are rows)."""
    return {p for p in pairs if all(lo <= r < hi for r in (p if isinstance(p, tuple) else (p,)))}


def rows_of(pairs: set) -> set:
    return {r for p in pairs for r in (p if isinstance(p, tuple) else (p,))}


def appends_equal_naive(table: pa.Table, rules: list, texts: list[str], bounds: list[int],
                        all_counted: bool) -> None:  # fmt: skip
    """Appends of ``table`` cut at ``bounds`` (``[0, base end, ..., n]``) give the
    naive counts, rows involved and totals; the first result answered without a
    run (tallies, indexes: ``all_counted`` says every non-empty-base append is)
    also gives the naive pairs on demand."""
    full = [naive_pairs(table, dc) for dc in rules]
    det = facet.Detector(table.slice(0, bounds[1]), dcs=rules)
    asked = False
    for lo, hi in zip(bounds[1:-1], bounds[2:], strict=True):
        res = det.append(table.slice(lo, hi - lo))
        counted = isinstance(res._session, _ScopedSession)
        # an empty base's first batch encodes all (facet/encoding_append.py)
        assert counted or bounds[1] == 0 or not all_counted
        for i, d in enumerate(res.dcs):
            want = within(full[i], 0, hi) - within(full[i], 0, lo)
            assert d.violations == len(want), texts[i]
            assert d.rows_involved == len(rows_of(want)), texts[i]
        if counted and not asked:  # rows and pairs of such a result, on demand
            asked = True
            got = res.pairs()
            cols = [got.column(c).to_pylist() for c in ("dc", "t1", "t2")]
            for i in range(len(rules)):
                mine = {
                    a if b is None else (a, b) for dc, a, b in zip(*cols, strict=True) if dc == i
                }
                assert mine == within(full[i], 0, hi) - within(full[i], 0, lo), texts[i]
    assert [d["violations"] for d in det.totals()["dcs"]] == [len(f) for f in full]
