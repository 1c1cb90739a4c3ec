"""IEJoin refinement: a batch of groups and a *pair* of inequalities in, the sub-pairs
that satisfy both out (paper §5.3; Khayyat et al., "Lightning Fast and Space
Efficient Inequality Joins", PVLDB 2015).

For every input group ``(L, R)`` and the predicates ``p1: t.X op1 t'.X'`` and
``p2: t.Y op2 t'.Y'`` (``op`` one of ``< <= > >=``):

1. *Normalize.*  ``>``/``>=`` become ``<``/``<=`` on negated codes (``a > b`` <=>
   ``-a < -b``), so each predicate reads ``key(t) < key(t')`` (strict) or ``<=``.
2. *Sort* (a row with a NULL in one of its side's two columns is dropped from that
   side first): ``R1`` = the right side by ``p1``'s key ascending -- the bit array is
   indexed by positions in ``R1``; ``L1`` = the left side likewise.  A reflexive
   group whose predicates are each on one column (``ra1 == rb1``, ``ra2 == rb2``) is
   the paper's self-join: ``L1`` *is* ``R1`` and one sort serves both sides.
3. *Permutation arrays:* ``ins`` = positions of ``R1`` by ``p2``'s right key,
   descending (the order right tuples enter the bit array); ``sweep`` = positions
   of ``L1`` by ``p2``'s left key, descending (the order left tuples are visited).
   *Offset array* ``O1[i]`` = first position of ``R1`` whose ``p1`` key satisfies
   ``p1`` against ``L1[i]`` (a merge of ``L1`` and ``R1``: upper bound for a strict
   ``p1``, lower bound for a non-strict one).
4. *Sweep:* visiting left tuples in ``sweep`` order, first mark in the bit array
   every right tuple that now satisfies ``p2`` (its key ``>`` -- or ``>=`` -- the
   current left key; keys only decrease, so a pointer over ``ins`` suffices), then
   the matches of the left tuple are exactly the set bits in ``[O1[i], |R|)``.

Ties are exact by construction: ``p2``'s strictness decides whether equal keys are
marked before the left tuple is visited, ``p1``'s strictness whether the offset is
the lower or the upper bound of the equal-key run.

The bit array is ``uint64`` words with a second-level bitmap (one bit per non-zero
word), so a scan jumps over runs of empty words; a Fenwick tree over the same
positions counts the marked bits of ``[O1[i], |R|)`` in ``O(log |R|)`` and the
largest marked position is kept, so before scanning the kernel knows whether the
match set is empty, or one contiguous run of ``R1`` (then the output group refers
to that slice of the sorted right copy -- nothing is written per pair, which keeps
dense outputs ``O(|L| + |R|)``), or must be written out explicitly.

Output: per input group the buffer holds the left side in sweep order, ``R1``, and
the explicit match lists.  A run of consecutive left tuples (in sweep order) with
the same match set becomes one group ``(run, matches)``.  Two consecutive match
sets are both suffixes (from their offsets) of the bits marked before the first
one, plus the bits marked in between, so they are equal iff none of the new bits
lies at or past the second offset and their sizes agree: an exact test in ``O(1)``
(same offset, nothing new in range) or ``O(log |R|)`` (the Fenwick count), without
comparing lists.  Groups without a pair ``t != t'`` (``({t}, {t})``) are dropped.
Output groups are disjoint (each left tuple is in exactly one group of its input
group) and their union is the set of satisfying pairs.  The sweep runs twice per
input group: the first pass only sizes the output (lists and groups), the second
writes it into a buffer grown once, so no output pair is copied or page-faulted
twice.

The buffer holds ``O(|L| + |R| + written pairs)`` tids: runs of ``R1`` cost nothing,
but a match set that is not one run is written out in full, so a large output that
is neither dense nor correlated is as large as the pair count.
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from facet.kernels.common import gather, is_reflexive, side_size, sort_by_key
from facet.kernels.jit import njit
from facet.kernels.tuning import INSERTION_SORT

_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_ONE = np.uint64(1)


@njit(cache=True, nogil=True, inline="always")
def _key(v, flip):
    """Normalized key: order codes so that the predicate reads ``<`` / ``<=``."""
    x = np.int64(v)
    return -x if flip else x


@njit(cache=True, nogil=True)
def _reverse(a):
    i = 0
    j = a.shape[0] - 1
    while i < j:
        tmp = a[i]
        a[i] = a[j]
        a[j] = tmp
        i += 1
        j -= 1


@njit(cache=True, nogil=True)
def _sorted_side(tids, col, dom, flip, tune):
    """``tids`` by normalized key ascending (codes ascending, reversed when ``flip``);
    sides of at most ``Config.insertion_sort`` tids are sorted in place."""
    m = tids.shape[0]
    if m <= tune[INSERTION_SORT]:
        for i in range(1, m):
            t = tids[i]
            v = col[t]
            j = i - 1
            while j >= 0 and col[tids[j]] > v:
                tids[j + 1] = tids[j]
                j -= 1
            tids[j + 1] = t
        out = tids
    else:
        out = sort_by_key(tids, col, dom, tune)
    if flip:
        _reverse(out)
    return out


@njit(cache=True, nogil=True)
def _desc_positions(sorted_tids, col, dom, flip, out, tune):
    """Positions ``0..m-1`` of ``sorted_tids`` ordered by the normalized key of
    ``col`` descending (a permutation array; small ones are written to ``out``)."""
    m = sorted_tids.shape[0]
    if m <= tune[INSERTION_SORT]:
        for i in range(m):
            v = col[sorted_tids[i]]
            j = i - 1
            while j >= 0 and col[sorted_tids[out[j]]] > v:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = i
        order = out[:m]
    else:
        keys = np.empty(m, np.int32)
        for i in range(m):
            keys[i] = col[sorted_tids[i]]
        order = sort_by_key(np.arange(m).astype(np.int32), keys, dom, tune)
    if not flip:  # codes ascending -> key descending needs a reversal
        _reverse(order)
    return order


@njit(cache=True, nogil=True, inline="always")
def _next_word(summ, w, nwords):
    """First non-zero word index ``>= w`` (via the second-level bitmap), or -1."""
    if w >= nwords:
        return -1
    sw = w >> 6
    ns = (nwords + 63) >> 6
    x = summ[sw] & (_ONES << np.uint64(w & 63))
    while x == 0:
        sw += 1
        if sw >= ns:
            return -1
        x = summ[sw]
    return (sw << 6) + np.int64(trailing_zeros(x))


@njit(cache=True, nogil=True, inline="always")
def _next_set(bits, summ, p, nwords):
    """First set bit position ``>= p``, or -1."""
    w = p >> 6
    if w >= nwords:
        return -1
    x = bits[w] & (_ONES << np.uint64(p & 63))
    if x != 0:
        return (w << 6) + np.int64(trailing_zeros(x))
    w = _next_word(summ, w + 1, nwords)
    if w < 0:
        return -1
    return (w << 6) + np.int64(trailing_zeros(bits[w]))


@njit(cache=True, nogil=True, inline="always")
def _put(odesc, k, ls, le, rs, re):
    odesc[k, 0] = ls
    odesc[k, 1] = le
    odesc[k, 2] = ls
    odesc[k, 3] = ls
    odesc[k, 4] = rs
    odesc[k, 5] = re
    odesc[k, 6] = rs
    odesc[k, 7] = rs


@njit(cache=True, nogil=True)
def _reserve(obuf, w, need):
    """``obuf`` with room for ``need`` more tids after ``w`` (grown at least 2x)."""
    cap = obuf.shape[0]
    if w + need <= cap:
        return obuf
    new = np.empty(max(2 * cap, w + need), np.int32)
    new[:w] = obuf[:w]
    return new


@njit(cache=True, nogil=True)
def _reserve_desc(odesc, k, need):
    if k + need <= odesc.shape[0]:
        return odesc
    new = np.empty((max(2 * odesc.shape[0], k + need), 8), np.int64)
    new[:k] = odesc[:k]
    return new


@njit(cache=True, nogil=True)
def refine_iejoin(buf, desc, codes, ra1, rb1, op1, ra2, rb2, op2, dom1, dom2, tune):
    """Refine every group by both ``t.<row ra1> op1 t'.<row rb1>`` and
    ``t.<row ra2> op2 t'.<row rb2>`` (``op`` one of ``OP_LT/LE/GT/GE``; ``dom1`` /
    ``dom2`` bound the codes of each predicate's rows; NULL (-1) is false).

    Returns ``(obuf, odesc)`` in the layout of :mod:`facet.kernels.common`: output
    groups whose every pair ``(t, t')``, ``t != t'``, satisfies both predicates,
    disjoint in pairs, their union exactly the satisfying pairs of the input.
    """
    g_n = desc.shape[0]
    flip1 = op1 == 4 or op1 == 5
    strict1 = op1 == 2 or op1 == 4
    flip2 = op2 == 4 or op2 == 5
    strict2 = op2 == 2 or op2 == 4
    x_l = codes[ra1]
    x_r = codes[rb1]
    y_l = codes[ra2]
    y_r = codes[rb2]
    nn_l = np.empty(2, np.int64)
    nn_l[0] = ra1
    nn_l[1] = ra2
    nn_r = np.empty(2, np.int64)
    nn_r[0] = rb1
    nn_r[1] = rb2
    single = ra1 == rb1 and ra2 == rb2

    # scratch sized for the largest side; the output starts at sum(|L| + |R|)
    max_l = 0
    max_r = 0
    total = 0
    for g in range(g_n):
        sl = side_size(desc, g, 0)
        sr = side_size(desc, g, 4)
        max_l = max(max_l, sl)
        max_r = max(max_r, sr)
        total += sl + sr
    tl = np.empty(max_l, np.int32)
    tr = np.empty(max_r, np.int32)
    small = tune[INSERTION_SORT]
    p_ins = np.empty(min(max_r, small), np.int32)
    p_sweep = np.empty(min(max_l, small), np.int32)
    o1 = np.empty(max_l, np.int64)
    nw_max = (max_r + 63) >> 6
    bits = np.zeros(nw_max + 1, np.uint64)
    summ = np.zeros(((nw_max + 63) >> 6) + 1, np.uint64)
    fw = np.zeros(max_r + 1, np.int32)

    obuf = np.empty(total + 64, np.int32)
    odesc = np.empty((max(16, g_n), 8), np.int64)
    w = 0
    k = 0
    for g in range(g_n):
        shared = single and is_reflexive(desc, g)
        nl = gather(buf, desc, g, 0, codes, nn_l, tl)
        if nl == 0:
            continue
        if shared:
            nr = nl
            r1 = _sorted_side(tl[:nl], x_r, dom1, flip1, tune)
            ins = _desc_positions(r1, y_r, dom2, flip2, p_ins, tune)
            l1 = r1
            sweep = ins
        else:
            nr = gather(buf, desc, g, 4, codes, nn_r, tr)
            if nr == 0:
                continue
            r1 = _sorted_side(tr[:nr], x_r, dom1, flip1, tune)
            ins = _desc_positions(r1, y_r, dom2, flip2, p_ins, tune)
            l1 = _sorted_side(tl[:nl], x_l, dom1, flip1, tune)
            sweep = _desc_positions(l1, y_l, dom2, flip2, p_sweep, tune)
        # offset array O1: a merge of L1 and R1 on p1's key
        p = 0
        for i in range(nl):
            a = _key(x_l[l1[i]], flip1)
            if strict1:
                while p < nr and _key(x_r[r1[p]], flip1) <= a:
                    p += 1
            else:
                while p < nr and _key(x_r[r1[p]], flip1) < a:
                    p += 1
            o1[i] = p
        nwords = (nr + 63) >> 6
        lb = w  # the left side in sweep order goes to obuf[lb:rb], R1 to obuf[rb:rb + nr]
        rb = lb + nl
        # The sweep runs twice: pass 0 sizes this group's output (explicit lists and
        # groups), pass 1 writes it.  Both take the same decisions.
        w_lists = 0
        n_groups = 0
        for write in (False, True):
            if write:
                obuf = _reserve(obuf, w, nl + nr + w_lists)
                odesc = _reserve_desc(odesc, k, n_groups)
                for s in range(nl):
                    obuf[lb + s] = l1[sweep[s]]
                obuf[rb : rb + nr] = r1
                w = rb + nr
            for z in range(nwords):
                bits[z] = 0
            for z in range((nwords + 63) >> 6):
                summ[z] = 0
            for z in range(nr + 1):
                fw[z] = 0
            n_set = 0  # marked bits
            max_pos = -1  # largest marked position
            max_new = -1  # largest position marked since the previous left tuple
            prev_off = -1
            prev_c = 0
            w_lists = 0
            n_groups = 0
            # pending output group: left run sweep[ps:s]; kind 0 none, 1 the run
            # R1[pa:pb], 2 the list obuf[pa:pb] (or pb - pa tids when sizing)
            ps = 0
            pkind = 0
            pa = 0
            pb = 0
            j = 0
            for s in range(nl + 1):
                kind = 0
                na = 0
                nb = 0
                if s < nl:
                    i = sweep[s]
                    ykey = _key(y_l[l1[i]], flip2)
                    # mark every right tuple that satisfies p2 against this left tuple
                    while j < nr:
                        q = ins[j]
                        yk = _key(y_r[r1[q]], flip2)
                        if yk < ykey or (strict2 and yk == ykey):
                            break
                        wq = q >> 6
                        if bits[wq] == 0:
                            summ[wq >> 6] |= _ONE << np.uint64(wq & 63)
                        bits[wq] |= _ONE << np.uint64(q & 63)
                        f = q + 1
                        while f <= nr:
                            fw[f] += 1
                            f += f & -f
                        n_set += 1
                        if q > max_pos:
                            max_pos = q
                        if q > max_new:
                            max_new = q
                        j += 1
                    off = o1[i]
                    if s > 0 and off == prev_off and max_new < off:
                        max_new = -1
                        continue  # nothing marked in range: the previous tuple's matches
                    below = 0
                    f = off
                    while f > 0:
                        below += fw[f]
                        f -= f & -f
                    c = n_set - below  # |matches| = marked bits in [off, nr)
                    # Both match sets are suffixes of the bits marked before the previous
                    # tuple, plus new ones: equal iff no new bit in range and same size.
                    same = s > 0 and max_new < off and c == prev_c
                    max_new = -1
                    prev_off = off
                    prev_c = c
                    if same:
                        continue
                    if c > 0:
                        first = _next_set(bits, summ, off, nwords)
                        if max_pos - first + 1 == c:
                            kind = 1  # one run of R1: refer to it
                            na = first
                            nb = max_pos + 1
                        else:
                            kind = 2
                            if write:
                                # scan the bit array from ``first``, skipping empty words
                                wi = first >> 6
                                x = bits[wi] & (_ONES << np.uint64(first & 63))
                                m = 0
                                while True:
                                    while x != 0:
                                        obuf[w + m] = r1[(wi << 6) + np.int64(trailing_zeros(x))]
                                        m += 1
                                        x &= x - _ONE
                                    if m == c:
                                        break
                                    wi = _next_word(summ, wi + 1, nwords)
                                    x = bits[wi]
                                na = w
                                nb = w + c
                                w += c
                            else:
                                w_lists += c
                # flush the pending run sweep[ps:s] (not a lone ({t}, {t}))
                if pkind != 0 and not (
                    pkind == 1 and s - ps == 1 and pb - pa == 1 and l1[sweep[ps]] == r1[pa]
                ):
                    if write:
                        if pkind == 1:
                            _put(odesc, k, lb + ps, lb + s, rb + pa, rb + pb)
                        else:
                            _put(odesc, k, lb + ps, lb + s, pa, pb)
                        k += 1
                    else:
                        n_groups += 1
                ps = s
                pkind = kind
                pa = na
                pb = nb
            if n_groups == 0:
                break  # nothing refers to this group's copies: w stays at lb
    return obuf[:w], odesc[:k]
