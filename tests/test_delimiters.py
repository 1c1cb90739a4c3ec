"""CSV delimiters (docs/semantics.md §4.2): sniffed from the header among ``, ; tab |``
(``,`` when that is ambiguous; quoted fields respected), named with ``--delimiter`` /
``delimiter=``; a header that reads as one column while a DC names an unknown one says
which delimiter split it and how to name another."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

import facet
from facet.loading import SNIFFED, parse_delimiter, sniff_delimiter

#: zip -> city: 1907 holds two cities (2 ordered pairs), 2000 one
ROWS = [("zip", "city", "state"), ("1907", "Lynn", "MA"), ("1907", "Salem", "MA"),
        ("2000", "Boston", "MA")]  # fmt: skip
FD = "zip -> city"


def _write(path: Path, delimiter: str, rows=ROWS) -> Path:
    path.write_text("".join(delimiter.join(r) + "\n" for r in rows))
    return path


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "facet", *args], capture_output=True, text=True)


@pytest.mark.parametrize("delimiter", [";", "\t", "|", ","])
@pytest.mark.parametrize("suffix", [".csv", ".txt", ""])
def test_the_delimiter_is_sniffed_from_the_header(tmp_path, delimiter, suffix):
    path = _write(tmp_path / f"t{suffix}", delimiter)
    assert sniff_delimiter(path) == delimiter
    res = facet.detect(path, dcs=[FD])
    assert res.dcs[0].violations == 2 and res.rows == 3
    assert facet.explain(path, dcs=[FD])["rows"] == 3
    proc = _cli("detect", str(path), "--dc", FD, "--format", "json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["dcs"][0]["violations"] == 2


def test_tsv_files_are_split_on_tabs_unless_told(tmp_path):
    assert facet.detect(_write(tmp_path / "t.tsv", "\t"), dcs=[FD]).dcs[0].violations == 2
    semi = _write(tmp_path / "semi.tab", ";")
    with pytest.raises(facet.FacetInputError, match="split on a tab is one column"):
        facet.detect(semi, dcs=[FD])
    assert facet.detect(semi, dcs=[FD], delimiter=";").dcs[0].violations == 2


def test_the_records_after_the_header_must_agree(tmp_path):
    """A header that splits into more columns on ';' than on ',' is read on ';' only
    when the records that follow do too: a one-column file whose name holds a ';'
    (or a header-only file) stays on ','."""
    one = tmp_path / "one.csv"
    one.write_text("a;b\nx\ny\n")
    assert sniff_delimiter(one) == ","
    assert facet.detect(one, dcs=["not(t.`a;b` = t'.`a;b`)"]).dcs[0].violations == 0
    (tmp_path / "head.csv").write_text("a;b\n")
    assert sniff_delimiter(tmp_path / "head.csv") == ","
    (tmp_path / "two.csv").write_text("a;b\n1;2\n")
    assert sniff_delimiter(tmp_path / "two.csv") == ";"
    (tmp_path / "bad.csv").write_text("a;b\n1;2\n3\n")
    assert sniff_delimiter(tmp_path / "bad.csv") == ","


@pytest.mark.parametrize("name", [";", "\t", "tab", "TAB", "\\t", "|"])
def test_a_named_delimiter_wins_over_the_sniffed_one(tmp_path, name):
    """The header ``zip,code;city,name...`` splits into as many columns on ',' as on
    the file's own delimiter: ambiguous, so ',' unless named."""
    delimiter = parse_delimiter(name)
    rows = [("zip,code", "city,name", "state")] + ROWS[1:]
    path = _write(tmp_path / "t.csv", delimiter, rows)
    assert sniff_delimiter(path) == ","
    dc = "not(t.`zip,code` = t'.`zip,code` and t.`city,name` != t'.`city,name`)"
    with pytest.raises(facet.FacetInputError, match=r"line 2 has 1 field .*--delimiter"):
        facet.detect(path, dcs=[dc])
    assert facet.detect(path, dcs=[dc], delimiter=name).dcs[0].violations == 2
    assert facet.explain(path, dcs=[dc], delimiter=name)["rows"] == 3
    proc = _cli("detect", str(path), "--dc", dc, "--delimiter", name, "--format", "json")
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["dcs"][0]["violations"] == 2


def test_quoted_header_fields_holding_other_delimiters(tmp_path):
    """Quotes are respected: a delimiter inside a quoted header name counts for nothing."""
    semi = tmp_path / "semi.csv"
    semi.write_text('"zip,a|b";"city,x";state\n1907;Lynn;MA\n1907;Salem;MA\n2000;Boston;MA\n')
    assert sniff_delimiter(semi) == ";"
    dc = "not(t.`zip,a|b` = t'.`zip,a|b` and t.`city,x` != t'.`city,x`)"
    assert facet.detect(semi, dcs=[dc]).dcs[0].violations == 2
    comma = tmp_path / "comma.csv"
    comma.write_text('"zip;a|b\tc",city\n1907,Lynn\n1907,Salem\n')
    assert sniff_delimiter(comma) == ","
    assert facet.detect(comma, dcs=["not(t.`zip;a|b\tc` = t'.`zip;a|b\tc`)"]).dcs[0].violations == 2
    # a quoted header name holding a line break: the record goes on
    pipe = tmp_path / "pipe.csv"
    pipe.write_text('"zip\n;x"|city|state\n1907|Lynn|MA\n1907|Salem|MA\n')
    assert sniff_delimiter(pipe) == "|"
    assert facet.detect(pipe, dcs=["not(t.`zip\n;x` = t'.`zip\n;x`)"]).rows == 2


