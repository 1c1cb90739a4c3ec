"""Shared helpers for the benchmark scripts in ``bench/``.

* ``run_process``: run one command in its own process (own session), with a wall-clock and a
  peak-RSS watchdog; peak RSS from ``/usr/bin/time -f %M`` where it exists, else from the
  child's ``wait4`` rusage. Never raises for a failing command: the result says what happened.
* ``machine_info``: what a result must carry to be comparable (bench/README.md "Rules"): date, nproc, total
  memory, CPU model, Python / library versions, git commit.
* ``median``, ``append_jsonl``, ``read_jsonl``, ``latest_run``, ``markdown_table``,
  ``fmt_bytes``.
* The facet under test: ``facet_exe`` / ``facet_works`` (the CLI and a probe of it),
  ``run_facet`` (one ``facet detect`` process; count, blocks or pairs), ``summarize_runs``
  (medians and samples of such runs, as the records store them), ``counts_check`` (do the
  systems' counts agree), ``load_samples``, ``snapshot_facet`` (a private
  ``git archive`` copy of any commit, laid out as the installed package), ``tax_table`` (the
  generated Tax CSV the DuckDB comparisons share). DuckDB's side is ``duckdb_worker.py``.
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
import tomllib
import uuid
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
    """Kill a run past 20 GiB RSS (bench/README.md "Rules"), or 85% of this machine's memory if less."""
    mem = total_memory_bytes()
    return min(20 * GIB, int(0.85 * mem)) if mem else 20 * GIB


def rss_limit(gib: float | None) -> int:
    """The watchdog's RSS limit in bytes for ``--rss-limit-gib`` (None: the default)."""
    return int(gib * GIB) if gib else default_rss_limit()


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


def run_summary(r: ProcResult) -> dict:
    """What a benchmark run record keeps of every process: status, wall, peak RSS (of the
    process, and ``group_rss``: the largest sampled sum over its process group, which
    counts the JVMs and workers a Spark run starts), exit code, 1-minute load average
    before / after."""
    load1 = [r.extra["load1_start"], r.extra["load1_end"]]
    return {"status": r.status, "wall": r.wall_seconds, "rss": r.peak_rss_bytes,
            "group_rss": r.extra.get("sampled_rss"), "rc": r.returncode, "load1": load1}  # fmt: skip


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


def latest_run(records: list[dict]) -> list[dict]:
    """The records of the last run-set (``run_id`` of the last record)."""
    if not records:
        return []
    run_id = records[-1].get("run_id")
    return [r for r in records if r.get("run_id") == run_id]


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


# --------------------------------------------------------------------------------------------
# the facet under test


def facet_exe() -> str | None:
    """The working tree's facet CLI (``.venv/bin/facet``, else ``facet`` on PATH)."""
    exe = REPO / ".venv" / "bin" / "facet"
    if exe.exists() and os.access(exe, os.X_OK):
        return str(exe)
    return shutil.which("facet")


def facet_works(exe: str | None, work: Path) -> tuple[bool, str]:
    """Does ``facet detect ... --format json`` answer a tiny known case correctly?"""
    if exe is None:
        return False, "no facet console script (.venv/bin/facet)"
    work.mkdir(parents=True, exist_ok=True)
    tiny = work / "facet_probe.csv"
    tiny.write_text("a,b\n1,x\n1,y\n2,z\n")
    r = run_process(
        [exe, "detect", str(tiny), "--dc", "not(t.a = t'.a and t.b != t'.b)", "--format", "json",
         "--exit-zero"],
        timeout=300,
    )  # fmt: skip
    if r.status != "ok":
        return False, f"facet probe {r.status} (rc {r.returncode}): {r.stderr.strip()[-500:]}"
    try:
        doc = json.loads(r.stdout)
        v = doc["dcs"][0]["violations"]
    except (ValueError, KeyError, IndexError, TypeError) as e:
        return False, f"facet probe: unexpected JSON ({e}): {r.stdout[:300]!r}"
    if v != 2:
        return False, f"facet probe: 2 violations expected, got {v}"
    return True, "ok"


def _dir_bytes(d: Path) -> int:
    return sum(p.stat().st_size for p in d.rglob("*") if p.is_file()) if d.exists() else 0


