"""Start-up time of facet: the command line's help, a small detect with a warm and a cold
numba cache, ``import facet`` -- each the wall time of a fresh process.

    python bench/startup.py [--repeats 7] [--cold-repeats 3] [--baseline REF]
        [--no-runtime-only] [--runtime-python PYTHON] [--cases help,detect-warm,...]
        [--data data/tax/tax_dirty_0010k.csv] [--rules data/tax/dc_rules.txt]

Cases (bench/README.md "Rules": every run its own process under ``common.run_process``;
medians, all samples kept):

* ``help``: ``facet --help``.
* ``parse-error``: ``facet detect DATA --dc 'not(t.a = )'`` (exit 2: the DC does not parse).
* ``detect-warm``: ``facet detect DATA --rules RULES --format json --exit-zero`` (the bundled
  10k-row Tax sample and its rules: ``scripts/demo.sh``'s data) with numba's cache warm (one
  untimed run first); the JSON's ``warmup_seconds`` (kernels loaded from the cache) and the
  sum of the DCs' ``seconds`` are kept too.
* ``detect-cold``: the same with ``NUMBA_CACHE_DIR`` pointed at a new empty folder for every
  run, so every kernel the run uses is compiled.
* ``import``: ``python -c "import facet"``.

Systems, runs interleaved case by case: ``current`` -- a copy of the working tree's facet
taken when the run starts (``bench/work/startup-tree/``, laid out as the installed package:
edits others make meanwhile do not leak in) -- and, with ``--baseline REF``, ``facet@<sha>``
(``common.snapshot_facet``: the commit's own code).  Both run through the same kind of
launcher (``python <copy>/facet_cli.py``), with the interpreter of this venv (variant ``dev``).

Variants of ``current`` closer to what a user installs (the ``dev`` venv has pandas, which
pyarrow imports at its first array when it is installed, and scipy, which numba's BLAS probe
imports when it initialises its CPU target -- 0.2-0.5 s together that facet cannot avoid):

* ``runtime``: the packages only the ``dev`` extra brings (``pandas``, ``scipy``,
  ``datasketch``) hidden by a ``sitecustomize`` that makes importing them fail;
* ``runtime-venv`` (``--runtime-python PYTHON``): the interpreter of a venv holding facet's
  runtime dependencies alone (e.g. ``python -m venv /tmp/rt && /tmp/rt/bin/pip install
  numpy numba pyarrow pyroaring``, the versions of this venv); the copy needs no install.

Every copy has its bytecode written first (``compileall``, as ``pip install`` does) and runs
with ``PYTHONDONTWRITEBYTECODE`` unset: an environment that sets it (this one does) would
otherwise time Python compiling facet's ~60 modules from source, ~0.1-0.15 s a run, which no
installed facet pays.

Results append to ``bench/results/startup.jsonl`` (one record per case, system and variant,
with the command line, machine -- nproc, memory, load -- date and git commit);
``bench/results/startup.md`` is rewritten from the latest run-set, with the targets
(``facet --help`` under 0.3 s, the warm detect under 1 s).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import tomllib
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

REPO = common.REPO
BENCH = "startup"
CASES = ("help", "parse-error", "detect-warm", "detect-cold", "import")
#: case -> wall-time target in seconds (the start-up issue)
TARGETS = {"help": 0.3, "detect-warm": 1.0}
#: what the ``dev`` extra brings that facet's runtime does not need
DEV_ONLY = ("pandas", "scipy", "datasketch")
#: versions recorded
PACKAGES = ("numpy", "numba", "llvmlite", "pyarrow", "pyroaring", "pandas", "scipy", "datasketch")
SITECUSTOMIZE = '''"""bench/startup.py: make importing {names} fail, as if they were not installed."""
import importlib.abc
import sys

HIDDEN = {names!r}


class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}} (hidden)", name=name)
        return None


sys.meta_path.insert(0, _Hide())
'''


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def copy_tree(work: Path) -> str:
    """The working tree's facet packages laid out as installed (``[tool.setuptools]
    package-dir`` of its ``pyproject.toml``) under ``work/startup-tree/``, with a launcher;
    the copy's numba cache starts empty.  Returns the launcher."""
    mapping = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ]
    root = work / "startup-tree"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for pkg in sorted(mapping, key=lambda p: p.count(".")):
        target = root.joinpath(*pkg.split("."))
        shutil.copytree(
            REPO / mapping[pkg],
            target,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"),
        )
    launcher = root / "facet_cli.py"
    launcher.write_text(common.LAUNCHER.format(python=sys.executable))
    launcher.chmod(0o755)
    return str(launcher)


