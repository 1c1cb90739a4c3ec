"""The HTML violation report (``facet report``, ``Result.to_html``; docs/report.md).

A sink over a finished local run: it reads the result's outputs (``suspects``,
``tuples``) and asks its session for a few partners per row (blocks, never pairs).

One self-contained file -- inline CSS and JavaScript, the data as an inline JSON
document, no network -- in the spirit of Mimir's marked-up results (§3): a summary with
a chart of violations per DC; the data, violating rows first (at most ``max_rows``
embedded), suspect cells shaded by their ``suspects`` score; a click (or Enter) on a
cell explains it: the DCs it takes part in, each predicate with this row's and a
partner row's values filled in, and up to ``partners`` partner rows per DC, sampled
from the DC's blocks (counts stay exact whatever is sampled).
"""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from facet.language.ast import Col
from facet.language.errors import FacetInputError
from facet.language.normalize import side_columns, text_order
from facet.loading import load
from facet.sinks.files import TextFile, check_not_input, check_out_path

#: rows of the data embedded at most, and partners shown per row and DC (docs/report.md)
MAX_ROWS = 10_000
PARTNERS = 5
#: (row, DC) violation facts embedded at most: the violating rows shown stop before
#: their DCs pass it (each row keeps every DC it violates), so many DCs mean fewer rows
MAX_FACTS = 300_000
#: partner ids embedded at most: past it, fewer partners per row and DC (at least one)
MAX_PARTNER_IDS = 300_000
#: rows outside the embedded ones whose values a partner link shows, at most
MAX_EXTRA_ROWS = 20_000


def report_html(
    result: Any,
    data: Any = None,
    *,
    max_rows: int = MAX_ROWS,
    partners: int = PARTNERS,
    title: str | None = None,
    delimiter: str | None = None,
) -> str:
    """The report of ``result`` as one HTML document.  ``data``: the table to show
    (default: ``result.source`` read again, all of its columns: the DCs' columns as
    the run reads them, the others as loosely as a run that does not read them
    allows; :func:`facet.loading.load` with ``others``).  ``delimiter``: a CSV
    file's (None: sniffed)."""
    session = result._session
    if session is None:
        raise FacetInputError("the report needs a local-engine result (facet.detect(...))")
    if data is None:
        if not os.path.exists(str(result.source)):
            raise FacetInputError(
                f"the report shows the data: pass it (to_html(path, data=...)); "
                f"{result.source} is not a file"
            )
        data = result.source
    used = list(dict.fromkeys(c for nd in session.normal for c in text_order(nd)))
    source = load(data, used, delimiter, others=True)
    table = source.table
    if table.num_rows != result.rows:
        raise FacetInputError(
            f"the data to show has {table.num_rows} rows but the result {result.rows}"
        )
    missing = [c for c in used if c not in table.column_names]
    if missing:
        raise FacetInputError(
            f"the data to show has no column '{missing[0]}', which the DCs read; pass the "
            "table the result was detected on"
        )
    doc = _document(result, session, table, max_rows, partners)
    doc["columns"] = list(source.all_columns)
    doc["unreadable"] = source.unreadable
    doc["title"] = title or f"facet report: {os.path.basename(str(result.source))}"
    return _render(doc)


def open_report(path: str | os.PathLike, inputs: list[Any] = ()) -> TextFile:
    """The report's file: a temporary file beside ``path`` (``close()`` renames it into
    place, ``abort()`` removes it); a directory, a path in no writable directory, or
    one of the ``inputs`` is bad input."""
    path = os.fspath(path)
    check_out_path(path, "report.html")
    check_not_input(path, inputs)
    return TextFile(path)


def write_report(
    result: Any, path: str | os.PathLike | TextFile, data: Any = None, **kw: Any
) -> None:
    """Write the report to ``path`` atomically (a temporary file renamed into place;
    nothing is left there when it fails)."""
    out = path if isinstance(path, TextFile) else open_report(path, [result.source, data])
    try:
        out.write(report_html(result, data, **kw))
        out.close()
    except BaseException:
        out.abort()
        raise


# ---------------------------------------------------------------------- the document


@dataclass
class _Tally:
    """What the report needs of every DC, from one pass over their row degrees:
    violating pairs and DCs violated per row, violations per cell (``scores``, a
    row per tid, a column per ``names``), and the DCs' rows in a violation
    (``kept``: DC -> ``(tids, pairs, partners)``, as long as they fit MAX_KEPT;
    the others are computed again for the rows shown)."""

    total: np.ndarray
    facts: np.ndarray
    scores: np.ndarray
    names: list[str]
    kept: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]


