"""The command line contract (docs/semantics.md §7, §9): JSON, pair files, exit codes, one-line errors."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import facet
from facet import cli
from facet.cli import main
from tests.naive import naive_pairs

ROOT = Path(__file__).resolve().parent.parent
HOSPITAL = ROOT / "data" / "holoclean-hospital" / "hospital_100.csv"

EMP = """name,dept,salary,rate,zip
ann,a,100,1.5,01907
bob,a,200,1.0,1907
cid,b,150,2.0,01907
dan,b,150,,02110
eve,a,300,0.5,01907
"""


@pytest.fixture
def emp(tmp_path: Path) -> Path:
    p = tmp_path / "emp.csv"
    p.write_text(EMP)
    return p


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_document_shape(emp, capsys):
    code, out, err = run(
        [
            "detect",
            emp,
            "--dc",
            "not(t.dept = t'.dept and t.salary > t'.salary and t.rate > t'.rate)",
            "--dc",
            "zip -> dept",
            "--dc",
            "not(t.rate > 1.2)",
            "--format",
            "json",
        ],
        capsys,
    )
    doc = json.loads(out)  # stdout is the JSON document only
    assert code == 1
    assert doc["rows"] == 5
    assert doc["engine"] == "local"
    assert isinstance(doc["load_seconds"], float) and isinstance(doc["warmup_seconds"], float)
    assert [d["id"] for d in doc["dcs"]] == [0, 1, 2]
    d0, d1, d2 = doc["dcs"]
    assert set(d0) >= {"id", "name", "dc", "violations", "rows_involved", "seconds"}
    assert d0["name"] is None
    assert d0["dc"] == "not(t.dept = t'.dept and t.salary > t'.salary and t.rate > t'.rate)"
    # salary>salary' and rate>rate' in dept a: (bob, ann)=200>100,1.0>1.5 no; eve: 0.5 -> none;
    # dept b: cid vs dan: dan's rate is NULL -> none
    assert d0["violations"] == 0
    # zip is text: 01907 (ann, cid, eve) -> depts a, b, a: 2*2 ordered pairs (ann,cid) etc.
    assert d1["dc"] == "not(t.zip = t'.zip and t.dept != t'.dept)"
    assert d1["violations"] == 4
    assert d1["rows_involved"] == 3
    assert d2["violations"] == 2 and d2["rows_involved"] == 2  # ann 1.5, cid 2.0
    assert doc["total_violations"] == 6
    assert err == ""


def test_exit_codes(emp, capsys):
    assert run(["detect", emp, "--dc", "not(t.salary > 1000)"], capsys)[0] == 0
    assert run(["detect", emp, "--dc", "not(t.salary > 100)"], capsys)[0] == 1
    assert run(["detect", emp, "--dc", "not(t.salary > 100)", "--exit-zero"], capsys)[0] == 0


def test_rules_file_then_dc_numbering_and_names(emp, tmp_path, capsys):
    rules = tmp_path / "r.txt"
    rules.write_text("# comment\nfd1: zip -> dept\n\nt1&t2&EQ(t1.dept,t2.dept)&IQ(t1.zip,t2.zip)\n")
    code, out, _ = run(
        ["detect", emp, "--rules", rules, "--dc", "big: not(t.salary >= 300)", "--format", "json"],
        capsys,
    )
    doc = json.loads(out)
    assert [(d["id"], d["name"]) for d in doc["dcs"]] == [(0, "fd1"), (1, None), (2, "big")]


def test_text_output_is_a_table(emp, capsys):
    code, out, _ = run(["detect", emp, "--dc", "zip -> dept"], capsys)
    assert "violations" in out and "rows" in out
    assert "not(t.zip = t'.zip and t.dept != t'.dept)" in out


def _expected_pairs(dc_text: str, table: pa.Table) -> set:
    from facet.language import parse_dc

    return naive_pairs(table, parse_dc(dc_text)[0])


@pytest.mark.parametrize("ext", [".parquet", ".csv", ".arrow"])
def test_pair_files(emp, tmp_path, ext, capsys):
    out = tmp_path / f"pairs{ext}"
    dc = "not(t.dept = t'.dept and t.salary < t'.salary)"
    code, _, _ = run(
        ["detect", emp, "--dc", dc, "--dc", "not(t.rate < 1.2)", "--output", "pairs", "--out", out],
        capsys,
    )
    assert code == 1
    if ext == ".parquet":
        table = pq.read_table(out)
    elif ext == ".csv":
        table = pacsv.read_csv(out)
    else:
        table = feather.read_table(out)
    assert table.column_names == ["dc", "t1", "t2"]
    rows = table.to_pylist()
    pairs = {(r["t1"], r["t2"]) for r in rows if r["dc"] == 0}
    assert pairs == {(0, 1), (0, 4), (1, 4)}
    singles = [r for r in rows if r["dc"] == 1]
    assert sorted(r["t1"] for r in singles) == [1, 4]
    assert all(r["t2"] is None for r in singles)
    assert not list(tmp_path.glob(".facet-*"))


def test_limit_is_per_dc(tmp_path, capsys):
    out = tmp_path / "p.parquet"
    code, stdout, _ = run(
        [
            "detect",
            HOSPITAL,
            "--dc",
            "not(t.City = t'.City and t.Condition != t'.Condition)",
            "--dc",
            "not(t.State = t'.State and t.MeasureCode != t'.MeasureCode)",
            "--output",
            "pairs",
            "--out",
            out,
            "--limit",
            "7",
            "--format",
            "json",
        ],
        capsys,
    )
    doc = json.loads(stdout)
    t = pq.read_table(out)
    for d in doc["dcs"]:
        assert d["violations"] > 7
        assert d["written"] == 7
        assert sum(1 for x in t.column("dc").to_pylist() if x == d["id"]) == 7


def test_blocks_file(emp, tmp_path, capsys):
    out = tmp_path / "b.parquet"
    dc = "not(t.zip = t'.zip and t.dept != t'.dept)"
    run(["detect", emp, "--dc", dc, "--output", "blocks", "--out", out], capsys)
    t = pq.read_table(out)
    assert t.column_names == ["dc", "block", "t1", "t2"]
    got = {(a, b) for r in t.to_pylist() for a in r["t1"] for b in r["t2"] if a != b}
    table = pacsv.read_csv(
        emp, convert_options=pacsv.ConvertOptions(column_types={"zip": pa.string()})
    )
    assert got == _expected_pairs(dc, table)


def test_pairs_inline_json_and_text(emp, capsys):
    dc = "not(t.dept = t'.dept and t.salary < t'.salary)"
    _, out, _ = run(["detect", emp, "--dc", dc, "--output", "pairs", "--format", "json"], capsys)
    doc = json.loads(out)
    assert sorted(map(tuple, doc["dcs"][0]["pairs"])) == [(0, 1), (0, 4), (1, 4)]
    _, out, _ = run(["detect", emp, "--dc", dc, "--output", "pairs"], capsys)
    assert "dc,t1,t2" in out and "0,0,4" in out


def test_warnings_go_to_stderr(emp, capsys):
    path = emp.parent / "w.csv"
    path.write_text("a,b\n1,x\nNaN,y\n3,z\n")
    code, out, err = run(["detect", path, "--dc", "not(t.a < t'.a)", "--format", "json"], capsys)
    json.loads(out)
    assert "warning" in err and "'a'" in err and "NaN" in err
    assert json.loads(out)["warnings"]


ERRORS = [
    (["--dc", "not(t.agee = t'.age)"], "unknown column 'agee'"),
    (["--dc", "not(t.zip = t'.zip and t.dept <> )"], ":1:"),
    (["--dc", "not(t.name < t'.name)"], "none of its values is a number"),
    (["--dc", 'not(t.salary > "abc")'], "constant"),
    (["--dc", "zip -> dept", "--schema", "zip"], "--schema"),
    (["--dc", "zip -> dept", "--schema", "zip:blob"], "unknown type"),
    (["--dc", "zip -> dept", "--out", "x.xlsx", "--output", "pairs"], "unknown file type"),
    (["--dc", "zip -> dept", "--out", "", "--output", "pairs"], "--out: empty file name; name a"),
    (
        ["--dc", "zip -> dept", "--out", "/", "--output", "pairs"],
        "--out '/': it is a directory; name a file in it, e.g. /pairs.parquet",
    ),
    (["--dc", "zip -> dept", "--limit", "-1"], "--limit"),
    (["--dc", "zip -> dept", "--format", "yaml"], "--format"),
    ([], "no denial constraints"),
    (["--rules", "/nonexistent/rules.txt"], "cannot read rules file"),
    (["--dc", "zip -> dept", "--master", "local[2]"], "--master local[2] needs --engine spark"),
]


@pytest.mark.parametrize(("extra", "needle"), ERRORS)
def test_bad_input_is_one_line_and_exit_2(emp, extra, needle, capsys):
    code, out, err = run(["detect", emp, *extra], capsys)
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1, err
    first = err.splitlines()[0]
    assert first.startswith("facet: error: ")
    assert needle in first
    assert "Traceback" not in err


def test_parse_error_is_one_line_and_a_caret_on_a_terminal(emp, capsys, monkeypatch):
    """Captured stderr gets the one error line (DESIGN §5); a terminal also the DC and a
    caret under the column the line names."""
    argv = ["detect", emp, "--dc", "not(t.zip = t'.zip and t.dept <> )"]
    code, _, err = run(argv, capsys)
    assert code == 2 and err.splitlines() == [
        "facet: error: --dc:1:34: expected an operand: t.column, a quoted string or a number"
    ]
    monkeypatch.setattr(cli, "_stderr_is_terminal", lambda: True)
    code, _, err = run(argv, capsys)
    lines = err.splitlines()
    assert code == 2 and len(lines) == 3
    assert lines[1] == "  not(t.zip = t'.zip and t.dept <> )"
    assert lines[2] == " " * (2 + 33) + "^"


def test_bad_rules_file_names_file_line_column(emp, tmp_path, capsys):
    rules = tmp_path / "bad.txt"
    rules.write_text("zip -> dept\nnot(t.zip = t'.zip and t.dept ! t'.dept)\n")
    code, _, err = run(["detect", emp, "--rules", rules], capsys)
    assert code == 2
    assert f"{rules}:2:" in err.splitlines()[0]


def test_unreadable_data(tmp_path, capsys):
    code, _, err = run(["detect", tmp_path / "missing.csv", "--dc", "a -> b"], capsys)
    assert code == 2 and "missing.csv" in err
    bad = tmp_path / "ragged.csv"
    bad.write_text('a,b\n1,2\n3\n"4,5\n')
    code, _, err = run(["detect", bad, "--dc", "a -> b"], capsys)
    assert code == 2 and "ragged.csv" in err.splitlines()[0]


def test_nothing_half_written_on_error(emp, tmp_path, capsys):
    out = tmp_path / "p.parquet"
    code, _, _ = run(
        [
            "detect",
            emp,
            "--dc",
            "zip -> dept",
            "--dc",
            "not(t.nope = t'.nope)",
            "--output",
            "pairs",
            "--out",
            out,
        ],
        capsys,
    )
    assert code == 2
    assert not out.exists()
    assert not list(tmp_path.glob(".facet-*"))


def test_internal_error_exit_3(emp, monkeypatch, capsys):
    import facet.api

    def boom(self, i):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(facet.api.Session, "count", boom)
    code, _, err = run(["detect", emp, "--dc", "zip -> dept"], capsys)
    assert code == 3
    assert "internal error" in err and "kaboom" in err and "Traceback" not in err
    code, _, err = run(["detect", emp, "--dc", "zip -> dept", "--debug"], capsys)
    assert code == 3 and "Traceback" in err


def test_console_script_end_to_end(emp):
    exe = Path(sys.executable).parent / "facet"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "facet"]
    p = subprocess.run(
        [*cmd, "detect", str(emp), "--dc", "zip -> dept", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 1, p.stderr
    assert json.loads(p.stdout)["dcs"][0]["violations"] == 4
    p = subprocess.run(
        [*cmd, "detect", str(emp), "--dc", "not(t.x = t'.x)"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 2 and p.stderr.count("\n") == 1


def test_csv_text_is_exact_and_empty_is_null(tmp_path, capsys):
    p = tmp_path / "t.csv"
    with p.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["k", "v"])
        w.writerows(
            [["01907", "NA"], ["1907", "NA"], ["01907", ""], ['"q"', "a\nb"], ['"q"', "a\nb"]]
        )
    _, out, _ = run(
        ["detect", p, "--dc", "not(t.k = t'.k and t.v = t'.v)", "--format", "json"], capsys
    )
    # 01907 vs 1907 differ as text; NA is text, "" is NULL; the quoted multi-line rows match
    assert json.loads(out)["dcs"][0]["violations"] == 2
    assert json.loads(out)["rows"] == 5


def test_header_only_bom_and_repeated_unused_columns(tmp_path, capsys):
    p = tmp_path / "h.csv"
    p.write_bytes("\ufeffa,b,x,x\n".encode())
    code, out, _ = run(["detect", p, "--dc", "a -> b", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["rows"] == 0
    p.write_text("a,b,x,x\n1,2,3,4\n1,3,5,6\n")
    code, out, _ = run(["detect", p, "--dc", "a -> b", "--format", "json"], capsys)
    assert code == 1 and json.loads(out)["dcs"][0]["violations"] == 2
    code, _, err = run(["detect", p, "--dc", "x -> b"], capsys)
    assert code == 2 and "'x' 2 times" in err


def test_non_utf8_csv_is_bad_input(tmp_path, capsys):
    p = tmp_path / "latin.csv"
    p.write_bytes(b"a,b\n\xe9,1\n\xe9,2\n")
    code, _, err = run(["detect", p, "--dc", "a -> b"], capsys)
    assert code == 2 and "latin.csv" in err and "Traceback" not in err


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_typed_inputs(tmp_path, fmt, capsys):
    table = pa.table(
        {
            "k": pa.array(["a", "a", "b", None]),
            "v": pa.array([1.5, 2.0, float("nan"), 4.0]),
            "d": pa.array([1, 2, 3, 4], pa.int32()),
        }
    )
    p = tmp_path / f"t.{fmt}"
    if fmt == "parquet":
        pq.write_table(table, p)
    else:
        feather.write_feather(table, p)
    code, out, _ = run(
        [
            "detect",
            p,
            "--dc",
            "not(t.k = t'.k and t.v < t'.v)",
            "--dc",
            "not(t.v > 1.9)",
            "--format",
            "json",
        ],
        capsys,
    )
    doc = json.loads(out)
    assert [d["violations"] for d in doc["dcs"]] == [1, 2]  # NaN is NULL


def test_csv_timestamps_with_zones(tmp_path, capsys):
    p = tmp_path / "ts.csv"
    p.write_text(
        "id,d,v\n1,2024-01-05,3\n2,2024-01-03T10:00:00Z,4\n3,2024-01-03T12:00:00+02:00,5\n"
        "4,,6\n5,notadate,7\n6,2023-12-31,8\n"
    )
    code, out, err = run(
        [
            "detect", p,
            "--dc", "not(t.d = t'.d and t.v < t'.v)",  # 10:00Z equals 12:00+02:00
            "--dc", "not(t.d > \"2024-01-04\")",
            "--dc", "not(t.d <= t'.d and t.id = 6)",
            "--output", "pairs", "--format", "json",
        ],
        capsys,
    )  # fmt: skip
    doc = json.loads(out)
    assert [d["pairs"] for d in doc["dcs"][:2]] == [[[1, 2]], [[0, None]]]
    # row 5 (2023-12-31) is before every other date; NULL rows 3, 4 take no part
    assert sorted(tuple(p) for p in doc["dcs"][2]["pairs"]) == [(5, 0), (5, 1), (5, 2)]
    assert "notadate" in err


@pytest.mark.parametrize(
    ("signame", "code", "line"), [("SIGTERM", 143, "terminated"), ("SIGHUP", 129, "hung up")]
)
def test_sigterm_leaves_no_output(tmp_path, signame, code, line):
    """SIGTERM mid-run: exit 143, one line, no output file and no temporary left;
    SIGHUP (the terminal closed) likewise, exit 129 (it left a partial temporary)."""
    import signal
    import time

    import numpy as np

    n = 60_000
    rng = np.random.default_rng(0)
    data = tmp_path / "big.csv"
    data.write_text("a,b\n" + "".join(f"{x},{y}\n" for x, y in rng.integers(0, 10**6, (n, 2))))
    out = tmp_path / "pairs.parquet"
    sig = getattr(signal, signame)
    proc = subprocess.Popen(
        [sys.executable, "-m", "facet", "detect", str(data), "--dc", "not(t.a > t'.a)",
         "--output", "pairs", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # (under nohup, as CI may run, the child would inherit SIGHUP ignored: facet
        # keeps an ignored SIGHUP ignored)
        preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL),
    )  # fmt: skip
    try:
        # wait until the pairs are being written (the temporary exists), then stop it
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(tmp_path.glob(".facet-*")):
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert err.strip().splitlines() == [f"facet: {line}"]
    assert not out.exists()
    assert not list(tmp_path.glob(".facet-*"))


def test_out_naming_an_input_is_refused_and_the_input_kept(tmp_path, capsys):
    """``--out`` that is the data or a rules file, by any name (relative, a hard
    link): exit 2 before anything is read; the input replaced by the output was
    what a probe found."""
    data = tmp_path / "in.csv"
    data.write_text("a,b\nx,1\nx,2\n")
    rules = tmp_path / "rules.txt"
    rules.write_text("a -> b\n")
    os.link(data, tmp_path / "hard.csv")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for out in ("in.csv", "./in.csv", "hard.csv", "rules.txt"):
            code, _, err = run(["detect", "in.csv", "--rules", "rules.txt", "--output", "pairs",
                                "--out", out], capsys)  # fmt: skip
            assert code == 2 and "it is the input file" in err and "choose another" in err, out
        os.symlink("in.csv", "in.html")
        code, _, err = run(["report", "in.csv", "--dc", "a -> b", "--out", "in.html"], capsys)
        assert code == 2 and "it is the input file 'in.csv'" in err
    finally:
        os.chdir(cwd)
    assert data.read_text() == "a,b\nx,1\nx,2\n" and rules.read_text() == "a -> b\n"
    with pytest.raises(facet.FacetInputError, match="it is the input file"):
        facet.detect(data, dcs=["a -> b"], output="pairs", out=tmp_path / "hard.csv")


def _facet(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "facet", *args], text=True, timeout=300, **kw)


def test_a_stderr_that_takes_nothing_keeps_the_exit_code(tmp_path):
    """Warnings or the error line lost to a full disk (``2>/dev/full``): the exit
    code stays the run's (it was 1 for a clean run, and for a bad DC)."""
    data = tmp_path / "w.csv"
    data.write_text("a,b\n1,2\nx,3\n")  # ('x': a warning, read as NULL)
    with open("/dev/full", "w") as full:
        clean = _facet(["detect", str(data), "--dc", "not(t.a > t'.a and t.b < t'.b)"],
                       stdout=subprocess.PIPE, stderr=full)  # fmt: skip
        bad = _facet(["detect", str(data), "--dc", "a -> nope"], stdout=subprocess.PIPE,
                     stderr=full)  # fmt: skip
    assert clean.returncode == 0 and "0 violations" in clean.stdout
    assert bad.returncode == 2


