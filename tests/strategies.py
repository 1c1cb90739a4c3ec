"""Hypothesis strategies: typed tables with NULLs/ties/duplicates, random DCs, and
what reaches every kernel branch.

* :func:`tables` / :func:`dcs` / :func:`predicates`: small tables over tiny domains
  (<= 9 values, <= 60 rows) -- many pairs, many ties, fast to check naively.
* :func:`wide_tables` / :func:`wide_dcs`: also large domains (ints up to +-2^62 and
  int64's extremes, sparse values, floats from subnormal to huge with infinities,
  many distinct strings), long runs of ties (a few values repeated hundreds of
  times) and now and then a few hundred rows -- what the comparison sorts, binary
  searches, compressed ranks and hash tables of the kernels need.
* :func:`code_matrices` / :func:`group_batches`: the same shapes as kernel inputs
  (int32 codes, batches of groups with holes, overlaps and reflexive groups).
* :func:`kernel_configs` / :func:`configs`: configs with extreme thresholds
  (every kernel branch reachable on small inputs; see ``facet.kernels.tuning``).
* :func:`examples`: a test's example count, scaled down under the ``coverage``
  hypothesis profile (kernels in pure Python, ``scripts/kernel_coverage.sh``).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pyarrow as pa
from hypothesis import strategies as st

from facet.language.ast import DC, OPS, Col, Const, Predicate
from facet.planner.config import Config

#: the coverage run (``HYPOTHESIS_PROFILE=coverage``, kernels in pure Python)
COVERAGE = os.environ.get("HYPOTHESIS_PROFILE") == "coverage"


def examples(n: int, coverage: int | None = None) -> int:
    """``n`` examples; under the coverage profile ``coverage`` (default ``n // 20``,
    at least 5): the kernels then run as plain Python, 100-1000x slower."""
    if not COVERAGE:
        return n
    return coverage if coverage is not None else max(5, n // 20)


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
    "bigint": st.sampled_from(["-1", "0", "1", "3", str(2**62), str(-(2**62))]),
}

#: "bigint" columns hold values near int64's limits (+-2^62, INT64_MIN/MAX); they meet
#: floats and fractional constants, which facet compares by exact value
#: (docs/semantics.md §4.1; facet/numeric_ranks.py).


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
def predicates(draw, kinds: list[str], two_tuple_bias: int = 3, consts=None):
    """One predicate over columns ``c0..`` of ``kinds``; ``consts[j]`` (optional) draws
    the constants compared with column ``j`` (default: a few per kind)."""
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
        const = _CONSTS[kinds[a]] if consts is None else consts[a]
        c = Const(draw(const), quoted=kinds[a] == "str")
        if draw(st.booleans()):
            return Predicate(c, op, Col(side, f"c{a}"))
        return Predicate(Col(side, f"c{a}"), op, c)
    # single-tuple column comparison
    choices = [j for j in range(ncols) if comparable(kinds[a], kinds[j])]
    b = draw(st.sampled_from(choices))
    return Predicate(Col(side, f"c{a}"), op, Col(side, f"c{b}"))


@st.composite
def dcs(draw, kinds: list[str], min_preds: int = 1, max_preds: int = 5, consts=None):
    m = draw(st.integers(min_preds, max_preds))
    preds = tuple(draw(predicates(kinds, consts=consts)) for _ in range(m))
    dc = DC(preds)
    if dc.arity == 1 and all(
        c.tuple == 1 for p in preds for c in p.columns()
    ):  # the parser maps a lone t' to t; do the same
        preds = tuple(p.swapped_tuples() for p in preds)
        dc = DC(preds)
    return dc


# ------------------------------------------------------------------------ wide tables

WIDE_KINDS = ("int", "bigint", "float", "str")
_WIDE_ARROW = {**_ARROW, "bigint": pa.int64()}
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: exact float corner values: signed zeros, subnormals, the extremes, infinities, NaN (NULL)
FLOAT_CORNERS = (0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
                 -1.7976931348623157e308, math.inf, -math.inf, math.nan, 1e-300, -1e300)  # fmt: skip
_SMALL = {
    "int": [-3, -2, -1, 0, 1, 2, 3],
    "bigint": [-3, -2, -1, 0, 1, 2, 3],
    "float": [-1.5, -0.0, 0.0, 0.5, 1.0, 2.25, math.nan, 1e300],
    "str": ["", "a", "b", "B", "ab", "é", "z"],
}
#: characters of generated strings: ASCII, 2-, 3- and 4-byte UTF-8, a NUL
_ALPHABET = list("abcAB09 _-") + ["é", "ß", "中", "😀", "\x00", "\x7f"]
#: one value of a pool (ties, sparse columns): anything of the kind
_POOL = {
    "int": st.integers(-(2**53), 2**53),
    "bigint": st.one_of(
        st.integers(-(2**62), 2**62), st.sampled_from([INT64_MIN, INT64_MAX, 2**62, -(2**62)])
    ),
    "float": st.one_of(st.floats(), st.sampled_from(FLOAT_CORNERS)),
    "str": st.text(max_size=8),
}


def _wide_values(rng: np.random.Generator, kind: str, n: int, width: int) -> list:
    """``n`` values spread over a wide range (mostly distinct)."""
    if kind in ("int", "bigint"):
        if kind == "bigint":
            v = rng.integers(-(2**62), 2**62, n, endpoint=True).tolist()
            for i in np.flatnonzero(rng.random(n) < 0.02):
                v[i] = INT64_MIN if rng.random() < 0.5 else INT64_MAX
            return v
        bound = width if width > 0 else 2**53
        return rng.integers(-bound, bound, n, endpoint=True).tolist()
    if kind == "float":
        mag = 10.0 ** rng.uniform(-300.0, 300.0, n)
        v = (np.where(rng.random(n) < 0.5, -mag, mag)).tolist()
        for i in np.flatnonzero(rng.random(n) < 0.05):
            v[i] = FLOAT_CORNERS[int(rng.integers(len(FLOAT_CORNERS)))]
        return v
    lengths = rng.integers(0, 11, n)
    return ["".join(rng.choice(_ALPHABET, int(k)).tolist()) for k in lengths]


@st.composite
def _wide_column(draw, rng: np.random.Generator, kind: str, n: int) -> list:
    """One column's values: small, wide, sparse, long runs of ties or mixed."""
    shape = draw(st.sampled_from(["small", "wide", "sparse", "ties", "mixed"]))
    if shape == "small":
        pool = _SMALL[kind]
        vals = [pool[i] for i in rng.integers(0, len(pool), n)]
    elif shape == "wide":
        width = draw(st.sampled_from([0, 100, 2**31]))
        vals = _wide_values(rng, kind, n, width)
    else:
        k = draw(st.integers(1, 3 if shape == "ties" else 8))
        pool = [draw(_POOL[kind]) for _ in range(k)]
        if shape == "sparse":
            vals = [pool[i] for i in rng.integers(0, k, n)]
        elif shape == "ties":  # a few values, long runs (consecutive, or shuffled)
            idx = np.sort(rng.integers(0, k, n))
            if draw(st.booleans()):
                rng.shuffle(idx)
            vals = [pool[i] for i in idx]
        else:  # heavy hitters among many distinct values
            vals = _wide_values(rng, kind, n, 0)
            for i in np.flatnonzero(rng.random(n) < 0.6):
                vals[i] = pool[int(rng.integers(k))]
    null_p = draw(st.sampled_from([0.0, 0.0, 0.05, 0.3]))
    if null_p:
        for i in np.flatnonzero(rng.random(n) < null_p):
            vals[i] = None
    return vals


