"""BHSM: Binning-Hash-Sort-Merge for one inequality ``t.A op t'.B`` (paper §5.3).

Equal-width bins over the group's code range (codes are dense ranks, so the
bins are equal-width over the distinct values).  For a left bin ``b`` every
right tuple in a later bin (``<``, ``<=``) or earlier bin (``>``, ``>=``)
qualifies: one group ``(L_b, R_{>b})`` per bin, a suffix (prefix) of the
sorted right copy.  Tuples of the *same* bin are candidates, checked with HSM
inside the bin: ``(L_v, R_{(v, end of b)})``.  Compared with HSM, whose every
output group carries the whole suffix ``R_{>v}``, the right sides of all but
one group per bin stay within one bin, which keeps the work of the following
refinements near ``bins x |R| + |R|^2 / bins`` instead of ``d x |R|``.

A group with fewer tuples than ``2 x bins`` (or fewer distinct codes than
bins) gets bins of width one, which is HSM.  With ``b`` bins over ``d`` codes
the right sides a following stage reads sum to about ``b |R| + d |R| / b``,
smallest at ``b = sqrt(d)``: ``nbins <= 0`` picks that per group.
"""

from __future__ import annotations

import numpy as np

from facet.kernels.jit import njit
from facet.kernels.refine import _copy_sorted, _put, hsm_walk


@njit(cache=True, nogil=True)
def _emit_bhsm(obuf, info, codes, ra, rb, op, nbins, odesc, write):
    ka = codes[ra]
    kb = codes[rb]
    k = 0
    low_side = op == 2 or op == 3  # t.A < t'.B: partners lie above
    for g in range(info.shape[0]):
        l0 = info[g, 0]
        l1 = l0 + info[g, 1]
        r0 = info[g, 2]
        r1 = r0 + info[g, 3]
        if l0 == l1 or r0 == r1:
            continue
        lo = min(ka[obuf[l0]], kb[obuf[r0]])
        hi = max(ka[obuf[l1 - 1]], kb[obuf[r1 - 1]])
        span = hi - lo + 1
        width = 1
        bins = nbins if nbins > 0 else max(2, np.int64(np.sqrt(span)))
        if (l1 - l0) + (r1 - r0) >= 2 * bins and span > bins:
            width = (span + bins - 1) // bins
        # previous "beyond the bin" group, for merging adjacent bins with the same right side
        pb_ls = -1
        pb_le = -1
        pb_r0 = -1
        pb_r1 = -1
        i = l0
        p = r0  # first R index with code >= v
        q = r0  # first R index with code > v
        bs_ = r0  # first R index in the current bin
        be_ = r0  # first R index past the current bin
        while i < l1:
            b = (ka[obuf[i]] - lo) // width
            bin_lo = lo + b * width
            bin_hi = bin_lo + width  # exclusive
            # left range of this bin
            e = i
            while e < l1 and ka[obuf[e]] < bin_hi:
                e += 1
            while bs_ < r1 and kb[obuf[bs_]] < bin_lo:
                bs_ += 1
            if be_ < bs_:
                be_ = bs_
            while be_ < r1 and kb[obuf[be_]] < bin_hi:
                be_ += 1
            # the whole bin against the bins beyond it
            if low_side:
                c0 = be_
                c1 = r1
            else:
                c0 = r0
                c1 = bs_
            if c1 > c0:
                if pb_ls >= 0 and pb_le == i and pb_r0 == c0 and pb_r1 == c1:
                    pb_le = e
                else:
                    if pb_ls >= 0:
                        k = _put(
                            odesc, k, write, pb_ls, pb_le, pb_ls, pb_ls, pb_r0, pb_r1, pb_r0, pb_r0
                        )
                    pb_ls = i
                    pb_le = e
                    pb_r0 = c0
                    pb_r1 = c1
            # candidates inside the bin: HSM on its runs
            k, p, q = hsm_walk(obuf, ka, kb, op, i, e, bs_, be_, p, q, odesc, k, write)
            i = e
        if pb_ls >= 0:
            k = _put(odesc, k, write, pb_ls, pb_le, pb_ls, pb_ls, pb_r0, pb_r1, pb_r0, pb_r0)
    return k


@njit(cache=True, nogil=True)
def refine_bhsm(buf, desc, codes, ra, rb, dom, op, nbins, tune):
    """Refine the groups by ``t.<row ra> op t'.<row rb>`` with BHSM (``nbins`` bins;
    ``nbins <= 0``: the square root of each group's code span, which balances the
    bin-level right sides against the in-bin ones)."""
    obuf, info = _copy_sorted(buf, desc, codes, ra, rb, dom, tune)
    dummy = np.empty((0, 8), np.int64)
    n_out = _emit_bhsm(obuf, info, codes, ra, rb, op, nbins, dummy, False)
    odesc = np.empty((n_out, 8), np.int64)
    _emit_bhsm(obuf, info, codes, ra, rb, op, nbins, odesc, True)
    return obuf, odesc
