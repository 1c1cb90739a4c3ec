"""Big arrays on huge pages (:mod:`facet.engine.memory`): the array is what was
asked for, starts on a 2 MiB boundary from ``HUGE_MIN`` bytes, and the whole
table's tids are ``arange``'s."""

from __future__ import annotations

import numpy as np
import pytest

from facet.engine.memory import HUGE_MIN, HUGE_PAGE, huge_empty, whole_tids


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("nbytes", [0, 4096, HUGE_MIN - 8, HUGE_MIN, 4_000_000, 9 << 20])
def test_huge_empty_is_the_array_asked_for(dtype, nbytes):
    n = nbytes // np.dtype(dtype).itemsize
    a = huge_empty(n, dtype)
    assert a.shape == (n,) and a.dtype == np.dtype(dtype) and a.flags.c_contiguous
    assert a.flags.writeable
    if n * a.itemsize >= HUGE_MIN:
        assert a.ctypes.data % HUGE_PAGE == 0  # on a huge page's boundary
    a[:] = 7  # every item is usable memory
    assert int(a[-1] if n else 7) == 7


@pytest.mark.parametrize("n", [0, 1, 1000, HUGE_MIN // 4 - 1, HUGE_MIN // 4, 1_000_003])
def test_whole_tids_are_arange(n):
    t = whole_tids(n)
    assert t.dtype == np.int32 and np.array_equal(t, np.arange(n, dtype=np.int32))
