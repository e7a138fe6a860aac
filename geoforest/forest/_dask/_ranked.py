"""The learned ranking of a forest grown from a Dask array, searched on the workers.

Ranked by the forest's learned metric (``forest/_relevance.py``), a query's
neighbours are the best of its ``n_cand`` highest-proximity training points
and those tied with the last (up to ``n_request``), the candidates.  Each
partition answers with its own top ``n_request`` by (proximity, lower
index), cut to its ``n_cand`` and ties, with their proximities *and* their
squared metric distances to the query: the partition holds its training
rows, and the query rows' features travel to it with their leaves.  The
global candidates are the best of the union by (proximity, index), cut the
same way (:func:`_cut`); this is the in-memory candidate list, padding by
the lowest indices at proximity 0 included (a partition cuts nothing that
can be among the global candidates: whatever ranks among them in the union
ranks at least as well in its partition).  The merged candidates are then
ranked by the in-memory rule, so the answer is the in-memory one.

A partition far from a query shares no leaf with it and answers with padding
only, up to ``n_request`` entries.  Of its padding it sends just the entries
among the ``k`` nearest of the padding before them (:func:`_compact_rows`),
with their positions: globally a row takes a prefix of each partition's
padding and ranks only the ``k`` nearest of it, so nothing left out could
have been chosen (about ``k (1 + ln(n_request / k))`` entries instead of
``n_request``).
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
    _NONE,
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


class Compacted(NamedTuple):
    """Candidates of a block of queries as ragged rows: row ``r`` at
    ``ptr[r]:ptr[r + 1]`` of the flat ``ind``, ``sim``, ``d2`` (squared metric
    distance) and ``zrank`` (a padding entry's position in its partition's
    padding, -1 for one sharing a leaf); ``n_zero[r]``: the padding's length.
    Ragged, because one row with many ties would otherwise give every row of
    the block its width."""

    ptr: np.ndarray
    ind: np.ndarray
    sim: np.ndarray
    d2: np.ndarray
    zrank: np.ndarray
    n_zero: np.ndarray


class _Sizes(NamedTuple):
    """The sizes one ranked query shares with every task: ``k`` neighbours from
    ``n_cand`` candidates and their ties, at most ``width`` (``n_request``);
    ``exclude_self``: the queries are the training points."""

    k: int
    n_cand: int
    width: int
    exclude_self: bool


def _cut(sim, n_cand: int) -> np.ndarray:
    """Candidates per row of a list best first: the ``n_cand`` best and those tied
    with the last of them (the in-memory rule, ``_ranking.candidate_counts``),
    never a missing one (proximity -1).

    A row with fewer than ``n_cand`` points sharing a leaf with its query
    continues at proximity 0, so the ties take its whole width: the padding.
    """
    width = sim.shape[1]
    n_valid = (sim >= 0.0).sum(axis=1)
    if width <= n_cand:
        return n_valid
    tied = sim[:, n_cand:] == sim[:, n_cand - 1 : n_cand]
    ends = np.zeros((sim.shape[0], 1), dtype=bool)
    return np.minimum(n_cand + np.hstack([tied, ends]).argmin(axis=1), n_valid)


def _ref_rows(ranking, *blocks):
    """A partition's training rows, the metric's features only (float32)."""
    return ranking.columns(np.concatenate(blocks) if len(blocks) > 1 else blocks[0])


def _partition_candidates(qleaves, lists, node_offset, ref_base, n_ref, q_base, sizes):
    """``(ind, sim, n_out)``: one partition's ``n_cand`` best points for every
    query of a block, by (proximity, lower index), and those tied with the
    last, at most ``width``, padded by the lowest indices at proximity 0 (the
    in-memory candidates, ``counted_rows``, of the partition alone).

    Each query excludes itself (``sizes.exclude_self``) when its block lies in the
    partition: the search then asks one candidate more and drops the query,
    which shares every leaf with itself, from its row.
    """
    n_q = qleaves.shape[0]
    n_cand, width = sizes.n_cand, sizes.width
    own = sizes.exclude_self and ref_base <= q_base < ref_base + n_ref
    queries = Queries(qleaves, _EMPTY_MASK, locality_order(qleaves))
    # Numbered from 0 in the partition: ref_base is added below.
    index = partition_index(lists, node_offset, 0, n_ref)
    asked, wide = min(n_cand + own, n_ref), min(width + own, n_ref)
    ind, sim, n_out = counted_rows(queries, index, 0, n_q, asked, wide, False)
    qorder = queries.order
    back = np.empty_like(qorder)
    back[qorder] = np.arange(n_q)
    ind, sim, n_out = ind[back], sim[back], n_out[back]
    cols = np.arange(ind.shape[1])[None, :]
    valid = cols < n_out[:, None]
    ind = np.where(valid, ind + ref_base, _NONE)
    sim = np.where(valid, sim, -1.0)
    if own:
        me = ind == (q_base + np.arange(n_q))[:, None]
        first = np.argsort(me, axis=1, kind="stable")
        ind = np.take_along_axis(ind, first, axis=1)
        sim = np.take_along_axis(sim, first, axis=1)
        n_out = n_out - me.any(axis=1)
    n_out = np.minimum(n_out, width)
    gone = cols[:, : ind.shape[1]] >= n_out[:, None]
    ind[gone] = _NONE
    sim[gone] = -1.0
    return ind, sim, n_out


def _query_columns(ranking, block):
    return ranking.columns(block)


#: Queries a partition searches and compacts at a time, so that its transient
#: arrays (``n_request`` columns of index, proximity, distance and position)
#: do not grow with the query chunk.
SEARCH_ROWS = 16384


def _search_ranked(qleaves, qX, lists, ref_X, node_offset, ref_base, n_ref, q_base, ranking, sizes):
    """One partition's candidates for a block of queries, compacted
    (:func:`_compact_rows`): ``(ptr, ind, sim, d2, zrank, n_zero)``, ragged rows.

    Its ``n_cand`` best and ties (:func:`_partition_candidates`; whatever it
    cuts cannot be among the global candidates) with the squared metric
    distances from the queries ``qX`` to them, :data:`SEARCH_ROWS` queries at
    a time.
    """
    parts = []
    for lo in range(0, qleaves.shape[0], SEARCH_ROWS):
        hi = min(lo + SEARCH_ROWS, qleaves.shape[0])
        ind, sim, n_out = _partition_candidates(
            qleaves[lo:hi], lists, node_offset, ref_base, n_ref, q_base + lo, sizes
        )
        m = int(n_out.max()) if n_out.size else 0
        ind, sim = np.ascontiguousarray(ind[:, :m]), np.ascontiguousarray(sim[:, :m])
        local = np.where(ind == _NONE, 0, ind - ref_base)
        d2 = np.full(ind.shape, np.inf)
        ranking.distances(qX[lo:hi], ref_X, local, n_out, d2)
        parts.append(_compact(ind, sim, d2, n_out, sizes.k))
    if len(parts) == 1:
        return parts[0]
    starts = np.cumsum([0] + [part.ptr[-1] for part in parts[:-1]])
    ptr = np.concatenate([[0]] + [part.ptr[1:] + s for part, s in zip(parts, starts, strict=True)])
    flat = (np.concatenate([part[i] for part in parts]) for i in range(1, 6))
    return Compacted(ptr.astype(np.int64), *flat)


@njit(nogil=True, cache=True)
def _compact_rows(ind, sim, d2, n_out, k, out_zr, n_zero, used):
    """Each row's candidates sharing a leaf (all of them), then of those at
    proximity 0 (the padding, in index order) only the ones among the ``k``
    nearest of the padding before them.

    Why that is exact: globally, a row takes padding only when fewer than
    ``n_cand`` points share a leaf with it, and then the lowest-index padding
    points, so a *prefix* of each partition's padding; of those, the ranking
    uses only the ``k`` nearest (it completes the shared ones with the nearest
    of the rest).  A padding point with ``k`` nearer ones before it (ties to
    the earlier) is never among the ``k`` nearest of any prefix holding it.
    In place: the kept entries move to the front of their row (a row is
    read ahead of where it is written).  ``out_zr``: a padding entry's
    position in the partition's padding (-1 for a shared one); ``n_zero``: the
    padding's length; ``used``: the kept entries of each row.
    """
    best = np.empty(k)
    for r in range(ind.shape[0]):
        c_out = 0
        z = 0
        n_best = 0
        for c in range(n_out[r]):
            if sim[r, c] > 0.0:
                keep = True
                zr = -1
            else:
                dist = d2[r, c]
                # best[:n_best] holds the smallest padding distances so far, ascending.
                keep = n_best < k or best[n_best - 1] > dist
                if keep:
                    pos = min(n_best, k - 1)
                    while pos > 0 and best[pos - 1] > dist:
                        best[pos] = best[pos - 1]
                        pos -= 1
                    best[pos] = dist
                    n_best = min(n_best + 1, k)
                zr = z
                z += 1
            if keep:
                ind[r, c_out] = ind[r, c]
                sim[r, c_out] = sim[r, c]
                d2[r, c_out] = d2[r, c]
                out_zr[r, c_out] = zr
                c_out += 1
        for c in range(c_out, ind.shape[1]):
            ind[r, c] = _NONE
            sim[r, c] = -1.0
            d2[r, c] = np.inf
            out_zr[r, c] = -1
        n_zero[r] = z
        used[r] = c_out


@njit(nogil=True, cache=True)
def _gather_rows(ptr, ind, sim, d2, zr, f_ind, f_sim, f_d2, f_zr):
    """The first ``ptr[r + 1] - ptr[r]`` entries of each row, one after another."""
    for r in range(ind.shape[0]):
        for c in range(ptr[r + 1] - ptr[r]):
            f_ind[ptr[r] + c] = ind[r, c]
            f_sim[ptr[r] + c] = sim[r, c]
            f_d2[ptr[r] + c] = d2[r, c]
            f_zr[ptr[r] + c] = zr[r, c]


def _compact(ind, sim, d2, n_out, k: int) -> Compacted:
    """:func:`_compact_rows` of a partition's answer (in place), as ragged rows."""
    n_q, w = ind.shape
    zr = np.empty((n_q, w), dtype=np.int64)
    n_zero = np.empty(n_q, dtype=np.int64)
    used = np.empty(n_q, dtype=np.int64)
    _compact_rows(ind, sim, d2, n_out.astype(np.int64), int(k), zr, n_zero, used)
    ptr = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(used, out=ptr[1:])
    flat = (
        np.empty(ptr[-1], dtype=np.int64),
        np.empty(ptr[-1], dtype=np.float64),
        np.empty(ptr[-1], dtype=np.float64),
        np.empty(ptr[-1], dtype=np.int64),
    )
    _gather_rows(ptr, ind, sim, d2, zr, *flat)
    return Compacted(ptr, *flat, n_zero)


