"""Scoped runs with and without the semi-join of their initial pairs
(``facet/engine/filters.py`` ``semi_join``, ``Config.scope_semi_join``).

    python bench/semi_join.py [--rows 100k,1m] [--repeat 7]

For the paper's Tax DCs φ4-φ7 (the suite's generated table, ``bench/work/suite/``) and
three scopes -- about 1% of the rows by last name (a condition on a column no DC uses,
as ``bench/scoped.py``), four zip codes, one state -- in one process with the kernels
warm: the median seconds of building the DC's scoped initial pairs plus counting them
(``Session.initial`` + ``Session.count``; typing, encoding and the scope's evaluation
are the same in both and left out), with the semi-join and without, interleaved run by
run; the counts must agree.  Results append to ``bench/results/semi_join.jsonl``;
``bench/results/semi_join.md`` is rewritten from the run.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import suite  # noqa: E402

RESULTS = common.REPO / "bench" / "results"
DCS = ("phi4", "phi5", "phi6", "phi7")


def scopes(table: Path, fraction: float = 0.01) -> dict[str, str]:
    """``--where`` texts: the first last names (sorted) holding ``fraction`` of the
    rows, four zip codes of the table, one state."""
    cols = pq.read_table(table, columns=["l_name", "zip", "state"])
    counts = {r["values"]: r["counts"] for r in pc.value_counts(cols["l_name"]).to_pylist()}
    names, held = [], 0
    for name in sorted(counts):
        names.append(name)
        held += counts[name]
        if held >= fraction * cols.num_rows:
            break
    zips = sorted(set(cols["zip"].slice(0, 1000).to_pylist()))[:4]

    def quoted(values) -> str:
        return ", ".join("'" + str(v).replace("'", "''") + "'" for v in values)

    return {
        "1% by last name": f"l_name in ({quoted(names)})",
        "4 zip codes": f"zip in ({quoted(zips)})",
        "one state": f"state = '{cols['state'][0].as_py()}'",
    }


def measure(table: Path, dc: str, where: str, repeat: int) -> dict:
    from facet.api import open_session
    from facet.planner.config import DEFAULT

    configs = {"semi": DEFAULT, "without": DEFAULT.but(scope_semi_join=False)}
    times: dict[str, list[float]] = {k: [] for k in configs}
    counts: dict[str, set] = {k: set() for k in configs}
    sizes: dict[str, int] = {}
    scope_rows = 0
    for rep in range(repeat + 1):
        for name, config in configs.items():
            opened = open_session(str(table), dcs=[dc], where=where, config=config)
            scope_rows = opened.scope_rows
            s = opened.session
            t = time.perf_counter()
            groups = s.initial(0)
            c = s.count(0)
            dt = time.perf_counter() - t
            counts[name].add(tuple(c))
            sizes[name] = int(groups.left_sizes().sum() + groups.right_sizes().sum())
            if rep:  # the first round loads every kernel
                times[name].append(dt)
    return {
        "scope_rows": scope_rows,
        "tids": sizes,
        "counts": {k: sorted(v) for k, v in counts.items()},
        "agree": len(set().union(*counts.values())) == 1,
        **{f"{k}_seconds": common.median(v) for k, v in times.items()},
        **{f"{k}_samples": v for k, v in times.items()},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="100k,1m")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    run_id = uuid.uuid4().hex[:12]
    info = common.machine_info()
    paper = {d.id: d for d in suite.PAPER_DCS}
    recs = []
    for rows in suite.parse_rows(args.rows):
        table = suite.generated_table("tax", rows, 600)
        for scope_name, where in scopes(table).items():
            for dc_id in DCS:
                pdc = paper[dc_id]
                rec = {"bench": "semi_join", "run_id": run_id, "dc": dc_id, "rows": rows,
                       "scope": scope_name, "where": where, "text": pdc.text,
                       "command": common.command_line(), "machine": info,
                       "date": datetime.now(UTC).isoformat(timespec="seconds"),
                       **measure(table, pdc.text, where, args.repeat)}  # fmt: skip
                print(f"{dc_id} @ {suite.fmt_rows(rows)} {scope_name}: semi "
                      f"{rec['semi_seconds'] * 1e3:.1f} ms, without "
                      f"{rec['without_seconds'] * 1e3:.1f} ms, agree {rec['agree']}",
                      flush=True)  # fmt: skip
                common.append_jsonl(RESULTS / "semi_join.jsonl", rec)
                recs.append(rec)
    write_md(recs)
    return 0 if all(r["agree"] for r in recs) else 1


def write_md(recs: list[dict]) -> None:
    r0 = recs[0]
    m = r0["machine"]
    rows = [
        [
            r["dc"], suite.fmt_rows(r["rows"]), r["scope"], f"{r['scope_rows']:,}",
            f"{r['tids']['without']:,} -> {r['tids']['semi']:,}",
            f"{r['without_seconds'] * 1e3:.1f}", f"{r['semi_seconds'] * 1e3:.1f}",
            f"{r['without_seconds'] / r['semi_seconds']:.2f}x", f"{r['counts']['semi'][0][0]:,}",
        ]
        for r in recs
    ]  # fmt: skip
    text = (
        "# Scoped initial pairs with and without the semi-join (`bench/semi_join.py`)\n\n"
        f"Run `{r0['run_id']}`, {r0['date']}, commit `{(m.get('git_commit') or '?')[:12]}`"
        f"{' (dirty tree)' if m.get('git_dirty') else ''}; {m.get('nproc')} cores, "
        f"{m.get('mem_total_gib')} GiB, {m.get('cpu_model')}.\n\n"
        f"Command: `{r0['command']}`\n\n"
        "Median ms of `Session.initial` + `Session.count` of one scoped DC (table loaded, "
        "typed, encoded and its scope evaluated; kernels warm), with and without the "
        "semi-join, interleaved run by run; `tids`: the initial pairs' tids on both sides "
        "without -> with it (a side the semi-join would keep more than half of stays "
        "whole). Every count agreed.\n\n"
        + common.markdown_table(
            [
                "DC",
                "rows",
                "scope",
                "scope rows",
                "tids",
                "without ms",
                "semi ms",
                "without / semi",
                "violations",
            ],
            rows,
        )  # fmt: skip
        + "\n"
    )
    (RESULTS / "semi_join.md").write_text(text)


if __name__ == "__main__":
    sys.exit(main())
