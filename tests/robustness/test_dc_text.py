"""Malformed DCs in every accepted syntax, and rules files (docs/semantics.md §5, §9).

Each malformed DC must stop the run with exit 2 and one line naming ``--dc:N:COLUMN``
(or ``rules.txt:LINE:COLUMN``) at the right column; the accepted forms must
count what tests/naive.py counts.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.robustness.harness import (
    Case,
    Dir,
    Symlink,
    api_params,
    assert_no_traceback,
    check_api,
    check_cli,
    cli_params,
    cli_runs_fixture,
    csv_text,
    run_api,
)

T = pa.table(
    {
        "a": pa.array([1, 1, 2, 3, None], pa.int64()),
        "b": ["x", "y", "x", "x", "y"],
        "c": pa.array([10, 20, 20, 5, 7], pa.int64()),
        "my col": ["p", "p", "q", "q", "p"],
    }
)
FILES = {"t.csv": csv_text(T)}


def bad(case_id: str, text: str, column: int, what: str, hint: str) -> Case:
    """A ``--dc`` that does not parse: the error is at ``--dc:1:column``."""
    return Case(
        case_id,
        dcs=(text,),
        files=FILES,
        error=(f"--dc:1:{column}: ", what),
        hint=hint,
        caret=column,
    )


PAPER = [
    bad("paper-empty", "not()", 5, "empty DC", "expected a predicate"),
    bad("paper-unclosed", "not(t.a = t'.a", 15, "expected ')'", "to close the '(' at column 4"),
    bad("paper-extra-close", "not(t.a = t'.a))", 16, "unexpected ')'", "remove it"),
    bad("paper-mismatched-brackets", "not[t.a = t'.a)", 15, "expected ']'", "to close the '['"),
    bad("paper-missing-operator", "not(t.a t'.a)", 9, "expected a comparison", "=, !=, <, <="),
    bad("paper-unknown-operator", "not(t.a ~ t'.a)", 9, "expected a comparison", "=, !=, <, <="),
    bad("paper-misspelled-operator", "not(t.a => t'.a)", 9, "unknown operator '=>'", "'>='"),
    bad("paper-missing-operand", "not(t.a = )", 11, "expected an operand", "a quoted string"),
    bad("paper-unknown-tuple", "not(x.a = t'.a)", 5, "unknown tuple name 'x'", "use t/t'"),
    bad("paper-mixed-tuples", "not(t.a = t1.a)", 11, "mixes naming", "use one convention"),
    bad(
        "paper-one-and-two-mixing",
        "not(t.a = t'.a and t'.b = t2.b)",
        27,
        "tuple name 't2' mixes naming conventions",
        "use one convention per DC",
    ),
    bad("paper-trailing-garbage", "not(t.a = t'.a) garbage", 17, "unexpected 'g'", "remove it"),
    bad("paper-two-negations", "not(t.a = t'.a) and not(t.b = t'.b)", 17, "'and' after", "two DCs"),
    bad("paper-and-outside", "not(t.a = t'.a) and (t.b = t'.b)", 17, "'and' after", "inside one"),
    bad("paper-or", "not(t.a = t'.a or t.b != t'.b)", 16, "has no 'or'", "each on its own"),
    bad("paper-dangling-and", "not(t.a = t'.a and)", 19, "expected an operand", "t.column"),
    bad("paper-leading-and", "not(and t.a = t'.a)", 5, "unexpected word 'and'", "t.column"),
    bad("paper-chained", "not(t.a = 1 = 2)", 13, "expected 'and' or ')'", "to close"),
    bad("paper-no-column", "not(1 = 2)", 5, "at least one column", "e.g. t.A = 5"),
    bad("paper-no-column-name", "not(t. = t'.a)", 7, "expected a column name", "after 't.'"),
    bad("paper-unterminated-string", "not(t.b = 'x)", 11, "unterminated string", "add it"),
    bad("paper-unterminated-backticks", "not(t.`a = t'.a)", 7, "unterminated", "add it"),
    bad("paper-empty-backticks", "not(t.`` = t'.a)", 7, "empty column name", "write the name"),
    bad("paper-bare-word", "not(t.b = Lynn)", 11, "unexpected word 'Lynn'", '("Lynn")'),
    bad("paper-null", "not(t.a = null)", 11, "'null' is not a value", "t.A = t.A"),
    bad("paper-malformed-number", "not(t.a = 12a)", 11, "malformed number", 'quote text: "12a"'),
    bad("paper-no-negation", "t.a = t'.a", 1, "expected not(", "e.g. not(t.A"),
    bad("paper-not-without-bracket", "not t.a = t'.a", 5, "expected '(' or '['", "after 'not'"),
    bad("paper-double-prime", "not(t.a = t''.a)", 13, "expected '.'", "and a column name"),
    bad("paper-line-break", "not(t.a = t'.a)\nnot(t.b = t'.b)", 16, "line break", "own --dc"),
    bad("paper-tabs", "not(t.a\t=\tt'.a\tand\t)", 20, "expected an operand", "t.column"),
    bad("paper-escape-char", "not(t.a = t'.a)\x1b[31m", 16, "unexpected '\\x1b'", "remove it"),
    bad("paper-zero-width-space", "not(t.a\u200b = t'.a)", 8, "expected a comparison", "U+200B"),
    bad("paper-no-form", "(t.a = t'.a)", 1, "expected a DC: not(...)", "HoloClean"),
]

SYMBOLS = [
    bad("symbols-dangling-and", "¬(t.a = t'.a ∧)", 15, "expected an operand", "t.column"),
    bad("symbols-no-bracket", "¬t.a = t'.a", 2, "expected '(' or '['", "after '¬'"),
    bad("symbols-unknown-operator", "¬(t.a ≤≤ t'.a)", 7, "unknown operator '≤≤'", "use =, !="),
    bad("symbols-unclosed", "¬[t.a ≠ t'.a", 13, "expected ']'", "to close the '['"),
]

HOLOCLEAN = [
    bad("holoclean-unclosed", "t1&t2&EQ(t1.a,t2.a", 19, "expected ')'", "to close EQ("),
    bad("holoclean-unknown-function", "t1&t2&FOO(t1.a,t2.a)", 7, "unknown function", "use EQ, IQ"),
    bad("holoclean-one-argument", "t1&t2&EQ(t1.a)", 14, "expected ','", "between the arguments"),
    bad("holoclean-three-arguments", "t1&t2&EQ(t1.a,t2.a,t1.b)", 19, "expected ')'", "close EQ("),
    bad("holoclean-header-only", "t1&t2&", 7, "expected a predicate", "such as EQ("),
    bad("holoclean-trailing-amp", "t1&t2&EQ(t1.a,t2.a)&", 21, "expected a predicate", "EQ("),
    bad("holoclean-unknown-tuple", "t1&t3&EQ(t1.a,t3.a)", 4, "unknown tuple name 't3'", "t1/t2"),
    bad("holoclean-mixed-tuples", "t1&t2&EQ(t1.a,t'.a)", 15, "mixes naming", "one convention"),
    bad("holoclean-missing-amp", "t1&t2&EQ(t1.a,t2.a)EQ(t1.b,t2.b)", 20, "expected '&'", "between"),
    bad("holoclean-no-column", 't1&EQ("x","y")', 4, "at least one column", "e.g. t.A = 5"),
    bad("holoclean-bare-value", "t1&EQ(t1.b,x)", 12, "unexpected word 'x'", '("x")'),
]

METANOME = [
    bad("metanome-open-annotation", "¬(t0.a(String == t1.a)", 7, "expected a comparison", "!="),
    bad("metanome-no-colon", "∀t0∈r,t1∈r ¬[t0.a=t1.a]", 12, "expected ',' or ':'", "quantifier"),
    bad("metanome-no-negation", "∀t0∈r,t1∈r: [t0.a=t1.a]", 13, "expected ¬(...)", "quantifier"),
    bad("metanome-bad-variable", "∀x∈r: ¬[t0.a=t1.a]", 2, "unknown tuple name 'x'", "t0/t1"),
    bad("metanome-unclosed", "¬[t0.a=t1.a", 12, "expected ']'", "to close the '['"),
    bad(
        "metanome-forall-no-relation",
        "forall t0 in , t1 in r: not(t0.a = t1.a)",
        14,
        "expected a relation name",
        "after 'in'",
    ),
]

FD = [
    bad("fd-no-rhs", "a ->", 5, "expected a column name", "column name"),
    bad("fd-arrow-only", "->", 3, "expected a column name", "column name"),
    bad("fd-missing-comma", "a b -> c", 3, "expected ',' or '->'", "in the FD"),
    bad("fd-trailing-comma", "a -> b,", 8, "expected a column name", "column name"),
    bad("fd-double-comma", "a,,b -> c", 3, "expected a column name", "column name"),
    bad("fd-two-arrows", "a -> b -> c", 8, "expected ',' or the end", "of the FD"),
    bad("fd-tuple-prefix", "t.a -> t.b", 2, "expected ',' or '->'", "in the FD"),
    bad("fd-unclosed-backticks", "`a -> b", 1, "unterminated quoted name", "add it"),
    bad("fd-trailing-bracket", "a → b )", 7, "expected ',' or the end", "of the FD"),
]

GENERAL = [
    bad("empty", "", 1, "empty DC", "expected not(...)"),
    bad("blank", "   ", 4, "empty DC", "expected not(...)"),
    bad("comment-only", "# nothing", 1, "empty DC", "expected not(...)"),
    bad("name-only", "x:", 3, "expected a DC", "after the name"),
    bad("empty-name", '"": not(t.a = t\'.a)', 1, "empty DC name", "write a name"),
    Case(
        "second-dc-bad",
        dcs=("a -> b", "not(t.a = t'.a"),
        files=FILES,
        error=("--dc:2:15: ", "expected ')'"),
        hint="to close the '('",
        caret=15,
    ),
]

RULES = "# rules for t.csv\nnot(t.a = t'.a)\n\nnot(t.a = t'.a and t.b)\n"
RULES_FILES = [
    Case(
        "rules-bad-line",
        rules="rules.txt",
        files={**FILES, "rules.txt": RULES},
        error=("rules.txt:4:23: ", "expected a comparison operator"),
        hint="=, !=",
        caret=23,
    ),
    Case(
        "rules-crlf-bad-line",
        rules="rules.txt",
        files={**FILES, "rules.txt": RULES.replace("\n", "\r\n")},
        error=("rules.txt:4:23: ", "expected a comparison operator"),
        hint="=, !=",
        caret=23,
    ),
    Case(
        "rules-bom-bad-first-line",
        rules="rules.txt",
        files={**FILES, "rules.txt": "\ufeffnot(t.a = t'.a\n"},
        error=("rules.txt:1:15: ", "expected ')'"),
        hint="to close",
        caret=15,
    ),
    Case(
        "rules-several-bad-lines",
        rules="rules.txt",
        files={**FILES, "rules.txt": "a -> b\nnot(t.a = )\nt1&t2&FOO(t1.a,t2.a)\nnot(\n"},
        error=("rules.txt:2:11: ", "expected an operand"),
        hint="t.column",
        caret=11,
    ),
    Case(
        "rules-not-utf8",
        rules="rules.txt",
        files={**FILES, "rules.txt": b"a -> b\nnot(t.b\xff = t'.b)\n"},
        error=("rules.txt:2:8: ", "not UTF-8"),
        hint="save it as UTF-8",
    ),
    Case(
        "rules-is-parquet",
        rules="t.parquet",
        files={**FILES, "t.parquet": T},
        error=("t.parquet:", "not UTF-8"),
        hint="one DC per line",
    ),
    Case(
        "rules-missing",
        rules="nowhere.txt",
        files=FILES,
        error=("'nowhere.txt'", "no such file"),
        hint="check the path",
    ),
    Case(
        "rules-directory",
        rules="rules.d",
        files={**FILES, "rules.d": Dir()},
        error=("'rules.d'", "directory"),
        hint="give the path of a rules file",
    ),
    Case(
        "rules-broken-symlink",
        rules="rules.txt",
        files={**FILES, "rules.txt": Symlink("gone.txt")},
        error=("'rules.txt'", "broken symbolic link"),
        hint="fix the link",
    ),
    Case(
        "rules-non-utf8-name",
        rules="r\udcffles.txt",
        files={**FILES, "r\udcffles.txt": "not(t.a = \n"},
        error=("les.txt:1:11: ", "expected an operand"),
        hint="t.column",
        caret=11,
    ),
    Case(
        "rules-only-comments",
        rules="rules.txt",
        files={**FILES, "rules.txt": "# nothing yet\n\n   \n"},
        error=("rules.txt", "no"),
        hint="one DC per line",
    ),
]

#: every accepted spelling (docs/semantics.md §5), run together and checked against naive
ACCEPTED = [
    Case(
        "accepted-forms",
        dcs=(
            "not(t.a = t'.a and t.b != t'.b)",
            "¬(t.a = t'.a ∧ t.b ≠ t'.b)",
            "not(t1.a = t2.a ^ t1.b <> t2.b)",
            "t1&t2&EQ(t1.a,t2.a)&IQ(t1.b,t2.b)",
            "¬(t0.a(String) == t1.a(String) ^ t0.b(String) <> t1.b(String))",
            "∀t0∈r,t1∈r: ¬[t0.a=t1.a∧t0.b≠t1.b]",
            "forall s in r, t in r: NOT[s.a = t.a AND s.b != t.b]",
            "a -> b",
            "fd1: a, `my col` → b, c",
            't1&EQ(t1.b,"x")&GT(t1.c,"7")',
            "t1&t2&EQ(t1.my col,t2.my col)&LT(t1.c,t2.c)",
            "not(t.`my col` = t'.\"my col\" and t.c >= t'.c) # a comment",
            "\t named : not( ( t.a = t'.a ) and [ t.c < t'.c ] )  ",
            "not(t.a = t'.a)\n",
        ),
        files=FILES,
        table=T,
    ),
    Case(
        "accepted-rules-file",
        rules="rules.txt",
        files={
            **FILES,
            "rules.txt": "\ufeff# comment\r\na -> b\r\n\r\n  # indented comment\r\n"
            "not(t.c > t'.c and t.b = t'.b)\rt1&LTE(t1.c,10)\n",
        },
        table=T,
    ),
    Case(
        "accepted-rules-from-stdin",
        rules="/dev/stdin",
        files=FILES,
        stdin=b"a -> b\nnot(t.c < t'.c)\n",
        table=T,
    ),
]

CASES = PAPER + SYMBOLS + HOLOCLEAN + METANOME + FD + GENERAL + RULES_FILES + ACCEPTED
cli_runs = cli_runs_fixture(CASES)


@pytest.mark.parametrize("case", cli_params(CASES))
def test_cli(case: Case, cli_runs) -> None:
    check_cli(case, cli_runs[case.id])


@pytest.mark.parametrize("case", api_params(CASES))
def test_api(case: Case, tmp_path) -> None:
    check_api(case, run_api(case, tmp_path))


def test_no_traceback_on_stderr(cli_runs) -> None:
    assert_no_traceback(cli_runs)
