"""Tax-like table generator for any row count.

Built from the clean 40k-row sample of the Tax table (``tax_clean_0040k.csv``, see
``data/README.md`` for its source and licence). Every clean row is drawn so that

* ``zip -> city``, ``zip -> state`` and ``area_code -> state`` hold: the location
  ``(zip, city, state, area_code)`` of a row is the location of a random sample row;
* ``(area_code, phone)`` is unique: phones are random ``NNN-NNNN`` numbers, redrawn on
  collision within an area code;
* ``not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)`` holds: salary is
  an integer in a 5,000-wide bracket ``(5000*(b-1), 5000*b]`` (bracket frequencies from the
  sample, whose salaries are the bracket tops 5000..100000) and ``rate`` is the sample's rate
  for ``(state, bracket)`` rounded to one decimal; the sample's schedules are non-decreasing in
  salary within each state. The sample's one ``NaN`` entry (CT, 10000) is kept as the text
  ``NaN`` (NULL under docs/semantics.md §4.3);
* ``f_name`` and ``gender`` come from one sample row (the sample's ``f_name -> gender``),
  ``l_name`` from another, ``(marital_status, has_child)`` from a third;
* exemptions are the sample's, which are a function of ``(state, marital_status, has_child)``.

Then ``round(error_rate * rows)`` distinct rows get one error each, the four kinds in turn:
a typo in ``city`` (breaks ``zip -> city``), a different ``state`` (breaks ``zip -> state``,
``area_code -> state`` and usually the salary/rate DC), a ``rate`` 0.5-2.0 too low (too high
where that would go below 0) for the salary (breaks the salary/rate DC), and the ``phone`` of
another clean row of the same area code (breaks ``not(t.area_code = t'.area_code and
t.phone = t'.phone)``).

Output: the sample's header; numbers as text like the sample: salary an integer, rate with one
decimal, zip as 5-digit text with leading zeros (the sample drops them: ``1907``). Everything is
vectorized and driven by one seeded ``numpy.random.Generator``, so a seed gives the same table
on every run.

    python data/taxgen.py --rows 1000000 --out bench/work/tax_1m.csv [--seed 0] [--error-rate 0.001]

A path ending in ``.parquet`` writes Parquet with typed columns (see ``to_typed``).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

COLUMNS = [
    "f_name",
    "l_name",
    "gender",
    "area_code",
    "phone",
    "city",
    "state",
    "zip",
    "marital_status",
    "has_child",
    "salary",
    "rate",
    "single_exemp",
    "married_exemp",
    "child_exemp",
]

SAMPLE_NAME = "tax_clean_0040k.csv"
BRACKET = 5000  # width of a salary bracket; the sample's salaries are 5000, 10000, ..., 100000
PHONE_LO, PHONE_HI = 1_000_000, 10_000_000  # phones 100-0000 .. 999-9999 (sample: first digit 1-9)
ERROR_KINDS = ("city_typo", "state_swap", "bad_rate", "dup_phone")

_REPO = Path(__file__).resolve().parent.parent


def find_sample(path: str | os.PathLike | None = None) -> Path:
    """Locate the clean Tax sample: ``path``, ``$FACET_TAX_SAMPLE`` or ``data/tax/`` in the repo."""
    candidates = []
    if path is not None:
        candidates.append(Path(path))
    if os.environ.get("FACET_TAX_SAMPLE"):
        candidates.append(Path(os.environ["FACET_TAX_SAMPLE"]))
    candidates += [
        _REPO / "data" / "tax" / SAMPLE_NAME,
    ]
    for c in candidates:
        if c.is_file():
            return c
    raise FileNotFoundError(
        f"clean Tax sample {SAMPLE_NAME} not found (looked in: "
        + ", ".join(str(c) for c in candidates)
        + "); pass --sample PATH or set FACET_TAX_SAMPLE"
    )


def _codes(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[str]]:
    """Dense codes and dictionary of a string column."""
    enc = pc.dictionary_encode(col).combine_chunks()
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary.to_pylist()


class _Sample:
    """Distributions taken from the clean sample, as code arrays + dictionaries."""

    def __init__(self, path: Path):
        table = pacsv.read_csv(
            path,
            convert_options=pacsv.ConvertOptions(
                column_types={c: pa.string() for c in COLUMNS}, strings_can_be_null=False
            ),
        )
        missing = [c for c in COLUMNS if c not in table.column_names]
        if missing:
            raise ValueError(f"{path}: missing columns {missing}")
        self.n = table.num_rows
        codes = {c: _codes(table[c]) for c in COLUMNS}
        self.codes = {c: v[0] for c, v in codes.items()}
        self.dicts = {c: v[1] for c, v in codes.items()}
        self.dicts["zip"] = [z.zfill(5) for z in self.dicts["zip"]]
        n_state = len(self.dicts["state"])

        # marital_status x has_child joint
        self.n_ms = len(self.dicts["marital_status"])
        self.n_hc = len(self.dicts["has_child"])
        ms, hc, st = self.codes["marital_status"], self.codes["has_child"], self.codes["state"]

        # exemptions: a function of (state, marital_status, has_child) in the sample
        key = (st * self.n_ms + ms) * self.n_hc + hc
        n_key = n_state * self.n_ms * self.n_hc
        self.exemp = {}
        for c in ("single_exemp", "married_exemp", "child_exemp"):
            d = self.dicts[c]
            if "0" not in d:
                d.append("0")
            table_ = np.full(n_key, d.index("0"), dtype=np.int64)  # unseen combination: 0
            table_[key] = self.codes[c]
            self.exemp[c] = table_

        # salary brackets and the per-state rate schedule (in tenths; -1 = NaN)
        salary = np.array([int(float(s)) for s in self.dicts["salary"]])[self.codes["salary"]]
        bracket = np.clip((salary + BRACKET - 1) // BRACKET, 1, None)  # 1-based
        self.n_bracket = int(bracket.max())
        self.bracket = bracket - 1  # 0-based per sample row
        rate_vals = np.array([_to_float(r) for r in self.dicts["rate"]])[self.codes["rate"]]
        sched = np.full((n_state, self.n_bracket), np.nan)
        sched[st, self.bracket] = rate_vals
        # fill (state, bracket) cells the sample lacks from the nearest lower, else higher, one
        for s in range(n_state):
            row = sched[s]
            seen = ~np.isnan(row)
            if not seen.any():
                row[:] = 0.0
                continue
            idx = np.where(seen, np.arange(self.n_bracket), -1)
            idx = np.maximum.accumulate(idx)
            first = int(np.argmax(seen))
            idx[idx < 0] = first
            sched[s] = row[idx]
        # keep the sample's own NaN entries (cells whose rate is the text NaN)
        for s, b in zip(st[np.isnan(rate_vals)], self.bracket[np.isnan(rate_vals)], strict=True):
            sched[s, b] = np.nan
        tenths = np.where(np.isnan(sched), -1, np.round(sched * 10)).astype(np.int64)
        ok = tenths >= 0
        for s in range(n_state):
            v = tenths[s][ok[s]]
            if np.any(np.diff(v) < 0):
                raise ValueError(f"{path}: rate schedule of {self.dicts['state'][s]} decreases")
        self.rate_tenths = tenths
        self.max_tenths = int(tenths.max())


def _to_float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        return float("nan")


@functools.lru_cache(maxsize=4)
def _load_sample(path: str) -> _Sample:
    return _Sample(Path(path))


def _dict_column(codes: np.ndarray, dictionary: list[str]) -> pa.Array:
    arr = pa.DictionaryArray.from_arrays(
        pa.array(codes.astype(np.int32)), pa.array(dictionary, type=pa.string())
    )
    return arr.dictionary_decode()


def _fixed_width_column(chars: np.ndarray) -> pa.Array:
    """String column from an (n, w) uint8 array of ASCII characters."""
    n, w = chars.shape
    offsets = np.arange(n + 1, dtype=np.int32) * w
    return pa.StringArray.from_buffers(
        n, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(chars).tobytes())
    )


@functools.lru_cache(maxsize=4)
def _digit_table(width: int) -> np.ndarray:
    """(10**width, width) uint8 ASCII digits of 0 .. 10**width - 1, zero-padded."""
    v = np.arange(10**width, dtype=np.int64)
    pows = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    return ((v[:, None] // pows) % 10 + ord("0")).astype(np.uint8)


def _phone_column(phone: np.ndarray) -> pa.Array:
    chars = np.empty((len(phone), 8), dtype=np.uint8)
    chars[:, :3] = _digit_table(3)[phone // 10_000]
    chars[:, 3] = ord("-")
    chars[:, 4:] = _digit_table(4)[phone % 10_000]
    return _fixed_width_column(chars)


def _unique_phones(rng: np.random.Generator, group: np.ndarray) -> np.ndarray:
    """Random 7-digit numbers, distinct within each group (redraw collisions until none)."""
    n = len(group)
    phone = rng.integers(PHONE_LO, PHONE_HI, size=n, dtype=np.int64)
    span = PHONE_HI
    for _ in range(100):
        key = group * span + phone
        order = np.argsort(key, kind="stable")  # stable: same table on every machine
        ks = key[order]
        dup = np.zeros(n, dtype=bool)
        dup[order[1:][ks[1:] == ks[:-1]]] = True  # all but the first of each equal run
        redo = np.flatnonzero(dup)
        if len(redo) == 0:
            return phone
        phone[redo] = rng.integers(PHONE_LO, PHONE_HI, size=len(redo), dtype=np.int64)
    raise RuntimeError("could not draw unique phones (an area code has too many rows)")


_LETTERS = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", dtype=np.uint8)


def _typo(city: str, op: int, pos: float, letter: int) -> str:
    """One-character typo of ``city``: 0 replace, 1 delete, 2 swap neighbours, 3 insert."""
    n = len(city)
    i = min(int(pos * n), n - 1)
    ch = chr(_LETTERS[letter])
    if op == 1 and n > 1:
        out = city[:i] + city[i + 1 :]
    elif op == 2 and n > 1 and city[min(i, n - 2)] != city[min(i, n - 2) + 1]:
        j = min(i, n - 2)
        out = city[:j] + city[j + 1] + city[j] + city[j + 2 :]
    elif op == 3:
        out = city[:i] + ch + city[i:]
    else:
        out = city[:i] + ch + city[i + 1 :]
    if out == city or not out.strip():
        out = city + ch
    return out


def generate_tax(
    rows: int,
    seed: int = 0,
    error_rate: float = 0.001,
    sample: str | os.PathLike | None = None,
) -> pa.Table:
    """A Tax-like table of ``rows`` rows, every column a string as read from CSV.

    ``error_rate`` is the fraction of rows that get one injected error (see module doc)."""
    if rows < 0:
        raise ValueError("rows must be >= 0")
    if not 0.0 <= error_rate <= 1.0:
        raise ValueError("error_rate must be in [0, 1]")
    s = _load_sample(str(find_sample(sample)))
    rng = np.random.default_rng(seed)
    n = int(rows)

    # clean rows --------------------------------------------------------------------------
    loc = rng.integers(0, s.n, size=n)  # (zip, city, state, area_code) of one sample row
    who = rng.integers(0, s.n, size=n)  # (f_name, gender)
    last = rng.integers(0, s.n, size=n)  # l_name
    fam = rng.integers(0, s.n, size=n)  # (marital_status, has_child)
    pay = rng.integers(0, s.n, size=n)  # salary bracket
    within = rng.integers(1, BRACKET + 1, size=n)  # salary offset inside the bracket

    state = s.codes["state"][loc]
    area = s.codes["area_code"][loc]
    ms = s.codes["marital_status"][fam]
    hc = s.codes["has_child"][fam]
    bracket = s.bracket[pay]
    salary = bracket * BRACKET + within
    rate = s.rate_tenths[state, bracket]
    city = s.codes["city"][loc]
    phone = _unique_phones(rng, area)
    exkey = (state * s.n_ms + ms) * s.n_hc + hc

    # errors ------------------------------------------------------------------------------
    n_err = min(n, int(round(error_rate * n)))
    err_rows = rng.choice(n, size=n_err, replace=False) if n_err else np.empty(0, np.int64)
    kind = np.arange(n_err) % len(ERROR_KINDS)
    rng.shuffle(kind)
    city_dict = list(s.dicts["city"])

    # city typo: new dictionary entries appended after the sample's cities
    rows_t = np.sort(err_rows[kind == 0])
    ops = rng.integers(0, 4, size=len(rows_t))
    poss = rng.random(len(rows_t))
    letters = rng.integers(0, len(_LETTERS), size=len(rows_t))
    typos = [
        _typo(city_dict[c], int(o), float(p), int(ch))
        for c, o, p, ch in zip(city[rows_t], ops, poss, letters, strict=True)
    ]
    city[rows_t] = len(city_dict) + np.arange(len(rows_t))
    city_dict += typos

    # state swap: any other state (rate, exemptions and area code stay)
    rows_s = np.sort(err_rows[kind == 1])
    n_state = len(s.dicts["state"])
    state_out = state.copy()
    state_out[rows_s] = (state[rows_s] + rng.integers(1, n_state, size=len(rows_s))) % n_state

    # bad rate: 0.5 to 2.0 lower than the schedule (higher where that would go below 0)
    rows_r = np.sort(err_rows[kind == 2])
    delta = rng.integers(5, 21, size=len(rows_r))
    cur = rate[rows_r]
    cur = np.where(cur < 0, s.rate_tenths[s.rate_tenths >= 0].max() // 2, cur)  # NaN cell
    new = np.where(cur - delta >= 0, cur - delta, cur + delta)
    rate[rows_r] = new

    # duplicated phone: the phone of a random other clean row of the same area code
    rows_p = np.sort(err_rows[kind == 3])
    if len(rows_p):
        is_p = np.zeros(n, dtype=bool)
        is_p[rows_p] = True
        cand = np.flatnonzero(~is_p)
        cand = cand[np.argsort(area[cand].astype(np.int16), kind="stable")]  # radix sort
        cand_area = area[cand]
        lo = np.searchsorted(cand_area, area[rows_p], side="left")
        hi = np.searchsorted(cand_area, area[rows_p], side="right")
        pick = lo + np.floor(rng.random(len(rows_p)) * (hi - lo)).astype(np.int64)
        has = hi > lo
        phone[rows_p[has]] = phone[cand[pick[has]]]

    # columns -----------------------------------------------------------------------------
    max_t = max(int(rate.max()) if n else 0, s.max_tenths)
    rate_dict = [f"{t // 10}.{t % 10}" for t in range(max_t + 1)] + ["NaN"]
    rate_codes = np.where(rate < 0, max_t + 1, rate)
    cols = {
        "f_name": _dict_column(s.codes["f_name"][who], s.dicts["f_name"]),
        "l_name": _dict_column(s.codes["l_name"][last], s.dicts["l_name"]),
        "gender": _dict_column(s.codes["gender"][who], s.dicts["gender"]),
        "area_code": _dict_column(area, s.dicts["area_code"]),
        "phone": _phone_column(phone),
        "city": _dict_column(city, city_dict),
        "state": _dict_column(state_out, s.dicts["state"]),
        "zip": _dict_column(s.codes["zip"][loc], s.dicts["zip"]),
        "marital_status": _dict_column(ms, s.dicts["marital_status"]),
        "has_child": _dict_column(hc, s.dicts["has_child"]),
        "salary": pc.cast(pa.array(salary, type=pa.int64()), pa.string()),
        "rate": _dict_column(rate_codes, rate_dict),
        "single_exemp": _dict_column(s.exemp["single_exemp"][exkey], s.dicts["single_exemp"]),
        "married_exemp": _dict_column(s.exemp["married_exemp"][exkey], s.dicts["married_exemp"]),
        "child_exemp": _dict_column(s.exemp["child_exemp"][exkey], s.dicts["child_exemp"]),
    }
    return pa.table([cols[c] for c in COLUMNS], names=COLUMNS)


_TYPED = {
    "area_code": pa.int64(),
    "salary": pa.int64(),
    "rate": pa.float64(),
    "single_exemp": pa.int64(),
    "married_exemp": pa.int64(),
    "child_exemp": pa.int64(),
}


def to_typed(table: pa.Table) -> pa.Table:
    """Numeric columns as numbers (``NaN`` rate -> null), text columns (zip included) as text."""
    cols = []
    for name in table.column_names:
        col = table[name]
        if name in _TYPED:
            if name == "rate":
                col = pc.if_else(pc.equal(col, "NaN"), pa.scalar(None, pa.string()), col)
            col = pc.cast(col, _TYPED[name])
        cols.append(col)
    return pa.table(cols, names=table.column_names)


def write_table(table: pa.Table, out: str | os.PathLike) -> None:
    """CSV with the sample's header and minimal quoting, or typed Parquet for ``*.parquet``."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    if out.suffix == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(to_typed(table), tmp)
    else:
        import polars as pl

        pl.from_arrow(table).write_csv(tmp)
    os.replace(tmp, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Generate a Tax-like table (CSV, or Parquet).")
    ap.add_argument("--rows", type=int, required=True, help="number of rows")
    ap.add_argument("--out", required=True, help="output path (.csv or .parquet)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--error-rate", type=float, default=0.001, help="fraction of rows with an error"
    )
    ap.add_argument("--sample", default=None, help=f"path of {SAMPLE_NAME} (default: search)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    try:
        table = generate_tax(
            args.rows, seed=args.seed, error_rate=args.error_rate, sample=args.sample
        )
    except (FileNotFoundError, ValueError) as e:
        print(f"taxgen: {e}", file=sys.stderr)
        return 2
    t1 = time.perf_counter()
    write_table(table, args.out)
    t2 = time.perf_counter()
    print(
        f"taxgen: {args.rows} rows -> {args.out} (generate {t1 - t0:.2f}s, write {t2 - t1:.2f}s)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