def run_facet(
    exe: str,
    file: Path,
    dc: str,
    timeout: float,
    rss_limit: int,
    output: str = "count",
    limit: int | None = None,
    out_root: Path | None = None,
    extra: tuple[str, ...] = (),
) -> dict:
    """One ``facet detect FILE --dc DC --format json --exit-zero`` process under the watchdog:
    ``run_summary`` plus, from its JSON, the DC's ``seconds``, ``violations`` and the rest.
    With ``output`` pairs/blocks, written to a fresh folder under ``out_root`` (default
    ``bench/work/out/``) whose size is recorded, then deleted (partial files included)."""
    cmd = [exe, "detect", str(file), "--dc", dc, "--format", "json", "--exit-zero", *extra]
    out_dir = None
    if output != "count":
        out_dir = Path(out_root or REPO / "bench" / "work" / "out") / uuid.uuid4().hex[:12]
        out_dir.mkdir(parents=True)
        cmd += ["--output", output, "--out", str(out_dir / f"{output}.parquet")]
        if limit is not None:
            cmd += ["--limit", str(limit)]
    try:
        r = run_process(cmd, timeout=timeout, rss_limit=rss_limit, cwd=REPO)
        out = run_summary(r)
        if out_dir is not None:
            target = out_dir / f"{output}.parquet"
            out["out_bytes"] = target.stat().st_size if target.exists() else None
            out["out_dir_bytes"] = _dir_bytes(out_dir)  # > out_bytes: a partial file was left
    finally:
        if out_dir is not None:
            shutil.rmtree(out_dir, ignore_errors=True)
    if r.status == "ok":
        try:
            doc = json.loads(r.stdout)
            d = doc["dcs"][0]
            out.update(
                seconds=float(d["seconds"]),
                violations=int(d["violations"]),
                rows_involved=d.get("rows_involved"),
                written=d.get("written"),
                load_seconds=doc.get("load_seconds"),
                warmup_seconds=doc.get("warmup_seconds"),
                rows=doc.get("rows"),
                canonical=d.get("dc"),
                work=d.get("work"),
            )
        except (ValueError, KeyError, IndexError, TypeError) as e:
            out.update(status="bad-output", error=f"{e}: {r.stdout[:500]!r}")
    if out["status"] != "ok":
        out["stderr_tail"] = r.stderr[-2000:]
    return out


def run_worker(
    cmd: list[str], timeout: float, rss_limit: int, fields: tuple[str, ...], env=None
) -> dict:
    """A SQL worker process (``duckdb_worker.py``, ``spark_sql_worker.py``) under the
    watchdog: ``run_summary`` plus, from the JSON on its last stdout line, the query
    ``seconds``, ``violations`` (its ``count``) and ``fields``."""
    r = run_process(cmd, timeout=timeout, rss_limit=rss_limit, cwd=REPO, env=env)
    out = run_summary(r)
    if r.status == "ok":
        try:
            doc = json.loads(r.stdout.strip().splitlines()[-1])
            out.update(seconds=float(doc["seconds"]), violations=int(doc["count"]),
                       **{k: doc[k] for k in fields})  # fmt: skip
        except (ValueError, KeyError, IndexError, TypeError) as e:
            out.update(status="bad-output", error=f"{e}: {r.stdout[:500]!r}")
    if out["status"] != "ok":
        out["stderr_tail"] = r.stderr[-2000:]
    return out


def summarize_runs(runs: list[dict]) -> dict:
    """Medians and all samples of a system's runs (``run_facet`` / ``duckdb_worker.run``
    results); ``violations`` is a list when the runs disagree."""
    ok = [r for r in runs if r["status"] == "ok"]
    bad = [r["status"] for r in runs if r["status"] != "ok"]
    counts = sorted({r["violations"] for r in ok})
    s = {
        "status": "ok" if ok and not bad else (bad[0] if bad else "not-run"),
        "runs": len(runs),
        "ok_runs": len(ok),
        "median_seconds": median(r["seconds"] for r in ok),
        "samples_seconds": [r["seconds"] for r in ok],
        "median_wall_seconds": median(r["wall"] for r in ok),
        "samples_wall_seconds": [r["wall"] for r in runs],
        "median_peak_rss_bytes": median(r["rss"] for r in ok),
        "max_peak_rss_bytes": max((r["rss"] or 0 for r in runs), default=None),
        "samples_peak_rss_bytes": [r["rss"] for r in runs],
        "samples_load1": [r["load1"] for r in runs],  # 1-min load average before / after
        "median_load_seconds": median(r.get("load_seconds") for r in ok),
        "violations": counts[0] if len(counts) == 1 else counts or None,
    }
    for key in ("rows_involved", "warmup_seconds", "types", "sql", "threads", "canonical"):
        vals = [r.get(key) for r in ok if r.get(key) is not None]
        if vals:
            s[key] = vals[0] if key != "warmup_seconds" else vals
    for key in ("out_bytes", "written"):
        vals = [r.get(key) for r in ok if r.get(key) is not None]
        if vals:
            s["median_" + key] = median(vals)
    partial = [
        r.get("out_dir_bytes") for r in runs if r["status"] != "ok" and r.get("out_dir_bytes")
    ]
    if partial:
        s["killed_out_bytes"] = max(partial)  # what a killed run had written so far
    errors = [
        {k: r.get(k) for k in ("status", "rc", "error", "stderr_tail") if r.get(k) is not None}
        for r in runs
        if r["status"] != "ok"
    ]
    if errors:
        s["errors"] = errors[:3]
    return s


