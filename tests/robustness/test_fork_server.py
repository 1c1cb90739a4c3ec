"""The fork server (tests/robustness/forkserver.py) runs ``facet`` as the real executable
does: the same exit code, the same stderr and the same report, on a sample of the suite's
cases of every kind (DC syntax errors, data errors, warnings, stdin, argparse, --out).
``FACET_ROBUSTNESS_EXEC=1`` runs the whole suite through the real executable.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.robustness import (
    test_columns_and_types,
    test_dc_text,
    test_paths,
    test_rules_scale,
    test_tables,
)
from tests.robustness.harness import Case, CliRun, run_cli

SAMPLE = {
    test_dc_text: ("paper-tabs", "rules-not-utf8", "accepted-rules-from-stdin", "accepted-forms"),
    test_columns_and_types: ("unknown-leading-space", "parquet-order-on-string"),
    test_tables: ("not-utf8-used-column", "odd-names-csv"),
    test_paths: ("usage-unknown-option", "out-existing-file-kept-after-error", "data-directory"),
    test_rules_scale: ("500-dcs-one-bad-line",),
}
CASES = [c for mod, ids in SAMPLE.items() for c in mod.CASES if c.id in ids]


def _report(run: CliRun) -> object:
    """stdout without the timings: the JSON document's seconds, or the text as is."""
    try:
        doc = json.loads(run.stdout)
    except ValueError:
        return run.stdout

    def strip(x: object) -> object:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if "seconds" not in k}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return strip(doc)


def test_the_sample_covers_every_module() -> None:
    assert len(CASES) == sum(len(ids) for ids in SAMPLE.values())


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fork_server_runs_facet_as_the_executable_does(case: Case, tmp_path: Path) -> None:
    with ThreadPoolExecutor(2) as pool:
        forked = pool.submit(run_cli, case, tmp_path / "fork", exec_facet=False)
        executed = pool.submit(run_cli, case, tmp_path / "exec", exec_facet=True)
        a, b = forked.result(), executed.result()
    assert a.code == b.code
    assert a.stderr == b.stderr
    assert _report(a) == _report(b)
    assert a.out == b.out and a.leftovers == b.leftovers == []