def compile_tree(root: Path) -> None:
    """Write the bytecode of a copy's modules, as ``pip install`` does for the package."""
    import compileall

    if not compileall.compile_dir(str(root), quiet=1, workers=0):
        raise SystemExit(f"bench/startup.py: compiling {root} failed")


def hide_dir(work: Path) -> Path:
    """A folder with the ``sitecustomize`` that hides :data:`DEV_ONLY` (for ``PYTHONPATH``)."""
    d = work / "startup-hide"
    d.mkdir(parents=True, exist_ok=True)
    (d / "sitecustomize.py").write_text(SITECUSTOMIZE.format(names=DEV_ONLY))
    return d


@dataclass(frozen=True)
class System:
    """One column of the report: the facet code (its launcher), the interpreter that runs
    it, and the environment."""

    name: str
    variant: str
    launcher: str
    python: str = sys.executable
    env: dict[str, str] = field(default_factory=dict)


def command(case: str, system: System, args: argparse.Namespace) -> list[str]:
    """The command line of one case for ``system``."""
    root = str(Path(system.launcher).parent)
    facet = [system.python, system.launcher]
    if case == "help":
        return [*facet, "--help"]
    if case == "parse-error":
        return [*facet, "detect", args.data, "--dc", "not(t.a = )"]
    if case in ("detect-warm", "detect-cold"):
        return [*facet, "detect", args.data, "--rules", args.rules, "--format", "json",
                "--exit-zero"]  # fmt: skip
    if case == "import":
        check = f"assert facet.__file__.startswith({root + os.sep!r}), facet.__file__"
        return [system.python, "-c", f"import sys; sys.path.insert(0, {root!r}); import facet; "
                + check]  # fmt: skip
    raise ValueError(case)


def run_once(case: str, system: System, args: argparse.Namespace) -> dict:
    """One process of ``case``: its wall time and, for a detect, what its JSON says."""
    env = dict(system.env)
    cache = None
    if case == "detect-cold":
        cache = tempfile.mkdtemp(prefix="facet-numba-cold-")
        env["NUMBA_CACHE_DIR"] = cache
    try:
        # poll the child often: run_process's default (50 ms) would round start-ups up
        r = common.run_process(command(case, system, args), timeout=args.timeout, env=env,
                               cwd=REPO, poll=0.001)  # fmt: skip
    finally:
        if cache:
            shutil.rmtree(cache, ignore_errors=True)
    out = common.run_summary(r)
    want = 2 if case == "parse-error" else 0
    if r.returncode != want:
        out["status"] = "error"
        out["stderr_tail"] = r.stderr[-2000:]
    elif case == "parse-error":
        out["status"] = "ok"
    if case.startswith("detect") and out["status"] == "ok":
        try:
            doc = json.loads(r.stdout)
            out["warmup_seconds"] = doc["warmup_seconds"]
            out["load_seconds"] = doc["load_seconds"]
            out["dc_seconds"] = sum(d["seconds"] for d in doc["dcs"])
            out["violations"] = doc["total_violations"]
        except (ValueError, KeyError, TypeError) as e:
            out.update(status="bad-output", error=f"{e}: {r.stdout[:300]!r}")
    return out


def summarize(runs: list[dict]) -> dict:
    """Medians and samples of one cell's runs."""
    ok = [r for r in runs if r["status"] == "ok"]
    out: dict = {
        "status": "ok" if len(ok) == len(runs) else "error",
        "wall_median": common.median(r["wall"] for r in ok),
        "wall_min": min((r["wall"] for r in ok), default=None),
        "wall_max": max((r["wall"] for r in ok), default=None),
        "samples_wall": [r["wall"] for r in runs],
        "samples_load1": [r["load1"] for r in runs],
        "rss_median": common.median(r["rss"] for r in ok),
    }
    for key in ("warmup_seconds", "dc_seconds", "load_seconds"):
        if any(key in r for r in ok):
            out[f"{key}_median"] = common.median(r.get(key) for r in ok)
            out[f"samples_{key}"] = [r.get(key) for r in ok]
    if any("violations" in r for r in ok):
        out["violations"] = sorted({r.get("violations") for r in ok}, key=str)
    errors = [r.get("stderr_tail") or r.get("error") for r in runs if r["status"] != "ok"]
    if errors:
        out["error"] = errors[0]
    return out