@njit(nogil=True, cache=True)
def _merge_compact_rows(a, b, n_cand, width, out):
    """Two consecutive partitions' compacted answers (:class:`Compacted`,
    ``a`` before ``b`` in index order) as one, ``out``: the shared entries
    merged by (-proximity, index), at most ``width``; then ``a``'s padding
    entries and ``b``'s, whose positions follow ``a``'s padding, those at a
    position below ``width`` only.

    A row holding ``n_cand`` shared entries keeps only those and the ones
    tied with the last of them, and no padding: more partitions can only
    raise the cut, so nothing else of it can be a candidate.
    """
    a_ptr, a_ind, a_sim, a_d2, a_zr, a_nz = a
    b_ptr, b_ind, b_sim, b_d2, b_zr, b_nz = b
    ptr, out_ind, out_sim, out_d2, out_zr, out_nz = out
    c = 0
    ptr[0] = 0
    for r in range(a_ptr.shape[0] - 1):
        a0, a1 = a_ptr[r], a_ptr[r + 1]
        b0, b1 = b_ptr[r], b_ptr[r + 1]
        sa = a0
        while sa < a1 and a_zr[sa] == -1:
            sa += 1
        sb = b0
        while sb < b1 and b_zr[sb] == -1:
            sb += 1
        p = a0
        q = b0
        n = 0
        while n < width and (p < sa or q < sb):
            if p < sa and (
                q >= sb or a_sim[p] > b_sim[q] or (a_sim[p] == b_sim[q] and a_ind[p] < b_ind[q])
            ):
                out_ind[c] = a_ind[p]
                out_sim[c] = a_sim[p]
                out_d2[c] = a_d2[p]
                p += 1
            else:
                out_ind[c] = b_ind[q]
                out_sim[c] = b_sim[q]
                out_d2[c] = b_d2[q]
                q += 1
            out_zr[c] = -1
            c += 1
            n += 1
        if n >= n_cand:
            start = c - n
            last = out_sim[start + n_cand - 1]
            keep = n_cand
            while keep < n and out_sim[start + keep] == last:
                keep += 1
            c = start + keep
            ptr[r + 1] = c
            out_nz[r] = min(a_nz[r] + b_nz[r], width)
            continue
        for p in range(sa, a1):
            if a_zr[p] >= width:
                break
            out_ind[c] = a_ind[p]
            out_sim[c] = a_sim[p]
            out_d2[c] = a_d2[p]
            out_zr[c] = a_zr[p]
            c += 1
        for q in range(sb, b1):
            if a_nz[r] + b_zr[q] >= width:
                break
            out_ind[c] = b_ind[q]
            out_sim[c] = b_sim[q]
            out_d2[c] = b_d2[q]
            out_zr[c] = a_nz[r] + b_zr[q]
            c += 1
        ptr[r + 1] = c
        out_nz[r] = min(a_nz[r] + b_nz[r], width)


