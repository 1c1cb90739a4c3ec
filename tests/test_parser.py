"""Tests of the DC text parser (``facet/language/parser.py``, docs/semantics.md §5)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from facet.errors import DCSyntaxError, FacetInputError
from facet.language import DC, Col, Const, Predicate, parse_dc, parse_rules, read_rules
from facet.language.ast import OPS, quote_identifier, quote_string

DATA = Path(__file__).resolve().parent.parent / "data"


def c0(name: str) -> Col:
    return Col(0, name)


def c1(name: str) -> Col:
    return Col(1, name)


def P(left: Col | Const, op: str, right: Col | Const) -> Predicate:
    return Predicate(left, op, right)


def one(text: str) -> DC:
    """Parse text that must give exactly one DC."""
    dcs = parse_dc(text)
    assert len(dcs) == 1, dcs
    return dcs[0]


def preds(text: str) -> tuple[Predicate, ...]:
    return one(text).predicates


FD_AB = (P(c0("A"), "=", c1("A")), P(c0("B"), "!=", c1("B")))

# --------------------------------------------------------------------------- paper syntax


@pytest.mark.parametrize(
    "text",
    [
        "not(t.A = t'.A and t.B != t'.B)",
        "not(t.A=t'.A and t.B!=t'.B)",
        "  not ( t.A = t'.A  and  t.B != t'.B )  ",
        "NOT(t.A = t'.A AND t.B != t'.B)",
        "Not(t.A = t'.A And t.B != t'.B)",
        "¬(t.A = t'.A ∧ t.B ≠ t'.B)",
        "¬ [t.A = t'.A ∧ t.B ≠ t'.B]",
        "!(t.A = t'.A ^ t.B <> t'.B)",
        "![t.A == t'.A && t.B != t'.B]",
        "not[t.A = t'.A & t.B != t'.B]",
        "not(t.A=t'.A∧t.B≠t'.B)",
        "not(t.A = t'.A and t.B != t'.B)  # trailing comment",
        "not((t.A = t'.A) and [t.B != t'.B])",
        "not(t1.A = t2.A and t1.B != t2.B)",
        "not(t0.A = t1.A and t0.B != t1.B)",
        "not(s.A = t.A and s.B != t.B)",
        "not(t.A = t’.A and t.B != t′.B)",
    ],
)
def test_paper_spellings(text: str) -> None:
    assert preds(text) == FD_AB


@pytest.mark.parametrize(
    ("spelling", "op"),
    [
        ("=", "="),
        ("==", "="),
        ("!=", "!="),
        ("<>", "!="),
        ("≠", "!="),
        ("<", "<"),
        ("<=", "<="),
        ("≤", "<="),
        (">", ">"),
        (">=", ">="),
        ("≥", ">="),
    ],
)
def test_operators(spelling: str, op: str) -> None:
    assert preds(f"not(t.A {spelling} t'.B)") == (P(c0("A"), op, c1("B")),)
    assert preds(f"not(t.A{spelling}t'.B)") == (P(c0("A"), op, c1("B")),)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("not(t.A = 5)", Const("5")),
        ("not(t.A = -5)", Const("-5")),
        ("not(t.A = +5)", Const("+5")),
        ("not(t.A = 1.50)", Const("1.50")),
        ("not(t.A = 1.)", Const("1.")),
        ("not(t.A = .5)", Const(".5")),
        ("not(t.A = 1e10)", Const("1e10")),
        ("not(t.A = -2.5E-3)", Const("-2.5E-3")),
        ("not(t.A=-5)", Const("-5")),
        ('not(t.A = "x")', Const("x", quoted=True)),
        ("not(t.A = 'x')", Const("x", quoted=True)),
        ('not(t.A = "")', Const("", quoted=True)),
        ("not(t.A = '')", Const("", quoted=True)),
        ('not(t.A = "5")', Const("5", quoted=True)),
        ('not(t.A = "a\\"b")', Const('a"b', quoted=True)),
        ("not(t.A = 'a\\'b')", Const("a'b", quoted=True)),
        ('not(t.A = "a\\\\b")', Const("a\\b", quoted=True)),
        ('not(t.A = "a""b")', Const('a"b', quoted=True)),
        ("not(t.A = 'it''s')", Const("it's", quoted=True)),
        ('not(t.A = "it\'s")', Const("it's", quoted=True)),
        ("not(t.A = 'say \"hi\"')", Const('say "hi"', quoted=True)),
        ('not(t.A = "C:\\temp")', Const("C:\\temp", quoted=True)),
        ('not(t.A = "a # not a comment")', Const("a # not a comment", quoted=True)),
        ('not(t.A = "a and t.B = 1)")', Const("a and t.B = 1)", quoted=True)),
        ('not(t.A = "ünïcödé ∧ ≠")', Const("ünïcödé ∧ ≠", quoted=True)),
    ],
)
def test_constants(text: str, expected: Const) -> None:
    assert preds(text) == (P(c0("A"), "=", expected),)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("not(t.A = 1)", "A"),
        ("not(t.a_b2 = 1)", "a_b2"),
        ("not(t._x = 1)", "_x"),
        ("not(t.naïve = 1)", "naïve"),
        ("not(t.名前 = 1)", "名前"),
        ("not(t.2nd = 1)", "2nd"),
        ("not(t.`Object Number` = 1)", "Object Number"),
        ('not(t."Object Number" = 1)', "Object Number"),
        ("not(t.`a``b` = 1)", "a`b"),
        ("not(t.`a,b)c` = 1)", "a,b)c"),
        ("not(t.`#x` = 1)", "#x"),
        ('not(t."say \\"x\\"" = 1)', 'say "x"'),
        ("not(t.A(String) = 1)", "A"),
        ("not(t.A (Integer) = 1)", "A"),
        ("not(t.`A B`(Double) = 1)", "A B"),
    ],
)
def test_column_names(text: str, column: str) -> None:
    assert preds(text) == (P(c0(column), "=", Const("1")),)


def test_constant_on_the_left_is_kept_as_written() -> None:
    assert preds("not(5 < t.A)") == (P(Const("5"), "<", c0("A")),)
    assert preds("not('x' = t'.A and t.B = t'.B)") == (
        P(Const("x", quoted=True), "=", c1("A")),
        P(c0("B"), "=", c1("B")),
    )


def test_same_tuple_and_cross_column_predicates() -> None:
    assert preds("not(t.A = t.A)") == (P(c0("A"), "=", c0("A")),)
    assert preds("not(t.A < t'.B and t.C >= t.D)") == (
        P(c0("A"), "<", c1("B")),
        P(c0("C"), ">=", c0("D")),
    )


def test_nested_groups_flatten() -> None:
    assert preds("not(((t.A = t'.A)) and (t.B = 1 and [t.C = 2]))") == (
        P(c0("A"), "=", c1("A")),
        P(c0("B"), "=", Const("1")),
        P(c0("C"), "=", Const("2")),
    )


def test_keywords_are_words_not_prefixes() -> None:
    # a column called "and" / "not" is fine after "t."
    assert preds("not(t.and = t'.not)") == (P(c0("and"), "=", c1("not")),)


# --------------------------------------------------------------------------- HoloClean


def test_holoclean_two_tuple() -> None:
    assert preds("t1&t2&EQ(t1.A,t2.A)&IQ(t1.B,t2.B)") == FD_AB
    assert preds(" t1 & t2 & eq( t1.A , t2.A ) & Iq(t1.B ,t2.B) ") == FD_AB
    assert preds("EQ(t1.A,t2.A)&NEQ(t1.B,t2.B)") == FD_AB  # header is optional


@pytest.mark.parametrize(
    ("fn", "op"),
    [
        ("EQ", "="),
        ("IQ", "!="),
        ("NEQ", "!="),
        ("LT", "<"),
        ("GT", ">"),
        ("LTE", "<="),
        ("GTE", ">="),
        ("lte", "<="),
    ],
)
def test_holoclean_functions(fn: str, op: str) -> None:
    assert preds(f"t1&t2&{fn}(t1.A,t2.B)") == (P(c0("A"), op, c1("B")),)


def test_holoclean_constants_and_single_tuple() -> None:
    assert parse_dc('t1&EQ(t1.sex,"female")&EQ(t1.relationship,"husband")') == [
        DC(
            (
                P(c0("sex"), "=", Const("female", quoted=True)),
                P(c0("relationship"), "=", Const("husband", quoted=True)),
            )
        )
    ]
    food = "t1&t2&EQ(t1.dbaname,t2.dbaname)&EQ(t1.results,'Out of Business')&LTE(t1.d,t2.d)"
    assert preds(food) == (
        P(c0("dbaname"), "=", c1("dbaname")),
        P(c0("results"), "=", Const("Out of Business", quoted=True)),
        P(c0("d"), "<=", c1("d")),
    )
    assert preds("t1&t2&GT(t1.A,5)&LT(-1.5,t2.A)") == (
        P(c0("A"), ">", Const("5")),
        P(Const("-1.5"), "<", c1("A")),
    )


def test_holoclean_header_adds_no_arity() -> None:
    dc = one("t1&t2&EQ(t1.A,'x')")
    assert dc.predicates == (P(c0("A"), "=", Const("x", quoted=True)),)
    assert dc.arity == 1
    # a header naming t1/t2 around predicates in t0/t1: the predicates decide
    assert preds("t1&t2&EQ(t0.A,t1.A)") == (P(c0("A"), "=", c1("A")),)


def test_holoclean_columns_with_spaces() -> None:
    assert preds("t1&t2&EQ(t1.Object Number,t2.Object Number)&IQ(t1. Is Highlight ,t2.X)") == (
        P(c0("Object Number"), "=", c1("Object Number")),
        P(c0("Is Highlight"), "!=", c1("X")),
    )
    assert preds('t1&t2&EQ(t1.`a,b`,t2."c)d")') == (P(c0("a,b"), "=", c1("c)d")),)
    assert preds("EQ(t1.Owner's #1,t2.x) # comment") == (P(c0("Owner's #1"), "=", c1("x")),)


# --------------------------------------------------------------------------- Metanome


def test_metanome() -> None:
    assert preds("¬(t0.A(String) == t1.A(String) ^ t0.B(Integer) <> t1.B)") == FD_AB
    assert preds("∀t0∈clean.csv,t1∈clean.csv: ¬[t0.A=t1.A∧t0.B≠t1.B]") == FD_AB
    assert preds("∀ t0 ∈ my.rel-1.csv , t1 ∈ my.rel-1.csv : ¬[t0.A=t1.A∧t0.B≠t1.B]") == FD_AB
    assert preds("∀t0∈r,∀t1∈r: ¬[t0.A=t1.A∧t0.B≠t1.B]") == FD_AB
    assert preds("forall t0 in r, t1 in r: not(t0.A = t1.A and t0.B != t1.B)") == FD_AB
    assert preds("FORALL t0, t1: not(t0.A = t1.A and t0.B != t1.B)") == FD_AB


def test_metanome_header_adds_no_arity() -> None:
    dc = one("∀t0∈r,t1∈r: ¬[t0.A=t0.B∧t0.C≤5]")
    assert dc.arity == 1
    assert dc.predicates == (P(c0("A"), "=", c0("B")), P(c0("C"), "<=", Const("5")))
    assert preds("∀t0∈r,t1∈r: ¬[t1.A=t1.B]") == (P(c0("A"), "=", c0("B")),)


def test_real_metanome_line_with_same_tuple_predicates() -> None:
    line = (
        "∀t0∈clean.csv,t1∈clean.csv: ¬[t0.ProviderNumber≤t1.ProviderNumber∧"
        "t0.Address2=t0.Score∧t0.ZipCode>t1.ZipCode]"
    )
    assert preds(line) == (
        P(c0("ProviderNumber"), "<=", c1("ProviderNumber")),
        P(c0("Address2"), "=", c0("Score")),
        P(c0("ZipCode"), ">", c1("ZipCode")),
    )


# --------------------------------------------------------------------------- FD shorthand


def test_fd_shorthand() -> None:
    assert parse_dc("A, B -> C") == [
        DC((P(c0("A"), "=", c1("A")), P(c0("B"), "=", c1("B")), P(c0("C"), "!=", c1("C"))))
    ]
    assert parse_dc("A→B") == parse_dc("A -> B") == [DC(FD_AB[:1] + (P(c0("B"), "!=", c1("B")),))]
    assert parse_dc("-> C") == [DC((P(c0("C"), "!=", c1("C")),))]
    assert parse_dc('`Object Number`, "Is Highlight" -> `a``b`  # c') == [
        DC(
            (
                P(c0("Object Number"), "=", c1("Object Number")),
                P(c0("Is Highlight"), "=", c1("Is Highlight")),
                P(c0("a`b"), "!=", c1("a`b")),
            )
        )
    ]


def test_fd_one_dc_per_rhs_column_all_with_the_same_name() -> None:
    dcs = parse_dc("fd1: A -> B, C , D", source="r.txt", line=7)
    assert [d.predicates for d in dcs] == [
        (P(c0("A"), "=", c1("A")), P(c0(x), "!=", c1(x))) for x in "BCD"
    ]
    assert {d.name for d in dcs} == {"fd1"}
    assert {(d.source, d.line, d.text) for d in dcs} == {("r.txt", 7, "fd1: A -> B, C , D")}
    assert all(d.id is None for d in dcs)


# --------------------------------------------------------------------------- tuple names


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("not(t.A = t'.B)", (P(c0("A"), "=", c1("B")),)),
        ("not(t'.A = t.B)", (P(c1("A"), "=", c0("B")),)),
        ("not(t1.A = t2.B)", (P(c0("A"), "=", c1("B")),)),
        ("not(t2.A = t1.B)", (P(c1("A"), "=", c0("B")),)),
        ("not(t0.A = t1.B)", (P(c0("A"), "=", c1("B")),)),
        ("not(t1.A = t0.B)", (P(c1("A"), "=", c0("B")),)),
        ("not(s.A = t.B)", (P(c0("A"), "=", c1("B")),)),
        ("not(t.A = s.B)", (P(c1("A"), "=", c0("B")),)),
        # a single name is a single-tuple DC on tuple 0, whichever name it is
        ("not(t.A > 5)", (P(c0("A"), ">", Const("5")),)),
        ("not(t'.A > 5)", (P(c0("A"), ">", Const("5")),)),
        ("not(t1.A > 5)", (P(c0("A"), ">", Const("5")),)),
        ("not(t2.A > t2.B)", (P(c0("A"), ">", c0("B")),)),
        ("not(t0.A > 5)", (P(c0("A"), ">", Const("5")),)),
        ("not(s.A > 5)", (P(c0("A"), ">", Const("5")),)),
    ],
)
def test_tuple_name_conventions(text: str, expected: tuple[Predicate, ...]) -> None:
    assert preds(text) == expected


def test_single_tuple_dc_on_second_name_has_arity_one() -> None:
    dc = one("not(t'.A > 5)")
    assert dc.predicates == (Predicate(Col(0, "A"), ">", Const("5")),)
    assert dc.arity == 1


# --------------------------------------------------------------------------- names, metadata


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("fd1: not(t.A = 1)", "fd1"),
        ("fd1 : not(t.A = 1)", "fd1"),
        ("  my-rule.v2:not(t.A = 1)", "my-rule.v2"),
        ("`my rule: v2`: not(t.A = 1)", "my rule: v2"),
        ('"quoted name" : not(t.A = 1)', "quoted name"),
        ("`a``b`: not(t.A = 1)", "a`b"),
        ("r1: ∀t0∈r.csv,t1∈r.csv: ¬[t0.A=1]", "r1"),
        ("r1: t1&EQ(t1.A,1)", "r1"),
        ("not(t.A = 1)", None),
        ("∀t0∈r.csv,t1∈r.csv: ¬[t0.A=1]", None),
        ('t1&EQ(t1.A,"a:b")', None),
    ],
)
def test_name_prefix(text: str, name: str | None) -> None:
    assert one(text).name == name


def test_metadata() -> None:
    dc = one("  not(t.A = 1)  ")
    assert (dc.source, dc.line, dc.text, dc.name, dc.id) == ("<dc>", 1, "not(t.A = 1)", None, None)
    dc = parse_dc("x: not(t.A = 1) # c", source="cli", line=3)[0]
    assert (dc.source, dc.line, dc.text, dc.name) == ("cli", 3, "x: not(t.A = 1) # c", "x")


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("", 1, "empty DC"),
        ("   # just a comment", 4, "empty DC"),
        ("not()", 5, "empty DC: expected a predicate"),
        ("not( )", 6, "empty DC"),
        ("not(t.A = t'.A", 15, "expected ')' to close the '(' at column 4"),
        ("not(t.A = t'.A]", 15, "expected ')' to close the '(' at column 4"),
        ("¬[t0.A = t1.A)", 14, "expected ']' to close the '[' at column 2"),
        ("not(t.A = t'.A))", 16, "unexpected ')' after the end of the DC"),
        ("not(t.A = t'.A) and", 17, "'and' after the end of the DC; put all of its predicates"),
        ("not(t.A t'.A)", 9, "expected a comparison operator (=, !=, <, <=, >, >=)"),
        ("not(t.A)", 8, "expected a comparison operator"),
        # a name that goes on past what a bare name takes: backticks (a probe's note)
        (
            "not(t.x.y = t'.a)",
            8,
            "operator (=, !=, <, <=, >, >=); a column name with spaces, "
            "dots or other characters goes in backticks: t.`my col` = t'.`my col`",
        ),
        ("not(t.my col = t'.a)", 10, "goes in backticks: t.`my col`"),
        ("not(t.a©b = 1)", 8, "goes in backticks"),
        (
            "my col -> b",
            4,
            "expected ',' or '->' in the FD; a column name with spaces, dots or "
            "other characters goes in backticks: `my col`, b -> c",
        ),
        ("not(t.A =< t'.A)", 9, "unknown operator '=<'; write '<='"),
        ("not(t.A = t'.A ant t.B = 1)", 16, "expected 'and' or ')'"),
        ("not(t.A = t'.A and)", 19, "expected an operand: t.column, a quoted string or a number"),
        ("not(u.A = 1)", 5, "unknown tuple name 'u'; use t/t', t1/t2, t0/t1 or s/t"),
        ("not(t.A = T.B)", 11, "unknown tuple name 'T'"),
        ("not(t. = 1)", 7, "expected a column name after 't.'"),
        ("not(t.A = t'.)", 14, 'expected a column name after "t\'."'),
        ("not(t.`` = 1)", 7, "empty column name"),
        ("not(t.A = foo)", 11, "unexpected word 'foo'"),
        ("not(t.A = t)", 12, "expected '.' and a column name after 't'"),
        ("not(t.A = 'abc)", 11, "unterminated string: missing closing '"),
        ('not(t.A = "abc\\")', 11, 'unterminated string: missing closing "'),
        ("not(t.`abc = 1)", 7, "unterminated quoted name"),
        ("not(1 = 1)", 5, "a predicate needs at least one column"),
        ("not(t.A = 1 and 'a' != \"b\")", 17, "a predicate needs at least one column"),
        ("not(t.A = 5a)", 11, "malformed number '5a'"),
        ("not(t.A = 1.2.3)", 11, "malformed number '1.2.3'"),
        ("not(t.A = t1.A)", 11, "tuple name 't1' mixes naming conventions with 't'"),
        ("not(t0.A = t2.A)", 12, "tuple name 't2' mixes naming conventions with 't0'"),
        ("not(t1.A = t2.A and t0.B = 1)", 21, "'t0' mixes naming conventions with 't1' and 't2'"),
        ("not(s.A = t'.A)", 11, "mixes naming conventions"),
        ("not t.A = 1", 5, "expected '(' or '[' after 'not'"),
        ("¬ t.A = 1", 3, "expected '(' or '[' after '¬'"),
        ("t.A = t'.A", 1, "expected not( before the predicates"),
        ("hello world", 1, "expected a DC"),
        ("∀t0∈r,t1∈r: t0.A = t1.A", 13, "expected ¬(...) or not(...) after the quantifier"),
        ("∀t0∈r,t1∈r ¬[t0.A = t1.A]", 12, "expected ',' or ':' in the quantifier"),
        ("∀t0∈,t1∈r: ¬[t0.A = t1.A]", 5, "expected a relation name after '∈'"),
        ("∀x∈r: ¬[t0.A = 1]", 2, "unknown tuple name 'x'"),
        ("t1&t2&FOO(t1.A,t2.A)", 7, "unknown function 'FOO'; use EQ, IQ, NEQ, LT, GT, LTE, GTE"),
        ("t1&t2&EQ(t1.A;t2.A)", 19, "expected ',' between the arguments of EQ"),
        ("t1&t2&EQ(t1.A,'x'", 18, "expected ')' to close EQ("),
        ("t1&t2&EQ(t1.A,t2.A)&", 21, "expected a predicate such as EQ(t1.A,t2.A)"),
        ("t1&t2&EQ(t1.A,t2.A) t2", 21, "expected '&' between HoloClean predicates"),
        ("t1&t2&EQ(t1.A,t2.A)&t1", 21, "expected a predicate such as EQ(t1.A,t2.A), not 't1'"),
        ("t1&t2", 6, "empty DC: expected a predicate such as EQ(t1.A,t2.A)"),
        ("t1&u2&EQ(t1.A,1)", 4, "unknown tuple name 'u2'"),
        ("t1&t2&EQ(1,2)", 7, "a predicate needs at least one column"),
        ("t1&t2&EQ(t1.,t2.A)", 13, "expected a column name after 't1.'"),
        ("t1&t2&EQ(t1.A,t.A)", 15, "tuple name 't' mixes naming conventions with 't1'"),
        ("A B -> C", 3, "expected ',' or '->' in the FD"),
        ("A, -> C", 4, "expected a column name"),
        ("A ->", 5, "expected a column name"),
        ("A -> B C", 8, "expected ',' or the end of the FD"),
        ("A -> B,", 8, "expected a column name"),
        ("`` -> B", 1, "empty column name"),
        ("name:", 6, "expected a DC after the name"),
        ("``: not(t.A = 1)", 1, "empty DC name"),
        ("x: not(t.A = 1", 15, "expected ')'"),
    ],
)
def test_syntax_errors(text: str, column: int, message: str) -> None:
    with pytest.raises(DCSyntaxError) as info:
        parse_dc(text, source="f.txt", line=9)
    err = info.value
    assert message in err.reason
    assert (err.source, err.line, err.column, err.text) == ("f.txt", 9, column, text)
    assert str(err) == f"f.txt:9:{column}: {err.reason}"
    assert isinstance(err, FacetInputError)


def test_error_columns_count_characters_not_bytes() -> None:
    with pytest.raises(DCSyntaxError) as info:
        parse_dc("∀t0∈réls,t1∈réls: ¬[t0.Ä≠t1.Ä ∧ u.B = 1]")
    assert info.value.column == 33
    assert info.value.detail is not None and info.value.detail.endswith("\n  " + " " * 32 + "^")


# --------------------------------------------------------------------------- rules files


def test_parse_rules_skips_blank_lines_and_comments() -> None:
    text = (
        "# a comment\n"
        "\n"
        "not(t.A = t'.A and t.B != t'.B)   # trailing comment\n"
        "   # indented comment\n"
        "\t\n"
        "fd: A -> C, D\r\n"
        "t1&EQ(t1.A,'# not a comment')\n"
    )
    dcs = parse_rules(text, source="r.txt")
    assert [d.predicates for d in dcs] == [
        FD_AB,
        (P(c0("A"), "=", c1("A")), P(c0("C"), "!=", c1("C"))),
        (P(c0("A"), "=", c1("A")), P(c0("D"), "!=", c1("D"))),
        (P(c0("A"), "=", Const("# not a comment", quoted=True)),),
    ]
    assert [d.line for d in dcs] == [3, 6, 6, 7]
    assert [d.name for d in dcs] == [None, "fd", "fd", None]
    assert dcs[0].text == "not(t.A = t'.A and t.B != t'.B)   # trailing comment"
    assert dcs[1].text == "fd: A -> C, D"
    assert all(d.source == "r.txt" and d.id is None for d in dcs)


def test_parse_rules_reports_the_first_bad_line() -> None:
    text = "not(t.A = 1)\n\n  not(u.A = 1)\nnot(t.A = )\nnot(t.B = 2)\n"
    with pytest.raises(DCSyntaxError) as info:
        parse_rules(text, source="rules.txt")
    err = info.value
    assert (err.source, err.line, err.column) == ("rules.txt", 3, 7)
    assert err.text == "  not(u.A = 1)"
    assert str(err).startswith("rules.txt:3:7: unknown tuple name 'u'")
    assert err.detail == "    not(u.A = 1)\n        ^"
    assert any("rules.txt:4:" in note for note in getattr(err, "__notes__", []))


def test_parse_rules_line_endings_and_bom() -> None:
    dcs = parse_rules("\ufeffnot(t.A = 1)\r\nnot(t.B = 2)\rnot(t.C = 3)")
    assert [d.line for d in dcs] == [1, 2, 3]
    with pytest.raises(DCSyntaxError) as info:
        parse_rules("\ufeffnot(u.A = 1)")
    assert info.value.column == 5
    assert parse_rules("") == [] and parse_rules("# only\n\n") == []


def test_read_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("r.txt").write_bytes("\ufeff# c\r\nnot(t.A = 'é')\r\n".encode())
    dcs = read_rules("r.txt")
    assert dcs == [DC((P(c0("A"), "=", Const("é", quoted=True)),))]
    assert (dcs[0].source, dcs[0].line) == ("r.txt", 2)
    assert read_rules(Path("r.txt"))[0].source == "r.txt"

    Path("bad.txt").write_text("not(t.A = 1)\nnot(t.A = x)\n", encoding="utf-8")
    with pytest.raises(DCSyntaxError) as info:
        read_rules("bad.txt")
    assert str(info.value).startswith("bad.txt:2:11: ")


def test_read_rules_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FacetInputError) as info:
        read_rules("x.txt")
    assert str(info.value) == "cannot read rules file 'x.txt': no such file; check the path"
    assert not isinstance(info.value, DCSyntaxError)

    os.mkdir("d")
    with pytest.raises(FacetInputError, match=r"^cannot read rules file 'd': "):
        read_rules("d")

    Path("latin1.txt").write_bytes(b"not(t.A = '\xe9')\n")
    with pytest.raises(FacetInputError) as info:
        read_rules("latin1.txt")
    assert str(info.value).startswith("latin1.txt:1:12: not UTF-8 text (byte 0xe9)")
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- real rules files

RULE_FILES = sorted(
    p for p in DATA.glob("**/*.txt") if "rules" in p.name or "constraints" in p.name
)


def test_rules_files_are_found() -> None:
    assert len(RULE_FILES) >= 10, RULE_FILES  # every bundled data set has one


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_real_rules_files(path: Path) -> None:
    lines = re.split(r"\r\n|\r|\n", path.read_text(encoding="utf-8-sig"))
    expected = sum(1 for ln in lines if ln.strip() and not ln.strip().startswith("#"))
    dcs = read_rules(path)
    assert len(dcs) == expected
    for dc in dcs:
        assert dc.source == str(path)
        assert dc.text == lines[dc.line - 1].strip()
        assert parse_dc(dc.canonical()) == [dc]
        # every real rule set here is written with exactly two tuples or one
        assert dc.arity in (1, 2)


def test_real_files_spot_checks() -> None:
    adult = read_rules(DATA / "adult" / "adult_constraints.txt")
    assert [d.arity for d in adult] == [2, 2, 1, 1]
    assert adult[3].predicates == (
        P(c0("sex"), "=", Const("male", quoted=True)),
        P(c0("relationship"), "=", Const("wife", quoted=True)),
    )
    tax = read_rules(DATA / "tax" / "dc_rules.txt")
    assert len(tax) == 20
    assert tax[0].predicates == (
        P(c0("phone"), "=", c1("phone")),
        P(c0("zip"), "=", c1("zip")),
        P(c0("f_name"), "!=", c1("f_name")),
    )
    assert tax[10].predicates[:2] == (
        P(c0("area_code"), ">=", c1("area_code")),
        P(c0("salary"), "<=", c1("salary")),
    )


# --------------------------------------------------------------------------- property tests

_WEIRD_NAMES = [
    "Object Number",
    "a`b",
    "``",
    "it's",
    'say "hi"',
    "a,b",
    "x)y",
    "(z",
    "#hash",
    "naïve",
    "名前",
    " lead",
    "trail ",
    "1st",
    "a.b",
    "back\\slash",
    "and",
    "not",
    "t",
    "a:b",
    "-",
]
_PLAIN = st.from_regex(r"[^\W\d]\w{0,6}", fullmatch=True)
_ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=8)
NAMES = st.one_of(_PLAIN, st.sampled_from(_WEIRD_NAMES), _ANY_TEXT)
NUMBERS = st.from_regex(
    r"[+-]?([0-9]{1,4}\.?[0-9]{0,3}|\.[0-9]{1,3})([eE][+-]?[0-9]{1,2})?", fullmatch=True
)
STRINGS = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)
CONSTS = st.one_of(
    NUMBERS.map(Const),
    STRINGS.map(lambda s: Const(s, quoted=True)),
    st.sampled_from(['"', "'", "\\", '\\"', "''", '""', "a\\'b", "#", ")", "]"]).map(
        lambda s: Const(s, quoted=True)
    ),
)
COLS = st.builds(Col, st.integers(0, 1), NAMES)


@st.composite
def predicates(draw: st.DrawFn) -> Predicate:
    left = draw(st.one_of(COLS, CONSTS))
    right = draw(COLS if isinstance(left, Const) else st.one_of(COLS, CONSTS))
    return Predicate(left, draw(st.sampled_from(OPS)), right)


@st.composite
def dcs(draw: st.DrawFn) -> DC:
    ps = draw(st.lists(predicates(), min_size=1, max_size=4))
    if not any(0 in p.tuples() for p in ps):  # only t' mentioned: that is a DC on t
        ps = [p.swapped_tuples() for p in ps]
    name = draw(st.none() | NAMES)
    return DC(tuple(ps), name)


@settings(max_examples=400, deadline=None)
@given(dcs())
def test_canonical_round_trip(dc: DC) -> None:
    text = dc.canonical()
    assert parse_dc(text) == [dc]
    if "\n" not in text and "\r" not in text:  # one line of a rules file
        assert parse_rules(f"# rules\n\n  {text}  # comment\n") == [dc]


_CONVENTIONS = [("t", "t'"), ("t1", "t2"), ("t0", "t1"), ("s", "t")]
_SPELLINGS = {
    "=": ["=", "=="],
    "!=": ["!=", "<>", "≠"],
    "<": ["<"],
    "<=": ["<=", "≤"],
    ">": [">"],
    ">=": [">=", "≥"],
}
_FUNCTIONS = {
    "=": ["EQ", "eq"],
    "!=": ["IQ", "NEQ"],
    "<": ["LT"],
    "<=": ["LTE"],
    ">": ["GT"],
    ">=": ["GTE", "gte"],
}


def _double_quoted(s: str) -> str:
    return quote_string(s)


def _single_quoted(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"


@st.composite
def renderings(draw: st.DrawFn) -> tuple[DC, str]:
    """A DC and the same DC in another spelling (paper, Metanome or HoloClean)."""
    dc = draw(dcs())
    conv = draw(st.sampled_from(_CONVENTIONS))
    if dc.arity == 1:  # a single-tuple DC may use either name of the convention
        conv = (draw(st.sampled_from(conv)),) * 2
    style = draw(st.sampled_from(["paper", "metanome", "holoclean"]))

    def column(c: Col) -> str:
        name = c.name
        if style == "holoclean":
            # a bare name runs to the next ',' or ')' on its line (a DC is one line)
            raw_ok = name == name.strip() and not set(name) & set(",)\r\n") and name[0] not in '`"'
            if raw_ok and draw(st.booleans()):
                return f"{conv[c.tuple]}.{name}"
            return f"{conv[c.tuple]}.{quote_identifier(name)}"
        if quote_identifier(name) != name and draw(st.booleans()):
            text = f"{conv[c.tuple]}.{_double_quoted(name)}"
        else:
            text = f"{conv[c.tuple]}.{quote_identifier(name)}"
        if style == "metanome" and draw(st.booleans()):
            text += draw(st.sampled_from(["(String)", "(Integer)", " (Double)"]))
        return text

    def operand(o: Col | Const) -> str:
        if isinstance(o, Col):
            return column(o)
        if not o.quoted:
            return o.text
        return draw(st.sampled_from([_double_quoted, _single_quoted]))(o.text)

    if style == "holoclean":
        header = "&".join(dict.fromkeys(conv)) + "&" if draw(st.booleans()) else ""
        calls = [
            f"{draw(st.sampled_from(_FUNCTIONS[p.op]))}({operand(p.left)},{operand(p.right)})"
            for p in dc.predicates
        ]
        body = header + "&".join(calls)
    else:
        sp = draw(st.sampled_from(["", " "]))
        conj = draw(st.sampled_from([" and ", " AND ", "∧", " ^ ", "&&", " & "]))
        parts = [
            f"{operand(p.left)}{sp}{draw(st.sampled_from(_SPELLINGS[p.op]))}{sp}{operand(p.right)}"
            for p in dc.predicates
        ]
        neg = draw(st.sampled_from(["not", "NOT ", "¬", "!", "not "]))
        opener, closer = draw(st.sampled_from(["()", "[]"]))
        body = f"{neg}{opener}{conj.join(parts)}{closer}"
        if style == "metanome":
            a, b = conv
            body = f"∀{a}∈clean.csv,{b}∈clean.csv: {body}"
    if dc.name is not None:
        body = f"{quote_identifier(dc.name)}: {body}"
    return dc, body


@settings(max_examples=400, deadline=None)
@given(renderings())
def test_other_spellings_parse_to_the_same_dc(case: tuple[DC, str]) -> None:
    dc, text = case
    assert parse_dc(text) == [dc], text


@pytest.mark.parametrize(
    "text",
    [
        "not(t.A = t'.A) # note\nnot(t.B = t'.B)",  # a comment ends at its line break
        "A -> B # note\nB -> A",
        "t1&t2&EQ(t1.A,t2.A) # note\nt1&t2&EQ(t1.B,t2.B)",
        "t1&t2&EQ(t1.A\n,t2.A)",  # a bare HoloClean column ends at its line
        "t1&t2&EQ(t1.A,t2.A\r\n)",
    ],
)
def test_a_line_break_inside_dc_text_is_refused_after_comments_and_bare_columns(text):
    """A ``--dc`` text is one DC on one line (docs/semantics.md §5): neither a
    ``#`` comment nor a HoloClean bare column hides a line break with more text
    after it (a contract probe's findings: the second DC was dropped silently)."""
    with pytest.raises(DCSyntaxError, match="line break inside one DC") as e:
        parse_dc(text)
    column = min(text.index(c) for c in "\r\n" if c in text) + 1
    assert e.value.column == column
    # trailing line breaks and spaces after a comment stay ignored
    assert parse_dc("not(t.A = t'.A) # note\n \r\n") == parse_dc("not(t.A = t'.A)")


def test_an_fd_column_named_forall_is_not_a_quantifier():
    """``forall -> B`` is an FD (as ``not -> B`` is); ``forall t0 in r ...`` is
    still Metanome's quantifier."""
    fd = [DC((Predicate(Col(0, "forall"), "=", Col(1, "forall")), _ne("B")))]
    assert parse_dc("forall -> B") == fd
    assert parse_dc("forall  → B") == fd
    assert parse_dc("forall, C -> B")[0].predicates[1] == _eq("C")
    assert parse_dc("forall t0 in r, t1 in r: not(t0.B = t1.B)") == [DC((_eq("B"),))]


def test_grouping_brackets_nest_to_any_depth():
    """Inner brackets only group predicates: 5,000 levels parse (no recursion
    per level) to the flat DC; errors inside still name the open bracket."""
    flat = parse_dc("not(t.A = t'.A and t.B < t'.B)")
    deep = "not(" + "(" * 5000 + "t.A = t'.A" + ")" * 5000 + " and [[t.B < t'.B]])"
    assert parse_dc(deep) == flat
    with pytest.raises(DCSyntaxError, match="1:38: expected '\\)' to close the '\\(' at column 4"):
        parse_dc("not((((t.A = t'.A)) and (t.B < t'.B))")
    with pytest.raises(DCSyntaxError, match="1:18: expected '\\]' to close the '\\[' at column 7"):
        parse_dc("not((([t.A = t'.A) and t.B < t'.B))")
    with pytest.raises(DCSyntaxError, match="^<dc>:1:9: expected a predicate"):
        parse_dc("not(((  )))")
    with pytest.raises(DCSyntaxError, match="empty DC: expected a predicate"):
        parse_dc("not(  )")


def _eq(c: str) -> Predicate:
    return Predicate(Col(0, c), "=", Col(1, c))


def _ne(c: str) -> Predicate:
    return Predicate(Col(0, c), "!=", Col(1, c))


@pytest.mark.parametrize("text", ["not(t.A t'.A)", "not(t.A 5)", "not(t.A 'x')", "not(t.A)"])
def test_a_missing_operator_gets_no_backticks_hint(text: str) -> None:
    """The backticks hint is for a name that goes on, not a missing operator."""
    with pytest.raises(DCSyntaxError) as info:
        parse_dc(text)
    assert info.value.reason == "expected a comparison operator (=, !=, <, <=, >, >=)"
