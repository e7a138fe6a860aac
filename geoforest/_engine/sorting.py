"""In-place sorts of float64 values for the node loop (sorting dominates fitting).

:func:`sort_values` sorts a node's projected values with a branchless
quicksort: each partition pass streams the values once, writing every value
both to the next "less than pivot" slot in place and to the next "not less"
slot of a scratch buffer (only the slot counters depend on the comparison, so
there are no mispredicted branches), then copies the scratch part back.  Runs
of values equal to the pivot are split off in one pass (pdqsort's check
against the value left of the range), so few distinct values cost O(n x
distinct values).  Ranges of at most 32 values are finished by a Batcher
odd-even merge sorting network (comparators as selects, padded with +inf),
and a heapsort takes over if the recursion degenerates, so the worst case is
O(n log n).  Measured on this project's machine (copy + sort, N(0, 1) values,
fresh data every call, single thread, noisy): ~8 ns per value at 50 values,
10-13 at 250, 12-15 at 1,000, 15-18 at 5,000 and ~18 at 20,000, against
34-38, 46-50, 57-61, 17-19 and ~21 for the previous introsort/radix mix and
2-5 for numpy's SIMD ``np.sort``.  Many ties (values rounded to 0.1) cost
8-12 ns; presorted or reversed input 6-16 ns (the old Hoare introsort was
slightly faster on presorted input below ~1,000 values).

From :data:`BUCKET_MIN` values on, :func:`bucket_sort` first spreads the
values over ~n/8 buckets of equal width (count, scatter and copy-back
passes; the range comes from 33 sample values so that outliers cannot crowd
one bucket) and then sorts each bucket with the networks or the quicksort:
9-10 ns per value from 1,000 to 30,000 N(0, 1) values and 14 at 10^6, against
13-19 and 26 for the quicksort alone (it replaced an LSD radix sort, 26 ns at
10^6).  Inputs must be NaN-free (``fit`` rejects NaN and infinity).

:func:`sort_pairs` is the argsort of the supervised rules (``idx`` follows
the values).  It sorts keys, not pairs: each value's low mantissa bits are
replaced by its position (1..n), which keeps the float order up to those
bits, and the keys go through the same branchless quicksort and leaf
networks, except that a pivot's whole group of keys (equal above the
position bits) is split off at once, so few distinct values still cost
O(n x distinct values).  Values and ``idx`` are then gathered from the
positions, and the rare values that differed only in the replaced bits are
put in order by an insertion pass (heapsort past 8 n moves: O(n log n) worst
case).  Equal values come out in no particular order (the old introsort's
order differed too; trees are unchanged because the impurity scan sums
integer-valued weights, while non-integer ``sample_weight`` can round
differently at tied gains).  Copy + index init + sort, fresh data every
call, ns per value at n = 30 / 1,000 / 10,000: N(0, 1) 6 / 14 / 19 (three-way
Dijkstra introsort before: 32 / 67 / 90); 2 levels 6 / 4 / 6 (12 / 8 / 8);
20 levels 6 / 9 / 9 (30 / 30 / 28); sorted 6 / 9 / 14 (9 / 46 / 113).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

_LEAF = 32  # sort_values leaves (sorting networks)
_PAD = np.inf  # network padding: sorts after every finite value
_SIGN = np.uint64(0x8000000000000000)

# Sorting networks for the leaves: Batcher's odd-even merge sort comparators,
# unrolled over locals; LLVM inlines the helpers and turns each compare-exchange
# into min/max selects.  The helpers keep the numba IR free of branches (an
# inline ternary per comparator made the cold compile ~20 s slower).  Slots
# past ``m`` are padded with +inf and never stored back.


@njit(nogil=True, cache=True)
def _cx(x, y):
    # Swap rather than min/max so -0.0 and 0.0 both survive (same bit patterns out).
    return (y, x) if y < x else (x, y)


@njit(nogil=True, cache=True)
def _load(i, a, last):
    return a[min(i, last)] if i <= last else _PAD


@njit(nogil=True, cache=True)
def _store(i, a, last, x):
    if i <= last:
        a[i] = x


@njit(nogil=True, cache=True)
def _network16(a, lo, m):
    """Sort ``a[lo:lo + m]``, 2 <= m <= 16 (63 compare-exchanges)."""
    last = lo + m - 1
    x0 = a[lo]
    x1 = a[lo + 1]
    x2 = _load(lo + 2, a, last)
    x3 = _load(lo + 3, a, last)
    x4 = _load(lo + 4, a, last)
    x5 = _load(lo + 5, a, last)
    x6 = _load(lo + 6, a, last)
    x7 = _load(lo + 7, a, last)
    x8 = _load(lo + 8, a, last)
    x9 = _load(lo + 9, a, last)
    x10 = _load(lo + 10, a, last)
    x11 = _load(lo + 11, a, last)
    x12 = _load(lo + 12, a, last)
    x13 = _load(lo + 13, a, last)
    x14 = _load(lo + 14, a, last)
    x15 = _load(lo + 15, a, last)
    x0, x1 = _cx(x0, x1)
    x2, x3 = _cx(x2, x3)
    x4, x5 = _cx(x4, x5)
    x6, x7 = _cx(x6, x7)
    x8, x9 = _cx(x8, x9)
    x10, x11 = _cx(x10, x11)
    x12, x13 = _cx(x12, x13)
    x14, x15 = _cx(x14, x15)
    x0, x2 = _cx(x0, x2)
    x1, x3 = _cx(x1, x3)
    x4, x6 = _cx(x4, x6)
    x5, x7 = _cx(x5, x7)
    x8, x10 = _cx(x8, x10)
    x9, x11 = _cx(x9, x11)
    x12, x14 = _cx(x12, x14)
    x13, x15 = _cx(x13, x15)
    x1, x2 = _cx(x1, x2)
    x5, x6 = _cx(x5, x6)
    x9, x10 = _cx(x9, x10)
    x13, x14 = _cx(x13, x14)
    x0, x4 = _cx(x0, x4)
    x1, x5 = _cx(x1, x5)
    x2, x6 = _cx(x2, x6)
    x3, x7 = _cx(x3, x7)
    x8, x12 = _cx(x8, x12)
    x9, x13 = _cx(x9, x13)
    x10, x14 = _cx(x10, x14)
    x11, x15 = _cx(x11, x15)
    x2, x4 = _cx(x2, x4)
    x3, x5 = _cx(x3, x5)
    x10, x12 = _cx(x10, x12)
    x11, x13 = _cx(x11, x13)
    x1, x2 = _cx(x1, x2)
    x3, x4 = _cx(x3, x4)
    x5, x6 = _cx(x5, x6)
    x9, x10 = _cx(x9, x10)
    x11, x12 = _cx(x11, x12)
    x13, x14 = _cx(x13, x14)
    x0, x8 = _cx(x0, x8)
    x1, x9 = _cx(x1, x9)
    x2, x10 = _cx(x2, x10)
    x3, x11 = _cx(x3, x11)
    x4, x12 = _cx(x4, x12)
    x5, x13 = _cx(x5, x13)
    x6, x14 = _cx(x6, x14)
    x7, x15 = _cx(x7, x15)
    x4, x8 = _cx(x4, x8)
    x5, x9 = _cx(x5, x9)
    x6, x10 = _cx(x6, x10)
    x7, x11 = _cx(x7, x11)
    x2, x4 = _cx(x2, x4)
    x3, x5 = _cx(x3, x5)
    x6, x8 = _cx(x6, x8)
    x7, x9 = _cx(x7, x9)
    x10, x12 = _cx(x10, x12)
    x11, x13 = _cx(x11, x13)
    x1, x2 = _cx(x1, x2)
    x3, x4 = _cx(x3, x4)
    x5, x6 = _cx(x5, x6)
    x7, x8 = _cx(x7, x8)
    x9, x10 = _cx(x9, x10)
    x11, x12 = _cx(x11, x12)
    x13, x14 = _cx(x13, x14)
    a[lo] = x0
    a[lo + 1] = x1
    _store(lo + 2, a, last, x2)
    _store(lo + 3, a, last, x3)
    _store(lo + 4, a, last, x4)
    _store(lo + 5, a, last, x5)
    _store(lo + 6, a, last, x6)
    _store(lo + 7, a, last, x7)
    _store(lo + 8, a, last, x8)
    _store(lo + 9, a, last, x9)
    _store(lo + 10, a, last, x10)
    _store(lo + 11, a, last, x11)
    _store(lo + 12, a, last, x12)
    _store(lo + 13, a, last, x13)
    _store(lo + 14, a, last, x14)
    _store(lo + 15, a, last, x15)


@njit(nogil=True, cache=True)
def _network32(a, lo, m):
    """Sort ``a[lo:lo + m]``, 2 <= m <= 32 (191 compare-exchanges)."""
    last = lo + m - 1
    x0 = a[lo]
    x1 = a[lo + 1]
    x2 = _load(lo + 2, a, last)
    x3 = _load(lo + 3, a, last)
    x4 = _load(lo + 4, a, last)
    x5 = _load(lo + 5, a, last)
    x6 = _load(lo + 6, a, last)
    x7 = _load(lo + 7, a, last)
    x8 = _load(lo + 8, a, last)
    x9 = _load(lo + 9, a, last)
    x10 = _load(lo + 10, a, last)
    x11 = _load(lo + 11, a, last)
    x12 = _load(lo + 12, a, last)
    x13 = _load(lo + 13, a, last)
    x14 = _load(lo + 14, a, last)
    x15 = _load(lo + 15, a, last)
    x16 = _load(lo + 16, a, last)
    x17 = _load(lo + 17, a, last)
    x18 = _load(lo + 18, a, last)
    x19 = _load(lo + 19, a, last)
    x20 = _load(lo + 20, a, last)
    x21 = _load(lo + 21, a, last)
    x22 = _load(lo + 22, a, last)
    x23 = _load(lo + 23, a, last)
    x24 = _load(lo + 24, a, last)
    x25 = _load(lo + 25, a, last)
    x26 = _load(lo + 26, a, last)
    x27 = _load(lo + 27, a, last)
    x28 = _load(lo + 28, a, last)
    x29 = _load(lo + 29, a, last)
    x30 = _load(lo + 30, a, last)
    x31 = _load(lo + 31, a, last)
    x0, x1 = _cx(x0, x1)
    x2, x3 = _cx(x2, x3)
    x4, x5 = _cx(x4, x5)
    x6, x7 = _cx(x6, x7)
    x8, x9 = _cx(x8, x9)
    x10, x11 = _cx(x10, x11)
    x12, x13 = _cx(x12, x13)
    x14, x15 = _cx(x14, x15)
    x16, x17 = _cx(x16, x17)
    x18, x19 = _cx(x18, x19)
    x20, x21 = _cx(x20, x21)
    x22, x23 = _cx(x22, x23)
    x24, x25 = _cx(x24, x25)
    x26, x27 = _cx(x26, x27)
    x28, x29 = _cx(x28, x29)
    x30, x31 = _cx(x30, x31)
    x0, x2 = _cx(x0, x2)
    x1, x3 = _cx(x1, x3)
    x4, x6 = _cx(x4, x6)
    x5, x7 = _cx(x5, x7)
    x8, x10 = _cx(x8, x10)
    x9, x11 = _cx(x9, x11)
    x12, x14 = _cx(x12, x14)
    x13, x15 = _cx(x13, x15)
    x16, x18 = _cx(x16, x18)
    x17, x19 = _cx(x17, x19)
    x20, x22 = _cx(x20, x22)
    x21, x23 = _cx(x21, x23)
    x24, x26 = _cx(x24, x26)
    x25, x27 = _cx(x25, x27)
    x28, x30 = _cx(x28, x30)
    x29, x31 = _cx(x29, x31)
    x1, x2 = _cx(x1, x2)
    x5, x6 = _cx(x5, x6)
    x9, x10 = _cx(x9, x10)
    x13, x14 = _cx(x13, x14)
    x17, x18 = _cx(x17, x18)
    x21, x22 = _cx(x21, x22)
    x25, x26 = _cx(x25, x26)
    x29, x30 = _cx(x29, x30)
    x0, x4 = _cx(x0, x4)
    x1, x5 = _cx(x1, x5)
    x2, x6 = _cx(x2, x6)
    x3, x7 = _cx(x3, x7)
    x8, x12 = _cx(x8, x12)
    x9, x13 = _cx(x9, x13)
    x10, x14 = _cx(x10, x14)
    x11, x15 = _cx(x11, x15)
    x16, x20 = _cx(x16, x20)
    x17, x21 = _cx(x17, x21)
    x18, x22 = _cx(x18, x22)
    x19, x23 = _cx(x19, x23)
    x24, x28 = _cx(x24, x28)
    x25, x29 = _cx(x25, x29)
    x26, x30 = _cx(x26, x30)
    x27, x31 = _cx(x27, x31)
    x2, x4 = _cx(x2, x4)
    x3, x5 = _cx(x3, x5)
    x10, x12 = _cx(x10, x12)
    x11, x13 = _cx(x11, x13)
    x18, x20 = _cx(x18, x20)
    x19, x21 = _cx(x19, x21)
    x26, x28 = _cx(x26, x28)
    x27, x29 = _cx(x27, x29)
    x1, x2 = _cx(x1, x2)
    x3, x4 = _cx(x3, x4)
    x5, x6 = _cx(x5, x6)
    x9, x10 = _cx(x9, x10)
    x11, x12 = _cx(x11, x12)
    x13, x14 = _cx(x13, x14)
    x17, x18 = _cx(x17, x18)
    x19, x20 = _cx(x19, x20)
    x21, x22 = _cx(x21, x22)
    x25, x26 = _cx(x25, x26)
    x27, x28 = _cx(x27, x28)
    x29, x30 = _cx(x29, x30)
    x0, x8 = _cx(x0, x8)
    x1, x9 = _cx(x1, x9)
    x2, x10 = _cx(x2, x10)
    x3, x11 = _cx(x3, x11)
    x4, x12 = _cx(x4, x12)
    x5, x13 = _cx(x5, x13)
    x6, x14 = _cx(x6, x14)
    x7, x15 = _cx(x7, x15)
    x16, x24 = _cx(x16, x24)
    x17, x25 = _cx(x17, x25)
    x18, x26 = _cx(x18, x26)
    x19, x27 = _cx(x19, x27)
    x20, x28 = _cx(x20, x28)
    x21, x29 = _cx(x21, x29)
    x22, x30 = _cx(x22, x30)
    x23, x31 = _cx(x23, x31)
    x4, x8 = _cx(x4, x8)
    x5, x9 = _cx(x5, x9)
    x6, x10 = _cx(x6, x10)
    x7, x11 = _cx(x7, x11)
    x20, x24 = _cx(x20, x24)
    x21, x25 = _cx(x21, x25)
    x22, x26 = _cx(x22, x26)
    x23, x27 = _cx(x23, x27)
    x2, x4 = _cx(x2, x4)
    x3, x5 = _cx(x3, x5)
    x6, x8 = _cx(x6, x8)
    x7, x9 = _cx(x7, x9)
    x10, x12 = _cx(x10, x12)
    x11, x13 = _cx(x11, x13)
    x18, x20 = _cx(x18, x20)
    x19, x21 = _cx(x19, x21)
    x22, x24 = _cx(x22, x24)
    x23, x25 = _cx(x23, x25)
    x26, x28 = _cx(x26, x28)
    x27, x29 = _cx(x27, x29)
    x1, x2 = _cx(x1, x2)
    x3, x4 = _cx(x3, x4)
    x5, x6 = _cx(x5, x6)
    x7, x8 = _cx(x7, x8)
    x9, x10 = _cx(x9, x10)
    x11, x12 = _cx(x11, x12)
    x13, x14 = _cx(x13, x14)
    x17, x18 = _cx(x17, x18)
    x19, x20 = _cx(x19, x20)
    x21, x22 = _cx(x21, x22)
    x23, x24 = _cx(x23, x24)
    x25, x26 = _cx(x25, x26)
    x27, x28 = _cx(x27, x28)
    x29, x30 = _cx(x29, x30)
    x0, x16 = _cx(x0, x16)
    x1, x17 = _cx(x1, x17)
    x2, x18 = _cx(x2, x18)
    x3, x19 = _cx(x3, x19)
    x4, x20 = _cx(x4, x20)
    x5, x21 = _cx(x5, x21)
    x6, x22 = _cx(x6, x22)
    x7, x23 = _cx(x7, x23)
    x8, x24 = _cx(x8, x24)
    x9, x25 = _cx(x9, x25)
    x10, x26 = _cx(x10, x26)
    x11, x27 = _cx(x11, x27)
    x12, x28 = _cx(x12, x28)
    x13, x29 = _cx(x13, x29)
    x14, x30 = _cx(x14, x30)
    x15, x31 = _cx(x15, x31)
    x8, x16 = _cx(x8, x16)
    x9, x17 = _cx(x9, x17)
    x10, x18 = _cx(x10, x18)
    x11, x19 = _cx(x11, x19)
    x12, x20 = _cx(x12, x20)
    x13, x21 = _cx(x13, x21)
    x14, x22 = _cx(x14, x22)
    x15, x23 = _cx(x15, x23)
    x4, x8 = _cx(x4, x8)
    x5, x9 = _cx(x5, x9)
    x6, x10 = _cx(x6, x10)
    x7, x11 = _cx(x7, x11)
    x12, x16 = _cx(x12, x16)
    x13, x17 = _cx(x13, x17)
    x14, x18 = _cx(x14, x18)
    x15, x19 = _cx(x15, x19)
    x20, x24 = _cx(x20, x24)
    x21, x25 = _cx(x21, x25)
    x22, x26 = _cx(x22, x26)
    x23, x27 = _cx(x23, x27)
    x2, x4 = _cx(x2, x4)
    x3, x5 = _cx(x3, x5)
    x6, x8 = _cx(x6, x8)
    x7, x9 = _cx(x7, x9)
    x10, x12 = _cx(x10, x12)
    x11, x13 = _cx(x11, x13)
    x14, x16 = _cx(x14, x16)
    x15, x17 = _cx(x15, x17)
    x18, x20 = _cx(x18, x20)
    x19, x21 = _cx(x19, x21)
    x22, x24 = _cx(x22, x24)
    x23, x25 = _cx(x23, x25)
    x26, x28 = _cx(x26, x28)
    x27, x29 = _cx(x27, x29)
    x1, x2 = _cx(x1, x2)
    x3, x4 = _cx(x3, x4)
    x5, x6 = _cx(x5, x6)
    x7, x8 = _cx(x7, x8)
    x9, x10 = _cx(x9, x10)
    x11, x12 = _cx(x11, x12)
    x13, x14 = _cx(x13, x14)
    x15, x16 = _cx(x15, x16)
    x17, x18 = _cx(x17, x18)
    x19, x20 = _cx(x19, x20)
    x21, x22 = _cx(x21, x22)
    x23, x24 = _cx(x23, x24)
    x25, x26 = _cx(x25, x26)
    x27, x28 = _cx(x27, x28)
    x29, x30 = _cx(x29, x30)
    a[lo] = x0
    a[lo + 1] = x1
    _store(lo + 2, a, last, x2)
    _store(lo + 3, a, last, x3)
    _store(lo + 4, a, last, x4)
    _store(lo + 5, a, last, x5)
    _store(lo + 6, a, last, x6)
    _store(lo + 7, a, last, x7)
    _store(lo + 8, a, last, x8)
    _store(lo + 9, a, last, x9)
    _store(lo + 10, a, last, x10)
    _store(lo + 11, a, last, x11)
    _store(lo + 12, a, last, x12)
    _store(lo + 13, a, last, x13)
    _store(lo + 14, a, last, x14)
    _store(lo + 15, a, last, x15)
    _store(lo + 16, a, last, x16)
    _store(lo + 17, a, last, x17)
    _store(lo + 18, a, last, x18)
    _store(lo + 19, a, last, x19)
    _store(lo + 20, a, last, x20)
    _store(lo + 21, a, last, x21)
    _store(lo + 22, a, last, x22)
    _store(lo + 23, a, last, x23)
    _store(lo + 24, a, last, x24)
    _store(lo + 25, a, last, x25)
    _store(lo + 26, a, last, x26)
    _store(lo + 27, a, last, x27)
    _store(lo + 28, a, last, x28)
    _store(lo + 29, a, last, x29)
    _store(lo + 30, a, last, x30)
    _store(lo + 31, a, last, x31)


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
        _network16(a, lo, m)
    else:
        _network32(a, lo, m)


@njit(nogil=True, cache=True)
def _median3(x, y, z):
    if x < y:
        return y if y < z else (z if x < z else x)
    return x if x < z else (z if y < z else y)


@njit(nogil=True, cache=True)
def _partition_less(a, lo, hi, pivot, t):
    """Stable branchless partition of ``a[lo:hi]`` into ``< pivot`` then ``>= pivot``.

    Returns the split.  ``t`` is scratch of at least ``hi - lo`` values; the
    indices are unsigned so numba emits no negative-index wraparound.
    """
    ulo = np.uint64(lo)
    size = np.uint64(hi - lo)
    nl = np.uint64(0)
    for i in range(size):
        v = a[ulo + i]
        a[ulo + nl] = v  # nl <= i: overwrites only values already read
        t[i - nl] = v
        nl += np.uint64(v < pivot)
    for k in range(size - nl):
        a[ulo + nl + k] = t[k]
    return lo + np.int64(nl)


@njit(nogil=True, cache=True)
def _partition_not_greater(a, lo, hi, pivot, t):
    """As :func:`_partition_less` with ``<= pivot`` on the left."""
    ulo = np.uint64(lo)
    size = np.uint64(hi - lo)
    nl = np.uint64(0)
    for i in range(size):
        v = a[ulo + i]
        a[ulo + nl] = v
        t[i - nl] = v
        nl += np.uint64(not pivot < v)
    for k in range(size - nl):
        a[ulo + nl + k] = t[k]
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
                lo = _partition_not_greater(a, lo, hi, pivot, t)
                continue
            split = _partition_less(a, lo, hi, pivot, t)
            if split == lo:  # pivot is the minimum: same as above
                lo = _partition_not_greater(a, lo, hi, pivot, t)
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
            # The same leaf/quicksort choice as above, written out again: one
            # shared helper for both levels made the treeple-setting fit 8-10 %
            # slower (interleaved A/B, 2026-11-24).
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


#: From this many values on :func:`sort_values` uses :func:`bucket_sort`.
#: Measured (copy + sort, fresh N(0, 70) values every call, ns per value,
#: quicksort vs bucket sort; noisy shared machine): 11-19 vs 9-13 at 512,
#: 13-18 vs 9-10 at 1,000 to 10,000, 21 vs 11 at 10^5, 26 vs 14 at 10^6 (where
#: the LSD radix sort used before measured 26); at 128-256 values they tie.
BUCKET_MIN = 512


@njit(nogil=True, cache=True)
def sort_values(a, n, keys, tmp):
    """Sort ``a[:n]`` ascending in place (finite values only).

    ``keys`` and ``tmp`` are uint64 scratch buffers of at least ``n``
    entries (the sorts' stack and partition or scatter buffer): the
    branchless quicksort below :data:`BUCKET_MIN` values, the bucket sort
    from there on.
    """
    if n < BUCKET_MIN:
        quicksort_scratch(a, n, tmp.view(np.float64), keys.view(np.int64))
    else:
        bucket_sort(a, n, tmp.view(np.float64), keys.view(np.int64))


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
def _split_less(a, lo, hi, pivot, t, off):
    """:func:`_partition_less` with the scratch at ``t[off:]``."""
    ulo = np.uint64(lo)
    uoff = np.uint64(off)
    size = np.uint64(hi - lo)
    nl = np.uint64(0)
    for i in range(size):
        v = a[ulo + i]
        a[ulo + nl] = v
        t[uoff + i - nl] = v
        nl += np.uint64(v < pivot)
    for k in range(size - nl):
        a[ulo + nl + k] = t[uoff + k]
    return lo + np.int64(nl)


@njit(nogil=True, cache=True)
def _split_not_greater(a, lo, hi, pivot, t, off):
    """:func:`_partition_not_greater` with the scratch at ``t[off:]``."""
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
                lo = _split_not_greater(a, lo, hi, last, t, off)
                continue
            split = _split_less(a, lo, hi, first, t, off)
            if split == lo:  # the pivot's group is the minimum: as above
                lo = _split_not_greater(a, lo, hi, last, t, off)
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
