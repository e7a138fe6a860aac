"""Spectral clustering of a neighbour graph from any geometry (``affinity="knn"``).

The forest kernel of rpfCluster weighs pairs by how often they share a leaf;
its spectral embedding follows the kernel's threshold and scale, which must
be chosen.  The neighbour graph asks less: each point is joined to its
``n_neighbors`` nearest others under the chosen geometry
(:mod:`geoforest.graph`), and an edge weighs the overlap of the two points'
neighbour sets (shared nearest neighbours, Jaccard), which damps the edges a
noise point draws across a gap: two points joined across clusters have
few neighbours in common.  Components of the graph are joined by a minimum
spanning forest in the same geometry, weighted like the weakest edges.

K, when not given, is the finest level the graph supports
(:func:`geoforest.graph.label_free_levels`, the rule every family shares): the
largest K whose relative spectral gap and whose excess over Gaussian
references of the data's mean and covariance, run through the same geometry,
both reach their bars.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._progress import StageProgress
from .._validation import is_dask_array, validate_data
from ..graph import (
    Geometry,
    Levels,
    explain_levels,
    fit_geometry,
    knn_affinity,
    label_free_levels,
    spectral_clustering,
)

__all__ = [
    "LEVEL_SELECTION_SAMPLES",
    "cutting_forest_params",
    "GeometryNeighborsMixin",
    "KnnGraph",
    "KnnSpectralFit",
    "fit_knn_spectral",
    "knn_graph",
    "label_free_k",
    "level_evidence",
    "predict_knn_spectral",
    "selection_levels",
    "selection_rows",
]


class KnnGraph(NamedTuple):
    """A fitted geometry and its weighted, connected neighbour graph."""

    geometry: Geometry
    affinity: sp.csr_matrix
    n_bridges: int


class KnnSpectralFit(NamedTuple):
    """What :func:`fit_knn_spectral` finds; the estimator stores it as its attributes."""

    geometry: Geometry
    labels: np.ndarray
    n_clusters: int
    eigenvalues: np.ndarray
    affinity: sp.csr_matrix
    n_bridges: int
    levels: Levels | None


def _connected_affinity(geometry, A, dist, ind) -> tuple[sp.csr_matrix, int]:
    pairs, _ = geometry.bridges(A, (dist, ind))
    if not len(pairs):
        return A, 0
    low = float(A.data.min())
    B = sp.csr_matrix((np.full(len(pairs), low), pairs.T), shape=A.shape)
    return (A + B + B.T).tocsr(), len(pairs)


def knn_graph(
    X,
    metric: str,
    *,
    forest,
    n_neighbors: int,
    random_state,
    n_jobs=None,
    owner=None,
    verbose: int = 0,
    stage=None,
    default_forest_params: dict | None = None,
) -> KnnGraph:
    """The fitted geometry of ``X`` and its Jaccard-weighted kNN graph, components bridged.

    ``metric``, ``forest`` and ``n_neighbors`` are read by
    :func:`~geoforest.graph.fit_geometry` alone (it checks them, once); the
    graph joins each point to its ``n_neighbors`` nearest others, its exact
    copies left out (:meth:`~geoforest.graph.Geometry.distinct_neighbors`).
    ``verbose`` reaches a forest grown here, ``default_forest_params`` sets
    one grown for ``forest=None``; ``stage`` (a
    :class:`~geoforest._progress.StageProgress`) is told the stages.
    """
    stage = stage if stage is not None else StageProgress(0, 0, "")
    stage("geometry")
    geometry = fit_geometry(
        X,
        metric,
        forest=forest,
        n_neighbors=n_neighbors,
        random_state=random_state,
        n_jobs=n_jobs,
        owner=owner,
        verbose=verbose,
        default_forest_params=default_forest_params,
    )
    n = geometry.n_samples_
    if n < 2:
        raise ValueError(f"spectral clustering needs at least 2 samples, got n_samples={n}")
    stage("neighbours")
    dist, ind = geometry.distinct_neighbors()  # a group of copies is no clique (its docstring)
    stage("graph and bridges")
    return KnnGraph(geometry, *_connected_affinity(geometry, knn_affinity(ind, n), dist, ind))


class LabelFreeSettings(NamedTuple):
    """What the label-free choice of K needs besides the graph: the same
    geometry again, for the Gaussian references, and the solver settings."""

    metric: str
    forest: Any
    n_neighbors: int
    n_jobs: int | None
    max_clusters: int
    eigen_solver: str
    eigen_tol: float
    n_init: int


def reference_forest(settings: LabelFreeSettings):
    """The forest a Gaussian reference grows: an unfitted copy of the user's
    (a ``ForestNeighborsTransformer`` as given), or ``None``, with which the
    geometry grows its default, as it did for the data.

    The reference must run through the data's own pipeline, trees included.
    A forest of fewer trees gives a noisier, better-connected graph whose
    spectrum lies higher, so the data's excess over it would be biased
    upwards (``docs/defaults.md``, "The references grow the data's trees").
    """
    return None if settings.forest is None else clone(settings.forest)


def label_free_k(graph: KnnGraph, max_k: int, seed: int, settings: LabelFreeSettings) -> Levels:
    """The levels of the graph and the K they support (:func:`~geoforest.graph.label_free_levels`).

    The Gaussian references run through the same pipeline as the data (a
    fresh forest of the same settings, :func:`reference_forest`; the same
    neighbours and weights); a geometry
    without coordinates (a precomputed graph) has none, and the relative-gap
    rule decides.
    """

    def reference_graph(points, ref_seed):
        return knn_graph(
            points,
            settings.metric,
            forest=reference_forest(settings),
            n_neighbors=settings.n_neighbors,
            random_state=ref_seed,
            n_jobs=settings.n_jobs,
        ).affinity

    points = graph.geometry.coordinates()
    return label_free_levels(
        graph.affinity,
        max_k,
        points=points,
        reference_graph=None if points is None else reference_graph,
        solver=settings.eigen_solver,
        n_init=settings.n_init,
        random_state=seed,
        tol=settings.eigen_tol,
    )


def level_evidence(levels: Levels | None, max_clusters: int):
    """``(n_clusters_scores_, reference_excess_)`` of a fit: the levels' relative gaps
    and excess, ``max_clusters`` long (NaN where not scored); ``None`` excess
    without a reference, all NaN scores with K given."""
    scores = np.full(int(max_clusters), np.nan)
    if levels is None:
        return scores, None
    scores[: levels.gaps.size] = levels.gaps
    if levels.rule != "finest-level":
        return scores, None
    excess = np.full(int(max_clusters), np.nan)
    excess[: levels.excess.size] = levels.excess
    return scores, excess


#: ``max_selection_samples="auto"`` of the neighbour graph: the points the
#: label-free level is chosen on (``docs/defaults.md``, "Label-free K on a subset").
LEVEL_SELECTION_SAMPLES = 20000


def selection_rows(n: int, max_selection_samples: int | None, seed: int) -> np.ndarray | None:
    """The sorted subset of ``max_selection_samples`` of ``n`` points a choice
    is made on (``seed`` draws it), or ``None`` to make it on all of them.

    A draw of row indices: the same points for the data moved by any offset
    (the clusterers' shift contract, ``tests/properties``), not for the rows
    reordered.  A draw by a hash of each row's values would be the same for
    any row order, but not for ``X + c`` (the hash of a moved value is
    another), and the shift contract is the tested one.
    """
    m = max_selection_samples
    if m is None or n <= m:
        return None
    return np.sort(check_random_state(seed).choice(n, size=m, replace=False))


def fit_knn_spectral(
    X,
    *,
    metric: str,
    forest,
    n_neighbors: int,
    n_clusters: int | None,
    max_clusters: int,
    n_init: int,
    eigen_solver: str,
    eigen_tol: float,
    random_state,
    spectral_seed: int,
    max_selection_samples: int | None = None,
    n_jobs: int | None = None,
    owner=None,
    verbose: int = 0,
) -> KnnSpectralFit:
    """Spectral clustering of the kNN graph of ``X`` in the geometry ``metric``.

    The geometry and its bridged, Jaccard-weighted graph come from
    :func:`knn_graph` (``random_state`` seeds the forest);
    ``spectral_seed`` seeds the eigensolver and k-means.  With
    ``n_clusters=None``, K is the finest level the graph supports
    (:func:`label_free_k`; ``explain_levels`` reports no structure or weak
    evidence); on more than ``max_selection_samples`` points (of a geometry
    with coordinates, :meth:`~geoforest.graph.Geometry.coordinates`), the
    level is chosen on a subset of that many
    (:func:`selection_levels`) and the whole graph is cut at it.
    ``owner`` names the estimator in messages.  ``verbose``
    shows a bar over the stages (the geometry, its neighbours, the graph,
    the levels when K is estimated, the spectral step) and the forest's own
    bars.  Returns what was found; :class:`~geoforest.ForestSpectralClustering`
    stores it.
    """
    name = type(owner).__name__ if owner is not None else "spectral clustering"
    with StageProgress(4 if n_clusters is not None else 5, verbose, name) as stage:
        graph = knn_graph(
            X,
            metric,
            forest=forest,
            default_forest_params=cutting_forest_params(X.shape[0], max_selection_samples),
            n_neighbors=n_neighbors,
            random_state=random_state,
            n_jobs=n_jobs,
            owner=owner,
            verbose=verbose,
            stage=stage,
        )
        A, n = graph.affinity, graph.geometry.n_samples_
        if n_clusters is not None and n_clusters > n:
            raise ValueError(f"n_clusters={n_clusters} exceeds n_samples={n}")
        seed = int(spectral_seed)
        max_k = int(min(max_clusters, n - 1))
        levels = None
        if n_clusters is not None:
            k = int(n_clusters)
        else:
            settings = LabelFreeSettings(
                metric,
                forest,
                n_neighbors,
                n_jobs,
                int(max_clusters),
                eigen_solver,
                eigen_tol,
                n_init,
            )
            stage("levels and references")
            sub = selection_rows(n, max_selection_samples, seed)
            # A geometry of distances only has no subset points to fit anew.
            points = None if sub is None else graph.geometry.coordinates(sub)
            if points is None:
                levels = label_free_k(graph, max_k, seed, settings)
            else:
                levels = selection_levels(points, sub, random_state, seed, settings)
            k = levels.n_clusters
        stage("eigenvectors and k-means")
        with warnings.catch_warnings():
            warnings.filterwarnings(
                "ignore", message=".*connected components", category=UserWarning
            )
            res = spectral_clustering(
                A,
                k,
                max_clusters=max_k,
                n_init=n_init,
                solver=eigen_solver,
                random_state=seed,
                tol=eigen_tol,
            )
        if levels is not None:
            explain_levels(name, levels, stacklevel=5)
        return KnnSpectralFit(
            graph.geometry,
            res.labels,
            int(res.n_clusters),
            res.eigenvalues,
            A,
            graph.n_bridges,
            levels,
        )


def cutting_forest_params(n: int, max_selection_samples: int | None) -> dict | None:
    """Settings of the default forest that grows the whole graph of ``n`` points:
    redraws that decay (``decay_redraws=True``) above ``max_selection_samples``,
    else none (``UnsupervisedForest()``).  The geometry applies them only to a
    forest it grows itself (:func:`~geoforest.graph.fit_geometry`).

    There the whole graph is only cut: K is given, or chosen on a subset by
    the default forest (:func:`selection_levels`).  Inside clusters most
    nodes find no two-cluster structure, and at many points their redraws
    are most of the forest's work; decaying them kept the K-given medians
    of the clustering suite and of whole data sets, and the scale
    benchmark's graph.  It stays out of the choice of K: it read a
    5,000-point Gaussian blob as K = 2 (``docs/defaults.md``, "The forest
    that cuts a large graph").
    """
    if max_selection_samples is None or n <= max_selection_samples:
        return None
    return {"decay_redraws": True}


def selection_levels(points, sub, random_state, seed: int, settings: LabelFreeSettings) -> Levels:
    """The levels of the training points ``sub`` (``points``, their coordinates),
    in their own geometry, as a label-free fit of them alone finds them
    (:func:`label_free_k`; ``rows`` is ``sub``).

    The subset gets its own forest (an unfitted copy of the data's, same
    settings) and its own neighbour graph: the full graph restricted to ``m``
    of ``n`` points keeps about ``m / n`` of each point's edges and would
    show structure that is not there, while the subset's own graph has the
    full graph's local shape at ``m`` points.  Its Gaussian references are
    then of ``m`` points too, so the choice costs a label-free fit of ``m``
    points whatever ``n`` is; a subset's choice varies more from seed to
    seed than every point's, the price of that bound (``docs/defaults.md``,
    "Label-free K on a subset").
    """
    if sub.size <= settings.n_neighbors:
        raise ValueError(
            f"max_selection_samples={sub.size} must exceed n_neighbors="
            f"{settings.n_neighbors}: the subset K is chosen on is a neighbour graph "
            "of its own; pass a larger max_selection_samples, or None for every point"
        )
    forest = settings.forest
    if forest is not None:
        forest = clone(forest)  # a fitted forest knows the full data only
    sub_graph = knn_graph(
        points,
        settings.metric,
        forest=forest,
        n_neighbors=settings.n_neighbors,
        random_state=random_state,
        n_jobs=settings.n_jobs,
    )
    max_k = int(min(settings.max_clusters, sub.size - 1))
    levels = label_free_k(sub_graph, max_k, seed, settings._replace(forest=forest))
    return levels._replace(rows=sub[levels.rows])


def predict_knn_spectral(geometry: Geometry, labels, X, n_neighbors: int) -> np.ndarray:
    """Labels of new points: the majority of their ``n_neighbors`` nearest training points.

    Ties go to the label of the nearest of the tied neighbours.
    """
    k = min(int(n_neighbors), geometry.n_samples_)
    dist, ind = geometry.query(X, k)
    labels = np.asarray(labels)[ind]
    n_labels = int(labels.max()) + 1 if labels.size else 1
    votes = np.zeros((labels.shape[0], n_labels))
    np.add.at(votes, (np.repeat(np.arange(labels.shape[0]), k), labels.ravel()), 1.0)
    # Among the labels of most votes, the one met first in the ascending list.
    top = votes == votes.max(axis=1, keepdims=True)
    eligible = np.take_along_axis(top, labels, axis=1)
    return labels[np.arange(labels.shape[0]), np.argmax(eligible, axis=1)]


class GeometryNeighborsMixin:
    """Input checks and :meth:`kneighbors` of an estimator with a fitted ``geometry_``."""

    def _check_X(self, X, reset: bool):
        """``X`` validated as this estimator's input: features, or a graph (``pairwise``)."""
        if reset and is_dask_array(X) and not self.__sklearn_tags__().input_tags.pairwise:
            return self._check_dask_X(X)
        if self.__sklearn_tags__().input_tags.pairwise:
            if reset:  # a query graph is checked by the geometry
                X = validate_data(
                    self, X, accept_sparse="csr", dtype=np.float64, ensure_min_samples=2
                )
            return X
        if reset:
            return validate_data(self, X, dtype="numeric", ensure_min_samples=2)
        return validate_data(self, X, dtype="numeric", reset=False)

    def _check_dask_X(self, X):
        """A Dask array to fit on: its shape checked here, its values by the
        forest that grows on the workers (:meth:`geoforest.UnsupervisedForest.fit`)."""
        if X.ndim != 2:
            raise ValueError(f"Expected a 2D array, got a Dask array of shape {X.shape}")
        if not 2 <= X.shape[0] < np.inf:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 samples of known number, got "
                f"a Dask array of shape {X.shape} (call X.compute_chunk_sizes() first "
                "if its chunks are unknown)"
            )
        self.n_features_in_ = int(X.shape[1])
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return X

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """The training points nearest to each point, in the fitted geometry.

        scikit-learn's semantics: ``X=None`` gives each training point's
        nearest *other* training points (a point is not its own neighbour);
        new points (rows of distances to the training points with
        ``metric="precomputed"``) get their nearest training points.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features) or None, default=None
        n_neighbors : int or None, default=None
            ``None``: the estimator's ``n_neighbors``.
        return_distance : bool, default=True

        Returns
        -------
        dist : ndarray of shape (n_queries, n_neighbors)
            Distances in the geometry (returned when ``return_distance``).
        ind : ndarray of shape (n_queries, n_neighbors)
            Indices of the training points, nearest first.
        """
        check_is_fitted(self, "geometry_")
        if X is None:
            dist, ind = self.geometry_.neighbors(n_neighbors)
        else:
            dist, ind = self.geometry_.query(self._check_X(X, reset=False), n_neighbors)
        return (dist, ind) if return_distance else ind
