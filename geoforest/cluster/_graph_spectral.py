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
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from ..graph import (
    choose_by_relative_gap,
    explain_choice,
    n_components,
    score_partitions,
    spectral_clustering,
    spectral_partitions,
)
from ..graph._geometry import make_geometry
from ..graph._weights import knn_affinity

__all__ = ["fit_knn_spectral", "predict_knn_spectral"]


def _connected_affinity(geometry, A, dist, ind) -> tuple[sp.csr_matrix, int]:
    pairs, _ = geometry.bridges(A, (dist, ind))
    if not len(pairs):
        return A, 0
    low = float(A.data.min())
    B = sp.csr_matrix((np.full(len(pairs), low), pairs.T), shape=A.shape)
    return (A + B + B.T).tocsr(), len(pairs)


def fit_knn_spectral(est, X) -> None:
    """Fit ``est`` (a :class:`~geoforest.ForestSpectralClustering`) on its kNN graph."""
    geometry = make_geometry(
        est.metric, est.forest, random_state=est.random_state, n_jobs=est.n_jobs
    ).fit(X)
    n = geometry.n_samples_
    if n < 2:
        raise ValueError(f"spectral clustering needs at least 2 samples, got n_samples={n}")
    if est.n_clusters is not None and est.n_clusters > n:
        raise ValueError(f"n_clusters={est.n_clusters} exceeds n_samples={n}")
    k = min(int(est.n_neighbors), n - 1)
    dist, ind = geometry.neighbors(k)
    A, n_bridges = _connected_affinity(geometry, knn_affinity(ind, n), dist, ind)
    seed = est._spectral_seed()
    max_k = int(min(est.max_clusters, n - 1))
    if est.n_clusters is None:
        part = spectral_partitions(A, max_k, solver=est.eigen_solver, random_state=seed)
        gaps, fragmented = score_partitions(part, max_k)
        _, n_clusters, scores = choose_by_relative_gap(
            gaps[None], fragmented[None], base_k=n_components(part.eigenvalues)
        )
    else:
        n_clusters, scores = int(est.n_clusters), None
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*connected components", category=UserWarning)
        res = spectral_clustering(
            A, n_clusters, max_clusters=max_k, n_init=est.n_init, solver=est.eigen_solver,
            random_state=seed, tol=est.eigen_tol,
        )  # fmt: skip
    est.geometry_ = geometry
    est.forest_ = getattr(geometry, "forest_", None)
    est.labels_ = res.labels
    est.n_clusters_ = int(res.n_clusters)
    est.eigenvalues_ = res.eigenvalues
    est.affinity_matrix_ = A
    est.n_bridges_ = n_bridges
    if scores is None:
        out = np.full(int(est.max_clusters), np.nan)
    else:
        out = np.full(int(est.max_clusters), np.nan)
        out[: scores.size] = scores
        explain_choice(type(est).__name__, est.n_clusters_, out, criterion="relative gap")
    est.n_clusters_scores_ = out
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
