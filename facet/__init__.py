"""facet: exact, fast detection of denial-constraint violations (FACET, PVLDB 2022).

>>> import facet
>>> res = facet.detect("data/tax/tax_dirty_0010k.csv", dcs=["zip -> city"])
>>> res.dcs[0].violations
40552

Names are imported when first used, so ``import facet`` (and the command
line's start) stays cheap.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

# pyarrow allocates through mimalloc, which by default commits each new arena up
# front; where fresh memory is slow to touch first (a VM's 2 MiB pages) that stalled
# a run's Arrow allocations 4-15 ms in about one process of three (docs/architecture.md,
# ``memory.py``).  Read when pyarrow loads, so set before it does; a user's setting wins.
os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")

__version__ = "0.1.0"

#: public name -> the module that defines it
_EXPORTS = {
    "detect": "facet.api",
    "Detector": "facet.detector",
    "explain": "facet.api",
    "load_dcs": "facet.api",
    "DCSyntaxError": "facet.errors",
    "EngineError": "facet.errors",
    "FacetError": "facet.errors",
    "FacetInputError": "facet.errors",
    "FacetWarning": "facet.errors",
    "DC": "facet.language",
    "parse_dc": "facet.language",
    "parse_rules": "facet.language",
    "read_rules": "facet.language",
    "DCResult": "facet.result",
    "Result": "facet.result",
    "Config": "facet.planner.config",
}

__all__ = [
    "DC",
    "Config",
    "DCResult",
    "DCSyntaxError",
    "Detector",
    "EngineError",
    "FacetError",
    "FacetInputError",
    "FacetWarning",
    "Result",
    "detect",
    "explain",
    "load_dcs",
    "parse_dc",
    "parse_rules",
    "read_rules",
]

if TYPE_CHECKING:
    from facet.api import detect, explain, load_dcs
    from facet.detector import Detector
    from facet.errors import (
        DCSyntaxError,
        EngineError,
        FacetError,
        FacetInputError,
        FacetWarning,
    )
    from facet.language import DC, parse_dc, parse_rules, read_rules
    from facet.planner.config import Config
    from facet.result import DCResult, Result


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'facet' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