def python_versions(python: str) -> dict[str, str | None]:
    """Versions of the packages that matter here, as ``python`` sees them."""
    code = (
        "import json, importlib.metadata as m\n"
        "def v(p):\n"
        "    try:\n        return m.version(p)\n    except m.PackageNotFoundError:\n"
        "        return None\n"
        f"print(json.dumps({{p: v(p) for p in {PACKAGES!r}}}))"
    )
    r = common.run_process([python, "-c", code], timeout=120)
    return json.loads(r.stdout) if r.status == "ok" else {}


def run_all(args: argparse.Namespace) -> int:
    work = Path(args.work)
    # a user's install has its bytecode written (pip compiles what it installs); an
    # environment that forbids writing it would time Python compiling facet's source
    unset = ("NUMBA_CACHE_DIR", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    base_env = {k: v for k, v in os.environ.items() if k not in unset}
    current = copy_tree(work)
    compile_tree(Path(current).parent)
    systems = [System("current", "dev", current, env=base_env)]
    if args.runtime_only:
        hide = {**base_env, "PYTHONPATH": str(hide_dir(work))}
        systems.append(System("current", "runtime", current, env=hide))
    if args.runtime_python:
        systems.append(System("current", "runtime-venv", current, args.runtime_python, base_env))
    if args.baseline:
        launcher, sha = common.snapshot_facet(work, args.baseline)
        compile_tree(Path(launcher).parent)
        systems.append(System(f"facet@{sha[:12]}", "dev", launcher, env=base_env))
    for system in systems:  # fill each copy's numba cache, untimed
        w = run_once("detect-warm", system, args)
        _log(f"[{system.name} {system.variant}] warm-up: {w['status']} wall {w['wall']:.2f}s")
        if w["status"] != "ok":
            _log(w.get("stderr_tail") or w.get("error") or "")
            return 1
    machine = {
        **common.machine_info(PACKAGES),
        "load_avg": list(os.getloadavg()),
    }
    failed = False
    for case in args.cases:
        repeats = args.cold_repeats if case == "detect-cold" else args.repeats
        # the runtime variants differ in imports, not in what numba compiles: no cold runs
        cell = [x for x in systems if not (case == "detect-cold" and x.variant != "dev")]
        runs: dict[int, list[dict]] = {id(x): [] for x in cell}
        for i in range(repeats):
            for system in cell:  # interleaved: drift hits all
                r = run_once(case, system, args)
                runs[id(system)].append(r)
                _log(f"[{case} {system.name} {system.variant}] {i + 1}/{repeats}: {r['status']} "
                     f"{r['wall']:.3f}s")  # fmt: skip
        for system in cell:
            summ = summarize(runs[id(system)])
            failed |= summ["status"] != "ok"
            common.append_jsonl(args.results, {
                "bench": BENCH,
                "run_id": args.run_id,
                "command": common.command_line(),
                "machine": machine,
                "params": {"repeats": repeats, "data": args.data, "rules": args.rules},
                "case": case,
                "system": system.name,
                "variant": system.variant,
                "hidden": list(DEV_ONLY) if system.variant == "runtime" else [],
                "python": system.python,
                "python_versions": (python_versions(system.python)
                                    if system.variant == "runtime-venv" else None),
                "cmd": command(case, system, args),
                "numba_cache": "cold" if case == "detect-cold" else "warm",
                "target_seconds": TARGETS.get(case),
                **summ,
            })  # fmt: skip
    write_markdown(args)
    return 1 if failed else 0


def write_markdown(args: argparse.Namespace) -> None:
    """``startup.md`` from the latest run-set of ``--results``."""
    recs = [r for r in common.read_jsonl(args.results) if r.get("bench") == BENCH]
    recs = common.latest_run(recs)
    if not recs:
        return
    columns = list(dict.fromkeys((r["system"], r["variant"]) for r in recs))
    by = {(r["case"], r["system"], r["variant"]): r for r in recs}
    head = ["case", "target"] + [f"{s} ({v})" for s, v in columns]
    baseline = next((c for c in columns if c[0] != "current"), None)
    if baseline:
        head.append(f"current / {baseline[0]}")
    rows = []
    for case in dict.fromkeys(r["case"] for r in recs):
        target = TARGETS.get(case)
        row: list = [f"`{case}`", f"< {target} s" if target else "-"]
        for s, v in columns:
            r = by.get((case, s, v))
            if r is None or r["wall_median"] is None:
                row.append("-" if r is None else r["status"])
                continue
            cell = f"{r['wall_median']:.3f}"
            if target:
                cell += " ✓" if r["wall_median"] < target else " ✗"
            row.append(cell)
        if baseline:
            a, b = by.get((case, "current", "dev")), by.get((case, *baseline))
            ok = a and b and a["wall_median"] and b["wall_median"]
            row.append(f"{a['wall_median'] / b['wall_median']:.2f}" if ok else "-")
        rows.append(row)
    detail_head = ["case", "system", "variant", "warmup_seconds", "sum of DC seconds", "load",
                   "walls (s)"]  # fmt: skip
    detail = []
    for r in recs:
        if not r["case"].startswith("detect"):
            continue
        detail.append([
            f"`{r['case']}`", r["system"], r["variant"],
            common.fmt_seconds(r.get("warmup_seconds_median")),
            common.fmt_seconds(r.get("dc_seconds_median")),
            common.fmt_seconds(r.get("load_seconds_median")),
            " ".join(f"{w:.2f}" for w in r["samples_wall"]),
        ])  # fmt: skip
    m = recs[0]["machine"]
    cmds = {r["case"]: r["cmd"] for r in recs if r["system"] == "current"}
    lines = [
        "# Start-up time (`bench/startup.py`)",
        "",
        f"Run `{recs[0]['run_id']}`, {m['date']}, commit `{(m.get('git_commit') or '?')[:12]}`"
        f"{' (dirty tree)' if m.get('git_dirty') else ''}; {m['nproc']} cores, "
        f"{m['mem_total_gib']} GiB, {m.get('cpu_model')}; Python {m['python']}; "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)
        + f"; load average at start {', '.join(f'{x:.2f}' for x in m['load_avg'])}.",
        "",
        f"Command: `{recs[0]['command']}`",
        "",
        "Median wall seconds of fresh processes (interpreter start to exit). `current`: the "
        "working tree's code (a copy) with the dev venv's interpreter; `runtime`: the same "
        f"with the dev-only packages ({', '.join(DEV_ONLY)}) hidden, as in an install of "
        "facet's runtime dependencies alone; `runtime-venv`: the same code run by the "
        "interpreter of a venv that holds the runtime dependencies only; `facet@<sha>`: the "
        "baseline commit (dev venv). ✓ / ✗: under the target or not.",
        "",
        common.markdown_table(head, rows),
        "",
        "Detect runs: medians of what facet's JSON reports (`warmup_seconds`: kernels loaded "
        "from numba's cache, or compiled with a cold one) and every run's wall time.",
        "",
        common.markdown_table(detail_head, detail),
        "",
        "Commands, `facet` being `python bench/work/startup-tree/facet_cli.py` (the launcher "
        "of the copy; the baseline's is its snapshot's), run from the repository root:",
        "",
        *[f"* `{c}`: `{_shown(cmd)}`" for c, cmd in cmds.items()],
        "",
    ]
    Path(args.results).with_suffix(".md").write_text("\n".join(lines))


