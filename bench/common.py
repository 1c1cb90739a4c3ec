"""Shared helpers for the benchmark scripts in ``bench/``.

* ``run_process``: run one command in its own process (own session), with a wall-clock and a
  peak-RSS watchdog; peak RSS from ``/usr/bin/time -f %M`` where it exists, else from the
  child's ``wait4`` rusage. Never raises for a failing command: the result says what happened.
* ``machine_info``: what a result must carry to be comparable (DESIGN §6): date, nproc, total
  memory, CPU model, Python / library versions, git commit.
* ``median``, ``append_jsonl``, ``read_jsonl``, ``markdown_table``, ``fmt_bytes``.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GNU_TIME = "/usr/bin/time"
GIB = 1 << 30


def total_memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def default_rss_limit() -> int:
    """Kill a run past 20 GiB RSS (DESIGN §6), or 85% of this machine's memory if less."""
    mem = total_memory_bytes()
    return min(20 * GIB, int(0.85 * mem)) if mem else 20 * GIB


# --------------------------------------------------------------------------------------------
# processes


@dataclass
class ProcResult:
    cmd: list[str]
    status: str  # "ok" (exit 0), "error" (other exit), "timeout", "oom" (RSS watchdog)
    returncode: int | None
    wall_seconds: float
    peak_rss_bytes: int | None
    rss_method: str  # "gnu-time", "wait4", "sampled" (killed by the watchdog) or "none"
    stdout: str = ""
    stderr: str = ""
    extra: dict = field(default_factory=dict)

    def summary(self) -> dict:
        d = asdict(self)
        d.pop("stdout")
        d["stderr_tail"] = d.pop("stderr")[-2000:]
        return d


def _group_rss_bytes(pgid: int) -> int:
    """Sum of RSS of the live processes in process group ``pgid`` (Linux /proc)."""
    total = 0
    page = os.sysconf("SC_PAGE_SIZE")
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[2]) != pgid:  # fields[2] is pgrp
                continue
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue
    return total


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def run_process(
    cmd: list[str],
    timeout: float = 600.0,
    rss_limit: int | None = None,
    env: dict | None = None,
    cwd: str | os.PathLike | None = None,
    poll: float = 0.05,
) -> ProcResult:
    """Run ``cmd`` in a new session; kill its whole process group past ``timeout`` seconds or
    past ``rss_limit`` bytes of summed RSS. Wall time covers spawn to exit."""
    rss_limit = default_rss_limit() if rss_limit is None else rss_limit
    use_time = os.access(GNU_TIME, os.X_OK)
    with tempfile.TemporaryDirectory(prefix="facet-bench-") as tmp:
        out_p, err_p, time_p = (Path(tmp) / n for n in ("stdout", "stderr", "time"))
        full = [GNU_TIME, "-f", "%M", "-o", str(time_p), *cmd] if use_time else list(cmd)
        load_start = os.getloadavg()[0]
        with open(out_p, "wb") as out, open(err_p, "wb") as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                full, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                start_new_session=True,
            )  # fmt: skip
            status, rc, rusage = None, None, None
            next_rss, sampled = t0, 0
            while True:
                pid, wstatus, ru = os.wait4(proc.pid, os.WNOHANG)
                now = time.perf_counter()
                if pid == proc.pid:
                    rc = os.waitstatus_to_exitcode(wstatus)
                    rusage = ru
                    proc.returncode = rc
                    break
                if now - t0 > timeout:
                    status = "timeout"
                elif now >= next_rss:
                    next_rss = now + 0.25
                    rss = _group_rss_bytes(proc.pid)
                    sampled = max(sampled, rss)
                    if rss > rss_limit:
                        status = "oom"
                if status:
                    _kill_group(proc.pid)
                    _, wstatus, ru = os.wait4(proc.pid, 0)
                    rc = os.waitstatus_to_exitcode(wstatus)
                    rusage = ru
                    proc.returncode = rc
                    break
                time.sleep(poll)
            wall = time.perf_counter() - t0
            _kill_group(proc.pid)  # leftovers of the group, if any
        stdout = out_p.read_text(errors="replace")
        stderr = err_p.read_text(errors="replace")
        peak, method = None, "none"
        if use_time and time_p.exists():
            lines = [ln for ln in time_p.read_text().splitlines() if ln.strip().isdigit()]
            if lines:
                peak, method = int(lines[-1]) * 1024, "gnu-time"
        if peak is None and rusage is not None and rusage.ru_maxrss:
            peak, method = rusage.ru_maxrss * 1024, "wait4"  # Linux: KiB
        if status in ("timeout", "oom") and sampled > (peak or 0):
            peak, method = sampled, "sampled"  # killed: GNU time could not report
    if status is None:
        status = "ok" if rc == 0 else "error"
    if status == "error" and rc is not None and rc < 0 and -rc == signal.SIGKILL:
        status = "killed"  # e.g. the kernel's OOM killer
    return ProcResult(
        cmd,
        status,
        rc,
        wall,
        peak,
        method,
        stdout,
        stderr,
        {"sampled_rss": sampled, "load1_start": load_start, "load1_end": os.getloadavg()[0]},
    )


# --------------------------------------------------------------------------------------------
# machine and results


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _nproc() -> int | None:
    exe = shutil.which("nproc")
    if exe:
        try:
            return int(subprocess.run([exe], capture_output=True, text=True, check=True).stdout)
        except (subprocess.CalledProcessError, ValueError):
            pass
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def _git(*args: str) -> str | None:
    try:
        r = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def _version(module: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:
        return None


def machine_info(packages: tuple[str, ...] = ("duckdb", "numpy", "numba", "pyarrow")) -> dict:
    mem = total_memory_bytes()
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "hostname": platform.node(),
        "nproc": _nproc(),
        "mem_total_bytes": mem,
        "mem_total_gib": round(mem / GIB, 1) if mem else None,
        "cpu_model": _cpu_model(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "versions": {p: _version(p) for p in packages},
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain")),
        "rss_method": "gnu-time" if os.access(GNU_TIME, os.X_OK) else "wait4",
    }


def command_line() -> str:
    return shlex.join([Path(sys.executable).name, *sys.argv])


def median(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def append_jsonl(path: str | os.PathLike, record: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(record, sort_keys=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    path = Path(path)
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut by a crash: skip it
    return out


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("GiB", GIB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s:.3f}" if s < 100 else f"{s:.1f}"


def markdown_table(headers: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)
