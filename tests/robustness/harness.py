"""Runs robustness cases through the CLI (a subprocess) and the Python API, and checks them.

A :class:`Case` is a small directory of files (a table, a rules file, odd paths) plus a
``facet detect`` invocation.  Each case expects one of two outcomes (docs/semantics.md §9):

* **an error**: exit code 2; stderr holds exactly one ``facet: error: ...`` line (warnings
  aside; a DC syntax error's column is checked in the line's ``source:line:column:``); the
  line names the place (file, line, column, DC or option: ``Case.error``) and says how to fix
  it (``Case.hint``); stdout is empty; nothing is left at ``--out``, not even a temporary
  file.  Through the API, the exception is a :class:`facet.errors.FacetError` whose
  message is the same single line;
* **a correct result**: exit code 0 or 1 and, per DC, the violations and rows involved
  that :mod:`tests.naive` computes on ``Case.table``, the typed table the files hold.

No run may print a traceback.  Each CLI run is its own process: a child of the fork
server (tests/robustness/forkserver.py, which has imported facet once), or with
``FACET_ROBUSTNESS_EXEC=1`` the real ``facet`` executable.  The CLI runs of a test module
run concurrently, once per module (:func:`cli_runs_fixture`), started in the background
when collection ends (tests/robustness/conftest.py).  ``FACET_ROBUSTNESS_STDERR=PATH``
appends the stderr of every CLI run to ``PATH`` (for ``grep Traceback``);
``FACET_ROBUSTNESS_JOBS=N`` sets how many run at once (docs/fuzzing.md).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import facet
from facet.api import load_dcs
from facet.errors import EXIT_BAD_INPUT, FacetError
from tests.naive import naive_count, naive_rows_involved

_SCRIPT = Path(sys.executable).with_name("facet")
FACET = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "facet"]
JOBS = int(os.environ.get("FACET_ROBUSTNESS_JOBS", "0")) or max(2, min(4, os.cpu_count() or 2))
#: run every case through the real ``facet`` executable, not the fork server
EXEC = os.environ.get("FACET_ROBUSTNESS_EXEC", "") not in ("", "0")
STDERR_LOG = os.environ.get("FACET_ROBUSTNESS_STDERR")
_LOG_LOCK = threading.Lock()
_FORKSERVER = Path(__file__).with_name("forkserver.py")

#: stderr lines that may accompany any run
_NOISE = ("facet: warning: ", "facet: compiling ")


# --------------------------------------------------------------------------- files


@dataclass(frozen=True)
class Dir:
    """A directory at this path."""


@dataclass(frozen=True)
class Fifo:
    """A named pipe at this path (nothing ever writes to it)."""


@dataclass(frozen=True)
class Symlink:
    """A symbolic link to ``target`` (which may not exist)."""

    target: str


FileSpec = str | bytes | pa.Table | Dir | Fifo | Symlink


def csv_text(table: pa.Table) -> str:
    """``table`` as RFC 4180 text: a header, then one record per row; NULL is empty."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(table.column_names)
    for row in table.to_pylist():
        w.writerow(["" if v is None else v for v in row.values()])
    return buf.getvalue()


