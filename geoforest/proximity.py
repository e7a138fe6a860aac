"""Forest proximity kernels and forest neighbours, sparse and without n x n.

The proximity of ``i`` and ``j`` is ``S(i, j) = L(i, j) / T(i, j)``: ``L`` counts
the trees in which both fall in the same leaf and ``T`` counts the trees that
are considered for the pair.  :class:`ProximityCounts` keeps ``L`` and ``T``
(as per-tree masks) apart, so the counts of two forests add exactly: a forest
of 100 trees has the counts of its four 25-tree parts summed.

Everything is built from *leaf lists* — for each leaf of each tree, the
reference points in it — so the work is ``O(n_trees * n * leaf size)`` and the
memory is that of the output.  Forest neighbours gather the co-leaf points of
a query across trees into a counter and keep the top ``k``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ._jit import njit
from ._sparse import as_output_csr

__all__ = ["ProximityCounts"]


# --------------------------------------------------------------------------- kernels
class Queries(NamedTuple):
    """The query points of a search, as its kernels take them (one argument).

    ``leaves[i, t]`` is query ``i``'s local leaf in tree ``t``; ``mask[i, t]``
    says whether tree ``t`` counts for it (uint8; an empty ``(0, 0)`` mask:
    every tree); ``order`` is the order the queries are visited in (a
    permutation, :func:`locality_order`); query ``i`` is point ``base + i``
    (a distributed search's query chunk starts at ``base``).
    """

    leaves: np.ndarray
    mask: np.ndarray
    order: np.ndarray
    base: int = 0


class LeafIndex(NamedTuple):
    """The reference points of a search, as its kernels take them (one argument).

    ``ptr`` and ``members`` are their leaf lists (:func:`leaf_lists`) by
    global node id, tree ``t``'s nodes from ``node_offset[t]``; members are
    positions ``r``, and ``ref_index[r]`` the point at position ``r`` (a
    permutation of ``range(n_ref)``).  ``mask[j, t]`` says whether tree ``t``
    counts for reference ``j`` (empty: every tree); reference ``j`` is point
    ``base + j`` (a distributed search's partition starts at ``base``).
    """

    node_offset: np.ndarray
    ptr: np.ndarray
    members: np.ndarray
    ref_index: np.ndarray
    mask: np.ndarray
    n_ref: int
    base: int = 0


#: Index of the padding a reference partition too small for ``k`` gives (see forest_kneighbors).
_NO_POINT = np.iinfo(np.int64).max

#: Reference positions whose co-leaf counts are gathered at a time: 1 MiB of
#: int32 counters, which stay in a core's cache while a query's leaf lists are
#: walked (the counters of all references are out of cache from about 10**6
#: of them, and the search is then bound by the misses; ``docs/scale.md``).
SEARCH_BLOCK = 1 << 18


#: A row of co-leaf counts holding at least ``n_ref / COLEAF_SCAN_RATIO``
#: points is put in column order by one pass over ``n_ref`` counters instead of
#: a sort (:func:`coleaf_counts`; the figures behind 64 are in ``docs/benchmarks.md``).
COLEAF_SCAN_RATIO = 64


def search_block(n_ref: int) -> int:
    """Reference positions counted at a time when searching ``n_ref`` references."""
    return max(1, min(SEARCH_BLOCK, int(n_ref)))


@njit(nogil=True, cache=True)
def leaf_lists(leaves, node_offset, mask, order):
    """CSR of reference points by global leaf id.

    ``leaves[i, t]`` is the local leaf of point ``i`` in tree ``t``; only pairs
    with ``mask[i, t]`` set are listed (an empty ``mask`` lists everything).
    Returns ``(ptr, members)`` with members of global node ``g`` in
    ``members[ptr[g]:ptr[g + 1]]``, in increasing order.  Members are
    positions ``r`` in the permutation ``order`` (point ``order[r]``; see
    :func:`locality_order`).
    """
    n, n_trees = leaves.shape
    n_total = node_offset[n_trees]
    use_mask = mask.shape[0] > 0
    ptr = np.zeros(n_total + 1, dtype=np.int64)
    for i in range(n):
        for t in range(n_trees):
            if use_mask and mask[i, t] == 0:
                continue
            ptr[node_offset[t] + leaves[i, t] + 1] += 1
    for g in range(n_total):
        ptr[g + 1] += ptr[g]
    fill = ptr[:-1].copy()
    members = np.empty(ptr[n_total], dtype=np.int32)
    for r in range(n):
        i = order[r]
        for t in range(n_trees):
            if use_mask and mask[i, t] == 0:
                continue
            g = node_offset[t] + leaves[i, t]
            members[fill[g]] = r
            fill[g] += 1
    return ptr, members


def locality_order(leaves: np.ndarray) -> np.ndarray:
    """Points sorted by their leaves in the first two trees (a permutation).

    Neighbours by the forest share leaves, so in this order they sit close
    together: numbering reference points and visiting queries this way keeps
    the neighbour search's counters and leaf lists in cache (figures in
    ``docs/forests.md``).
    """
    keys = [leaves[:, t] for t in range(min(2, leaves.shape[1]))][::-1]
    return np.lexsort(keys).astype(np.int64)


@njit(nogil=True, cache=True, inline="always")
def open_leaves(qleaves, qmask, i, node_offset, ptr, cur, end):
    """Point ``cur[t]:end[t]`` at query ``i``'s leaf list in tree ``t`` (empty
    where ``qmask`` leaves the tree out)."""
    use_mask = qmask.shape[0] > 0
    for t in range(qleaves.shape[1]):
        if use_mask and qmask[i, t] == 0:
            cur[t] = 0
            end[t] = 0
            continue
        g = node_offset[t] + qleaves[i, t]
        cur[t] = ptr[g]
        end[t] = ptr[g + 1]


@njit(nogil=True, cache=True, inline="always")
def gather_block(members, cur, end, r0, r1, n_ref, counts, touched):
    """Co-leaf counts of the reference positions ``r0 <= r < r1`` of the leaf
    lists ``cur[t]:end[t]``, advancing each ``cur[t]`` past them.

    ``counts[r - r0]`` counts, ``touched`` lists the ``r - r0`` counted
    (returns how many).  Leaf lists are sorted, so the blocks of one query,
    taken in increasing ``r0``, see each member once; the last block
    (``r1 >= n_ref``) takes what is left of every list.
    """
    n_touched = 0
    for t in range(cur.shape[0]):
        q = cur[t]
        e = end[t]
        if q == e:
            continue
        if r1 >= n_ref or members[e - 1] < r1:
            # The rest of the list lies in the block (always so with one
            # block): a counted loop, without a bound test per member.
            stop = e
        else:
            stop = q
            while members[stop] < r1:
                stop += 1
        for p in range(q, stop):
            j = members[p] - r0
            if counts[j] == 0:
                touched[n_touched] = j
                n_touched += 1
            counts[j] += 1
        cur[t] = stop
    return n_touched


@njit(nogil=True, cache=True)
def coleaf_counts(queries, index, lo, hi, block, scan_ratio):
    """Co-leaf counts ``L`` of queries ``queries.order[lo:hi]`` as CSR pieces (sorted columns).

    Row ``pos - lo`` of the piece is query ``order[pos]``.  ``index`` (a
    :class:`LeafIndex`; its ``mask`` and ``base`` unused: the masks are in
    the leaf lists) maps a position to its point, which is what the column
    indices give.  The references are counted ``block`` positions at a time
    (see :func:`search_block`).

    A row's columns are put in order by sorting them, or, when the row holds
    at least ``n_ref / scan_ratio`` of them (``scan_ratio = 0``: never), by
    a pass over counters of all ``n_ref`` points: at small ``n`` a forest
    kernel's rows hold a large share of the points and the pass is cheaper
    than the sort (:data:`COLEAF_SCAN_RATIO`).  Both give the same row.
    """
    qleaves, qmask, qorder = queries.leaves, queries.mask, queries.order
    node_offset, ptr, members = index.node_offset, index.ptr, index.members
    ref_index, n_ref = index.ref_index, index.n_ref
    width = min(block, n_ref)
    counts = np.zeros(width, dtype=np.int32)
    touched = np.empty(width, dtype=np.int32)
    keys = np.empty(n_ref, dtype=np.int64)
    cur = np.empty(qleaves.shape[1], dtype=np.int64)
    end = np.empty(qleaves.shape[1], dtype=np.int64)
    indptr = np.zeros(hi - lo + 1, dtype=np.int64)
    cap = max(16, 8 * (hi - lo))
    indices = np.empty(cap, dtype=np.int32)
    data = np.empty(cap, dtype=np.int32)
    by_point = np.zeros(0, dtype=np.int32)  # allocated at the first scanned row
    nnz = 0
    for pos in range(lo, hi):
        i = qorder[pos]
        open_leaves(qleaves, qmask, i, node_offset, ptr, cur, end)
        n_touched = 0
        for r0 in range(0, n_ref, block):
            n_block = gather_block(members, cur, end, r0, r0 + block, n_ref, counts, touched)
            # (point, count) packed in one key (counts < 2^31), sorted by point.
            for q in range(n_block):
                j = touched[q]
                keys[n_touched] = (np.int64(ref_index[r0 + j]) << 31) | counts[j]
                counts[j] = 0
                n_touched += 1
        if nnz + n_touched > cap:
            cap = max(2 * cap, nnz + n_touched)
            new_indices = np.empty(cap, dtype=np.int32)
            new_data = np.empty(cap, dtype=np.int32)
            new_indices[:nnz] = indices[:nnz]
            new_data[:nnz] = data[:nnz]
            indices = new_indices
            data = new_data
        if n_touched * scan_ratio >= n_ref > 0 and scan_ratio > 0:
            if by_point.shape[0] == 0:
                by_point = np.zeros(n_ref, dtype=np.int32)
            for q in range(n_touched):
                by_point[keys[q] >> 31] = keys[q] & 0x7FFFFFFF
            for j in range(n_ref):
                if by_point[j] != 0:
                    indices[nnz] = j
                    data[nnz] = by_point[j]
                    by_point[j] = 0
                    nnz += 1
        else:
            row = np.sort(keys[:n_touched])
            for q in range(n_touched):
                indices[nnz] = row[q] >> 31
                data[nnz] = row[q] & 0x7FFFFFFF
                nnz += 1
        indptr[pos - lo + 1] = nnz
    return indptr, indices[:nnz].copy(), data[:nnz].copy()


@njit(nogil=True, cache=True)
def scatter_rows(indptr, indices, data, rows, out_indptr, out_indices, out_data):
    """Copy CSR piece row ``p`` to row ``rows[p]`` of the output (its slot in ``out_indptr``)."""
    for p in range(rows.shape[0]):
        start = out_indptr[rows[p]]
        for q in range(indptr[p], indptr[p + 1]):
            out_indices[start + q - indptr[p]] = indices[q]
            out_data[start + q - indptr[p]] = data[q]


@njit(nogil=True, cache=True)
def pair_trees(row_mask, col_mask, rows, cols):
    """``T`` for listed pairs: trees where both points are counted."""
    n_trees = row_mask.shape[1]
    out = np.empty(rows.shape[0], dtype=np.int32)
    for q in range(rows.shape[0]):
        i = rows[q]
        j = cols[q]
        c = 0
        for t in range(n_trees):
            if row_mask[i, t] != 0 and col_mask[j, t] != 0:
                c += 1
        out[q] = c
    return out


@njit(nogil=True, cache=True, inline="always")
def _worse(sim, cand, a, b):
    """Whether candidate ``a`` ranks below ``b``: lower proximity, or equal and higher index."""
    return sim[a] < sim[b] or (sim[a] == sim[b] and cand[a] > cand[b])


@njit(nogil=True, cache=True)
def _sift_down(heap, size, sim, cand):
    """Restore the heap (worst kept candidate at the root) below position 0."""
    c = 0
    while True:
        child = 2 * c + 1
        if child >= size:
            return
        if child + 1 < size and _worse(sim, cand, heap[child + 1], heap[child]):
            child += 1
        if not _worse(sim, cand, heap[child], heap[c]):
            return
        heap[c], heap[child] = heap[child], heap[c]
        c = child


@njit(nogil=True, cache=True)
def _top_k(cand, sim, n_cand, k):
    """Positions of the ``k`` best of ``cand[:n_cand]`` by (-sim, index), in order.

    A bounded heap whose root is the worst candidate kept: one comparison per
    candidate that does not displace it, ``O(k log k)`` to order the kept
    ones.  A heap rather than ``np.partition`` and stable argsorts (same
    order): their numba implementations would be most of ``kneighbors``'
    compile time.  It is quickest for the usual ``k`` of tens; figures in
    ``docs/forests.md``.
    """
    m = min(k, n_cand)
    heap = np.empty(m, dtype=np.int64)
    size = 0
    for q in range(n_cand):
        if size < m:
            heap[size] = q
            c = size
            size += 1
            while c > 0:
                parent = (c - 1) // 2
                if not _worse(sim, cand, heap[c], heap[parent]):
                    break
                heap[c], heap[parent] = heap[parent], heap[c]
                c = parent
            continue
        # Full: most candidates lose to the worst kept one on proximity alone.
        # This is _worse(sim, cand, q, heap[0]) written out on loaded values,
        # the one test almost every candidate takes (docs/forests.md).
        root = heap[0]
        s_q = sim[q]
        if s_q < sim[root] or (s_q == sim[root] and cand[q] > cand[root]):
            continue
        heap[0] = q
        _sift_down(heap, size, sim, cand)
    out = np.empty(m, dtype=np.int64)
    for r in range(m - 1, -1, -1):  # pop the worst to the back
        out[r] = heap[0]
        size -= 1
        heap[0] = heap[size]
        _sift_down(heap, size, sim, cand)
    return out


@njit(nogil=True, cache=True, inline="always")
def pad_lowest(ind_out, sim_out, row, q, stop, taken, first, end, skip):
    """Fill ``ind_out[row, q:stop]`` with the lowest indices in ``[first, end)``
    that are neither in sorted ``taken`` nor ``skip``, at proximity 0 (the
    padding of a query with too few co-leaf points); returns the next ``q``."""
    j = first
    p = 0
    n_taken = taken.shape[0]
    while q < stop and j < end:
        while p < n_taken and taken[p] < j:
            p += 1
        if (p < n_taken and taken[p] == j) or j == skip:
            j += 1
            continue
        ind_out[row, q] = j
        sim_out[row, q] = 0.0
        q += 1
        j += 1
    return q


@njit(nogil=True, cache=True)
def forest_kneighbors(queries, index, lo, hi, k, exclude_self, block, ind_out, sim_out):
    """Top-``k`` forest neighbours by proximity ``L / T`` of queries ``queries.order[lo:hi]``.

    ``queries`` (a :class:`Queries`) and ``index`` (a :class:`LeafIndex`)
    are the query and reference points; ``T`` counts the trees set in both
    masks.  Ties are broken by the lower reference index.  When a query has
    fewer than ``k`` co-leaf points, the rest are the lowest-index other
    points, with proximity 0.  ``exclude_self`` drops reference ``i`` for
    query ``i``.  Writes row ``pos - lo`` of ``ind_out`` and ``sim_out`` for
    query ``order[pos]``.  The references are counted ``block`` positions at
    a time (:func:`search_block`); the answer does not depend on ``block``.

    The references may be one slice of a larger set (a distributed search
    takes each partition in turn): reference ``j`` is then point
    ``index.base + j`` and query ``i`` is point ``queries.base + i``; indices
    out are those global numbers.  A partition with fewer than ``k`` other
    points pads with index ``INT64_MAX`` at proximity ``-1``, which any real
    candidate beats when the partitions' answers are merged.
    """
    qleaves, qmask, qorder, q_base = queries
    node_offset, ptr, members, ref_index, ref_mask, n_ref, ref_base = index
    n_trees = qleaves.shape[1]
    use_mask = qmask.shape[0] > 0
    width = min(block, n_ref)
    counts = np.zeros(width, dtype=np.int32)
    touched = np.empty(width, dtype=np.int32)
    cand = np.empty(n_ref, dtype=np.int64)
    sim = np.empty(n_ref)
    cur = np.empty(n_trees, dtype=np.int64)
    end = np.empty(n_trees, dtype=np.int64)
    for pos in range(lo, hi):
        i = qorder[pos]
        open_leaves(qleaves, qmask, i, node_offset, ptr, cur, end)
        n_cand = 0
        for r0 in range(0, n_ref, block):
            n_touched = gather_block(members, cur, end, r0, r0 + block, n_ref, counts, touched)
            for q in range(n_touched):
                jr = touched[q]
                c = counts[jr]
                counts[jr] = 0
                j_local = ref_index[r0 + jr]
                j = ref_base + j_local
                if exclude_self and j == q_base + i:
                    continue
                denom = n_trees
                if use_mask:
                    denom = 0
                    for t in range(n_trees):
                        if qmask[i, t] != 0 and ref_mask[j_local, t] != 0:
                            denom += 1
                cand[n_cand] = j
                sim[n_cand] = c / denom
                n_cand += 1
        best = _top_k(cand, sim, n_cand, k)
        row = pos - lo
        n_take = best.shape[0]
        for q in range(n_take):
            ind_out[row, q] = cand[best[q]]
            sim_out[row, q] = sim[best[q]]
        if n_take < k:
            # Pad with the lowest-index points not yet taken (proximity 0).
            skip = q_base + i if exclude_self else -1
            taken = np.sort(cand[:n_cand])
            q = pad_lowest(
                ind_out, sim_out, row, n_take, k, taken, ref_base, ref_base + n_ref, skip
            )
            while q < k:
                ind_out[row, q] = _NO_POINT
                sim_out[row, q] = -1.0
                q += 1


# --------------------------------------------------------------------------- counts
@dataclass
class ProximityCounts:
    """Co-leaf counts ``L`` and tree counts ``T`` of a forest proximity kernel.

    Attributes
    ----------
    coleaf : scipy.sparse.csr_array of int32, shape (n_rows, n_cols)
        ``L(i, j)``: trees in which row point ``i`` and column point ``j`` share a leaf
        (among the trees counted for the pair).
    n_trees : int
        Trees in the forest.
    row_mask, col_mask : ndarray of uint8, shape (n_rows, n_trees) / (n_cols, n_trees), or None
        Which trees count for each point (``method="inbag"`` or ``"oob"``); ``T(i, j)``
        is the number of trees set in both.  ``None`` means every tree counts
        (``method="all"``) and ``T = n_trees``.

    Counts of forests grown on the same data add exactly with ``+``.

    References
    ----------
    .. [1] L. Breiman, "Random Forests", Machine Learning 45, 2001 (the forest
       proximity: the fraction of trees in which two points share a leaf).
    .. [2] M. Madhyastha, P. Li, J. Browne, V. Strnadova-Neeley, C. E. Priebe,
       R. Burns and J. T. Vogelstein, "Geodesic Learning via Unsupervised
       Decision Forests" (URerF: the proximity over the trees whose sample held
       both points, ``method="inbag"``).
    """

    coleaf: sp.csr_array
    n_trees: int
    row_mask: np.ndarray | None = None
    col_mask: np.ndarray | None = None

    def trees_per_pair(self) -> np.ndarray:
        """``T`` at the stored entries of ``coleaf`` (in CSR order)."""
        L = self.coleaf
        if self.row_mask is None:
            return np.full(L.nnz, self.n_trees, dtype=np.int32)
        rows = np.repeat(np.arange(L.shape[0], dtype=np.int64), np.diff(L.indptr))
        return pair_trees(self.row_mask, self.col_mask, rows, L.indices.astype(np.int64))

    def proximity(self) -> sp.csr_matrix:
        """``S = L / T``, float64 (zero where ``L`` is zero), in the library's sparse type.

        A ``csr_matrix`` with 32-bit indices when they fit (``geoforest/_sparse.py``).
        """
        L = self.coleaf
        T = self.trees_per_pair()
        with np.errstate(divide="ignore", invalid="ignore"):
            data = np.where(T > 0, L.data / np.maximum(T, 1), 0.0)
        S = sp.csr_matrix((data, L.indices.copy(), L.indptr.copy()), shape=L.shape)
        S.eliminate_zeros()
        return as_output_csr(S)

    def __add__(self, other: ProximityCounts) -> ProximityCounts:
        if not isinstance(other, ProximityCounts):
            return NotImplemented
        if self.coleaf.shape != other.coleaf.shape:
            raise ValueError(
                f"cannot add counts of shapes {self.coleaf.shape} and {other.coleaf.shape}"
            )
        if (self.row_mask is None) != (other.row_mask is None):
            raise ValueError("cannot add counts of method='all' to counts of 'inbag'/'oob'")
        coleaf = (self.coleaf + other.coleaf).tocsr()
        coleaf.sort_indices()
        if self.row_mask is None:
            return ProximityCounts(coleaf, self.n_trees + other.n_trees)
        return ProximityCounts(
            coleaf,
            self.n_trees + other.n_trees,
            np.hstack([self.row_mask, other.row_mask]),
            np.hstack([self.col_mask, other.col_mask]),
        )
