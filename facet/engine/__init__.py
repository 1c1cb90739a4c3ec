"""Engines: what executes plans (docs/architecture.md "Engine").

``ENGINES`` names every engine facet can run; :func:`create_engine` builds one
over an encoded table.  All implement :class:`facet.engine.base.Engine`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from facet.encoding import EncodedTable
    from facet.engine.base import Engine
    from facet.planner.config import Config

#: engine name -> "module:class"
ENGINES = {
    "local": "facet.engine.local:LocalEngine",
    "spark": "facet.engine.spark.engine:SparkEngine",
}


def create_engine(name: str, enc: EncodedTable, config: Config) -> Engine:
    """The engine ``name`` over ``enc``."""
    import importlib

    module, cls = ENGINES[name].split(":")
    return getattr(importlib.import_module(module), cls)(enc, config)
