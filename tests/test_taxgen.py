"""Tests of the Tax-like generator ``data/taxgen.py`` (DuckDB SQL as the oracle)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from pyarrow.parquet import read_table as pq_read

_PATH = Path(__file__).resolve().parent.parent / "data" / "taxgen.py"
_spec = importlib.util.spec_from_file_location("taxgen", _PATH)
taxgen = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("taxgen", taxgen)
_spec.loader.exec_module(taxgen)

SAMPLE = taxgen.find_sample()  # data/tax/tax_clean_0040k.csv, bundled

HEADER = SAMPLE.read_text().splitlines()[0].split(",")

NUM = r"[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?"

# DC name -> WHERE clause over t, t2 (ordered pairs, t.rid <> t2.rid), docs/semantics.md §1 semantics
DCS = {
    "zip_city": "t.zip = t2.zip AND t.city <> t2.city",
    "zip_state": "t.zip = t2.zip AND t.state <> t2.state",
    "area_state": "t.area_code = t2.area_code AND t.state <> t2.state",
    "phone": "t.area_code = t2.area_code AND t.phone = t2.phone",
    "salary_rate": "t.state = t2.state AND t.salary > t2.salary AND t.rate < t2.rate",
}


def _counts(table, names):
    con = duckdb.connect()
    con.register("src", table)
    con.execute(
        f"""CREATE TABLE r AS SELECT row_number() OVER () - 1 AS rid, * REPLACE (
              CASE WHEN regexp_full_match(trim(salary), '{NUM}') THEN CAST(trim(salary) AS DOUBLE) END AS salary,
              CASE WHEN regexp_full_match(trim(rate), '{NUM}') THEN CAST(trim(rate) AS DOUBLE) END AS rate)
            FROM src"""
    )
    out = {}
    for name in names:
        sql = f"SELECT count(*) FROM r t, r t2 WHERE t.rid <> t2.rid AND {DCS[name]}"
        out[name] = con.execute(sql).fetchone()[0]
    con.close()
    return out


@pytest.fixture(scope="module")
def clean_20k():
    return taxgen.generate_tax(20_000, seed=3, error_rate=0.0)


@pytest.fixture(scope="module")
def dirty_20k():
    return taxgen.generate_tax(20_000, seed=3, error_rate=0.01)


def test_header_and_types(clean_20k):
    assert clean_20k.column_names == HEADER == taxgen.COLUMNS
    assert all(str(f.type) == "string" for f in clean_20k.schema)


@pytest.mark.parametrize("rows", [0, 1, 7, 2_001, 12_345])
def test_row_count_exact(rows):
    assert taxgen.generate_tax(rows, seed=1, error_rate=0.01).num_rows == rows


def test_deterministic_per_seed():
    a = taxgen.generate_tax(5_000, seed=42, error_rate=0.01)
    b = taxgen.generate_tax(5_000, seed=42, error_rate=0.01)
    c = taxgen.generate_tax(5_000, seed=43, error_rate=0.01)
    assert a.equals(b)
    assert not a.equals(c)


def test_value_formats(clean_20k):
    con = duckdb.connect()
    con.register("t", clean_20k)
    bad = con.execute(
        """SELECT
             count(*) FILTER (WHERE NOT regexp_full_match(zip, '[0-9]{5}')),
             count(*) FILTER (WHERE NOT regexp_full_match(phone, '[1-9][0-9]{2}-[0-9]{4}')),
             count(*) FILTER (WHERE NOT regexp_full_match(salary, '[1-9][0-9]*')),
             count(*) FILTER (WHERE NOT regexp_full_match(rate, '[0-9]+[.][0-9]|NaN')),
             count(*) FILTER (WHERE gender NOT IN ('F', 'M') OR marital_status NOT IN ('S', 'M')
                              OR has_child NOT IN ('Y', 'N'))
           FROM t"""
    ).fetchone()
    assert bad == (0, 0, 0, 0, 0)
    # exemptions follow marital status as in the sample: singles claim no married exemption
    mixed = con.execute(
        "SELECT count(*) FROM t WHERE (marital_status = 'S' AND married_exemp <> '0')"
        " OR (marital_status = 'M' AND single_exemp <> '0')"
    ).fetchone()[0]
    assert mixed == 0


def test_clean_rows_satisfy_dcs(clean_20k):
    counts = _counts(clean_20k, DCS)
    assert counts == dict.fromkeys(DCS, 0)


def test_errors_give_few_but_nonzero_violations(dirty_20k):
    counts = _counts(dirty_20k, ["zip_city", "phone", "salary_rate", "zip_state"])
    for name, c in counts.items():
        assert c > 0, name
    n = dirty_20k.num_rows
    # "few": far below the n*(n-1) ordered pairs (a broken FD row conflicts within its group)
    assert counts["phone"] <= 2 * 0.01 * n
    assert counts["zip_city"] < 0.001 * n * n
    assert counts["salary_rate"] < 0.01 * n * n


def test_only_error_rows_change(clean_20k, dirty_20k):
    """Errors touch round(rate * n) rows, one cell each; the rest is the clean table."""
    con = duckdb.connect()
    con.register("a", clean_20k)
    con.register("b", dirty_20k)
    cols = taxgen.COLUMNS
    diff = " + ".join(f"(a.{c} IS DISTINCT FROM b.{c})::INT" for c in cols)
    per_row = con.execute(
        f"""SELECT d, count(*) FROM (
              SELECT {diff} AS d FROM
                (SELECT row_number() OVER () AS i, * FROM a) a
                JOIN (SELECT row_number() OVER () AS i, * FROM b) b USING (i))
            GROUP BY d ORDER BY d"""
    ).fetchall()
    changed = sum(c for d, c in per_row if d > 0)
    assert all(d <= 1 for d, _ in per_row)
    # a duplicated phone can land on a row whose phone it already had only by collision: none
    assert changed == round(0.01 * dirty_20k.num_rows)


def test_cli_csv_and_parquet(tmp_path):
    csv = tmp_path / "t.csv"
    assert taxgen.main(["--rows", "2000", "--out", str(csv), "--seed", "5"]) == 0
    lines = csv.read_text().splitlines()
    assert lines[0].split(",") == HEADER
    assert len(lines) == 2001
    table = taxgen.generate_tax(2000, seed=5)
    back = pacsv.read_csv(
        csv,
        convert_options=pacsv.ConvertOptions(
            column_types=dict.fromkeys(HEADER, pa.string()), strings_can_be_null=False
        ),
    )
    assert back.equals(table)

    pq = tmp_path / "t.parquet"
    assert taxgen.main(["--rows", "2000", "--out", str(pq), "--seed", "5"]) == 0
    typed = pq_read(pq)
    assert typed.column_names == HEADER
    assert str(typed.schema.field("salary").type) == "int64"
    assert str(typed.schema.field("zip").type) == "string"
