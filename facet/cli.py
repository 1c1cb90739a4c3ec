"""The ``facet`` command line (docs/semantics.md §7, §9).

Exit codes: 0 no violations, 1 violations found, 2 bad usage / rules / data
(also pairs that would not fit in memory), 3 internal failure or ``--timeout``.  Errors are
one line on stderr (on a terminal, a DC syntax error also shows the DC with a caret under the
column); tracebacks only with ``--debug``.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import shutil
import signal
import sys
import textwrap
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from facet.engine import ENGINES
from facet.errors import (
    EXIT_BAD_INPUT,
    EXIT_CLEAN,
    EXIT_INTERNAL,
    EXIT_VIOLATIONS,
    EngineError,
    FacetInputError,
)
from facet.progress import COMMAND_STARTED, MAX_TIMEOUT

if TYPE_CHECKING:
    import pyarrow as pa

    from facet.progress import DeadlineExceeded

PROG = "facet"

#: the terminal display of a run (``facet.progress.TerminalProgress``), while one is shown
_display: Any = None


#: the arguments being parsed (for the hint on a file named like an option)
_parsing: list[str] = []


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2, options only by their full
    names (``explain --out x.csv`` was taken for ``--output x.csv``), and an
    unknown option pointing to its command's help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        hint = ""
        if "arguments are required: DATA" in message:
            dashed = [a for a in _parsing if a.startswith("-") and os.path.isfile(a)]
            if dashed:  # a file whose name starts with '-' was taken for an option
                hint = f"; for a file named {dashed[0]!r} write ./{dashed[0]} or put -- before it"
        raise FacetInputError(f"{message}{hint} (see '{self.prog} --help')")

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        known, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(known, "command", None)
            prog = f"{self.prog} {command}" if command else self.prog
            raise FacetInputError(
                f"unrecognized arguments: {' '.join(extras)} (see '{prog} --help')"
            )
        return known


class _SchemaAppend(argparse.Action):
    """``--schema`` given more than once: the overrides of all of them."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # noqa: ANN001
        before = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, values if not before else f"{before},{values}")


