"""The kernels' on-disk cache (kernels/jit.py) stays right when processes compile at once.

numba's own cache can pair one process's index with another's data file when two
processes save different signatures of one kernel at the same time; every later
process then runs the wrong machine code for a signature.  The race test below forces
that interleaving (sleeps inside the saves, two processes started together) and checks
that the saves contended, were serialized, and left a cache from which a third
process gets the right answer for both signatures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

from facet.kernels.jit import LOCK_NAME, LockedCache, LockedCacheFile, cache_lock, njit

_KERNEL = """
from facet.kernels.jit import njit

@njit(cache=True)
def twice(x):
    return x[0] * 2
"""

#: a child: calls the kernel on one dtype; its save waits for the other child's, logs
#: when it starts (before the lock) and when it writes, and sleeps inside numba's
#: index and data writes
_CHILD = """
import json, sys, time
import numpy as np
from numba.core import caching
import facet.kernels.jit as jit

log, kind, index_sleep, data_sleep = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])

def note(event):
    with open(log, "a") as f:
        f.write(json.dumps([kind, event, time.monotonic()]) + "\\n")

save, save_index, save_data = jit.LockedCacheFile.save, caching.IndexDataCacheFile._save_index, caching.IndexDataCacheFile._save_data

def logged_save(self, key, data):
    note("enter")
    deadline = time.monotonic() + 60
    while open(log).read().count('"enter"') < 2 and time.monotonic() < deadline:
        time.sleep(0.01)  # both children save at once
    save(self, key, data)

def slow_index(self, overloads):
    note("index")
    time.sleep(index_sleep)
    save_index(self, overloads)

def slow_data(self, name, data):
    time.sleep(data_sleep)
    save_data(self, name, data)
    note("done")

jit.LockedCacheFile.save = logged_save
caching.IndexDataCacheFile._save_index = slow_index
caching.IndexDataCacheFile._save_data = slow_data
sys.path.insert(0, sys.argv[5])
import kmod
print(kmod.twice(np.array([3], {"int": np.int64, "float": np.float64}[kind])))
"""

_CHECK = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import kmod
print(kmod.twice(np.array([3], np.int64)), kmod.twice(np.array([3.5], np.float64)))
print(sum(kmod.twice.stats.cache_hits.values()), sum(kmod.twice.stats.cache_misses.values()))
"""


def test_concurrent_saves_of_two_signatures_leave_a_right_cache(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "kmod.py").write_text(_KERNEL)
    log = tmp_path / "saves.jsonl"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_DISABLE_JIT": "0"}
    # numba's race: one process reads the empty index, sleeps, then writes its index;
    # the other writes its index, sleeps, then its data file, both numbered 1
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(log), kind, index_sleep, data_sleep, str(src)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for kind, index_sleep, data_sleep in (("int", "0.5", "0"), ("float", "0", "1"))
    ]
    outs = [c.communicate(timeout=120)[0].strip() for c in children]
    assert [c.returncode for c in children] == [0, 0]
    assert outs == ["6", "6.0"]
    events: dict[str, dict[str, float]] = {}
    for line in log.read_text().splitlines():
        kind, event, at = json.loads(line)
        events.setdefault(kind, {})[event] = at
    a, b = sorted(events.values(), key=lambda e: e["index"])
    # the saves contended (each began before the other had finished) ...
    assert a["enter"] < b["done"] and b["enter"] < a["done"]
    # ... and were serialized: the second wrote its index after the first's data
    assert b["index"] > a["done"]
    check = subprocess.run(
        [sys.executable, "-c", _CHECK, str(src)], env=env, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.split("\n")[:2] == ["6 7.0", "2 0"]  # both loaded from the cache


def test_the_lock_excludes_other_holders(tmp_path):
    """While one holder has the folder's lock, a save waits; then it goes through."""
    file = LockedCacheFile(cache_path=str(tmp_path), filename_base="k", source_stamp=(1, 2))
    saved = threading.Event()

    def save() -> None:
        file.save(("sig",), b"code")
        saved.set()

    with cache_lock(str(tmp_path)):
        worker = threading.Thread(target=save)
        worker.start()
        time.sleep(0.3)
        assert not saved.is_set()
    worker.join(10)
    assert saved.is_set()
    assert file.load(("sig",)) == b"code"
    assert file.load(("other",)) is None
    assert (tmp_path / LOCK_NAME).exists()


def test_a_missing_folder_is_no_lock(tmp_path):
    with cache_lock(str(tmp_path / "not-made")):
        pass
    assert not (tmp_path / "not-made").exists()


def _plain(x):
    return x


def test_njit_caches_through_the_locked_cache():
    disp, bare = njit(cache=True, nogil=True)(_plain), njit(_plain)
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        assert disp is _plain and bare is _plain  # numba hands the function back
        assert type(LockedCache(_plain)._cache_file) is LockedCacheFile
    else:
        assert isinstance(disp._cache, LockedCache)
        assert not isinstance(bare._cache, LockedCache)  # no cache asked
        assert disp(3) == 3 and bare(4) == 4


class _Kernel:
    """What :func:`facet.kernels.jit._locked_cache` reads of a dispatcher."""

    py_func = staticmethod(_plain)


def _no_numba_folder(monkeypatch, tmp_path):
    """numba finding no folder of its own: only the user-provided locator, unset."""
    from numba.core import config

    import facet.kernels.jit as jit

    monkeypatch.setattr(config, "CACHE_LOCATOR_CLASSES", "UserProvidedCacheLocator")
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setattr(jit.tempfile, "tempdir", str(tmp_path))
    return jit, config


def test_no_writable_cache_folder_falls_back_to_one_of_the_users_own(monkeypatch, tmp_path):
    """A read-only install run by a user whose home is not writable: numba raises
    "no locator available" at import; the kernels cache under the temporary
    directory instead, in a folder only this user may write."""
    jit, config = _no_numba_folder(monkeypatch, tmp_path)
    cache = jit._locked_cache(_Kernel())
    folder = tmp_path / f"facet-numba-{os.getuid()}"
    assert isinstance(cache, LockedCache) and str(folder) == config.CACHE_DIR
    assert cache._cache_path.startswith(str(folder))
    assert (folder.stat().st_mode & 0o777) == 0o700


def test_a_fallback_folder_others_may_write_is_not_used(monkeypatch, tmp_path):
    """Another user could plant machine code in a shared folder: no cache then (the
    kernels compile in each process)."""
    jit, config = _no_numba_folder(monkeypatch, tmp_path)
    folder = tmp_path / f"facet-numba-{os.getuid()}"
    folder.mkdir()
    folder.chmod(0o777)
    assert jit.fallback_cache_dir() is None
    assert jit._locked_cache(_Kernel()) is None and config.CACHE_DIR == ""