def build(files: Mapping[str, FileSpec], where: Path) -> None:
    """Create ``files`` (name -> content) in the directory ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    for name, spec in files.items():
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(spec, str):
            path.write_bytes(spec.encode("utf-8"))
        elif isinstance(spec, bytes):
            path.write_bytes(spec)
        elif isinstance(spec, Dir):
            path.mkdir()
        elif isinstance(spec, Fifo):
            os.mkfifo(path)
        elif isinstance(spec, Symlink):
            os.symlink(spec.target, path)
        elif name.endswith((".parquet", ".pq")):
            with open(path, "wb") as f:  # a file object: pyarrow cannot open non-UTF-8 names
                pq.write_table(spec, f)
        elif name.endswith((".arrow", ".feather")):
            with open(path, "wb") as f:
                feather.write_feather(spec, f)
        else:
            path.write_bytes(csv_text(spec).encode("utf-8"))


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True, eq=False)
class Case:
    """One ``facet detect`` run and what it must give (see the module docstring)."""

    id: str
    dcs: tuple[str, ...] = ()
    rules: str | None = None
    data: str = "t.csv"
    files: Mapping[str, Any] = field(default_factory=dict)
    output: str = "count"
    out: str | None = None
    schema: str | None = None
    #: an error is expected: its message holds every one of these (the place, the problem) ...
    error: tuple[str, ...] = ()
    #: ... and this advice on how to fix it (or one of these)
    hint: str | tuple[str, ...] | None = None
    #: a DC syntax error: the 1-based column its place names (where a caret would point)
    caret: int | None = None
    #: a result is expected: the typed table behind the files, for tests/naive.py
    table: pa.Table | None = None
    #: warnings (substrings) that must be on stderr
    warns: tuple[str, ...] = ()
    #: bytes fed to the CLI's stdin (the API run is skipped)
    stdin: bytes | None = None
    #: more command-line arguments, and the keyword arguments of detect() they stand for
    #: (None: the case has no API counterpart)
    extra_args: tuple[str, ...] = ()
    api_kwargs: Mapping[str, Any] | None = field(default_factory=dict)
    #: seconds before the case counts as hung (generous: the first CLI case of a fresh clone
    #: compiles the kernels, about 35 s on 2 slow cores, longer on a loaded machine)
    timeout: float = 180.0
    #: run the API in a child process (the case may hang)
    api_in_child: bool = False
    #: the CLI / API run is a known failure: the fix it needs (an xfail reason)
    xfail_cli: str | None = None
    xfail_api: str | None = None

    def __post_init__(self) -> None:
        assert bool(self.error) != (self.table is not None), f"{self.id}: error xor table"
        assert not self.error or self.hint, f"{self.id}: an error case needs a hint"

    def argv(self) -> list[str]:
        args = ["detect", self.data]
        if self.rules is not None:
            args += ["--rules", self.rules]
        args += [f"--dc={d}" for d in self.dcs]  # '=': a DC may start with '-'
        if self.output != "count":
            args += ["--output", self.output]
        if self.out is not None:
            args += ["--out", self.out]
        if self.schema is not None:
            args += [f"--schema={self.schema}"]
        if not self.error:
            args += ["--format", "json"]
        return args + list(self.extra_args)


def _xfail(reason: str | None) -> tuple[Any, ...]:
    return () if reason is None else (pytest.mark.xfail(strict=True, reason=reason),)


def cli_params(cases: list[Case]) -> list[Any]:
    return [pytest.param(c, id=c.id, marks=_xfail(c.xfail_cli)) for c in cases]


def api_params(cases: list[Case]) -> list[Any]:
    return [
        pytest.param(c, id=c.id, marks=_xfail(c.xfail_api))
        for c in cases
        if c.stdin is None and c.api_kwargs is not None
    ]


# --------------------------------------------------------------------------- CLI


@dataclass
class CliRun:
    code: int | None  # None: killed after the case's timeout
    stdout: str
    stderr: str
    out: bytes | None  # what is at --out afterwards (b"" for something not a file)
    leftovers: list[str]


def _leftovers(out: Path | None) -> list[str]:
    """Temporary files a writer may have left beside ``out``."""
    if out is None:
        return []
    try:
        names = os.listdir(out.parent)
    except OSError:
        return []
    return [n for n in names if n.startswith(".facet-") or n.endswith(".part")]


def _out_path(case: Case, where: Path) -> Path | None:
    return None if case.out is None else where / case.out


def _out_content(case: Case, where: Path) -> bytes | None:
    """The bytes at ``--out`` after a run; None when nothing is there."""
    target = _out_path(case, where)
    if target is None or not os.path.lexists(target):
        return None
    return target.read_bytes() if target.is_file() else b""


def check_out_untouched(case: Case, out: bytes | None, leftovers: list[str]) -> None:
    """After a failed run: nothing new at ``--out`` (a file already there is unchanged),
    and no temporary file beside it (docs/semantics.md §7, §9)."""
    before = case.files.get(case.out) if case.out is not None else None
    if isinstance(before, bytes | str):
        before = before.encode() if isinstance(before, str) else before
        assert out == before, f"{case.out} was changed by a failed run"
    elif before is None:
        assert out is None, f"{case.out} exists after a failed run"
    assert not leftovers, f"temporary files left: {leftovers}"


class ForkServer:
    """A ``tests/robustness/forkserver.py`` process: runs one command line at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(_FORKSERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def run(self, argv: list[str], where: Path, stdin: bytes | None, timeout: float):
        """(exit code or None after ``timeout``, stdout bytes, stderr bytes)."""
        io_dir = Path(tempfile.mkdtemp(prefix="io-", dir=where.parent))
        stdin_path = None
        if stdin is not None:
            stdin_path = io_dir / "stdin"
            stdin_path.write_bytes(stdin)
        req = {
            "argv": argv,
            "cwd": os.fsdecode(where),
            "stdin": None if stdin_path is None else str(stdin_path),
            "stdout": str(io_dir / "stdout"),
            "stderr": str(io_dir / "stderr"),
            "timeout": timeout,
        }
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError(f"the fork server exited ({self.proc.poll()})")
        code = json.loads(reply)["code"]
        out, err = (io_dir / "stdout").read_bytes(), (io_dir / "stderr").read_bytes()
        shutil.rmtree(io_dir, ignore_errors=True)
        return code, out, err

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


_SERVERS: queue.Queue[ForkServer] = queue.Queue()
_ALL_SERVERS: list[ForkServer] = []
_SERVERS_LOCK = threading.Lock()


def _fork_run(argv: list[str], where: Path, stdin: bytes | None, timeout: float):
    with _SERVERS_LOCK:
        if _SERVERS.empty() and len(_ALL_SERVERS) < JOBS:
            server = ForkServer()
            _ALL_SERVERS.append(server)
            _SERVERS.put(server)
    server = _SERVERS.get()
    try:
        return server.run(argv, where, stdin, timeout)
    finally:
        _SERVERS.put(server)


def _exec_run(argv: list[str], where: Path, stdin: bytes | None, timeout: float):
    try:
        proc = subprocess.run(
            FACET + argv,
            cwd=where,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
        )
        return proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        return None, exc.stdout or b"", exc.stderr or b""


def run_cli(case: Case, where: Path, *, exec_facet: bool = EXEC) -> CliRun:
    """Build the case in ``where`` and run ``facet`` there in a subprocess: the real
    executable (``exec_facet``), or a child of the fork server (the default)."""
    build(case.files, where)
    runner = _exec_run if exec_facet else _fork_run
    code, out, err = runner(case.argv(), where, case.stdin, case.timeout)
    run = CliRun(
        code,
        out.decode("utf-8", errors="replace"),
        err.decode("utf-8", errors="replace"),
        _out_content(case, where),
        _leftovers(_out_path(case, where)),
    )
    if STDERR_LOG:
        with _LOG_LOCK, open(STDERR_LOG, "a", encoding="utf-8") as log:
            log.write(f"== {case.id}: exit {run.code}\n{run.stderr}")
    return run


_POOL: ThreadPoolExecutor | None = None
#: test module -> its cases, and the CLI runs started for it (case id -> future)
REGISTRY: dict[str, list[Case]] = {}
_STARTED: dict[str, dict[str, Future[CliRun]]] = {}
_ROOT: Path | None = None


def _root() -> Path:
    global _ROOT
    if _ROOT is None:
        _ROOT = Path(tempfile.mkdtemp(prefix="facet-robustness-"))
    return _ROOT


def start_cli_runs(module: str) -> dict[str, Future[CliRun]]:
    """Start (once) the CLI runs of ``module``'s cases in the background, ``JOBS`` at a
    time, each case in its own directory.  The robustness conftest starts every selected
    module's runs when collection ends, so that they overlap the in-process API tests."""
    global _POOL
    if module not in _STARTED:
        cases = REGISTRY[module]
        ids = [c.id for c in cases]
        assert len(set(ids)) == len(ids), f"{module}: case ids must be unique"
        if _POOL is None:
            _POOL = ThreadPoolExecutor(JOBS, thread_name_prefix="facet-cli")
        where = _root() / module.rsplit(".", 1)[-1]
        _STARTED[module] = {
            c.id: _POOL.submit(run_cli, c, where / f"case{i}") for i, c in enumerate(cases)
        }
    return _STARTED[module]


def stop_cli_runs() -> None:
    """Cancel the runs not started yet, wait for the others, remove their directories."""
    global _POOL, _ROOT
    if _POOL is not None:
        _POOL.shutdown(wait=True, cancel_futures=True)
        _POOL = None
    with _SERVERS_LOCK:
        for server in _ALL_SERVERS:
            server.close()
        _ALL_SERVERS.clear()
        while not _SERVERS.empty():
            _SERVERS.get()
    if _ROOT is not None:
        shutil.rmtree(_ROOT, ignore_errors=True)
        _ROOT = None
    _STARTED.clear()


def cli_runs_fixture(cases: list[Case]) -> Callable[..., dict[str, CliRun]]:
    """A module-scoped fixture holding the CLI runs of ``cases`` (id -> run); the calling
    module registers its cases, so their runs can start before its tests do."""
    module = sys._getframe(1).f_globals["__name__"]
    REGISTRY[module] = cases

    @pytest.fixture(scope="module")
    def cli_runs() -> dict[str, CliRun]:
        return {cid: fut.result() for cid, fut in start_cli_runs(module).items()}

    return cli_runs


def error_message(stderr: str, caret: int | None) -> str:
    """The one error line of ``stderr`` (without ``facet: error: ``), its layout checked:
    nothing else but warnings (stderr is not a terminal: no caret display), and for a DC
    syntax error the column ``caret`` in its ``source:line:column:`` place."""
    lines = [ln for ln in stderr.splitlines() if not ln.startswith(_NOISE)]
    assert len(lines) == 1 and lines[0].startswith("facet: error: "), (
        f"expected one error line, got:\n{stderr}"
    )
    msg = lines[0].removeprefix("facet: error: ")
    if caret is not None:
        place = re.match(r"(.*):(\d+):(\d+): ", msg)
        assert place, f"no source:line:column: in {msg!r}"
        assert int(place.group(3)) == caret, f"not column {caret}: {msg}"
    return msg


def check_message(case: Case, msg: str) -> None:
    for part in case.error:
        assert part in msg, f"{part!r} not in the error: {msg}"
    hints = (case.hint,) if isinstance(case.hint, str) else case.hint or ()
    assert any(h in msg for h in hints), f"no hint {case.hint!r} in: {msg}"


def check_cli(case: Case, run: CliRun) -> None:
    assert run.code is not None, f"no exit after {case.timeout} s (killed); stderr:\n{run.stderr}"
    assert "Traceback" not in run.stderr, run.stderr
    if case.error:
        assert run.code == EXIT_BAD_INPUT, f"exit {run.code}, expected 2; stderr:\n{run.stderr}"
        check_message(case, error_message(run.stderr, case.caret))
        assert run.stdout == "", f"output on stdout after an error:\n{run.stdout}"
        check_out_untouched(case, run.out, run.leftovers)
        return
    assert run.code in (0, 1), f"exit {run.code}; stderr:\n{run.stderr}"
    noise = [ln for ln in run.stderr.splitlines() if not ln.startswith(_NOISE)]
    assert not noise, f"unexpected stderr:\n{run.stderr}"
    for w in case.warns:
        assert w in run.stderr, f"no warning {w!r} in:\n{run.stderr}"
    doc = json.loads(run.stdout)
    got = [(d["violations"], d["rows_involved"]) for d in doc["dcs"]]
    assert got == expected_counts(case)
    assert run.code == (1 if doc["total_violations"] else 0)


def assert_no_traceback(runs: Mapping[str, CliRun]) -> None:
    """The issue's done-when: a grep of all robustness stderr finds no traceback."""
    bad = [cid for cid, run in runs.items() if "Traceback" in run.stderr]
    assert not bad, f"tracebacks on stderr in: {bad}"


# --------------------------------------------------------------------------- naive


def expected_counts(case: Case) -> list[tuple[int, int]]:
    """(violations, rows involved) per DC, by tests/naive.py on ``case.table``."""
    assert case.table is not None
    rules = None
    if case.rules is not None:
        spec = case.files.get(case.rules, case.stdin)  # the rules file, or what stdin holds
        rules = (spec if isinstance(spec, str) else spec.decode("utf-8-sig")) + "\n"
    dcs = load_dcs(rules, list(case.dcs))
    return [(naive_count(case.table, dc), naive_rows_involved(case.table, dc)) for dc in dcs]


# --------------------------------------------------------------------------- API


@dataclass
class ApiRun:
    counts: list[tuple[int, int]] | None
    error_type: str | None
    facet_error: bool
    exit_code: int | None
    message: str
    out: bytes | None
    leftovers: list[str]


def _detect_kwargs(case: Case) -> dict[str, Any]:
    return {
        "dcs": list(case.dcs),
        "output": case.output,
        "out": case.out,
        "schema": case.schema,
        **(case.api_kwargs or {}),
    }


def run_api(case: Case, where: Path) -> ApiRun:
    """Build the case in ``where`` and call ``facet.detect`` there."""
    build(case.files, where)
    if case.api_in_child:
        return _run_api_child(case, where)
    counts, err = None, None
    with contextlib.chdir(where):
        rules = None if case.rules is None else Path(case.rules)
        try:
            res = facet.detect(case.data, rules, **_detect_kwargs(case))
            counts = [(d.violations, d.rows_involved) for d in res.dcs]
        except Exception as exc:  # noqa: BLE001 - the type is what is checked
            err = exc
    return ApiRun(
        counts,
        None if err is None else f"{type(err).__module__}.{type(err).__name__}",
        isinstance(err, FacetError),
        getattr(err, "exit_code", None),
        "" if err is None else str(err),
        _out_content(case, where),
        _leftovers(_out_path(case, where)),
    )


_CHILD = """
import json, sys
from pathlib import Path
import facet
from facet.errors import FacetError
data, rules, kw = json.loads(sys.argv[1])
doc = {"counts": None, "error_type": None, "facet_error": False, "exit_code": None, "message": ""}
try:
    res = facet.detect(data, None if rules is None else Path(rules), **kw)
    doc["counts"] = [(d.violations, d.rows_involved) for d in res.dcs]
except Exception as err:
    doc.update(error_type=f"{type(err).__module__}.{type(err).__name__}",
               facet_error=isinstance(err, FacetError),
               exit_code=getattr(err, "exit_code", None), message=str(err))
print(json.dumps(doc))
"""


def _run_api_child(case: Case, where: Path) -> ApiRun:
    arg = json.dumps([case.data, case.rules, _detect_kwargs(case)])
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, arg],
            cwd=where,
            capture_output=True,
            timeout=case.timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"facet.detect did not return within {case.timeout} s (killed)")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    doc = json.loads(proc.stdout)
    counts = None if doc["counts"] is None else [tuple(c) for c in doc["counts"]]
    return ApiRun(
        counts,
        doc["error_type"],
        doc["facet_error"],
        doc["exit_code"],
        doc["message"],
        _out_content(case, where),
        _leftovers(_out_path(case, where)),
    )


def check_api(case: Case, run: ApiRun) -> None:
    if case.error:
        assert run.error_type is not None, f"no error; counts {run.counts}"
        assert run.facet_error, f"{run.error_type} is not a FacetError: {run.message}"
        assert run.exit_code == EXIT_BAD_INPUT, f"{run.error_type} has exit code {run.exit_code}"
        assert run.message.strip(), "empty error message"
        assert len(run.message.splitlines()) == 1, f"not one line: {run.message!r}"
        check_message(case, run.message)
        check_out_untouched(case, run.out, run.leftovers)
        return
    assert run.error_type is None, f"{run.error_type}: {run.message}"
    assert run.counts == expected_counts(case)