def test_no_stdout_at_all_is_no_traceback(tmp_path):
    """A stdout closed before the start (``>&-``): what is printed goes nowhere, the
    ``--out`` file is written, the exit code is the run's, no traceback."""
    data = tmp_path / "d.csv"
    data.write_text("a,b\nx,1\nx,2\n")
    out = tmp_path / "p.csv"
    proc = _facet(["detect", str(data), "--dc", "a -> b", "--output", "pairs", "--out", str(out)],
                  stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))  # fmt: skip
    assert proc.returncode == 1 and proc.stderr == ""
    assert out.exists()


def test_a_full_stdout_after_the_file_is_in_place_keeps_it(tmp_path):
    """The ``--out`` file in place is a finished run (§9): a summary that stdout
    cannot take (``>/dev/full``) is a warning, the exit code 1 and the file kept
    (it exited 2 and left the file, against §9's no file after 2)."""
    data = tmp_path / "d.csv"
    data.write_text("a,b\nx,1\nx,2\n")
    out = tmp_path / "p.csv"
    with open("/dev/full", "w") as full:
        proc = _facet(["detect", str(data), "--dc", "a -> b", "--output", "pairs", "--out",
                       str(out)], stdout=full, stderr=subprocess.PIPE)  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"facet: warning: the output is in {out}, but stdout")
    assert pacsv.read_csv(out).num_rows == 2
    with open("/dev/full", "w") as full:  # without --out stdout is the output: exit 2
        proc = _facet(["detect", str(data), "--dc", "a -> b"], stdout=full,
                      stderr=subprocess.PIPE)  # fmt: skip
    assert proc.returncode == 2 and "No space left on device" in proc.stderr