@st.composite
def wide_tables(draw, min_rows: int = 1, max_rows: int = 60, big_rows: int = 300,
                max_cols: int = 5, big_odds: int = 6):  # fmt: skip
    """A typed Arrow table ``c0..ck`` (``WIDE_KINDS`` columns) over large domains and
    long tie runs, ``min_rows..max_rows`` rows -- one time in ``big_odds`` up to
    ``big_rows`` (more than 64 distinct values: the comparison sorts, binary
    searches and hash tables), plus the kind of each column.  Values come from a
    seeded generator (hypothesis draws the shapes, pools and the seed)."""
    ncols = draw(st.integers(2, max_cols))
    kinds = [draw(st.sampled_from(WIDE_KINDS)) for _ in range(ncols)]
    big = big_rows > max_rows and draw(st.integers(1, big_odds)) == big_odds
    n = draw(st.integers(max_rows + 1, big_rows) if big else st.integers(min_rows, max_rows))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    cols = [draw(_wide_column(rng, k, n)) for k in kinds]
    if n > 1 and draw(st.booleans()):  # duplicate rows
        for i in np.flatnonzero(rng.random(n) < 0.1):
            j = int(rng.integers(n))
            for c in cols:
                c[i] = c[j]
    table = pa.table(
        {f"c{j}": pa.array(c, _WIDE_ARROW[k]) for j, (c, k) in enumerate(zip(cols, kinds))}
    )
    return table, kinds


