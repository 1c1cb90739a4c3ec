"""Putting a finished output file in place (docs/semantics.md §9: after exit
codes 2, 3, 130 and 143 no ``--out`` file is left behind).

Kept apart from :mod:`facet.sinks.files` so that the command line can hook it
without importing Arrow.
"""

from __future__ import annotations

import os
from collections.abc import Callable

#: called just before a finished file is renamed into place: the command line
#: stops taking SIGINT/SIGTERM there (a file in place is a finished run, and its
#: exit code says so; ``cli.main``)
BEFORE_PUBLISH: list[Callable[[], None]] = []


def publish(tmp: str, path: str) -> None:
    """Rename the finished temporary file ``tmp`` into place as ``path``."""
    for hook in BEFORE_PUBLISH:
        hook()
    os.replace(tmp, path)
