"""Missing, unreadable, odd or damaged data paths; --out paths that cannot be written;
bad usage (docs/semantics.md §7, §9).

Running as root, no file can be made unreadable with chmod, so "unreadable" means a
directory, a named pipe, a broken symbolic link, a file name that is not UTF-8, or a file
whose bytes are not what its extension says.  An --out that cannot be written: under a
regular file, in a missing directory, under /proc or /sys, an existing directory.
"""

from __future__ import annotations

import io
import resource
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.robustness.harness import (
    FACET,
    Case,
    Dir,
    Fifo,
    Symlink,
    api_params,
    assert_no_traceback,
    check_api,
    check_cli,
    cli_params,
    cli_runs_fixture,
    csv_text,
    run_api,
)

T = pa.table({"a": ["1", "1", "2"], "b": ["x", "y", "x"]})
CSV = csv_text(T)
FILES = {"t.csv": CSV}
DCS = ("a -> b",)


def parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def unreadable(case_id: str, data: str, spec, error: tuple[str, ...], hint: str, **kw) -> Case:
    """DATA at ``data`` (built from ``spec``) cannot be read."""
    return Case(
        case_id,
        dcs=DCS,
        data=data,
        files={data: spec} if spec is not None else {},
        output="pairs",
        out="pairs.parquet",
        error=error,
        hint=hint,
        **kw,
    )


def bad_out(case_id: str, out: str, error: tuple[str, ...], hint: str, **kw) -> Case:
    """A run whose --out cannot be written (or is not allowed)."""
    files = {**FILES, **kw.pop("files", {})}
    output = kw.pop("output", "pairs")
    return Case(case_id, dcs=DCS, files=files, output=output, out=out, error=error, hint=hint, **kw)


DATA = [
    unreadable(
        "data-missing",
        "nowhere.csv",
        None,
        ("'nowhere.csv'", "no such file"),
        "check the path",
    ),
    unreadable(
        "data-broken-symlink",
        "t.csv",
        Symlink("gone.csv"),
        ("'t.csv'",),
        "link",
    ),
    unreadable("data-directory", "t.csv", Dir(), ("'t.csv'", "directory"), "give a file"),
    unreadable(
        "data-fifo",
        "t.csv",
        Fifo(),
        ("'t.csv'", "not a regular file"),
        "file",
        # a read would block forever; 10 s leaves a loaded CI machine room to start
        # Python and import facet (3 s did not, once)
        timeout=10.0,
        api_in_child=True,
    ),
    unreadable(
        "data-non-utf8-name-csv",
        "d\udcffta.csv",
        CSV,
        ("ta.csv", "not UTF-8"),
        "rename",
    ),
    unreadable(
        "data-non-utf8-name-parquet",
        "d\udcffta.parquet",
        T,
        ("ta.parquet", "not UTF-8"),
        "rename",
    ),
    unreadable("data-dev-null", "/dev/null", None, ("/dev/null", "empty"), "header"),
    unreadable(
        "data-csv-named-parquet", "t.parquet", CSV, ("'t.parquet'", "Parquet"), "not a parquet"
    ),
    unreadable(
        "data-truncated-parquet",
        "t.parquet",
        parquet_bytes(T)[:200],
        ("'t.parquet'", "Parquet"),
        "not a parquet",
    ),
    unreadable(
        "data-empty-parquet",
        "t.parquet",
        b"",
        ("'t.parquet'", "0 bytes"),
        "check that the file",
    ),
    unreadable(
        "data-garbage-arrow",
        "t.arrow",
        b"garbage",
        ("'t.arrow'",),
        "check that the file",
    ),
    unreadable(
        "data-garbage-gzip",
        "t.csv.gz",
        b"garbage",
        ("'t.csv.gz'",),
        "check that the file",
    ),
    Case(
        "data-parquet-without-extension",
        dcs=DCS,
        data="t.dat",
        files={"t.dat": parquet_bytes(T)},
        table=T,
    ),
    Case(
        "data-name-with-spaces-and-unicode",
        dcs=DCS,
        data="my data ünï 数据.csv",
        files={"my data ünï 数据.csv": CSV},
        table=T,
    ),
]