def test_a_narrow_stdout_encoding_escapes_what_it_cannot_hold(tmp_path):
    """``PYTHONIOENCODING=ascii``: non-ASCII names in the text report are escaped
    (it was an internal error)."""
    data = tmp_path / "dätä.csv"
    data.write_text("Straße,städt\n1,2\n1,3\n", encoding="utf-8")
    proc = _facet(["detect", str(data), "--dc", "Straße -> städt"], capture_output=True,
                  env={**os.environ, "PYTHONIOENCODING": "ascii"})  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "t.Stra\\xdfe" in proc.stdout and "2 violations" in proc.stdout


def test_a_c_locale_without_utf8_mode_reads_non_ascii_names_and_dcs(tmp_path):
    """``LC_ALL=C PYTHONUTF8=0``: arguments come as escaped bytes; the file opens
    and the DC parses (an internal error and a syntax error before)."""
    data = tmp_path / "dätä ü.csv"
    data.write_text("Straße,städt\n1,2\n1,3\n", encoding="utf-8")
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0"}
    env.pop("PYTHONIOENCODING", None)
    proc = _facet(["detect", str(data), "--dc", "Straße -> städt", "--format", "json"],
                  capture_output=True, env=env)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["total_violations"] == 2


def test_a_directory_that_may_not_be_searched_is_bad_input(emp, tmp_path, capsys, monkeypatch):
    """EACCES on the way to DATA or ``--out`` (a directory without search
    permission; root ignores modes, so the error is raised here): exit 2 naming
    the permissions, not an internal error."""
    real = Path.is_symlink

    def denied(self):
        if "locked" in str(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "is_symlink", denied)
    code, _, err = run(["detect", str(tmp_path / "locked" / "a.csv"), "--dc", "a -> b"], capsys)
    assert code == 2 and "permission denied" in err and "directories above it" in err
    real_dir = Path.is_dir
    monkeypatch.setattr(Path, "is_dir", lambda self: denied(self) or real_dir(self))
    code, _, err = run(["detect", str(emp), "--dc", "dept -> zip", "--output", "pairs", "--out",
                        str(tmp_path / "locked" / "o.csv")], capsys)  # fmt: skip
    assert code == 2 and "--out" in err and "permission denied" in err


