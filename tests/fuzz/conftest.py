"""Prints what each fuzz target ran (tests/fuzz/driver.py) at the end of the session."""

from __future__ import annotations

from tests.fuzz.driver import STATS, TOTAL_SECONDS


def pytest_terminal_summary(terminalreporter) -> None:
    if not STATS:
        return
    mode = f"long run, {TOTAL_SECONDS:g} s" if TOTAL_SECONDS else "default run"
    terminalreporter.section(f"fuzz ({mode})")
    for name, s in STATS.items():
        outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(s.outcomes.items()))
        terminalreporter.write_line(
            f"{name}: {s.examples} examples in {s.rounds} round(s), {s.seconds:.1f} s ({outcomes})"
        )
