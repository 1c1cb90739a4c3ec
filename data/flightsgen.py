"""Flights-like table generator for any row count, with realistic skew.

Stands in for the Flights dataset of the FACET paper (PVLDB 2022, Table 2: monthly US domestic
flight records 1990-2009, one row per origin, destination and month), which is not available
offline. Its two DCs there are

* phi8: ``not(t.origin = t'.dest and t.dest = t'.origin and t.distance != t'.distance)``;
* phi9: ``not(t.origin = t'.origin and t.dest = t'.dest and t.flights > t'.flights and
  t.passengers < t'.passengers)``.

Clean rows are drawn so that both hold:

* airports: ``max(400, ceil(sqrt(rows / 60)))`` of them, with distinct random 3-letter codes,
  made-up ``City, ST`` names and random coordinates (mostly the lower 48 states, a few in
  Alaska and Hawaii); airport ``i`` (0-based) has the Zipf weight ``1 / (i + 1) ** ZIPF_S``;
* routes: ordered airport pairs, ``origin != dest``. Route ``(o, d)`` gets
  ``min(MONTHS, c * w_o * w_d)`` rows in expectation (randomly rounded, then nudged so the row
  count is exact), ``c`` chosen so the expectations add up to ``rows``. So hub-to-hub routes run
  every month and hubs carry a large share of the rows (the top 5% of airports are the origin
  of about half of them). A route's rows are consecutive months starting at a random month of
  1990-01 .. 2009-12, at most one row per route and month;
* ``distance``: the great-circle distance (miles, at least 50) of the *unordered* airport pair,
  so phi8 holds;
* route constants: seats per flight (bigger aircraft on longer and busier routes), a load factor
  (permille), a base monthly frequency (busier for hub pairs). A row's ``flights`` is the base
  frequency times a seasonal factor and a random factor (at least 1), ``seats = flights *
  seats_per_flight`` and ``passengers = flights * seats_per_flight * load_permille // 1000``:
  within a route, more flights never means fewer passengers, so phi9 holds.

Then ``round(error_rate * rows)`` distinct rows get one error each, the two kinds in turn:

* ``distance``: 1-9 miles off (up or down; breaks phi8 with every row of the reverse route).
  Drawn only from rows whose reverse route has rows, so every such error is a violation;
* ``passengers``: not monotone in flights within the route: below the route's smallest clean
  passenger count (times 0.5-0.95) where the row has more than the route's fewest flights, else
  above the largest (times 1.05-1.5, plus 1). Drawn only from rows of routes whose flights are
  not all equal, so every such error is a violation (with the route's rows of fewest, resp.
  most, flights).

If there are not enough eligible rows (tiny tables, huge error rates), fewer errors are made.
Rows are output by month (1990-01 first), in random order within a month. Everything is
vectorized and driven by one seeded ``numpy.random.Generator``, so a seed gives the same table on
every run.

    python data/flightsgen.py --rows 1000000 [--seed 0] [--error-rate 0.001] OUT.csv|OUT.parquet

Columns (``COLUMNS``): ``origin``, ``dest`` (3-letter codes), ``origin_city``, ``dest_city``
(``City, ST``), ``month`` (``YYYY-MM``) as text; ``flights``, ``seats``, ``passengers``,
``distance`` (miles) as int64. CSV has a header and quotes where needed (the city names have
commas); Parquet keeps the types.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

COLUMNS = [
    "origin",
    "dest",
    "origin_city",
    "dest_city",
    "month",
    "flights",
    "seats",
    "passengers",
    "distance",
]
TYPES = {c: pa.string() for c in COLUMNS[:5]} | {c: pa.int64() for c in COLUMNS[5:]}
SCHEMA = pa.schema([(c, TYPES[c]) for c in COLUMNS])

FIRST_YEAR, YEARS = 1990, 20
MONTHS = 12 * YEARS  # 1990-01 .. 2009-12
MIN_AIRPORTS = 400
ZIPF_S = 1.1  # airport weight 1 / rank ** ZIPF_S
MIN_DISTANCE = 50  # miles
EARTH_RADIUS = 3958.8  # miles
ERROR_KINDS = ("distance", "passengers")

_STATES = [
    "AL",
    "AR",
    "AZ",
    "CA",
    "CO",
    "CT",
    "DE",
    "FL",
    "GA",
    "IA",
    "ID",
    "IL",
    "IN",
    "KS",
    "KY",
    "LA",
    "MA",
    "MD",
    "ME",
    "MI",
    "MN",
    "MO",
    "MS",
    "MT",
    "NC",
    "ND",
    "NE",
    "NH",
    "NJ",
    "NM",
    "NV",
    "NY",
    "OH",
    "OK",
    "OR",
    "PA",
    "RI",
    "SC",
    "SD",
    "TN",
    "TX",
    "UT",
    "VA",
    "VT",
    "WA",
    "WI",
    "WV",
    "WY",
]
_ONSETS = [
    "b",
    "br",
    "c",
    "ch",
    "cl",
    "d",
    "f",
    "g",
    "gr",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "pr",
    "r",
    "s",
    "st",
    "t",
    "tr",
    "v",
    "w",
]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou"]
_CODAS = ["", "n", "r", "s", "l", "m", "nd", "rt", "ck", "ll"]
_SUFFIXES = ["", "", "", " City", "ville", "ton", " Falls", " Springs", "burg", "field"]


def n_airports(rows: int) -> int:
    """Airports for ``rows`` rows: a few hundred, more when the routes would run out of months."""
    return max(MIN_AIRPORTS, math.ceil(math.sqrt(max(rows, 0) / 60)))


def _codes(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct random 3-letter codes."""
    v = rng.choice(26**3, size=n, replace=False)
    a = ord("A")
    return [chr(a + x // 676) + chr(a + x // 26 % 26) + chr(a + x % 26) for x in v.tolist()]


def _city_names(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` made-up ``City, ST`` names (distinct)."""
    syll = rng.integers(1, 3, size=n) + 1  # 2 or 3 syllables
    parts = [rng.integers(0, len(p), size=(n, 3)) for p in (_ONSETS, _VOWELS, _CODAS)]
    suffix = rng.integers(0, len(_SUFFIXES), size=n)
    state = rng.integers(0, len(_STATES), size=n)
    out, seen = [], set()
    for i in range(n):  # per airport, not per row
        name = "".join(
            _ONSETS[parts[0][i, k]] + _VOWELS[parts[1][i, k]] + _CODAS[parts[2][i, k]]
            for k in range(syll[i])
        )
        name = name.capitalize() + _SUFFIXES[suffix[i]] + ", " + _STATES[state[i]]
        while name in seen:
            name = name.replace(",", "a,", 1)
        seen.add(name)
        out.append(name)
    return out


def _coordinates(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Latitude and longitude (degrees): lower 48 mostly, ~4% Alaska, ~2% Hawaii."""
    lat = rng.uniform(26.0, 48.5, size=n)
    lon = rng.uniform(-123.0, -70.0, size=n)
    where = rng.random(n)
    ak, hi = where < 0.04, (where >= 0.04) & (where < 0.06)
    lat[ak] = rng.uniform(55.0, 68.0, size=int(ak.sum()))
    lon[ak] = rng.uniform(-165.0, -135.0, size=int(ak.sum()))
    lat[hi] = rng.uniform(19.0, 22.0, size=int(hi.sum()))
    lon[hi] = rng.uniform(-160.0, -155.0, size=int(hi.sum()))
    return lat, lon


def _distance_matrix(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Symmetric (exactly) integer great-circle distances in miles, at least ``MIN_DISTANCE``."""
    la, lo = np.radians(lat), np.radians(lon)
    dla = la[:, None] - la[None, :]
    dlo = lo[:, None] - lo[None, :]
    h = np.sin(dla / 2) ** 2 + np.cos(la)[:, None] * np.cos(la)[None, :] * np.sin(dlo / 2) ** 2
    d = 2 * EARTH_RADIUS * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))
    d = np.maximum(np.rint(d), MIN_DISTANCE).astype(np.int64)
    upper = np.triu(d, 1)
    return upper + upper.T  # a function of the unordered pair; the diagonal is never used


def _route_rows(rng: np.random.Generator, w: np.ndarray, rows: int) -> np.ndarray:
    """Rows per route (flat ``n * n`` array, 0 on the diagonal), at most ``MONTHS``, summing to
    ``rows``: expectation ``min(MONTHS, c * w_o * w_d)``, randomly rounded, then nudged."""
    n = len(w)
    ww = np.outer(w, w)
    np.fill_diagonal(ww, 0.0)
    ww = ww.ravel()
    cap = MONTHS * n * (n - 1)
    if rows > cap:
        raise ValueError(f"{rows} rows exceed the {cap} route-months of {n} airports")
    if rows == 0:
        return np.zeros(n * n, dtype=np.int64)
    lo, hi = 0.0, rows / ww[ww > 0].min()  # at hi every route is at the cap
    for _ in range(200):  # bisection on c: sum(min(MONTHS, c * ww)) == rows
        c = (lo + hi) / 2
        if np.minimum(MONTHS, c * ww).sum() < rows:
            lo = c
        else:
            hi = c
        if hi - lo <= 1e-12 * hi:
            break
    e = np.minimum(MONTHS, hi * ww)
    m = np.floor(e).astype(np.int64)
    m += rng.random(len(e)) < (e - m)
    m[ww == 0] = 0
    for _ in range(100):  # nudge random routes (by weight) until the total is exact
        diff = rows - int(m.sum())
        if diff == 0:
            return m
        ok = (m < MONTHS) & (ww > 0) if diff > 0 else m > 0
        cand = np.flatnonzero(ok)
        p = ww[cand] / ww[cand].sum()
        pick = rng.choice(cand, size=min(abs(diff), len(cand)), replace=False, p=p)
        m[pick] += 1 if diff > 0 else -1
    raise RuntimeError("could not reach the exact row count")


def _group_reduce(values: np.ndarray, starts: np.ndarray, ufunc) -> np.ndarray:
    return ufunc.reduceat(values, starts) if len(values) else np.empty(0, values.dtype)


def _dict_column(codes: np.ndarray, dictionary: list[str]) -> pa.Array:
    arr = pa.DictionaryArray.from_arrays(
        pa.array(codes.astype(np.int32)), pa.array(dictionary, type=pa.string())
    )
    return arr.dictionary_decode()


def generate(rows: int, seed: int = 0, error_rate: float = 0.001) -> pa.Table:
    """A Flights-like table of exactly ``rows`` rows (schema ``SCHEMA``; see module doc).

    ``error_rate`` is the fraction of rows that get one injected error."""
    if rows < 0:
        raise ValueError("rows must be >= 0")
    if not 0.0 <= error_rate <= 1.0:
        raise ValueError("error_rate must be in [0, 1]")
    rng = np.random.default_rng(seed)
    n = int(rows)

    # airports ----------------------------------------------------------------------------
    na = n_airports(n)
    codes = _codes(rng, na)
    cities = _city_names(rng, na)
    lat, lon = _coordinates(rng, na)
    dist = _distance_matrix(lat, lon)
    w = 1.0 / np.arange(1, na + 1) ** ZIPF_S
    w /= w.sum()

    # routes ------------------------------------------------------------------------------
    per_route = _route_rows(rng, w, n)
    route = np.flatnonzero(per_route)  # flat index o * na + d, ascending
    cnt = per_route[route]
    nr = len(route)
    r_orig, r_dest = route // na, route % na
    r_dist = dist[r_orig, r_dest]
    strength = np.sqrt(w[r_orig] * w[r_dest]) / w[0]  # 1 for the two top hubs
    base = 2.0 + 600.0 * strength * rng.lognormal(0.0, 0.5, size=nr)  # flights per month
    spf = np.rint(
        np.clip(20 + 0.05 * r_dist + 120 * np.sqrt(strength) + rng.normal(0, 25, size=nr), 9, 420)
    ).astype(np.int64)  # seats per flight
    load = rng.integers(450, 920, size=nr)  # load factor, permille
    start = np.floor(rng.random(nr) * (MONTHS - cnt + 1)).astype(np.int64)

    # rows, grouped by route ----------------------------------------------------------------
    rid = np.repeat(np.arange(nr), cnt)
    first = np.cumsum(cnt) - cnt  # first row of each route
    month = start[rid] + (np.arange(n) - first[rid])
    season = 1.0 + 0.12 * np.sin(2 * np.pi * (month % 12 - 3) / 12)
    flights = np.maximum(1, np.rint(base[rid] * season * rng.lognormal(0.0, 0.15, size=n)))
    flights = flights.astype(np.int64)
    seats = flights * spf[rid]
    passengers = seats * load[rid] // 1000
    distance = r_dist[rid].copy()

    # errors ------------------------------------------------------------------------------
    n_err = min(n, int(round(error_rate * n)))
    kind = np.arange(n_err) % len(ERROR_KINDS)
    rng.shuffle(kind)
    n_d, n_p = int((kind == 0).sum()), int((kind == 1).sum())
    # distance: rows whose reverse route has rows
    rev = per_route[r_dest * na + r_orig] > 0
    elig_d = np.flatnonzero(rev[rid])
    rows_d = rng.choice(elig_d, size=min(n_d, len(elig_d)), replace=False)
    # passengers: rows of routes with unequal flights, not already erroneous
    f_min = _group_reduce(flights, first, np.minimum)
    f_max = _group_reduce(flights, first, np.maximum)
    p_min = _group_reduce(passengers, first, np.minimum)
    p_max = _group_reduce(passengers, first, np.maximum)
    taken = np.zeros(n, dtype=bool)
    taken[rows_d] = True
    elig_p = np.flatnonzero((f_max > f_min)[rid] & ~taken)
    rows_p = rng.choice(elig_p, size=min(n_p, len(elig_p)), replace=False)

    off = rng.integers(1, 10, size=len(rows_d)) * rng.choice([-1, 1], size=len(rows_d))
    distance[rows_d] = np.maximum(1, distance[rows_d] + off)
    distance[rows_d] = np.where(
        distance[rows_d] == r_dist[rid[rows_d]], distance[rows_d] + 1, distance[rows_d]
    )
    r = rid[rows_p]
    down = flights[rows_p] > f_min[r]
    low = np.floor(p_min[r] * rng.uniform(0.5, 0.95, size=len(rows_p))).astype(np.int64)
    high = np.floor(p_max[r] * rng.uniform(1.05, 1.5, size=len(rows_p))).astype(np.int64) + 1
    passengers[rows_p] = np.where(down, np.minimum(low, p_min[r] - 1), high)

    # output order: by month, random within a month ------------------------------------------
    perm = rng.permutation(n)
    order = perm[np.argsort(month[perm], kind="stable")]
    rid, month = rid[order], month[order]
    months = [f"{FIRST_YEAR + k // 12}-{k % 12 + 1:02d}" for k in range(MONTHS)]
    cols = {
        "origin": _dict_column(r_orig[rid], codes),
        "dest": _dict_column(r_dest[rid], codes),
        "origin_city": _dict_column(r_orig[rid], cities),
        "dest_city": _dict_column(r_dest[rid], cities),
        "month": _dict_column(month, months),
        "flights": pa.array(flights[order], type=pa.int64()),
        "seats": pa.array(seats[order], type=pa.int64()),
        "passengers": pa.array(passengers[order], type=pa.int64()),
        "distance": pa.array(distance[order], type=pa.int64()),
    }
    return pa.table([cols[c] for c in COLUMNS], schema=SCHEMA)


def write(table: pa.Table, path: str | os.PathLike) -> Path:
    """Typed Parquet for ``*.parquet``, else CSV (header, quoting where needed); written under a
    temporary name and renamed, so an interrupted run never leaves a partial file."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    try:
        if out.suffix == ".parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, tmp)
        else:
            import pyarrow.csv as pacsv

            pacsv.write_csv(table, tmp, pacsv.WriteOptions(quoting_style="needed"))
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Generate a Flights-like table (CSV, or Parquet).")
    ap.add_argument("out", nargs="?", help="output path (.csv or .parquet)")
    ap.add_argument("--out", dest="out_opt", default=None, help="output path (same as OUT)")
    ap.add_argument("--rows", type=int, required=True, help="number of rows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--error-rate", type=float, default=0.001, help="fraction of rows with an error"
    )
    args = ap.parse_args(argv)
    if (args.out is None) == (args.out_opt is None):
        ap.error("give the output path once: OUT or --out OUT")
    out = args.out or args.out_opt
    t0 = time.perf_counter()
    try:
        table = generate(args.rows, seed=args.seed, error_rate=args.error_rate)
    except ValueError as e:
        print(f"flightsgen: {e}", file=sys.stderr)
        return 2
    t1 = time.perf_counter()
    write(table, out)
    t2 = time.perf_counter()
    print(
        f"flightsgen: {args.rows} rows -> {out} (generate {t1 - t0:.2f}s, write {t2 - t1:.2f}s)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
