"""Parser for denial-constraint text (docs/semantics.md §5).

One DC per line, in any of these spellings (tuple ``t`` is index 0, ``t'`` index 1)::

    not(t.A = t'.A and t.B != t'.B)                 paper; also ¬ ! NOT, ∧ ^ && &, [...]
    t1&t2&EQ(t1.A,t2.A)&IQ(t1.B,t2.B)               HoloClean; EQ IQ NEQ LT GT LTE GTE
    ¬(t0.A(String) == t1.A ^ t0.B <> t1.B)          Metanome (type annotations ignored)
    ∀t0∈clean.csv,t1∈clean.csv: ¬[t0.A=t1.A∧t0.B≠t1.B]
    A, B -> C, D                                    FD shorthand: one DC per right-hand column
    fd1: not(...)                                   optional name prefix (bare or `quoted`)

An operand is ``name.column`` (column bare, in backticks or in double quotes; inside a
HoloClean call a bare column runs up to the next ``,`` or ``)``, so it may hold spaces), a
quoted string (``"..."`` or ``'...'``; ``\\"`` ``\\'`` ``\\\\`` and doubled quotes escape) or
a number (``[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?``, kept exactly as written).

Tuple names follow one convention per DC -- ``t``/``t'``, ``t1``/``t2``, ``t0``/``t1`` or
``s``/``t`` -- whose first name is tuple 0.  The convention is read from the names the
predicates mention (quantifier headers such as ``t1&t2&`` or ``∀t0∈r,t1∈r:`` add nothing);
a DC that mentions a single name is a single-tuple DC on tuple 0, whichever name it is.

The parser is a hand-written scanner plus recursive descent over the characters of one
line, so that every :class:`~facet.language.errors.DCSyntaxError` points at the exact 1-based
column (in characters) of the offending text.  ``#`` outside quotes starts a comment.
"""

from __future__ import annotations

import codecs
import os
import re
import unicodedata
from dataclasses import dataclass

from facet.language.ast import DC, Col, Const, Predicate
from facet.language.errors import DCSyntaxError, FacetInputError

__all__ = ["parse_dc", "parse_rules", "read_rules"]

# --------------------------------------------------------------------------- lexical tables

_WORD = re.compile(r"\w+")
_NAME_PREFIX = re.compile(r"[\w.-]+(?=\s*:)")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NUMBER_START = frozenset("+-.0123456789")
_NUMBER_TAIL = re.compile(r"[\w.]+")
_TYPE_ANNOTATION = re.compile(r"\s*\(\s*\w+\s*\)")
_LOOKS_LIKE_OPERAND = re.compile(r"\w+['′’]?\.")
_KEYWORD_NOT = re.compile(r"not\b", re.IGNORECASE)
_KEYWORD_AND = re.compile(r"and\b", re.IGNORECASE)
_KEYWORD_OR = re.compile(r"(?:or\b|\|\||∨|\|)", re.IGNORECASE)
_BOOLEAN = re.compile(r"(?:true|false)\b", re.IGNORECASE)
_OPERATOR_RUN = re.compile(r"[=<>!≠≤≥]+")
_KEYWORD_FORALL = re.compile(r"forall\b", re.IGNORECASE)
_KEYWORD_IN = re.compile(r"in\b", re.IGNORECASE)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

#: comparison spellings, longest first, and the operator each one means
_OPERATORS: tuple[tuple[str, str], ...] = (
    ("==", "="),
    ("!=", "!="),
    ("<>", "!="),
    ("<=", "<="),
    (">=", ">="),
    ("=", "="),
    ("<", "<"),
    (">", ">"),
    ("≠", "!="),
    ("≤", "<="),
    ("≥", ">="),
)
_EXPECTED_OPERATOR = "expected a comparison operator (=, !=, <, <=, >, >=)"
#: operator misspellings and what to write instead
_OPERATOR_FIXES = {"=>": ">=", "=<": "<=", "===": "=", "=!": "!=", "!==": "!=", "!": "!="}
_OR_HINT = (
    "a DC is a conjunction and has no 'or': not(A or B) is the two DCs not(A) and not(B), "
    "so write each on its own line (or --dc)"
)
_LINE_BREAKS = frozenset("\r\n")
#: conjunction symbols (the keyword ``and`` is matched separately), longest first
_AND_SYMBOLS = ("&&", "∧", "^", "&")
_ARROWS = ("->", "→")
_BRACKETS = {"(": ")", "[": "]"}
_PRIMES = frozenset("'′’")

