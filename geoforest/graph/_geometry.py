"""Geometries: where a clusterer's neighbour graph comes from.

A clustering method is a rule over a neighbour graph; which points are
neighbours, and how far apart, is the *geometry*, the user's choice rather
than the method's (DESIGN 2.12).  Every clusterer and embedding of geoforest
takes the same three parameters for it, read here and nowhere else:

``metric`` : {"euclidean", "forest", "precomputed"}
    ``"euclidean"``: nearest neighbours in the features.  ``"forest"``: the
    neighbours of a fitted unsupervised forest, ranked by its learned metric
    (:meth:`geoforest.UnsupervisedForest.kneighbors`), whose distances are
    the graph's edge lengths.  ``"precomputed"``: ``fit(G)`` takes a square
    sparse distance graph (stored entries are edges, as scikit-learn's
    ``KNeighborsTransformer`` and :class:`~geoforest.ForestNeighborsTransformer`
    give) or a dense distance matrix; new points then come as the rows of
    distances from them to the training points.
``forest`` : forest, :class:`~geoforest.ForestNeighborsTransformer` or None
    The forest of ``metric="forest"``.  ``None``: ``UnsupervisedForest()``
    seeded with the clusterer's ``random_state`` and ``n_jobs``.  An unfitted
    forest (or transformer) is cloned and fitted on ``X``.  A fitted one is
    used as it is, and ``X`` must then be its training data (a forest grown
    on other points has no neighbours among these).
``n_neighbors`` : int
    Neighbours per point.

:func:`make_geometry` turns them into a :class:`Geometry`, whose
``neighbors(k)`` gives every training point's ``k`` nearest others and
``query(X, k)`` new points' nearest training points, both ascending, and
whose ``bridges`` join a disconnected graph's components by a minimum
spanning forest *in this metric*, so that a connected graph never mixes the
units of two geometries.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.validation import check_is_fitted

from ._connect import bridge_components
from ._knn import check_query_graph, check_sparse_graph, feature_scale, knn

__all__ = ["METRICS", "Geometry", "check_forest_metric", "check_n_neighbors", "make_geometry"]

#: The geometries every clusterer accepts as ``metric``.
METRICS = ("euclidean", "forest", "precomputed")


def check_forest_metric(estimator) -> None:
    """Refuse a ``forest`` given to an estimator whose ``metric`` does not read it."""
    if estimator.forest is not None and estimator.metric != "forest":
        raise ValueError(
            f"{type(estimator).__name__}: forest is the geometry of metric='forest'; got a "
            f"forest with metric={estimator.metric!r}: pass metric='forest', or no forest"
        )


def check_n_neighbors(n_neighbors: int, n_samples: int) -> int:
    """``n_neighbors`` as an int, refused unless a point has that many others."""
    if n_neighbors >= n_samples:
        raise ValueError(f"n_neighbors={n_neighbors} must be smaller than n_samples={n_samples}")
    return int(n_neighbors)


class Geometry(ABC):
    """Nearest neighbours of training points, and of new points, under one metric.

    Subclasses set ``metric`` and implement :meth:`fit`, :meth:`neighbors` and
    :meth:`query`; those that bridge also ``_lists`` (neighbour lists of
    chosen training rows, read by :meth:`bridges`).
    """

    metric = ""
    #: ``False``: the graph is used as given, its components are not bridged.
    can_bridge = True

    @abstractmethod
    def fit(self, X) -> Geometry:
        """Learn the geometry of the training points ``X``."""

    @abstractmethod
    def neighbors(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(dist, ind)`` of shape (n, k): each training point's nearest others, ascending."""

    @abstractmethod
    def query(self, X, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(dist, ind)`` of shape (m, k): the training points nearest to new points."""

    def bridges(self, G, neighbors: tuple[np.ndarray, np.ndarray]):
        """Edges of a minimum spanning forest in this metric joining the components of ``G``.

        Borůvka rounds: each component adds its shortest edge to a point outside
        it, read from its members' neighbour lists (``neighbors``, ascending), which
        is exact when the shortest outside candidate found is no longer than the
        last listed distance of every member whose list stays inside; members that
        fail this get lists twice as long, up to every point.  Equal lengths go to
        the smaller end points, so the forest is unique.

        Returns
        -------
        pairs : ndarray of shape (c - 1, 2)
            Bridge end points ``(i, j)``, ``i < j``, for ``c`` components.
        lengths : ndarray of shape (c - 1,)
        """
        n_comp, comp = connected_components(G, directed=False)
        if n_comp == 1 or not self.can_bridge:
            return np.zeros((0, 2), dtype=np.intp), np.zeros(0)
        dist, ind = (np.asarray(a) for a in neighbors)
        n = comp.shape[0]
        lists = {}  # row -> (dist, ind) extended beyond the graph's own lists
        pairs, lengths = [], []
        while n_comp > 1:
            best = np.full(n_comp, np.inf)
            best_edge = np.full((n_comp, 2), -1, dtype=np.int64)
            pending = np.arange(n)
            k = dist.shape[1]
            while pending.size:  # the members whose lists may miss their shortest way out
                d, i = self._rows_lists(pending, dist, ind, lists)
                outside = comp[i] != comp[pending][:, None]
                has = outside.any(axis=1)
                first = np.argmax(outside, axis=1)
                cand_d = np.where(has, d[np.arange(pending.size), first], np.inf)
                cand_j = i[np.arange(pending.size), first]
                _take_best(best, best_edge, comp[pending], cand_d, pending, cand_j)
                # A member whose whole list stays inside is resolved when its last
                # listed distance already reaches its component's best candidate.
                finite = np.isfinite(d)
                last = np.where(finite, d, -np.inf).max(axis=1)
                # Complete: every other point listed (a query of a training point
                # lists the point itself, which is no way out).
                others = finite & (i != pending[:, None])
                complete = others.sum(axis=1) >= n - 1
                unresolved = ~has & (last < best[comp[pending]]) & ~complete
                pending = pending[unresolved]
                if pending.size:
                    k = min(2 * max(k, d.shape[1]), n - 1)
                    new_d, new_i = self._lists(pending, k)
                    for r, row_d, row_i in zip(pending, new_d, new_i, strict=True):
                        lists[int(r)] = (row_d, row_i)
            for c in range(n_comp):
                a, b = best_edge[c]
                pairs.append((min(a, b), max(a, b)))
                lengths.append(best[c])
            pairs_arr = np.asarray(pairs, dtype=np.intp)
            edges = sp.coo_matrix((np.ones(len(pairs)), pairs_arr.T), shape=(n, n))
            n_comp, comp = connected_components(G + edges + edges.T, directed=False)
        # Two components may pick the same edge; keep each once, in order.
        pairs_arr = np.asarray(pairs, dtype=np.intp)
        _, first = np.unique(pairs_arr, axis=0, return_index=True)
        first = np.sort(first)
        return pairs_arr[first], np.asarray(lengths, dtype=np.float64)[first]

    @staticmethod
    def _rows_lists(rows, dist, ind, lists):
        if not lists:
            return dist[rows], ind[rows]
        width = max(dist.shape[1], max(len(v[0]) for v in lists.values()))
        d = np.full((rows.size, width), np.inf)
        i = np.repeat(rows[:, None], width, axis=1)  # padding points at the row itself
        for r, row in enumerate(rows):
            rd, ri = lists.get(int(row), (dist[row], ind[row]))
            d[r, : len(rd)], i[r, : len(ri)] = rd, ri
        return d, i


def _take_best(best, best_edge, comp, cand_d, rows, cand_j) -> None:
    """Per component, the shortest candidate edge (ties: smaller end points)."""
    order = np.lexsort((np.maximum(rows, cand_j), np.minimum(rows, cand_j), cand_d))
    first = order[np.unique(comp[order], return_index=True)[1]]  # each component's best
    better = cand_d[first] < best[comp[first]]
    first = first[better]
    best[comp[first]] = cand_d[first]
    best_edge[comp[first]] = np.stack([rows[first], cand_j[first]], axis=1)


class EuclideanGeometry(Geometry):
    """Nearest neighbours in the features (exact, scikit-learn's trees)."""

    metric = "euclidean"

    def fit(self, X) -> EuclideanGeometry:
        X = np.asarray(X, dtype=np.float64)
        # Squared distances of extreme values leave float64: divide by a power of two.
        self.scale_ = feature_scale(X)
        self.X_ = X / self.scale_ if self.scale_ != 1.0 else X
        self.n_samples_ = X.shape[0]
        self._nn = NearestNeighbors().fit(self.X_)
        return self

    def neighbors(self, k: int):
        dist, ind = knn(self.X_, k, self._nn)
        return dist * self.scale_, ind

    def query(self, X, k: int):
        X = np.asarray(X, dtype=np.float64) / self.scale_
        dist, ind = self._nn.kneighbors(X, n_neighbors=k)
        return dist * self.scale_, ind

    def _lists(self, rows, k):
        dist, ind = self._nn.kneighbors(self.X_[rows], n_neighbors=min(k + 1, self.n_samples_))
        return dist * self.scale_, ind

    def bridges(self, G, neighbors):
        # The component-pruned K-d tree Borůvka of the exact Euclidean MST.
        dist, ind = neighbors
        pairs, lengths = bridge_components(self.X_, G, (dist / self.scale_, ind))
        return pairs, lengths * self.scale_


class ForestGeometry(Geometry):
    """The neighbours of a fitted forest (its learned metric, or ``1 - proximity``)."""

    metric = "forest"

    def __init__(self, forest, prefitted: bool) -> None:
        self.forest = forest
        self.prefitted = prefitted

    def fit(self, X) -> ForestGeometry:
        X = np.asarray(X) if not sp.issparse(X) else X
        if self.prefitted:
            trained = self.forest._X_fit
            if X.shape != trained.shape or not np.array_equal(
                np.asarray(X, dtype=trained.dtype), trained
            ):
                raise ValueError(
                    "the fitted forest given as the geometry was grown on other points "
                    f"(shape {trained.shape}, X has {X.shape}); pass its training data, or "
                    "an unfitted forest to grow one on X"
                )
            self.forest_ = self.forest
        else:
            self.forest_ = self.forest.fit(X)
        self.n_samples_ = self.forest_._X_fit.shape[0]
        return self

    def neighbors(self, k: int):
        return self.forest_.kneighbors(None, n_neighbors=k)

    def query(self, X, k: int):
        return self.forest_.kneighbors(X, n_neighbors=k)

    def _lists(self, rows, k):
        rows_X = self.forest_._X_fit[rows]
        return self.forest_.kneighbors(rows_X, n_neighbors=min(k + 1, self.n_samples_))


class PrecomputedGeometry(Geometry):
    """A user's graph of distances; its components are the user's to connect."""

    metric = "precomputed"
    can_bridge = False

    def fit(self, X) -> PrecomputedGeometry:
        G = check_sparse_graph(X, "distance graph", distances=True).tocoo(copy=True)
        # A point is not its own neighbour; a stored 0 elsewhere is an edge of
        # length 0 (duplicates), kept.  The copy leaves the caller's graph as it was.
        off = G.row != G.col
        G = sp.csr_matrix((G.data[off], (G.row[off], G.col[off])), shape=G.shape)
        G.sort_indices()
        self.graph_ = G
        self.n_samples_ = G.shape[0]
        return self

    def neighbors(self, k: int):
        return _row_smallest(self.graph_, k, "training point")

    def query(self, X, k: int):
        G = check_query_graph(X, self.n_samples_, "distance graph", self)
        return _row_smallest(G, k, "query")


def sorted_rows(G: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every stored entry of each row, ascending (ties: lower column), padded with ``inf``.

    Returns ``(dist, ind, counts)`` of shapes (m, w), (m, w), (m,): ``w`` the
    most entries of a row, ``counts`` each row's own number (index 0 pads).
    """
    counts = np.diff(G.indptr).astype(np.int64)
    width = max(int(counts.max()), 1) if counts.size else 1
    dist = np.full((G.shape[0], width), np.inf)
    ind = np.zeros((G.shape[0], width), dtype=np.int64)
    rows = np.repeat(np.arange(G.shape[0]), counts)
    order = np.lexsort((G.indices, G.data, rows))  # by row, then distance, then column
    slot = np.arange(rows.size) - np.repeat(G.indptr[:-1], counts)
    dist[rows, slot] = G.data[order]
    ind[rows, slot] = G.indices[order]
    return dist, ind, counts


def _row_smallest(G: sp.csr_matrix, k: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` smallest stored entries of every row, ascending (ties: lower column)."""
    dist, ind, counts = sorted_rows(G)
    if counts.size and counts.min() < k:
        row = int(np.argmin(counts))
        raise ValueError(
            f"the precomputed distance graph stores {counts[row]} neighbours for {what} "
            f"{row}; {k} are needed (n_neighbors): build the graph with at least "
            f"{k} neighbours per point"
        )
    return dist[:, :k], ind[:, :k].astype(np.intp)


def _is_fitted(est) -> bool:
    try:
        check_is_fitted(est)
    except NotFittedError:
        return False
    return True


def make_geometry(metric, forest=None, *, random_state=None, n_jobs=None) -> Geometry:
    """The (unfitted) :class:`Geometry` of a clusterer's ``metric`` and ``forest``.

    Parameters
    ----------
    metric : {"euclidean", "forest", "precomputed"}
    forest : forest, ForestNeighborsTransformer or None
        Used by ``metric="forest"`` only (module docstring).
    random_state, n_jobs
        Passed to the forest where its own are None.

    Returns
    -------
    Geometry
    """
    if metric == "euclidean":
        return EuclideanGeometry()
    if metric == "precomputed":
        return PrecomputedGeometry()
    if metric != "forest":
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    from ..forest import ForestNeighborsTransformer, UnsupervisedForest
    from ..forest._growth import with_seed_and_threads

    if isinstance(forest, ForestNeighborsTransformer):
        if _is_fitted(forest):
            return ForestGeometry(forest.forest_, prefitted=True)
        forest = forest.forest if forest.forest is not None else UnsupervisedForest()
    if forest is None:
        forest = UnsupervisedForest()
    elif not hasattr(forest, "kneighbors") or not hasattr(forest, "apply"):
        raise TypeError(
            "forest must be a geoforest forest or a ForestNeighborsTransformer, got "
            f"{type(forest).__name__}"
        )
    elif _is_fitted(forest):
        return ForestGeometry(forest, prefitted=True)
    return ForestGeometry(with_seed_and_threads(clone(forest), random_state, n_jobs), False)