class _Once(argparse.Action):
    """An option that means one thing at a time (``--where``): given twice, an
    error rather than the last one silently winning."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # noqa: ANN001
        if getattr(namespace, self.dest, None) is not None:
            raise argparse.ArgumentError(
                self, 'given twice; write one condition, e.g. --where "(A) and (B)"'
            )
        setattr(namespace, self.dest, values)


def _nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {v}")
    return v


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got '{text}'") from None
    if not (0 < v <= MAX_TIMEOUT):
        raise argparse.ArgumentTypeError(
            f"expected seconds > 0 and at most {MAX_TIMEOUT:.0e} (leave --timeout out for "
            f"no limit), got '{text}'"
        )
    return v


WHERE_HELP = (
    "only violations holding a row that satisfies EXPR, e.g. \"state = 'NY' and salary > "
    '1000" (comparisons, and, or, not, in, is null; docs/semantics.md §10)'
)


def _shared_options() -> argparse.ArgumentParser:
    """The options every command takes: the table, its DCs and scope, how its CSV is
    read, the time limit and what is printed."""
    shared = _Parser(add_help=False)
    shared.add_argument(
        "data", metavar="DATA", help="table to check: .csv (.tsv), .parquet or .arrow file"
    )
    shared.add_argument(
        "--rules",
        "-r",
        action="append",
        default=[],
        metavar="FILE",
        help="rules file, one DC per line (repeatable)",
    )
    shared.add_argument(
        "--dc",
        action="append",
        default=[],
        metavar="TEXT",
        help="a DC given inline, e.g. \"not(t.zip = t'.zip and t.city != t'.city)\" or "
        "'zip -> city' (repeatable; numbered after the rules file's DCs)",
    )
    shared.add_argument("--where", metavar="EXPR", action=_Once, help=WHERE_HELP)
    shared.add_argument(
        "--schema",
        metavar="COL:TYPE,...",
        action=_SchemaAppend,
        help="override CSV typing, e.g. 'zip:text,salary:int' "
        "(types: int, float, number, text, timestamp)",
    )
    shared.add_argument(
        "--delimiter",
        metavar="CHAR",
        help="the CSV delimiter, e.g. ';', '|' or tab (default: sniffed from the header "
        "among , ; tab |, and ',' when that is ambiguous)",
    )
    shared.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="stop after SECONDS of wall-clock time: exit 3, one line, nothing left at --out",
    )
    shared.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no progress display and no informational lines on stderr "
        "(warnings and errors still print)",
    )
    shared.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return shared


def _engine_options() -> argparse.ArgumentParser:
    """``--engine`` and ``--master`` (detect, explain)."""
    engines = _Parser(add_help=False)
    engines.add_argument(
        "--engine",
        choices=tuple(ENGINES),
        default="local",
        help="engine that runs the plans: local (this machine) or spark (PySpark)",
    )
    engines.add_argument(
        "--master",
        metavar="URL",
        default=None,
        help="Spark master for --engine spark (default local[*]; sc://HOST for Spark Connect)",
    )
    return engines


def build_parser() -> argparse.ArgumentParser:
    from facet import __version__

    p = _Parser(
        prog=PROG,
        description="Find every violation of denial constraints in a table, exactly and fast.",
    )
    p.add_argument("--version", action="version", version=f"facet {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    shared, engines = _shared_options(), _engine_options()
    d = sub.add_parser(
        "detect",
        parents=[shared, engines],
        help="count (and list) the violations of denial constraints",
        description="Count, and optionally list, the violations of denial constraints in DATA "
        "(CSV, Parquet or Arrow IPC).",
    )
    d.add_argument(
        "--append",
        action="append",
        default=[],
        metavar="BATCH",
        help="after DATA, append BATCH (a file of the same columns) and report the violations "
        "holding one of its rows; repeatable, in order (docs/semantics.md §11)",
    )
    d.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    d.add_argument(
        "--output",
        choices=("count", "pairs", "blocks", "tuples", "cells", "components", "suspects"),
        default="count",
        help="count only (default), the violating pairs, the compact blocks (pairs of tid "
        "sets), or for repair tools: violations per row (tuples), per cell (cells), the "
        "conflict graph's connected components (components), or the cells likeliest wrong "
        "(suspects); see docs/outputs.md",
    )
    d.add_argument(
        "--out",
        "-o",
        metavar="PATH",
        help="write the output to PATH (.parquet, .csv or .arrow); with --output count, "
        "the per-DC counts (.json, .parquet, .csv)",
    )
    d.add_argument("--limit", type=_nonneg_int, metavar="N", help="at most N pairs (blocks) per DC")
    d.add_argument(
        "--sort",
        action="store_true",
        help="pairs in (dc, t1, t2) order, blocks by their sorted tid lists; with --limit N, "
        "the first N of that order (row outputs always come in their documented order)",
    )
    d.add_argument(
        "--mode",
        choices=("sequential", "parallel", "cost-trie", "freq-trie"),
        default="sequential",
        help="how several DCs run: one by one, on parallel threads, or sharing refinement "
        "prefixes in a trie (cost- or frequency-ordered); answers are the same",
    )
    d.add_argument("--exit-zero", action="store_true", help="exit 0 even when violations are found")

    e = sub.add_parser(
        "explain",
        parents=[shared, engines],
        help="show the plan facet will run for each DC",
        description="Show, for every DC, its stages in order: predicate, algorithm, tid "
        "storage, estimated cardinality and pairs; --analyze runs the plan and adds actual "
        "sizes and seconds per stage.",
    )
    e.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    e.add_argument(
        "--output",
        choices=("count", "pairs", "blocks"),
        default="count",
        help="the sink to plan for (counting refines only the equalities)",
    )
    e.add_argument("--analyze", action="store_true", help="run the plan and report actuals")
    r = sub.add_parser(
        "report",
        parents=[shared],
        help="write an HTML report: the data with suspect cells marked, each violation explained",
        description="Detect, then write one self-contained HTML file (no network needed): a "
        "summary and chart of violations per DC, the data with violating rows first and suspect "
        "cells shaded, and for a selected cell the DCs it breaks with a partner row's values "
        "(docs/report.md).",
    )
    r.add_argument("--out", "-o", required=True, metavar="FILE.html", help="the report to write")
    r.add_argument("--engine", choices=("local",), default="local", help="local (this machine)")
    r.add_argument(
        "--max-rows", type=_nonneg_int, default=10_000, metavar="N",
        help="rows of the data embedded at most, violating rows first (default 10000)",
    )  # fmt: skip
    r.add_argument("--exit-zero", action="store_true", help="exit 0 even when violations are found")
    return p


def _listed(result: Any) -> Iterator[tuple[int, list[pa.RecordBatch]]]:
    """The pairs (blocks) kept in ``result``, as ``(dc id, batches)`` in id order."""
    import pyarrow.compute as pc

    table = result.pairs() if result.output == "pairs" else result.blocks()
    by_dc: dict[int, list[Any]] = {d.id: [] for d in result.dcs}
    for batch in table.to_batches():
        if batch.num_rows == 0:
            continue
        ids = batch.column(0)
        lo, hi = pc.min_max(ids).values()
        if lo == hi:  # detect lists DC by DC: one DC per batch
            by_dc[lo.as_py()].append(batch)
            continue
        for dc in pc.unique(ids).to_pylist():  # pragma: no cover - not made today
            by_dc[dc].append(batch.filter(pc.equal(ids, dc)))
    yield from by_dc.items()


def _print_pairs_text(result: Any, out: IO[str]) -> None:
    """After the table: ``dc,t1,t2`` (pairs) or ``dc,block,t1,t2`` (blocks, lists
    space-separated), a batch at a time."""
    print("", file=out)
    print("dc,t1,t2" if result.output == "pairs" else "dc,block,t1,t2", file=out)
    for dc, batches in _listed(result):
        for batch in batches:
            if result.output == "pairs":
                t1 = batch.column(1).to_pylist()
                t2 = batch.column(2).to_pylist()
                out.write("".join(f"{dc},{a},{'' if b is None else b}\n" for a, b in zip(t1, t2)))
            else:
                blocks = batch.column(1).to_pylist()
                t1 = batch.column(2).to_pylist()
                t2 = batch.column(3).to_pylist()
                out.write(
                    "".join(
                        f"{dc},{k},{' '.join(map(str, a))},{'' if b is None else ' '.join(map(str, b))}\n"
                        for k, a, b in zip(blocks, t1, t2)
                    )
                )


#: the outputs of one row per row, cell or component row (docs/outputs.md)
ROWS = ("tuples", "cells", "components", "suspects")


def _row_table(result: Any) -> Any:
    return getattr(result, result.output)()


def _print_rows_text(result: Any, out: IO[str]) -> None:
    """After the table: the output's rows as CSV (header first), text that a
    spreadsheet would take for a formula with a ``'`` first, as in a CSV file."""
    from facet.sinks.files import csv_line, csv_records

    table = _row_table(result)
    print("", file=out)
    out.write(csv_line(table.column_names))
    for batch in table.to_batches():
        out.write(csv_records(batch))


