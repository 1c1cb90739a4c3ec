"""Progress and limits of a run (docs/semantics.md §7, §9).

* :class:`ProgressEvent`: what ``facet.detect(..., progress=callback)`` reports;
  :class:`TerminalProgress` is the command line's consumer (a tqdm display on
  stderr when it is a terminal).
* :class:`Monitor`: one run's events and its deadline (``timeout=`` /
  ``--timeout``), checked between phases, between DCs and between batches of
  pairs; a run with a deadline runs on a thread of its own, which the caller's
  thread stops when the deadline passes (``facet.api.within_deadline``), and a
  watchdog thread cancels work running elsewhere (a Spark run's jobs:
  :meth:`Monitor.on_deadline`).
* :func:`available_memory`: the figure that pairs and blocks kept in memory are
  checked against before they are listed.

At import this module costs the standard library only: tqdm is imported when a
terminal display is first drawn, numba when the kernel cache is inspected.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from facet.errors import FacetError, FacetInputError

#: every phase, in the order a run goes through them (``compile`` or ``warmup``)
PHASES = ("load", "compile", "warmup", "encode", "count", "write")

#: environment variable overriding the available-memory figure (bytes; K, M, G, T suffixes)
MEMORY_ENV = "FACET_MEMORY_AVAILABLE"


#: the longest ``--timeout`` (about 31 years; a thread's wait takes no more)
MAX_TIMEOUT = 1e9
#: seconds between a deadline's cancellations of work running elsewhere (Spark's jobs),
#: and the longest a run's end waits for the canceller's call in flight
_CANCEL_EVERY = 0.05
_CANCEL_WAIT = 5.0

#: when the command now running started (``time.monotonic()``; set by the command
#: line): a run's deadline counts from it, start-up included, not from the run's start
COMMAND_STARTED: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "facet_command_started", default=None
)


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a run, as ``facet.detect(..., progress=callback)`` reports it.

    ``phase``: ``"load"`` (reading the used columns), ``"compile"`` (numba
    compiles the kernels: the first run only) or ``"warmup"`` (loading them from
    numba's cache), ``"encode"`` (typing and encoding), ``"count"`` (the DCs'
    counts), ``"write"`` (listing pairs or blocks, and writing ``out``).
    ``done`` / ``total``: progress within the phase -- DCs for ``count``, pairs
    (blocks) for ``write``, ``1`` step for the others; ``total`` is ``None``
    while unknown (blocks).  ``dc``: the index of the DC the event is about, or
    ``None``.  ``step``: what the engine is doing within the phase, when it
    says (the Spark engine: ``"statistics"``, ``"spreading rows"``, ``"12
    tasks"``, ...), else ``None``.

    Every phase starts with an event with ``done == 0`` and ends with one with
    ``done == total``; phases come in the order of :data:`PHASES`.
    """

    phase: str
    done: int
    total: int | None
    dc: int | None = None
    step: str | None = None


ProgressCallback = Callable[[ProgressEvent], None]

_VERBS = {
    "load": "loading",
    "compile": "compiling kernels",
    "warmup": "loading kernels",
    "encode": "encoding",
    "count": "counting",
    "write": "listing",
}


class DeadlineExceeded(FacetError):
    """The run's ``timeout`` passed (the command line: exit 3, one line)."""

    def __init__(self, seconds: float, where: str) -> None:
        self.seconds = seconds
        self.where = where
        super().__init__(f"time limit of {seconds:g} s reached while {where}")


# ---------------------------------------------------------------------------- monitor


