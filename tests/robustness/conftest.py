"""Start the robustness suite's CLI runs in the background once collection ends, so that
the interpreter starts they cost overlap the in-process API tests (tests/robustness/harness.py)."""

from __future__ import annotations

import pytest

from tests.robustness.harness import REGISTRY, start_cli_runs, stop_cli_runs


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    modules = dict.fromkeys(
        item.module.__name__
        for item in session.items
        if isinstance(item, pytest.Function) and item.module.__name__ in REGISTRY
    )
    for module in modules:
        start_cli_runs(module)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    stop_cli_runs()