def _shown(cmd: list[str]) -> str:
    """A case's command line as the report shows it."""
    if cmd[1] == "-c":
        return "python -c 'import facet'"
    return " ".join(["facet", *(f"'{a}'" if " " in a else a for a in cmd[2:])])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7, help="runs per case (median)")
    ap.add_argument("--cold-repeats", type=int, default=3, help="runs of detect-cold")
    ap.add_argument("--cases", default=",".join(CASES), help="subset of: " + ", ".join(CASES))
    ap.add_argument("--data", default="data/tax/tax_dirty_0010k.csv")
    ap.add_argument("--rules", default="data/tax/dc_rules.txt")
    ap.add_argument("--baseline", metavar="REF", default=None,
                    help="also measure commit REF (a git archive snapshot), interleaved")  # fmt: skip
    ap.add_argument("--no-runtime-only", dest="runtime_only", action="store_false",
                    help=f"skip the variant with {', '.join(DEV_ONLY)} hidden")  # fmt: skip
    ap.add_argument("--runtime-python", metavar="PYTHON", default=None,
                    help="also run the current code with this interpreter: one of a venv with "
                    "facet's runtime dependencies alone (variant runtime-venv)")  # fmt: skip
    ap.add_argument("--timeout", type=float, default=600.0, help="watchdog per process, seconds")
    ap.add_argument("--work", default=str(REPO / "bench" / "work"))
    ap.add_argument("--results", default=str(REPO / "bench" / "results" / f"{BENCH}.jsonl"))
    ap.add_argument("--report-only", action="store_true",
                    help="only rewrite the markdown from the latest run-set")  # fmt: skip
    args = ap.parse_args(argv)
    args.cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    if not set(args.cases) <= set(CASES):
        ap.error(f"unknown cases {sorted(set(args.cases) - set(CASES))}")
    if args.report_only:
        write_markdown(args)
        return 0
    args.run_id = uuid.uuid4().hex[:12]
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
