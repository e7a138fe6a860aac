"""In-place sorts of float64 values for the node loop (sorting dominates fitting).

:func:`sort_values` sorts a node's projected values with a branchless
quicksort: each partition pass streams the values once, writing every value
both to the next "less than pivot" slot in place and to the next "not less"
slot of a scratch buffer (only the slot counters depend on the comparison, so
there are no mispredicted branches), then copies the scratch part back.  Runs
of values equal to the pivot are split off in one pass (pdqsort's check
against the value left of the range), so few distinct values cost O(n x
distinct values).  Ranges of at most 32 values are finished by a Batcher
odd-even merge sorting network (:mod:`.sorting_networks`: comparators as
selects, padded with +inf), and a heapsort takes over if the recursion
degenerates, so the worst case is O(n log n).

From :data:`BUCKET_MIN` values on, :func:`bucket_sort` first spreads the
values over ~n/8 buckets of equal width (count, scatter and copy-back
passes; the range comes from 33 sample values so that outliers cannot crowd
one bucket) and then sorts each bucket with the networks or the quicksort,
which keeps large nodes at a few streaming passes over the values.  Inputs
must be NaN-free (``fit`` rejects NaN and infinity).

:func:`sort_pairs` is the argsort of the supervised rules (``idx`` follows
the values).  It sorts keys, not pairs: each value's low mantissa bits are
replaced by its position (1..n), which keeps the float order up to those
bits, and the keys go through the same branchless quicksort and leaf
networks, except that a pivot's whole group of keys (equal above the
position bits) is split off at once, so few distinct values still cost
O(n x distinct values).  Values and ``idx`` are then gathered from the
positions, and the rare values that differed only in the replaced bits are
put in order by an insertion pass (heapsort past 8 n moves: O(n log n) worst
case).  Equal values come out in no particular order; trees do not depend
on it because the impurity scan sums integer-valued weights (non-integer
``sample_weight`` can round differently at tied gains).

Figures for these sorts, and for the ones they replaced, are in
``docs/engine.md``.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .sorting_networks import network16, network32

_LEAF = 32  # sort_values leaves (sorting networks)
_SIGN = np.uint64(0x8000000000000000)


@njit(nogil=True, cache=True)
def _sift_down(a, lo, start, end):
    root = start
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and a[lo + child] < a[lo + child + 1]:
            child += 1
        if a[lo + root] < a[lo + child]:
            tmp = a[lo + root]
            a[lo + root] = a[lo + child]
            a[lo + child] = tmp
            root = child
        else:
            return


@njit(nogil=True, cache=True)
def _heapsort(a, lo, hi):
    n = hi - lo
    for start in range(n // 2 - 1, -1, -1):
        _sift_down(a, lo, start, n)
    for end in range(n - 1, 0, -1):
        tmp = a[lo]
        a[lo] = a[lo + end]
        a[lo + end] = tmp
        _sift_down(a, lo, 0, end)


@njit(nogil=True, cache=True)
def _leaf(a, lo, m):
    if m <= 16:
        network16(a, lo, m)
    else:
        network32(a, lo, m)


@njit(nogil=True, cache=True)
def _median3(x, y, z):
    if x < y:
        return y if y < z else (z if x < z else x)
    return x if x < z else (z if y < z else y)


@njit(nogil=True, cache=True)
def _partition_less(a, lo, hi, pivot, t, off):
    """Stable branchless partition of ``a[lo:hi]`` into ``< pivot`` then ``>= pivot``.

    Returns the split.  ``t[off:]`` is scratch of at least ``hi - lo`` values
    (:func:`sort_pairs` keeps its values and indices in front of it); the
    indices are unsigned so numba emits no negative-index wraparound.
    """
    ulo = np.uint64(lo)
    uoff = np.uint64(off)
    size = np.uint64(hi - lo)
    nl = np.uint64(0)
    for i in range(size):
        v = a[ulo + i]
        a[ulo + nl] = v  # nl <= i: overwrites only values already read
        t[uoff + i - nl] = v
        nl += np.uint64(v < pivot)
    for k in range(size - nl):
        a[ulo + nl + k] = t[uoff + k]
    return lo + np.int64(nl)


@njit(nogil=True, cache=True)
def _partition_not_greater(a, lo, hi, pivot, t, off):
    """As :func:`_partition_less` with ``<= pivot`` on the left."""
    ulo = np.uint64(lo)
    uoff = np.uint64(off)
    size = np.uint64(hi - lo)
    nl = np.uint64(0)
    for i in range(size):
        v = a[ulo + i]
        a[ulo + nl] = v
        t[uoff + i - nl] = v
        nl += np.uint64(not pivot < v)
    for k in range(size - nl):
        a[ulo + nl + k] = t[uoff + k]
    return lo + np.int64(nl)


@njit(nogil=True, cache=True)
def quicksort_scratch(a, n, t, stack):
    """Sort ``a[:n]`` ascending with the branchless quicksort (finite values).

    ``t`` (float64) and ``stack`` (int64) are scratch buffers of at least
    ``n`` entries.  The pending ranges live in ``stack``: the larger part is
    pushed and the smaller one continued, so at most log2(n / 32) + 1 ranges
    (three entries each) are pending.
    """
    if n < 2:
        return
    if n <= _LEAF:
        _leaf(a, 0, n)
        return
    max_depth = 2 * int(np.log2(n) + 1)
    stack[0] = 0
    stack[1] = n
    stack[2] = 0
    top = 3
    while top > 0:
        top -= 3
        lo = stack[top]
        hi = stack[top + 1]
        depth = stack[top + 2]
        while hi - lo > _LEAF:
            if depth > max_depth:
                _heapsort(a, lo, hi)
                lo = hi
                break
            depth += 1
            mid = lo + (hi - lo) // 2
            pivot = _median3(a[lo], a[mid], a[hi - 1])
            # Everything left of lo is <= a[lo:hi]: a pivot equal to its left
            # neighbour is the range's minimum; take all copies of it at once.
            if lo > 0 and not a[lo - 1] < pivot:
                lo = _partition_not_greater(a, lo, hi, pivot, t, 0)
                continue
            split = _partition_less(a, lo, hi, pivot, t, 0)
            if split == lo:  # pivot is the minimum: same as above
                lo = _partition_not_greater(a, lo, hi, pivot, t, 0)
                continue
            if split - lo < hi - split:
                stack[top] = split
                stack[top + 1] = hi
                stack[top + 2] = depth
                top += 3
                hi = split
            else:
                stack[top] = lo
                stack[top + 1] = split
                stack[top + 2] = depth
                top += 3
                lo = split
        if hi - lo > 1:
            _leaf(a, lo, hi - lo)


#: Average values per bucket of :func:`bucket_sort` (its buckets of <= 32
#: values are finished by the sorting networks).
_PER_BUCKET = 8
#: A bucket with more values than this is bucketed again by its own range.
_SPLIT_AGAIN = 256


@njit(nogil=True, cache=True, error_model="numpy")
def _distribute(a, n, t):
    """Reorder ``a[:n]`` into buckets of increasing value ranges; return the bucket starts.

    About ``n / 8`` buckets of equal width over the range of 33 evenly spaced
    values of ``a`` (the bulk of the data: a few far values, outliers or
    heavy tails, cannot crowd everything into one bucket; values outside
    the range join the first or last bucket).  The bucket of ``x`` is
    ``floor((x - lo) * scale)`` clamped to ``[0, nb - 1]``, non-decreasing in
    ``x``, so every value of a bucket is <= every value of the next and
    sorting each bucket sorts ``a``.  ``t`` (float64, >= ``n``) is the
    scatter buffer.  Returns ``nb + 1`` bucket boundaries; an empty array
    when every value is equal; ``[0, n]`` (one bucket) when the range
    overflows.
    """
    step = max(n // 32, 1)
    lo = a[0]
    hi = a[0]
    for i in range(0, n, step):
        lo = min(lo, a[i])
        hi = max(hi, a[i])
    if not hi > lo:  # the sample is constant: take the full range
        for i in range(n):
            lo = min(lo, a[i])
            hi = max(hi, a[i])
        if not hi > lo:
            return np.zeros(0, dtype=np.int64)
    nb = max(n // _PER_BUCKET, 2)
    scale = nb / (hi - lo)
    if not (scale > 0.0 and scale < np.inf):
        out = np.zeros(2, dtype=np.int64)
        out[1] = n
        return out
    top = nb - 1.0
    start = np.zeros(nb + 1, dtype=np.int64)
    for i in range(n):
        start[np.int64(min(max((a[i] - lo) * scale, 0.0), top)) + 1] += 1
    for b in range(nb):
        start[b + 1] += start[b]
    cursor = start[:nb].copy()
    for i in range(n):
        x = a[i]
        b = np.int64(min(max((x - lo) * scale, 0.0), top))
        t[cursor[b]] = x
        cursor[b] += 1
    for i in range(n):
        a[i] = t[i]
    return start


@njit(nogil=True, cache=True)
def bucket_sort(a, n, t, stack):
    """Sort ``a[:n]`` ascending: value-range buckets, each sorted on its own.

    :func:`_distribute` spreads the values over about ``n / 8`` buckets in
    three streaming passes (count, scatter, copy back); buckets of <= 32
    values go to the sorting networks, larger ones to
    :func:`quicksort_scratch`, and a bucket of more than 256 values (the
    bulk of a skewed distribution) is bucketed once more by its own range.
    ``t`` (float64) and ``stack`` (int64) are scratch buffers of at least
    ``n`` entries.  O(n) passes plus O(bucket log bucket) per bucket; at
    worst (every value in one bucket) the quicksort's O(n log n).
    """
    if n < 2:
        return
    start = _distribute(a, n, t)
    if start.shape[0] == 0:
        return
    if start.shape[0] == 2:
        quicksort_scratch(a, n, t, stack)
        return
    for b in range(start.shape[0] - 1):
        s = start[b]
        m = start[b + 1] - s
        if m < 2:
            continue
        if m <= _LEAF:
            _leaf(a, s, m)
        elif m <= _SPLIT_AGAIN:
            quicksort_scratch(a[s : s + m], m, t, stack)
        else:
            # The same leaf/quicksort choice as above, written out again: a
            # shared helper for both levels fits slower (docs/engine.md).
            sub = a[s : s + m]
            inner = _distribute(sub, m, t)
            if inner.shape[0] == 2:
                quicksort_scratch(sub, m, t, stack)
            for c in range(inner.shape[0] - 1 if inner.shape[0] > 2 else 0):
                s2 = inner[c]
                m2 = inner[c + 1] - s2
                if m2 < 2:
                    continue
                if m2 <= _LEAF:
                    _leaf(sub, s2, m2)
                else:
                    quicksort_scratch(sub[s2 : s2 + m2], m2, t, stack)


#: From this many values on :func:`sort_values` uses :func:`bucket_sort`: the
#: two sorts tie at a few hundred values and the bucket sort wins from here
#: on (figures in ``docs/engine.md``).
BUCKET_MIN = 512


@njit(nogil=True, cache=True)
def sort_values(a, n, keys, tmp):
    """Sort ``a[:n]`` ascending in place (finite values only).

    ``keys`` (int64) and ``tmp`` (float64) are scratch buffers of at least
    ``n`` entries (the sorts' stack and partition or scatter buffer), typed
    as the sorts use them: a reinterpreting ``view`` here would compile one
    more kernel per dtype pair on a first call.  The branchless quicksort
    below :data:`BUCKET_MIN` values, the bucket sort from there on.
    """
    if n < BUCKET_MIN:
        quicksort_scratch(a, n, tmp, keys)
    else:
        bucket_sort(a, n, tmp, keys)


@njit(nogil=True, cache=True)
def _group_bounds(key, mask):
    """Smallest and largest key of ``key``'s group (same bits above ``mask``).

    Every key's low bits (under ``mask``) hold a position ``1..mask``, so the
    group's keys are the floats between these bounds (never zero).
    """
    bits = np.float64(key).view(np.uint64)
    high = bits & ~mask
    first = np.uint64(high | np.uint64(1)).view(np.float64)
    last = np.uint64(high | mask).view(np.float64)
    if bits & _SIGN:  # negative: larger low bits are further from zero
        return last, first
    return first, last


@njit(nogil=True, cache=True)
def _quicksort_groups(a, n, t, off, mask, n_bits):
    """Sort the keys ``a[:n]`` by group (bits above ``mask``) with the branchless quicksort.

    As :func:`quicksort_scratch` (``t[off:off + n]`` is the partition
    scratch), but a pivot's whole group is split off at once: the keys are
    split below the group's smallest key, and a range whose minimum is in
    the pivot's group gives up every key up to the group's largest.  Keys of
    a group (ties, or values equal above ``mask``) are left in any order;
    with few groups this costs O(n x groups).  ``n > 32``, ``n < 2**n_bits``.
    """
    max_depth = 2 * int(np.log2(n) + 1)
    # Pending ranges: the larger part is pushed and the smaller continued
    # (at most half of its parent), so fewer than n_bits are ever pending.
    stack = np.empty(3 * n_bits, dtype=np.int64)
    stack[0] = 0
    stack[1] = n
    stack[2] = 0
    top = 3
    while top > 0:
        top -= 3
        lo = stack[top]
        hi = stack[top + 1]
        depth = stack[top + 2]
        while hi - lo > _LEAF:
            if depth > max_depth:
                _heapsort(a, lo, hi)
                lo = hi
                break
            depth += 1
            mid = lo + (hi - lo) // 2
            first, last = _group_bounds(_median3(a[lo], a[mid], a[hi - 1]), mask)
            # Everything left of lo is <= a[lo:hi]: a left neighbour in the
            # pivot's group means the group holds the range's minimum.
            if lo > 0 and not a[lo - 1] < first:
                lo = _partition_not_greater(a, lo, hi, last, t, off)
                continue
            split = _partition_less(a, lo, hi, first, t, off)
            if split == lo:  # the pivot's group is the minimum: as above
                lo = _partition_not_greater(a, lo, hi, last, t, off)
                continue
            if split - lo < hi - split:
                stack[top] = split
                stack[top + 1] = hi
                stack[top + 2] = depth
                top += 3
                hi = split
            else:
                stack[top] = lo
                stack[top + 1] = split
                stack[top + 2] = depth
                top += 3
                lo = split
        if hi - lo > 1:
            _leaf(a, lo, hi - lo)


@njit(nogil=True, cache=True)
def _swap_pair(a, idx, i, j):
    t = a[i]
    a[i] = a[j]
    a[j] = t
    u = idx[i]
    idx[i] = idx[j]
    idx[j] = u


@njit(nogil=True, cache=True)
def _heapsort_pairs(a, idx, lo, hi):
    n = hi - lo
    for start in range(n // 2 - 1, -1, -1):
        _sift_pairs(a, idx, lo, start, n)
    for end in range(n - 1, 0, -1):
        _swap_pair(a, idx, lo, lo + end)
        _sift_pairs(a, idx, lo, 0, end)


@njit(nogil=True, cache=True)
def _sift_pairs(a, idx, lo, start, end):
    root = start
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and a[lo + child] < a[lo + child + 1]:
            child += 1
        if a[lo + root] < a[lo + child]:
            _swap_pair(a, idx, lo + root, lo + child)
            root = child
        else:
            return


@njit(nogil=True, cache=True)
def _finish_pairs(a, idx, n):
    """Insertion sort of nearly sorted pairs; heapsort once it has moved 8 n values."""
    budget = 8 * n
    for i in range(1, n):
        v = a[i]
        p = idx[i]
        j = i - 1
        while j >= 0 and a[j] > v:
            a[j + 1] = a[j]
            idx[j + 1] = idx[j]
            j -= 1
        a[j + 1] = v
        idx[j + 1] = p
        budget -= i - 1 - j
        if budget < 0:
            _heapsort_pairs(a, idx, 0, n)
            return


@njit(nogil=True, cache=True)
def sort_pairs(a, idx, n):
    """Sort ``a[:n]`` ascending in place, applying the same moves to ``idx[:n]``.

    The node loop's argsort for supervised rules (labels follow their values).
    Each value's low mantissa bits are replaced by its position (the key is a
    float in the same order up to those bits), the keys are sorted by
    :func:`_quicksort_groups` (the branchless quicksort of :func:`sort_values`,
    splitting off each group of keys equal above the position bits at once,
    so few distinct values cost O(n x distinct values)), and values and
    ``idx`` are gathered from the positions.  Values that differed only in
    the replaced bits are put in order by an insertion sort (heapsort past a
    budget), so the worst case is O(n log n).  Equal values come out in no
    particular order.  Finite values only.
    """
    if n < 2:
        return
    mask = np.uint64(1)
    n_bits = 0
    while mask <= np.uint64(n):
        mask <<= np.uint64(1)
        n_bits += 1
    mask -= np.uint64(1)  # positions 1..n fit under the mask
    keep = ~mask
    # One buffer, no array views (each costs reference counting): the values,
    # then idx's bit patterns, then the partition scratch.
    buf = np.empty(3 * n if n > _LEAF else 2 * n)
    for i in range(n):
        v = a[i]
        buf[i] = v
        buf[n + i] = np.int64(idx[i]).view(np.float64)
        key = (np.float64(v).view(np.uint64) & keep) | np.uint64(i + 1)
        a[i] = np.uint64(key).view(np.float64)
    if n > _LEAF:
        _quicksort_groups(a, n, buf, 2 * n, mask, n_bits)
    else:
        _leaf(a, 0, n)
    unsorted = False
    prev = -np.inf
    for j in range(n):
        pos = np.int64(np.float64(a[j]).view(np.uint64) & mask) - 1
        v = buf[pos]
        a[j] = v
        idx[j] = np.float64(buf[n + pos]).view(np.int64)
        unsorted |= v < prev
        prev = v
    if unsorted:
        _finish_pairs(a, idx, n)
