"""The forest neighbour search by co-leaf counts, for queries without tree masks.

Without tree masks every proximity is a co-leaf count out of one ``n_trees``,
so the best candidates of a query are those with the highest counts, ties to
the lower index, and they can be found by counting instead of ranking every
candidate: a histogram of the counts gives the count ``c*`` of the
``n_cand``-th best, and only points counted at least ``c*`` times are looked
up and sorted.  This serves both ``kneighbors`` by proximity (the best ``k``)
and the relevance distance's candidate pool (``forest/_relevance.py``).

How the counts are kept decides the speed once leaves are large (a forest
grown on ``max_samples`` much smaller than ``n``: tens of thousands of co-leaf
points per query), so it is chosen per query from the length of its leaf
lists (``load``, the counter increments it will make):

* **listed** (short lists): int32 counters of every reference, the
  positions counted listed as they are first met, then read twice (the
  histogram, then the best); the cost is per increment.
* **scanned** (long lists, ``load x scan_ratio >= n_ref``, more than
  :data:`SCAN_MIN_REFS` references, fewer than 256 trees): one-byte
  counters of a block of ``scan_block`` references, small enough for a
  core's first-level cache, and instead of listing what was counted, the
  block is scanned eight counters at a time for those that can still be
  among the best (at least the running ``floor``, the count of the
  ``n_cand``-th best so far), then cleared.  Per increment this is a cached
  byte add; the scan costs a few cycles per eight references.  Int32
  counters of a million references do not stay in cache, and their misses
  bound the listed way there.

Both give the same answer, which does not depend on the block size (tests
force each way and tiny blocks).  Figures: ``docs/benchmarks.md``,
"Neighbour search when leaves are large".
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._jit import njit
from .proximity import LeafIndex, Queries, gather_block, open_leaves, pad_lowest

_NO_MASK = np.zeros((0, 0), dtype=np.uint8)

#: References per block of one-byte counters in a scan: 32 KiB, a first-level data cache.
SCAN_BLOCK = 1 << 15
#: A query's counts are scanned when its leaf lists hold at least ``n_ref / SCAN_RATIO`` entries ...
SCAN_RATIO = 24
#: ... and there are more references than this: below, int32 counters of all
#: of them (512 KiB) stay in a core's second-level cache, and listing what was
#: counted costs less than scanning.
SCAN_MIN_REFS = 1 << 17

_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)


@njit(nogil=True, cache=True, inline="always")
def _floor(hist, n_trees, n_cand):
    """The largest count ``c >= 1`` that at least ``n_cand`` counted points reach (1 if none)."""
    above = 0
    c = n_trees
    while c > 1 and above + hist[c] < n_cand:
        above += hist[c]
        c -= 1
    return c


@njit(nogil=True, cache=True, inline="always")
def _scan(words, n_words, floor, r0, skip, n_trees, span, hist, keys, n_keys):
    """Append the keys of block counters ``>= floor`` (not position ``skip``),
    count them in ``hist``, clear the block; returns the number of keys."""
    small = words.view(np.uint8)
    # A word can hold a counter >= floor only if some byte exceeds floor - 1:
    # adding 127 - (floor - 1) to every byte sets its high bit then (bytes of
    # 128 and more have it already).  A carry into the next byte can only flag
    # a word too many, never miss one; flagged words are read byte by byte.
    below = floor - 1
    exact = below <= 127
    add = _ONES * np.uint64(127 - below if exact else 0)
    test = _HIGHS if exact else ~np.uint64(0)
    for x in range(n_words):
        w = words[x]
        # No test of w == 0 first: at the densities scanned it is unpredictable,
        # while this one is nearly always false once the floor exceeds 1.
        if ((w + add) | w) & test == np.uint64(0):
            continue
        for b in range(8):
            c = np.int64(small[8 * x + b])
            if c < floor:
                continue
            r = r0 + 8 * x + b
            if r == skip:
                continue
            hist[c] += 1
            keys[n_keys] = (n_trees - c) * span + r
            n_keys += 1
    words[:n_words] = 0
    return n_keys


class CountedSearch(NamedTuple):
    """What :func:`counted_neighbors` looks for, and how it keeps counts (one argument).

    The ``n_cand`` best references of each query by (co-leaf count, lower
    index) and those tied with the last, at most ``width``;
    ``exclude_self``: query ``i`` is reference ``i`` and does not count
    itself.  ``scan_ratio`` chooses how the counts are kept where they can be
    scanned (module docstring; ``scan_ratio = 0``: always listed).
    """

    n_cand: int
    width: int
    exclude_self: bool
    scan_ratio: int


class CountedRows(NamedTuple):
    """Rows of candidates, best first: ``ind[row, :n_out[row]]`` at proximity
    ``sim[row, :n_out[row]]``."""

    ind: np.ndarray
    sim: np.ndarray
    n_out: np.ndarray


@njit(nogil=True, cache=True, inline="always")
def _scanned_keys(words, members, cur, end, n_ref, skip_r, span, hist, keys, ref_index, n_cand):
    """The keys ``(n_trees - count) * span + index`` of one query's best, its
    counts kept in the one-byte counters ``words`` (module docstring); returns
    how many.  ``hist`` (zeros) receives the histogram of the counts kept."""
    n_trees = cur.shape[0]
    n_words = words.shape[0]
    small = words.view(np.uint8)
    # Keys (n_trees - count, position) of the counts at least the floor.
    n_keys = 0
    floor = 1
    for r0 in range(0, n_ref, 8 * n_words):
        r1 = r0 + 8 * n_words
        for t in range(n_trees):
            q = cur[t]
            e = end[t]
            if q == e:
                continue
            stop = e
            if r1 < n_ref and members[e - 1] >= r1:  # as in gather_block
                stop = q
                while members[stop] < r1:
                    stop += 1
            for p in range(q, stop):
                small[members[p] - r0] += 1
            cur[t] = stop
        n_block = (min(r1, n_ref) - r0 + 7) // 8
        n_keys = _scan(words, n_block, floor, r0, skip_r, n_trees, span, hist, keys, n_keys)
        floor = _floor(hist, n_trees, n_cand)
    # Every point counted at least c_star times is among the keys (one
    # passed over had fewer than the floor then, and the floor never
    # exceeds c_star): keep those, keyed by index from here on.
    limit = (n_trees - _floor(hist, n_trees, n_cand) + 1) * span
    n_best = 0
    for q in range(n_keys):
        key = keys[q]
        if key < limit:
            keys[n_best] = key - key % span + ref_index[key % span]
            n_best += 1
    return n_best


@njit(nogil=True, cache=True)
def counted_neighbors(queries, index, lo, hi, search, out, scan_block):
    """The candidates of queries ``queries.order[lo:hi]``: the ``search.n_cand``
    best by (co-leaf count, lower index) and those tied with the last, at most
    ``search.width``, best first, at proximity ``count / n_trees``.

    ``queries`` (a :class:`~geoforest.proximity.Queries` without tree mask)
    and ``index`` (a :class:`~geoforest.proximity.LeafIndex`, without mask,
    ``base`` 0) are the query and reference points; ``search`` a
    :class:`CountedSearch`.  Writes row ``pos - lo`` of ``out`` (a
    :class:`CountedRows`); ``out.n_out`` holds each row's length.  With
    fewer co-leaf points than ``n_cand`` the row is padded to ``width`` with
    the lowest-index other points at proximity 0, as ``forest_kneighbors``
    pads.  ``exclude_self`` drops point ``i`` for query ``i``; the queries
    are then the references visited in their own order (``queries.order``
    is ``index.ref_index``), so query ``order[pos]`` is the reference at
    position ``pos``.  ``scan_block``: references per block of one-byte
    counters (a multiple of 8), or ``None`` to keep every count listed; numba
    then drops the scanned way from the compiled kernel, so a first search on
    few references does not compile it (``docs/benchmarks.md``, "Where a
    cold start's compile time goes").
    """
    qleaves, _, qorder, _ = queries
    node_offset, ptr, members, ref_index, _, n_ref, _ = index
    n_cand, width, exclude_self, scan_ratio = search
    ind_out, sim_out, n_out = out
    n_trees = qleaves.shape[1]
    counts = np.zeros(n_ref, dtype=np.int32)
    touched = np.empty(n_ref, dtype=np.int32)
    n_words = 0
    # Each test of scan_block is a bare "is not None", which numba prunes at
    # compile time: with None the scanned way is not compiled at all.
    if scan_block is not None:
        if n_trees < 256:  # the counts fit a byte
            n_words = (min(scan_block, n_ref) + 7) // 8
    words = np.zeros(n_words, dtype=np.uint64)
    hist = np.zeros(n_trees + 2, dtype=np.int64)
    keys = np.empty(n_ref, dtype=np.int64)
    span = np.int64(n_ref + 1)
    cur = np.empty(n_trees, dtype=np.int64)
    end = np.empty(n_trees, dtype=np.int64)
    for pos in range(lo, hi):
        i = qorder[pos]
        skip = i if exclude_self else -1
        skip_r = pos if exclude_self else -1
        open_leaves(qleaves, _NO_MASK, i, node_offset, ptr, cur, end)
        load = 0
        for t in range(n_trees):
            load += end[t] - cur[t]
        hist[:] = 0
        n_best = -1
        if scan_block is not None:
            if n_words > 0 and load * scan_ratio >= n_ref:
                n_best = _scanned_keys(
                    words, members, cur, end, n_ref, skip_r, span, hist, keys, ref_index, n_cand
                )
        if n_best < 0:
            n_best = 0
            n_touched = gather_block(members, cur, end, 0, n_ref, n_ref, counts, touched)
            for q in range(n_touched):
                r = touched[q]
                if r != skip_r:
                    hist[counts[r]] += 1
            c_star = _floor(hist, n_trees, n_cand)
            for q in range(n_touched):
                r = touched[q]
                c = counts[r]
                counts[r] = 0
                if c >= c_star and r != skip_r:
                    keys[n_best] = (n_trees - c) * span + ref_index[r]
                    n_best += 1
        # Keys (n_trees - count, index): ascending is best first, ties to the lower index.
        order = np.sort(keys[:n_best])
        row = pos - lo
        n_take = min(n_best, width)
        for q in range(n_take):
            ind_out[row, q] = order[q] % span
            sim_out[row, q] = (n_trees - order[q] // span) / n_trees
        q = n_take
        if n_take < n_cand:
            taken = np.sort(ind_out[row, :n_take])
            q = pad_lowest(ind_out, sim_out, row, q, width, taken, 0, n_ref, skip)
        n_out[row] = q


def counted_rows(
    queries: Queries,
    index: LeafIndex,
    lo: int,
    hi: int,
    n_cand: int,
    width: int,
    exclude_self: bool,
) -> CountedRows:
    """:func:`counted_neighbors` of queries ``queries.order[lo:hi]``, new rows out."""
    if queries.mask.shape[0] > 0 or index.mask.shape[0] > 0 or index.base != 0:
        raise ValueError("the counted search takes neither tree masks nor a reference base")
    if exclude_self and queries.order is not index.ref_index:
        raise ValueError("excluding each query itself needs the references' order as qorder")
    n_q = hi - lo
    out = CountedRows(
        np.empty((n_q, width), dtype=np.int64),
        np.empty((n_q, width), dtype=np.float64),
        np.empty(n_q, dtype=np.int64),
    )
    n_ref = index.n_ref
    scan_ratio = SCAN_RATIO if n_ref > SCAN_MIN_REFS else 0
    search = CountedSearch(int(n_cand), int(width), bool(exclude_self), scan_ratio)
    scan_block = max(8, -(-SCAN_BLOCK // 8) * 8) if scan_ratio > 0 else None
    counted_neighbors(queries, index, lo, hi, search, out, scan_block)
    return out
