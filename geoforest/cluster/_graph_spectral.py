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

K, when not given, is the largest relative gap of the graph's spectrum.  When
no gap reaches the bar (many classes that touch fall gradually, like one
blob), the spectrum is compared with those of Gaussian references of the
data's mean and covariance in the same geometry
(:mod:`geoforest.graph._reference`): K = 1 only if the data are no more
clustered than the reference.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ..graph import (
    LabelFreeChoiceWarning,
    choose_by_relative_gap,
    explain_choice,
    n_components,
    score_partitions,
    spectral_clustering,
    spectral_partitions,
)
from ..graph._geometry import check_n_neighbors, make_geometry
from ..graph._reference import MIN_EXCESS, choose_by_excess, spectral_excess
from ..graph._weights import knn_affinity

__all__ = ["fit_knn_spectral", "predict_knn_spectral"]


def _connected_affinity(geometry, A, dist, ind) -> tuple[sp.csr_matrix, int]:
    pairs, _ = geometry.bridges(A, (dist, ind))
    if not len(pairs):
        return A, 0
    low = float(A.data.min())
    B = sp.csr_matrix((np.full(len(pairs), low), pairs.T), shape=A.shape)
    return (A + B + B.T).tocsr(), len(pairs)


def _knn_graph(est, points, forest, seed):
    """``(geometry, A, n_bridges)``: the fitted geometry of ``points`` and its weighted,
    connected kNN graph, with the estimator's metric and neighbours."""
    n = points.shape[0]  # rows: points, or a square precomputed graph
    if n < 2:
        raise ValueError(f"spectral clustering needs at least 2 samples, got n_samples={n}")
    k = check_n_neighbors(est.n_neighbors, n)
    geometry = make_geometry(est.metric, forest, random_state=seed, n_jobs=est.n_jobs)
    dist, ind = geometry.fit(points).neighbors(k)
    return (geometry, *_connected_affinity(geometry, knn_affinity(ind, n), dist, ind))


def _excess_k(est, A, X, max_k: int, seed: int) -> tuple[int, np.ndarray]:
    """K from the spectrum's excess over Gaussian references, and the excesses."""

    def reference_graph(points, ref_seed):  # the same pipeline, a fresh forest
        forest = None if est.forest is None else clone(est.forest)
        return _knn_graph(est, points, forest, ref_seed)[1]

    excess = spectral_excess(A, np.asarray(X, dtype=np.float64), reference_graph, max_k, seed)
    k = choose_by_excess(excess)
    out = np.full(int(est.max_clusters), np.nan)
    out[1 : excess.size + 1] = excess
    if k > 1:
        warnings.warn(
            f"{type(est).__name__}: no relative spectral gap reaches the bar, so K = {k} was "
            "chosen as the last K whose spectrum lies clearly below that of structureless "
            f"Gaussian data (excess {out[k - 1]:.2f} >= {MIN_EXCESS}; reference_excess_): "
            "weaker evidence than a gap; pass n_clusters if you know K",
            LabelFreeChoiceWarning,
            stacklevel=5,  # the caller of ForestSpectralClustering.fit
        )
    return k, out


def _relgap_k(est, A, max_k: int, seed: int) -> tuple[int, np.ndarray]:
    """K by the shared relative-gap rule, and its scores per K (``max_clusters`` long)."""
    part = spectral_partitions(A, max_k, solver=est.eigen_solver, random_state=seed)
    gaps, fragmented = score_partitions(part, max_k)
    _, k, scores = choose_by_relative_gap(
        gaps[None], fragmented[None], base_k=n_components(part.eigenvalues)
    )
    out = np.full(int(est.max_clusters), np.nan)
    out[: scores.size] = scores
    return k, out


def fit_knn_spectral(est, X) -> None:
    """Fit ``est`` (a :class:`~geoforest.ForestSpectralClustering`) on its kNN graph."""
    geometry, A, n_bridges = _knn_graph(est, X, est.forest, est.random_state)
    n = geometry.n_samples_
    if est.n_clusters is not None and est.n_clusters > n:
        raise ValueError(f"n_clusters={est.n_clusters} exceeds n_samples={n}")
    seed = est._spectral_seed()
    max_k = int(min(est.max_clusters, n - 1))
    scores = np.full(int(est.max_clusters), np.nan)
    excess = None
    if est.n_clusters is not None:
        n_clusters = int(est.n_clusters)
    else:
        n_clusters, scores = _relgap_k(est, A, max_k, seed)
        if n_clusters == 1 and est.metric != "precomputed" and max_k >= 2:
            n_clusters, excess = _excess_k(est, A, X, max_k, seed)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*connected components", category=UserWarning)
        res = spectral_clustering(
            A,
            n_clusters,
            max_clusters=max_k,
            n_init=est.n_init,
            solver=est.eigen_solver,
            random_state=seed,
            tol=est.eigen_tol,
        )
    if est.n_clusters is None and (excess is None or res.n_clusters == 1):
        name, k = type(est).__name__, int(res.n_clusters)
        explain_choice(name, k, scores, criterion="relative gap", stacklevel=5)
    est.geometry_ = geometry
    est.forest_ = getattr(geometry, "forest_", None)
    est.labels_ = res.labels
    est.n_clusters_ = int(res.n_clusters)
    est.eigenvalues_ = res.eigenvalues
    est.affinity_matrix_ = A
    est.n_bridges_ = n_bridges
    est.n_clusters_scores_ = scores
    est.reference_excess_ = excess
    if est.metric != "precomputed":
        est.n_features_in_ = X.shape[1]


def predict_knn_spectral(est, X) -> np.ndarray:
    """Labels of new points: the majority of their ``n_neighbors`` nearest training points.

    Ties go to the label of the nearest of the tied neighbours.
    """
    k = min(int(est.n_neighbors), est.geometry_.n_samples_)
    dist, ind = est.geometry_.query(X, k)
    labels = np.asarray(est.labels_)[ind]
    n_labels = int(labels.max()) + 1 if labels.size else 1
    votes = np.zeros((labels.shape[0], n_labels))
    np.add.at(votes, (np.repeat(np.arange(labels.shape[0]), k), labels.ravel()), 1.0)
    # Among the labels of most votes, the one met first in the ascending list.
    top = votes == votes.max(axis=1, keepdims=True)
    eligible = np.take_along_axis(top, labels, axis=1)
    return labels[np.arange(labels.shape[0]), np.argmax(eligible, axis=1)]
