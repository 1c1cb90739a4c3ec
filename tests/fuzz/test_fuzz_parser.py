"""Fuzzing the DC parser (docs/semantics.md §5): text mixing the grammar's tokens,
garbage and mutated valid DCs.  Parsing either gives DCs whose canonical text parses
back to the same DCs, or raises :class:`DCSyntaxError` with one line naming
``source:line:column`` (a column inside the text) and a two-line caret display.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

from facet.errors import DCSyntaxError
from facet.language import parse_dc, parse_rules
from tests.fuzz.driver import drive

# fmt: off
FRAGMENTS = [
    # negation, brackets, tuples, columns
    "not", "NOT", "Not", "¬", "!", "(", ")", "[", "]", "((", "))",
    "t.", "t'.", "t’.", "t1.", "t2.", "t0.", "s.", "u.", "T.", "t", "t'",
    "a", "b", "zip", "my col", "`my col`", "``", "`a``b`", '"col"', "é", "数",
    # operators and conjunctions
    "=", "==", "!=", "<>", "≠", "<", "<=", "≤", ">", ">=", "≥", "=>", "=<", "===", "~",
    "and", "AND", "And", "∧", "^", "&&", "&", "or", "||", "|", "∨",
    # constants
    "'x'", '"y"', "'it''s'", '"a\\"b"', "''", "12", "-1.5e3", "+5", ".5", "5.", "12a",
    "1e", "true", "False", "null", "NaN", "'2020-01-01'",
    # other syntaxes
    "->", "→", ",", ":", "fd1:", "`n m`:", '"q":', "#", "# c", "t1&t2&", "t1&",
    "EQ(", "IQ(", "NEQ(", "LT(", "GTE(", "eq(", "FOO(", "(String)", "(Integer)",
    "∀t0∈r,t1∈r:", "forall t0 in r, t1 in r:", "∀", "∈", "in",
    # whitespace and oddities
    " ", "  ", "\t", "\n", "\r", "\r\n", "\\", "\x00", "\x1b", "\u200b", "\ufeff",
    "\u2028", "\x85", "\x0b", "\ud800", "😀",
]
# fmt: on

VALID = [
    "not(t.a = t'.a and t.b != t'.b)",
    "¬(t.a = t'.a ∧ t.b ≠ t'.b)",
    "not(t1.a = t2.a ^ t1.b <> t2.b)",
    "t1&t2&EQ(t1.a,t2.a)&IQ(t1.b,t2.b)",
    "¬(t0.a(String) == t1.a(String) ^ t0.b(String) <> t1.b(String))",
    "∀t0∈r,t1∈r: ¬[t0.a=t1.a∧t0.b≠t1.b]",
    "a, b -> c, d",
    "fd1: zip, `my col` → city",
    't1&EQ(t1.sex,"female")&LT(t1.age,18)',
    "not(t.a <= 5 and t'.b > -1.5e3 and t.c = 'x' and t.d >= \"2020-01-01\")",
    '`named dc`: not[(t.`a b` = t\'."c") and [t.x < t.y]]  # comment',
    "not(t.flag = true and t.n != t.n)",
]

_POSITION = re.compile(r"^fz:(\d+):(\d+): \S")


def _garbage() -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3))
    return st.lists(piece, max_size=30).map("".join)


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    """A valid DC with a few edits: a span deleted, duplicated or replaced by tokens."""
    text = draw(st.sampled_from(VALID))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 6)))
        edit = draw(st.sampled_from(["delete", "duplicate", "replace", "insert"]))
        if edit == "delete":
            text = text[:i] + text[j:]
        elif edit == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            token = draw(st.sampled_from(FRAGMENTS))
            text = text[:i] + token + (text[j:] if edit == "replace" else text[i:])
    return text


TEXTS = st.one_of(_garbage(), _mutated(), st.text(max_size=40), st.sampled_from(VALID))


def _check_error(err: DCSyntaxError, line_text: str, lines: int) -> None:
    msg = str(err)
    assert msg.strip() and len(msg.splitlines()) == 1, repr(msg)
    m = _POSITION.match(msg)
    assert m, f"no source:line:column in {msg!r}"
    line, column = int(m.group(1)), int(m.group(2))
    assert 1 <= line <= lines, msg
    assert 1 <= column <= len(line_text) + 1, (msg, line_text)
    assert err.detail is not None and len(err.detail.splitlines()) == 2, repr(err.detail)


def _check_round_trip(dcs: list) -> None:
    for dc in dcs:
        again = parse_dc(dc.canonical(), source="canonical")
        assert again == [dc], (dc.canonical(), again)


def parse_one(stats, text: str) -> None:
    try:
        dcs = parse_dc(text, source="fz", line=1)
    except DCSyntaxError as err:
        stats.outcomes["syntax error"] += 1
        _check_error(err, text, 1)
        return
    stats.outcomes["parsed"] += 1
    _check_round_trip(dcs)


def parse_file(stats, lines: list[str]) -> None:
    text = "\n".join(lines)
    try:
        dcs = parse_rules(text, source="fz")
    except DCSyntaxError as err:
        stats.outcomes["syntax error"] += 1
        physical = re.split(r"\r\n|\r|\n", text)
        assert 1 <= err.line <= len(physical)
        _check_error(err, physical[err.line - 1], len(physical))
        return
    stats.outcomes["parsed"] += 1
    _check_round_trip(dcs)


def test_fuzz_dc_parser() -> None:
    drive("dc parser", parse_one, {"text": TEXTS}, examples=1500, share=0.2)


def test_fuzz_rules_files() -> None:
    lines = st.lists(st.one_of(TEXTS, st.just(""), st.just("# comment")), max_size=6)
    drive("rules files", parse_file, {"lines": lines}, examples=300, share=0.1)
