"""facet's error types and exit codes (docs/semantics.md §9); defined in
:mod:`facet.language.errors`, the bottom layer, so that every layer can raise them."""

from facet.language.errors import (
    EXIT_BAD_INPUT,
    EXIT_CLEAN,
    EXIT_INTERNAL,
    EXIT_VIOLATIONS,
    DataError,
    DCSyntaxError,
    EngineError,
    FacetError,
    FacetInputError,
    FacetWarning,
)

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_CLEAN",
    "EXIT_INTERNAL",
    "EXIT_VIOLATIONS",
    "DCSyntaxError",
    "DataError",
    "EngineError",
    "FacetError",
    "FacetInputError",
    "FacetWarning",
]
