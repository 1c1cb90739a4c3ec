"""DuckDB as the reference system of the benchmarks: a DC's violations as a self-join count.

    python bench/duckdb_worker.py --file FILE --dc DC [--threads N]

The worker (this file run as a script, one process per measured run) loads ``FILE`` into table
``r`` untimed -- ``rid`` = 0-based row number; Parquet natively; CSV typed as facet types it
(docs/semantics.md §4.3): columns the DC compares with ``< <= > >=`` are timestamps when more values parse
as ISO dates/times than as numbers, else numbers (``BIGINT`` when every value is integral, else
``DOUBLE``; text that does not parse, such as ``NaN``, is NULL), every other column
``VARCHAR`` -- then times ``SELECT count(*) FROM r t, r t2 WHERE t.rid <> t2.rid AND ...``
(ordered pairs, docs/semantics.md §1's count) and prints one JSON line: ``rows``, ``count``, ``seconds``,
``load_seconds``, ``types`` (DuckDB's type of every column the DC uses), ``sql``, ``threads``,
``duckdb`` (its version); ``{"error": ...}`` and exit 2 when a column cannot be typed.

``run`` starts the worker under ``common.run_process``'s watchdog and parses what it prints;
``parse_dc`` / ``ordered_columns`` / ``dc_to_sql`` turn the plain ``not(t.A op t'.B and ...)``
DC text of the benchmarks into that SQL.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

#: the number grammar of docs/semantics.md §4.3 (after trimming)
NUMBER_RE = r"[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?"

# --------------------------------------------------------------------------------------------
# DC text -> SQL (the plain `not(t.A op t'.B and ...)` form used by the benchmarks)

_OPERAND = r"(?:t'?\.[A-Za-z_][A-Za-z0-9_]*|'[^']*'|\"[^\"]*\"|[+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)"
_PRED = re.compile(rf"^\s*({_OPERAND})\s*(<=|>=|!=|<>|=|<|>)\s*({_OPERAND})\s*$")
_SQL_OP = {"=": "=", "!=": "<>", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def parse_dc(dc: str) -> list[tuple[str, str, str]]:
    m = re.fullmatch(r"\s*not\s*\((.*)\)\s*", dc, flags=re.S)
    if not m:
        raise ValueError(f"unsupported DC text: {dc!r}")
    preds = []
    for part in re.split(r"\s+and\s+", m.group(1)):
        pm = _PRED.match(part)
        if not pm:
            raise ValueError(f"unsupported predicate {part!r} in {dc!r}")
        preds.append((pm.group(1), pm.group(2), pm.group(3)))
    return preds


def column(operand: str) -> str | None:
    """``A`` for ``t.A`` / ``t'.A``; None for a constant."""
    return operand.split(".", 1)[1] if operand.startswith(("t.", "t'.")) else None


def used_columns(dc: str) -> set[str]:
    return {c for a, _, b in parse_dc(dc) for c in (column(a), column(b)) if c}


def ordered_columns(dcs: list[str]) -> set[str]:
    """Columns compared with < <= > >=, closed over column-to-column predicates (docs/semantics.md §4.3)."""
    preds = [p for dc in dcs for p in parse_dc(dc)]
    ordered = {
        c for a, op, b in preds if op in ("<", "<=", ">", ">=") for c in (column(a), column(b))
    }
    ordered.discard(None)
    changed = True
    while changed:
        changed = False
        for a, _, b in preds:
            ca, cb = column(a), column(b)
            if ca and cb and (ca in ordered) != (cb in ordered):
                ordered |= {ca, cb}
                changed = True
    return ordered


def dc_to_sql(dc: str) -> str:
    def operand(x: str) -> str:
        if x.startswith("t'."):
            return f't2."{x[3:]}"'
        if x.startswith("t."):
            return f't."{x[2:]}"'
        if x[0] in "'\"":
            return "'" + x[1:-1].replace("'", "''") + "'"
        return x

    where = " AND ".join(f"{operand(a)} {_SQL_OP[op]} {operand(b)}" for a, op, b in parse_dc(dc))
    return f"SELECT count(*) FROM r t, r t2 WHERE t.rid <> t2.rid AND {where}"


