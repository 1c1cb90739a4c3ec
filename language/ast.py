"""Denial constraints as data (docs/semantics.md §1, paper §3.1).

A DC is ``not(p1 and ... and pm)``; a predicate is ``X op Y`` where each
operand is a column of tuple ``t`` (index 0) or ``t'`` (index 1), or a
constant.  The classes here are immutable and compare by meaning only
(predicates and name), so a DC re-parsed from its :meth:`DC.canonical` text
equals the original.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

OPS: tuple[str, ...] = ("=", "!=", "<", "<=", ">", ">=")
ORDER_OPS = frozenset({"<", "<=", ">", ">="})

#: ``a op b``  <=>  ``b FLIP[op] a``
FLIP: dict[str, str] = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
#: ``not (a op b)``  <=>  ``a NEGATE[op] b`` (for non-NULL operands)
NEGATE: dict[str, str] = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}

TUPLE_NAMES = ("t", "t'")
_PLAIN_IDENT = re.compile(r"^[^\W\d]\w*$")


def quote_identifier(name: str) -> str:
    """Column name as DC text: bare when it is a plain identifier, else in backticks."""
    if _PLAIN_IDENT.fullmatch(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def quote_string(text: str) -> str:
    """String constant as DC text: double quotes, backslash escapes."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Col:
    """Column ``name`` of tuple ``tuple`` (0 = ``t``, 1 = ``t'``)."""

    tuple: int
    name: str

    def text(self) -> str:
        return f"{TUPLE_NAMES[self.tuple]}.{quote_identifier(self.name)}"

    def other_side(self) -> Col:
        return Col(1 - self.tuple, self.name)


@dataclass(frozen=True)
class Const:
    """A constant.  ``text`` is the unquoted string, or the number as written.

    The constant takes the type of the column it meets (docs/semantics.md §4.4); ``quoted``
    records whether it was written as a string literal.
    """

    text: str
    quoted: bool = False

    def as_text(self) -> str:
        return quote_string(self.text) if self.quoted else self.text


Operand = Col | Const


@dataclass(frozen=True)
class Predicate:
    """``left op right``."""

    left: Operand
    op: str
    right: Operand

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"unknown operator {self.op!r}")

    def text(self) -> str:
        return f"{_operand_text(self.left)} {self.op} {_operand_text(self.right)}"

    def columns(self) -> list[Col]:
        return [o for o in (self.left, self.right) if isinstance(o, Col)]

    def tuples(self) -> frozenset[int]:
        return frozenset(c.tuple for c in self.columns())

    def flipped(self) -> Predicate:
        """The same predicate written the other way round (``b FLIP[op] a``)."""
        return Predicate(self.right, FLIP[self.op], self.left)

    def swapped_tuples(self) -> Predicate:
        """The predicate with ``t`` and ``t'`` exchanged."""

        def sw(o: Operand) -> Operand:
            return o.other_side() if isinstance(o, Col) else o

        return Predicate(sw(self.left), self.op, sw(self.right))

    @property
    def is_order(self) -> bool:
        return self.op in ORDER_OPS


def _operand_text(o: Operand) -> str:
    return o.text() if isinstance(o, Col) else o.as_text()


@dataclass(frozen=True)
class DC:
    """A denial constraint ``not(p1 and ... and pm)`` with an optional name.

    ``source``/``line``/``text`` say where it came from (not part of equality).
    ``id`` is the 0-based position in the run (rules file order, then ``--dc``).
    """

    predicates: tuple[Predicate, ...]
    name: str | None = None
    source: str | None = field(default=None, compare=False)
    line: int | None = field(default=None, compare=False)
    text: str | None = field(default=None, compare=False)
    id: int | None = field(default=None, compare=False)

    @property
    def arity(self) -> int:
        """2 when both ``t`` and ``t'`` appear, else 1 (a single-tuple DC on ``t``)."""
        seen: set[int] = set()
        for p in self.predicates:
            seen |= p.tuples()
        return 2 if len(seen) == 2 else 1

    def columns(self) -> list[str]:
        """Distinct column names in order of first use."""
        out: dict[str, None] = {}
        for p in self.predicates:
            for c in p.columns():
                out.setdefault(c.name, None)
        return list(out)

    def body(self) -> str:
        return "not(" + " and ".join(p.text() for p in self.predicates) + ")"

    def canonical(self) -> str:
        """Text that re-parses to an equal DC (name prefix included when named)."""
        body = self.body()
        if self.name is None:
            return body
        return f"{quote_identifier(self.name)}: {body}"

    def with_id(self, i: int) -> DC:
        return DC(self.predicates, self.name, self.source, self.line, self.text, i)

    def where(self) -> str:
        """``file:line`` of the DC, or its id, for error messages."""
        if self.source is not None and self.line is not None:
            return f"{self.source}:{self.line}"
        if self.id is not None:
            return f"DC {self.id}"
        return "DC"

    def __str__(self) -> str:
        return self.canonical()