#: HoloClean predicate functions (case-insensitive) and their operators
_FUNCTIONS = {"EQ": "=", "IQ": "!=", "NEQ": "!=", "LT": "<", "GT": ">", "LTE": "<=", "GTE": ">="}
_FUNCTION_LIST = "EQ, IQ, NEQ, LT, GT, LTE, GTE"

#: tuple-name conventions (docs/semantics.md §5); the first name of each is tuple 0
_CONVENTIONS: tuple[tuple[str, str], ...] = (("t", "t'"), ("t1", "t2"), ("t0", "t1"), ("s", "t"))
_TUPLE_NAMES = frozenset(n for conv in _CONVENTIONS for n in conv)
_CONVENTION_LIST = "t/t', t1/t2, t0/t1 or s/t"

_EMPTY_COLUMN = "empty column name; write the name of a column of the data between the quotes"
_GENERIC_EXPECTED = (
    "expected a DC: not(...) or ¬[...], HoloClean t1&t2&EQ(t1.A,t2.A), or an FD such as 'A, B -> C'"
)


def _invisible(ch: str) -> bool:
    """A control or format character (not whitespace): a zero-width space, a bidi mark."""
    return not ch.isspace() and unicodedata.category(ch) in ("Cc", "Cf")


# --------------------------------------------------------------------------- raw syntax tree


@dataclass(frozen=True)
class _RawCol:
    """``tuple_name.name`` as written, before the naming convention is resolved."""

    tuple_name: str
    name: str
    pos: int  # 0-based offset of the tuple name in the line


_RawOperand = _RawCol | Const


@dataclass(frozen=True)
class _RawPredicate:
    left: _RawOperand
    op: str
    right: _RawOperand


# --------------------------------------------------------------------------- the parser