def test_a_one_column_file_still_reads(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("zip\n1907\n1907\n2000\n")
    assert sniff_delimiter(path) == ","
    res = facet.detect(path, dcs=["not(t.zip = t'.zip)"])
    assert res.rows == 3 and res.dcs[0].violations == 2
    proc = _cli("detect", str(path), "--dc", "not(t.zip = t'.zip)", "--format", "json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["dcs"][0]["violations"] == 2


def test_a_compressed_file_is_sniffed_too(tmp_path):
    path = tmp_path / "t.csv.gz"
    path.write_bytes(gzip.compress("".join(";".join(r) + "\n" for r in ROWS).encode()))
    assert facet.detect(path, dcs=[FD]).dcs[0].violations == 2


def test_a_header_of_one_column_names_its_delimiter_in_the_error(tmp_path):
    path = _write(tmp_path / "colon.csv", ":")
    with pytest.raises(facet.FacetInputError) as err:
        facet.detect(path, dcs=[FD])
    assert str(err.value) == (
        f"--dc:1: unknown column 'zip' in {path}, whose header split on ',' is one column, "
        "'zip:city:state'; if the file uses another delimiter, name it with --delimiter "
        "(Python: delimiter=), e.g. --delimiter ':'"
    )
    proc = _cli("detect", str(path), "--dc", FD)
    assert proc.returncode == 2
    assert proc.stderr.startswith("facet: error: --dc:1: unknown column 'zip' in ")
    assert "split on ','" in proc.stderr and "--delimiter ':'" in proc.stderr
    # named, it reads; named wrong, the error says which one split it
    assert facet.detect(path, dcs=[FD], delimiter=":").dcs[0].violations == 2
    proc = _cli("detect", str(path), "--dc", FD, "--delimiter", ":", "--format", "json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["dcs"][0]["violations"] == 2
    semi = _write(tmp_path / "semi.csv", ";")
    proc = _cli("detect", str(semi), "--dc", FD, "--delimiter", "|")
    assert proc.returncode == 2 and "whose header split on '|' is one column" in proc.stderr
    # a header of several columns keeps the usual suggestion
    with pytest.raises(facet.FacetInputError, match="did you mean 'zip'"):
        facet.detect(semi, dcs=["zap -> city"])


@pytest.mark.parametrize("bad", ["", ";;", '"', "\n", "é"])
def test_a_bad_delimiter_is_an_input_error(tmp_path, bad):
    path = _write(tmp_path / "t.csv", ",")
    with pytest.raises(facet.FacetInputError, match="--delimiter .*expected one ASCII"):
        facet.detect(path, dcs=[FD], delimiter=bad)
    proc = _cli("detect", str(path), "--dc", FD, "--delimiter", bad)
    assert proc.returncode == 2 and proc.stderr.startswith("facet: error: --delimiter ")


def test_detector_batches_and_the_report_take_the_delimiter(tmp_path):
    rows = [("zip,code", "city,name")] + [r[:2] for r in ROWS[1:]]
    base = _write(tmp_path / "base.csv", ";", rows)
    batch = _write(tmp_path / "batch.csv", ";", [rows[0], ("2000", "Quincy")])
    dc = "not(t.`zip,code` = t'.`zip,code` and t.`city,name` != t'.`city,name`)"
    det = facet.Detector(base, dcs=[dc], delimiter=";")
    assert det.initial.dcs[0].violations == 2
    assert det.append(batch).dcs[0].violations == 2  # (2000: Boston / Quincy, both ways)
    proc = _cli("detect", str(base), "--dc", dc, "--delimiter", ";", "--append", str(batch),
                "--format", "json")  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["totals"]["total_violations"] == 4
    out = tmp_path / "r.html"
    proc = _cli("report", str(base), "--dc", dc, "--delimiter", ";", "--out", str(out))
    assert proc.returncode == 1, proc.stderr
    assert out.exists()
    res = facet.detect(base, dcs=[dc], delimiter=";")
    res.to_html(tmp_path / "p.html", delimiter=";")
    assert (tmp_path / "p.html").exists()


def test_the_candidates():
    assert SNIFFED == (",", ";", "\t", "|")


def test_spark_reads_with_the_same_delimiter(spark, tmp_path):
    semi = _write(tmp_path / "semi.csv", ";")
    assert facet.detect(semi, dcs=[FD], engine="spark").dcs[0].violations == 2
    colon = _write(tmp_path / "colon.csv", ":")
    assert facet.detect(colon, dcs=[FD], engine="spark", delimiter=":").dcs[0].violations == 2
    with pytest.raises(facet.FacetInputError, match="whose header split on ',' is one column"):
        facet.detect(colon, dcs=[FD], engine="spark")
    tabs = _write(tmp_path / "tabs.txt.csv", "\t")  # named by its word, read by Spark
    assert facet.detect(tabs, dcs=[FD], engine="spark", delimiter="tab").dcs[0].violations == 2