@pytest.mark.parametrize("value", ["1e10", "inf"])
def test_a_timeout_past_the_alarm_timer_is_refused(emp, capsys, value):
    code, _, err = run(["detect", str(emp), "--dc", "dept -> zip", "--timeout", value], capsys)
    assert code == 2 and "at most 1e+09" in err


def test_a_signal_after_the_file_is_in_place_does_not_change_the_outcome(tmp_path):
    """Once ``--out`` is renamed into place the run is finished: a SIGTERM then
    leaves exit 1 and the file (it killed the process: exit -15 beside a
    finished file, or 143 without "terminated"; a probe's finding), so 130/143
    always means nothing was written."""
    import signal

    data = tmp_path / "t.csv"
    data.write_text("a,b\n" + "".join(f"{i % 7},{i}\n" for i in range(3000)))
    out = tmp_path / "cells.parquet"
    proc = subprocess.Popen(
        [sys.executable, "-m", "facet", "detect", str(data), "--dc", "a -> b",
         "--output", "cells", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    for line in proc.stdout:  # the report is printed after the file is in place
        if "written to" in line:
            break
    import time

    while proc.poll() is None:  # signals until it exits
        proc.send_signal(signal.SIGTERM if time.monotonic() % 0.02 < 0.01 else signal.SIGINT)
        time.sleep(0.005)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert out.exists() and pq.read_table(out).num_rows > 0


def test_no_command_is_one_error_line(capsys):
    code, out, err = run([], capsys)
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "facet: error: no command; use 'facet detect', 'facet explain' or 'facet report' "
        "('facet --help' lists them)"
    ]


def test_report_exit_codes_follow_detect(emp, tmp_path, capsys):
    """0 without violations, 1 with them, 0 with --exit-zero (DESIGN §5)."""
    out = tmp_path / "r.html"
    for dc, extra, want in (
        ("not(t.salary > 1000)", [], 0),
        ("not(t.salary > 250)", [], 1),
        ("not(t.salary > 250)", ["--exit-zero"], 0),
    ):
        code, stdout, err = run(["report", emp, "--dc", dc, "--out", out, "-q", *extra], capsys)
        assert code == want, err
        assert "report written to" in stdout and out.read_text().startswith("<!doctype html>")


@pytest.mark.parametrize(
    ("target", "needle"),
    [
        ("out.html", "it is a directory"),
        ("missing/r.html", "does not exist; create it first"),
        ("emp.csv/r.html", "is a file, not a directory"),
        ("ro/r.html", "cannot write in"),
    ],
)
def test_report_bad_out_is_bad_input_and_leaves_nothing(
    emp, tmp_path, capsys, monkeypatch, target, needle
):
    """A bad --out of `facet report` exits 2 with one line, before detection, and leaves
    no file (it was an internal error, exit 3, after detection, and a directory target
    kept a temporary file beside it)."""
    (tmp_path / "out.html").mkdir()
    (tmp_path / "ro").mkdir()
    monkeypatch.chdir(tmp_path)
    real_open = os.open

    def no_write_in_ro(path, *a, **kw):  # a read-only directory, also for root
        if os.path.dirname(os.path.abspath(path)) == str(tmp_path / "ro"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **kw)

    monkeypatch.setattr(os, "open", no_write_in_ro)
    detected = []
    monkeypatch.setattr("facet.api.detect", lambda *a, **kw: detected.append(1))
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, out, err = run(["report", emp, "--dc", "not(t.salary > 250)", "--out", target], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and needle in err, err
    assert not detected  # refused before detection
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_report_failing_after_detection_leaves_nothing(emp, tmp_path, capsys, monkeypatch):
    def broken(*a, **kw):
        raise RuntimeError("boom")

    monkeypatch.setattr("facet.sinks.html.report_html", broken)
    code, _, err = run(["report", emp, "--dc", "not(t.salary > 250)", "--out",
                        tmp_path / "r.html"], capsys)  # fmt: skip
    assert code == 3 and "RuntimeError: boom" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emp.csv"]


def test_typing_messages_name_the_dc_that_orders_the_column(tmp_path, capsys):
    """The error for an ordered CSV column with no number, and the warning for an
    ordered text column of a typed input, name the DC whose < <= > >= orders it
    -- not the first DC that mentions the column (a contract probe's finding)."""
    csv = tmp_path / "d.csv"
    csv.write_text("A,B,C\n1,x,y\n1,y,z\n")
    rules = tmp_path / "loc.txt"
    rules.write_text("not(t.B = t'.B)\nnot(t.A = t'.A)\nnot(t.B > t'.B)\n")
    code, out, err = run(["detect", csv, "--rules", rules], capsys)
    assert code == 2 and out == ""
    assert f"column 'B' is compared with < <= > >= ({rules}:3)" in err
    pq_path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"A": [1, 1], "B": ["x", "y"], "C": ["y", "z"]}), pq_path)
    code, out, err = run(["detect", pq_path, "--rules", rules, "--exit-zero"], capsys)
    assert code == 0
    assert f"column 'B' is text (string) and {rules}:3 orders it with < <= > >=" in err
    # ordered through a column-to-column predicate: the column and the DC that orders it
    rules.write_text("not(t.C = t'.C)\nnot(t.B = t'.C)\nnot(t.B > t'.B)\n")
    code, out, err = run(["detect", pq_path, "--rules", rules, "--exit-zero"], capsys)
    assert code == 0
    assert (
        f"column 'C' is text (string) and it is compared with column 'B', which {rules}:3 "
        "orders with < <= > >=" in err
    )
    # two columns of types with no common one: the DC that compares them
    rules.write_text("not(t.A = t'.A)\nnot(t.C = t'.C)\nnot(t.A = t'.B)\n")
    code, out, err = run(["detect", pq_path, "--rules", rules], capsys)
    assert code == 2 and out == ""
    assert f"{rules}:3: columns 'A' (int), 'B' (text) are compared with each other" in err