class Monitor:
    """One run's progress events and deadline.

    The session calls :meth:`check`, :meth:`dc_started` and :meth:`dc_done`
    (duck-typed: the engine layer does not import this module); the API
    brackets the phases with :meth:`start` / :meth:`end`.  Events may come from
    worker threads (``parallel`` mode) -- one callback at a time."""

    def __init__(
        self,
        callback: ProgressCallback | None = None,
        timeout: float | None = None,
        describe: Callable[[int], str] | None = None,
    ) -> None:
        self.callback = callback
        self.timeout = timeout
        self.started = COMMAND_STARTED.get() or time.monotonic()
        self.deadline = None if timeout is None else self.started + timeout
        #: why the run was stopped (:meth:`stop`, or its deadline's watchdog), once it was
        self.stopped: DeadlineExceeded | None = None
        self.describe = describe or (lambda i: f"DC {i}")
        self.phase: str | None = None
        self.total: int | None = None
        self.done = 0
        self.dc: int | None = None
        self._last: tuple[str | None, int, int | None] | None = None
        self._lock = threading.Lock()
        #: work running elsewhere (an engine's remote jobs): see :meth:`on_deadline`
        self._cancels: list[Callable[[], None]] = []
        self._releases: list[Callable[[], None]] = []
        self._closed = threading.Event()
        self._watchdog: threading.Thread | None = None

    # --------------------------------------------------------------- events
    def _emit(self, dc: int | None = None) -> None:
        self._last = (self.phase, self.done, self.total)
        if self.callback is not None and self.phase is not None:
            self.callback(ProgressEvent(self.phase, self.done, self.total, dc))

    def start(self, phase: str, total: int | None = 1) -> None:
        self.check()
        with self._lock:
            self.phase, self.total, self.done, self.dc = phase, total, 0, None
            self._emit()

    def advance(self, k: int, dc: int | None = None) -> None:
        with self._lock:
            self.done += k
            self._emit(dc)

    def end(self) -> None:
        """The phase's last event (``done == total``), unless it was just sent."""
        with self._lock:
            if self.total is None:
                self.total = self.done
            self.done = self.total
            if self._last != (self.phase, self.done, self.total):
                self._emit()

    def dc_started(self, i: int) -> None:
        self.check()
        self.dc = i

    def step(self, text: str) -> None:
        """An engine's step within the phase (an event with ``step``, not counted)."""
        self.check()
        with self._lock:
            if self.callback is not None and self.phase is not None:
                self.callback(ProgressEvent(self.phase, self.done, self.total, self.dc, text))

    def dc_done(self, i: int) -> None:
        if self.phase == "count":
            self.advance(1, i)

    # --------------------------------------------------------------- deadline
    def where(self) -> str:
        phase = _VERBS.get(self.phase or "", "starting")
        if self.dc is not None and self.phase in ("count", "write"):
            return f"{phase} {self.describe(self.dc)}"
        return phase

    def exceeded(self) -> DeadlineExceeded:
        return DeadlineExceeded(self.timeout or 0.0, self.where())

    def check(self) -> None:
        """Raise :class:`DeadlineExceeded` once the deadline has passed, or the
        run was stopped (:meth:`stop`)."""
        if self.stopped is not None:
            raise self.stopped
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise self.exceeded()

    def stop(self, why: DeadlineExceeded | None = None) -> None:
        """Stop the run from another thread (the caller's, at the deadline or on
        Ctrl-C): its next :meth:`check` raises, and the work running elsewhere
        that :meth:`on_deadline` names is cancelled."""
        if self.stopped is None:
            self.stopped = why or self.exceeded()
        self._cancel_all()

    def on_deadline(
        self, cancel: Callable[[], None], release: Callable[[], None] | None = None
    ) -> None:
        """Work running elsewhere that the deadline must stop (a Spark engine's jobs):
        from the deadline (or :meth:`stop`) until the run ends (:meth:`close`), a
        watchdog thread calls ``cancel`` every 50 ms.  ``release`` runs when the run
        ends."""
        self._cancels.append(cancel)
        if release is not None:
            self._releases.append(release)
        if self.deadline is not None and self._watchdog is None:
            self._watchdog = threading.Thread(
                target=self._watch, name="facet-deadline", daemon=True
            )
            self._watchdog.start()

    def _watch(self) -> None:
        assert self.deadline is not None
        if self._closed.wait(max(self.deadline - time.monotonic(), 0.0)):
            return
        if self.stopped is None:
            self.stopped = self.exceeded()
        while True:
            self._cancel_all()
            if self._closed.wait(_CANCEL_EVERY):
                return

    def _cancel_all(self) -> None:
        for cancel in list(self._cancels):
            with contextlib.suppress(Exception):  # (the engine may be gone already)
                cancel()

    def close(self) -> None:
        """The run ended (called on the run's thread): stop the watchdog; when it was
        stopped, cancel once more (no job of the run is left running), then release
        what :meth:`on_deadline` took."""
        self._closed.set()
        if self._watchdog is not None:  # (it may be inside a cancel call: a JVM round trip)
            self._watchdog.join(_CANCEL_WAIT)
        if self.stopped is not None:
            self._cancel_all()
        for release in self._releases:
            with contextlib.suppress(Exception):
                release()
        self._cancels.clear()
        self._releases.clear()


def deadline_in(err: BaseException) -> DeadlineExceeded | None:
    """The :class:`DeadlineExceeded` behind ``err``: a check raised inside code
    that replaced it with an error of its own (a callback called from C) is
    found as that error's cause or context."""
    e: BaseException | None = err
    for _ in range(10):
        if e is None:
            return None
        if isinstance(e, DeadlineExceeded):
            return e
        e = e.__cause__ or e.__context__
    return None


