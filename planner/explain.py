"""``facet explain``: the plan a user gets and, with ``--analyze``, what it did.

Pure functions over plain data: :func:`plan_record` turns a DC's plan into a
JSON-ready record (row filters, then the stages in order -- predicate,
algorithm, tid storage, estimated cardinality and pairs -- and for counts the
counting sink); :func:`with_actuals` merges what an engine measured while
running that plan (its trace report: per stage the calls, groups, tids,
seconds and the storage that actually ran); :func:`render_text` prints a
document of records.  Running the plan is the engine's business.
"""

from __future__ import annotations

from typing import Any

from facet.language.normalize import NormalDC
from facet.planner.plan import Plan


def _num(x: float | None) -> int | None:
    return None if x is None else int(round(x))


def plan_record(
    dc_id: int,
    name: str | None,
    text: str,
    normal: NormalDC,
    plan: Plan | None,
    output: str,
    nested_pairs: int,
    plan_seconds: float = 0.0,
    statistics_seconds: float = 0.0,
    nested_order_scale: int = 1,
) -> dict[str, Any]:
    """The explain record of one DC (``plan=None``: a single-tuple DC);
    ``statistics_seconds``: the engine's statistics for the plan,
    ``plan_seconds``: the planning itself (both without execution);
    ``nested_pairs`` / ``nested_order_scale``: ``Config``'s caps on a group the
    sink finishes pair by pair (the second scales the first under order
    predicates only)."""
    rec: dict[str, Any] = {
        "id": dc_id,
        "name": name,
        "dc": text,
        "output": output,
        "filters": [
            {"side": "t" if f.side == 0 else "t'", "predicate": f.text(), "algorithm": "filter"}
            for f in normal.filters
        ],
        **({"rewrites": list(normal.rewrites)} if normal.rewrites else {}),
    }
    if plan is None:
        rec["single_tuple"] = True
        rec["stages"] = []
        return rec
    rec["rows"] = {"t": plan.left_rows, "t'": plan.right_rows}
    rec["statistics_seconds"] = round(statistics_seconds, 6)
    rec["planning_seconds"] = round(plan_seconds, 6)
    rec["stages"] = [
        {
            "predicate": s.text(),
            "algorithm": s.algorithm,
            "storage": s.storage,
            "est_cardinality": _num(s.cardinality),
            "est_pairs": _num(s.est_pairs),
            **({"note": s.note} if s.note else {}),
        }
        for s in plan.stages
    ]
    if plan.sink is not None:
        sink = plan.sink
        rec["count_sink"] = {
            "predicates": [p.text() for p in sink.predicates],
            "algorithm": sink.algorithm,
            "method": sink.method,
            "nested_pairs": None
            if sink.kind == "keyed"
            else nested_pairs * nested_order_scale
            if sink.inequalities and not sink.nonequalities
            else nested_pairs,
        }
    return rec


def with_actuals(rec: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    """``rec`` with what the engine measured: ``report`` holds ``stages`` (one
    entry per plan stage, ``None`` for a stage that never ran), optionally
    ``nested`` (per stage: groups finished pair by pair before it), ``sink``,
    and ``violations`` / ``rows_involved`` / ``seconds`` of the whole run."""
    rec = dict(rec)
    actual = {"violations": report["violations"], "seconds": round(report["seconds"], 6)}
    if report.get("rows_involved") is not None:
        actual["rows_involved"] = report["rows_involved"]
    if rec.get("single_tuple"):
        rec["actual"] = actual
        return rec
    stages = []
    nested = report.get("nested") or [None] * len(rec["stages"])
    for st, run, nb in zip(rec["stages"], report["stages"], nested, strict=True):
        st = dict(st)
        if nb is not None:
            st["nested_before"] = {
                "groups": nb["groups_in"],
                "tids": nb["tids_in"],
                "seconds": round(nb["seconds"], 6),
            }
        if run is None:
            st["actual"] = None
        else:
            st["storage"] = run["storage"]
            st["actual"] = {
                "calls": run["calls"],
                "groups_in": run["groups_in"],
                "tids_in": run["tids_in"],
                "groups_out": run["groups_out"],
                "tids_out": run["tids_out"],
                "candidate_pairs_out": run["candidates_out"],
                "seconds": round(run["seconds"], 6),
            }
        stages.append(st)
    rec["stages"] = stages
    if "count_sink" in rec:
        sink = report.get("sink")
        rec["count_sink"] = {
            **rec["count_sink"],
            "actual": None
            if sink is None
            else {"groups_in": sink["groups_in"], "seconds": round(sink["seconds"], 6)},
        }
        if report.get("fused"):
            # the equality stages ran inside the sink (facet.kernels.composite)
            rec["count_sink"]["actual"]["fused_stages"] = report["fused"]
    if report.get("grouped"):
        # the leading equalities ran as one counting sort (facet.engine.refinement)
        actual["grouped_stages"] = report["grouped"]
    direct = report.get("direct")
    if direct is not None:
        # counted without the plan (an engine's direct count): what it read instead
        actual["direct"] = {"rows": direct["rows"], "seconds": round(direct["seconds"], 6)}
    rec["actual"] = actual
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
    scoped = doc.get("where") is not None
    if scoped:
        k = doc["scope_rows"]
        rows = "no row" if k == 0 else f"the {k:,} row{'' if k == 1 else 's'}"
        lines.append(
            f"scope: {rows} where {doc['where']}; initial pairs (scope, all) and (rest, scope)"
        )
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
        summed = " (sides summed over the initial pairs)" if scoped else ""
        lines.append(f"  pairs in: {left:,} x {right:,} tuples{summed}")
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
        notes = list(d.get("rewrites", []))
        notes += [f"{k}: {s['note']}" for k, s in enumerate(d["stages"], 1) if s.get("note")]
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
                "pair (nested) where that is cheaper"
            )
            notes.append(f"sink: {cs['method']}{nested}")
            fused = (cs.get("actual") or {}).get("fused_stages")
            if fused:
                notes.append(
                    f"sink: ran fused with the {fused} equality stage{'s' if fused > 1 else ''} "
                    "above it -- composite codes, one counting sort, code tallies (no groups)"
                )
        grouped = (d.get("actual") or {}).get("grouped_stages") if analyzed else None
        if grouped:
            notes.append(
                f"stages 1-{grouped} ran as one: a composite code per row over their "
                "columns, one counting sort (their time and sizes are on stage "
                f"{grouped})"
            )
        direct = (d.get("actual") or {}).get("direct") if analyzed else None
        if direct is not None:
            notes.append(
                f"counted without this plan: the {direct['rows']:,} rows whose most distinct "
                "key column holds a repeated value, their keys tallied "
                f"({direct['seconds']:.3f} s)"
            )
        for note in notes:
            lines.append(f"  note {note}")
        if analyzed:
            a = d["actual"]
            extra = f", {a['rows_involved']:,} rows involved" if "rows_involved" in a else ""
            lines.append(f"  actual: {a['violations']:,} violations{extra} in {a['seconds']:.3f} s")
    return "\n".join(lines)
