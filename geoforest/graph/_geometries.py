"""The three geometries of ``metric``, and :func:`fit_geometry`, the one way to get one.

Every clusterer and embedding of geoforest takes its geometry through the
same parameters, read by :func:`fit_geometry` and nowhere else:

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
    The length of each point's neighbour list (``_geometry.py``).

The geometry reads a forest through its public methods only (``apply``,
``kneighbors``), in the user's coordinates: a forest that centres columns far
from zero keeps that to itself.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.validation import check_is_fitted

from .._validation import check_not_complex, is_dask_array, with_seed_and_threads
from ._connect import bridge_components
from ._distributed import computed, copy_groups_of, rows_of
from ._geometry import Geometry, _row_smallest, check_n_neighbors, sorted_rows
from ._knn import check_query_graph, check_sparse_graph, feature_scale, knn
from ._mst import euclidean_mst
from ._spanning import spanning_tree

__all__ = [
    "METRICS",
    "EuclideanGeometry",
    "ForestGeometry",
    "PrecomputedGeometry",
    "check_forest_metric",
    "check_metric_in",
    "fit_geometry",
    "make_geometry",
    "takes_graph",
]

#: The geometries every clusterer accepts as ``metric``.
METRICS = ("euclidean", "forest", "precomputed")


def takes_graph(metric) -> bool:
    """Whether ``fit(X)`` under ``metric`` reads a square distance graph, not features."""
    return metric == "precomputed"


def check_metric_in(
    metric, allowed: tuple[str, ...], owner: str, what: str, hint: str = ""
) -> None:
    """Refuse a ``metric`` that an option of ``owner`` (``what``) cannot use.

    The families state what an option needs (``allowed``) and leave the
    metric's names to this layer; ``hint`` says what to do instead.
    """
    if metric not in allowed:
        wanted = " or ".join(repr(m) for m in allowed)
        tail = f"; {hint}" if hint else ""
        raise ValueError(f"{owner}: {what} needs metric={wanted}, got metric={metric!r}{tail}")


def check_forest_metric(estimator) -> None:
    """Refuse a ``forest`` given to an estimator whose ``metric`` does not read it."""
    _check_forest_metric(estimator.metric, estimator.forest, type(estimator).__name__)


def _check_forest_metric(metric, forest, owner: str) -> None:
    if metric not in METRICS:
        raise ValueError(f"{owner}: metric must be one of {METRICS}, got {metric!r}")
    if forest is not None and metric != "forest":
        raise ValueError(
            f"{owner}: forest is the geometry of metric='forest'; got a "
            f"forest with metric={metric!r}: pass metric='forest', or no forest"
        )


class EuclideanGeometry(Geometry):
    """Nearest neighbours in the features (exact, scikit-learn's trees)."""

    metric = "euclidean"
    euclidean_coordinates = True

    def fit(self, X) -> EuclideanGeometry:
        X = np.asarray(X, dtype=np.float64)
        # Squared distances of extreme values leave float64: divide by a power of two.
        self.scale_ = feature_scale(X)
        self.X_ = X / self.scale_ if self.scale_ != 1.0 else X
        self.n_samples_ = X.shape[0]
        # scikit-learn's algorithm="auto" reads n_neighbors: the lists' own length.
        k = 5 if self.n_neighbors is None else self.n_neighbors + 1
        self._nn = NearestNeighbors(n_neighbors=k).fit(self.X_)
        return self

    def training_points(self, rows) -> np.ndarray:
        return self.X_[rows] * self.scale_

    def _neighbors(self, k: int):
        dist, ind = knn(self.X_, k, self._nn)
        return dist * self.scale_, ind

    def _query(self, X, k: int):
        X = np.asarray(X, dtype=np.float64) / self.scale_
        dist, ind = self._nn.kneighbors(X, n_neighbors=k)
        return dist * self.scale_, ind

    def bridges(self, G, neighbors):
        # The component-pruned K-d tree Borůvka of the exact Euclidean MST.
        dist, ind = neighbors
        pairs, lengths = bridge_components(self.X_, G, (dist / self.scale_, ind))
        return pairs, lengths * self.scale_

    def spanning_tree(self, method: str = "auto"):
        """The exact Euclidean minimum spanning tree (:func:`~geoforest.graph.euclidean_mst`)."""
        weights, edges = euclidean_mst(self.X_, method=method)
        return weights * self.scale_, edges


class ForestGeometry(Geometry):
    """The neighbours of a fitted forest (its learned metric, or ``1 - proximity``)."""

    metric = "forest"

    def __init__(self, forest, prefitted: bool) -> None:
        self.forest = forest
        self.prefitted = prefitted

    def fit(self, X) -> ForestGeometry:
        """Grow the forest on ``X`` (or check that a fitted one was grown on it).

        ``X`` may be a ``dask.array.Array``: the forest then grows and searches
        on the workers, the rows stay there, and what this geometry needs of
        them is fetched by index (:mod:`geoforest.graph._distributed`).
        """
        if self.prefitted:
            trained = computed(self.forest.apply())  # the training points' leaves
            if X.shape[0] != trained.shape[0] or not np.array_equal(
                computed(self.forest.apply(X)), trained
            ):
                raise ValueError(
                    "the fitted forest given as the geometry was grown on other points "
                    f"({trained.shape[0]} training points, X has {X.shape[0]} rows that do "
                    "not fall in their leaves); pass its training data, or an unfitted "
                    "forest to grow one on X"
                )
            self.forest_ = self.forest
        else:
            self.forest_ = self.forest.fit(X)
        self.X_ = X  # the user's coordinates: queries of training rows (bridges)
        self.n_samples_ = X.shape[0]
        return self

    def training_points(self, rows) -> np.ndarray:
        return rows_of(self.X_, rows)

    def copy_groups(self) -> np.ndarray | None:
        if is_dask_array(self.X_):
            return copy_groups_of(self.X_)  # only repeated hashes are fetched
        return super().copy_groups()

    def _neighbors(self, k: int):
        return tuple(computed(a) for a in self.forest_.kneighbors(None, n_neighbors=k))

    def bridges(self, G, neighbors):
        """The base class's Borůvka over the neighbour lists, or, when the forest
        ranks by a learned metric (``metric_weights_``), the K-d tree Borůvka of
        :func:`~geoforest.graph.bridge_components` in the coordinates where that
        metric is Euclidean: the same metric and units, but near-linear where
        the lists would have to grow to a whole component to find its way out
        (separated clusters; ``docs/results/label-free-levels.md``)."""
        weights = getattr(self.forest_, "metric_weights_", None)
        if weights is None:
            return super().bridges(G, neighbors)
        X = self.X_
        if is_dask_array(X):
            if connected_components(G, directed=False)[0] == 1:
                return np.zeros((0, 2), dtype=np.intp), np.zeros(0)
            warnings.warn(
                f"the neighbour graph of the {X.shape[0]} points has more than one "
                "component: bridging them reads every point, so the Dask array's "
                f"{X.nbytes / 2**20:.1f} MB are gathered into this process",
                UserWarning,
                stacklevel=2,
            )
            X = computed(X)
        Z = (X - X.mean(axis=0)) * np.sqrt(weights)  # centred: far from zero
        return bridge_components(Z, G)

    def _query(self, X, k: int):
        return tuple(computed(a) for a in self.forest_.kneighbors(X, n_neighbors=k))


class PrecomputedGeometry(Geometry):
    """A user's graph of distances; its components are the user's to connect.

    Its neighbour lists are each row's ``n_neighbors`` smallest stored
    entries; its spanning tree and a new point's edges use every stored entry.
    """

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

    def _neighbors(self, k: int):
        return _row_smallest(self.graph_, k, "training point")

    def _query(self, X, k: int):
        G = check_query_graph(X, self.n_samples_, "distance graph", self)
        if not sp.issparse(X):  # a dense row lists every training point, its zeros too
            D = np.asarray(X, dtype=np.float64)
            ind = np.argsort(D, axis=1, kind="stable")[:, :k]
            return np.take_along_axis(D, ind, axis=1), ind.astype(np.intp)
        return _row_smallest(G, k, "query")

    def spanning_tree(self):
        """The minimum spanning tree of every stored edge, components at infinite height."""
        G = self.graph_.tocoo()
        return spanning_tree(self.n_samples_, G.row, G.col, G.data)

    def query_edges(self, X, estimator=None):
        """Every stored entry of a sparse row, every entry of a dense one (a 0 is a copy)."""
        G = check_query_graph(X, self.n_samples_, "distance graph", estimator or self)
        if not sp.issparse(X):
            D = np.asarray(X, dtype=np.float64)
            ind = np.argsort(D, axis=1, kind="stable")
            counts = np.full(D.shape[0], D.shape[1], dtype=np.int64)
            return np.take_along_axis(D, ind, axis=1), ind.astype(np.int64), counts
        return sorted_rows(G)

    def subset(self, rows) -> PrecomputedGeometry:
        """The subgraph of the kept points."""
        rows = np.asarray(rows, dtype=np.int64)
        sub = PrecomputedGeometry()
        sub.n_neighbors = self.n_neighbors
        return sub.fit(self.graph_[rows][:, rows])


def _is_fitted(est) -> bool:
    try:
        check_is_fitted(est)
    except NotFittedError:
        return False
    return True


def make_geometry(
    metric,
    forest=None,
    *,
    n_neighbors=None,
    random_state=None,
    n_jobs=None,
    verbose=0,
    default_forest_params=None,
) -> Geometry:
    """The (unfitted) :class:`Geometry` of a clusterer's ``metric`` and ``forest``.

    Parameters
    ----------
    metric : {"euclidean", "forest", "precomputed"}
    forest : forest, ForestNeighborsTransformer or None
        Used by ``metric="forest"`` only (module docstring).
    n_neighbors : int or None
        The lists' length when a caller gives none.
    random_state, n_jobs
        Passed to the forest where its own are None.
    verbose : int, default=0
        Passed to a forest grown here when positive and the forest's own is 0
        (its progress bars: trees, neighbours).
    default_forest_params : dict or None
        Settings of the ``UnsupervisedForest`` grown when ``metric="forest"``
        and ``forest`` is None; ignored otherwise (a user's forest is used as
        given).

    Returns
    -------
    Geometry
    """
    if not isinstance(verbose, numbers.Integral) or verbose < 0:
        raise ValueError(f"verbose must be an int >= 0, got {verbose!r}")
    geometry = _unfitted(metric, forest, random_state, n_jobs, verbose, default_forest_params)
    if n_neighbors is not None:
        geometry.n_neighbors = check_n_neighbors(n_neighbors, np.iinfo(np.int64).max)
    return geometry


def _unfitted(metric, forest, random_state, n_jobs, verbose=0, default_params=None) -> Geometry:
    if metric == "euclidean":
        return EuclideanGeometry()
    if metric == "precomputed":
        return PrecomputedGeometry()
    if metric != "forest":
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    from ..forest import ForestNeighborsTransformer, UnsupervisedForest

    if isinstance(forest, ForestNeighborsTransformer):
        if _is_fitted(forest):
            return ForestGeometry(forest.forest_, prefitted=True)
        forest = forest.forest if forest.forest is not None else UnsupervisedForest()
    if forest is None:
        forest = UnsupervisedForest(**(default_params or {}))
    elif not hasattr(forest, "kneighbors") or not hasattr(forest, "apply"):
        raise TypeError(
            "forest must be a geoforest forest or a ForestNeighborsTransformer, got "
            f"{type(forest).__name__}"
        )
    elif _is_fitted(forest):
        return ForestGeometry(forest, prefitted=True)
    grown = with_seed_and_threads(clone(forest), random_state, n_jobs, verbose)
    return ForestGeometry(grown, False)


def fit_geometry(
    X,
    metric: str = "euclidean",
    *,
    forest=None,
    n_neighbors: int | None = None,
    random_state=None,
    n_jobs=None,
    owner=None,
    verbose: int = 0,
    default_forest_params: dict | None = None,
) -> Geometry:
    """The fitted :class:`Geometry` of ``X``: the graph layer's one entry.

    Every clusterer and embedding reads its ``metric``, ``forest`` and
    ``n_neighbors`` through this function, and asks everything else of the
    geometry it returns (module docstring of ``_geometry.py``).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
        Features; with ``metric="precomputed"`` a square distance graph
        (sparse, or a dense distance matrix).  Complex values are refused.
    metric : {"euclidean", "forest", "precomputed"}, default="euclidean"
    forest : forest, ForestNeighborsTransformer or None
        ``metric="forest"`` only.
    n_neighbors : int or None
        The neighbour lists' length when a caller gives none; checked
        against ``n_samples`` when a list is asked for.
    random_state, n_jobs
        Passed to a forest grown here where its own are None.
    owner : estimator or None
        Named in error messages.
    verbose : int, default=0
        Progress bars of a forest grown here (as :func:`make_geometry`).
    default_forest_params : dict or None
        Settings of the forest grown when ``forest`` is None (as
        :func:`make_geometry`).

    Returns
    -------
    Geometry
        Fitted.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0], [7.0]])
    >>> g = fit_geometry(X, n_neighbors=2)
    >>> dist, ind = g.neighbors()
    >>> ind.tolist(), g.spanning_tree()[0].tolist()
    ([[1, 2], [0, 2], [1, 0], [2, 1]], [1.0, 2.0, 4.0])
    """
    name = type(owner).__name__ if owner is not None else "fit_geometry"
    _check_forest_metric(metric, forest, name)
    check_not_complex(X, owner if owner is not None else name)
    geometry = make_geometry(
        metric,
        forest,
        n_neighbors=n_neighbors,
        random_state=random_state,
        n_jobs=n_jobs,
        verbose=verbose,
        default_forest_params=default_forest_params,
    )
    if is_dask_array(X) and metric != "forest":
        raise TypeError(
            f"{name}: a dask.array.Array is taken by metric='forest' only (the forest "
            f"grows and searches on the workers); metric={metric!r} would compute it "
            "whole into this process's memory. Pass metric='forest', or X.compute() if "
            "it fits"
        )
    if metric == "precomputed":
        _check_graph_shape(X, name)
    elif not sp.issparse(X) and not is_dask_array(X):
        X = np.asarray(X)
    return geometry.fit(X)


def _check_graph_shape(X, name: str) -> None:
    shape = getattr(X, "shape", None) or np.shape(X)
    if len(shape) == 2 and shape[0] != shape[1]:
        raise ValueError(
            f"{name}: metric='precomputed' takes a square (n_samples, n_samples) distance "
            f"graph, got shape {tuple(shape)}; for feature data pass metric='euclidean' "
            "or metric='forest'"
        )
