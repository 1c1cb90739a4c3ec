"""Limits and progress (docs/semantics.md §7, §9): ``--timeout`` / ``timeout=``,
the memory check of pairs kept in memory, pairs streaming in bounded memory,
progress events and the terminal display, ``--quiet``, file modes and the text
report."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import select
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import facet
from facet.cli import main
from facet.errors import FacetInputError
from facet.progress import (
    MEMORY_ENV,
    DeadlineExceeded,
    ProgressEvent,
    TerminalProgress,
    available_memory,
    deadline_in,
    kernels_cache_cold,
    parse_bytes,
)

ROOT = Path(__file__).resolve().parent.parent
TAX = ROOT / "data" / "tax" / "tax_dirty_0010k.csv"
FACET = [sys.executable, "-m", "facet"]

EMP = """name,dept,salary,rate,zip
ann,a,100,1.5,01907
bob,a,200,1.0,1907
cid,b,150,2.0,01907
dan,b,150,,02110
eve,a,300,0.5,01907
"""

#: many pairs, quickly: every row equal on ``a`` (n * (n - 1) pairs)
SAME = "not(t.a = t'.a)"


@pytest.fixture
def emp(tmp_path: Path) -> Path:
    p = tmp_path / "emp.csv"
    p.write_text(EMP)
    return p


def _same_table(path: Path, n: int) -> Path:
    pq.write_table(pa.table({"a": np.zeros(n, np.int64), "b": np.arange(n, dtype=np.int64)}), path)
    return path


def _facet(*args, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*FACET, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )


def _on_pty(args: list, env: dict | None = None, timeout: float = 300) -> tuple[int, bytes, str]:
    """Run facet with stderr on a pseudo-terminal (80 x 24): exit code, what the
    terminal got, stdout."""
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(
        [*FACET, *map(str, args)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )
    os.close(slave)
    got = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            got += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    out = proc.stdout.read().decode() if proc.stdout else ""
    return proc.wait(timeout=60), got, out


# ----------------------------------------------------------------------------- timeout


def test_timeout_exits_3_quickly_and_leaves_nothing(tmp_path):
    """5 billion pairs to a file would take minutes; --timeout 2 stops it: exit 3,
    one line, no output file and no temporary file."""
    data = _same_table(tmp_path / "same.parquet", 70_000)
    out = tmp_path / "pairs.parquet"
    t = time.monotonic()
    p = _facet("detect", data, "--dc", SAME, "--output", "pairs", "--out", out, "--timeout", "2")
    wall = time.monotonic() - t
    assert p.returncode == 3, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("facet: error: --timeout: time limit of 2 s")
    assert p.stdout == ""
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [data]
    assert wall < 2 + 20  # start-up + the deadline + the stop, not the minutes of the whole run


def test_timeout_api_raises_and_restores_the_alarm(tmp_path):
    data = _same_table(tmp_path / "same.parquet", 70_000)
    out = tmp_path / "pairs.csv"
    facet.detect(data, dcs=[SAME])  # load the kernels outside the clock
    t = time.monotonic()
    with pytest.raises(DeadlineExceeded) as info:
        facet.detect(data, dcs=[SAME], output="pairs", out=out, timeout=0.5)
    late = time.monotonic() - t - 0.5
    assert late < 3, late  # batches of pairs are checked; the alarm is a backstop
    assert info.value.seconds == 0.5 and "DC 0" in info.value.where
    assert list(tmp_path.iterdir()) == [data]
    # the alarm is disarmed and the previous handler back
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
    # a run within its time limit is unaffected, and its result works afterwards
    res = facet.detect(TAX, dcs=["zip -> city"], timeout=600)
    assert res.dcs[0].violations == 40552
    assert sum(b.num_rows for b in res.iter_pairs(limit=5)) == 5


def test_timeout_during_counting_of_many_dcs(tmp_path):
    """The deadline is checked between DCs, whatever each costs."""
    events: list[ProgressEvent] = []

    def slow(ev: ProgressEvent) -> None:
        events.append(ev)
        if ev.phase == "count" and ev.done:
            time.sleep(0.3)

    with pytest.raises(DeadlineExceeded) as info:
        facet.detect(TAX, dcs=["zip -> city"] * 20, progress=slow, timeout=1.5)
    assert "counting DC" in info.value.where
    assert 0 < max(e.done for e in events if e.phase == "count") < 20


def test_timeout_from_inside_a_kernel_is_exit_3(emp, monkeypatch, capsys):
    """The alarm going off as a numba kernel returns surfaces as a SystemError
    whose context is the deadline: still exit 3 and one line."""
    import facet.api

    def kernel_returned(*args, **kwargs):
        try:
            raise DeadlineExceeded(2, "counting DC 0")
        except DeadlineExceeded:
            raise SystemError("<numba kernel> returned a result with an exception set")  # noqa: B904

    monkeypatch.setattr(facet.api, "detect", kernel_returned)
    code = main(["detect", str(emp), "--dc", "zip -> dept", "--timeout", "2"])
    err = capsys.readouterr().err
    assert code == 3
    assert err.splitlines() == [
        "facet: error: --timeout: time limit of 2 s reached while counting DC 0; "
        "the run was stopped and nothing was written"
    ]
    assert deadline_in(SystemError()) is None


def _replaced_by_c_code(raise_signal):
    """What CPython's import machinery can do to an exception a signal handler
    raises inside it: drop it and raise an error of its own, with no context."""

    def run(*args, **kwargs):
        with contextlib.suppress(KeyboardInterrupt, DeadlineExceeded):
            raise_signal()
        raise TypeError("expected a message argument")

    return run


@pytest.mark.parametrize(("handler", "code", "line"), [
    ("_on_sigterm", 143, "facet: terminated"),
    ("_on_sigint", 130, "facet: interrupted"),
])  # fmt: skip
def test_a_signal_swallowed_by_c_code_still_exits_as_the_signal(
    emp, monkeypatch, capsys, handler, code, line
):
    """A SIGTERM / Ctrl-C whose exception C code replaced (the flaky exit 3
    "internal error: TypeError: expected a message argument" of a SIGTERM under
    load) still exits 143 / 130 with one line; the next run starts clean."""
    import facet.api
    import facet.cli

    on_signal = getattr(facet.cli, handler)
    before = signal.getsignal(signal.SIGINT)  # another library's (Spark's) or Python's
    monkeypatch.setattr(facet.api, "detect", _replaced_by_c_code(lambda: on_signal(15, None)))
    assert main(["detect", str(emp), "--dc", "zip -> dept"]) == code
    assert capsys.readouterr().err.splitlines() == [line]
    # a later run's own error is not taken for the earlier signal
    monkeypatch.setattr(facet.api, "detect", _replaced_by_c_code(lambda: None))
    assert main(["detect", str(emp), "--dc", "zip -> dept"]) == 3
    assert "internal error: TypeError" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is before  # main restored it


def test_a_check_swallowed_by_the_run_still_times_out(tmp_path):
    """Code in the run that swallows the deadline's exception and goes on (a
    callback, C code replacing it with an error of its own) does not hold the
    deadline: the caller is stopped at it all the same."""
    fired = []

    def slow(event):
        if event.phase == "count" and not fired:
            fired.append(1)
            _replaced_by_c_code(lambda: time.sleep(5))()

    t = time.monotonic()
    with pytest.raises(DeadlineExceeded) as info:
        facet.detect(TAX, dcs=["zip -> city"], progress=slow, timeout=1.0)
    assert time.monotonic() - t < 2 and "counting" in info.value.where
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    # without a deadline, the same error is an error
    with pytest.raises(TypeError):
        facet.detect(TAX, dcs=["zip -> city"], progress=_replaced_by_c_code(lambda: None))


@pytest.fixture(scope="module")
def spin():
    """A compiled loop of about 4 s that holds its thread in machine code (no
    Python runs there until it returns; it releases the GIL, as facet's kernels do)."""
    from numba import njit

    @njit(nogil=True)
    def loop(n):
        x = 1
        for _ in range(n):
            x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFF
        return x

    loop(10)
    t = time.perf_counter()
    loop(10**7)
    n = int(4.0 / max(time.perf_counter() - t, 1e-4) * 10**7)
    return lambda: loop(n)


@pytest.mark.parametrize("phase", ["load", "warmup", "encode", "count", "write"])
def test_the_deadline_holds_in_every_phase(spin, phase, tmp_path):
    """A phase held in machine code for seconds (a kernel, Arrow's reader, numba
    compiling) is stopped at the deadline, within half a second, not when it returns."""
    out = tmp_path / "p.parquet"

    def slow(ev: ProgressEvent) -> None:
        if ev.phase == phase and ev.done == 0:
            spin()

    facet.detect(TAX, dcs=["zip -> city"], output="pairs")  # kernels loaded outside the clock
    t = time.monotonic()
    with pytest.raises(DeadlineExceeded) as info:
        facet.detect(TAX, dcs=["zip -> city"], output="pairs", out=out, progress=slow, timeout=1)
    late = time.monotonic() - t - 1
    assert late < 0.5 + 0.5, late  # (half a second more for a loaded machine)
    assert info.value.where.startswith({"load": "loading", "warmup": "loading kernels",
                                        "encode": "encoding", "count": "counting",
                                        "write": "listing"}[phase])  # fmt: skip
    assert list(tmp_path.iterdir()) == []
    time.sleep(4)  # the stopped run's thread ends its loop; it writes nothing
    assert list(tmp_path.iterdir()) == []


def test_the_command_line_deadline_counts_from_the_start_and_holds_in_a_kernel(
    spin, emp, monkeypatch, capsys
):
    import facet.api

    count_all = facet.api.count_all

    def slow_count(*args, **kwargs):
        spin()
        return count_all(*args, **kwargs)

    monkeypatch.setattr(facet.api, "count_all", slow_count)
    out = emp.parent / "p.csv"
    t = time.monotonic()
    code = main(["detect", str(emp), "--dc", "zip -> dept", "--output", "pairs", "--out",
                 str(out), "--timeout", "1"])  # fmt: skip
    assert code == 3 and time.monotonic() - t < 1 + 1.0
    assert capsys.readouterr().err.splitlines() == [
        "facet: error: --timeout: time limit of 1 s reached while counting; "
        "the run was stopped and nothing was written"
    ]
    assert not out.exists()


@pytest.mark.parametrize("bad", ["0", "-1", "abc", "inf"])
def test_timeout_must_be_positive_seconds(emp, bad, capsys):
    assert main(["detect", str(emp), "--dc", "zip -> dept", "--timeout", bad]) == 2
    assert capsys.readouterr().err.startswith("facet: error: argument --timeout")
    with pytest.raises(FacetInputError):
        facet.detect(emp, dcs=["zip -> dept"], timeout=float(bad) if bad != "abc" else 0)


# ----------------------------------------------------------------------------- memory


def test_pairs_that_do_not_fit_are_refused_before_listing(tmp_path):
    env = {MEMORY_ENV: "100K"}  # 40,552 + 39,818 pairs take about 1.9 MB
    p = _facet("detect", TAX, "--dc", "zip -> state", "--dc", "zip -> city", "--output", "pairs",
               env=env)  # fmt: skip
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("facet: error: DC 1 (--dc:2): keeping its 40,552 violating pairs")
    assert "--limit" in lines[0] and "--output count" in lines[0] and "--out" in lines[0]
    # streaming to a file, a --limit that fits, or more memory: no refusal
    out = tmp_path / "p.parquet"
    ok = _facet("detect", TAX, "--dc", "zip -> city", "--output", "pairs", "--out", out, env=env)
    assert ok.returncode == 1, ok.stderr
    assert pq.read_table(out).num_rows == 40552
    ok = _facet("detect", TAX, "--dc", "zip -> city", "--output", "pairs", "--limit", "100",
                "--format", "json", env=env)  # fmt: skip
    assert ok.returncode == 1 and len(json.loads(ok.stdout)["dcs"][0]["pairs"]) == 100
    ok = _facet("detect", TAX, "--dc", "zip -> city", "--output", "pairs", env={MEMORY_ENV: "1G"})
    assert ok.returncode == 1, ok.stderr


def test_a_bad_memory_figure_is_bad_usage_and_sort_is_refused_when_it_would_not_fit(tmp_path):
    bad = _facet("detect", TAX, "--dc", "zip -> city", "--output", "pairs",
                 env={MEMORY_ENV: "abc"})  # fmt: skip
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines() == [
        f"facet: error: ${MEMORY_ENV}: expected bytes like 512M or 4G, got 'abc'; "
        "set it so or unset it"
    ]
    # --sort with --out holds one DC's pairs to sort them: refused before writing
    out = tmp_path / "p.csv"
    p = _facet("detect", TAX, "--dc", "zip -> city", "--output", "pairs", "--sort", "--out", out,
               env={MEMORY_ENV: "100K"})  # fmt: skip
    assert p.returncode == 2 and not out.exists()
    assert "sorting its 40,552 violating pairs holds them in memory" in p.stderr
    ok = _facet("detect", TAX, "--dc", "zip -> city", "--output", "pairs", "--sort", "--limit",
                "5", "--out", out, env={MEMORY_ENV: "100K"})  # fmt: skip
    assert ok.returncode == 1, ok.stderr
    pairs = facet.detect(TAX, dcs=["zip -> city"], output="pairs").pairs()
    want = sorted(zip(pairs.column("t1").to_pylist(), pairs.column("t2").to_pylist()))[:5]
    assert out.read_text().splitlines()[1:] == [f"0,{a},{b}" for a, b in want]
    # ... and a --limit too large to hold is refused as well (it was not checked: a
    # probe's --limit 99999999999999999999 over 10^10 pairs grew to 18.8 GB)
    out.unlink()
    p = _facet("detect", TAX, "--dc", "zip -> city", "--output", "pairs", "--sort", "--limit",
               "99999999999999999999", "--out", out, env={MEMORY_ENV: "100K"})  # fmt: skip
    assert p.returncode == 2 and not out.exists(), p.stderr
    assert "sorting its 40,552 violating pairs holds them in memory" in p.stderr
    assert p.stderr.rstrip().endswith("drop --sort, or keep fewer with a smaller --limit")


def test_memory_check_in_the_api(monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "64K")
    with pytest.raises(FacetInputError, match=r"DC 0 .*blocks in memory"):
        facet.detect(TAX, dcs=["zip -> city"], output="blocks")
    with pytest.raises(FacetInputError, match="40,552 violating pairs"):
        facet.detect(TAX, dcs=["zip -> city"], output="pairs")
    assert facet.detect(TAX, dcs=["zip -> city"]).dcs[0].violations == 40552  # counts: no check
    monkeypatch.setenv(MEMORY_ENV, "2G")
    assert facet.detect(TAX, dcs=["zip -> city"], output="pairs").pairs().num_rows == 40552


def test_available_memory_figure(monkeypatch):
    assert parse_bytes("1500") == 1500 and parse_bytes("64M") == 64 << 20
    assert parse_bytes("2.5G") == int(2.5 * (1 << 30)) and parse_bytes("1KiB") == 1024
    monkeypatch.setenv(MEMORY_ENV, "3M")
    assert available_memory() == 3 << 20
    monkeypatch.delenv(MEMORY_ENV)
    real = available_memory()
    assert real is not None and 0 < real < 1 << 50


STREAM_CHILD = """
import resource, sys
import numpy as np, pyarrow as pa
import facet
n, out = int(sys.argv[1]), sys.argv[2]
table = pa.table({"a": np.zeros(n, np.int64)})
facet.detect(table.slice(0, 100), dcs=["not(t.a = t'.a)"], output="pairs", out=out)  # kernels
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
res = facet.detect(table, dcs=["not(t.a = t'.a)"], output="pairs", out=out)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(res.dcs[0].written, (peak - base) * 1024)
"""


@pytest.mark.parametrize("n", [2_000, 7_072])  # 4M pairs, 50M pairs (1.2 GB if kept)
def test_pairs_stream_to_a_file_in_bounded_memory(tmp_path, n):
    out = tmp_path / "pairs.parquet"
    p = subprocess.run([sys.executable, "-c", STREAM_CHILD, str(n), str(out)],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)  # fmt: skip
    assert p.returncode == 0, p.stderr
    written, growth = map(int, p.stdout.split())
    assert written == n * (n - 1) == pq.ParquetFile(out).metadata.num_rows
    kept = written * 24  # what pairs held in memory would take
    # a few chunks of pairs in flight, whatever their number (measured: about 25 MB)
    assert growth < min(96 << 20, kept // 2), growth


# ----------------------------------------------------------------------------- progress


def _phases(events: list[ProgressEvent]) -> list[str]:
    return [p for i, p in enumerate(e.phase for e in events) if i == 0 or events[i - 1].phase != p]


def _check_brackets(events: list[ProgressEvent]) -> None:
    """Each phase begins with done == 0 and ends with done == total; done never goes down."""
    for phase in _phases(events):
        mine = [e for e in events if e.phase == phase]
        assert mine[0].done == 0, mine
        assert mine[-1].total is not None and mine[-1].done == mine[-1].total, mine
        assert all(a.done <= b.done for a, b in zip(mine, mine[1:], strict=False)), mine


def test_progress_events_pairs():
    events: list[ProgressEvent] = []
    dcs = ["zip -> city", "not(t.salary > 200000)", "zip -> state"]
    res = facet.detect(TAX, dcs=dcs, output="pairs", progress=events.append)
    assert _phases(events) in (
        ["load", "warmup", "encode", "count", "write"],
        ["load", "compile", "encode", "count", "write"],
    )
    _check_brackets(events)
    count = [e for e in events if e.phase == "count"]
    assert {e.total for e in count} == {3}
    assert [e.dc for e in count] == [None, 0, 1, 2] and [e.done for e in count] == [0, 1, 2, 3]
    write = [e for e in events if e.phase == "write"]
    expected = sum(d.violations for d in res.dcs)
    assert {e.total for e in write} == {expected} and write[-1].done == expected
    listed = [e.dc for e in write if e.dc is not None]
    assert listed == sorted(listed)
    assert set(listed) == {i for i, d in enumerate(res.dcs) if d.violations}
    assert all(isinstance(e, ProgressEvent) for e in events)


def test_progress_events_counts_blocks_limit_and_modes(tmp_path):
    events: list[ProgressEvent] = []
    facet.detect(TAX, dcs=["zip -> city", "zip -> state"], progress=events.append)
    assert _phases(events)[-1] == "count"  # no write phase for counts without out
    _check_brackets(events)

    events.clear()
    res = facet.detect(TAX, dcs=["zip -> city"], output="blocks", progress=events.append)
    write = [e for e in events if e.phase == "write"]
    assert all(e.total is None for e in write[:-1])  # blocks: unknown until the end
    assert write[-1].total == write[-1].done == res.dcs[0].written
    _check_brackets(events)

    events.clear()
    out = tmp_path / "p.csv"
    facet.detect(TAX, dcs=["zip -> city", "zip -> state"], output="pairs", limit=7, out=out,
                 progress=events.append)  # fmt: skip
    assert [e for e in events if e.phase == "write"][-1].total == 14
    _check_brackets(events)

    for mode in ("parallel", "cost-trie"):
        events.clear()
        facet.detect(TAX, dcs=["zip -> city", "zip -> state", "zip -> city"], mode=mode,
                     progress=events.append)  # fmt: skip
        _check_brackets(events)
        assert [e for e in events if e.phase == "count"][-1].done == 3


def test_a_failing_progress_callback_stops_the_run(tmp_path):
    out = tmp_path / "p.parquet"

    def stop(ev: ProgressEvent) -> None:
        if ev.phase == "write" and ev.done:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        facet.detect(TAX, dcs=["zip -> city"], output="pairs", out=out, progress=stop)
    assert list(tmp_path.iterdir()) == []


def test_display_only_on_a_terminal_and_not_with_quiet(tmp_path):
    """50M pairs to a file take over a second: long enough for the display."""
    data = _same_table(tmp_path / "same.parquet", 7_072)
    args = ["detect", data, "--dc", SAME, "--output", "pairs", "--out", tmp_path / "p.parquet"]
    code, tty, out = _on_pty(args)
    assert code == 1
    assert b"facet: listing" in tty and b"%|" in tty and b"50.0M" in tty
    shown = re.sub(rb"^facet: compiling \d+ kernels[^\n]*\n", b"", tty)
    assert b"\n" not in shown  # transient: redrawn in place on one line, then cleared
    assert "50,006,112" in out  # the report itself goes to stdout
    code, tty, _ = _on_pty([*args, "--quiet"])
    assert code == 1 and tty == b""
    p = _facet(*args)  # stderr a pipe: no display
    assert p.returncode == 1 and p.stderr == ""


def test_quiet_clean_run_has_no_stderr_and_keeps_warnings(emp, tmp_path):
    p = _facet("detect", emp, "--dc", "zip -> dept", "--quiet")
    assert p.returncode == 1 and p.stderr == "" and "violations" in p.stdout
    code, tty, _ = _on_pty(["detect", emp, "--dc", "zip -> dept", "-q"])
    assert code == 1 and tty == b""
    warn = tmp_path / "w.csv"
    warn.write_text("a,b\n1,x\nNaN,y\n3,z\n")
    p = _facet("detect", warn, "--dc", "not(t.a < t'.a)", "--quiet")
    assert p.stderr.startswith("facet: warning: ")  # warnings are not informational


def test_terminal_display_draws_clears_and_writes_above():
    master, slave = pty.openpty()
    stream = os.fdopen(slave, "w")
    display = TerminalProgress(stream, delay=0)
    display(ProgressEvent("count", 0, 2))
    display(ProgressEvent("count", 1, 2, 0))
    display.write("facet: warning: something")
    display(ProgressEvent("count", 2, 2, 1))
    display.close()
    stream.flush()
    got = b""
    while select.select([master], [], [], 0.2)[0]:
        got += os.read(master, 1 << 16)
    stream.close()
    os.close(master)
    assert b"facet: counting" in got and b"1/2" in got and b"DC 0 done" in got
    assert b"facet: warning: something\r\n" in got
    assert got.rstrip(b" ").endswith(b"\r")  # the last line is cleared


def test_kernel_cache_cold_is_told(tmp_path):
    assert kernels_cache_cold(["refine"]) in (False, True)
    assert kernels_cache_cold(["no-such-kernel"]) is False
    code = "from facet.progress import kernels_cache_cold as k; print(k(), k(['refine']))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}, timeout=120)  # fmt: skip
    assert p.stdout.split() == ["True", "True"], p.stderr


@pytest.mark.slow
def test_kernels_compile_once_then_no_command_compiles(tmp_path):
    """A first run in an empty numba cache compiles every kernel, saying so (one
    line on a stderr that is not a terminal; a display counting kernels on one);
    after it no command compiles anything, whatever it reads, outputs or scopes:
    numba's cache gains no entry."""
    from facet.engine.warmup import KERNELS

    cache = tmp_path / "cache"
    env = {"NUMBA_CACHE_DIR": str(cache)}
    rows = pacsv.read_csv(TAX)
    parquet = tmp_path / "tax.parquet"
    pq.write_table(rows, parquet)
    head, tail = tmp_path / "head.csv", tmp_path / "tail.csv"
    pacsv.write_csv(rows.slice(0, 9000), head)
    pacsv.write_csv(rows.slice(9000), tail)
    rules = ROOT / "data" / "tax" / "dc_rules.txt"
    order = "not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)"
    p = _facet("detect", TAX, "--rules", rules, "--exit-zero", env=env, timeout=900)
    assert p.returncode == 0, p.stderr
    first = p.stderr.splitlines()[0]
    assert first == f"facet: compiling {len(KERNELS)} kernels (first run only; 1-3 minutes)"
    compiled = sorted(str(f.relative_to(cache)) for f in cache.rglob("*.nbc"))
    runs = [
        *(["detect", TAX, "--rules", rules, "--output", o, "--out", tmp_path / f"{o}.parquet"]
          for o in ("pairs", "blocks", "tuples", "cells", "components", "suspects")),
        ["detect", parquet, "--dc", order, "--dc", "zip -> city", "--output", "pairs",
         "--out", tmp_path / "typed.csv"],
        ["detect", TAX, "--dc", order, "--where", "state in ('CA', 'TX') and salary > 60000"],
        ["detect", head, "--dc", order, "--dc", "zip -> city", "--append", tail],
        ["explain", TAX, "--rules", rules, "--output", "pairs", "--analyze"],
        ["report", TAX, "--dc", order, "--out", tmp_path / "r.html"],
    ]  # fmt: skip
    for args in runs:
        p = _facet(*args, "--exit-zero" if args[0] != "explain" else "--format=json", env=env)
        assert p.returncode == 0, (args, p.stderr)
        assert "compiling" not in p.stderr, args
        now = sorted(str(f.relative_to(cache)) for f in cache.rglob("*.nbc"))
        assert now == compiled, (args, sorted(set(now) - set(compiled)))
    cold = tmp_path / "cold"
    code, tty, _ = _on_pty(["explain", TAX, "--dc", order], env={"NUMBA_CACHE_DIR": str(cold)},
                           timeout=900)  # fmt: skip
    assert code == 0 and tty.startswith(f"facet: compiling {len(KERNELS)} kernels".encode())
    assert re.search(rb"compiling kernels[^\r\n]*\d+/%d" % len(KERNELS), tty), tty[-300:]


def test_explain_and_detector_report_their_progress(emp):
    """explain and an incremental Detector report their phases as detect does."""
    events: list[ProgressEvent] = []
    facet.explain(emp, dcs=["zip -> dept"], progress=events.append)
    assert [e.phase for e in events if e.done == 0][:2] == ["load", "warmup"]
    events.clear()
    facet.Detector(emp, dcs=["zip -> dept"], progress=events.append)
    assert {"warmup", "encode", "count"} <= {e.phase for e in events}


def test_every_kernel_has_a_cache_entry_to_tell_a_cold_cache():
    """The cold-cache check knows the functions every warm-up kernel calls."""
    from facet.engine.warmup import KERNELS
    from facet.progress import KERNEL_ENTRIES

    assert set(KERNEL_ENTRIES) == set(KERNELS)


# ----------------------------------------------------------------------------- files


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_output_files_follow_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        targets = {
            "p.parquet": "pairs",
            "p.csv": "pairs",
            "p.arrow": "pairs",
            "b.parquet": "blocks",
            "c.json": "count",
            "c.csv": "count",
        }
        for name, output in targets.items():
            facet.detect(TAX, dcs=["zip -> city"], output=output, out=tmp_path / name)
    finally:
        os.umask(old)
    for name in targets:
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask, name
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(targets)  # no temporaries


def test_counts_table_columns_are_the_json_keys(tmp_path):
    res = facet.detect(TAX, dcs=["city: zip -> city"], out=tmp_path / "c.csv")
    table = pacsv.read_csv(tmp_path / "c.csv")
    entry = res.to_dict()["dcs"][0]
    assert table.column_names == ["id", "name", "dc", "violations", "rows_involved", "seconds"]
    row = table.to_pylist()[0]
    assert {k: row[k] for k in table.column_names if k != "seconds"} == {
        k: entry[k] for k in table.column_names if k != "seconds"
    }


# ----------------------------------------------------------------------------- text and errors


def test_text_report_fits_80_columns_and_says_what_numbers_mean(tmp_path, monkeypatch, capsys):
    long_dc = (
        "a_rather_long_rule_name: not(t.state = t'.state and t.zip = t'.zip and "
        "t.salary > t'.salary and t.rate < t'.rate and t.city != t'.city and "
        "t.area_code = t'.area_code)"
    )
    # a clone may sit deep in the file system: the path must not widen the report
    deep = tmp_path.joinpath(*["a_checkout_directory"] * 4) / "tax_dirty_0010k.csv"
    deep.parent.mkdir(parents=True)
    deep.write_bytes(TAX.read_bytes())
    monkeypatch.setenv("COLUMNS", "80")
    code = main(["detect", str(deep), "--dc", long_dc, "--dc", "zip -> city",
                 "--dc", "not(t.salary > 200000)"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert max(map(len, out.splitlines())) <= 80
    assert out.splitlines()[0].startswith(".../") and "tax_dirty_0010k.csv:" in out
    flat = " ".join(line.strip() for line in out.splitlines())
    assert "ordered pairs (t, t')" in flat and "rows: distinct rows" in flat
    assert "a_rather_long_r~" in out and re.search(r"\d rows ", out)
    # the whole DC text is there, wrapped in its column
    assert "t.city != t'.city and t.area_code = t'.area_code)" in flat
    monkeypatch.setenv("COLUMNS", "100")
    main(["detect", str(TAX), "--dc", long_dc])
    assert 80 < max(map(len, capsys.readouterr().out.splitlines())) <= 100
    main(["detect", str(TAX), "--dc", long_dc, "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["dcs"][0]["dc"].endswith("t.area_code = t'.area_code)")
    # at 60 columns, wide counts leave under 24 for the DC: it goes under its row
    monkeypatch.setenv("COLUMNS", "60")
    main(["detect", str(TAX), "--dc", long_dc, "--dc", "not(t.salary > t'.salary)"])
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 60
    flat = " ".join(line.strip() for line in out.splitlines())
    assert "t.city != t'.city and t.area_code = t'.area_code)" in flat
    assert "not(t.salary > t'.salary)" in out


def test_more_bad_dc_lines_note_without_debug(emp, tmp_path, capsys):
    rules = tmp_path / "bad.txt"
    rules.write_text("zip -> dept\nnot(t.zip = t'.zip and t.dept ! t'.dept)\nnot(t.x <> )\nbad(\n")
    code = main(["detect", str(emp), "--rules", str(rules)])
    lines = capsys.readouterr().err.splitlines()
    assert code == 2 and len(lines) == 1
    assert lines[0].startswith(f"facet: error: {rules}:2:")
    assert lines[0].endswith(f" (2 more bad DC line(s): {rules}:3:12, {rules}:4:1)")


def test_inline_json_pairs_and_blocks_match_the_result(emp, capsys):
    dcs = ["not(t.dept = t'.dept and t.salary < t'.salary)", "not(t.rate < 1.2)", "zip -> dept"]
    for output in ("pairs", "blocks"):
        argv = ["detect", str(emp), "--output", output, "--format", "json"]
        main([*argv, *(a for d in dcs for a in ("--dc", d))])
        doc = json.loads(capsys.readouterr().out)
        res = facet.detect(emp, dcs=dcs, output=output)
        table = res.pairs() if output == "pairs" else res.blocks()
        for d in doc["dcs"]:
            rows = [r for r in table.to_pylist() if r["dc"] == d["id"]]
            assert d[output] == [[r["t1"], r["t2"]] for r in rows]
            assert d["written"] == len(rows)


def test_small_groups_are_expanded_a_bounded_number_of_candidates_a_call(monkeypatch):
    """A kernel call is where a deadline or a signal waits: expanding small groups
    that hold few pairs among many candidates ran as one call over all of them
    (a probe's components run stopped 42 s after its --timeout).  Each call now
    scans at most ``Config.expand_candidates`` candidates (or one larger group),
    with the same pairs."""
    import facet.engine.walk as walk
    from facet.planner.config import Config

    rng = np.random.default_rng(5)
    n = 3000
    table = pa.table({"g": rng.integers(0, 300, n), "u": rng.permutation(n),
                      "v": rng.permutation(n)})  # fmt: skip
    dc = ["not(t.g = t'.g and t.u < t'.v and t.v > t'.u and t.u != t'.v)"]
    calls: list[int] = []
    real = walk.expand

    def spy(buf, desc, *args):
        sizes = [(d[1] - d[0] - (d[3] - d[2])) * (d[5] - d[4] - (d[7] - d[6])) for d in desc]
        calls.append(int(sum(sizes)) if len(desc) > 1 else 0)
        return real(buf, desc, *args)

    monkeypatch.setattr(walk, "expand", spy)
    budget = 500
    small = facet.detect(table, dcs=dc, output="pairs", config=Config(expand_candidates=budget))
    assert len(calls) > 20 and max(calls) <= budget, (len(calls), max(calls))
    calls.clear()
    whole = facet.detect(table, dcs=dc, output="pairs")
    assert len(calls) < 5
    pairs = {tuple(p) for p in zip(*(small.pairs().column(c).to_pylist() for c in ("t1", "t2")))}
    want = {tuple(p) for p in zip(*(whole.pairs().column(c).to_pylist() for c in ("t1", "t2")))}
    assert pairs == want and len(want) == whole.dcs[0].violations > 0


def test_a_stopped_run_does_not_wait_for_a_worker_inside_a_kernel(tmp_path):
    """A worker thread still in a long kernel call held the process at exit after
    its --timeout or Ctrl-C (a probe's run stopped 42 s late, and a SIGTERM took
    173 s): a stopped command leaves without joining it -- its exit handlers run,
    nothing is written."""
    out = tmp_path / "p.parquet"
    code = textwrap.dedent(f"""
        import sys, threading, time
        threading.Thread(target=time.sleep, args=(120,)).start()  # a worker in a kernel
        from facet import cli
        sys.argv = ["facet", "detect", {str(TAX)!r}, "--dc", "zip -> city", "--output",
                    "pairs", "--out", {str(out)!r}, "--timeout", "0.001"]
        cli.entry()
    """)
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=110, cwd=ROOT)  # fmt: skip
    assert p.returncode == 3, p.stderr
    assert "--timeout: time limit of 0.001 s reached" in p.stderr and not out.exists()
    assert time.monotonic() - start < 60  # (the thread sleeps 120 s)