class _LineParser:
    """Parses one line of DC text; ``pos`` is a 0-based offset into ``text``."""

    def __init__(self, text: str, source: str, line: int) -> None:
        self.text = text
        self.source = source
        self.line = line
        self.pos = 0
        self.n = len(text)

    # ----------------------------------------------------------------- scanning helpers

    def error(self, message: str, pos: int | None = None) -> DCSyntaxError:
        """A syntax error at 0-based offset ``pos`` (default: the current position)."""
        at = self.pos if pos is None else pos
        if at < self.n and _invisible(self.text[at]):
            ch = self.text[at]
            name = unicodedata.name(ch, "control character")
            message += f"; the text here holds the invisible U+{ord(ch):04X} {name}: delete it"
        return DCSyntaxError(
            message,
            source=self.source,
            line=self.line,
            column=at + 1,
            text=self.text.rstrip("\r\n"),
        )

    def skip_ws(self) -> None:
        while self.pos < self.n and self.text[self.pos].isspace():
            self.no_break_at(self.pos)
            self.pos += 1

    def no_break_at(self, i: int) -> None:
        """Refuse a line break at offset ``i`` that more text follows: a DC is one
        line (line breaks and spaces at the end of a ``--dc`` text are ignored)."""
        if self.text[i] in _LINE_BREAKS and self.text[i:].strip():
            raise self.error(
                "line break inside one DC; a DC is one line: give each DC its own --dc, "
                "or its own line in a rules file",
                i,
            )

    def at_end(self) -> bool:
        """True at the end of the line or at a ``#`` comment (outside quotes)."""
        return self.pos >= self.n or self.text[self.pos] == "#"

    def peek(self) -> str:
        """The current character, or ``""`` at the end of the DC text."""
        return "" if self.at_end() else self.text[self.pos]

    def startswith(self, s: str) -> bool:
        return self.text.startswith(s, self.pos)

    def accept(self, *symbols: str) -> str | None:
        """Consume and return the first of ``symbols`` found at the current position."""
        for s in symbols:
            if self.text.startswith(s, self.pos):
                self.pos += len(s)
                return s
        return None

    def word(self) -> str | None:
        """Consume ``\\w+`` and return it (None, consuming nothing, when there is none)."""
        m = _WORD.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group()

    def tuple_word(self) -> str | None:
        """Consume a word with an optional prime (``t'``; also ``′`` and ``’``)."""
        w = self.word()
        if w is not None and self.pos < self.n and self.text[self.pos] in _PRIMES:
            self.pos += 1
            w += "'"
        return w

    def quoted(self, what: str) -> str:
        """A ``"..."`` or ``'...'`` token at ``pos``: backslash escapes and doubled quotes."""
        text, start = self.text, self.pos
        quote = text[start]
        out: list[str] = []
        i = start + 1
        while i < self.n:
            ch = text[i]
            if ch == "\\" and i + 1 < self.n and text[i + 1] in "\"'\\":
                out.append(text[i + 1])
                i += 2
            elif ch == quote:
                if i + 1 < self.n and text[i + 1] == quote:
                    out.append(quote)
                    i += 2
                else:
                    self.pos = i + 1
                    return "".join(out)
            else:
                out.append(ch)
                i += 1
        raise self.error(
            f"unterminated {what}: missing closing {quote}; add it, and write a {quote} "
            f"inside the text as \\{quote} or {quote}{quote}",
            start,
        )

    def backticked(self) -> str:
        """A ```...``` name at ``pos``; a doubled backtick stands for one backtick."""
        text, start = self.text, self.pos
        out: list[str] = []
        i = start + 1
        while i < self.n:
            ch = text[i]
            if ch == "`":
                if i + 1 < self.n and text[i + 1] == "`":
                    out.append("`")
                    i += 2
                    continue
                self.pos = i + 1
                return "".join(out)
            out.append(ch)
            i += 1
        raise self.error(
            "unterminated quoted name: missing closing `; add it, and write a ` inside "
            "the name as ``",
            start,
        )

    def unknown_tuple(self, name: str, pos: int) -> DCSyntaxError:
        return self.error(f"unknown tuple name {name!r}; use {_CONVENTION_LIST}", pos)

    # ----------------------------------------------------------------- top level

    def parse(self) -> list[DC]:
        self.skip_ws()
        if self.at_end():
            raise self.error("empty DC: expected not(...), t1&t2&EQ(...) or an FD 'A -> B'")
        name = self.name_prefix()
        self.skip_ws()
        if self.at_end():
            raise self.error("expected a DC after the name")

        if self.quantifier_start():
            self.quantifier()
            self.skip_ws()
            if not self.negation_start():
                raise self.error("expected ¬(...) or not(...) after the quantifier")
            raw = self.negation()
        elif self.negation_start():
            raw = self.negation()
        elif self.holoclean_start():
            raw = self.holoclean()
        elif any(a in self.text[self.pos :] for a in _ARROWS):
            bodies = self.fd()
            self.expect_end()
            return [self.make_dc(body, name) for body in bodies]
        elif _LOOKS_LIKE_OPERAND.match(self.text, self.pos):
            raise self.error("expected not( before the predicates, e.g. not(t.A = t'.A and ...)")
        else:
            raise self.error(_GENERIC_EXPECTED)
        self.expect_end()
        return [self.make_dc(self.resolve(raw), name)]

    def make_dc(self, predicates: tuple[Predicate, ...], name: str | None) -> DC:
        return DC(predicates, name, source=self.source, line=self.line, text=self.text.strip())

    def expect_end(self) -> None:
        self.skip_ws()
        if self.at_end():
            if self.pos < self.n:  # a '#' comment: it ends at a line break, not the DC text
                m = _LINE_BREAK.search(self.text, self.pos)
                if m is not None:
                    self.no_break_at(m.start())
            return
        if _KEYWORD_OR.match(self.text, self.pos):
            raise self.error(_OR_HINT)
        save = self.pos
        if self.conjunction():
            word = self.text[save : self.pos]
            self.skip_ws()
            another = self.negation_start()
            self.pos = save
            if another:  # not(A) and not(B): two DCs
                raise self.error(
                    f"{word!r} after the end of the DC; not(A) {word} not(B) is two DCs: "
                    "write each on its own line (or --dc)"
                )
            raise self.error(
                f"{word!r} after the end of the DC; put all of its predicates inside one "
                "not(...): not(p1 and p2)"
            )
        raise self.error(
            f"unexpected {self.text[self.pos]!r} after the end of the DC; remove it "
            "(a '#' starts a comment)"
        )

    def name_prefix(self) -> str | None:
        """``name:`` (``[\\w.-]+``, or a backticked/double-quoted name) before the DC."""
        start = self.pos
        ch = self.text[start]
        if ch in '`"':
            try:
                name = self.backticked() if ch == "`" else self.quoted("name")
            except DCSyntaxError:
                self.pos = start  # not a name after all; the DC parser reports it
                return None
            self.skip_ws()
            if self.accept(":") is None:
                self.pos = start
                return None
            if not name:
                raise self.error(
                    "empty DC name; write a name before the ':', or drop the ':'", start
                )
            return name
        m = _NAME_PREFIX.match(self.text, start)
        if m is None:
            return None
        self.pos = m.end()
        self.skip_ws()
        self.accept(":")
        return m.group()

    # ----------------------------------------------------------------- paper / Metanome

    def negation_start(self) -> bool:
        """At ``¬``, ``!(`` / ``![`` or the keyword ``not`` (not an FD column named not)."""
        if self.startswith("¬"):
            return True
        save = self.pos
        try:
            if self.accept("!"):
                self.skip_ws()
                return self.peek() in ("(", "[")
            m = _KEYWORD_NOT.match(self.text, self.pos)
            if m is None:
                return False
            self.pos = m.end()
            self.skip_ws()
            return not (self.peek() in ("&", ",") or any(self.startswith(a) for a in _ARROWS))
        finally:
            self.pos = save

    def negation(self) -> list[_RawPredicate]:
        """``(not|¬|!) ( conjunction )`` with ``(...)`` or ``[...]``."""
        start = self.pos
        if self.accept("¬", "!") is None:
            m = _KEYWORD_NOT.match(self.text, self.pos)
            assert m is not None
            self.pos = m.end()
        keyword = self.text[start : self.pos]
        self.skip_ws()
        if self.peek() not in ("(", "["):
            raise self.error(f"expected '(' or '[' after {keyword!r}")
        return self.group(top=True)

    def group(self, *, top: bool = False) -> list[_RawPredicate]:
        """A bracketed conjunction; ``pos`` is at the opening bracket.  Inner
        brackets only group predicates, so they nest to any depth: the open ones
        are a stack here, not a recursion."""
        opened: list[int] = []  # offsets of the brackets still open
        preds: list[_RawPredicate] = []
        while True:
            # a predicate, after any number of opening brackets
            while True:
                self.skip_ws()
                if self.peek() not in ("(", "["):
                    break
                opened.append(self.pos)
                self.pos += 1
                self.skip_ws()
                if self.peek() == _BRACKETS[self.text[opened[-1]]]:
                    outer = top and len(opened) == 1
                    raise self.error(
                        "empty DC: expected a predicate" if outer else "expected a predicate"
                    )
            preds.append(self.comparison())
            # then closing brackets and a conjunction, or the end of the outer group
            while True:
                self.skip_ws()
                opener = self.text[opened[-1]]
                closer = _BRACKETS[opener]
                if self.accept(closer):
                    opened.pop()
                    if not opened:
                        return preds
                    continue
                if self.conjunction():
                    break
                if _KEYWORD_OR.match(self.text, self.pos):
                    raise self.error(_OR_HINT)
                where = f"{closer!r} to close the {opener!r} at column {opened[-1] + 1}"
                if self.at_end() or self.peek() in ")]":
                    raise self.error(f"expected {where}")
                raise self.error(f"expected 'and' or {where}")

    def conjunction(self) -> bool:
        """Consume ``and`` (any case), ``∧``, ``^``, ``&&`` or ``&``."""
        if self.accept(*_AND_SYMBOLS):
            return True
        m = _KEYWORD_AND.match(self.text, self.pos)
        if m is None:
            return False
        self.pos = m.end()
        return True

    def comparison(self) -> _RawPredicate:
        self.skip_ws()
        start = self.pos
        left = self.operand()
        op = self.operator()
        right = self.operand()
        return self.predicate(left, op, right, start)

    def predicate(
        self, left: _RawOperand, op: str, right: _RawOperand, start: int
    ) -> _RawPredicate:
        if isinstance(left, Const) and isinstance(right, Const):
            raise self.error(
                "a predicate needs at least one column; compare a column with a value, "
                "e.g. t.A = 5",
                start,
            )
        return _RawPredicate(left, op, right)

    def operator(self) -> str:
        self.skip_ws()
        run = _OPERATOR_RUN.match(self.text, self.pos)
        for symbol, op in _OPERATORS:
            if self.startswith(symbol):
                if run is not None and run.end() > self.pos + len(symbol):
                    break  # '=>', '===': more operator characters than any operator has
                self.pos += len(symbol)
                return op
        if run is not None:
            spelled = run.group()
            fix = _OPERATOR_FIXES.get(spelled)
            use = f"write {fix!r}" if fix else "use =, !=, <, <=, > or >="
            raise self.error(f"unknown operator {spelled!r}; {use}")
        raise self.error(_EXPECTED_OPERATOR + self.name_goes_on("t.`my col` = t'.`my col`"))

    def name_goes_on(self, example: str) -> str:
        """A hint when the text here looks like more of a column name (a dot, a
        space inside it, a character a bare name does not take): backticks."""
        if self.at_end() or self.text[self.pos] in "()=!<>,;#'\"\r\n0123456789":
            return ""
        if re.match(r"\w+'?\.\w", self.text[self.pos :]):
            return ""  # (the next operand, t'.B: the operator is what is missing)
        return f"; a column name with spaces, dots or other characters goes in backticks: {example}"

    def operand(self, *, in_call: bool = False) -> _RawOperand:
        """``name.column``, a quoted string or a number."""
        self.skip_ws()
        start = self.pos
        ch = self.peek()
        if ch in ("'", '"'):
            return Const(self.quoted("string"), quoted=True)
        if ch and ch in _NUMBER_START:
            m = _NUMBER.match(self.text, start)
            if m is not None:
                end = m.end()
                tail = _NUMBER_TAIL.match(self.text, end)
                if tail is not None:
                    bad = self.text[start : tail.end()]
                    raise self.error(
                        f"malformed number {bad!r}; write a number such as 12 or 1.5e3, "
                        f'or quote text: "{bad}"',
                        start,
                    )
                self.pos = end
                return Const(m.group())
        name = self.tuple_word() if ch else None
        if name is None:
            raise self.error("expected an operand: t.column, a quoted string or a number", start)
        dotted = self.pos < self.n and self.text[self.pos] == "."
        if not dotted and _BOOLEAN.fullmatch(name):
            return Const(name)  # a boolean, kept as written (docs/semantics.md §4.4)
        if name not in _TUPLE_NAMES:
            if dotted:
                raise self.unknown_tuple(name, start)
            if name.lower() in ("null", "none", "nan"):
                raise self.error(
                    f"{name!r} is not a value in a DC: a comparison with NULL never holds "
                    "(docs/semantics.md §2); to require a value, write t.A = t.A",
                    start,
                )
            raise self.error(
                f"unexpected word {name!r}: an operand is t.column, "
                f'a quoted string ("{name}") or a number',
                start,
            )
        if not dotted:
            raise self.error(f"expected '.' and a column name after {name!r}")
        self.pos += 1
        return _RawCol(name, self.column_name(name, in_call=in_call), start)

    def column_name(self, tuple_name: str, *, in_call: bool) -> str:
        """The column after ``name.``; ``in_call`` allows bare names with spaces."""
        start = self.pos
        ch = self.text[start] if start < self.n else ""
        if ch == "`":
            name = self.backticked()
        elif ch == '"':
            name = self.quoted("column name")
        elif in_call:
            end = start
            while end < self.n and self.text[end] not in ",)":
                self.no_break_at(end)
                end += 1
            name = self.text[start:end].strip()
            if not name:
                raise self.error(f"expected a column name after {tuple_name + '.'!r}", start)
            self.pos = end
            return name
        else:
            w = self.word()
            if w is None:
                raise self.error(f"expected a column name after {tuple_name + '.'!r}", start)
            name = w
        if not name:
            raise self.error(_EMPTY_COLUMN, start)
        if not in_call:
            m = _TYPE_ANNOTATION.match(self.text, self.pos)  # Metanome: t0.A(String)
            if m is not None:
                self.pos = m.end()
        return name

    def quantifier_start(self) -> bool:
        """At ``∀`` or the keyword ``forall`` (not an FD column named forall)."""
        if self.startswith("∀"):
            return True
        m = _KEYWORD_FORALL.match(self.text, self.pos)
        if m is None:
            return False
        after = self.text[m.end() :].lstrip()
        return not after.startswith((",", *_ARROWS))

    def quantifier(self) -> None:
        """``∀t0∈rel,t1∈rel:`` (or ``forall t0 in rel, ...:``); names and relations ignored."""
        first = True
        while True:
            self.skip_ws()
            if self.accept("∀") is None:
                m = _KEYWORD_FORALL.match(self.text, self.pos)
                if m is not None:
                    self.pos = m.end()
                elif first:
                    raise self.error("expected '∀' or 'forall'")
            first = False
            self.skip_ws()
            start = self.pos
            var = self.tuple_word()
            if var is None:
                raise self.error("expected a tuple variable such as t0 in the quantifier")
            if var not in _TUPLE_NAMES:
                raise self.unknown_tuple(var, start)
            self.skip_ws()
            member = self.accept("∈") or ("in" if self.keyword_in() else None)
            if member is not None:
                self.skip_ws()
                rel_start = self.pos
                while self.pos < self.n and not (
                    self.text[self.pos] in ",:¬" or self.text[self.pos].isspace()
                ):
                    self.pos += 1
                if self.pos == rel_start:
                    raise self.error(f"expected a relation name after {member!r}", rel_start)
                self.skip_ws()
            if self.accept(","):
                continue
            if self.accept(":"):
                return
            raise self.error("expected ',' or ':' in the quantifier")

    def keyword_in(self) -> bool:
        m = _KEYWORD_IN.match(self.text, self.pos)
        if m is None:
            return False
        self.pos = m.end()
        return True

    # ----------------------------------------------------------------- HoloClean

    def holoclean_start(self) -> bool:
        """At ``word&`` (a header) or ``word(`` (a predicate function)."""
        save = self.pos
        try:
            if self.tuple_word() is None:
                return False
            self.skip_ws()
            return self.peek() in ("&", "(")
        finally:
            self.pos = save

    def holoclean(self) -> list[_RawPredicate]:
        """``t1&t2&FN(x,y)&FN(x,y)...``; the leading tuple names are a header."""
        preds: list[_RawPredicate] = []
        while True:
            self.skip_ws()
            start = self.pos
            w = self.tuple_word()
            if w is None:
                raise self.error("expected a predicate such as EQ(t1.A,t2.A)")
            self.skip_ws()
            if self.peek() == "(":
                op = _FUNCTIONS.get(w.upper())
                if op is None:
                    raise self.error(f"unknown function {w!r}; use {_FUNCTION_LIST}", start)
                preds.append(self.call(w, op, start))
            elif preds:
                raise self.error(f"expected a predicate such as EQ(t1.A,t2.A), not {w!r}", start)
            elif w not in _TUPLE_NAMES:
                raise self.unknown_tuple(w, start)
            self.skip_ws()
            if self.accept("&"):
                continue
            if self.at_end():
                break
            raise self.error("expected '&' between HoloClean predicates")
        if not preds:
            raise self.error("empty DC: expected a predicate such as EQ(t1.A,t2.A)")
        return preds

    def call(self, fname: str, op: str, start: int) -> _RawPredicate:
        """``FN(operand, operand)``; ``pos`` is at the ``(``."""
        self.pos += 1
        left = self.operand(in_call=True)
        self.skip_ws()
        if self.accept(",") is None:
            raise self.error(f"expected ',' between the arguments of {fname}")
        right = self.operand(in_call=True)
        self.skip_ws()
        if self.accept(")") is None:
            raise self.error(f"expected ')' to close {fname}(")
        return self.predicate(left, op, right, start)

    # ----------------------------------------------------------------- FD shorthand

    def fd(self) -> list[tuple[Predicate, ...]]:
        """``A, B -> C, D``: one body ``t.A = t'.A and ... and t.X != t'.X`` per RHS column."""
        lhs: list[str] = []
        self.skip_ws()
        if self.accept(*_ARROWS) is None:
            while True:
                lhs.append(self.fd_column())
                self.skip_ws()
                if self.accept(","):
                    continue
                if self.accept(*_ARROWS):
                    break
                raise self.error(
                    "expected ',' or '->' in the FD" + self.name_goes_on("`my col`, b -> c")
                )
        rhs = [self.fd_column()]
        while True:
            self.skip_ws()
            if self.at_end():
                break
            if self.accept(",") is None:
                raise self.error("expected ',' or the end of the FD")
            rhs.append(self.fd_column())
        same = tuple(Predicate(Col(0, a), "=", Col(1, a)) for a in lhs)
        return [same + (Predicate(Col(0, c), "!=", Col(1, c)),) for c in rhs]

    def fd_column(self) -> str:
        self.skip_ws()
        start = self.pos
        ch = self.peek()
        if ch == "`":
            name = self.backticked()
        elif ch == '"':
            name = self.quoted("column name")
        else:
            w = self.word() if ch else None
            if w is None:
                raise self.error("expected a column name")
            name = w
        if not name:
            raise self.error(_EMPTY_COLUMN, start)
        return name

    # ----------------------------------------------------------------- tuple names

    def resolve(self, raw: list[_RawPredicate]) -> tuple[Predicate, ...]:
        """Map tuple names to 0/1 by the one naming convention the DC uses (docs/semantics.md §5)."""
        candidates = list(_CONVENTIONS)
        seen: list[str] = []
        for pred in raw:
            for o in (pred.left, pred.right):
                if not isinstance(o, _RawCol) or o.tuple_name in seen:
                    continue
                fitting = [c for c in candidates if o.tuple_name in c]
                if not fitting:
                    before = " and ".join(repr(n) for n in seen)
                    raise self.error(
                        f"tuple name {o.tuple_name!r} mixes naming conventions with {before}; "
                        f"use one convention per DC: {_CONVENTION_LIST}",
                        o.pos,
                    )
                candidates = fitting
                seen.append(o.tuple_name)
        if len(seen) == 2:
            first, second = candidates[0]
            index = {first: 0, second: 1}
        else:  # one name: a single-tuple DC on tuple 0, whichever name it is
            index = dict.fromkeys(seen, 0)

        def convert(o: _RawOperand) -> Col | Const:
            return Col(index[o.tuple_name], o.name) if isinstance(o, _RawCol) else o

        return tuple(Predicate(convert(p.left), p.op, convert(p.right)) for p in raw)


