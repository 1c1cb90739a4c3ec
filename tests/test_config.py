"""``Config`` validates every field when built (planner/config.py): a value the engine
cannot run with is refused with one line naming the field, the value and the valid
range; every value it accepts gives the answer of the default config (tests/naive.py)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from dataclasses import fields

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import facet
from facet.language import parse_dc
from facet.planner.config import _RULES, DEFAULT, Config
from tests.naive import naive_pairs
from tests.strategies import examples

NAMES = [f.name for f in fields(Config)]

#: small tables reach the parallel and kernel paths from these (a base drawn for a run)
PARALLEL = {
    "threads": 2,
    "parallel_work": 0,
    "parallel_text_rows": 0,
    "parallel_encode_rows": 0,
    "radix_rank_rows": 0,
    "nested_pairs": 0,
    "fuse_split_tids": 0,
    "dictionary_few": 8,
    "key_prefilter": False,
}


def _table(n: int = 240) -> pa.Table:
    rng = np.random.default_rng(7)
    words = np.array(["a", "b", "é", "", "bb", "zz", "ab"] + [f"w{i}" for i in range(40)])
    return pa.table(
        {
            "a": pa.array(rng.integers(0, 9, n), pa.int64()),
            "b": pa.array(rng.integers(-3, 40, n), pa.int64(), mask=rng.random(n) < 0.05),
            "f": pa.array(rng.choice([0.5, 1.0, -2.25, 3.0, np.nan], n)),
            "s": pa.array(words[rng.integers(0, 12, n)], mask=rng.random(n) < 0.05),
            "k": pa.array(words[rng.integers(0, len(words), n)]),
        }
    )


TABLE = _table()
DCS = [
    "not(t.s = t'.s and t.a != t'.a)",
    "not(t.k = t'.k and t.s != t'.s)",
    "not(t.a < t'.a and t.b > t'.b)",
    "not(t.s = t'.s and t.b <= t'.b and t.f > t'.f)",
    "not(t.s != t'.s and t.a = t'.a and t.k = t'.k)",
    "not(t.a > t.b)",
]
OUTPUTS = ("count", "pairs", "blocks", "tuples", "cells", "components", "suspects")
EXPECTED = [naive_pairs(TABLE, parse_dc(d)[0]) for d in DCS]
_DEFAULT_ROWS: dict[str, pa.Table] = {}


def _default_rows(output: str) -> pa.Table:
    """The default config's row output (its pairs checked against naive elsewhere)."""
    if output not in _DEFAULT_ROWS:
        _DEFAULT_ROWS[output] = getattr(facet.detect(TABLE, dcs=DCS, output=output), output)()
    return _DEFAULT_ROWS[output]


def _pairs(res: facet.Result) -> list[set]:
    got: list[set] = [set() for _ in DCS]
    if res.output == "pairs":
        t = res.pairs()
        for d, a, b in zip(*(t.column(c).to_pylist() for c in ("dc", "t1", "t2")), strict=True):
            got[d].add(a if b is None else (a, b))
    else:
        t = res.blocks()
        for d, a, b in zip(*(t.column(c).to_pylist() for c in ("dc", "t1", "t2")), strict=True):
            if b is None:
                got[d].update(a)
            else:
                got[d].update((x, y) for x in a for y in b if x != y)
    return got


def _check_run(config: Config, output: str) -> None:
    """A run with ``config`` gives the default config's answer."""
    try:
        res = facet.detect(TABLE, dcs=DCS, output=output, config=config)
    except facet.FacetInputError as err:  # the documented bound on the suspects' cover
        total = sum(len(e) for e in EXPECTED)
        assert output == "suspects" and "Config.suspect_violations" in str(err), err
        assert total > config.suspect_violations
        return
    assert [d.violations for d in res.dcs] == [len(e) for e in EXPECTED]
    if output in ("pairs", "blocks"):
        assert _pairs(res) == EXPECTED
    elif output != "count":
        assert getattr(res, output)().equals(_default_rows(output))