@pytest.mark.parametrize("output", ["count", "tuples", "cells", "components"])
def test_limit_with_an_output_it_does_not_cap_warns(emp, capsys, output):
    """--limit caps pairs and blocks only; with another output it is said to be
    ignored (a warning, on stderr and in the JSON), and the rows are all there."""
    args = ["detect", emp, "--dc", "zip -> dept", "--output", output, "--format", "json"]
    code, out, err = run([*args, "--exit-zero"], capsys)
    full = json.loads(out)
    code, out, err = run([*args, "--exit-zero", "--limit", "1"], capsys)
    doc = json.loads(out)
    assert f"--output {output} lists" in err and "so it is ignored" in err
    assert any("so it is ignored" in w for w in doc["warnings"])

    def same(d: dict) -> list:
        return [{k: v for k, v in x.items() if k != "seconds"} for x in d["dcs"]]

    assert same(doc) == same(full) and doc.get(output) == full.get(output)
    code, out, err = run([*args[:-2], "--output", "pairs", "--limit", "1", "--exit-zero"], capsys)
    assert "ignored" not in err


def _corrupt_ipc_files(tmp_path: Path) -> list[Path]:
    """IPC files whose buffers lie (Arrow's readers leave that unchecked): a
    string offset and a dictionary index far past their arrays."""
    out = []
    for name, city, old, new in (
        ("offsets.arrow", pa.array(["x", "y", "z"]), [0, 1, 2, 3], [0, 1, 2, 2_000_000_000]),
        ("indices.arrow", pa.array(["x", "y", "y"]).dictionary_encode(), [0, 1, 1],
         [0, 1, 1_000_000_000]),
    ):  # fmt: skip
        path = tmp_path / name
        table = pa.table({"zip": ["aa", "aa", "bb"], "city": city})
        feather.write_feather(table, path, compression="uncompressed")
        raw = path.read_bytes()
        words = b"".join(v.to_bytes(4, "little") for v in old)
        assert raw.count(words) == 1
        path.write_bytes(raw.replace(words, b"".join(v.to_bytes(4, "little") for v in new)))
        out.append(path)
    return out