# --------------------------------------------------------------------------- public API


def parse_dc(text: str, *, source: str = "<dc>", line: int = 1) -> list[DC]:
    """Parse one line of DC text into DCs (a list: FD shorthand yields one DC per RHS column).

    Every DC carries ``source``, ``line``, ``text`` (the line, stripped) and its ``name``
    (None when the line has no ``name:`` prefix); ``id`` is left None for the caller.
    Raises :class:`~facet.language.errors.DCSyntaxError` at the 1-based column of the first problem.
    """
    return _LineParser(text, source, line).parse()


def parse_rules(text: str, *, source: str = "<rules>") -> list[DC]:
    """Parse a rules file: one DC per line; blank lines and ``#`` comments are ignored.

    Every line is parsed; if any is bad, the error of the first bad line is raised (with
    a note listing the others).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    dcs: list[DC] = []
    errors: list[DCSyntaxError] = []
    for lineno, raw in enumerate(_LINE_BREAK.split(text), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            dcs.extend(parse_dc(raw, source=source, line=lineno))
        except DCSyntaxError as err:
            errors.append(err)
    if errors:
        first = errors[0]
        if len(errors) > 1:
            others = ", ".join(f"{e.source}:{e.line}:{e.column}" for e in errors[1:11])
            more = " ..." if len(errors) > 11 else ""
            first.add_note(f"{len(errors) - 1} more bad DC line(s): {others}{more}")
        raise first
    return dcs


def read_rules(path: str | os.PathLike[str]) -> list[DC]:
    """Read and parse a UTF-8 rules file (a BOM is accepted).

    A file that cannot be read, or is not UTF-8, raises
    :class:`~facet.errors.FacetInputError` naming the path (and, for a bad byte, its line
    and column); syntax errors name the path as given.
    """
    source = os.fsdecode(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise FacetInputError(
            f"cannot read rules file '{source}': {_os_problem(path, err)}"
        ) from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        line_start = max(data.rfind(b"\n", 0, err.start), data.rfind(b"\r", 0, err.start)) + 1
        column = len(data[line_start : err.start].decode("utf-8", errors="replace")) + 1
        raise FacetInputError(
            f"{source}:{line}:{column}: not UTF-8 text (byte 0x{data[err.start]:02x}); "
            "a rules file is UTF-8 text with one DC per line: save it as UTF-8"
        ) from None
    return parse_rules(text, source=source)


def _os_problem(path: str | os.PathLike[str], err: OSError) -> str:
    """What is wrong with ``path``, and what to do, for a rules file that ``open`` refused."""
    if isinstance(err, IsADirectoryError) or os.path.isdir(path):
        return "it is a directory; give the path of a rules file"
    if isinstance(err, FileNotFoundError):
        if os.path.islink(path):
            return f"it is a broken symbolic link (to '{os.fsdecode(os.readlink(path))}'); fix the link"
        return "no such file; check the path"
    if isinstance(err, PermissionError):
        return "permission denied; check the file's permissions"
    return f"{err.strerror or err}; check the path"
