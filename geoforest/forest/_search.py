"""Forest neighbours: ``kneighbors`` and ``kneighbors_graph`` of every forest.

The search walks each query's leaves and counts co-leaf training points
(``_flat.kneighbors_rows``, blocks of at most 2,048 queries in parallel
threads).  What ranks the co-leaf points is the forest's distance:
``1 - proximity`` for every forest, or, where :meth:`_ranking` gives a
learned metric (``UnsupervisedForest(distance="relevance")``), each query's
highest-proximity candidates (:meth:`_SearchIndex.candidates`) ranked by it
(``_ranking.py``), block by block, so nothing larger than a block of
candidates is held.  Each method first asks its entry point in
``forest/_dask/`` (``dask_kneighbors``, ``dask_kneighbors_graph``) whether
Dask has a part in the call (a Dask array given, or a forest grown from one).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from scipy.sparse.csgraph import connected_components
from sklearn.utils.validation import check_is_fitted

from .._counted_search import counted_rows
from .._progress import progress as _progress
from .._sparse import (
    ZERO_DISTANCE,
    csr_from_rows,
    distance_data,
    neighbors_rows_graph,
    symmetric_knn_graph,
    symmetric_union,
)
from .._validation import check_n_neighbors
from ..proximity import LeafIndex, Queries, leaf_lists, locality_order
from . import _ranking
from ._dask import LOCAL, dask_kneighbors, dask_kneighbors_graph
from ._flat import kneighbors_rows, row_blocks

#: Co-leaf training points met in one ``kneighbors`` call above which it warns
#: (what each costs: ``docs/benchmarks.md``, "Neighbour search when leaves are large").
SEARCH_COST_WARNING = 10**10


def warn_search_cost(ptr: np.ndarray, n_train: int, n_queries: int, n_trees: int) -> None:
    """Warn when the queries will meet more than :data:`SEARCH_COST_WARNING`
    co-leaf training points, which happens when leaves hold many training
    points: a forest grown on ``max_samples`` much smaller than ``n``.

    A query landing in each leaf with the frequency of the training points
    meets ``sum(size**2) / n_train`` of them, summed over the trees.
    """
    sizes = np.diff(ptr).astype(np.float64)
    per_query = float(sizes @ sizes) / max(n_train, 1)
    total = per_query * n_queries
    if total <= SEARCH_COST_WARNING:
        return
    warnings.warn(
        f"kneighbors: each of the {n_queries:,} queries meets about {per_query:,.0f} "
        f"co-leaf training points ({per_query / n_trees:,.0f} per tree), {total:.1e} in all: "
        "expect minutes of CPU or more (docs/benchmarks.md). Leaves hold "
        "that many training points when each tree was grown on far fewer rows than the "
        "forest indexes (max_samples much smaller than n_samples); a larger max_samples, "
        "e.g. a fraction such as 0.1, makes the search cheaper.",
        UserWarning,
        stacklevel=4,
    )


#: Most (query, listed training point) pairs :func:`_lowest_twins` compares at a time.
TWIN_PAIRS = 1 << 16


class _SearchIndex(NamedTuple):
    """Everything a block of queries needs to find its forest neighbours: the
    queries (their leaves, tree masks and visiting order), the training
    points' leaf lists, and whether the queries are the training points.

    ``Xq`` and ``Xref``: new queries' float32 rows and the training rows, to
    list a training row equal to a query first (:func:`_twins_first`);
    ``None`` for the training points, who exclude themselves.
    """

    queries: Queries
    index: LeafIndex
    is_train: bool
    Xq: np.ndarray | None = None
    Xref: np.ndarray | None = None

    def top(self, lo: int, hi: int, k: int):
        """``(ind, sim)``: the ``k`` highest-proximity training points of queries
        ``order[lo:hi]`` (ties to the lower index, short rows padded)."""
        return kneighbors_rows(self.queries, self.index, lo, hi, k, self.is_train)

    def candidates(self, lo: int, hi: int, n_cand: int, width: int):
        """``(cand, sim, n_out)``: each query's ``n_cand`` highest-proximity
        training points and those tied with the last of them, ``n_out[i]`` in
        all (at most ``width``), best first."""
        if self.queries.mask.shape[0] == 0:
            return counted_rows(self.queries, self.index, lo, hi, n_cand, width, self.is_train)
        # Tree masks (method="inbag"/"oob"): proximities are not counts of one T.
        cand, sim = self.top(lo, hi, width)
        tied = np.hstack(
            [sim[:, n_cand:] == sim[:, n_cand - 1 : n_cand], np.zeros((hi - lo, 1), dtype=bool)]
        )
        return cand, sim, n_cand + tied.argmin(axis=1)


def _search_block(index: _SearchIndex, lo: int, hi: int, k: int, ranker):
    """One block of queries (``qorder[lo:hi]``): their ``k`` highest-proximity
    points, or the candidates ``ranker`` asks for, ranked; ``(ind, dist)``.

    New queries equal to a training row then list it first
    (:func:`_twins_first`), checked only where it may not be: where a
    training point shares every leaf with the query (``sim`` 1, as its equal
    does) and either the first neighbour is at distance 0 (not necessarily
    the equal row) or the candidates were cut among points sharing every
    leaf (``n_request`` of them, the equal row possibly beyond the cut).
    """
    if ranker is None:
        ind, sim = index.top(lo, hi, k)
        dist = 1.0 - sim
        maybe = dist[:, 0] == 0.0
    else:
        cand, sim, n_out = index.candidates(lo, hi, ranker.n_cand, ranker.n_request)
        ind, dist = ranker.rank(index.queries.order[lo:hi], cand, sim, n_out)
        last = sim[np.arange(hi - lo), n_out - 1]
        cut = (n_out == ranker.n_request) & (last == 1.0) & (ranker.n_request < index.index.n_ref)
        maybe = (sim[:, 0] == 1.0) & ((dist[:, 0] == 0.0) | cut)
    if index.Xq is not None:  # new points, not the training points themselves
        _twins_first(index, lo, hi, maybe, ind, dist)
    return ind, dist


def _twins_first(index: _SearchIndex, lo: int, hi: int, maybe, ind, dist) -> None:
    """Put each new query's *twin*, the lowest-index training row equal to it
    (every float32 value), first in its row of ``ind`` (distance 0), in place.

    Why: a training row given as a query must find itself first, as
    scikit-learn's neighbours do and ``kneighbors(X_train, k + 1)`` promises,
    but two tie-breaks could keep it from that.  The candidates of a query
    are cut among equal proximities by index (``_ranking.TIE_LIMIT``; and
    the ``k`` best by proximity, ties to the lower index), so where more
    points share every leaf with the query than are kept — all of them in a
    forest of one-leaf trees — the equal row could be cut; and a learned
    metric that gives some feature no weight puts rows differing only there
    at distance 0 too, the lower index first.  The twin shares every leaf
    with the query, so it is at proximity 1 and distance 0: first, with
    every distance still ascending.  Of duplicated rows the lowest index is
    the twin: identical queries get identical answers, whichever of the
    rows the caller meant.  Only rows ``maybe`` flags are looked at
    (:func:`_search_block`); a row whose first neighbour is already an equal
    row keeps it (the lowest-index one, by the same tie-breaks).
    """
    Xq, Xref = index.Xq, index.Xref
    rows = np.flatnonzero(maybe)
    if rows.size == 0:
        return
    queries = index.queries.order[lo:hi][rows]
    first = ind[rows, 0]
    done = (dist[rows, 0] == 0.0) & (Xref[first] == Xq[queries]).all(axis=1)
    rows, queries = rows[~done], queries[~done]
    if rows.size == 0:
        return
    twins = _lowest_twins(index, queries)
    for row, twin in zip(rows[twins >= 0], twins[twins >= 0], strict=True):
        at = np.flatnonzero(ind[row] == twin)
        p = at[0] if at.size else ind.shape[1] - 1  # absent: the last one goes
        ind[row, 1 : p + 1] = ind[row, :p].copy()
        dist[row, 1 : p + 1] = dist[row, :p].copy()
        ind[row, 0], dist[row, 0] = twin, 0.0


def _lowest_twins(index: _SearchIndex, queries: np.ndarray) -> np.ndarray:
    """For each of the ``queries`` (rows of ``index.Xq``), the lowest index of a
    training row equal to it, ``-1`` if none.

    An equal row falls in the query's leaf in every tree, so each query
    compares itself with the training points listed in its smallest leaf
    only, a few queries at a time (at most :data:`TWIN_PAIRS` pairs, or one
    query's whole list).
    """
    Xq, Xref = index.Xq, index.Xref
    node_offset, ptr, members, ref_index = index.index[:4]
    g = index.queries.leaves[queries] + node_offset[:-1].astype(np.int64)
    sizes = ptr[g + 1] - ptr[g]
    pick = np.arange(queries.shape[0]), sizes.argmin(axis=1)
    start, size = ptr[g[pick]], sizes[pick]
    out = np.full(queries.shape[0], -1, dtype=np.int64)
    ends = np.cumsum(size)
    lo = 0
    while lo < queries.shape[0]:
        base = ends[lo] - size[lo]
        hi = max(lo + 1, int(np.searchsorted(ends, base + TWIN_PAIRS, side="right")))
        n = size[lo:hi]
        owner = np.repeat(np.arange(lo, hi), n)
        pos = np.arange(ends[hi - 1] - base) - np.repeat(ends[lo:hi] - n - base - start[lo:hi], n)
        listed = ref_index[members[pos]].astype(np.int64)
        equal = (Xref[listed] == Xq[queries[owner]]).all(axis=1)
        found = np.full(hi - lo, np.iinfo(np.int64).max)
        np.minimum.at(found, owner[equal] - lo, listed[equal])
        out[lo:hi] = np.where(found < np.iinfo(np.int64).max, found, -1)
        lo = hi
    return out


class NeighborSearchMixin:
    """``kneighbors``, ``kneighbors_graph`` and the training graph of a forest."""

    def _ranking(self) -> _ranking.LearnedMetric | None:
        """The learned metric ranking the proximity candidates, or ``None``:
        rank by ``1 - proximity``."""
        return None

    def kneighbors(
        self, X=None, n_neighbors: int = 10, return_distance: bool = True, method: str = "all"
    ):
        """Nearest neighbours in the forest's distance.

        ``1 - proximity``; for an ``UnsupervisedForest`` whose ``distance_``
        is ``"relevance"`` (the default in memory), the query's
        highest-proximity points ranked by the metric the forest learned (see
        its docstring).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features) or None
            Query points.  ``None``: the training points, each excluding itself.
        n_neighbors : int, default=10
        return_distance : bool, default=True
        method : {"all", "inbag", "oob", "rfgap"}
            Which trees count (``"inbag"``/``"oob"`` only with ``X=None``);
            ``"rfgap"`` (supervised forests): the largest RF-GAP proximities
            (:meth:`proximity`), distance ``1 - p``.  RF-GAP rows are made so
            that their weighted training labels reproduce the forest's
            predictions; as a neighbour ranking they are noisier than the
            shared-leaf count of ``"all"``, because only in-bag rows count
            and each weighs its bootstrap multiplicity.  For neighbours of a
            supervised forest prefer ``"all"``; RF-GAP neighbours rank
            better from larger leaves (``min_samples_leaf=10``), at a cost in
            accuracy (``docs/results/supervised.md``).

        Returns
        -------
        dist : ndarray of float64, shape (n_queries, n_neighbors)
            Ascending; only if ``return_distance``.  ``1 - proximity``, or the
            learned metric's distance.
        ind : ndarray of int64, shape (n_queries, n_neighbors)
            Indices into the training data.  By proximity, ties go to the lower
            index and a query with fewer than ``n_neighbors`` co-leaf points is
            padded with the lowest-index remaining points at distance 1.  By
            relevance, the neighbours are the best of the query's ``6
            n_neighbors`` highest-proximity points (and those tied with the
            last of them; a training point counts itself among them, so
            ``kneighbors(X_train, k + 1)`` is each point and its
            ``kneighbors(None, k)``), equal distances in proximity order, and
            points sharing no leaf with the query come last.  Either way a
            query equal to a training row (every value, as the forest's
            float32) lists that row first, at distance 0, whatever the ties
            among the points sharing every leaf with it; of duplicated
            training rows, the lowest index (equal queries, equal answers);
            a forest grown from a Dask array does not yet look for the equal
            row and keeps the ties by index.  With a
            ``dask.array.Array`` ``X``, ``dist`` and ``ind`` are Dask arrays with
            ``X``'s row chunks, computed block by block on the workers
            (``docs/scale.md``).  A forest grown from a Dask array answers
            ``X=None`` (and a Dask ``X``) with Dask arrays computed next to its
            training chunks, an in-memory ``X`` with ndarrays, ranked as the
            same forest fitted in memory (by its learned metric or by
            proximity); only ``method="all"`` there.
        """
        check_is_fitted(self)
        return self._kneighbors(X, n_neighbors, return_distance, method, self._ranking())

    def _kneighbors(self, X, n_neighbors, return_distance, method, metric, prepared=False):
        """``kneighbors`` ranked by ``metric`` (``None``: proximity); ``prepared``:
        ``X`` is already the forest's float32 (rows of ``_X_fit``), not user input."""
        if method == "rfgap":  # supervised forests: neighbours by RF-GAP proximity
            return self._rfgap_neighbors(X, n_neighbors, return_distance)
        ranking = None if metric is None else _ranking.PartitionRanking(metric)
        found = dask_kneighbors(self, X, n_neighbors, return_distance, method, ranking, prepared)
        if found is not LOCAL:
            return found
        n_train = self._X_fit.shape[0]
        if X is None:
            qleaves, is_train = self._leaves_of(None)
            Xq = self._X_fit
        else:
            Xq = X if prepared else self._validate_X(X, reset=False)
            qleaves, is_train = self._apply(Xq), False
        check_n_neighbors(n_neighbors, n_train, is_train)
        ranker = None
        if metric is not None:
            ranker = metric.ranker(Xq, self._X_fit, n_neighbors, is_train)
        mask = self._masks(method, is_train)
        empty = np.zeros((0, 0), dtype=np.uint8)
        train_leaves, _ = self._leaves_of(None)
        # Reference points numbered, and queries visited, in a leaf order: forest
        # neighbours then sit close together in memory (locality_order).
        ref_order = locality_order(train_leaves)
        qorder = ref_order if is_train else locality_order(qleaves)
        qmask = empty if mask is None else mask
        node_offset = self._flat.node_offset
        ptr, members = leaf_lists(train_leaves, node_offset, qmask, ref_order)
        n_q = qleaves.shape[0]
        warn_search_cost(ptr, n_train, n_q, len(self.trees_))
        ind = np.empty((n_q, n_neighbors), dtype=np.int64)
        dist = np.empty((n_q, n_neighbors), dtype=np.float64)
        chunks = row_blocks(n_q)
        parallel = Parallel(
            n_jobs=self._n_jobs_for(len(chunks)), prefer="threads", return_as="generator"
        )
        # The training points' masks are the queries' (masks only with X=None).
        index = LeafIndex(node_offset, ptr, members, ref_order, qmask, n_train)
        rows = (None, None) if is_train else (Xq, self._X_fit)
        search = _SearchIndex(Queries(qleaves, qmask, qorder), index, is_train, *rows)
        blocks = parallel(
            delayed(_search_block)(search, lo, hi, n_neighbors, ranker) for lo, hi in chunks
        )
        for (lo, hi), (b_ind, b_dist) in _progress(
            zip(chunks, blocks, strict=True), len(chunks), self.verbose, "neighbours"
        ):
            ind[qorder[lo:hi]] = b_ind
            dist[qorder[lo:hi]] = b_dist
        if return_distance:
            return dist, ind
        return ind

    def _proximity_kneighbors(self, X=None, n_neighbors: int = 10, method: str = "all"):
        """``(1 - proximity, ind)`` whatever :meth:`kneighbors` ranks by (rpfCluster)."""
        return self._kneighbors(X, n_neighbors, True, method, None)

    def kneighbors_graph(
        self, X=None, n_neighbors: int = 10, mode: str = "connectivity", method: str = "all"
    ):
        """Sparse graph of forest neighbours, ready for precomputed-metric estimators.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features) or None
            ``None``: the training points, each without itself.
        n_neighbors : int, default=10
        mode : {"connectivity", "distance"}
            Ones, or the distances :meth:`kneighbors` returns (``1 - proximity``,
            in [0, 1]; for an ``UnsupervisedForest`` ranking by its learned
            metric, that metric's distances, unbounded); a distance 0 (points
            that share every leaf, or coincide) is stored as the smallest
            positive float64, because SciPy's graph routines and HDBSCAN drop
            stored zeros (``geoforest/_sparse.py``).
        method : {"all", "inbag", "oob"}

        Returns
        -------
        graph : scipy.sparse.csr_matrix of shape (n_queries, n_samples_fit)
            32-bit indices when they fit (the library's sparse policy,
            ``geoforest/_sparse.py``).  With ``X=None`` the graph is the union of
            every point's ``n_neighbors`` nearest and its transpose: symmetric, as
            scikit-learn's HDBSCAN and umap-learn require of a precomputed sparse
            distance matrix, with at least ``n_neighbors`` entries per row sorted by
            distance (the forest distance is symmetric, so the union changes no
            value).  With ``X`` given, row ``i`` holds exactly the ``n_neighbors``
            training points nearest to ``X[i]``, as in scikit-learn.  When the
            training graph falls apart into connected components (well-separated
            clusters), one edge at its true forest distance (usually 1: no shared
            leaf) joins each component to the next, because HDBSCAN and Isomap
            refuse a disconnected sparse graph; no distance is invented.  A
            ``dask.array.Array`` ``X`` gives a Dask array of CSR row blocks.
        """
        if mode not in ("connectivity", "distance"):
            raise ValueError(f"mode must be 'connectivity' or 'distance', got {mode!r}")
        if (graph := dask_kneighbors_graph(self, X, n_neighbors, mode, method)) is not LOCAL:
            return graph
        dist, ind = self.kneighbors(X, n_neighbors, return_distance=True, method=method)
        if X is None:
            return self._training_graph(dist, ind, mode, method)
        return neighbors_rows_graph(dist, ind, mode, self._X_fit.shape[0])

    def _training_graph(self, dist, ind, mode: str, method: str) -> sp.csr_matrix:
        """The symmetric, connected graph of the training points' neighbours (see
        :meth:`kneighbors_graph`): the union of the rows and their transpose, and
        one edge at its true forest distance between consecutive connected
        components, so that consumers needing one component (HDBSCAN, Isomap)
        take it."""
        n = ind.shape[0]
        graph = symmetric_knn_graph(ind, dist)
        # Stored zeros become ZERO_DISTANCE (positive), so every entry is an edge.
        np.maximum(graph.data, ZERO_DISTANCE, out=graph.data)
        n_comp, comp = connected_components(graph, directed=False)
        if n_comp > 1:
            # each component's first point, chained in order of first appearance
            reps = np.unique(comp, return_index=True)[1]
            reps = reps[np.argsort(comp[reps])]
            a, b = reps[:-1], reps[1:]
            bridge = self._training_pair_distances(a, b, method)
            coo = graph.tocoo()
            rows = np.concatenate([coo.row, a])
            cols = np.concatenate([coo.col, b])
            rows, cols, data = symmetric_union(rows, cols, np.concatenate([coo.data, bridge]), n)
            del coo
            graph = csr_from_rows(rows, cols, distance_data(data), (n, n))
        if mode == "connectivity":
            graph.data[:] = 1.0
        return graph

    def _training_pair_distances(self, a: np.ndarray, b: np.ndarray, method: str) -> np.ndarray:
        """Forest distances ``1 - proximity`` between training points ``a[i]`` and ``b[i]``."""
        leaves, _ = self._leaves_of(None)
        same = leaves[a] == leaves[b]
        mask = self._masks(method, True)
        if mask is None:
            return 1.0 - same.mean(axis=1)
        both = mask[a].astype(bool) & mask[b].astype(bool)
        trees = both.sum(axis=1)
        shared = (same & both).sum(axis=1)
        return np.where(trees > 0, 1.0 - shared / np.maximum(trees, 1), 1.0)
