"""Error types and their exit codes (docs/semantics.md §9).

They live at the bottom of the layers (beside the DC language, which raises
:class:`DCSyntaxError`) so that every layer -- kernels aside -- can raise them
without importing upwards; :mod:`facet.errors` re-exports them.

Every problem a user can fix (bad rules, bad data, bad options) raises a
:class:`FacetInputError`; the CLI prints its one-line ``str()`` and exits 2.
Anything else is an internal failure (exit 3).
"""

from __future__ import annotations

import sys
import unicodedata
import warnings

EXIT_CLEAN = 0
EXIT_VIOLATIONS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


#: characters that :meth:`str.splitlines` breaks lines at, and their escapes
_LINE_BREAKS = {ch: repr(ch)[1:-1] for ch in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}
_LINE_BREAK_TABLE = str.maketrans(_LINE_BREAKS)


def one_line(text: str) -> str:
    """``text`` with its line breaks escaped (``\\n``): an error message stays one line
    even when it quotes a file name or a column name that holds a line break."""
    return text.translate(_LINE_BREAK_TABLE)


def displayable(text: str) -> str:
    """``text`` with one printable character per character, for a caret line: tabs and
    other whitespace controls become spaces; other control and format characters
    (a zero-width space, a bidi override) become a visible ``?``."""
    out = []
    for ch in text:
        if ch == " " or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp"):
            out.append(ch)
        else:
            out.append(" " if ch.isspace() else "?")
    return "".join(out)


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
        message = one_line(message)
        super().__init__(message)
        self.message = message
        self.detail = detail

    def __str__(self) -> str:
        return self.message


class EngineError(FacetError):
    """The engine failed on a sound input (Spark's JVM out of memory, say): exit 3.
    ``str(err)`` is one line naming the failure and what to try."""

    exit_code = EXIT_INTERNAL

    def __init__(self, message: str) -> None:
        message = one_line(message)
        super().__init__(message)
        self.message = message

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
            detail = f"  {displayable(text)}\n  {' ' * max(column - 1, 0)}^"
        super().__init__(f"{source}:{line}:{column}: {message}", detail)


class DataError(FacetInputError):
    """Data that cannot be read or typed as the rules need (exit code 2)."""


class FacetWarning(UserWarning):
    """Something about the answer a run gives (values read as NULL, a column that
    compares as numbers or as text): :func:`facet.detect`, :func:`facet.explain`
    and :class:`facet.Detector` issue each through Python's :mod:`warnings`
    (unless given ``on_warning``) and keep it in ``result.warnings``; the command
    line prints it as ``facet: warning: ...``."""


def warn(message: str) -> None:
    """Issue ``message`` as a :class:`FacetWarning` attributed to the first caller
    outside facet (the user's call), so that Python's default filter shows each
    distinct message once per place it is called from."""
    level = 2
    frame = sys._getframe(1)
    while frame is not None and _in_facet(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
        level += 1
    warnings.warn(message, FacetWarning, stacklevel=level)


def _in_facet(module: str) -> bool:
    return module == "facet" or module.startswith("facet.")