# ---------------------------------------------------------------------------- memory


def parse_bytes(text: str) -> int:
    """``"1500"``, ``"64M"``, ``"2.5G"`` -> bytes (powers of 1024)."""
    s = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = 1
    if s and s[-1] in "KMGT":
        scale = 1024 ** ("KMGT".index(s[-1]) + 1)
        s = s[:-1]
    return int(float(s) * scale)


def available_memory() -> int | None:
    """Bytes this process can still allocate: ``$FACET_MEMORY_AVAILABLE`` when
    set, else the least of ``/proc/meminfo``'s MemAvailable and the cgroup's
    limit minus its usage; ``None`` when unknown."""
    env = os.environ.get(MEMORY_ENV)
    if env:
        try:
            return parse_bytes(env)
        except ValueError:
            raise FacetInputError(  # bad usage: exit 2
                f"${MEMORY_ENV}: expected bytes like 512M or 4G, got '{env}'; set it so or unset it"
            ) from None
    figures: list[int] = []
    with contextlib.suppress(OSError, ValueError), open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                figures.append(int(line.split()[1]) * 1024)
                break
    for limit, usage in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ):
        with contextlib.suppress(OSError, ValueError):
            with open(limit) as f:
                cap = f.read().strip()
            if cap != "max" and int(cap) < 1 << 60:
                with open(usage) as f:
                    figures.append(max(int(cap) - int(f.read().strip()), 0))
                break
    return min(figures) if figures else None


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


# ---------------------------------------------------------------------------- kernel cache


#: the warm-up's kernel names (:mod:`facet.engine.warmup`) -> module and the
#: functions its warm-up calls from Python (their callees compile with them);
#: every warm-up kernel is here (tests/test_limits_progress.py holds them equal)
KERNEL_ENTRIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "dictionary": ("dictionary", ("encode_bytes", "gather_codes")),
    "dictionary-parallel": (
        "dictionary",
        (
            "encode_bytes",
            "_few_values",
            "_merge_few",
            "_remap",
            "_arena_for",
            "_verify",
            "_hash_rows",
            "_scatter_rows",
            "_dedupe_parts",
            "_assign_parts",
        ),
    ),  # fmt: skip
    "ranks": (
        "ranks",
        (
            "dense_ranks",
            "histogram_ranks",
            "value_range",
            "mark_range",
            "lookup_range",
            "move_codes",
        ),
    ),
    "hashing": (
        "hashing",
        ("hash_bytes", "hash_words", "hll_registers", "mix64_array", "row_hashes"),
    ),
    "refine": ("refine", ("refine",)),
    "tids": ("common", ("iota",)),
    "counting-sort": ("refine", ("count_codes", "scatter_by_code", "composite_keys")),
    "group-composite": ("composite", ("group_composite",)),
    "bhsm": ("bhsm", ("refine_bhsm",)),
    "cdq": ("decompose", ("refine_decompose",)),
    "iejoin": ("iejoin", ("refine_iejoin",)),
    "count-groups": ("count", ("count_groups", "degree_totals")),
    "count-keyed": ("count", ("count_keyed", "scatter_degrees", "sparse_degree_totals")),
    "key-candidates": ("composite", ("key_candidates", "key_counts")),
    "expand": ("expand", ("expand",)),
    "sides-to-lists": ("expand", ("sides_to_lists",)),
    "components": (
        "components",
        ("union_groups", "union_dominance", "union_pairs", "component_labels"),
    ),
    "suspects": ("suspects", ("greedy_cover",)),
    "partners": (
        "partners",
        ("sample_group_partners", "sample_pair_partners", "sample_partners"),
    ),
    "dominance": ("dominance", ("wavelet_build", "orthant_counts", "union_count")),
}


def kernels_cache_cold(kernels: Iterable[str] | None = None) -> bool | None:
    """Whether numba will compile some of ``kernels`` (warm-up names; ``None``:
    all): one of the functions their warm-up calls has no valid entry in
    numba's cache index (none yet, or its source changed).  ``None`` when that
    cannot be told -- then nothing is claimed; names not known here are skipped."""
    names = KERNEL_ENTRIES if kernels is None else kernels
    try:
        import importlib

        for name in names:
            entry = KERNEL_ENTRIES.get(name)
            if entry is None:
                continue
            module = importlib.import_module(f"facet.kernels.{entry[0]}")
            for fn in entry[1]:
                cache = getattr(getattr(module, fn, None), "_cache", None)
                index = getattr(cache, "_cache_file", None)
                if index is not None and not index._load_index():
                    return True
        return False
    except Exception:  # noqa: BLE001 - numba's internals moved: claim nothing
        return None


