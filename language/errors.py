"""Error types and their exit codes (docs/semantics.md §9).

They live at the bottom of the layers (beside the DC language, which raises
:class:`DCSyntaxError`) so that every layer -- kernels aside -- can raise them
without importing upwards; :mod:`facet.errors` re-exports them.

Every problem a user can fix (bad rules, bad data, bad options) raises a
:class:`FacetInputError`; the CLI prints its one-line ``str()`` and exits 2.
Anything else is an internal failure (exit 3).
"""

from __future__ import annotations

EXIT_CLEAN = 0
EXIT_VIOLATIONS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


class FacetError(Exception):
    """Base class of facet's own errors."""

    exit_code = EXIT_INTERNAL


class FacetInputError(FacetError):
    """Bad usage, bad rules or bad data: the user can fix it (exit code 2).

    ``str(err)`` is one line naming what is wrong, where, and how to fix it;
    ``detail`` is optional extra context (for example a caret line) shown below.
    """

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail

    def __str__(self) -> str:
        return self.message


class DCSyntaxError(FacetInputError):
    """A denial constraint that does not parse; names file, line and column."""

    def __init__(
        self,
        message: str,
        *,
        source: str = "<dc>",
        line: int = 1,
        column: int = 1,
        text: str | None = None,
    ) -> None:
        self.reason = message
        self.source = source
        self.line = line
        self.column = column
        self.text = text
        detail = None
        if text is not None:
            shown = text.replace("\t", " ")
            detail = f"  {shown}\n  {' ' * max(column - 1, 0)}^"
        super().__init__(f"{source}:{line}:{column}: {message}", detail)


class DataError(FacetInputError):
    """Data that cannot be read or typed as the rules need (exit code 2)."""
