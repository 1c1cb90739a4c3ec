"""``facet explain``: the plan a user gets, and with ``--analyze`` what it did.

For every DC: its row filters, then its stages in order -- predicate,
algorithm (``equality``, ``nonequality``, ``hsm``, ``bhsm``, ``iejoin``,
``cdq``), tid storage, estimated cardinality and pairs -- and, for counts, the
counting sink that answers the rest.  ``--analyze`` runs the plan and adds the
actual groups, tids and seconds of each stage.
"""

from __future__ import annotations

import time
from typing import Any

from facet.engine.local import Trace

STORAGE = "arrays"  # sorted tid copies sliced per group (see docs/architecture.md)


def _num(x: float | None) -> int | None:
    return None if x is None else int(round(x))


def explain_dc(session, i: int, output: str, analyze: bool = False) -> dict[str, Any]:
    """The explain record of DC ``i`` (a dict; JSON-ready)."""
    dc = session.dcs[i]
    nd = session.normal[i]
    rec: dict[str, Any] = {
        "id": dc.id if dc.id is not None else i,
        "name": dc.name,
        "dc": dc.body(),
        "output": output,
        "filters": [
            {"side": "t" if f.side == 0 else "t'", "predicate": f.text(), "algorithm": "filter"}
            for f in nd.filters
        ],
    }
    t0 = time.perf_counter()
    plan = session.plan(i, output)
    plan_seconds = time.perf_counter() - t0
    if plan is None:
        rec["single_tuple"] = True
        rec["stages"] = []
        if analyze:
            t = time.perf_counter()
            n = len(session.engine.single_rows(nd))
            rec["actual"] = {"violations": n, "seconds": round(time.perf_counter() - t, 6)}
        return rec
    rec["rows"] = {"t": plan.left_rows, "t'": plan.right_rows}
    rec["planning_seconds"] = round(plan_seconds, 6)
    stages = plan.stages
    if output == "count":
        eq = plan.count_sink.equality
        stages = [s for s in plan.of_class("equality") if eq is None or s.preds != (eq,)]
    rec["stages"] = [
        {
            "predicate": s.text(),
            "algorithm": s.algorithm,
            "storage": STORAGE,
            "est_cardinality": _num(s.cardinality),
            "est_pairs": _num(s.est_pairs),
            **({"note": s.note} if s.note else {}),
        }
        for s in stages
    ]
    if output == "count":
        sink = plan.count_sink
        rec["count_sink"] = {
            "predicates": [p.text() for p in sink.predicates],
            "algorithm": sink.algorithm,
            "method": sink.method,
            "nested_pairs": None if sink.keyed else session.config.nested_pairs,
        }
    if analyze:
        engine = session.engine
        engine.trace = Trace()
        t = time.perf_counter()
        try:
            if output == "count":
                violations, rows = session.count(i)
            else:
                violations = sum(b.num_rows for b in session.dc_pairs(i))
                rows = None
        finally:
            trace, engine.trace = engine.trace, None
        total = time.perf_counter() - t
        for s, st in zip(stages, rec["stages"], strict=True):
            nested = trace.stages.get(("nested", s))
            if nested is not None:
                st["nested_before"] = {
                    "groups": nested.groups_in,
                    "tids": nested.tids_in,
                    "seconds": round(nested.seconds, 6),
                }
            run = trace.stages.get(s)
            st["actual"] = (
                None
                if run is None
                else {
                    "calls": run.calls,
                    "groups_in": run.groups_in,
                    "tids_in": run.tids_in,
                    "groups_out": run.groups_out,
                    "tids_out": run.tids_out,
                    "candidate_pairs_out": run.candidates_out,
                    "seconds": round(run.seconds, 6),
                }
            )
        if output == "count":
            run = trace.stages.get("count-sink")
            rec["count_sink"]["actual"] = (
                None
                if run is None
                else {"groups_in": run.groups_in, "seconds": round(run.seconds, 6)}
            )
        rec["actual"] = {"violations": violations, "seconds": round(total, 6)}
        if rows is not None:
            rec["actual"]["rows_involved"] = rows
    return rec


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def render_text(doc: dict[str, Any]) -> str:
    """A readable explain report."""
    lines = [f"{doc['source']}: {doc['rows']:,} rows, output {doc['output']}"]
    for d in doc["dcs"]:
        lines.append("")
        name = f" {d['name']}:" if d.get("name") else ""
        lines.append(f"DC {d['id']}:{name} {d['dc']}")
        for f in d["filters"]:
            lines.append(f"  filter {f['side']:<2} {f['predicate']}")
        if d.get("single_tuple"):
            lines.append("  single-tuple DC: violations are the rows passing the filters")
            if "actual" in d:
                a = d["actual"]
                lines.append(f"  actual: {a['violations']:,} rows, {a['seconds']:.3f} s")
            continue
        left, right = d["rows"]["t"], d["rows"]["t'"]
        lines.append(f"  pairs in: {left:,} x {right:,} tuples")
        header = ["#", "predicate", "algorithm", "storage", "est.card", "est.pairs"]
        analyzed = "actual" in d
        if analyzed:
            header += ["groups out", "tids in", "tids out", "seconds"]
        table = [header]
        for k, s in enumerate(d["stages"], 1):
            row = [
                str(k),
                s["predicate"],
                s["algorithm"],
                s["storage"],
                _fmt(s["est_cardinality"]),
                _fmt(s["est_pairs"]),
            ]
            if analyzed:
                a = s.get("actual") or {}
                row += [
                    _fmt(a.get("groups_out")),
                    _fmt(a.get("tids_in")),
                    _fmt(a.get("tids_out")),
                    _fmt(a.get("seconds")),
                ]
            table.append(row)
        if "count_sink" in d:
            cs = d["count_sink"]
            row = [
                "sink",
                " and ".join(cs["predicates"]) or "(none)",
                cs["algorithm"],
                "-",
                "-",
                "-",
            ]
            if analyzed:
                a = cs.get("actual") or {}
                row += ["-", _fmt(a.get("groups_in")), "-", _fmt(a.get("seconds"))]
            table.append(row)
        widths = [max(len(r[c]) for r in table) for c in range(len(header))]
        for r in table:
            lines.append(
                "  " + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip()
            )
        notes = [f"{k}: {s['note']}" for k, s in enumerate(d["stages"], 1) if s.get("note")]
        for k, s in enumerate(d["stages"], 1):
            if s.get("nested_before"):
                nb = s["nested_before"]
                notes.append(
                    f"{k}: {nb['groups']:,} small groups ({nb['tids']:,} tids) finished pair by "
                    f"pair (nested) before this stage, {nb['seconds']:.3f} s"
                )
        if "count_sink" in d:
            cs = d["count_sink"]
            nested = (
                ""
                if cs["nested_pairs"] is None
                else f"; groups of at most {cs['nested_pairs']:,} candidate pairs go pair by "
                "pair (nested)"
            )
            notes.append(f"sink: {cs['method']}{nested}")
        for note in notes:
            lines.append(f"  note {note}")
        if analyzed:
            a = d["actual"]
            extra = f", {a['rows_involved']:,} rows involved" if "rows_involved" in a else ""
            lines.append(f"  actual: {a['violations']:,} violations{extra} in {a['seconds']:.3f} s")
    return "\n".join(lines)
