"""The engine interface: what every engine implements, with capability flags
(the shape of ibis's backends), so that one test suite runs against all.

A plan (:mod:`facet.planner.plan`) is plain data; an engine executes it over
its own groups -- the local engine over in-memory pairs of tid sets, a
distributed one over partitions whose tasks run the local pipeline.  Every
engine must give the same counts, rows involved and pair sets (tids are input
positions, docs/semantics.md §3).

Every tid an engine hands its caller as an array is a dense position ``0..rows-1``
(the row outputs index arrays of ``rows`` entries with them); a table that names
its rows by ids of its own (a Spark DataFrame's ``id_column``) is mapped to those
positions by its engine, and back by :meth:`Engine.row_ids` in every output.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from facet.language.normalize import NormalDC
from facet.planner.plan import Plan, Stage
from facet.planner.statistics import Sides, Statistics

if TYPE_CHECKING:
    from facet.engine.counting import Degrees


@dataclass(frozen=True)
class Capabilities:
    """What an engine supports beyond the interface's core."""

    #: outputs it produces ("count", "pairs", "blocks", ...)
    outputs: frozenset[str] = frozenset({"count", "pairs", "blocks"})
    #: many-DC modes it runs ("sequential", "parallel", "cost-trie", "freq-trie")
    modes: frozenset[str] = frozenset({"sequential"})
    #: records per-stage actuals for ``explain --analyze``
    trace: bool = False
    #: runs refinements on compressed bitmaps (``Config.storage``)
    bitmaps: bool = False
    #: spreads work over machines (results gathered from tasks)
    distributed: bool = False
    #: gives pairs and blocks as distributed frames its workers write
    #: (``pair_frame``, ``block_frame``, ``single_rows_frame``)
    frames: bool = False
    #: restricts a run to the violations holding a row of a scope (``--where``):
    #: initial pairs ``(S, all)`` and ``(all - S, S)``; a scope given as a mask
    #: per row (``set_scope``: an incremental batch) is the local engine's only
    scope: bool = False
    #: a count applies a plan's leading equalities at once (the rows are spread
    #: by one key of them all), so their order -- all that statistics decide in
    #: a count plan -- needs no statistics (``facet explain`` still asks them,
    #: to show the plan the local engine makes)
    equalities_at_once: bool = False


class Engine(ABC):
    """Executes plans over one table's initial pairs.

    ``G`` below is the engine's own representation of a batch of pairs of tid
    sets (the local engine: :class:`facet.engine.groups.Groups`)."""

    name: str = "engine"
    capabilities: Capabilities = Capabilities()
    #: called with a short text at each step an engine takes within a phase
    #: (the progress display's ``step``); set by the API for a run
    on_step: Callable[[str], None] | None = None

    def step(self, text: str) -> None:
        if self.on_step is not None:
            self.on_step(text)

    @property
    @abstractmethod
    def rows(self) -> int:
        """Rows of the table."""

    def row_ids(self, positions: np.ndarray) -> np.ndarray:
        """The ids outputs name the rows at dense ``positions`` by: the positions
        themselves, unless the table brings ids of its own."""
        return positions

    def adopt_thread(self) -> None:
        """Called on a thread before it runs the engine's work for the run (``parallel``
        mode's workers on a distributed engine): what the run set up per thread (a
        deadline's tag on Spark), it sets up there too."""
        return None

    @abstractmethod
    def initial_groups(self, dc: NormalDC) -> Any:
        """The DC's initial pairs ``(all, all)`` cut by its row filters."""

    def touching_groups(self, dc: NormalDC, rows: np.ndarray) -> Any | None:
        """The DC's initial pairs that hold a row where ``rows`` (a bool per row) is
        true, on an unscoped engine -- a few rows' partners need no more -- or None
        where the engine has no such start."""
        return None

    def set_scope(self, scope: np.ndarray | None) -> None:
        """Scope the run to the rows where ``scope`` (a bool per row) is true."""
        raise NotImplementedError(f"the {self.name} engine has no scoped runs")

    @property
    def scoped(self) -> bool:
        """Whether a scope is set: initial pairs then depend on each DC's
        predicates, not only its row filters."""
        return False

    @abstractmethod
    def sides(self, groups: Any) -> Sides:
        """The shape of a DC's initial pairs: rows on each side, and whether both
        sides are one set."""

    @abstractmethod
    def single_rows(self, dc: NormalDC) -> np.ndarray:
        """The violating rows of a single-tuple DC."""

    @abstractmethod
    def statistics(self, groups: Any) -> Statistics:
        """The planner's statistics for a DC whose initial pairs are ``groups``."""

    @abstractmethod
    def refine(self, groups: Any, stage: Stage) -> Any:
        """One refinement."""

    @abstractmethod
    def count(self, plan: Plan, groups: Any) -> tuple[int, int]:
        """``(violations, rows involved)`` of a count plan from ``groups``."""

    @abstractmethod
    def degrees(self, plan: Plan, groups: Any) -> Degrees:
        """Per-row degrees of a count plan from ``groups``: for every row, the
        violating pairs holding it as ``t`` (``left``) and as ``t'`` (``right``) --
        what the row outputs (``tuples``, ``cells``) are made of."""

    def component_edges(
        self, count: Plan, blocks: Plan, groups: Any
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Pairs of rows ``(a, b)`` whose union gives the conflict graph's
        components of one DC (``count``, ``blocks``: its plans), when the engine
        finds them itself (a distributed one: joined within each task); None: the
        caller joins the DC's rows from its blocks."""
        return None

    def direct_count(self, dc: NormalDC) -> tuple[int, int] | None:
        """``(violations, rows involved)`` of a two-tuple DC when the engine has
        them without a plan (no statistics, no refinement), else None."""
        return None

    @abstractmethod
    def pairs(
        self, plan: Plan, groups: Any, stages: list[Stage] | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The violating pairs ``(t, t')`` of ``groups`` in chunks (``stages``:
        the ones still to run, default all of the plan's)."""

    @abstractmethod
    def blocks(
        self,
        plan: Plan,
        groups: Any,
        stages: list[Stage] | None = None,
        pairs_as_is: bool = False,
    ) -> Iterator[Any]:
        """The final pairs of tid sets, each standing for its ``(a, b)``, ``a != b``
        (``pairs_as_is``: pairs the engine finds one by one may come as ``(t, t')``
        arrays, each pair a block, where grouping them would cost a sort)."""
