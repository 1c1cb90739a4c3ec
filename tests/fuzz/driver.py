"""Runs a fuzz target: a few examples in the default test run, or rounds with fresh
seeds until a time budget is spent (docs/fuzzing.md).

``FACET_FUZZ_SECONDS=N`` gives the whole fuzz run ``N`` seconds, shared among the
targets by their ``share``; ``FACET_FUZZ_REPORT=PATH`` appends each target's statistics
to ``PATH`` as JSON lines.  A known crash (an xfail test elsewhere names it) is counted,
not failed, so that a long run goes on looking for new ones.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TOTAL_SECONDS = float(os.environ.get("FACET_FUZZ_SECONDS", "0") or 0)
REPORT = os.environ.get("FACET_FUZZ_REPORT")
#: examples per round of a long run (each round draws a fresh seed)
ROUND = 200

_HEALTH = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.large_base_example,
]


@dataclass
class Stats:
    examples: int = 0
    rounds: int = 0
    seconds: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)


STATS: dict[str, Stats] = {}


@dataclass(frozen=True)
class Known:
    """A crash already reported: an exception type name and a message pattern."""

    type_name: str
    message: str  # a regular expression searched in str(exc)
    xfail: str  # the xfail test that pins it

    def matches(self, exc: BaseException) -> bool:
        return (
            type(exc).__name__ == self.type_name and re.search(self.message, str(exc)) is not None
        )


def known_issue(exc: BaseException, known: list[Known]) -> Known | None:
    return next((k for k in known if k.matches(exc)), None)


def drive(
    name: str,
    body: Callable[..., Any],
    strategies: dict[str, st.SearchStrategy[Any]],
    *,
    examples: int,
    share: float,
) -> Stats:
    """Run ``body`` under ``given(**strategies)``: ``examples`` examples, or, with
    ``FACET_FUZZ_SECONDS``, rounds of :data:`ROUND` examples until ``share`` of the
    budget is spent.  ``body`` counts its own outcomes in the returned :class:`Stats`."""
    stats = STATS.setdefault(name, Stats())
    long_run = TOTAL_SECONDS > 0
    deadline = time.monotonic() + TOTAL_SECONDS * share
    start = time.monotonic()

    def counted(**kw: Any) -> None:
        stats.examples += 1
        body(stats, **kw)

    try:
        while True:
            run = settings(
                max_examples=ROUND if long_run else examples,
                deadline=None,
                database=None,
                derandomize=not long_run,  # the default run is the same every time
                suppress_health_check=_HEALTH,
                print_blob=True,
            )(given(**strategies)(counted))
            run()
            stats.rounds += 1
            if not long_run or time.monotonic() >= deadline:
                return stats
    finally:
        stats.seconds += time.monotonic() - start
        if REPORT:
            with open(REPORT, "a", encoding="utf-8") as f:
                doc = {"target": name, "examples": stats.examples, "rounds": stats.rounds}
                doc |= {"seconds": round(stats.seconds, 1), "outcomes": dict(stats.outcomes)}
                f.write(json.dumps(doc) + "\n")
