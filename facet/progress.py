"""Progress and limits of a run (docs/semantics.md §7, §9).

* :class:`ProgressEvent`: what ``facet.detect(..., progress=callback)`` reports;
  :class:`TerminalProgress` is the command line's consumer (a tqdm display on
  stderr when it is a terminal).
* :class:`Monitor`: one run's events and its deadline (``timeout=`` /
  ``--timeout``), checked between phases, between DCs and between batches of
  pairs, with a ``SIGALRM`` for the work in between (main thread only; a numba
  kernel finishes its call before the signal is seen), and a watchdog thread
  that cancels work running elsewhere (a Spark run's jobs: :meth:`Monitor.on_deadline`).
* :func:`available_memory`: the figure that pairs and blocks kept in memory are
  checked against before they are listed.

At import this module costs the standard library only: tqdm is imported when a
terminal display is first drawn, numba when the kernel cache is inspected.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from facet.errors import FacetError, FacetInputError

#: every phase, in the order a run goes through them (``compile`` or ``warmup``)
PHASES = ("load", "compile", "warmup", "encode", "count", "write")

#: environment variable overriding the available-memory figure (bytes; K, M, G, T suffixes)
MEMORY_ENV = "FACET_MEMORY_AVAILABLE"


#: the longest ``--timeout`` (about 31 years): the alarm timer takes no more
MAX_TIMEOUT = 1e9
#: seconds between a deadline's cancellations of work running elsewhere (Spark's jobs),
#: and the longest a run's end waits for the canceller's call in flight
_CANCEL_EVERY = 0.05
_CANCEL_WAIT = 5.0


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
        self.started = time.monotonic()
        self.deadline = None if timeout is None else self.started + timeout
        #: what the deadline's alarm raised, once it went off
        self.fired: DeadlineExceeded | None = None
        self.describe = describe or (lambda i: f"DC {i}")
        self.phase: str | None = None
        self.total: int | None = None
        self.done = 0
        self.dc: int | None = None
        self._last: tuple[str | None, int, int | None] | None = None
        self._lock = threading.Lock()
        #: work a signal cannot stop (an engine's remote jobs): see :meth:`on_deadline`
        self._cancels: list[Callable[[], None]] = []
        self._releases: list[Callable[[], None]] = []
        self._defer_in: tuple[str, ...] = ()
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
        """Raise :class:`DeadlineExceeded` once the deadline has passed."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise self.exceeded()

    def on_deadline(
        self,
        cancel: Callable[[], None],
        release: Callable[[], None] | None = None,
        defer_in: tuple[str, ...] = (),
    ) -> None:
        """Work running elsewhere that the deadline must stop (a Spark engine's jobs):
        from the deadline until the run ends (:meth:`close`), a watchdog thread calls
        ``cancel`` every 50 ms (on any thread, with or without the alarm); the alarm
        raises nowhere in code whose file path holds one of ``defer_in`` (a call into
        the JVM that a signal would break), but comes back every 50 ms until the
        cancelled call has returned.  ``release`` runs when the run ends."""
        self._cancels.append(cancel)
        if release is not None:
            self._releases.append(release)
        self._defer_in += defer_in
        if self.deadline is not None and self._watchdog is None:
            self._watchdog = threading.Thread(
                target=self._watch, name="facet-deadline", daemon=True
            )
            self._watchdog.start()

    def _watch(self) -> None:
        assert self.deadline is not None
        if self._closed.wait(max(self.deadline - time.monotonic(), 0.0)):
            return
        if self.fired is None:
            self.fired = self.exceeded()
        while True:
            self._cancel_all()
            if self._closed.wait(_CANCEL_EVERY):
                return

    def _cancel_all(self) -> None:
        for cancel in list(self._cancels):
            with contextlib.suppress(Exception):  # (the engine may be gone already)
                cancel()

    def close(self) -> None:
        """The run ended: stop the watchdog; past the deadline, cancel once more (no
        job of the run is left running), then release what :meth:`on_deadline` took."""
        self._closed.set()
        if self._watchdog is not None:  # (it may be inside a cancel call: a JVM round trip)
            self._watchdog.join(_CANCEL_WAIT)
        if self.fired is not None:
            self._cancel_all()
        for release in self._releases:
            with contextlib.suppress(Exception):
                release()
        self._cancels.clear()
        self._releases.clear()

    def _deferred(self, frame: Any) -> bool:
        """Whether the alarm found the main thread in code it must not raise in."""
        while frame is not None and self._defer_in:
            name = frame.f_code.co_filename
            if any(part in name for part in self._defer_in):
                return True
            frame = frame.f_back
        return False

    @contextlib.contextmanager
    def alarm(self) -> Iterator[None]:
        """A ``SIGALRM`` at the deadline that raises :class:`DeadlineExceeded`
        where the main thread is (waiting for worker threads, or right after a
        kernel call returns).  Only on the main thread, and only when no other
        ``SIGALRM`` handler or timer is in use; else the checks alone apply."""
        if (
            self.deadline is None
            or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None)
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0
        ):
            yield
            return

        def on_alarm(signum: int, frame: Any) -> None:
            if self.fired is None:
                self.fired = self.exceeded()
            if self._deferred(frame):  # the watchdog cancels what it waits for
                signal.setitimer(signal.ITIMER_REAL, _CANCEL_EVERY)
                return
            raise self.fired

        previous = signal.signal(signal.SIGALRM, on_alarm)
        try:
            signal.setitimer(signal.ITIMER_REAL, max(self.deadline - time.monotonic(), 1e-3))
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def deadline_in(err: BaseException) -> DeadlineExceeded | None:
    """The :class:`DeadlineExceeded` behind ``err``: a signal handler that raises
    as a numba kernel returns surfaces as a ``SystemError`` whose context it is."""
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
#: functions its warm-up calls from Python (their callees compile with them)
KERNEL_ENTRIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "dictionary": ("dictionary", ("encode_bytes",)),
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
    "hashing": (
        "hashing",
        ("hash_bytes", "hash_words", "hll_registers", "mix64_array", "row_hashes"),
    ),
    "refine": ("refine", ("refine",)),
    "counting-sort": ("refine", ("count_codes", "scatter_by_code")),
    "bhsm": ("bhsm", ("refine_bhsm",)),
    "cdq": ("decompose", ("refine_decompose",)),
    "iejoin": ("iejoin", ("refine_iejoin",)),
    "count-groups": ("count", ("count_groups",)),
    "count-keyed": ("count", ("count_keyed",)),
    "expand": ("expand", ("expand",)),
    "sides-to-lists": ("expand", ("sides_to_lists",)),
    "components": (
        "components",
        ("union_groups", "union_dominance", "union_pairs", "component_labels"),
    ),
    "suspects": ("suspects", ("greedy_cover",)),
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
                    self.write(f"{self.prog}: compiling kernels (first run only)")
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
