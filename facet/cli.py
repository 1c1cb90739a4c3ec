"""The ``facet`` command line (docs/semantics.md §7, §9).

Exit codes: 0 no violations, 1 violations found, 2 bad usage / rules / data,
3 internal failure.  Errors are one line on stderr (plus a caret line for DC
syntax errors); tracebacks only with ``--debug``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import traceback
from typing import Any

from facet.engine import ENGINES
from facet.errors import (
    EXIT_BAD_INPUT,
    EXIT_CLEAN,
    EXIT_INTERNAL,
    EXIT_VIOLATIONS,
    FacetInputError,
)

PROG = "facet"


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise FacetInputError(f"{message} (see '{self.prog} --help')")


def _nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {v}")
    return v


def build_parser() -> argparse.ArgumentParser:
    from facet import __version__

    p = _Parser(
        prog=PROG,
        description="Find every violation of denial constraints in a table, exactly and fast.",
    )
    p.add_argument("--version", action="version", version=f"facet {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    d = sub.add_parser(
        "detect",
        help="count (and list) the violations of denial constraints",
        description="Count, and optionally list, the violations of denial constraints in DATA "
        "(CSV, Parquet or Arrow IPC).",
    )
    d.add_argument("data", metavar="DATA", help="table to check: .csv, .parquet or .arrow file")
    d.add_argument(
        "--rules",
        "-r",
        action="append",
        default=[],
        metavar="FILE",
        help="rules file, one DC per line (repeatable)",
    )
    d.add_argument(
        "--dc",
        action="append",
        default=[],
        metavar="TEXT",
        help="a DC given inline, e.g. \"not(t.zip = t'.zip and t.city != t'.city)\" or "
        "'zip -> city' (repeatable; numbered after the rules file's DCs)",
    )
    d.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    d.add_argument(
        "--output",
        choices=("count", "pairs", "blocks"),
        default="count",
        help="count only (default), the violating pairs, or the compact blocks (pairs of tid sets)",
    )
    d.add_argument(
        "--out",
        metavar="PATH",
        help="write pairs/blocks to PATH (.parquet, .csv or .arrow); with --output count, "
        "the per-DC counts (.json, .parquet, .csv)",
    )
    d.add_argument("--limit", type=_nonneg_int, metavar="N", help="at most N pairs (blocks) per DC")
    d.add_argument(
        "--schema",
        metavar="COL:TYPE,...",
        help="override CSV typing, e.g. 'zip:text,salary:int' "
        "(types: int, float, number, text, timestamp)",
    )
    d.add_argument(
        "--engine", choices=tuple(ENGINES), default="local", help="engine that runs the plans"
    )
    d.add_argument(
        "--mode",
        choices=("sequential", "parallel", "cost-trie", "freq-trie"),
        default="sequential",
        help="how several DCs run: one by one, on parallel threads, or sharing refinement "
        "prefixes in a trie (cost- or frequency-ordered); answers are the same",
    )
    d.add_argument("--exit-zero", action="store_true", help="exit 0 even when violations are found")
    d.add_argument("--debug", action="store_true", help="show tracebacks on errors")

    e = sub.add_parser(
        "explain",
        help="show the plan facet will run for each DC",
        description="Show, for every DC, its stages in order: predicate, algorithm, tid "
        "storage, estimated cardinality and pairs; --analyze runs the plan and adds actual "
        "sizes and seconds per stage.",
    )
    e.add_argument("data", metavar="DATA", help="table: .csv, .parquet or .arrow file")
    e.add_argument("--rules", "-r", action="append", default=[], metavar="FILE")
    e.add_argument("--dc", action="append", default=[], metavar="TEXT")
    e.add_argument("--format", choices=("text", "json"), default="text")
    e.add_argument(
        "--output",
        choices=("count", "pairs", "blocks"),
        default="count",
        help="the sink to plan for (counting refines only the equalities)",
    )
    e.add_argument("--analyze", action="store_true", help="run the plan and report actuals")
    e.add_argument(
        "--engine", choices=tuple(ENGINES), default="local", help="engine that runs the plans"
    )
    e.add_argument("--schema", metavar="COL:TYPE,...")
    e.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return p


def _print_pairs_text(result: Any, out: Any) -> None:
    kind = result.output
    table = result.pairs() if kind == "pairs" else result.blocks()
    print("", file=out)
    if kind == "pairs":
        print("dc,t1,t2", file=out)
        for batch in table.to_batches():
            dcs = batch.column(0).to_pylist()
            t1 = batch.column(1).to_pylist()
            t2 = batch.column(2).to_pylist()
            for a, b, c in zip(dcs, t1, t2, strict=True):
                print(f"{a},{b},{'' if c is None else c}", file=out)
    else:
        print("dc,block,t1,t2", file=out)
        for row in table.to_pylist():
            t2 = "" if row["t2"] is None else " ".join(map(str, row["t2"]))
            print(f"{row['dc']},{row['block']},{' '.join(map(str, row['t1']))},{t2}", file=out)


def _json_doc(result: Any) -> dict[str, Any]:
    doc = result.to_dict()
    if result.output in ("pairs", "blocks") and result.out is None:
        table = result.pairs() if result.output == "pairs" else result.blocks()
        by_dc: dict[int, list[Any]] = {d["id"]: [] for d in doc["dcs"]}
        for row in table.to_pylist():
            if result.output == "pairs":
                by_dc[row["dc"]].append([row["t1"], row["t2"]])
            else:
                by_dc[row["dc"]].append([row["t1"], row["t2"]])
        for d in doc["dcs"]:
            d[result.output] = by_dc[d["id"]]
    return doc


def _warn(msg: str) -> None:
    print(f"{PROG}: warning: {msg}", file=sys.stderr)


def _rules(args: argparse.Namespace) -> list[Any]:
    from facet.language.parser import read_rules

    if not args.rules and not args.dc:
        raise FacetInputError("no denial constraints given; pass --rules FILE or --dc TEXT")
    rules: list[Any] = []
    for path in args.rules:
        rules.extend(read_rules(path))
    return rules


def run_explain(args: argparse.Namespace) -> int:
    from facet.api import explain
    from facet.planner.explain import render_text

    doc = explain(
        args.data,
        _rules(args) or None,
        dcs=args.dc,
        output=args.output,
        analyze=args.analyze,
        schema=args.schema,
        on_warning=_warn,
        engine=args.engine,
    )
    if args.format == "json":
        sys.stdout.write(json.dumps(doc) + "\n")
    else:
        print(render_text(doc))
    return EXIT_CLEAN


def run_detect(args: argparse.Namespace) -> int:
    from facet.api import detect

    rules = _rules(args)

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
    )
    if args.format == "json":
        sys.stdout.write(json.dumps(_json_doc(result)) + "\n")
    else:
        print(result.to_text())
        if result.output in ("pairs", "blocks") and result.out is None:
            _print_pairs_text(result, sys.stdout)
    sys.stdout.flush()
    if result.total_violations and not args.exit_zero:
        return EXIT_VIOLATIONS
    return EXIT_CLEAN


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the interpreter next runs so that writers abort
    (no half-written output is left) as on Ctrl-C."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


def _interruption(err: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C / SIGTERM behind ``err``: a signal handler that raises while a
    numba kernel returns surfaces as a ``SystemError`` whose context is it."""
    seen = 0
    e: BaseException | None = err
    while e is not None and seen < 10:
        if isinstance(e, KeyboardInterrupt):
            return e
        e = e.__cause__ or e.__context__
        seen += 1
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    debug = "--debug" in argv
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return EXIT_BAD_INPUT
        if args.command == "detect":
            return run_detect(args)
        if args.command == "explain":
            return run_explain(args)
        raise FacetInputError(f"unknown command '{args.command}'")
    except FacetInputError as err:
        if debug:
            traceback.print_exc()
        print(f"{PROG}: error: {err}", file=sys.stderr)
        if err.detail:
            print(err.detail, file=sys.stderr)
        return EXIT_BAD_INPUT
    except Terminated:
        print(f"{PROG}: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except SystemExit as err:  # --help / --version
        return int(err.code or 0) if isinstance(err.code, int) else EXIT_CLEAN
    except MemoryError:
        if debug:
            traceback.print_exc()
        print(f"{PROG}: error: out of memory; try fewer DCs at once or --limit", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as err:  # noqa: BLE001 - the CLI's last line of defence
        signal_exc = _interruption(err)
        if signal_exc is not None:  # a signal that arrived inside a compiled kernel's call
            terminated = isinstance(signal_exc, Terminated)
            print(f"{PROG}: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
            return 143 if terminated else 130
        if debug:
            traceback.print_exc()
        msg = str(err).splitlines()[0] if str(err) else ""
        print(
            f"{PROG}: internal error: {type(err).__name__}: {msg} "
            "(rerun with --debug for a traceback and report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