# ---------------------------------------------------------------------------- terminal


class CompileLine:
    """The command line's display where stderr is not a terminal (a log, a pipe):
    one line when kernels compile (a first run: it takes minutes), nothing else."""

    def __init__(self, stream: TextIO, prog: str = "facet") -> None:
        self.stream = stream
        self.prog = prog
        self._said = False

    def __call__(self, ev: ProgressEvent) -> None:
        if ev.phase == "compile" and not self._said:
            self._said = True
            self.write(f"{self.prog}: {compiling_line(ev.total)}")

    def write(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def close(self) -> None:
        pass


def compiling_line(kernels: int | None) -> str:
    """What a display says when numba compiles the kernels."""
    many = f"{kernels} kernels" if kernels else "the kernels"
    return f"compiling {many} (first run only; 1-3 minutes)"


class TerminalProgress:
    """The command line's display of :class:`ProgressEvent`: one transient tqdm
    line per phase on ``stream`` (shown after ``delay`` seconds, cleared when
    the phase ends), and the line ``facet: compiling kernels (first run only)``
    when numba compiles.  Call it with events; :meth:`write` prints a line
    above the display; :meth:`close` clears it."""

    def __init__(self, stream: TextIO, delay: float = 0.5, prog: str = "facet") -> None:
        self.stream = stream
        self.delay = delay
        self.prog = prog
        self._tqdm: Any = None
        self._bar: Any = None
        self._phase: str | None = None
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, ev: ProgressEvent) -> None:
        with self._lock:
            if ev.phase != self._phase:
                self._close_bar()
                self._phase = ev.phase
                if ev.phase == "compile":
                    self.write(f"{self.prog}: {compiling_line(ev.total)}")
                self._open_bar(ev)
            bar = self._bar
            if bar is None:
                return
            if ev.total is not None and bar.total != ev.total:
                bar.total = ev.total
            if ev.step is not None:
                where = f"DC {ev.dc}: " if ev.dc is not None else ""
                bar.set_postfix_str(f"{where}{ev.step}", refresh=True)
            elif ev.dc is not None and ev.phase in ("count", "write"):
                done = " done" if ev.phase == "count" else ""
                bar.set_postfix_str(f"DC {ev.dc}{done}", refresh=False)
            bar.update(ev.done - bar.n)
            if ev.total is not None and ev.done >= ev.total:
                self._close_bar()

    def _open_bar(self, ev: ProgressEvent) -> None:
        if self._tqdm is None:
            from tqdm import tqdm  # only now: the CLI starts without it

            self._tqdm = tqdm
        verb = _VERBS.get(ev.phase, ev.phase)
        steps = ev.total is not None and ev.total <= 1 and ev.phase != "count"
        unit = {"count": "DCs", "write": "pairs" if ev.total is not None else "blocks"}
        self._bar = self._tqdm(
            total=ev.total,
            desc=f"{self.prog}: {verb}",
            file=self.stream,
            leave=False,
            delay=self.delay,
            ncols=self._size()[0],
            nrows=self._size()[1],
            unit=unit.get(ev.phase, "it"),
            unit_scale=ev.phase == "write",
            bar_format="{desc} {elapsed}" if steps else None,
        )
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="facet-progress", daemon=True)
            self._ticker.start()

    def _size(self) -> tuple[int, int]:
        """The terminal's columns and lines (80 x 24 where it reports none, as a
        bare pty does: tqdm would draw nothing)."""
        try:
            cols, lines = os.get_terminal_size(self.stream.fileno())
        except (AttributeError, OSError, ValueError):
            cols, lines = 0, 0
        return (min(cols, 120) if cols > 0 else 80), (lines if lines > 0 else 24)

    def _tick(self) -> None:
        """Redraw the elapsed time of a phase that reports no steps."""
        while not self._stop.wait(0.5):
            with self._lock:
                bar = self._bar
                if bar is not None and time.time() - bar.start_t >= self.delay:
                    bar.refresh()

    def _close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def write(self, line: str) -> None:
        with self._lock:
            if self._tqdm is not None and self._bar is not None:
                self._tqdm.write(line, file=self.stream)
            else:
                print(line, file=self.stream, flush=True)

    def close(self) -> None:
        with self._lock:
            self._stop.set()
            self._close_bar()
            self._phase = None