def test_a_corrupt_arrow_file_is_bad_input_not_a_crash(tmp_path):
    """Malformed IPC files made facet segfault (exit 139, no message; a probe's
    finding): a file's buffers are validated before any kernel reads them."""
    for path in _corrupt_ipc_files(tmp_path):
        proc = subprocess.run(
            [sys.executable, "-m", "facet", "detect", str(path), "--dc", "zip -> city"],
            capture_output=True, text=True,
        )  # fmt: skip
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"facet: error: cannot read '{path}': the file is corrupt (")
        assert len(proc.stderr.strip().splitlines()) == 1


def test_an_unreadable_file_says_permission_denied(tmp_path, monkeypatch):
    from facet import loading
    from facet.errors import DataError

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    (tmp_path / "x.csv").write_text("a\n1\n")
    monkeypatch.setattr(loading, "_load_path", denied)
    with pytest.raises(DataError, match="x.csv': permission denied; check the file's permissions"):
        loading.load(tmp_path / "x.csv")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_stdout_on_a_full_disk_is_one_error_line():
    """Output to a full device was an internal error asking for a bug report."""
    data = ROOT / "data" / "tax" / "tax_dirty_0010k.csv"
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "facet", "detect", str(data), "--dc", "zip -> city",
             "--output", "pairs"],
            stdout=full, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "facet: error: cannot write to stdout: No space left on device; free some space, "
        "or write the output to a file elsewhere (--out FILE)"
    ]


