"""Warnings (docs/semantics.md §9): from Python each is a ``facet.FacetWarning`` issued
through :mod:`warnings` at the user's call (and kept in ``result.warnings``); the command
line prints each once, as ``facet: warning: ...``; a cause shared by several columns and
DCs is one warning naming them."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pandas as pd
import pytest

import facet

ROOT = Path(__file__).resolve().parent.parent
TAX = ROOT / "data" / "tax" / "tax_dirty_0010k.csv"
RULES = ROOT / "data" / "tax" / "dc_rules.txt"
ORDERED = "not(t.state = t'.state and t.salary > t'.salary and t.rate < t'.rate)"


def _frame() -> pd.DataFrame:
    """Numbers read as text (pandas ``dtype=str``): a DC that orders them compares text."""
    return pd.DataFrame(
        {"state": ["NY", "NY", "NY"], "salary": ["100", "20", "3"], "rate": ["1", "2", "3"]},
        dtype=str,
    )


def test_a_warning_is_a_facet_warning_at_the_users_call():
    assert issubclass(facet.FacetWarning, UserWarning) and "FacetWarning" in facet.__all__
    with pytest.warns(facet.FacetWarning, match="is text") as record:
        line = inspect.currentframe().f_lineno + 1
        res = facet.detect(_frame(), dcs=[ORDERED])
    facet_warnings = [w for w in record if issubclass(w.category, facet.FacetWarning)]
    assert [str(w.message) for w in facet_warnings] == res.warnings
    assert len(res.warnings) == 2  # salary and rate
    assert {(w.filename, w.lineno) for w in facet_warnings} == {(__file__, line)}


@pytest.mark.parametrize("call", ["detect", "explain", "Detector"])
def test_every_entry_point_issues_them_and_an_error_filter_raises(call):
    run = getattr(facet, call)
    with pytest.warns(facet.FacetWarning, match="compares as text"):
        run(_frame(), dcs=[ORDERED])
    with warnings.catch_warnings():
        warnings.simplefilter("error", facet.FacetWarning)
        with pytest.raises(facet.FacetWarning, match="compares as text"):
            run(_frame(), dcs=[ORDERED])


def test_on_warning_takes_them_instead():
    said: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", facet.FacetWarning)
        res = facet.detect(_frame(), dcs=[ORDERED], on_warning=said.append)
    assert said == res.warnings and len(said) == 2


def test_the_default_filter_shows_each_once_per_place():
    script = textwrap.dedent(
        """
        import pandas as pd
        import facet

        df = pd.DataFrame({"s": ["1", "2"], "v": ["5", "40"]}, dtype=str)
        for _ in range(3):
            facet.detect(df, dcs=["not(t.s < t'.s and t.v > t'.v)"])
        facet.detect(df, dcs=["not(t.s < t'.s and t.v > t'.v)"])
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "FacetWarning" in ln]
    # two columns, each from the loop's line and from the last line
    assert len(lines) == 4, proc.stderr
    assert sorted(ln.split(": FacetWarning")[0] for ln in lines) == [
        "<string>:7", "<string>:7", "<string>:8", "<string>:8",
    ]  # fmt: skip


def test_one_warning_names_every_column_and_dc_of_a_cause():
    """data/tax/dc_rules.txt orders seven columns that other DCs compare with =/!=:
    one warning, not one per column."""
    with pytest.warns(facet.FacetWarning) as record:
        res = facet.detect(TAX, RULES)
    numbers = [w for w in res.warnings if "as numbers" in w]
    assert numbers == [
        f"{RULES}: columns 'zip', 'rate', 'area_code', 'single_exemp', 'married_exemp', "
        "'child_exemp', 'salary' compare as numbers because another DC orders them with "
        "< <= > >=; values that differ as text but not as numbers (5 and 5.0, 01907 and "
        "1907) count as equal (DCs 0-10, 15, 17-19)"
    ]
    assert [str(w.message) for w in record if "as numbers" in str(w.message)] == numbers


def test_the_command_line_prints_each_warning_once(tmp_path):
    exe = [sys.executable, "-m", "facet", "detect"]
    proc = subprocess.run([*exe, str(TAX), "--rules", str(RULES), "-q", "--exit-zero"],
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert all(ln.startswith("facet: warning: ") for ln in lines), proc.stderr
    assert len(lines) == len(set(lines)) == 2  # rate's NaN, and the numbers
    assert "compare as numbers" in lines[1] and lines[1].endswith("(DCs 0-10, 15, 17-19)")
    # the same batch appended twice warns of its values once
    base, batch = tmp_path / "base.csv", tmp_path / "batch.csv"
    base.write_text("a,b\n1,2\nx,3\n")
    batch.write_text("a,b\n1,2\ny,3\n")
    proc = subprocess.run(
        [*exe, str(base), "--dc", "not(t.a < t'.a and t.b = t'.b)", "--append", str(batch),
         "--append", str(batch), "-q", "--exit-zero"], capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"facet: warning: {base}: column 'a': 1 value not a number (e.g. 'x') read as NULL",
        f"facet: warning: {batch}: column 'a': 1 value not a number (e.g. 'y') read as NULL",
    ]