def _merge_ranked(sizes, *parts):
    """Two consecutive partitions' compacted candidates as one
    (:func:`_merge_compact_rows`)."""
    if len(parts) == 1:
        return parts[0]
    a, b = parts
    n_q = a.ptr.shape[0] - 1
    size = a.ind.shape[0] + b.ind.shape[0]
    out = Compacted(
        np.empty(n_q + 1, dtype=np.int64),
        np.empty(size, dtype=np.int64),
        np.empty(size, dtype=np.float64),
        np.empty(size, dtype=np.float64),
        np.empty(size, dtype=np.int64),
        np.empty(n_q, dtype=np.int64),
    )
    _merge_compact_rows(a, b, sizes.n_cand, sizes.width, out)
    ptr, ind, sim, d2, zrank, n_zero = out
    used = ptr[-1]
    return Compacted(
        ptr, ind[:used].copy(), sim[:used].copy(), d2[:used].copy(), zrank[:used].copy(), n_zero
    )


@njit(nogil=True, cache=True)
def _scatter_rows(ptr, lo, f_ind, f_sim, f_d2, f_zr, ind, sim, d2, zr):
    """Rows ``lo, lo + 1, ...`` of ragged arrays into rectangular ones (missing
    entries: index ``_NONE``, proximity -1, distance inf, position -1)."""
    for i in range(ind.shape[0]):
        r = lo + i
        m = ptr[r + 1] - ptr[r]
        for c in range(ind.shape[1]):
            if c < m:
                ind[i, c] = f_ind[ptr[r] + c]
                sim[i, c] = f_sim[ptr[r] + c]
                d2[i, c] = f_d2[ptr[r] + c]
                zr[i, c] = f_zr[ptr[r] + c]
            else:
                ind[i, c] = _NONE
                sim[i, c] = -1.0
                d2[i, c] = np.inf
                zr[i, c] = -1