OUT = [
    bad_out("out-under-missing-directory", "nodir/pairs.parquet", ("--out", "nodir"), "exist"),
    bad_out(
        "out-under-regular-file",
        "t.csv/pairs.parquet",
        ("--out", "t.csv"),
        "not a directory",
    ),
    bad_out(
        "out-under-regular-file-json",
        "t.csv/counts.json",
        ("--out", "t.csv"),
        "not a directory",
        output="count",
    ),
    bad_out(
        "out-in-proc",
        "/proc/facet-robustness.parquet",
        ("--out", "/proc/facet-robustness.parquet"),
        "writable",
    ),
    bad_out(
        "out-in-proc-json-counts",
        "/proc/facet-robustness.json",
        ("--out", "/proc/facet-robustness.json"),
        "writable",
        output="count",
    ),
    bad_out(
        "out-in-sys",
        "/sys/facet-robustness.csv",
        ("--out", "/sys/facet-robustness.csv"),
        "writable",
    ),
    bad_out(
        "out-is-a-directory",
        "res.parquet",
        ("--out", "res.parquet", "directory"),
        "file path",
        files={"res.parquet": Dir()},
    ),
    bad_out(
        "out-trailing-slash",
        "res.parquet/",
        ("--out", "res.parquet/", "directory"),
        "file path",
    ),
    bad_out("out-unknown-extension", "res.txt", ("--out", "'.txt'"), "use one of"),
    bad_out("out-no-extension", "res", ("--out", "'res'"), "use one of"),
    bad_out("out-json-for-pairs", "res.json", ("--out", "'.json'"), "use one of"),
    Case(
        "out-existing-file-kept-after-error",
        dcs=("a -> bb",),
        files={**FILES, "res.parquet": b"the previous result"},
        output="pairs",
        out="res.parquet",
        error=("--dc:1", "'bb'"),
        hint="did you mean 'b'?",
    ),
]

USAGE = [
    Case("usage-no-dcs", files=FILES, error=("no denial constraints",), hint="--dc"),
    Case(
        "usage-negative-limit",
        dcs=DCS,
        files=FILES,
        output="pairs",
        extra_args=("--limit", "-1"),
        api_kwargs={"limit": -1},
        error=("--limit", "-1"),
        hint=">= 0",
    ),
    Case(
        "usage-unknown-output",
        dcs=DCS,
        files=FILES,
        output="bogus",
        error=("'bogus'",),
        hint=("choose from", "use one of"),
    ),
    Case(
        "usage-unknown-option",
        dcs=DCS,
        files=FILES,
        extra_args=("--bogus",),
        api_kwargs=None,
        error=("--bogus",),
        hint="--help",
    ),
    Case(
        "usage-empty-schema-column",
        dcs=DCS,
        files=FILES,
        schema=":int",
        error=("--schema", "''"),
        hint="check the spelling",
    ),
]


CASES = DATA + OUT + USAGE
cli_runs = cli_runs_fixture(CASES)


@pytest.mark.parametrize("case", cli_params(CASES))
def test_cli(case: Case, cli_runs) -> None:
    check_cli(case, cli_runs[case.id])


@pytest.mark.parametrize("case", api_params(CASES))
def test_api(case: Case, tmp_path) -> None:
    check_api(case, run_api(case, tmp_path))


def test_no_traceback_on_stderr(cli_runs) -> None:
    assert_no_traceback(cli_runs)


# ---------------------------------------------------------------------------- a full disk

#: 400 equal rows: 159,600 pairs, about 1.5 MB of CSV
EQUAL_ROWS = "a\n" + "1\n" * 400
FILE_SIZE_LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def full_disk_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """``facet`` listing pairs to a CSV file while no file may grow past 64 KiB (as on a
    full disk: writes fail with EFBIG; Python ignores SIGXFSZ)."""
    where = tmp_path_factory.mktemp("full-disk")
    (where / "t.csv").write_text(EQUAL_ROWS)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))

    argv = ["detect", "t.csv", "--dc", "not(t.a = t'.a)", "--output", "pairs", "--out", "p.csv"]
    proc = subprocess.run(
        FACET + argv, cwd=where, capture_output=True, text=True, preexec_fn=limit, timeout=60
    )
    return proc, where


def test_full_disk_leaves_nothing_at_out(full_disk_run) -> None:
    proc, where = full_disk_run
    assert proc.returncode not in (0, 1), "the write could not succeed"
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert not (where / "p.csv").exists()
    assert [p.name for p in where.iterdir()] == ["t.csv"], "a temporary file was left"


def test_full_disk_is_a_one_line_error_with_a_fix(full_disk_run) -> None:
    proc, _ = full_disk_run
    assert proc.returncode == 2
    assert proc.stderr.startswith("facet: error: --out 'p.csv': ")
    assert "free some space" in proc.stderr or "choose another" in proc.stderr