def _const_text(kind: str, v) -> str | None:
    """A column value as constant text (``None``: not writable as a constant)."""
    if v is None:
        return None
    if kind == "float":
        return repr(float(v)) if math.isfinite(v) else None
    return str(v)


def table_consts(table: pa.Table, kinds: list[str]) -> list:
    """Per column, a strategy for constants: the usual few or one of the column's
    values (so row filters cut through tie runs and wide ranges)."""
    out = []
    for j, k in enumerate(kinds):
        vals = sorted(
            {t for v in table.column(f"c{j}").to_pylist() if (t := _const_text(k, v)) is not None}
        )
        out.append(st.one_of(_CONSTS[k], st.sampled_from(vals)) if vals else _CONSTS[k])
    return out


@st.composite
def wide_dcs(draw, table: pa.Table, kinds: list[str], min_preds: int = 1, max_preds: int = 4):
    """A random DC over a :func:`wide_tables` table, constants from its values too."""
    return draw(dcs(kinds, min_preds, max_preds, consts=table_consts(table, kinds)))


# ---------------------------------------------------------------------- kernel inputs

#: wide code domains: a few over 64 (past every "+ 64" slack), up to int32's limit
WIDE_DOMS = (65, 100, 1000, 1 << 20, 2**31 - 1)


