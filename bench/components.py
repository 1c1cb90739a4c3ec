"""The components output against the count on a DC with about 10^10 violating pairs.

    python bench/components.py [--rows 1000000] [--repeats 3] [--timeout 600]

Input: the Tax-like CSV of ``data/taxgen.py`` (``bench/work/``, generated once). DC:
``not(t.state = t'.state and t.salary > t'.salary)`` -- every pair of rows of one state with
different salaries, about n^2 / (2 x states) pairs: 10^10 at 1M rows. For each repeat, in
their own processes under ``bench/common.py``'s watchdog and interleaved: ``facet detect
--format json`` (the count) and ``facet detect --output components --out FILE.parquet``. The
times compared are the DC's ``seconds`` (after the table is in Arrow; components: listing the
blocks and union-find over them, never over pairs); wall and peak RSS are recorded.
bench/README.md target (issue 10): components within 3x of the count and under 2 GiB.

Records append to ``bench/results/components.jsonl``; ``bench/results/components.md`` is
rewritten from the latest record.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

REPO = common.REPO
RESULTS = REPO / "bench" / "results"
JSONL = RESULTS / "components.jsonl"
DC = "not(t.state = t'.state and t.salary > t'.salary)"
#: within this factor of the count's seconds, under this peak RSS
TARGET = (3.0, 2 * common.GIB)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def summary(runs: list[dict]) -> dict:
    ok = [r for r in runs if r["status"] == "ok"]
    return {
        "status": "ok" if len(ok) == len(runs) else runs[-1]["status"],
        "seconds": common.median([r["seconds"] for r in ok]) if ok else None,
        "wall": common.median([r["wall"] for r in ok]) if ok else None,
        "rss": max((r["rss"] or 0) for r in runs) or None,
        "violations": sorted({r["violations"] for r in ok}),
        "written": sorted({r.get("written") for r in ok}, key=str),
        "out_bytes": max((r.get("out_bytes") or 0) for r in ok) if ok else None,
        "samples": [r.get("seconds") for r in ok],
    }


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
    file = common.tax_table(args.rows, 0, 0.001, work, args.timeout)
    limit = common.rss_limit(None)
    _log(f"{file.name}: {DC}")
    common.run_facet(exe, file, DC, args.timeout, limit)  # warms numba's cache (untimed)
    runs: dict[str, list[dict]] = {"count": [], "components": []}
    for _ in range(args.repeats):
        for output in runs:
            r = common.run_facet(exe, file, DC, args.timeout, limit, output=output)
            runs[output].append(r)
            _log(f"  {output}: {r['status']} seconds {r.get('seconds', float('nan')):.3f} "
                 f"wall {r['wall']:.2f} rss {common.fmt_bytes(r['rss'])} "
                 f"violations {r.get('violations')}")  # fmt: skip
    s = {k: summary(v) for k, v in runs.items()}
    count, comp = s["count"]["seconds"], s["components"]["seconds"]
    ratio = comp / count if comp and count else None
    meets = (
        ratio is not None
        and ratio <= TARGET[0]
        and (s["components"]["rss"] or 0) < TARGET[1]
        and s["count"]["violations"] == s["components"]["violations"]
    )
    rec = {"bench": "components", "command": common.command_line(),
           "machine": common.machine_info(("numpy", "numba", "pyarrow")), "dc": DC,
           "file": file.name, "rows": args.rows, "repeats": args.repeats, "ratio": ratio,
           "meets_target": meets, **s}  # fmt: skip
    common.append_jsonl(JSONL, rec)
    write_markdown(rec)
    return 0 if s["count"]["status"] == s["components"]["status"] == "ok" else 1


def write_markdown(r: dict) -> None:
    m = r["machine"]
    rows = [[k, common.fmt_seconds(r[k]["seconds"]), common.fmt_seconds(r[k]["wall"]),
             common.fmt_bytes(r[k]["rss"]), ", ".join(map(str, r[k]["violations"])),
             ", ".join(str(w) for w in r[k]["written"] if w is not None) or "-",
             common.fmt_bytes(r[k]["out_bytes"]) if k == "components" else "-",
             " ".join(f"{x:.3f}" for x in r[k]["samples"])]
            for k in ("count", "components")]  # fmt: skip
    lines = [
        "# Components vs count (`bench/components.py`)", "",
        f"Command: `{r['command']}` -- {m['date']}, {m['nproc']} cores, "
        f"{m['mem_total_gib']} GiB, commit {(m.get('git_commit') or '')[:10]}"
        f"{' (dirty)' if m.get('git_dirty') else ''}", "",
        f"DC on `{r['file']}` ({r['rows']:,} rows): `{r['dc']}`. Seconds: the DC's time from "
        "facet's JSON (after the table is in Arrow), medians of "
        f"{r['repeats']} runs each, interleaved; components written to Parquet.", "",
        common.markdown_table(["output", "seconds", "wall", "peak RSS", "violations",
                               "rows written", "file size", "samples (s)"], rows), "",
        f"components / count: **{r['ratio']:.2f}x**" if r["ratio"] else "components / count: -",
        f"(target: within {TARGET[0]:.0f}x and under {common.fmt_bytes(TARGET[1])}: "
        f"{'met' if r['meets_target'] else 'NOT met'}).", "",
    ]  # fmt: skip
    (RESULTS / "components.md").write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
