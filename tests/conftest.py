"""Test-wide setup: hypothesis profiles and the pure-Python kernel mode.

* ``HYPOTHESIS_PROFILE`` picks a hypothesis profile: ``default`` (hypothesis's own
  defaults; every test sets its own example count) or ``coverage``, for
  ``scripts/kernel_coverage.sh``: kernels run as plain Python there
  (``NUMBA_DISABLE_JIT=1``, ~100-1000x slower), so property tests scale their example
  counts down with :func:`tests.strategies.examples`, and the run is derandomized
  (the same examples, so the same coverage, every run).
* With ``NUMBA_DISABLE_JIT=1`` the numba intrinsic ``trailing_zeros`` used by the
  IEJoin kernel cannot be called from Python; it is replaced by its pure-Python
  equivalent, and numpy's scalar overflow warnings (the hashes wrap around on purpose,
  as they do compiled) are silenced.
* No test may skip: every test runs in a fresh clone (data comes from ``data/``, tools
  from the dev extra).  A skipped test fails the session.
* ``tests/repair`` runs Raha/Baran, which need the repair extra (raha, pandas < 3)
  that the dev environment (pandas 3) cannot hold: ``scripts/test.sh`` runs it in
  ``.venv-repair`` after the main suite, so the main session leaves it out where
  raha is not installed.
"""

from __future__ import annotations

import importlib.util
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "coverage",
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

collect_ignore = [] if importlib.util.find_spec("raha") else ["repair"]

JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")

if JIT_DISABLED:
    import facet.kernels.iejoin as _iejoin

    def _trailing_zeros(x) -> int:
        """Index of the lowest set bit of a non-zero word (numba's intrinsic)."""
        v = int(x)
        return (v & -v).bit_length() - 1

    _iejoin.trailing_zeros = _trailing_zeros


def pytest_configure(config):
    if JIT_DISABLED:
        config.addinivalue_line("filterwarnings", "ignore:overflow encountered:RuntimeWarning")


_SKIPPED: list[str] = []


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPPED.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _SKIPPED and exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    if _SKIPPED:
        terminalreporter.write_line(
            f"FAILED: {len(_SKIPPED)} test(s) skipped; every test must run "
            f"(tests/conftest.py): {', '.join(_SKIPPED[:5])}",
            red=True,
        )


@pytest.fixture(scope="session")
def spark():
    """One ``local[2]`` SparkSession for the test run (the Spark engine's tests and
    the engine suite's Spark runs); executors run this interpreter."""
    from facet.engine.spark.connect import spark_session

    session = spark_session("local[2]")
    yield session
    session.stop()
