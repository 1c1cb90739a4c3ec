"""Contradictory DCs, tautologies, DCs of 20+ predicates, 500 DCs in one rules file
(docs/semantics.md §1, §2, §6): every count must be what tests/naive.py counts.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from tests.robustness.harness import (
    Case,
    api_params,
    assert_no_traceback,
    check_api,
    check_cli,
    cli_params,
    cli_runs_fixture,
    csv_text,
    run_api,
)

ROWS = 12
T = pa.table(
    {
        "a": pa.array([i % 4 if i != 5 else None for i in range(ROWS)], pa.int64()),
        "b": pa.array([(i * 7) % 5 for i in range(ROWS)], pa.int64()),
        "c": pa.array(["x", "y", None, "x", "z", "y", "x", "x", "y", "z", "x", None]),
        "d": pa.array([i / 4 - 1 for i in range(ROWS)], pa.float64()),
        "e": pa.array(
            [dt.datetime(2020, 1, 1 + i % 3, tzinfo=dt.UTC) for i in range(ROWS)],
            pa.timestamp("us", tz="UTC"),
        ),
        **{f"k{j}": pa.array([str((i >> (j % 3)) % 2) for i in range(ROWS)]) for j in range(25)},
    }
)
CSV = {
    "t.csv": csv_text(T.set_column(4, "e", pa.array([v.isoformat() for v in T["e"].to_pylist()])))
}
PARQUET = {"t.parquet": T}

CONTRADICTIONS = (
    "not(t.a < t'.a and t.a > t'.a)",
    "not(t.a = 1 and t.a = 2)",
    "not(t.a < t.a)",
    "not(t.a != t.a)",
    "not(t.a = t'.a and t.a != t'.a)",
    "not(t.a > 5 and t.a < 3)",
    "not(t.c = 'x' and t.c = 'y')",
    "not(t.d < t'.d and t'.d < t.d)",
    "not(t.e > '2020-01-03' and t.e < '2020-01-01')",
    "not(t.a <= t'.a and t.a > t'.a)",
)
TAUTOLOGIES = (
    "not(t.a = t.a)",
    "not(t.a <= t.a and t.a >= t.a)",
    "not(t.a >= t'.a and t.a <= t'.a)",
    "not(t.c = t.c and t'.c = t'.c)",
    "not(t.a = t'.a and t'.a = t.a)",
    "not(t.a = t'.a and t.a = t'.a and t.a = t'.a)",
    "not(t.a <= t'.a and t.a < t'.a)",
    "not(1 < t.a)",
    "not(t.a != t'.a)",
    "not(t.a = t'.b and t.b = t'.a)",
    "not(t.d >= t'.d)",
    "not(t.e = t'.e and t.e >= '2020-01-01')",
    "not(t.b > -1e308 and t.d < 1e308)",
)

#: predicates to cycle through for long DCs (each satisfiable on its own)
PIECES = (
    "t.a = t'.a",
    "t.b <= t'.b",
    "t.c = t'.c",
    "t.d >= t'.d",
    "t.a > -1",
    "t'.b < 100",
    "t.c != 'q'",
    "t.e <= t'.e",
    "t.d > -5",
    "t'.a >= t.b",
    "t.b != 9",
    "t.d <= t'.d",
)


def long_dc(n: int) -> str:
    return "not(" + " and ".join(PIECES[i % len(PIECES)] for i in range(n)) + ")"


LONG_DCS = (
    long_dc(20),
    long_dc(24),
    long_dc(60),
    "not(" + " and ".join(f"t.k{j} = t'.k{j}" for j in range(25)) + ")",
    ", ".join(f"k{j}" for j in range(21)) + " -> k21, k22",
    "t1&t2&" + "&".join(f"EQ(t1.k{j},t2.k{j})" for j in range(22)) + "&LT(t1.d,t2.d)",
    "not(" + " and ".join(f"t.k{j} = '0'" for j in range(25)) + ")",
    "¬(" + " ∧ ".join(f"t.k{j} ≠ t'.k{j + 1}" for j in range(21)) + ")",
)


def five_hundred() -> str:
    """500 cheap DCs, numbered r0..r499, in every syntax."""
    ops = ("<", "<=", ">", ">=", "=", "!=")
    lines = ["# 500 DCs"]
    for i in range(500):
        op = ops[i % len(ops)]
        kind = i % 5
        if kind == 0:
            lines.append(f"r{i}: not(t.a = t'.a and t.b {op} t'.b and t.d > {i / 100 - 2})")
        elif kind == 1:
            lines.append(f"r{i}: k{i % 25} -> k{(i + 1) % 25}")
        elif kind == 2:
            lines.append(f"r{i}: t1&t2&EQ(t1.c,t2.c)&LT(t1.d,t2.d)&GT(t1.b,{i % 5})")
        elif kind == 3:
            lines.append(f"r{i}: not(t.d {op} {i / 50 - 5} and t.a != {i % 4})")
        else:
            lines.append(f"r{i}: ¬(t.e {op} t'.e ∧ t.k{i % 25} = t'.k{i % 25})")
    return "\n".join(lines) + "\n"


FIVE_HUNDRED = five_hundred()
BAD_AT_377 = FIVE_HUNDRED.replace("r376: ", "r376: not(t.a = t'.a and t.b ?? t'.b) ", 1)

CASES = [
    Case("contradictions-csv", dcs=CONTRADICTIONS, files=CSV, table=T),
    Case("contradictions-parquet", dcs=CONTRADICTIONS, data="t.parquet", files=PARQUET, table=T),
    Case("tautologies-csv", dcs=TAUTOLOGIES, files=CSV, table=T),
    Case("tautologies-parquet", dcs=TAUTOLOGIES, data="t.parquet", files=PARQUET, table=T),
    Case("20-plus-predicates-csv", dcs=LONG_DCS, files=CSV, table=T),
    Case(
        "20-plus-predicates-parquet-pairs",
        dcs=LONG_DCS,
        data="t.parquet",
        files=PARQUET,
        table=T,
        output="pairs",
        out="pairs.parquet",
    ),
    Case(
        "500-dcs",
        rules="rules.txt",
        files={**CSV, "rules.txt": FIVE_HUNDRED},
        table=T,
    ),
    Case(
        "500-dcs-freq-trie",
        rules="rules.txt",
        data="t.parquet",
        files={**PARQUET, "rules.txt": FIVE_HUNDRED},
        table=T,
        extra_args=("--mode", "freq-trie"),
        api_kwargs={"mode": "freq-trie"},
    ),
    Case(
        "500-dcs-one-bad-line",
        rules="rules.txt",
        files={**CSV, "rules.txt": BAD_AT_377},
        error=("rules.txt:378:", "expected a comparison operator"),
        hint="=, !=",
        caret=len("r376: not(t.a = t'.a and t.b ") + 1,
    ),
    Case(
        "500-dcs-unknown-column-last",
        rules="rules.txt",
        files={**CSV, "rules.txt": FIVE_HUNDRED + "r500: k0 -> k25\n"},
        error=("rules.txt:502", "unknown column 'k25'"),
        hint="did you mean",
    ),
]
cli_runs = cli_runs_fixture(CASES)


@pytest.mark.parametrize("case", cli_params(CASES))
def test_cli(case: Case, cli_runs) -> None:
    check_cli(case, cli_runs[case.id])


@pytest.mark.parametrize("case", api_params(CASES))
def test_api(case: Case, tmp_path) -> None:
    check_api(case, run_api(case, tmp_path))


def test_no_traceback_on_stderr(cli_runs) -> None:
    assert_no_traceback(cli_runs)