# --------------------------------------------------------------------------------------------
# the worker (its own process)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def load_csv_as_facet_types(con, file: str, dc: str) -> str | None:
    """Table ``r`` from the CSV ``file``, typed as facet types a CSV for ``dc`` (docs/semantics.md §4.3; see
    the module docstring). Returns an error message, or None."""
    src = "read_csv(?, all_varchar = true, header = true)"
    con.execute(f"CREATE TABLE r0 AS SELECT * FROM {src}", [file])
    names = [c[0] for c in con.execute("SELECT * FROM r0 LIMIT 0").description]
    ordered = ordered_columns([dc]) & set(names)
    kinds = {}
    for n in ordered:
        q = _quote(n)
        n_num, n_ts = con.execute(
            f"SELECT count(*) FILTER (WHERE regexp_full_match(trim({q}), '{NUMBER_RE}')), "
            f"count(TRY_CAST(trim({q}) AS TIMESTAMP)) FROM r0"
        ).fetchone()
        if n_num == 0 and n_ts == 0:
            return f"ordered column {n} has no number or timestamp value"
        kinds[n] = "ts" if n_ts > n_num else "num"
    exprs = []
    for n in names:
        q = _quote(n)
        if kinds.get(n) == "ts":
            exprs.append(f"TRY_CAST(trim({q}) AS TIMESTAMP) AS {q}")
        elif kinds.get(n) == "num":
            exprs.append(
                f"CASE WHEN regexp_full_match(trim({q}), '{NUMBER_RE}') "
                f"THEN CAST(trim({q}) AS DOUBLE) END AS {q}"
            )
        else:
            exprs.append(q)
    con.execute(
        f"CREATE TABLE r AS SELECT (row_number() OVER ()) - 1 AS rid, {', '.join(exprs)} FROM r0"
    )
    con.execute("DROP TABLE r0")
    for n, kind in kinds.items():
        if kind != "num":
            continue
        q = _quote(n)
        (frac,) = con.execute(f"SELECT count(*) FILTER (WHERE {q} <> floor({q})) FROM r").fetchone()
        if frac == 0:
            con.execute(f"ALTER TABLE r ALTER {q} TYPE BIGINT")
    return None


def worker(file: str, dc: str, threads: int | None = None) -> int:
    """Load ``file`` into table ``r`` (untimed), time the DC's count(*), print one JSON line."""
    import duckdb

    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    if file.endswith(".parquet"):
        con.execute(
            "CREATE TABLE r AS SELECT (row_number() OVER ()) - 1 AS rid, * FROM read_parquet(?)",
            [file],
        )
    else:
        err = load_csv_as_facet_types(con, file, dc)
        if err:
            print(json.dumps({"error": err}))
            return 2
    types = {name: typ for name, typ, *_ in con.execute("DESCRIBE r").fetchall()}
    rows = con.execute("SELECT count(*) FROM r").fetchone()[0]
    load = time.perf_counter() - t0
    sql = dc_to_sql(dc)
    t1 = time.perf_counter()
    count = con.execute(sql).fetchone()[0]
    seconds = time.perf_counter() - t1
    print(
        json.dumps(
            {
                "rows": rows,
                "count": int(count),
                "seconds": seconds,
                "load_seconds": load,
                "types": {c: types.get(c) for c in sorted(used_columns(dc))},
                "sql": sql,
                "threads": con.execute("SELECT current_setting('threads')").fetchone()[0],
                "duckdb": duckdb.__version__,
            }
        )
    )
    return 0


# --------------------------------------------------------------------------------------------
# the parent side


def run(file: Path, dc: str, timeout: float, rss_limit: int, threads: int | None = None) -> dict:
    """One worker process under the watchdog: status, wall, peak RSS, and from its JSON the
    query ``seconds``, ``violations`` (the count), load seconds, rows, types, SQL, threads."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--file", str(file), "--dc", dc]
    if threads:
        cmd += ["--threads", str(threads)]
    fields = ("load_seconds", "rows", "types", "sql", "threads")
    return common.run_worker(cmd, timeout, rss_limit, fields)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", required=True, help="CSV or Parquet table")
    ap.add_argument("--dc", required=True, help="not(t.A op t'.B and ...)")
    ap.add_argument("--threads", type=int, default=None, help="default: DuckDB's own")
    args = ap.parse_args(argv)
    return worker(args.file, args.dc, args.threads)


if __name__ == "__main__":
    sys.exit(main())
