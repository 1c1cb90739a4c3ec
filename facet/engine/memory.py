"""Big arrays on transparent huge pages (docs/architecture.md, `memory.py`).

A fresh array's first touch faults in its pages, and at a million rows that
costs about as much as the pass that fills it: 4 KiB pages fault ~1,000 times
per 4 MB here (1.6 µs each), 2 MiB pages a few times.  numpy advises huge pages
for blocks of 4 MiB and up, but a block starts on a 4 KiB page, so only the 2
MiB-aligned middle of it can be backed by huge pages.  :func:`huge_empty` places
an array on a 2 MiB boundary inside such a block.
"""

from __future__ import annotations

import numpy as np

#: 2 MiB: a transparent huge page
HUGE_PAGE = 2 << 20
#: numpy advises huge pages for blocks of at least this many bytes
_ADVISED = 4 << 20
#: arrays from this size go on huge pages (below, the padding is not worth it)
HUGE_MIN = 2 << 20


def huge_empty(n: int, dtype: np.dtype | type) -> np.ndarray:
    """An uninitialized array of ``n`` items starting on a 2 MiB boundary of a
    block numpy advises for huge pages (``n`` items under :data:`HUGE_MIN`
    bytes: a plain ``np.empty``).  At most one huge page past the data is
    touched."""
    dt = np.dtype(dtype)
    nbytes = n * dt.itemsize
    if nbytes < HUGE_MIN:
        return np.empty(n, dt)
    raw = np.empty(max(nbytes + HUGE_PAGE, _ADVISED), np.uint8)
    at = -raw.ctypes.data % HUGE_PAGE
    return raw[at : at + nbytes].view(dt)


def whole_tids(n: int) -> np.ndarray:
    """``np.arange(n, dtype=np.int32)``, on huge pages from :data:`HUGE_MIN` bytes."""
    if 4 * n < HUGE_MIN:
        return np.arange(n, dtype=np.int32)
    from facet.kernels.common import iota  # (numba loads with the kernels, not here)

    out = huge_empty(n, np.int32)
    iota(out)
    return out
