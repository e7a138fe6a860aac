"""The graph of a :class:`~geoforest.DiffusionMap`: a Gaussian kNN graph from a geometry.

The geometry (``metric``, ``forest``, ``n_neighbors``; fitted by
:func:`geoforest.graph.fit_geometry`) gives each point's ``n_neighbors``
nearest others and their distances, in the user's units; one kernel rule
turns those lists into the graph, in every geometry: weights ``exp(-d^2 /
sigma^2)`` with ``sigma`` the median ``n_neighbors``-th distance, edges beyond
``cutoff * sigma`` dropped, components bridged by the geometry's own minimum
spanning forest (a precomputed graph's own components are the user's: only
those the cutoff split are rejoined, by the lists' shortest edges).  For a
precomputed distance graph the lists are each row's ``n_neighbors`` smallest
stored entries, so a dense distance matrix gives the graph its features
would.  A given affinity (``affinity="precomputed"``) has
no geometry and is used as it is.

:func:`fit_graph` returns everything a fit keeps as a :class:`KernelGraph`.
It takes the estimator's parameters as explicit arguments, so LUND rebuilds
the same graph on reference points with another seed and no estimator.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .._validation import check_not_complex
from ..graph import (
    Geometry,
    check_forest_metric,
    check_metric_in,
    check_n_neighbors,
    check_sparse_graph,
    fit_geometry,
    spanning_tree,
    symmetrize,
    takes_graph,
)

__all__ = [
    "GraphSettings",
    "KernelGraph",
    "fit_graph",
    "geometry_metric",
    "resolve_sigma",
    "takes_square_input",
]


class GraphSettings(NamedTuple):
    """The keywords of :func:`fit_graph` that a diffusion map's parameters fix.

    Everything but the data, the metric, the seed, replacement neighbour
    lists and the owner: one bundle that :func:`fit_diffusion
    <geoforest.diffusion._diffusion_fit.fit_diffusion>` and LUND's Gaussian
    references pass on as ``fit_graph(X, metric, **settings._asdict(), ...)``.
    """

    forest: object | None
    n_neighbors: int
    sigma: str | float
    kernel: str
    local_scale_neighbor: int
    cutoff: float | None
    connect: bool
    n_jobs: int | None


class KernelGraph(NamedTuple):
    """What :func:`fit_graph` builds.

    Attributes
    ----------
    K : scipy.sparse.csr_matrix of shape (n, n)
        The kernel's rows (each point's weighted list, before symmetrisation).
    W : scipy.sparse.csr_matrix of shape (n, n)
        The symmetric, connected affinity the random walk runs on.
    geometry : Geometry or None
        The fitted geometry (``None`` for a given affinity).
    sigma : float
        The kernel scale, in the geometry's units (NaN for a given affinity).
    local_scale : ndarray of shape (n,) or None
        The local scales of ``kernel="adaptive"``.
    knn_distances, knn_indices : ndarray of shape (n, n_neighbors) or None
        The neighbour lists the kernel weighs.
    n_bridges : int
        Edges added to join the components.
    """

    K: sp.csr_matrix
    W: sp.csr_matrix
    geometry: Geometry | None
    sigma: float
    local_scale: np.ndarray | None = None
    knn_distances: np.ndarray | None = None
    knn_indices: np.ndarray | None = None
    n_bridges: int = 0


def takes_square_input(est) -> bool:
    """Whether ``fit(X)`` of ``est`` reads a square graph (an affinity or distances)."""
    return est.affinity != "gaussian" or takes_graph(est.metric)


def geometry_metric(est, stacklevel: int) -> str | None:
    """The ``metric`` of ``est``'s geometry, ``None`` for a given affinity.

    Part of a fit's parameter validation, so it reads the estimator:
    ``affinity="precomputed_distance"`` is ``metric="precomputed"`` (with a
    ``FutureWarning``, attributed ``stacklevel`` frames up from here, the
    user's call).  Checks that ``metric``, ``forest`` and ``affinity``
    agree; errors name ``est``.
    """
    name = type(est).__name__
    check_forest_metric(est)
    if est.affinity != "gaussian":
        check_metric_in(
            est.metric,
            ("euclidean", "precomputed"),
            name,
            f"affinity={est.affinity!r} (a given graph)",
            "metric='forest' builds the Gaussian kNN graph from the features: "
            "affinity must be 'gaussian'",
        )
    if est.affinity == "precomputed":
        return None
    if est.affinity == "precomputed_distance":
        warnings.warn(
            f"{name}: affinity='precomputed_distance' is deprecated and will be removed "
            "in the next release; pass metric='precomputed' (with affinity='gaussian') "
            "for a precomputed distance graph",
            FutureWarning,
            stacklevel=stacklevel,
        )
        return "precomputed"
    return est.metric


def fit_graph(
    X,
    metric: str | None,
    *,
    forest,
    n_neighbors: int,
    sigma: str | float,
    kernel: str,
    local_scale_neighbor: int,
    cutoff: float | None,
    connect: bool,
    random_state,
    n_jobs: int | None,
    neighbors: tuple[np.ndarray, np.ndarray] | Callable | None = None,
    owner=None,
) -> KernelGraph:
    """The kernel ``K``, the affinity ``W`` and the geometry of ``X``.

    Every parameter is explicit, so the same graph can be rebuilt on other
    points (LUND's structureless references) without an estimator.

    Parameters
    ----------
    X : ndarray or sparse matrix
        Validated features, or the precomputed graph.
    metric : str or None
        The geometry's metric (:func:`geometry_metric`); ``None``: ``X`` is
        a given affinity, used as ``max(W, W^T)``.
    forest, n_neighbors, random_state, n_jobs
        Read by :func:`~geoforest.graph.fit_geometry` (``forest`` for
        ``metric="forest"``).
    sigma, kernel, local_scale_neighbor, cutoff, connect
        The kernel rule of :class:`~geoforest.DiffusionMap` (its parameters
        of the same names).
    neighbors : (dist, ind), callable or None
        Neighbour lists that replace the geometry's (LUND's pixel windows):
        given, or a function of ``X`` returning them, in ``X``'s units.  The
        geometry still bridges the components.
    owner : estimator or None
        Named in error messages.

    Returns
    -------
    KernelGraph
    """
    if metric is None:
        return _affinity_graph(X, owner)
    geometry = fit_geometry(
        X,
        metric,
        forest=forest,
        n_neighbors=n_neighbors,
        random_state=random_state,
        n_jobs=n_jobs,
        owner=owner,
    )
    if neighbors is None:
        dist, ind = geometry.neighbors()
    else:
        check_n_neighbors(n_neighbors, geometry.n_samples_)
        dist, ind = neighbors(X) if callable(neighbors) else neighbors
    dist = np.asarray(dist, dtype=np.float64)
    if not np.all(np.isfinite(dist)):
        raise ValueError(
            "the distances between the rows of X overflow float64; rescale the features"
        )
    sigma = resolve_sigma(sigma, dist[:, -1])
    n = ind.shape[0]
    indptr = np.arange(0, ind.size + 1, ind.shape[1])
    K = sp.csr_matrix((np.exp(-((dist / sigma) ** 2)).ravel(), ind.ravel(), indptr), (n, n))
    G, local = _weights(K, dist, ind, kernel, local_scale_neighbor, cutoff)
    W, n_bridges = symmetrize(G), 0
    if connect:
        W, n_bridges = _connect(geometry, W, sigma, cutoff, (dist, ind))
    return KernelGraph(K, W, geometry, sigma, local, dist, ind, n_bridges)


def _weights(
    K: sp.csr_matrix,
    dist: np.ndarray,
    ind: np.ndarray,
    kernel: str,
    local_scale_neighbor: int,
    cutoff: float | None,
) -> tuple[sp.csr_matrix, np.ndarray | None]:
    """The graph's weights of kNN lists ``(dist, ind)`` and the local scales, if adaptive.

    ``K`` is the Gaussian kernel of the lists; ``kernel="gaussian"`` keeps it,
    cut off, ``"adaptive"`` reweighs the same edges by local scales.
    """
    n = ind.shape[0]
    indptr = np.arange(0, ind.size + 1, ind.shape[1])
    if kernel == "adaptive":
        local = np.maximum(dist[:, min(local_scale_neighbor, dist.shape[1]) - 1], 1e-300)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            w = np.exp(-(dist**2) / (local[:, None] * local[ind]))
            # Copies (local scale floored near 0) underflow the product to 0 / 0;
            # divided one factor at a time, as transform does, a copy weighs 1.
            bad = ~np.isfinite(w)
            w[bad] = np.exp(-(dist / local[:, None])[bad] * (dist / local[ind])[bad])
        return sp.csr_matrix((w.ravel(), ind.ravel(), indptr), shape=(n, n)), local
    G = K.copy()
    if cutoff is not None:
        # Edges longer than cutoff * sigma carry (almost) no weight; keeping them
        # leaves far points nearly isolated (eigenvalue ~1, localised eigenvectors).
        G.data[G.data < np.exp(-(float(cutoff) ** 2))] = 0.0
        G.eliminate_zeros()
    return G, None


def resolve_sigma(sigma, kth: np.ndarray) -> float:
    """The kernel scale: ``sigma`` itself, or for ``"auto"`` the median of ``kth``.

    ``kth``: each point's ``n_neighbors``-th distance; zeros (copies) are
    left out when the median is 0.
    """
    if sigma != "auto":
        return float(sigma)
    value = float(np.median(kth))
    if not value > 0:
        positive = kth[kth > 0]
        if positive.size == 0:
            raise ValueError(
                "every point coincides with its neighbours (all kNN distances are 0); "
                "sigma cannot be estimated — pass sigma or remove duplicates"
            )
        value = float(np.median(positive))
    return value


def _connect(
    geometry: Geometry, W, sigma: float, cutoff: float | None, neighbors
) -> tuple[sp.csr_matrix, int]:
    """``W`` with the geometry's bridges between its components, and their number."""
    if geometry.can_bridge:
        pairs, lengths = geometry.bridges(W, neighbors)
    else:
        pairs, lengths = _list_bridges(W, *neighbors)
    if lengths.size == 0:
        return W, 0
    c = 1.0 if cutoff is None else float(cutoff)
    w = np.exp(-(np.minimum(lengths / sigma, c) ** 2))
    n = W.shape[0]
    B = sp.csr_matrix((w, (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    return symmetrize(W + B + B.T), int(lengths.size)


def _list_bridges(W, dist, ind) -> tuple[np.ndarray, np.ndarray]:
    """The shortest listed edges rejoining what the cutoff split, for a graph not bridged.

    A precomputed graph's own components (those of its neighbour lists) stay
    apart: they are the user's.  The components of ``W`` within one of them
    are joined by a minimum spanning forest of the listed edges (``W``'s
    edges first, at length 0).
    """
    n = W.shape[0]
    n_comp, comp = connected_components(W, directed=False)
    if n_comp == 1:
        return np.zeros((0, 2), dtype=np.intp), np.zeros(0)
    Wc = W.tocoo()
    rows = np.repeat(np.arange(n), ind.shape[1])
    lengths = np.concatenate([np.zeros(Wc.nnz), dist.ravel()])
    weights, edges = spanning_tree(
        n, np.concatenate([Wc.row, rows]), np.concatenate([Wc.col, ind.ravel()]), lengths
    )
    cross = np.isfinite(weights) & (comp[edges[:, 0]] != comp[edges[:, 1]])
    return edges[cross].astype(np.intp), weights[cross]


def _affinity_graph(G, owner) -> KernelGraph:
    """A given affinity, used as ``max(W, W^T)``."""
    check_not_complex(G, owner)  # a float64 cast would drop the imaginary part
    K = check_sparse_graph(G, "affinity")
    return KernelGraph(K, symmetrize(K), None, float("nan"))