#: (row, DC) facts the first pass keeps for the second (past it, a DC's are recomputed)
MAX_KEPT = 4_000_000


def _tally(result: Any, session: Any, scores: bool) -> _Tally:
    """``scores``: tally the violations per cell too (only when the suspects are
    not listed: a row per tid and a column per DC column)."""
    n = session.rows
    names = list(dict.fromkeys(c for nd in session.normal for c in text_order(nd)))
    col = {c: j for j, c in enumerate(names)}
    total = np.zeros(n, np.int64)
    facts = np.zeros(n, np.int64)
    cell_scores = np.zeros((n if scores else 0, len(names)), np.int64)
    kept: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    room = MAX_KEPT
    for i, nd in enumerate(session.normal):
        if result.dcs[i].violations == 0:
            continue
        tids, pairs, partners, left, right = session.row_tuples(i)
        total[tids] += pairs
        facts[tids] += 1
        if scores:
            t_cols = side_columns(nd, 0)
            u_cols = side_columns(nd, 1) if nd.arity == 2 else []
            for c in t_cols:
                cell_scores[tids, col[c]] += pairs if left is None else left[tids]
            for c in u_cols:
                cell_scores[tids, col[c]] += right[tids]
        if len(tids) <= room:
            kept[i] = (tids, pairs, partners)
            room -= len(tids)
    return _Tally(total, facts, cell_scores, names, kept)


def _suspects(result: Any, session: Any) -> tuple[_Tally, np.ndarray, np.ndarray, np.ndarray, str]:
    """The tally, and suspect cells ``(tid, column name index, score)`` by rank and
    what the scores are: the greedy cover, or -- beyond its budget or the memory
    (refused before any violation is listed) -- the violations per cell (ties by
    tid, then column)."""
    try:
        sus = result.suspects()
    except FacetInputError:
        tally = _tally(result, session, scores=True)
        tid, c = np.nonzero(tally.scores)  # (by tid, then column)
        score = tally.scores[tid, c]
        order = np.argsort(-score, kind="stable")
        return tally, tid[order], c[order], score[order], "cells"
    tally = _tally(result, session, scores=False)
    index = {name: j for j, name in enumerate(tally.names)}
    c = np.array([index[x] for x in sus.column("column").to_pylist()], np.int64)
    return tally, sus.column("tid").to_numpy(), c, sus.column("score").to_numpy(), "suspects"


