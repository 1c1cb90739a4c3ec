"""The HTML report (``facet report``, ``Result.to_html``; docs/report.md), opened in
headless Debian chromium through Selenium (``scripts/setup.sh`` installs both): the
shaded cells are the ``suspects`` output's top cells, a click explains the right DC with
a real partner row, the keyboard reaches the explanation, and the file is offline."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import facet

ROOT = Path(__file__).resolve().parent.parent
HOSPITAL = ROOT / "data" / "adr" / "hospital"
RULES = HOSPITAL / "dc_rules_holoclean.txt"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver, "chromium and chromedriver are missing: run scripts/setup.sh"
    opts = Options()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):  # fmt: skip
        opts.add_argument(arg)
    # its singleton sockets in pytest's folder (in /tmp they outlived every run)
    tmp = str(tmp_path_factory.mktemp("chromium"))
    opts.add_argument(f"--user-data-dir={tmp}")
    d = webdriver.Chrome(service=Service(driver, env=dict(os.environ, TMPDIR=tmp)), options=opts)
    yield d
    d.quit()


def _open(browser, path: Path) -> float:
    """Load the report; seconds until its script has rendered the page."""
    start = time.perf_counter()
    browser.get(path.as_uri())
    WebDriverWait(browser, 120).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"
    )
    return time.perf_counter() - start


@pytest.fixture(scope="module")
def hospital_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "hospital.html"
    proc = subprocess.run(
        [sys.executable, "-m", "facet", "report", str(HOSPITAL / "dirty.csv"), "--rules",
         str(RULES), "--out", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # violations found (DESIGN §5's exit codes)
    assert "report written to" in proc.stdout
    return out


def test_suspects_are_shaded_and_a_click_explains_the_dc_and_a_partner(
    browser, hospital_report, tmp_path
):
    res = facet.detect(HOSPITAL / "dirty.csv", RULES, output="suspects")
    suspects = res.suspects().to_pylist()
    columns = list(json.loads(_data(hospital_report))["columns"])
    _open(browser, hospital_report)
    shaded = {
        int(td.get_attribute("data-rank")): (
            int(td.get_attribute("data-tid")),
            columns[int(td.get_attribute("data-col"))],
        )
        for td in browser.find_elements(By.CSS_SELECTOR, "td.suspect")
    }
    # the first page holds the ten likeliest wrong cells, shaded with their ranks
    assert set(range(1, 11)) <= set(shaded)
    for rank, cell in shaded.items():
        assert cell == (suspects[rank - 1]["tid"], suspects[rank - 1]["column"])
    tid, column = shaded[1]
    top = browser.find_element(By.CSS_SELECTOR, 'td.suspect[data-rank="1"]')
    top.click()
    panel = browser.find_element(By.ID, "explain")
    text = panel.text
    assert f"Row {tid}, column {column}" in text and "suspect #1" in text
    # the first DC explained holds this column and this row, and its partner is real
    block = panel.find_element(By.CSS_SELECTOR, ".dcblock")
    dc_id = int(block.get_attribute("data-dc"))
    dc = res.dcs[dc_id]
    assert column in dc.dc and dc.dc in block.text
    partner = int(re.search(r"with row (\d+)", block.text).group(1))
    pairs = facet.detect(HOSPITAL / "dirty.csv", dcs=[dc.dc], output="pairs").pairs()
    violating = set(zip(pairs["t1"].to_pylist(), pairs["t2"].to_pylist(), strict=True))
    assert (tid, partner) in violating or (partner, tid) in violating
    # a partner link jumps to that row
    block.find_element(By.CSS_SELECTOR, f'button[data-goto="{partner}"]').click()
    focused = browser.switch_to.active_element
    assert focused.get_attribute("data-tid") == str(partner)
    shot = tmp_path / "report.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000


def _box(browser, css: str) -> tuple[float, float]:
    """The element's top and bottom in the viewport."""
    return tuple(browser.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return [r.top, r.bottom];", css))  # fmt: skip


def test_the_first_screen_shows_the_numbers_and_the_data(browser, hospital_report):
    """At 1400x1000 the first screen holds the summary numbers, the top of the per-DC
    table and the first rows of the data (the likeliest wrong cell's row first); the
    chart's axis says it is log-scaled; each DC's time reads in ms or s to two
    significant digits (never 0.000); counts are pluralized."""
    _open(browser, hospital_report)
    browser.execute_script("window.scrollTo(0, 0)")
    height = browser.execute_script("return window.innerHeight")
    assert height > 800
    for css in ("#stats", "#dctable tbody tr", "#data tbody tr:nth-child(8)",
                'td.suspect[data-rank="1"]'):  # fmt: skip
        top, bottom = _box(browser, css)
        assert top >= 0 and bottom <= height, (css, top, bottom, height)
    stats = browser.find_element(By.ID, "stats").text
    for part in ("1,000 rows", "15 DCs", "25,472 violations", "1,000 rows in a violation"):
        assert part in stats, stats
    axis = browser.find_element(By.ID, "chartaxis")
    assert "log scale" in axis.text and "log scale" in axis.get_attribute("aria-label")
    assert [t.text for t in axis.find_elements(By.CSS_SELECTOR, ".ticklabel")] == ["1", "10", "100",
                                                                                  "1k"]  # fmt: skip
    times = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#dctable td.time")]
    assert len(times) == 15
    assert all(re.fullmatch(r"<1 ms|\d\.\d m?s|[1-9][\d,]+ m?s", t) for t in times), times
    assert "0.000" not in browser.find_element(By.TAG_NAME, "body").text


def test_one_of_everything_is_singular(browser, tmp_path, capsys):
    """One DC, one violation, one violating row: "1 DC", never "1 DCs" or "DC(s)"."""
    from facet.cli import main

    csv = tmp_path / "one.csv"
    csv.write_text("a,b\n1,x\n5,y\n")
    out = tmp_path / "one.html"
    assert main(["report", str(csv), "--dc", "not(t.a > 2)", "--out", str(out)]) == 1
    line = capsys.readouterr().out
    assert f"{csv}: 2 rows, 1 DC, 1 violation; report written to {out}" in line
    _open(browser, out)
    stats = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#stats li")]
    assert stats[:5] == ["2 rows", "1 DC", "1 violation", "1 row in a violation", "1 suspect cell"]
    assert "1 row is in a violation" in browser.find_element(By.ID, "datanote").text
    assert browser.find_element(By.CSS_SELECTOR, "#dcfilter option[value='0']").text == (
        "DC 0 (1 row)"
    )
    assert browser.find_element(By.CSS_SELECTOR, "#dctable tbody td.num").text == "1 row"
    assert re.search(r"\b1 (DCs|violations|rows)\b|\(s\)", browser.find_element(
        By.TAG_NAME, "body").text) is None  # fmt: skip


def test_columns_that_could_not_be_read_are_named_under_the_data(browser, tmp_path):
    from tests.test_report_inputs import quirky_inputs

    data = dict((p.name, p) for p, _ in quirky_inputs(tmp_path))["corrupt.arrow"]
    out = tmp_path / "corrupt.html"
    facet.detect(data, dcs=["a -> b"]).to_html(out)
    _open(browser, out)
    note = browser.find_element(By.ID, "notes").text
    assert "Not readable, shown as NULL (no DC reads them): column c (" in note
    assert ", column d (" in note
    heads = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#data thead button")]
    assert heads == ["tid", "a", "b", "x", "x", "s", "c", "d"]


def test_keyboard_reaches_cells_and_the_explanation(browser, hospital_report):
    _open(browser, hospital_report)
    first = browser.find_element(By.CSS_SELECTOR, "#data tbody td[data-col='0']")
    assert first.get_attribute("tabindex") == "0"
    first.send_keys(Keys.ARROW_RIGHT)
    moved = browser.switch_to.active_element
    assert moved.get_attribute("data-col") == "1"
    moved.send_keys(Keys.ENTER)
    active = browser.switch_to.active_element
    assert active.get_attribute("id") == "explain"  # focus moved to the explanation
    assert "Row " in active.text


def test_filter_by_dc_and_sort(browser, hospital_report):
    _open(browser, hospital_report)
    doc = json.loads(_data(hospital_report))
    browser.find_element(By.CSS_SELECTOR, "#dcfilter option[value='3']").click()
    rows = browser.find_elements(By.CSS_SELECTOR, "#data tbody tr")
    for tr in rows:
        assert any(v[0] == 3 for v in doc["viol"][tr.get_attribute("data-tid")])
    browser.find_element(By.CSS_SELECTOR, "#dcfilter option[value='']").click()
    browser.find_element(By.CSS_SELECTOR, "#data thead button[data-col='-1']").click()
    tids = [int(tr.get_attribute("data-tid")) for tr in
            browser.find_elements(By.CSS_SELECTOR, "#data tbody tr")]  # fmt: skip
    assert tids == sorted(tids) and tids[0] == 0


def _data(path: Path) -> str:
    text = path.read_text()
    return re.search(r'<script type="application/json" id="facet-data">(.*?)</script>', text,
                     re.S).group(1)  # fmt: skip


#: values of a column a report sorts: numbers (exact past 2^53, signs, exponents, spaces
#: around), text that only looks numeric, and NULL (the empty field)
MIXED = ["2", "10", "1a", "20", "b", "3", "", "9007199254740993", "9007199254740992",
         " -4 ", "0x10", "Infinity", "   ", "1e2", "-0", "0", ".5", "1.0000000000000001", "1",
         "\u00e9", "\U0001f600", "\uffff", "2"]  # fmt: skip


def _expected_order(values: list[str], descending: bool) -> list[int]:
    """docs/report.md's order: numbers (docs/semantics.md §4.3's grammar) by exact value
    before text by code point, NULL last either way; ties by tid."""
    from decimal import Decimal

    def key(x: str):
        if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", x.strip()):
            return (0, Decimal(x.strip()))
        return (1, x)

    tids = sorted((t for t, v in enumerate(values) if v != ""), key=lambda t: key(values[t]))
    groups: list[list[int]] = []
    for t in tids:  # equal keys keep tid order whichever way the rest goes
        if groups and key(values[groups[-1][0]]) == key(values[t]):
            groups[-1].append(t)
        else:
            groups.append([t])
    if descending:
        groups.reverse()
    return [t for g in groups for t in g] + [t for t, v in enumerate(values) if v == ""]


def test_hostile_values_show_verbatim_and_sort_in_one_order(browser, tmp_path):
    """Data that would end the inline JSON's script early (``<!--<script>``, ``</script>``)
    leaves the page whole; a carriage return shows as itself; a column mixing numbers and
    text sorts in one consistent order (numbers exactly), either way; tid's header says
    how it is sorted; the focus stays on the header sorted from."""
    hostile = ["<!--<script>", "</script><script>window.__pwned=1</script>", "a\r\nb", "c\rd"]
    rows = len(MIXED)
    text_col = (hostile * rows)[:rows]
    csv = tmp_path / "{{DATA}}.csv"
    with csv.open("w", newline="") as f:
        f.write("k,v,mixed\n")
        for i in range(rows):
            v = text_col[i].replace('"', '""')
            f.write(f'{i % 3},"{v}",{MIXED[i]}\n')
    out = tmp_path / "hostile.html"
    proc = subprocess.run(
        [sys.executable, "-m", "facet", "report", str(csv), "--dc", "k -> v", "--dc",
         "not(t.k = t'.k and t.v = \"<!--<script>\" and t'.v != t.v)", "--out", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(_data(out))
    assert doc["title"] == "facet report: {{DATA}}.csv"
    _open(browser, out)  # the page's own script ran (body[data-ready])
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.title == "facet report: {{DATA}}.csv"
    # every value, as the DOM holds it, is the file's (CR and CRLF kept)
    browser.find_element(By.CSS_SELECTOR, "#data thead button[data-col='-1']").click()
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('#data tbody td[data-col=\"1\"]'))"
        ".map((td) => td.textContent)"
    )
    assert shown == text_col
    th = browser.find_element(By.CSS_SELECTOR, "#data thead th:first-child")
    assert th.get_attribute("aria-sort") == "ascending" and "\u25b2" in th.text
    # sorting a mixed column, from the keyboard: one order, and the focus stays put
    for descending in (False, True):
        button = browser.find_element(By.CSS_SELECTOR, "#data thead button[data-col='2']")
        button.send_keys(Keys.ENTER)
        tids = [int(tr.get_attribute("data-tid")) for tr in
                browser.find_elements(By.CSS_SELECTOR, "#data tbody tr")]  # fmt: skip
        assert tids == _expected_order(MIXED, descending)
        focused = browser.switch_to.active_element
        assert focused.tag_name == "button" and focused.get_attribute("data-col") == "2"
        sort = "descending" if descending else "ascending"
        assert focused.find_element(By.XPATH, "..").get_attribute("aria-sort") == sort
    assert (
        browser.find_element(By.CSS_SELECTOR, "#data thead th:first-child").get_attribute(
            "aria-sort"
        )
        == "none"
    )


def test_the_report_is_one_offline_file(hospital_report):
    text = hospital_report.read_text()
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", text)
    assert "http://" not in text.replace("http://www.w3.org", "")
    assert "https://" not in text


def test_rows_embedded_at_most_and_violating_first(tmp_path):
    tax = ROOT / "data" / "tax" / "tax_dirty_0010k.csv"
    res = facet.detect(tax, dcs=["zip -> city", "not(t.salary < 0)"])
    out = tmp_path / "r.html"
    res.to_html(out, max_rows=300)
    doc = json.loads(_data(out))
    assert len(doc["shown"]) == 300 and doc["rows"] == 10_000
    involved = {t for t in map(int, doc["viol"])}
    assert set(doc["shown"][: len(involved)]) == involved or len(involved) >= 300
    assert all(int(t) in set(doc["shown"]) for t in doc["viol"])
    for t, per_dc in doc["partners"].items():
        for dc, ps in per_dc.items():
            assert int(dc) == 0 and 0 < len(ps) <= 5 and all(p != int(t) for p, _ in ps)


def test_the_explanation_shows_the_predicates_as_written(tmp_path):
    """Bounds on both sides run as an equality (language/normalize.py); the report
    explains the DC as its text writes it, constants and sides included."""
    table = pa.table({"a": [1, 1, 2], "b": [9, 3, 7]})
    res = facet.detect(table, dcs=["not(t.a <= t'.a and t'.a <= t.a and 5 < t.b)"])
    out = tmp_path / "r.html"
    res.to_html(out, data=table)
    atoms = json.loads(_data(out))["dcs"][0]["atoms"]
    assert atoms == [
        {"l": [0, "a"], "op": "<=", "r": [1, "a"]},
        {"l": [1, "a"], "op": "<=", "r": [0, "a"]},
        {"l": {"const": "5"}, "op": "<", "r": [0, "b"]},
    ]


def test_a_billion_pairs_keep_exact_counts_and_sample_partners(tmp_path):
    """Too many violations for the greedy cover: cells are shaded by violations per
    cell, counts stay exact, partners are sampled from blocks."""
    tax = ROOT / "data" / "tax" / "tax_dirty_0010k.csv"
    res = facet.detect(tax, dcs=["not(t.salary > t'.salary)"], config=facet.Config(
        suspect_violations=1000))  # fmt: skip
    out = tmp_path / "big.html"
    res.to_html(out)
    doc = json.loads(_data(out))
    assert doc["scored_by"] == "cells" and doc["total_violations"] == res.total_violations
    assert doc["total_violations"] > 10_000_000
    assert all(len(p["0"]) == 5 for p in doc["partners"].values())


def _naive_row_facts(res) -> tuple[set, dict]:
    """Ordered violating pairs per DC, and per row ``{dc: (pairs, partners)}``."""
    pairs = res.pairs()
    by_dc: dict[int, set] = {}
    for dc, t1, t2 in zip(*(pairs.column(c).to_pylist() for c in ("dc", "t1", "t2")),
                          strict=True):  # fmt: skip
        by_dc.setdefault(dc, set()).add((t1, t2))
    facts: dict[int, dict[int, tuple[int, int]]] = {}
    for dc, ps in by_dc.items():
        seen: dict[int, list] = {}
        for t1, t2 in ps:
            for a, b in ((t1, t2), (t2, t1)):
                if a is not None:
                    seen.setdefault(a, []).append(b)
        for t, bs in seen.items():
            facts.setdefault(t, {})[dc] = (len(bs), len({b for b in bs if b is not None}))
    return by_dc, facts


SHAPES = [
    "not(t.salary > t'.salary and t.rate < t'.rate)",  # asymmetric: some rows only as t'
    "zip -> city",
    "not(t.state = t'.state and t.salary < t'.child_exemp)",  # cross-column
    "not(t.area_code = t'.area_code and t.phone != t'.phone and t.rate > 6)",
    "not(t.salary < 1000)",  # one row
]


def test_partners_are_violations_in_their_role_and_as_many_as_there_are(tmp_path):
    """Every embedded partner forms a violation with its row in the role given; a
    row shows min(k, its distinct partners) of them (the sampling walks the pairs
    holding the shown rows until each has that many); every fact is exact."""
    lines = (ROOT / "data" / "tax" / "tax_dirty_0010k.csv").read_text().splitlines(True)
    csv = tmp_path / "tax1500.csv"
    csv.write_text("".join(lines[:1501]))
    res = facet.detect(csv, dcs=SHAPES, output="pairs")
    by_dc, facts = _naive_row_facts(res)
    out = tmp_path / "r.html"
    res.to_html(out, max_rows=400)
    doc = json.loads(_data(out))
    assert doc["max_facts"] is None and len(doc["shown"]) == 400
    k = doc["partners_per_dc"]
    assert k == 5
    for t, entries in doc["viol"].items():
        assert {dc: (p, q) for dc, p, q in entries} == facts[int(t)]
    for t, per_dc in doc["partners"].items():
        t = int(t)
        for dc, ps in per_dc.items():
            dc = int(dc)
            assert len(ps) == min(k, facts[t][dc][1])
            for p, role in ps:
                assert ((t, p) if role == 0 else (p, t)) in by_dc[dc]


def test_many_dcs_cut_the_rows_not_the_facts(browser, tmp_path, monkeypatch):
    """Past MAX_FACTS (row, DC) facts the violating rows shown stop, each keeping
    every DC it violates, and no clean row follows; past MAX_PARTNER_IDS fewer
    partners per row and DC are embedded (at least one)."""
    from facet.sinks import html

    monkeypatch.setattr(html, "MAX_FACTS", 60)
    monkeypatch.setattr(html, "MAX_PARTNER_IDS", 100)
    n = 40
    table = pa.table({"a": [i % 7 for i in range(n)], "b": list(range(n)),
                      "c": [(i * 17) % n for i in range(n)]})  # fmt: skip
    dcs = [f"not(t.a = t'.a and t.b != t'.b and t.c > {x})" for x in range(-1, 36, 4)]
    dcs += ["not(t.b < t'.b and t.c < t'.c)", "not(t.b > 37)"]
    res = facet.detect(table, dcs=dcs, output="pairs")
    _, facts = _naive_row_facts(res)
    out = tmp_path / "r.html"
    res.to_html(out, data=table)
    doc = json.loads(_data(out))
    violating = {t for t in facts}
    assert doc["violating_rows"] == len(violating)
    shown = doc["shown"]
    assert doc["max_facts"] == 60 and 0 < len(shown) < len(violating)
    assert set(shown) <= violating  # no clean rows after a cut
    assert sum(len(doc["viol"][str(t)]) for t in shown) <= 60
    for t in shown:
        assert {dc: (p, q) for dc, p, q in doc["viol"][str(t)]} == facts[t]
    n_facts = sum(1 for t in shown for dc, *_ in doc["viol"][str(t)] if dc < len(dcs) - 1)
    assert doc["partners_per_dc"] == max(1, min(5, 100 // n_facts)) < 5
    for per_dc in doc["partners"].values():
        assert all(1 <= len(ps) <= doc["partners_per_dc"] for ps in per_dc.values())
    _open(browser, out)
    note = browser.find_element(By.ID, "datanote").text
    assert "the other violating rows are left out" in note and "at most 60 of those" in note


@pytest.mark.slow
def test_a_100k_row_report_loads_in_the_browser(browser, tmp_path):
    """The relaxed Tax rules on 100k rows: the report stays small and the page loads."""
    csv = tmp_path / "tax100k.csv"
    subprocess.run([sys.executable, str(ROOT / "data" / "taxgen.py"), "--rows", "100000",
                    "--out", str(csv), "--seed", "0"], check=True, capture_output=True)  # fmt: skip
    out = tmp_path / "tax100k.html"
    proc = subprocess.run(
        [sys.executable, "-m", "facet", "report", str(csv), "--rules",
         str(ROOT / "data" / "tax" / "dc_rules_relaxed.txt"), "--out", str(out), "--quiet",
         "--exit-zero"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    size = out.stat().st_size
    assert size < 20 * 2**20
    seconds = _open(browser, out)
    assert seconds < 30
    rows = browser.find_elements(By.CSS_SELECTOR, "#data tbody tr")
    assert len(rows) == 50
    print(f"100k-row report: {size / 2**20:.1f} MiB, loaded in {seconds:.2f} s")
