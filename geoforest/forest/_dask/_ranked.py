"""The learned ranking of a forest grown from a Dask array, searched on the workers.

Ranked by the forest's learned metric (``forest/_relevance.py``), a query's
neighbours are the best, by the metric, of its *candidates*: its ``n_cand``
highest-proximity training points by (proximity, lower index) and those tied
with the last, at most ``n_request`` (``width``) in all, continued by the
lowest indices at proximity 0 (the *padding*) when fewer than ``n_cand``
points share a leaf with it.  The candidates are a prefix of the *global
order* (co-leaf count descending, then index), and their share of a
reference partition is a prefix of the partition's own list, its candidates
by the same rule (``counted_rows``): nothing a partition cuts can be one.

The prefix's length depends on every partition, but only through how many
listed points each has at each co-leaf count.  So a partition answers with,
per query, that histogram (``n_trees + 1`` counts), and of its list only the
entries that can be *ranked*.  The in-memory rule (``_ranking._rank_rows``)
takes the ``k`` nearest candidates sharing a leaf and, if there are fewer,
completes them with the nearest of the padding (equal distances to the
earlier in the list).  An entry with ``k`` entries before it in the list,
sharing a leaf like it (or padding like it), that are nearer or as near, is
never among the ``k`` nearest of a prefix holding it: it is dropped
(:func:`_keep`).  Each kept entry carries its rank among the listed entries
of its count (``tie``).  Two consecutive partitions merge (:func:`_merge_rows`)
by adding their histograms, which gives the merged cut (the count ``s`` of the
``n_cand``-th entry, and how many of those at ``s`` fit in ``width``), shifting
the later partition's ranks by the earlier one's counts, dropping what the
cut leaves out and what ``k`` merged entries before it beat.  After the last
merge every entry left is a candidate, and the ranking of the kept ones is
the in-memory ranking of all of them: the answer is the in-memory one.

Why it matters: with 20 trees many points tie at the last candidate's
count, and a partition lists hundreds of candidates per query; the kept
entries are about ``k (1 + ln(m / k))`` of ``m`` (in random order, fewer when
the nearer come first).  Each search answers a block of :data:`QUERY_BLOCK`
queries and holds :data:`SEARCH_ROWS` rows of whole lists at a time, so no
task's memory grows with the query chunk (figures in ``docs/scale.md``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._counted_search import counted_rows
from ..._jit import njit
from ..._validation import check_n_neighbors, is_dask_array
from ...proximity import Queries, locality_order
from ._neighbors import (
    _EMPTY_MASK,
    _indexes,
    _partitions,
    _queries,
    _query_rows,
    _tree_merge,
    kneighbors,
    partition_index,
    query_bounds,
    stack_pairs,
)

#: Query rows one search task answers: a query chunk is cut into blocks of
#: this many rows, each searched, merged and ranked on its own, so that what a
#: task holds and sends does not grow with the chunk.
QUERY_BLOCK = 1 << 14

#: Query rows a search holds the whole candidate lists of (``width`` columns of
#: index, count, local row and distance) before dropping what cannot be ranked.
SEARCH_ROWS = 1024

#: Rows of merged candidates made rectangular at a time for the ranking.
RANK_ROWS = 8192


def kneighbors_of(forest, X, n_neighbors, return_distance, method, ranking=None, prepared=False):
    """``forest.kneighbors`` of a forest grown from a Dask array.

    ``X=None``: the training points (Dask arrays out); a Dask ``X``: Dask
    arrays out; an in-memory ``X``: computed on the cluster, ndarrays out.
    ``ranking``: the learned metric ranking the candidates, a
    ``_ranking.PartitionRanking`` (``None``: by proximity).
    """
    import dask

    check_n_neighbors(n_neighbors, forest._X_fit.shape[0], X is None)
    if ranking is None:
        queries = _queries(forest, X, method, "kneighbors", prepared)
        out = kneighbors(forest, queries, n_neighbors, return_distance, X is None)
    else:
        queries, features = _query_rows(forest, X, method, prepared)
        out = ranked_kneighbors(
            forest, queries, features, ranking, n_neighbors, return_distance, X is None
        )
    if X is None or is_dask_array(X):
        return out
    return dask.compute(*out) if return_distance else out.compute()


class Candidates(NamedTuple):
    """The rankable candidates of a block of queries, as ragged rows: row ``r``
    at ``ptr[r]:ptr[r + 1]`` of the flat ``ind``, ``count`` (co-leaf count, 0
    for the padding), ``d2`` (squared metric distance) and ``tie`` (the
    entry's rank among the listed entries of its count, in index order), in
    the global order; ``hist[r, c]``: the listed entries at count ``c``."""

    ptr: np.ndarray
    ind: np.ndarray
    count: np.ndarray
    d2: np.ndarray
    tie: np.ndarray
    hist: np.ndarray


class _Sizes(NamedTuple):
    """The sizes one ranked query shares with every task: ``k`` neighbours from
    ``n_cand`` candidates and their ties, at most ``width`` (``n_request``);
    ``exclude_self``: the queries are the training points."""

    k: int
    n_cand: int
    width: int
    exclude_self: bool


@njit(nogil=True, cache=True, inline="always")
def _keep(best, n_best, k, dist):
    """Whether an entry at ``dist`` is among the ``k`` nearest of those before
    it and itself (ties to the earlier); ``best[:n_best]``, the ``k`` smallest
    distances so far ascending, takes it in.  Returns ``(keep, n_best)``."""
    if n_best == k and not best[k - 1] > dist:
        return False, n_best
    pos = min(n_best, k - 1)
    while pos > 0 and best[pos - 1] > dist:
        best[pos] = best[pos - 1]
        pos -= 1
    best[pos] = dist
    return True, min(n_best + 1, k)


@njit(nogil=True, cache=True)
def _listed_rows(cand, sim, n_out, qorder, me_base, n_trees, width, local, count, n_listed):
    """A partition's lists of the queries in row order, the query itself left out.

    ``cand``, ``sim``, ``n_out``: ``counted_rows`` of the queries visited in
    ``qorder`` (row ``p`` is query ``qorder[p]``; local indices).  Query ``i``
    is the partition's point ``me_base + i`` when ``me_base >= 0``.  Row ``i``
    of ``local`` and ``count`` (co-leaf count) gets its first ``width`` entries
    that are not itself, ``n_listed[i]`` of them.
    """
    for p in range(cand.shape[0]):
        i = qorder[p]
        me = me_base + i if me_base >= 0 else -1
        m = 0
        for c in range(n_out[p]):
            if m == width:
                break
            if cand[p, c] == me:
                continue
            local[i, m] = cand[p, c]
            count[i, m] = np.int32(np.rint(sim[p, c] * n_trees))
            m += 1
        n_listed[i] = m


@njit(nogil=True, cache=True)
def _rankable(count, d2, n_listed, k, keep, hist, used):
    """Which listed entries can be ranked (:func:`_keep`, among those sharing a
    leaf and among the padding apart): ``keep[i, c]``, ``used[i]`` of them;
    ``hist[i, c]``: the entries listed at count ``c``."""
    best_shared = np.empty(k)
    best_pad = np.empty(k)
    for i in range(count.shape[0]):
        n_shared = 0
        n_pad = 0
        u = 0
        for c in range(n_listed[i]):
            hist[i, count[i, c]] += 1
            if count[i, c] > 0:
                kept, n_shared = _keep(best_shared, n_shared, k, d2[i, c])
            else:
                kept, n_pad = _keep(best_pad, n_pad, k, d2[i, c])
            keep[i, c] = kept
            if kept:
                u += 1
        used[i] = u


@njit(nogil=True, cache=True)
def _gather_kept(local, count, d2, n_listed, keep, ref_base, out):
    """The kept entries of each row one after another into ``out`` (a
    :class:`Candidates` whose ``ptr`` and ``hist`` are filled), with their
    global indices and their ranks among the entries of their count."""
    ptr, ind, out_count, out_d2, tie, hist = out
    seen = np.zeros(hist.shape[1], dtype=np.int64)
    for i in range(local.shape[0]):
        seen[:] = 0
        o = ptr[i]
        for c in range(n_listed[i]):
            lev = count[i, c]
            if keep[i, c]:
                ind[o] = local[i, c] + ref_base
                out_count[o] = lev
                out_d2[o] = d2[i, c]
                tie[o] = seen[lev]
                o += 1
            seen[lev] += 1


def _empty(n_q: int, size: int, n_levels: int) -> Candidates:
    return Candidates(
        np.zeros(n_q + 1, dtype=np.int64),
        np.empty(size, dtype=np.int64),
        np.empty(size, dtype=np.int32),
        np.empty(size, dtype=np.float64),
        np.empty(size, dtype=np.int64),
        np.zeros((n_q, n_levels), dtype=np.int32),
    )


def _partition_rows(qleaves, qX, index, ref_X, ref_base, me_base, ranking, sizes) -> Candidates:
    """One partition's rankable candidates for a few queries (at most
    :data:`SEARCH_ROWS`): its candidates by the in-memory rule
    (``counted_rows``, asking one more and dropping the query itself when it is
    the partition's point ``me_base + i``), their squared metric distances
    to the queries ``qX``, then the entries that can be ranked."""
    n_q, n_trees = qleaves.shape
    own = me_base >= 0
    queries = Queries(qleaves, _EMPTY_MASK, locality_order(qleaves))
    asked, wide = min(sizes.n_cand + own, index.n_ref), min(sizes.width + own, index.n_ref)
    cand, sim, n_out = counted_rows(queries, index, 0, n_q, asked, wide, False)
    width = min(sizes.width, wide)
    local = np.zeros((n_q, width), dtype=np.int64)
    count = np.empty((n_q, width), dtype=np.int32)
    n_listed = np.empty(n_q, dtype=np.int64)
    _listed_rows(cand, sim, n_out, queries.order, me_base, n_trees, width, local, count, n_listed)
    del cand, sim
    d2 = np.empty((n_q, width), dtype=np.float64)
    ranking.distances(qX, ref_X, local, n_listed, d2)
    keep = np.empty((n_q, width), dtype=np.bool_)
    out = _empty(n_q, 0, n_trees + 1)
    used = np.empty(n_q, dtype=np.int64)
    _rankable(count, d2, n_listed, int(sizes.k), keep, out.hist, used)
    np.cumsum(used, out=out.ptr[1:])
    out = _empty(n_q, int(out.ptr[-1]), n_trees + 1)._replace(ptr=out.ptr, hist=out.hist)
    _gather_kept(local, count, d2, n_listed, keep, ref_base, out)
    return out


def _ref_rows(ranking, *blocks):
    """A partition's training rows, the metric's features only (float32)."""
    return ranking.columns(np.concatenate(blocks) if len(blocks) > 1 else blocks[0])


def _query_columns(ranking, block, lo, hi):
    """Rows ``lo:hi`` of a query chunk, the metric's features only."""
    return ranking.columns(block[lo:hi])


def _rows(block, lo, hi):
    return block[lo:hi]


def _search_ranked(qleaves, qX, lists, ref_X, node_offset, ref_base, n_ref, q_base, ranking, sizes):
    """One partition's rankable candidates (:class:`Candidates`) for a block
    of queries, the first being training point ``q_base`` when they are the
    training points; :data:`SEARCH_ROWS` queries at a time."""
    # Numbered from 0 in the partition: ref_base is added to what it answers.
    index = partition_index(lists, node_offset, 0, n_ref)
    own = sizes.exclude_self and ref_base <= q_base < ref_base + n_ref
    parts = []
    for lo in range(0, qleaves.shape[0], SEARCH_ROWS):
        hi = min(lo + SEARCH_ROWS, qleaves.shape[0])
        me_base = q_base + lo - ref_base if own else -1
        part = _partition_rows(
            qleaves[lo:hi], qX[lo:hi], index, ref_X, ref_base, me_base, ranking, sizes
        )
        parts.append(part)
    if len(parts) == 1:
        return parts[0]
    starts = np.cumsum([0] + [part.ptr[-1] for part in parts[:-1]])
    ptr = np.concatenate([[0]] + [part.ptr[1:] + s for part, s in zip(parts, starts, strict=True)])
    flat = (np.concatenate([part[i] for part in parts]) for i in range(1, 6))
    return Candidates(ptr.astype(np.int64), *flat)


@njit(nogil=True, cache=True)
def _merge_rows(a, b, n_cand, width, k, out):
    """Two consecutive partitions' candidates (:class:`Candidates`, ``a``'s
    indices below ``b``'s) as one, ``out`` (its arrays as long as both).

    Per row: the histograms add up, which gives the cut: ``s``, the count of
    the ``n_cand``-th listed entry (0 if there are fewer), and ``room``, how
    many entries at ``s`` fit in ``width`` after those above it.  The entries
    in the global order (count descending; at one count ``a``'s before
    ``b``'s, whose ranks among them move up by ``a``'s number there), up to
    the first the cut leaves out, then only those :func:`_keep` keeps.
    """
    a_ptr, a_ind, a_count, a_d2, a_tie, a_hist = a
    b_ptr, b_ind, b_count, b_d2, b_tie, b_hist = b
    ptr, ind, count, d2, tie, hist = out
    n_levels = hist.shape[1]
    best_shared = np.empty(k)
    best_pad = np.empty(k)
    o = 0
    ptr[0] = 0
    for r in range(hist.shape[0]):
        for c in range(n_levels):
            hist[r, c] = a_hist[r, c] + b_hist[r, c]
        s = n_levels - 1
        above = 0
        while s > 0 and above + hist[r, s] < n_cand:
            above += hist[r, s]
            s -= 1
        room = width - above
        p, p_end = a_ptr[r], a_ptr[r + 1]
        q, q_end = b_ptr[r], b_ptr[r + 1]
        n_shared = 0
        n_pad = 0
        while p < p_end or q < q_end:
            if q == q_end or (p < p_end and a_count[p] >= b_count[q]):
                e_ind, lev, dist, e_tie = a_ind[p], a_count[p], a_d2[p], a_tie[p]
                p += 1
            else:
                e_ind, lev, dist = b_ind[q], b_count[q], b_d2[q]
                e_tie = b_tie[q] + a_hist[r, lev]
                q += 1
            if lev < s or (lev == s and e_tie >= room):
                break  # and so is everything after it
            if lev > 0:
                kept, n_shared = _keep(best_shared, n_shared, k, dist)
            else:
                kept, n_pad = _keep(best_pad, n_pad, k, dist)
            if kept:
                ind[o] = e_ind
                count[o] = lev
                d2[o] = dist
                tie[o] = e_tie
                o += 1
        ptr[r + 1] = o


def _merge_ranked(sizes, *parts):
    """Two consecutive partitions' candidates as one (:func:`_merge_rows`)."""
    if len(parts) == 1:
        return parts[0]
    a, b = parts
    n_q, n_levels = a.hist.shape
    out = _empty(n_q, a.ind.shape[0] + b.ind.shape[0], n_levels)
    _merge_rows(a, b, sizes.n_cand, sizes.width, sizes.k, out)
    used = out.ptr[-1]
    trimmed = (out[i][:used].copy() for i in range(1, 5))
    return Candidates(out.ptr, *trimmed, out.hist)


@njit(nogil=True, cache=True)
def _scatter_rows(ptr, lo, f_ind, f_count, f_d2, ind, sim, d2, n_out):
    """Rows ``lo, lo + 1, ...`` of ragged candidates as rectangular ones, their
    counts as proximities (the ranking tells only sharing a leaf from not)."""
    for i in range(ind.shape[0]):
        r = lo + i
        n_out[i] = ptr[r + 1] - ptr[r]
        for c in range(n_out[i]):
            ind[i, c] = f_ind[ptr[r] + c]
            sim[i, c] = f_count[ptr[r] + c]
            d2[i, c] = f_d2[ptr[r] + c]


def _rank_merged(merged, ranking, sizes):
    """``(ind, dist)``: the candidates of every partition, merged, ranked by the
    in-memory rule, a block of :data:`RANK_ROWS` rows at a time."""
    ptr = merged.ptr
    n_q = ptr.shape[0] - 1
    ind = np.empty((n_q, sizes.k), dtype=np.int64)
    dist = np.empty((n_q, sizes.k), dtype=np.float64)
    for lo in range(0, n_q, RANK_ROWS):
        hi = min(lo + RANK_ROWS, n_q)
        m = int(np.diff(ptr[lo : hi + 1]).max())
        cand = np.empty((hi - lo, m), dtype=np.int64)
        sim = np.empty((hi - lo, m), dtype=np.float64)
        d2 = np.empty((hi - lo, m), dtype=np.float64)
        n_out = np.empty(hi - lo, dtype=np.int64)
        _scatter_rows(ptr, lo, merged.ind, merged.count, merged.d2, cand, sim, d2, n_out)
        ind[lo:hi], dist[lo:hi] = ranking.rank(cand, sim, n_out, d2, sizes.k)
    return ind, dist


def _stack(*pairs):
    """One query chunk's ``(ind, dist)`` from those of its blocks."""
    return tuple(np.concatenate([pair[i] for pair in pairs]) for i in range(2))


def ranked_kneighbors(
    forest, queries, features, ranking, n_neighbors: int, return_distance: bool, is_train: bool
):
    """Neighbours of the queries ranked by the learned metric (module docstring), in
    the pieces ``ranking`` (a ``_ranking.PartitionRanking``) gives.

    ``queries`` and ``features`` hold the query points' leaves and float32
    rows (same row chunks).  Each query chunk is cut into blocks of
    :data:`QUERY_BLOCK` rows; per block, one task per reference partition
    finds and measures its rankable candidates, a tree of merges joins them,
    and one task ranks them.  Dask arrays with the queries' row chunks out.
    """
    import dask

    delayed = dask.delayed
    k = int(n_neighbors)
    n_cand, width = ranking.candidate_counts(k, forest._X_fit.shape[0], is_train)
    sizes = _Sizes(k, n_cand, width, bool(is_train))
    node = delayed(ranking, pure=True, traverse=False)  # sent to each worker once
    indexes = _indexes(forest, delayed)
    # The partitions of _indexes (the training leaves have the rows' chunks).
    xblocks = list(forest._X_fit.to_delayed().ravel())
    refs = [
        delayed(_ref_rows, pure=True)(node, *xblocks[a:b])
        for a, b in _partitions(forest._X_fit.chunks[0])
    ]
    node_offset = forest._flat.node_offset
    qbounds = query_bounds(queries)
    fblocks = list(features.to_delayed().ravel())
    search = delayed(_search_ranked, pure=True)
    pairs = []
    for c, qblock in enumerate(queries.to_delayed().ravel()):
        n_rows = int(qbounds[c + 1] - qbounds[c])
        blocks = []
        for lo in range(0, n_rows, QUERY_BLOCK):
            hi = min(lo + QUERY_BLOCK, n_rows)
            qX = delayed(_query_columns, pure=True)(node, fblocks[c], lo, hi)
            ql = qblock if hi - lo == n_rows else delayed(_rows, pure=True)(qblock, lo, hi)
            q_base = int(qbounds[c]) + lo
            found = [
                search(ql, qX, lists, ref_X, node_offset, base, size, q_base, node, sizes)
                for (lists, base, size), ref_X in zip(indexes, refs, strict=True)
            ]
            merged = _tree_merge(delayed, sizes, found, _merge_ranked)
            blocks.append(delayed(_rank_merged, pure=True)(merged, node, sizes))
        pairs.append(blocks[0] if len(blocks) == 1 else delayed(_stack, pure=True)(*blocks))
    return stack_pairs(pairs, qbounds, k, return_distance, as_distance=False)