def _write_json(result: Any, out: IO[str]) -> None:
    """The JSON document (``result.to_dict()``); pairs or blocks kept in memory go
    into their DC's entry, converted a batch at a time (the document is never
    built whole, so it costs no more memory than the Arrow table)."""
    doc = result.to_dict()
    kind = result.output
    if kind in ROWS and result.out is None:
        doc[kind] = _row_table(result).to_pylist()
    if kind not in ("pairs", "blocks") or result.out is not None:
        out.write(json.dumps(doc) + "\n")
        return
    listed = dict(_listed(result))
    out.write("{")
    for k, (key, value) in enumerate(doc.items()):
        out.write(("" if k == 0 else ", ") + json.dumps(key) + ": ")
        if key != "dcs":
            out.write(json.dumps(value))
            continue
        out.write("[")
        for j, entry in enumerate(value):
            out.write(
                ("" if j == 0 else ", ") + json.dumps(entry)[:-1] + f", {json.dumps(kind)}: ["
            )
            first = True
            for batch in listed.get(entry["id"], ()):
                cols = (1, 2) if kind == "pairs" else (2, 3)
                rows = zip(batch.column(cols[0]).to_pylist(), batch.column(cols[1]).to_pylist())
                out.write(("" if first else ", ") + json.dumps(list(rows))[1:-1])
                first = False
            out.write("]}")
        out.write("]")
    out.write("}\n")