@st.composite
def code_matrices(draw, rows: int = 3, max_n: int = 40, big_n: int = 300, big_odds: int = 8):
    """``(codes, doms)``: an int32 code matrix ``(rows, n)`` (-1 = NULL) and per row a
    bound ``doms[r]`` > its codes.  Rows are tiny domains (drawn code by code), wide
    domains (mostly distinct codes up to 2^31 - 2), sparse (a few codes spread over
    a wide domain), long runs of ties (1-3 codes hundreds of times), or heavy
    hitters among distinct codes; one time in ``big_odds`` ``n`` is ``max_n..big_n``."""
    big = draw(st.integers(1, big_odds)) == big_odds
    n = draw(st.integers(max_n + 1, big_n) if big else st.integers(1, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    codes = np.empty((rows, n), np.int32)
    doms = np.empty(rows, np.int64)
    for r in range(rows):
        shape = draw(st.sampled_from(["tiny", "tiny", "wide", "sparse", "ties", "mixed"]))
        if shape == "tiny":
            dom = draw(st.integers(1, 9))
            if n <= max_n:
                row = np.array([draw(st.integers(-1, dom - 1)) for _ in range(n)], np.int64)
            else:
                row = rng.integers(-1, dom, n)
        else:
            dom = draw(st.sampled_from(WIDE_DOMS))
            if shape == "wide":
                row = rng.integers(0, dom, n)
            else:
                k = draw(st.integers(1, 3 if shape == "ties" else 8))
                pool = np.unique(
                    np.r_[rng.integers(0, dom, k), [0, dom - 1][: draw(st.integers(0, 2))]]
                )
                if shape == "sparse":
                    row = pool[rng.integers(0, len(pool), n)]
                elif shape == "ties":
                    row = np.sort(pool[rng.integers(0, len(pool), n)])
                    if draw(st.booleans()):
                        rng.shuffle(row)
                else:
                    row = rng.integers(0, dom, n)
                    heavy = rng.random(n) < 0.6
                    row[heavy] = pool[rng.integers(0, len(pool), int(heavy.sum()))]
            null_p = draw(st.sampled_from([0.0, 0.05, 0.3]))
            row = np.where(rng.random(n) < null_p, -1, row)
        codes[r] = row
        doms[r] = dom
    return codes, doms


def shared_doms(doms: np.ndarray, pairs) -> np.ndarray:
    """Domains as the engine has them: rows compared with each other share one code
    space, so each row's bound becomes the largest of its component (``pairs``:
    ``(row a, row b)`` of every predicate)."""
    parent = list(range(len(doms)))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in pairs:
        parent[find(a)] = find(b)
    out = doms.copy()
    for r in range(len(doms)):
        out[r] = max(doms[q] for q in range(len(doms)) if find(q) == find(r))
    return out


def _place(rng, parts, tids, n, hole_p):
    """Append a side holding ``tids`` to ``parts``: a slice, maybe with a hole of
    other tids in it (at the start, inside or at the end); returns ``(S, E, HS, HE)``."""
    start = sum(len(p) for p in parts)
    if rng.random() < hole_p:
        others = np.setdiff1d(np.arange(n), tids)
        if len(others):
            h = rng.choice(others, size=min(len(others), int(rng.integers(1, 4))), replace=False)
            cut = int(rng.integers(0, len(tids) + 1))
            parts += [tids[:cut], h.astype(np.int32), tids[cut:]]
            return start, start + len(tids) + len(h), start + cut, start + cut + len(h)
    parts.append(tids)
    return start, start + len(tids), start, start


@st.composite
def group_batches(draw, n: int, max_groups: int = 4):
    """``(buf, desc)``: a batch of 1..``max_groups`` groups over tids ``0..n-1``:
    the whole table, reflexive subsets, pairs of subsets (disjoint, or overlapping
    heavily), sides that are sub-slices of another side; holes anywhere."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    parts: list[np.ndarray] = [np.empty(0, np.int32)]
    rows = []

    def subset():
        k = draw(st.sampled_from([0, 1, 2, n, -1]))
        k = int(rng.integers(0, n + 1)) if k < 0 else k
        return rng.choice(n, size=min(k, n), replace=False).astype(np.int32)

    for _ in range(draw(st.integers(1, max_groups))):
        shape = draw(st.sampled_from(["all", "refl", "pair", "overlap", "sub"]))
        hole_p = draw(st.sampled_from([0.0, 0.5]))
        if shape == "all":
            r = _place(rng, parts, rng.permutation(n).astype(np.int32), n, 0.0)
            rows.append(r + r)
        elif shape == "refl":
            r = _place(rng, parts, subset(), n, hole_p)
            rows.append(r + r)
        elif shape in ("pair", "overlap"):
            lt = subset()
            if shape == "overlap":
                extra = rng.choice(n, size=min(n, int(rng.integers(0, 4))), replace=False)
                rt = rng.permutation(np.union1d(lt[: int(rng.integers(0, len(lt) + 1))], extra))
            else:
                rt = subset()
            lr = _place(rng, parts, lt, n, hole_p)
            rr = _place(rng, parts, rt.astype(np.int32), n, hole_p)
            rows.append(lr + rr)
        else:  # one side a sub-slice of the other (which may have a hole)
            s, e, hs, he = _place(rng, parts, subset(), n, hole_p)
            a = s + int(rng.integers(0, e - s + 1))
            b = int(rng.integers(a, e + 1))
            inner = (a, b, a, a)
            rows.append((s, e, hs, he) + inner if draw(st.booleans()) else inner + (s, e, hs, he))
    buf = np.concatenate(parts).astype(np.int32)
    return buf, np.array(rows, np.int64).reshape(-1, 8)


# ---------------------------------------------------------------------------- configs

#: kernel thresholds (``facet.kernels.tuning``): the default first (hypothesis shrinks
#: to it), then extremes that force each branch.  Bounded so that no kernel allocates
#: more than a few MiB on codes up to 2^31 (a counting sort / histogram / code-indexed
#: array is sized by the domain).
KERNEL_EXTREMES = {
    "counting_sort_dense": (4, 1, 10**9),
    "counting_sort_sparse": (8, 0, 1, 64),
    "counting_sort_max_codes": (1 << 18, 0, 1 << 20),
    "count_histogram_span": (4, 0, 1, 64),
    "keyed_direct_codes": (1 << 16, 0, 1, 1 << 20),
    "nested_cost": (16, 0, 1, 1 << 30),
    "insertion_sort": (24, 0, 1, 3, 1 << 30),
    "dictionary_partitions": (256, 2, 4),
    "dictionary_few": (1 << 15, 0, 1, 2, 5),
    "nested_order_cost": (64, 0, 1, 1 << 30),
    "nested_order_scale": (16, 0, 1, 1 << 20),
    "nested_tiny_pairs": (32, 0, 1 << 30),
}
#: the rest: planning, execution, statistics and encoding
ENGINE_EXTREMES = {
    "order": ("planned", "written", "shuffle:1", "shuffle:7"),
    "inequality": (None, "hsm", "bhsm", "cdq", "iejoin"),
    "nested_pairs": (4096, 0, 0, 7),
    "bhsm_bins": (0, 1, 2, 3, 500),
    "hsm_max_cardinality": (64, 0, 1 << 30),
    "iejoin_min_cardinality": (64, 0),
    "iejoin_max_pairs_per_row": (64, 0, 1 << 30),
    "batch_work": (1 << 22, 1, 64),
    "pair_chunk": (1 << 18, 1, 7),
    "expand_candidates": (1 << 24, 1, 5),
    "hll_p": (14, 4, 8),
    "sample_rate": (0.01, 0.5, 1.0),
    "sketch_max_rows": (50_000_000, 0),
    "rank_histogram_span": (4, 0),
    "radix_rank_rows": (20_000, 0),
    "rank_sort_floats": (True, False),
    "rank_few_distinct": (8, 1, 1 << 30),
    "parallel_text_rows": (200_000, 0),
    "parallel_encode_rows": (100_000, 0),
    "fuse_split_tids": (1 << 18, 0),
}
#: (threads, parallel_work): one thread, or parts of any size on 2-3 threads
THREADS = ((None, 1 << 16), (1, 1 << 16), (2, 1), (3, 1))


@st.composite
def kernel_configs(draw, **fixed):
    """A :class:`Config` whose kernel thresholds are drawn from ``KERNEL_EXTREMES``
    (``fixed``: fields to set instead)."""
    fields = {f: draw(st.sampled_from(v)) for f, v in KERNEL_EXTREMES.items() if f not in fixed}
    return Config(**fields, **fixed)


def kernel_tunes(**fixed):
    """``Config(...).kernel_tuning()`` arrays of :func:`kernel_configs`."""
    return kernel_configs(**fixed).map(lambda c: c.kernel_tuning())


@st.composite
def configs(draw, **fixed):
    """A :class:`Config` with extreme kernel thresholds and planning / execution /
    encoding settings (forced algorithms, BHSM bins, nested off, tiny batches and
    pair chunks, threads with ``parallel_work=1``)."""
    threads, work = draw(st.sampled_from(THREADS))
    fields = {f: draw(st.sampled_from(v)) for f, v in ENGINE_EXTREMES.items() if f not in fixed}
    fields.update(threads=threads, parallel_work=work)
    return draw(kernel_configs(**{**fields, **fixed}))
