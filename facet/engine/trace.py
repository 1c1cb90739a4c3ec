"""What a plan actually did, stage by stage (``facet explain --analyze``).

The engine adds one record per refinement call, per batch of groups finished
pair by pair, and per counting-sink call; :meth:`Trace.report` turns them into
the plain data :func:`facet.planner.explain.with_actuals` merges into a plan's
record: actual groups and tids in and out, seconds, and the storage that ran.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from facet.engine.groups import Groups
from facet.planner.plan import Plan, Stage


@dataclass
class StageRun:
    """What one stage did, summed over its calls."""

    calls: int = 0
    seconds: float = 0.0
    groups_in: int = 0
    tids_in: int = 0
    groups_out: int = 0
    tids_out: int = 0
    #: sum |L| x |R| of the output groups (an upper bound on its pairs)
    candidates_out: int = 0
    #: groups refined on compressed bitmaps / on tid arrays
    bitmap_groups: int = 0
    array_groups: int = 0

    @property
    def storage(self) -> str:
        if self.bitmap_groups and self.array_groups:
            return "hybrid"
        return "bitmaps" if self.bitmap_groups else "arrays"


def _tids(groups: Groups) -> int:
    return int(groups.left_sizes().sum() + groups.right_sizes().sum())


class Trace:
    """Actual sizes, seconds and storage per stage of the plans an engine runs."""

    def __init__(self) -> None:
        self.stages: dict[Stage, StageRun] = {}
        self.nested: dict[Stage, StageRun] = {}
        self.sink = StageRun()
        #: equality stages the sink ran fused (no refinement of their own)
        self.fused = 0
        #: the DC was counted without its plan (``Engine.direct_count``): what it read
        self.direct: dict[str, Any] | None = None
        #: leading equality stages grouped at once by their composite code
        self.grouped_stages = 0

    def refined(
        self, stage: Stage, seconds: float, groups_in: Groups, out: Groups, on_bitmaps: int
    ) -> None:
        r = self.stages.setdefault(stage, StageRun())
        r.calls += 1
        r.seconds += seconds
        r.groups_in += len(groups_in)
        r.tids_in += _tids(groups_in)
        r.groups_out += len(out)
        r.tids_out += _tids(out)
        r.candidates_out += int(out.candidate_pairs().sum())
        r.bitmap_groups += on_bitmaps
        r.array_groups += len(groups_in) - on_bitmaps

    def grouped(self, stages: list[Stage], seconds: float, groups_in: Groups, out: Groups) -> None:
        """Equality stages run as one (their composite code): recorded on the last."""
        self.grouped_stages = max(self.grouped_stages, len(stages))
        self.refined(stages[-1], seconds, groups_in, out, 0)

    def finished_nested(self, before: Stage, seconds: float, groups: Groups) -> None:
        r = self.nested.setdefault(before, StageRun())
        r.calls += 1
        r.seconds += seconds
        r.groups_in += len(groups)
        r.tids_in += _tids(groups)

    def counted(self, seconds: float, groups: Groups, fused: int = 0) -> None:
        self.fused = max(self.fused, fused)
        self.sink.calls += 1
        self.sink.seconds += seconds
        self.sink.groups_in += len(groups)
        self.sink.tids_in += _tids(groups)

    def report(self, plan: Plan) -> dict[str, Any]:
        """Per stage of ``plan``: what ran (``None``: never called), what was
        finished pair by pair before it, and the counting sink."""

        def run(r: StageRun | None) -> dict[str, Any] | None:
            return None if r is None else {**asdict(r), "storage": r.storage}

        return {
            "stages": [run(self.stages.get(s)) for s in plan.stages],
            "nested": [run(self.nested.get(s)) for s in plan.stages],
            "sink": run(self.sink) if self.sink.calls else None,
            "fused": self.fused,
            "direct": self.direct,
            "grouped": self.grouped_stages,
        }
