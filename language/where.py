"""Row conditions for scoped detection: ``--where EXPR`` (docs/semantics.md §10).

Daisy (Giannakopoulou et al., SIGMOD 2020) checks constraints on the rows a query
touches; facet's scope is the rows satisfying ``EXPR``, and a scoped run reports
the violations holding at least one of them.  Grammar (keywords in any case)::

    expr    := term ('or' term)*
    term    := factor ('and' factor)*
    factor  := 'not' factor | '(' expr ')' | atom
    atom    := operand op operand                    op: = != <> < <= > >= (as in DCs)
             | column ['not'] 'in' '(' value (',' value)* ')'
             | column 'is' ['not'] 'null'
    operand := column | value
    column  := a bare name, or one in backticks (`unit price`)
    value   := a quoted string ('NY' or "NY"), a number, true or false

Each comparison means what the same comparison means in a single-tuple DC (a
constant takes its column's type; CSV columns compared with ``< <= > >=`` are
typed as numbers or times), so :meth:`Where.dcs` hands the typing step one
single-tuple DC per comparison.  NULL follows SQL: a comparison with a NULL is
unknown, ``not`` of unknown is unknown, and only rows where ``EXPR`` is true are
in scope.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from facet.language.ast import DC, Col, Const, Predicate
from facet.language.parser import _LINE_BREAKS, _OPERATORS, _LineParser

__all__ = ["And", "Compare", "IsNull", "Not", "Or", "Where", "parse_where"]

_KEYWORDS = frozenset({"and", "or", "not", "in", "is", "null", "true", "false"})
_WORD = re.compile(r"[^\W\d]\w*")
_SOURCE = "--where"
#: what may start a number: a sign or a point must be followed by a digit
_NUMBER_START = re.compile(r"[+-]?\.?\d")
#: a bare name with dots in it (for the hint to put it in backticks)
_NAME_WITH_DOTS = re.compile(r"[^\s=!<>()'\"`,]+")


@dataclass(frozen=True)
class Compare:
    """A comparison of columns of one row and constants (a single-tuple DC's predicate)."""

    pred: Predicate


@dataclass(frozen=True)
class IsNull:
    column: str


@dataclass(frozen=True)
class Not:
    arg: Node


@dataclass(frozen=True)
class And:
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    args: tuple[Node, ...]


Node = Compare | IsNull | Not | And | Or


@dataclass(frozen=True)
class Where:
    """A parsed ``--where`` expression and its text."""

    expr: Node
    text: str

    def atoms(self) -> list[Compare | IsNull]:
        out: list[Compare | IsNull] = []

        def walk(n: Node) -> None:
            if isinstance(n, Compare | IsNull):
                out.append(n)
            elif isinstance(n, Not):
                walk(n.arg)
            else:
                for a in n.args:
                    walk(a)

        walk(self.expr)
        return out

    def dcs(self) -> list[DC]:
        """One single-tuple DC per comparison (``t.A = t.A`` for ``A is null``): what
        the typing step must see, as it sees the rules."""
        out: list[DC] = []
        for a in self.atoms():
            if isinstance(a, Compare):
                pred = a.pred
            else:
                pred = Predicate(Col(0, a.column), "=", Col(0, a.column))
            out.append(DC((pred,), source=_SOURCE, line=1, text=self.text))
        return list(dict.fromkeys(out))

    def columns(self) -> list[str]:
        return list(dict.fromkeys(c for d in self.dcs() for c in d.columns()))


#: how deep brackets and ``not`` may nest in a ``--where``
MAX_NESTING = 100


class _WhereParser(_LineParser):
    """Recursive descent over one ``--where`` text (positions are 0-based)."""

    def at_end(self) -> bool:
        """True at the end of the text only: ``#`` starts no comment in a ``--where``
        (a stray one is an error, not the rest of the condition dropped)."""
        return self.pos >= self.n

    def no_break_at(self, i: int) -> None:
        """A line break between tokens is refused where it is (inside a quoted
        string or backticks it is part of the text, as in a DC)."""
        if self.text[i] in _LINE_BREAKS:
            raise self.error("line break inside --where; write the condition on one line", i)

    def keyword(self, word: str) -> bool:
        """Consume the keyword ``word`` (any case, a whole word) when it is next."""
        m = _WORD.match(self.text, self.pos)
        if m is None or m.group().lower() != word:
            return False
        self.pos = m.end()
        return True

    def at_keyword(self, word: str) -> bool:
        save = self.pos
        found = self.keyword(word)
        self.pos = save
        return found

    def parse_all(self) -> Node:
        self.skip_ws()
        if self.at_end():
            raise self.error("empty --where: write a condition such as state = 'NY'")
        node = self.expr()
        self.skip_ws()
        if not self.at_end():
            m = _WORD.match(self.text, self.pos)
            what = m.group() if m is not None else self.text[self.pos]
            raise self.error(f"unexpected {what!r}; join conditions with 'and' or 'or'")
        return node

    def expr(self) -> Node:
        return self.chain("or", self.term, Or)

    def term(self) -> Node:
        return self.chain("and", self.factor, And)

    def chain(self, word: str, item: Callable[[], Node], cls: type[And] | type[Or]) -> Node:
        """``item (word item)*``: one item, or ``cls`` of all of them."""
        args = [item()]
        while True:
            self.skip_ws()
            if not self.keyword(word):
                break
            args.append(item())
        return args[0] if len(args) == 1 else cls(tuple(args))

    depth = 0  # brackets and 'not's open around the current position

    def nest(self, start: int) -> None:
        """One level deeper; past :data:`MAX_NESTING` a one-line error (the
        parser and every walk over the tree recurse once per level)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(
                f"--where nests brackets and 'not' more than {MAX_NESTING} deep; "
                "write the condition with fewer levels",
                start,
            )

    def factor(self) -> Node:
        self.skip_ws()
        start = self.pos
        if self.keyword("not"):
            self.nest(start)
            node = Not(self.factor())
            self.depth -= 1
            return node
        if self.peek() == "(":
            open_pos = self.pos
            self.nest(open_pos)
            self.pos += 1
            node = self.expr()
            self.depth -= 1
            self.skip_ws()
            if self.accept(")") is None:
                raise self.error(f"expected ')' to close the '(' at column {open_pos + 1}")
            return node
        return self.atom()

    def atom(self) -> Node:
        self.skip_ws()
        start = self.pos
        left = self.value_or_column()
        if isinstance(left, Col) and self.peek() == ".":
            name = _NAME_WITH_DOTS.match(self.text, start)
            written = name.group() if name else left.name
            bare = written.split(".", 1)[1]
            tuple_name = left.name in ("t", "t0", "t1", "t2", "s") and bare
            raise self.error(
                (f"columns are bare names in --where (write {bare}); " if tuple_name else "")
                + f"a column name holding '.' goes in backticks: `{written}`",
                start,
            )
        self.skip_ws()
        if isinstance(left, Col):
            if self.keyword("is"):
                self.skip_ws()
                negated = self.keyword("not")
                self.skip_ws()
                if not self.keyword("null"):
                    raise self.error("expected 'null' after 'is' (or 'is not')")
                node: Node = IsNull(left.name)
                return Not(node) if negated else node
            save = self.pos
            negated = self.keyword("not")
            self.skip_ws()
            if self.keyword("in"):
                values = self.value_list()
                node = Or(tuple(Compare(Predicate(left, "=", v)) for v in values))
                if len(values) == 1:
                    node = node.args[0]
                return Not(node) if negated else node
            self.pos = save
        op = self.where_operator()
        right = self.value_or_column()
        if isinstance(left, Const) and isinstance(right, Const):
            raise self.error(
                "a comparison needs at least one column; compare a column with a value, "
                "e.g. state = 'NY'",
                start,
            )
        return Compare(Predicate(left, op, right))

    def where_operator(self) -> str:
        self.skip_ws()
        if self.at_end():
            raise self.error("expected a comparison (=, !=, <, <=, >, >=), 'in' or 'is null'")
        if any(self.startswith(symbol) for symbol, _ in _OPERATORS):
            return self.operator()
        raise self.error("expected a comparison (=, !=, <, <=, >, >=), 'in' or 'is null'")

    def value_list(self) -> list[Const]:
        self.skip_ws()
        if self.accept("(") is None:
            raise self.error("expected '(' and a list of values after 'in'")
        values: list[Const] = []
        while True:
            self.skip_ws()
            v = self.value_or_column()
            if not isinstance(v, Const):
                raise self.error("'in' takes values (quoted strings, numbers), not columns")
            values.append(v)
            self.skip_ws()
            if self.accept(")"):
                return values
            if self.accept(",") is None:
                raise self.error("expected ',' or ')' in the 'in' list")

    def value_or_column(self) -> Col | Const:
        self.skip_ws()
        start = self.pos
        ch = self.peek()
        if ch == "`":
            name = self.backticked()
            if not name:
                raise self.error("empty column name between the backticks", start)
            return Col(0, name)
        if ch and ch in "+-." and not _NUMBER_START.match(self.text, self.pos):
            raise self.error("expected a column name, a quoted string or a number")
        if ch in ("'", '"') or (ch and ch in "+-.0123456789"):
            const = self.operand()  # the DC language's strings and numbers
            assert isinstance(const, Const)
            return const
        m = _WORD.match(self.text, self.pos)
        if m is None:
            raise self.error(
                "expected a column name, a quoted string or a number"
                + ("" if ch else " at the end of --where")
            )
        word = m.group()
        if word.lower() in ("true", "false"):
            self.pos = m.end()
            return Const(word)
        if word.lower() == "null":
            raise self.error(
                "a comparison with NULL is never true: test for it with 'column is null' "
                "(or 'is not null'); a column named null goes in backticks: `null`"
            )
        if word.lower() in _KEYWORDS:
            raise self.error(
                f"{word!r} is a keyword here; write a column of that name in backticks: `{word}`"
            )
        self.pos = m.end()
        return Col(0, word)


def parse_where(text: str) -> Where:
    """Parse a ``--where`` expression; errors name the column within ``text``."""
    return Where(_WhereParser(text.strip(), _SOURCE, 1).parse_all(), text.strip())
