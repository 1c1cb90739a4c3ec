"""numba's ``njit`` with an on-disk cache that stays right when processes compile at once.

numba's cache (``numba.core.caching.IndexDataCacheFile.save``) numbers a new
signature's data file from the index it has just read, writes the index, then the
data file.  Two processes that compile different signatures of one kernel at the
same time (a fresh install running two ``facet`` commands, Spark's Python workers,
a test run's subprocesses) can both take number 1: the index of one and the data
file of the other are then what stays on disk, and every later process loads one
signature's machine code for another -- wrong counts or a segmentation fault, until
the source changes.  Here each kernel's cache reads and writes under an exclusive
``flock`` on one file in the cache folder, so an index and its data files always
come from the same process.  Compiling itself is not serialized: only the moments a
cache entry is read or written are.

Every kernel module takes ``njit`` from here (same arguments as numba's).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from numba import njit as _numba_njit
from numba.core import config as numba_config
from numba.core.caching import FunctionCache, IndexDataCacheFile
from numba.core.dispatcher import Dispatcher

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: numba's cache as it is
    fcntl = None  # type: ignore[assignment]

#: the lock file, one per cache folder (numba's ``__pycache__`` or ``$NUMBA_CACHE_DIR``)
LOCK_NAME = "facet-kernels.lock"


class LockedCacheFile(IndexDataCacheFile):
    """numba's index and data files of one kernel, read and written under the
    cache folder's lock."""

    def save(self, key, data):
        with cache_lock(self._cache_path):
            super().save(key, data)

    def load(self, key):
        with cache_lock(self._cache_path):
            return super().load(key)


class LockedCache(FunctionCache):
    """numba's per-function cache over a :class:`LockedCacheFile`."""

    def __init__(self, py_func: Callable) -> None:
        super().__init__(py_func)
        self._cache_file = LockedCacheFile(
            cache_path=self._cache_path,
            filename_base=self._impl.filename_base,
            source_stamp=self._impl.locator.get_source_stamp(),
        )


@contextlib.contextmanager
def cache_lock(folder: str) -> Iterator[None]:
    """Hold the exclusive lock of the cache ``folder`` (none where the lock file
    cannot be opened -- a folder not made yet holds no cache to read -- or the file
    system has no locks)."""
    fd = -1
    if fcntl is not None:
        with contextlib.suppress(OSError):
            fd = os.open(os.path.join(folder, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if fd >= 0:
            # a file system without locks (ENOLCK): numba's cache as it is
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        if fd >= 0:
            os.close(fd)  # releases the lock


def fallback_cache_dir() -> str | None:
    """A cache folder of this user's own under the temporary directory, for when
    numba finds no writable one (the package's ``__pycache__``, ``~/.cache/numba``:
    a read-only install run by a user whose home is not writable).  None when that
    folder cannot be made, or is not this user's alone (another user could plant
    machine code there)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    path = os.path.join(tempfile.gettempdir(), f"facet-numba-{uid}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return None
    mine = stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o022
    return path if mine and os.access(path, os.W_OK) else None


def _locked_cache(disp: Dispatcher) -> LockedCache | None:
    """The kernel's cache; where numba finds no writable folder for it (it raises
    "no locator available"), in :func:`fallback_cache_dir` -- else none: the kernel
    then compiles in each process, as numba without ``cache``."""
    try:
        return LockedCache(disp.py_func)
    except RuntimeError:
        if numba_config.CACHE_DIR:  # the user's folder, not writable
            return None
        folder = fallback_cache_dir()
        if folder is None:
            return None
        numba_config.CACHE_DIR = folder  # (numba reads it when a cache is made)
        try:
            return LockedCache(disp.py_func)
        except RuntimeError:
            return None


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` (``@njit`` or ``@njit(...)``); ``cache=True`` caches on disk
    through :class:`LockedCache` (:func:`_locked_cache`: where numba's own places
    are not writable, in a folder under the temporary directory)."""
    cache = options.pop("cache", False)

    def wrap(fn: Callable) -> Any:
        disp = _numba_njit(**options)(fn)
        if cache and isinstance(disp, Dispatcher):  # not a plain function (NUMBA_DISABLE_JIT)
            if hasattr(disp, "_cache"):  # numba's attribute behind enable_caching()
                locked = _locked_cache(disp)
                if locked is not None:
                    disp._cache = locked
            else:  # pragma: no cover - a numba that keeps its cache elsewhere: unlocked
                disp.enable_caching()
        return disp

    if args:
        (fn,) = args
        return wrap(fn)
    return wrap