def counts_check(counts: dict) -> str:
    """``equal`` when the systems' violation counts (system -> ``summarize_runs``'s
    ``violations``) all agree, ``MISMATCH`` when two differ or one system's runs disagree (a
    list), ``unchecked`` with fewer than two counts."""
    if any(isinstance(c, list) for c in counts.values()):
        return "MISMATCH"
    if len(counts) >= 2:
        return "equal" if len(set(counts.values())) == 1 else "MISMATCH"
    return "unchecked"


def load_samples(records: list[dict], sides: tuple[str, ...]) -> list[float]:
    """Every 1-minute load average sampled around the runs of ``sides`` in ``records``."""
    return [
        x
        for r in records
        for side in sides
        for pair in (r.get(side) or {}).get("samples_load1", [])
        for x in pair
    ]


LAUNCHER = """#!{python}
import os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
import facet
assert os.path.abspath(facet.__file__).startswith(HERE + os.sep), facet.__file__
try:  # what the installed `facet` script runs (its entry point in pyproject.toml)
    from facet.cli import entry
except ImportError:  # commits before the entry point
    from facet.cli import main as entry
sys.exit(entry())
"""


def package_dirs(sha: str) -> dict[str, str]:
    """Package -> folder, as the commit ``sha`` ships them: ``[tool.setuptools] package-dir``
    of its ``pyproject.toml`` (``{"facet": "facet"}`` where it has none). A package the
    mapping does not name lies inside its parent's folder, as setuptools has it."""
    try:
        text = subprocess.run(
            ["git", "show", f"{sha}:pyproject.toml"],
            cwd=REPO, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        mapping = tomllib.loads(text).get("tool", {}).get("setuptools", {}).get("package-dir")
    except (subprocess.CalledProcessError, tomllib.TOMLDecodeError):
        mapping = None
    mapping = {k: v.strip("/").removeprefix("./") for k, v in (mapping or {}).items()}
    if "facet" not in mapping and "" not in mapping:
        mapping["facet"] = "facet"
    return {k: "" if v == "." else v for k, v in mapping.items()}


def snapshot_facet(work: Path, ref: str = "HEAD") -> tuple[str, str]:
    """A private copy of commit ``ref``'s facet (``git archive``), laid out as the installed
    package by the commit's own ``package-dir`` mapping (``package_dirs``: e.g. ``kernels/`` as
    ``facet/kernels/``, ``language/`` as ``facet/language/``), and a launcher for it: the code
    measured is exactly that commit, whatever others edit in the working tree meanwhile. Its
    numba cache lives in the copy (``work/snapshot-<sha>/``, reused by later runs). Returns
    (launcher, full sha)."""
    sha = _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if not sha:
        raise SystemExit(f"snapshot: {ref!r} is not a commit of this git checkout")
    root = work / f"snapshot-{sha[:12]}"
    launcher = root / "facet_cli.py"
    if launcher.exists():
        return str(launcher), sha
    tmp = work / f".snapshot-{sha[:12]}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        _lay_out(sha, tmp / "src", tmp / "pkg")
        (tmp / "pkg" / "facet_cli.py").write_text(LAUNCHER.format(python=sys.executable))
        (tmp / "pkg" / "facet_cli.py").chmod(0o755)
        try:
            (tmp / "pkg").rename(root)
        except OSError:
            if not launcher.exists():  # not another run making the same snapshot meanwhile
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return str(launcher), sha


def _lay_out(sha: str, src: Path, dst: Path) -> None:
    """Extract the folders of ``package_dirs(sha)`` into ``src``, then copy each to its
    package's place under ``dst`` (parents first)."""
    mapping = package_dirs(sha)
    src.mkdir(parents=True)
    folders = sorted({d or "." for d in mapping.values()})
    archive = subprocess.run(
        ["git", "archive", sha, *folders], cwd=REPO, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    dst.mkdir()
    for pkg in sorted(mapping, key=lambda p: (p.count(".") + bool(p), p)):
        target = dst.joinpath(*pkg.split(".")) if pkg else dst
        if pkg and target.exists():
            raise SystemExit(
                f"snapshot of {sha[:12]}: {mapping[pkg]}/ (package {pkg}) would land on "
                f"{target.relative_to(dst)}/, which {sha[:12]} already has"
            )
        shutil.copytree(src / mapping[pkg], target, dirs_exist_ok=not pkg)


def tax_table(rows: int, seed: int, error_rate: float, work: Path, timeout: float) -> Path:
    """``work/tax_<rows>_s<seed>_e<rate>.csv`` from ``data/taxgen.py``, generated once."""
    path = work / f"tax_{rows}_s{seed}_e{error_rate:g}.csv"
    if path.exists():
        return path
    work.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(REPO / "data" / "taxgen.py"), "--rows", str(rows), "--out",
           str(path), "--seed", str(seed), "--error-rate", repr(error_rate)]  # fmt: skip
    print(f"generating {path.name} ...", file=sys.stderr, flush=True)
    r = run_process(cmd, timeout=timeout)
    if r.status != "ok" or not path.exists():
        raise SystemExit(f"table generation failed ({r.status}): {r.stderr[-2000:]}")
    print(r.stderr.strip(), file=sys.stderr, flush=True)
    return path