def _document(result: Any, session: Any, table: pa.Table, max_rows: int, k: int) -> dict:
    n = table.num_rows
    columns = table.column_names
    col_index = {c: j for j, c in enumerate(columns)}
    tally, s_tid, s_name, s_score, scored_by = _suspects(result, session)
    s_col = np.array([col_index[c] for c in tally.names], np.int64)[s_name]
    # violating rows first: by their best suspect rank, then by pairs, then tid
    best = np.full(n, len(s_tid) + 1, np.int64)
    np.minimum.at(best, s_tid, np.arange(len(s_tid)))
    total = tally.total
    violating = np.flatnonzero(total > 0)
    order = violating[np.lexsort((violating, -total[violating], best[violating]))]
    # the rows whose facts (one per DC a row violates) fit MAX_FACTS; at least one row
    fit = max(int(np.searchsorted(np.cumsum(tally.facts[order]), MAX_FACTS, side="right")), 1)
    shown = order[: min(max_rows, fit)]
    cut = len(shown) < min(max_rows, len(order))  # violating rows left out by MAX_FACTS
    if len(shown) < max_rows and not cut:
        clean = np.flatnonzero(total == 0)[: max_rows - len(shown)]
        shown = np.concatenate([shown, clean])
    slot = np.full(n, -1, np.int64)
    slot[shown] = np.arange(len(shown))
    # per shown row: [dc, pairs, partners] of every DC it violates, in DC order
    viol: dict[int, list] = {}
    wanted: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # two-tuple DC -> rows, partners
    for i, nd in enumerate(session.normal):
        if result.dcs[i].violations == 0:
            continue
        got = tally.kept.get(i)
        tids, pairs, partners = got if got is not None else session.row_tuples(i)[:3]
        on = slot[tids] >= 0
        for tid, p, q in zip(tids[on].tolist(), pairs[on].tolist(), partners[on].tolist(),
                             strict=True):  # fmt: skip
            viol.setdefault(tid, []).append([i, p, q])
        if nd.arity == 2 and on.any():
            wanted[i] = (tids[on], partners[on])
    # partners of the shown violating rows, per two-tuple DC
    partner_map: dict[int, dict[int, list]] = {}
    extra: set[int] = set()
    k = min(k, max(1, MAX_PARTNER_IDS // max(sum(len(w) for w, _ in wanted.values()), 1)))
    for i, (rows, partners) in wanted.items():
        out, role, got = session.sampled_partners(i, rows, k, np.minimum(partners, k))
        for r, tid in enumerate(rows.tolist()):
            ps = out[r, : got[r]].tolist()
            partner_map.setdefault(tid, {})[i] = [
                [p, int(x)] for p, x in zip(ps, role[r, : got[r]].tolist(), strict=True)
            ]
            extra.update(p for p in ps if slot[p] < 0)
    extra_rows = sorted(extra)[:MAX_EXTRA_ROWS]
    take = np.concatenate([shown, np.array(extra_rows, np.int64)]).astype(np.int64)
    values = _display_values(table, take)
    dcs = []
    for d, nd in zip(result.dcs, session.normal, strict=True):
        t_cols = side_columns(nd, 0)
        u_cols = side_columns(nd, 1) if nd.arity == 2 else []
        dcs.append({
            "id": d.id, "name": d.name, "dc": d.dc, "violations": d.violations,
            "rows": d.rows_involved, "seconds": round(d.seconds, 6), "arity": d.arity,
            "atoms": _atoms(nd), "cols": sorted({col_index[c] for c in t_cols + u_cols}),
        })  # fmt: skip
    on_page = slot[s_tid] >= 0
    suspect_cells = [
        [int(t), int(c), int(sc), int(r) + 1]
        for t, c, sc, r in zip(
            s_tid[on_page], s_col[on_page], s_score[on_page], np.flatnonzero(on_page), strict=True
        )  # fmt: skip
    ]
    return {
        "source": str(result.source),
        "rows": n,
        "columns": columns,
        "dcs": dcs,
        "total_violations": result.total_violations,
        "seconds": round(result.load_seconds + sum(d.seconds for d in result.dcs), 6),
        "where": result.where,
        "scope_rows": result.scope_rows,
        "scored_by": scored_by,
        "violating_rows": int(violating.size),
        "shown": [int(t) for t in shown],
        "values": values,
        "extra": [int(t) for t in extra_rows],
        "suspects": suspect_cells,
        "suspect_count": int(len(s_tid)),
        "viol": {str(t): v for t, v in viol.items()},
        "partners": {str(t): {str(i): p for i, p in m.items()} for t, m in partner_map.items()},
        "max_rows": max_rows,
        "max_facts": MAX_FACTS if cut else None,
        "partners_per_dc": k,
    }


def _display_values(table: pa.Table, tids: np.ndarray) -> list[list]:
    """The rows ``tids`` as lists of display strings (``None`` for NULL); bytes as
    UTF-8, with U+FFFD for what is not UTF-8."""
    part = table.take(pa.array(tids))
    cols = []
    for col in part.columns:
        if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
            text = [None if v is None else v.decode("utf-8", "replace") for v in col.to_pylist()]
            cols.append(text)
            continue
        try:
            text = pc.cast(col, pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            text = pa.array([None if v is None else str(v) for v in col.to_pylist()], pa.string())
        cols.append(text.to_pylist())
    return [list(r) for r in zip(*cols, strict=True)] if cols else [[] for _ in tids]


def _atoms(nd: Any) -> list[dict]:
    """The DC's predicates for the explanation, as its text writes them (the engine may
    run them in another shape: language/normalize.py): sides and columns, or a constant."""

    def operand(o: Any) -> Any:
        return [o.tuple, o.name] if isinstance(o, Col) else {"const": o.as_text()}

    return [{"l": operand(p.left), "op": p.op, "r": operand(p.right)} for p in nd.dc.predicates]


#: characters the inline JSON writes as ``\uXXXX``: no ``<`` in the script element, so no
#: ``</script>`` or ``<!--`` in the data can end it early or swallow the page's own script
#: (HTML's "script data escaped" states); ``&`` and ``>`` for good measure
_JSON_IN_SCRIPT = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def _render(doc: dict) -> str:
    page = resources.files("facet.sinks").joinpath("report_page.html").read_text(encoding="utf-8")
    data = json.dumps(doc, separators=(",", ":"), default=str).translate(_JSON_IN_SCRIPT)
    fill = {"{{TITLE}}": html.escape(doc["title"]), "{{DATA}}": data}
    # one pass: a title or value holding "{{DATA}}" is text, not a slot
    return re.sub(r"\{\{(?:TITLE|DATA)\}\}", lambda m: fill[m.group(0)], page)