def _text_report(result: Any, width: int) -> str:
    """The text report: a summary line, one table row per DC (the DC's text
    wrapped to ``width`` columns in the last column; in full in JSON), and what
    the numbers mean."""
    n = len(result.dcs)
    summary = (
        f"{result.rows:,} row{'s' if result.rows != 1 else ''}, {n} DC{'s' if n != 1 else ''}, "
        f"{result.total_violations:,} violation{'s' if result.total_violations != 1 else ''}"
    )
    load = f"(load {result.load_seconds:.2f} s)"
    source = _fit_path(str(result.source), width - 1)
    lines = []
    parts = [f"{source}:", summary, load]
    if result.where is not None:
        k = result.scope_rows
        held = {0: "no row", 1: "the 1 row"}.get(k, f"one of the {k:,} rows")
        parts.insert(2, f"holding {held} where {result.where}")
    for part in parts:
        if lines and len(lines[-1]) + 1 + len(part) <= width:
            lines[-1] += " " + part
        else:
            lines.append(part if not lines else "  " + part)
    rows = [("id", "name", "violations", "rows", "seconds")]
    for d in result.dcs:
        name = d.name or "-"
        if len(name) > 16:
            name = name[:15] + "~"
        v = f"{d.violations:,}" + (" rows" if d.arity == 1 else "")
        rows.append((str(d.id), name, v, f"{d.rows_involved:,}", f"{d.seconds:.3f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    left = sum(widths) + 2 * 5
    dc_width = width - left
    below = dc_width < 24  # too narrow beside the numbers: the DC under its row
    lines.append("")
    for j, r in enumerate(rows):
        cells = [
            r[0].rjust(widths[0]),
            r[1].ljust(widths[1]),
            r[2].rjust(widths[2]),
            r[3].rjust(widths[3]),
            r[4].rjust(widths[4]),
        ]
        text = "dc" if j == 0 else result.dcs[j - 1].dc
        if below:
            lines.append("  ".join(cells).rstrip())
            if j:
                lines.extend("    " + more for more in _wrap_dc(text, width - 4))
        else:
            wrapped = _wrap_dc(text, dc_width)
            lines.append(("  ".join(cells) + "  " + wrapped[0]).rstrip())
            lines.extend(" " * left + more for more in wrapped[1:])
        if j == 0:
            lines.append("  ".join("-" * w for w in widths) + ("" if below else "  --"))
    lines.append("")
    lines.extend(
        textwrap.wrap(
            "violations: ordered pairs (t, t') of two different rows that break the DC "
            "together ('N rows': rows that break a single-tuple DC alone); rows: distinct rows "
            "in at least one violation; seconds: the DC's share of the run after loading.",
            width,
        )
    )
    if result.out is not None:
        lines.append("")
        lines.append(f"{result.output} written to {result.out}")
    return "\n".join(lines)


def _fit_path(path: str, width: int) -> str:
    """``path`` in at most ``width`` characters: whole where it fits, else its
    last components behind ``...`` (the file name always stays)."""
    if len(path) <= width:
        return path
    parts = path.split(os.sep)
    tail = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + len(tail) + 5 > width:
            break
        tail = part + os.sep + tail
    return "..." + os.sep + tail


def _wrap_dc(text: str, width: int) -> list[str]:
    """DC text in lines of at most ``width``, broken between predicates where
    they fit (``and`` ends a line), within a predicate where one does not."""
    lines: list[str] = []
    for k, pred in enumerate(text.split(" and ")):
        piece = pred if k == 0 else "and " + pred
        if lines and len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines.extend(textwrap.wrap(piece, width, break_on_hyphens=False) or [""])
    return lines or [""]


def _width() -> int:
    """Columns of the text report: the terminal's (``$COLUMNS`` first), else 100."""
    return max(shutil.get_terminal_size((100, 24)).columns, 60)


#: the warnings printed by this command (each is printed once)
_warned: set[str] = set()


def _warn(msg: str) -> None:
    """The command's one way to print a warning (the API's ``on_warning``: no
    Python warning is issued besides), each distinct one once."""
    if msg in _warned:
        return
    _warned.add(msg)
    line = f"{PROG}: warning: {msg}"
    if _display is not None:
        _display.write(line)  # above the progress display
    else:
        print(line, file=sys.stderr)


def _rules(args: argparse.Namespace) -> list[Any]:
    """The rules files' DCs; the ``--dc`` texts are parsed too, only to report a
    syntax error before the engine's imports (numba, pyarrow: most of a second)."""
    from facet.language.parser import parse_dc, read_rules

    if not args.rules and not args.dc:
        raise FacetInputError("no denial constraints given; pass --rules FILE or --dc TEXT")
    rules: list[Any] = []
    for path in args.rules:
        rules.extend(read_rules(path))
    for i, text in enumerate(args.dc):  # as facet.api.load_dcs parses them
        parse_dc(text, source="--dc", line=i + 1)
    if not rules and not args.dc:
        files = ", ".join(args.rules)
        raise FacetInputError(
            f"{files}: no DC in the rules file (only comments or blank lines); "
            "write one DC per line, e.g. not(t.zip = t'.zip and t.city != t'.city)"
        )
    return rules


def _inputs(args: argparse.Namespace) -> list[str]:
    """The files a command reads: DATA and the rules files."""
    return [args.data, *args.rules]


def _check_not_input(args: argparse.Namespace) -> None:
    """Refuse an ``--out`` that is one of the inputs (it would be replaced)."""
    if args.out:
        from facet.sinks.files import check_not_input

        check_not_input(args.out, _inputs(args))


def _check_engine(args: argparse.Namespace) -> None:
    if args.master is not None and args.engine != "spark":
        raise FacetInputError(f"--master {args.master} needs --engine spark")
    if args.engine == "spark" and not args.debug:  # one line, not py4j's tracebacks
        from facet.engine.spark.connect import quiet_console

        quiet_console()


def run_explain(args: argparse.Namespace) -> int:
    _check_engine(args)
    rules = _rules(args)  # (before the engine's imports: syntax errors come fast)
    from facet.api import explain
    from facet.planner.explain import render_text

    with _shown(args):
        doc = explain(
            args.data,
            rules or None,
            dcs=args.dc,
            output=args.output,
            analyze=args.analyze,
            schema=args.schema,
            on_warning=_warn,
            engine=args.engine,
            master=args.master,
            where=args.where,
            progress=_display,
            delimiter=args.delimiter,
            timeout=args.timeout,
        )
    if args.format == "json":
        sys.stdout.write(json.dumps(doc) + "\n")
    else:
        print(render_text(doc))
    return EXIT_CLEAN


def _stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (not a closed or replaced stream)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _progress_display(args: argparse.Namespace) -> Any:
    """The progress display, unless ``--quiet``: on a terminal stderr, a line per
    phase redrawn in place; else one line when the kernels compile."""
    if getattr(args, "quiet", False):
        return None
    from facet.progress import CompileLine, TerminalProgress

    if not _stderr_is_terminal():
        return CompileLine(sys.stderr, prog=PROG)
    return TerminalProgress(sys.stderr, prog=PROG)


@contextlib.contextmanager
def _shown(args: argparse.Namespace) -> Iterator[None]:
    """The progress display (:data:`_display`) while a command runs."""
    global _display
    _display = _progress_display(args)
    try:
        yield
    finally:
        if _display is not None:
            _display.close()
        _display = None


def run_detect(args: argparse.Namespace) -> int:
    _check_engine(args)
    rules = _rules(args)  # (before the engine's imports: syntax errors come fast)
    if args.append:
        return run_batches(args, rules)
    _check_not_input(args)
    from facet.api import detect

    with _shown(args):
        result = detect(
            args.data,
            rules or None,
            dcs=args.dc,
            output=args.output,
            out=args.out,
            limit=args.limit,
            schema=args.schema,
            on_warning=_warn,
            mode=args.mode,
            engine=args.engine,
            master=args.master,
            progress=_display,
            timeout=args.timeout,
            where=args.where,
            sort=args.sort,
            delimiter=args.delimiter,
        )
    with _summary_after(result.out):
        if args.format == "json":
            _write_json(result, sys.stdout)
        else:
            print(_text_report(result, _width()))
            if result.output in ("pairs", "blocks") and result.out is None:
                _print_pairs_text(result, sys.stdout)
            elif result.output in ROWS and result.out is None:
                _print_rows_text(result, sys.stdout)
        sys.stdout.flush()
    if result.total_violations and not args.exit_zero:
        return EXIT_VIOLATIONS
    return EXIT_CLEAN


@contextlib.contextmanager
def _summary_after(out: str | None) -> Iterator[None]:
    """Printing the summary once the ``--out`` file is in place: the run is finished
    (§9), so a stdout that takes no more (a full disk) is a warning, not exit 2
    with the file left behind.  A stdout whose reader went away (a pipe into
    ``head``) exits 0 as always."""
    try:
        yield
    except OSError as err:
        if out is None or isinstance(err, BrokenPipeError):
            raise
        _warn(f"the output is in {out}, but stdout took no more of the summary ({err.strerror})")


def run_report(args: argparse.Namespace) -> int:
    """``facet report DATA ... --out FILE.html``: detect, then write the report."""
    rules = _rules(args)
    if not args.out.lower().endswith((".html", ".htm")):
        raise FacetInputError(f"--out {args.out}: the report is HTML; name it FILE.html")
    from facet.api import detect
    from facet.sinks.html import open_report, write_report

    out = open_report(args.out, _inputs(args))  # a bad --out stops the run before detection
    try:
        with _shown(args):
            result = detect(
                args.data, rules or None, dcs=args.dc, schema=args.schema, on_warning=_warn,
                progress=_display, timeout=args.timeout, where=args.where,
                delimiter=args.delimiter,
            )  # fmt: skip
        write_report(result, out, args.data, max_rows=args.max_rows, delimiter=args.delimiter)
    except BaseException:
        out.abort()
        raise
    n, v = len(result.dcs), result.total_violations
    with _summary_after(args.out):
        print(
            f"{result.source}: {result.rows:,} row{'s' if result.rows != 1 else ''}, "
            f"{n} DC{'s' if n != 1 else ''}, {v:,} violation{'s' if v != 1 else ''}; "
            f"report written to {args.out}"
        )
        sys.stdout.flush()
    if result.total_violations and not args.exit_zero:
        return EXIT_VIOLATIONS
    return EXIT_CLEAN


def run_batches(args: argparse.Namespace, rules: list[Any]) -> int:
    """``facet detect BASE --append BATCH ...``: the base table's report, then one
    per batch (the violations holding one of its rows), then the running totals."""
    for flag, value in (("--out", args.out), ("--where", args.where), ("--limit", args.limit)):
        if value is not None:
            raise FacetInputError(f"{flag} does not combine with --append yet; drop one of them")
    if args.engine != "local":
        raise FacetInputError("--append runs on the local engine only for now; drop --engine spark")
    from facet.detector import Detector
    from facet.loading import check_path, source_name

    for batch in args.append:  # a batch that is not there fails before the base runs
        check_path(Path(batch), source_name(batch))

    with _shown(args):
        det = Detector(
            args.data, rules or None, dcs=args.dc, schema=args.schema, mode=args.mode,
            on_warning=_warn, output=args.output, progress=_display, delimiter=args.delimiter,
        )  # fmt: skip
    if args.sort:
        det.initial.sort_output()
    reports = []

    def report(label: str, path: Any, res: Any, first: int, end: int) -> None:
        """Keep a part's report for the JSON document, or print it now (a later
        batch's error then leaves the reports before it on stdout)."""
        if args.format == "json":
            doc = {"part": label, "path": str(path), "first_tid": first, "end_tid": end}
            reports.append({**doc, **_full_dict(res)})
            return
        if label == "base":
            print(f"== base: {path}")
        else:
            print(f"== {label}: {path} (tids {first:,}..{end - 1:,}): violations "
                  "holding a row of this batch")  # fmt: skip
        print(_text_report(res, _width()))
        if res.output in ("pairs", "blocks"):
            _print_pairs_text(res, sys.stdout)
        elif res.output in ROWS:
            _print_rows_text(res, sys.stdout)
        print(flush=True)

    report("base", args.data, det.initial, 0, det.rows)
    for k, batch in enumerate(args.append, 1):
        first = det.rows
        with _shown(args):
            res = det.append(batch, output=args.output, timeout=args.timeout, progress=_display)
        if args.sort:
            res.sort_output()
        report(f"batch {k}", batch, res, first, det.rows)
    totals = det.totals()
    if args.format == "json":
        doc = {"base": reports[0], "batches": reports[1:], "totals": totals}
        sys.stdout.write(json.dumps(doc))
        sys.stdout.write("\n")
    else:
        per_dc = ", ".join(f"DC {d['id']}: {d['violations']:,}" for d in totals["dcs"])
        print(
            f"== totals: {totals['rows']:,} rows after {totals['batches']} batch(es), "
            f"{totals['total_violations']:,} violations ({per_dc})"
        )
    sys.stdout.flush()
    if totals["total_violations"] and not args.exit_zero:
        return EXIT_VIOLATIONS
    return EXIT_CLEAN


def _full_dict(result: Any) -> dict[str, Any]:
    """``result.to_dict()`` with its kept output: row tables as lists of records,
    pairs / blocks per DC (as ``_write_json`` writes them)."""
    doc = result.to_dict()
    kind = result.output
    if kind in ROWS:
        doc[kind] = _row_table(result).to_pylist()
    elif kind in ("pairs", "blocks"):
        listed = dict(_listed(result))
        cols = (1, 2) if kind == "pairs" else (2, 3)
        for entry in doc["dcs"]:
            entry[kind] = [
                list(row)
                for batch in listed.get(entry["id"], ())
                for row in zip(
                    batch.column(cols[0]).to_pylist(),
                    batch.column(cols[1]).to_pylist(),
                    strict=True,
                )  # fmt: skip
            ]
    return doc


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the interpreter next runs so that writers abort
    (no half-written output is left) as on Ctrl-C."""

    code = 143
    word = "terminated"


class HungUp(Terminated):
    """SIGHUP (the terminal closed): stops the run as SIGTERM does."""

    code = 129
    word = "hung up"


#: the interruption a signal handler of :func:`main` raised, kept in case C code
#: that was running replaces it with an error of its own (CPython's import
#: machinery can turn a pending exception into "TypeError: expected a message
#: argument"), so that it still exits 143 / 130 and not as an internal error
_signalled: list[KeyboardInterrupt] = []


def _on_sigterm(signum, frame) -> None:
    _signalled.append(HungUp() if signum == getattr(signal, "SIGHUP", None) else Terminated())
    raise _signalled[-1]


def _on_sigint(signum, frame) -> None:
    _signalled.append(KeyboardInterrupt())
    raise _signalled[-1]


def _interruption(err: BaseException) -> KeyboardInterrupt | DeadlineExceeded | None:
    """The Ctrl-C / SIGTERM / ``--timeout`` behind ``err``: a signal handler
    that raises while a numba kernel returns surfaces as a ``SystemError`` whose
    context is it."""
    from facet.progress import DeadlineExceeded

    seen = 0
    e: BaseException | None = err
    while e is not None and seen < 10:
        if isinstance(e, KeyboardInterrupt | DeadlineExceeded):
            return e
        e = e.__cause__ or e.__context__
        seen += 1
    return _signalled[-1] if _signalled else None


#: whether the run was stopped (a signal, ``--timeout``): its workers may still be
#: in a kernel, and the process does not wait for them
_stopped: list[bool] = []


def _timed_out(err: DeadlineExceeded) -> int:
    _stopped.append(True)
    print(
        f"{PROG}: error: --timeout: {err}; the run was stopped and nothing was written",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


def main(argv: list[str] | None = None, *, process: bool = False) -> int:
    """The ``facet`` command line; returns its exit code (README, "Exit codes, errors, limits and progress")."""
    _signalled.clear()
    _stopped.clear()
    started = COMMAND_STARTED.set(time.monotonic())  # --timeout counts from here
    try:
        return _signal_handled_main(argv, process)
    finally:
        COMMAND_STARTED.reset(started)


def _signal_handled_main(argv: list[str] | None, process: bool) -> int:
    """:func:`_main` with the stopping signals handled (on the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return _main(argv)
    from facet.sinks.publish import BEFORE_PUBLISH

    previous = {s: signal.getsignal(s) for s in _STOPPING}
    signal.signal(signal.SIGTERM, _on_sigterm)
    if previous[signal.SIGINT] is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
    hup = getattr(signal, "SIGHUP", None)
    if hup is not None and previous[hup] is signal.SIG_DFL:  # (nohup ignores it: kept)
        signal.signal(hup, _on_sigterm)
    BEFORE_PUBLISH.append(_ignore_signals)
    try:
        return _main(argv)
    finally:
        BEFORE_PUBLISH.remove(_ignore_signals)
        if not process:  # a process of its own (entry) exits ignoring them
            for s, handler in previous.items():
                signal.signal(s, handler)


#: the signals that stop a run (each leaving no ``--out`` file)
_STOPPING = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def _ignore_signals() -> None:
    """From the moment an ``--out`` file is renamed into place, the run is
    finished: a SIGINT/SIGTERM/SIGHUP then (one pending is dropped too) no
    longer stops it, so an exit code of 129/130/143 always means no file was
    written (the handlers come back when :func:`main` returns, unless it is
    the process's own)."""
    if threading.current_thread() is threading.main_thread():
        for s in _STOPPING:
            signal.signal(s, signal.SIG_IGN)


def _texts_as_utf8(args: argparse.Namespace) -> None:
    """``--dc`` and ``--where`` texts as the UTF-8 they were typed in: a C locale
    without UTF-8 mode hands non-ASCII arguments over as escaped bytes (paths stay
    so: the file system takes them back)."""

    def utf8(text: str) -> str:
        try:
            return os.fsencode(text).decode("utf-8")
        except (UnicodeError, ValueError):
            return text

    if getattr(args, "dc", None):
        args.dc = [utf8(t) for t in args.dc]
    if getattr(args, "where", None):
        args.where = utf8(args.where)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _warned.clear()
    debug = "--debug" in argv
    try:
        parser = build_parser()
        _parsing[:] = argv
        args = parser.parse_args(argv)
        _texts_as_utf8(args)
        if args.command is None:
            raise FacetInputError(
                "no command; use 'facet detect', 'facet explain' or 'facet report' "
                "('facet --help' lists them)"
            )
        if args.command == "detect":
            return run_detect(args)
        if args.command == "explain":
            return run_explain(args)
        if args.command == "report":
            return run_report(args)
        raise FacetInputError(f"unknown command '{args.command}'")
    except FacetInputError as err:
        if debug:
            traceback.print_exc()
        notes = "".join(f" ({n})" for n in getattr(err, "__notes__", ()))  # more bad DC lines
        print(f"{PROG}: error: {err}{notes}", file=sys.stderr)
        if err.detail and _stderr_is_terminal():  # the DC and a caret, for a person
            print(err.detail, file=sys.stderr)
        return EXIT_BAD_INPUT
    except EngineError as err:  # the engine failed on a sound input: what to try
        if debug:
            traceback.print_exc()
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return EXIT_INTERNAL
    except Terminated as err:
        _stopped.append(True)
        print(f"{PROG}: {err.word}", file=sys.stderr)
        return err.code
    except KeyboardInterrupt:
        _stopped.append(True)
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except SystemExit as err:  # --help / --version
        return int(err.code or 0) if isinstance(err.code, int) else EXIT_CLEAN
    except MemoryError:
        if debug:
            traceback.print_exc()
        print(
            f"{PROG}: error: out of memory; check fewer DCs at once or fewer rows, and stream "
            "pairs or blocks with --out FILE",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    except Exception as err:  # noqa: BLE001 - the CLI's last line of defence
        signal_exc = _interruption(err)  # also the --timeout deadline, raised or from a kernel
        if signal_exc is not None and not isinstance(signal_exc, KeyboardInterrupt):
            if debug:
                traceback.print_exc()
            return _timed_out(signal_exc)
        if signal_exc is not None:  # a signal that arrived inside a compiled kernel's call
            _stopped.append(True)
            if isinstance(signal_exc, Terminated):
                print(f"{PROG}: {signal_exc.word}", file=sys.stderr)
                return signal_exc.code
            print(f"{PROG}: interrupted", file=sys.stderr)
            return 130
        if debug:
            traceback.print_exc()
        from facet.engine.spark import spark_failure, task_input_error

        message = task_input_error(err)
        if message is not None:  # bad input found inside a Spark task (explain, say)
            print(f"{PROG}: error: {message}", file=sys.stderr)
            return EXIT_BAD_INPUT
        failure = spark_failure(err)
        if failure is not None:  # the engine failed outside a run (writing its report, say)
            print(f"{PROG}: error: {failure}", file=sys.stderr)
            return EXIT_INTERNAL
        malformed = _malformed_record(err)
        if malformed is not None:  # a later Spark action than the table's first read
            data = getattr(args, "data", None) if "args" in locals() else None
            where = f"{data}: " if data else ""
            print(
                f"{PROG}: error: {where}a CSV record does not match the header ({malformed}); "
                "fix the file (facet --engine local names the line)",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        if isinstance(err, OSError) and err.errno in _NO_ROOM:  # stdout on a full disk
            print(_no_room(err), file=sys.stderr)
            return EXIT_BAD_INPUT
        refused = _resource_refused(err)
        if refused is not None:  # (a ulimit -v, or the memory exhausted)
            print(
                f"{PROG}: error: {refused} ({type(err).__name__}: {_first_line(err)[:200]}); "
                "raise the process's limits (ulimit -v, -u) or free memory",
                file=sys.stderr,
            )
            return EXIT_INTERNAL
        msg = str(err).splitlines()[0] if str(err) else ""
        print(
            f"{PROG}: internal error: {type(err).__name__}: {msg} "
            "(rerun with --debug for a traceback and report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _first_line(err: BaseException) -> str:
    return str(err).splitlines()[0] if str(err) else ""


def _resource_refused(err: BaseException) -> str | None:
    """What the system refused, when ``err`` is a thread, memory or shared library
    it would not give (the libraries' own words for a process limit reached)."""
    text = _first_line(err).lower()
    if "can't start new thread" in text or "failed to launch worker thread" in text:
        return "the system refused a new thread"
    if isinstance(err, OSError) and err.errno in (errno.ENOMEM, errno.EAGAIN):
        return "the system refused memory"
    if "out of memory" in text or "cannot allocate memory" in text:
        return "the system refused memory"
    if "could not find/load shared object" in text or "failed to map segment" in text:
        return "a shared library did not load (a memory limit, or a broken install: reinstall)"
    return None


#: a write that found no room: the disk or the quota is full, or the file too large
_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def _no_room(err: OSError) -> str:
    """A full stdout (an ``--out`` file that finds no room says so itself)."""
    return (
        f"{PROG}: error: cannot write to stdout: {err.strerror}; free some space, or "
        "write the output to a file elsewhere (--out FILE)"
    )


def _malformed_record(err: BaseException) -> str | None:
    """Spark's refusal of a CSV record, if ``err`` is one (pyspark is imported
    only when it is loaded already)."""
    if "facet.engine.spark.table" not in sys.modules:
        return None
    from facet.engine.spark.table import malformed_record

    return malformed_record(err)


def _skip_unused_imports(argv: list[str]) -> None:
    """Keep pandas and scipy out of a local-engine ``facet`` process.

    Neither is used there, yet each costs a sixth of a second when installed:
    pyarrow imports pandas on the first array it builds (to check whether the
    input is a pandas object) and numba imports scipy's BLAS at start-up. Only
    for the command (``entry``), never for ``main()`` called in a process that
    may want them; the Spark engine keeps both (pyspark's Arrow exchange uses
    pandas)."""
    if "spark" in argv or any(a.startswith("--engine=spark") for a in argv):
        return
    import importlib.abc

    skip = {name for name in ("pandas", "scipy") if name not in sys.modules}

    class _Skip(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
            if name.partition(".")[0] in skip:
                raise ModuleNotFoundError(f"{name} is not used by facet's command", name=name)

    sys.meta_path.insert(0, _Skip())


class _Unfailing:
    """stderr that never fails the run: a warning or an error line that cannot be
    written (a full disk under ``2>log``) is lost, and the exit code stays the
    run's (an ``OSError`` there made a clean run exit 1)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except (OSError, ValueError):
            return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _standard_streams() -> None:
    """The process's stdout and stderr made safe to write: text that the stream's
    encoding cannot hold is escaped (``PYTHONIOENCODING=ascii``), a stdout closed
    before the start (``>&-``) discards what is printed, and stderr never fails."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")
    sys.stderr = _Unfailing(sys.stderr if sys.stderr is not None else open(os.devnull, "w"))  # noqa: SIM115


def entry() -> None:
    """The ``facet`` command (and ``python -m facet``): :func:`main` in a process
    of its own."""
    argv = sys.argv[1:]
    _standard_streams()
    _skip_unused_imports(argv)
    code = main(argv, process=True)
    _ignore_signals()  # the outcome is decided: a late signal does not change the exit code
    try:
        sys.stdout.flush()  # what is still buffered, here rather than at exit
    except BrokenPipeError:
        pass
    except OSError as err:
        if err.errno not in _NO_ROOM:
            raise
        print(_no_room(err), file=sys.stderr)
        code = EXIT_BAD_INPUT
    if _stopped:
        # worker threads may be inside a long kernel call that cannot be interrupted
        # (a refinement of millions of tids): the interpreter would wait for them
        # at exit (the stop came tens of seconds late); the outputs are removed
        # already, so run the exit handlers (the JVM log, Spark) and leave now
        import atexit

        sys.stderr.flush()
        atexit._run_exitfuncs()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