def _values(name: str) -> st.SearchStrategy:
    """Anything, and the edges of the field's valid range."""
    rule = _RULES[name]
    edges: list = [getattr(DEFAULT, name)]
    if rule.kind in ("int", "pow2"):
        lo, hi = int(rule.lo), int(rule.hi)
        edges += [lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, 3, 5, 64, 1 << 20]
    elif rule.kind == "float":
        edges += [rule.lo, rule.hi, 1e-300, 0.5, 1.5, -0.0, float("inf"), float("nan")]
    elif rule.kind == "choice":
        edges += list(rule.choices) + ["", rule.choices[0].upper()]
    elif rule.kind == "order":
        edges += ["planned", "written", "shuffle:3", "shuffle:", "shuffle", "Planned"]
    anything = st.one_of(
        st.integers(-(2**70), 2**70),
        st.integers(-4, 70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.none(),
        st.text(max_size=4),
        st.sampled_from([np.int64(2), np.float64(0.5), np.bool_(True), "4", [4], 4.0]),
    )
    return st.one_of(st.sampled_from(edges), anything)


@settings(max_examples=examples(60, 6), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(data=st.data())
def test_config_refuses_a_value_in_one_line_or_runs_it_to_the_default_answer(data):
    """Arbitrary values of a few fields (over the default config, or one whose small
    thresholds send this table down the parallel and kernel paths): Config refuses
    them with one line naming the field, the value and the valid range, or a run
    with them finds the default config's answer in every output."""
    base = data.draw(st.sampled_from([{}, PARALLEL]))
    names = data.draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    changes = {name: data.draw(_values(name), label=name) for name in names}
    try:
        config = Config(**{**base, **changes})
    except facet.FacetInputError as err:
        event("refused")
        msg = str(err)
        assert "\n" not in msg
        bad = [n for n in names if msg.startswith(f"Config.{n}=")]
        assert bad, msg
        assert f"Config.{bad[0]}={changes[bad[0]]!r}"[:60] in msg
        assert "expected " in msg
        with pytest.raises(facet.FacetInputError):
            _RULES[bad[0]].check(bad[0], changes[bad[0]])
        return
    event("ran")
    for output in data.draw(
        st.lists(st.sampled_from(OUTPUTS[1:]), min_size=1, max_size=2, unique=True)
    ):
        _check_run(config, output)
    _check_run(config, "count")


def test_the_default_config_finds_the_naive_answer():
    for output in OUTPUTS:
        res = facet.detect(TABLE, dcs=DCS, output=output)
        assert [d.violations for d in res.dcs] == [len(e) for e in EXPECTED]
        if output in ("pairs", "blocks"):
            assert _pairs(res) == EXPECTED


def test_every_field_has_a_rule_and_the_defaults_keep_it():
    assert list(_RULES) == NAMES
    for name in NAMES:
        assert _RULES[name].check(name, getattr(DEFAULT, name)) == getattr(DEFAULT, name)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"dictionary_partitions": 3},
         "Config.dictionary_partitions=3: expected a power of two from 2 to 2^16"),
        ({"dictionary_partitions": 1},
         "Config.dictionary_partitions=1: expected a power of two from 2 to 2^16"),
        ({"counting_sort_dense": 0},
         "Config.counting_sort_dense=0: expected a whole number from 1 to 2^62"),
        ({"row_chunk": 0}, "Config.row_chunk=0: expected a whole number from 1 to 2^62"),
        ({"threads": 0}, "Config.threads=0: expected None or a whole number from 1 to 1,024"),
        ({"hll_p": 17}, "Config.hll_p=17: expected a whole number from 4 to 16"),
        ({"sample_rate": 0.0}, "Config.sample_rate=0.0: expected a number > 0 and <= 1"),
        ({"fuse_keyed": 1}, "Config.fuse_keyed=1: expected True or False (got int)"),
        ({"nested_pairs": 1.5}, "Config.nested_pairs=1.5: expected a whole number from 0 to "),
        ({"storage": "bitmap"},
         "Config.storage='bitmap': expected one of 'hybrid', 'arrays', 'bitmaps'"),
        ({"order": "shuffle"},
         "Config.order='shuffle': expected 'planned', 'written' or 'shuffle:<seed>'"),
    ],
)  # fmt: skip
def test_a_bad_value_names_the_field_the_value_and_the_range(changes, message):
    with pytest.raises(facet.FacetInputError) as err:
        Config(**changes)
    assert str(err.value).startswith(message)
    with pytest.raises(facet.FacetInputError):  # a copy is checked as well
        DEFAULT.but(**changes)


def test_but_refuses_an_unknown_field():
    with pytest.raises(facet.FacetInputError, match="Config has no field 'nested'"):
        DEFAULT.but(nested=1)


def test_numpy_numbers_are_held_as_python_ones():
    c = Config(threads=np.int64(2), sample_rate=np.float32(0.5), fuse_keyed=np.bool_(False))
    assert type(c.threads) is int and type(c.sample_rate) is float and c.fuse_keyed is False


#: the two reported crashes, in a process of their own (they killed it: a segmentation
#: fault in the dictionary kernel, a division by zero in the counting sort's test)
CRASH = textwrap.dedent(
    """
    import sys
    import pyarrow as pa
    import facet

    field, value = sys.argv[1], int(sys.argv[2])
    n = 60_000
    table = pa.table({"a": [f"x{i}" for i in range(n)], "b": [i % 7 for i in range(n)],
                      "c": [i % 13 for i in range(n)]})
    dcs = ["not(t.a = t'.a and t.b != t'.b)", "not(t.b = t'.b and t.c < t'.c)"]
    try:
        res = facet.detect(table, dcs=dcs, config=facet.Config(**{field: value}))
    except facet.FacetInputError as err:
        print(err)
        sys.exit(2)
    print("ran", [d.violations for d in res.dcs])
    """
)


@pytest.mark.parametrize(
    ("field", "value", "valid"),
    [
        ("dictionary_partitions", 3, "a power of two from 2 to 2^16"),
        ("dictionary_partitions", 1, "a power of two from 2 to 2^16"),
        ("counting_sort_dense", 0, "a whole number from 1 to 2^62"),
    ],
)
def test_the_reported_crashes_are_refused_by_config(field, value, valid):
    proc = subprocess.run(
        [sys.executable, "-c", CRASH, field, str(value)], capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    assert proc.stdout == f"Config.{field}={value}: expected {valid}\n"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"config": "fast"}, "config='fast': expected a facet.Config"),
        ({"config": {"threads": 1}}, "config={'threads': 1}: expected a facet.Config"),
        ({"limit": "3"}, "--limit must be a whole number >= 0, got '3'"),
        ({"limit": 1.5}, "--limit must be a whole number >= 0, got 1.5"),
        ({"timeout": "5"}, "--timeout must be a number of seconds > 0"),
    ],
)
def test_settings_of_the_wrong_type_are_input_errors(kwargs, message):
    with pytest.raises(facet.FacetInputError, match=re.escape(message)):
        facet.detect(TABLE, dcs=DCS[:1], output="pairs", **kwargs)
    if "config" in kwargs:
        with pytest.raises(facet.FacetInputError, match=re.escape(message)):
            facet.Detector(TABLE, dcs=DCS[:1], config=kwargs["config"])
        with pytest.raises(facet.FacetInputError, match=re.escape(message)):
            facet.explain(TABLE, dcs=DCS[:1], config=kwargs["config"])
