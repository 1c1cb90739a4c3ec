"""The row outputs (tuples, cells, components) against the count, on DCs of equalities and
two order predicates with 10^8 to 10^11 violating pairs.

    python bench/row_outputs.py [--rows 1000000] [--repeats 3] [--timeout 600]

Input: ``bench/work/row_outputs_<rows>.parquet``, generated once (seed 0): ``K`` (1,000
keys), ``X`` and ``Y`` (uniform below 10^6), int64. DCs: ``not(t.K = t'.K and t.X > t'.X and
t.Y < t'.Y)`` (about n^2 / 4,000 pairs) and ``not(t.X > t'.X and t.Y < t'.Y)`` (about
n^2 / 4). For each repeat, in their own processes under ``bench/common.py``'s watchdog and
interleaved: ``facet detect --format json`` for the count and ``--output O --out
FILE.parquet`` for each row output. Compared: the DC's ``seconds`` (after the table is in
Arrow, writing the output included) as a ratio to the count's in the same round, medians
over the repeats; peak RSS. docs/outputs.md: tuples and cells cost about a count, components
of these DCs about a sort (one sort and one pass per group, a heap sweep when scoped; no
blocks).

Records append to ``bench/results/row_outputs.jsonl``; ``bench/results/row_outputs.md`` is
rewritten from the latest record.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from components import summary  # noqa: E402

REPO = common.REPO
RESULTS = REPO / "bench" / "results"
JSONL = RESULTS / "row_outputs.jsonl"
DCS = (
    "not(t.K = t'.K and t.X > t'.X and t.Y < t'.Y)",
    "not(t.X > t'.X and t.Y < t'.Y)",
)
OUTPUTS = ("count", "tuples", "cells", "components")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def table_file(rows: int, work: Path) -> Path:
    """The generated table (written once)."""
    path = work / f"row_outputs_{rows}.parquet"
    if not path.exists():
        rng = np.random.default_rng(0)
        keys = rng.integers(0, 1000, rows)
        x, y = rng.integers(0, 10**6, rows), rng.integers(0, 10**6, rows)
        pq.write_table(pa.table({"K": keys, "X": x, "Y": y}), path)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--work", default=str(REPO / "bench" / "work"))
    args = ap.parse_args(argv)
    exe = common.facet_exe()
    if exe is None:
        raise SystemExit("no facet executable: run scripts/setup.sh")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    file = table_file(args.rows, work)
    limit = common.rss_limit(None)
    ok = True
    per_dc = []
    for dc in DCS:
        _log(f"{file.name}: {dc}")
        for output in OUTPUTS:  # warms numba's cache for each route (untimed)
            common.run_facet(exe, file, dc, args.timeout, limit, output=output)
        runs: dict[str, list[dict]] = {o: [] for o in OUTPUTS}
        for _ in range(args.repeats):
            for output in OUTPUTS:
                r = common.run_facet(exe, file, dc, args.timeout, limit, output=output)
                runs[output].append(r)
                _log(f"  {output}: {r['status']} seconds {r.get('seconds', float('nan')):.3f} "
                     f"rss {common.fmt_bytes(r['rss'])} violations {r.get('violations')}")  # fmt: skip
        s = {o: summary(v) for o, v in runs.items()}
        ratios = {}
        for o in OUTPUTS[1:]:  # per round, then the median: the rounds share their noise
            pairs = zip(runs[o], runs["count"], strict=True)
            got = [a["seconds"] / b["seconds"] for a, b in pairs
                   if a["status"] == b["status"] == "ok" and b["seconds"]]  # fmt: skip
            ratios[o] = common.median(got) if got else None
        ok &= all(v["status"] == "ok" for v in s.values())
        ok &= len({tuple(v["violations"]) for v in s.values()}) == 1
        per_dc.append({"dc": dc, "ratios": ratios, **s})
    rec = {"bench": "row_outputs", "command": common.command_line(),
           "machine": common.machine_info(("numpy", "numba", "pyarrow")),
           "file": file.name, "rows": args.rows, "repeats": args.repeats, "dcs": per_dc}  # fmt: skip
    common.append_jsonl(JSONL, rec)
    write_markdown(rec)
    return 0 if ok else 1


def write_markdown(r: dict) -> None:
    m = r["machine"]
    rows = []
    for d in r["dcs"]:
        for o in OUTPUTS:
            ratio = d["ratios"].get(o)
            rows.append([f"`{d['dc']}`", o, common.fmt_seconds(d[o]["seconds"]),
                         "1.00x" if o == "count" else (f"{ratio:.2f}x" if ratio else "-"),
                         common.fmt_bytes(d[o]["rss"]), ", ".join(map(str, d[o]["violations"])),
                         " ".join(f"{x:.3f}" for x in d[o]["samples"])])  # fmt: skip
    lines = [
        "# Row outputs vs count (`bench/row_outputs.py`)", "",
        f"Command: `{r['command']}` -- {m['date']}, {m['nproc']} cores, "
        f"{m['mem_total_gib']} GiB, commit {(m.get('git_commit') or '')[:10]}"
        f"{' (dirty)' if m.get('git_dirty') else ''}", "",
        f"On `{r['file']}` ({r['rows']:,} rows). Seconds: the DC's time from facet's JSON "
        f"(after the table is in Arrow), medians of {r['repeats']} interleaved runs each; "
        "ratio: the median over rounds of output / count in the same round. Row outputs "
        "written to Parquet.", "",
        common.markdown_table(["DC", "output", "seconds", "ratio to count", "peak RSS",
                               "violations", "samples (s)"], rows), "",
    ]  # fmt: skip
    (RESULTS / "row_outputs.md").write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
