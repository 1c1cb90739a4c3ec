"""Fresh-process A/B of DCs under environment settings or code revisions
(docs/architecture.md, ``memory.py``: the mimalloc arena-commit stall; the
kernel changes of a sitting, before and after).

Each round runs ``facet detect TABLE --dc DC --format json`` once per variant and
case, in turn, each in its own process (interleaved, so host drift hits every
variant alike), and reports per case and variant the median and 90th percentile
of the DC's seconds, the median load seconds, and the counts (which must agree)::

    python bench/env_ab.py bench/work/suite/tax_100000.parquet \\
        "not(t.zip = t'.zip and t.city != t'.city and t.city != 'BOSTON')" \\
        --rounds 10 --variant MIMALLOC_ARENA_EAGER_COMMIT=2 --variant MIMALLOC_ARENA_EAGER_COMMIT=0

    python bench/env_ab.py --rev 46747c5 --rounds 15 \\
        --case "bench/work/suite/flights_100000.parquet|not(t.origin = t'.dest and ...)" ...

(``2`` is mimalloc's own default; facet sets ``0`` unless the variable is set.)
``--rev REV`` adds a variant running revision REV's code (checked out under
``bench/work/ab/``, its packages put first on the import path; its kernels compile
in an untimed first run) beside the working tree's (``here``); ``--case
"TABLE|DC"`` (repeatable) instead of ``TABLE DC`` measures several DCs per round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import common

#: where revisions are checked out (bench/work is not tracked)
AB_DIR = common.REPO / "bench" / "work" / "ab"
#: the import packages and the folders that hold them (pyproject's package-dir)
PACKAGES = {
    "facet": "facet",
    "facet.kernels": "kernels",
    "facet.language": "language",
    "facet.planner": "planner",
}
_FINDER = """\
import importlib.util, os, sys
ROOT = {root!r}
PACKAGES = {packages!r}


class _RevisionFinder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in PACKAGES:
            return None
        folder = os.path.join(ROOT, PACKAGES[name])
        return importlib.util.spec_from_file_location(
            name, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder]
        )


sys.meta_path.insert(0, _RevisionFinder)
"""


def revision_path(rev: str) -> str:
    """A folder whose ``sitecustomize`` makes a fresh interpreter import facet from a
    checkout of ``rev`` (made once, under :data:`AB_DIR`)."""
    sha = subprocess.run(
        ["git", "-C", str(common.REPO), "rev-parse", "--short=12", rev],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    tree = AB_DIR / sha
    if not tree.exists():
        AB_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "-C", str(common.REPO), "worktree", "add", "--detach", "-f", str(tree), sha],
            capture_output=True, check=True,
        )  # fmt: skip
    site = AB_DIR / f"{sha}-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_FINDER.format(root=str(tree), packages=PACKAGES))
    return str(site)


def _run(table: str, dc: str, env: dict[str, str]) -> tuple[float, float, int]:
    cmd = [sys.executable, "-m", "facet", "detect", table, "--dc", dc, "--format", "json",
           "--exit-zero", "--quiet"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    doc = json.loads(out.stdout)
    d = doc["dcs"][0]
    return d["seconds"] * 1e3, doc["load_seconds"] * 1e3, int(d["violations"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", nargs="?")
    ap.add_argument("dc", nargs="?")
    ap.add_argument("--case", action="append", default=[], help='"TABLE|DC"')
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--variant", action="append", default=[], help="NAME=VALUE")
    ap.add_argument("--rev", action="append", default=[], help="a git revision")
    args = ap.parse_args(argv)
    cases = [tuple(c.split("|", 1)) for c in args.case]
    if args.table and args.dc:
        cases.insert(0, (args.table, args.dc))
    if not cases or not (args.variant or args.rev):
        ap.error("give TABLE DC or --case, and --variant or --rev")
    variants: dict[str, dict[str, str]] = {}
    for v in args.variant:
        name, _, value = v.partition("=")
        variants[v] = {**os.environ, name: value}
    for rev in args.rev:
        site = revision_path(rev)
        path = os.pathsep.join(p for p in (site, os.environ.get("PYTHONPATH")) if p)
        variants[f"rev {rev}"] = {**os.environ, "PYTHONPATH": path}
    if args.rev:
        variants["here"] = dict(os.environ)
        for env in variants.values():  # kernels compiled and cached, untimed
            for table, dc in cases:
                _run(table, dc, env)
    got: dict[tuple[int, str], list[tuple[float, float, int]]] = {}
    for _ in range(args.rounds):
        for i, (table, dc) in enumerate(cases):
            for name, env in variants.items():
                got.setdefault((i, name), []).append(_run(table, dc, env))
    print(json.dumps(common.machine_info()))
    for i, (table, dc) in enumerate(cases):
        counts = {c for name in variants for _, _, c in got[(i, name)]}
        print(f"{Path(table).name}: {dc}  (violations {sorted(counts)})")
        if len(counts) != 1:
            print("  COUNTS DISAGREE")
        for name in variants:
            runs = got[(i, name)]
            ms = sorted(x for x, _, _ in runs)
            p90 = ms[min(len(ms) - 1, int(0.9 * len(ms)))]
            load = statistics.median(y for _, y, _ in runs)
            print(f"  {name:38s} DC ms median {statistics.median(ms):7.2f}  p90 {p90:7.2f}  "
                  f"load ms median {load:7.2f}  runs {[round(x, 1) for x in ms]}")  # fmt: skip
    disagree = any(
        len({c for name in variants for _, _, c in got[(i, name)]}) != 1 for i in range(len(cases))
    )
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
