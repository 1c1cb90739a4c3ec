"""Fresh-process A/B of one DC under environment settings (docs/architecture.md,
``memory.py``: the mimalloc arena-commit stall).

Each round runs ``facet detect TABLE --dc DC --format json`` once per variant, in
turn, each in its own process (interleaved, so host drift hits every variant
alike), and reports per variant the median and 90th percentile of the DC's
seconds and the median load seconds::

    python bench/env_ab.py bench/work/suite/tax_100000.parquet \\
        "not(t.zip = t'.zip and t.city != t'.city and t.city != 'BOSTON')" \\
        --rounds 10 --variant MIMALLOC_ARENA_EAGER_COMMIT=2 --variant MIMALLOC_ARENA_EAGER_COMMIT=0

(``2`` is mimalloc's own default; facet sets ``0`` unless the variable is set.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

import common


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table")
    ap.add_argument("dc")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--variant", action="append", required=True, help="NAME=VALUE")
    args = ap.parse_args(argv)
    exe = common.facet_exe() or "facet"
    got: dict[str, list[tuple[float, float]]] = {v: [] for v in args.variant}
    for _ in range(args.rounds):
        for v in args.variant:
            name, _, value = v.partition("=")
            cmd = [exe, "detect", args.table, "--dc", args.dc, "--format", "json", "--exit-zero",
                   "--quiet"]  # fmt: skip
            out = subprocess.run(cmd, capture_output=True, text=True, check=True,
                                 env={**os.environ, name: value})  # fmt: skip
            doc = json.loads(out.stdout)
            got[v].append((doc["dcs"][0]["seconds"] * 1e3, doc["load_seconds"] * 1e3))
    print(json.dumps(common.machine_info()))
    for v, runs in got.items():
        dc = sorted(x for x, _ in runs)
        p90 = dc[min(len(dc) - 1, int(0.9 * len(dc)))]
        load = statistics.median(y for _, y in runs)
        print(f"{v:40s} DC ms median {statistics.median(dc):7.2f}  p90 {p90:7.2f}  "
              f"load ms median {load:7.2f}  runs {[round(x, 1) for x in dc]}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