def _merged_counts(sim, zr, n_zero, n_cand: int, width: int) -> np.ndarray:
    """Candidates per row of the merged list (shared entries first, then the
    padding entries in position order): with at least ``n_cand`` points
    sharing a leaf, the ``n_cand`` best and those tied with the last
    (:func:`_cut`); with fewer, all of them and the padding up to ``width``
    in all (the in-memory list, of which the entries left out are never
    ranked)."""
    shared = (zr == -1) & (sim > 0.0)
    n_shared = shared.sum(axis=1)
    cut = _cut(np.where(shared, sim, -1.0), n_cand)
    pad = np.minimum(width - n_shared, n_zero)
    n_pad = ((zr >= 0) & (zr < pad[:, None])).sum(axis=1)
    return np.where(n_shared >= n_cand, cut, n_shared + n_pad)


#: Rows of merged candidates made rectangular at a time for the ranking.
RANK_ROWS = 8192


def _rank_merged(merged, ranking, sizes):
    """``(ind, dist)``: the merged candidates ranked by the in-memory rule, a
    block of :data:`RANK_ROWS` rows at a time."""
    ptr, f_ind, f_sim, f_d2, f_zr, n_zero = merged
    n_q = ptr.shape[0] - 1
    ind = np.empty((n_q, sizes.k), dtype=np.int64)
    dist = np.empty((n_q, sizes.k), dtype=np.float64)
    for lo in range(0, n_q, RANK_ROWS):
        hi = min(lo + RANK_ROWS, n_q)
        m = int(np.diff(ptr[lo : hi + 1]).max()) if hi > lo else 0
        block = (
            np.empty((hi - lo, m), dtype=np.int64),
            np.empty((hi - lo, m), dtype=np.float64),
            np.empty((hi - lo, m), dtype=np.float64),
            np.empty((hi - lo, m), dtype=np.int64),
        )
        _scatter_rows(ptr, lo, f_ind, f_sim, f_d2, f_zr, *block)
        n_out = _merged_counts(block[1], block[3], n_zero[lo:hi], sizes.n_cand, sizes.width)
        ind[lo:hi], dist[lo:hi] = ranking.rank(block[0], block[1], n_out, block[2], sizes.k)
    return ind, dist


def ranked_kneighbors(
    forest, queries, features, ranking, n_neighbors: int, return_distance: bool, is_train: bool
):
    """Neighbours of the queries ranked by the learned metric (module docstring), in
    the pieces ``ranking`` (a ``_ranking.PartitionRanking``) gives.

    ``queries`` and ``features`` hold the query points' leaves and float32
    rows (same row chunks).  Per query chunk, one task per reference
    partition searches and measures its candidates, a tree of merges keeps
    the best, and one task ranks them; Dask arrays with the queries' row
    chunks out.
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
    pairs = []
    for c, qblock in enumerate(queries.to_delayed().ravel()):
        qX = delayed(_query_columns, pure=True)(node, fblocks[c])
        search = delayed(_search_ranked, pure=True)
        found = [
            search(qblock, qX, lists, ref_X, node_offset, base, size, int(qbounds[c]), node, sizes)
            for (lists, base, size), ref_X in zip(indexes, refs, strict=True)
        ]
        merged = _tree_merge(delayed, sizes, found, _merge_ranked)
        pairs.append(delayed(_rank_merged, pure=True)(merged, node, sizes))
    return stack_pairs(pairs, qbounds, k, return_distance, as_distance=False)