def test_a_report_that_finds_no_room_names_its_file(tmp_path, monkeypatch):
    """The HTML report (a text file) on a full disk: exit 2 naming ``--out``, the
    temporary removed (the line named neither, and spoke of --out as if not given)."""
    import errno

    from facet.sinks import files

    def full(*args, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    out = files.TextFile(str(tmp_path / "r.html"))
    monkeypatch.setattr(files, "open", full, raising=False)
    with pytest.raises(facet.FacetInputError) as info:
        out.write("<html>")
    assert str(info.value) == (
        f"--out '{tmp_path / 'r.html'}': cannot write: No space left on device; free some "
        "space or choose another directory"
    )
    assert list(tmp_path.iterdir()) == []


def test_options_are_taken_by_their_full_names_only(emp, capsys):
    """``explain --out x.csv`` was read as ``--output x.csv`` (an abbreviation)."""
    code, out, err = run(["explain", emp, "--dc", "a -> b", "--out", "x.csv"], capsys)
    assert code == 2 and out == ""
    assert err.strip() == (
        "facet: error: unrecognized arguments: --out x.csv (see 'facet explain --help')"
    )
    code, _, err = run(["detect", emp, "--dc", "a -> b", "--form", "json"], capsys)
    assert code == 2 and "(see 'facet detect --help')" in err


def test_a_parquet_file_named_as_csv_says_so(tmp_path, capsys):
    path = tmp_path / "table.txt"
    pq.write_table(pa.table({"a": [1, 1], "b": [1, 2]}), path)
    code, _, err = run(["detect", path, "--dc", "a -> b"], capsys)
    assert code == 2
    assert "this is a Parquet file, but its name says CSV; rename it to end in .parquet" in err
    csv_path = tmp_path / "par.csv"  # a CSV file whose header starts like Parquet's magic
    csv_path.write_text("PAR1,b\n1,1\n1,2\n")
    assert run(["detect", csv_path, "--dc", "PAR1 -> b"], capsys)[0] == 1


@pytest.mark.parametrize(
    ("err", "said"),
    [
        (RuntimeError("can't start new thread"), "the system refused a new thread"),
        (MemoryError(), "out of memory; check fewer DCs at once"),
        (OSError("Could not find/load shared object file 'libllvmlite.so'"), "did not load"),
    ],
)
def test_a_process_limit_reached_is_said_in_one_line(emp, capsys, monkeypatch, err, said):
    """Under ``ulimit -v`` the libraries fail in their own words (a thread not
    started, a library not loaded): exit 3 with a line saying which limit to raise,
    not "internal error ... report it"."""

    def refuse(args):
        raise err

    monkeypatch.setattr(cli, "run_detect", refuse)
    code, _, text = run(["detect", str(emp), "--dc", "dept -> zip"], capsys)
    assert code == 3 and said in text and "report it" not in text and len(text.splitlines()) == 1


def test_a_data_file_named_like_an_option_gets_a_hint(tmp_path, capsys, monkeypatch):
    (tmp_path / "-x.csv").write_text("a,b\n1,2\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["detect", "-x.csv", "--dc", "a -> b"], capsys)
    assert code == 2 and "write ./-x.csv or put -- before it" in err
    code, _, _ = run(["detect", "--dc", "a -> b", "--", "-x.csv"], capsys)
    assert code == 0


def test_under_nohup_a_sighup_does_not_stop_the_run(tmp_path):
    """SIGHUP inherited as ignored (``nohup``) stays ignored: the run finishes."""
    import signal
    import time

    data = tmp_path / "d.csv"
    data.write_text("a,b\n" + "".join(f"{i % 5},{i}\n" for i in range(2000)))
    out = tmp_path / "p.parquet"
    proc = subprocess.Popen(
        [sys.executable, "-m", "facet", "detect", str(data), "--dc", "a -> b", "--output",
         "pairs", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )  # fmt: skip
    try:
        while proc.poll() is None:
            proc.send_signal(signal.SIGHUP)
            time.sleep(0.05)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 1, err
    assert pq.read_table(out).num_rows == 2000 * 399
