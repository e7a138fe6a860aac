"""The graph of a :class:`~geoforest.DiffusionMap`: a Gaussian kNN graph from a geometry.

The geometry (``metric``, ``forest``; :mod:`geoforest.graph`) gives each
point's ``n_neighbors`` nearest others and their distances; one kernel rule
turns any such lists into the graph: weights ``exp(-d^2 / sigma^2)`` with
``sigma`` the median ``n_neighbors``-th distance, edges beyond ``cutoff *
sigma`` dropped, components bridged by a minimum spanning forest in the same
geometry.  ``"euclidean"`` reads the features (rescaled by a power of two
when squared distances would leave float64), ``"forest"`` a forest's
``kneighbors``, ``"precomputed"`` a given sparse distance graph (all its
stored entries, the ``affinity="precomputed_distance"`` of old); a given
affinity (``affinity="precomputed"``) is used as it is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from .._validation import check_not_complex
from ..graph._connect import bridge_components
from ..graph._geometry import (
    EuclideanGeometry,
    PrecomputedGeometry,
    check_forest_metric,
    check_n_neighbors,
    make_geometry,
)
from ..graph._knn import check_sparse_graph, feature_scale, knn, symmetrize

__all__ = ["graph_input", "fit_graph", "resolve_sigma"]


def graph_input(est) -> str:
    """What ``fit(X)`` of ``est`` reads: "features", "forest", "affinity" or "distance".

    Checks that ``metric``, ``forest`` and ``affinity`` agree; errors name ``est``.
    """
    name = type(est).__name__
    check_forest_metric(est)
    if est.metric == "forest":
        if est.affinity != "gaussian":
            raise ValueError(
                f"{name}: metric='forest' builds the Gaussian kNN graph from the features; "
                f"affinity must be 'gaussian', got {est.affinity!r}"
            )
        return "forest"
    if est.affinity == "precomputed":
        return "affinity"
    if est.affinity == "precomputed_distance" or est.metric == "precomputed":
        return "distance"
    return "features"


def fit_graph(
    dm, X, neighbors: tuple[np.ndarray, np.ndarray] | Callable | None = None
) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """The kernel ``K`` (kNN rows, before symmetrisation) and the affinity ``W`` of ``dm``.

    Sets the fitted geometry (``geometry_``, ``forest_``) and what :meth:`transform`
    needs (``_kind``, ``_sigma``, ``_scale``, ``_nn``, ``_fit_X``, ``_local_scale``).
    ``neighbors`` (features only): ``(dist, ind)``, or a function of the rescaled
    features returning them.
    """
    dm._kind = kind = graph_input(dm)
    dm._nn = dm._fit_X = dm._local_scale = None
    dm._scale = 1.0
    dm._sigma = float("nan")
    dm.geometry_ = dm.forest_ = None
    dm.n_bridges_ = 0
    if kind in ("affinity", "distance"):
        return _precomputed_graph(dm, X)
    if kind == "forest":
        geometry = make_geometry(
            "forest", dm.forest, random_state=dm.random_state, n_jobs=dm.n_jobs
        ).fit(X)
        _check_n_neighbors(dm, geometry.n_samples_)
        dist, ind = geometry.neighbors(int(dm.n_neighbors))
        dm.geometry_, dm.forest_ = geometry, geometry.forest_
        return _kernel_graph(dm, np.asarray(dist, dtype=np.float64), ind, 1.0, geometry.bridges)
    n = X.shape[0]
    _check_n_neighbors(dm, n)
    # Everything below sees features divided by a power of two when squared
    # distances would leave float64 (docs/paths-and-diffusion.md, "Extreme
    # feature values").
    scale = feature_scale(X)
    if scale != 1.0:
        X = X / scale
    dm._scale = scale
    dm._fit_X = X
    dm._nn = NearestNeighbors(n_neighbors=int(dm.n_neighbors) + 1).fit(X)
    if callable(neighbors):
        neighbors = neighbors(X)
    dist, ind = knn(X, dm.n_neighbors, dm._nn) if neighbors is None else neighbors
    if not np.all(np.isfinite(dist)):
        raise ValueError(
            "the distances between the rows of X overflow float64; rescale the features"
        )
    dm.geometry_ = _euclidean_geometry(X, scale, dm._nn)
    return _kernel_graph(dm, dist, ind, scale, lambda W, nb: bridge_components(X, W, nb))


def _check_n_neighbors(dm, n: int) -> None:
    check_n_neighbors(dm.n_neighbors, n)


def _euclidean_geometry(X_scaled: np.ndarray, scale: float, nn) -> EuclideanGeometry:
    """The fitted Euclidean geometry of the (rescaled) features, sharing the graph's tree."""
    geometry = EuclideanGeometry()
    geometry.scale_, geometry.X_, geometry._nn = scale, X_scaled, nn
    geometry.n_samples_ = X_scaled.shape[0]
    return geometry


def _kernel_graph(dm, dist, ind, scale: float, bridges) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Gaussian (or adaptive) weights of kNN lists ``(dist, ind)``, cut off and bridged.

    ``dist`` is in the units of the geometry divided by ``scale``; ``bridges(W,
    (dist, ind))`` returns the pairs and lengths (same units) joining ``W``'s
    components.
    """
    n = ind.shape[0]
    dm.knn_distances_, dm.knn_indices_ = dist * scale, ind
    sigma = resolve_sigma(dm, dist[:, -1], scale)
    dm._sigma = sigma  # in the divided units, for transform
    indptr = np.arange(0, ind.size + 1, ind.shape[1])
    K = sp.csr_matrix((np.exp(-((dist / sigma) ** 2)).ravel(), ind.ravel(), indptr), (n, n))
    if dm.kernel == "adaptive":
        local = np.maximum(dist[:, min(dm.local_scale_neighbor, dist.shape[1]) - 1], 1e-300)
        dm._local_scale = local
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            w = np.exp(-(dist**2) / (local[:, None] * local[ind]))
            # Copies (local scale floored near 0) underflow the product to 0 / 0;
            # divided one factor at a time, as transform does, a copy weighs 1.
            bad = ~np.isfinite(w)
            w[bad] = np.exp(-(dist / local[:, None])[bad] * (dist / local[ind])[bad])
        G = sp.csr_matrix((w.ravel(), ind.ravel(), indptr), shape=(n, n))
        return K, _connect(dm, symmetrize(G), sigma, (dist, ind), bridges)
    G = K.copy()
    if dm.cutoff is not None:
        # Edges longer than cutoff * sigma carry (almost) no weight; keeping them
        # leaves far points nearly isolated (eigenvalue ~1, localised eigenvectors).
        G.data[G.data < np.exp(-(float(dm.cutoff) ** 2))] = 0.0
        G.eliminate_zeros()
    return K, _connect(dm, symmetrize(G), sigma, (dist, ind), bridges)


def resolve_sigma(dm, kth: np.ndarray, scale: float = 1.0) -> float:
    """``sigma`` in the units of ``kth`` (features divided by ``scale``); sets ``sigma_``."""
    if dm.sigma != "auto":
        dm.sigma_ = float(dm.sigma)
        return dm.sigma_ / scale
    sigma = float(np.median(kth))
    if not sigma > 0:
        positive = kth[kth > 0]
        if positive.size == 0:
            raise ValueError(
                "every point coincides with its neighbours (all kNN distances are 0); "
                "sigma cannot be estimated — pass sigma or remove duplicates"
            )
        sigma = float(np.median(positive))
    dm.sigma_ = sigma * scale
    return sigma


def _connect(dm, W: sp.csr_matrix, sigma: float, neighbors, bridges) -> sp.csr_matrix:
    if not dm.connect:
        return W
    pairs, lengths = bridges(W, neighbors)
    if lengths.size == 0:
        return W
    c = 1.0 if dm.cutoff is None else float(dm.cutoff)
    w = np.exp(-(np.minimum(lengths / sigma, c) ** 2))
    n = W.shape[0]
    B = sp.csr_matrix((w, (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    dm.n_bridges_ = int(lengths.size)
    return symmetrize(W + B + B.T)


def _precomputed_graph(dm, G) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    check_not_complex(G, dm)  # a float64 cast would drop the imaginary part
    if dm._kind == "affinity":
        K = check_sparse_graph(G, "affinity")
        dm.sigma_ = float("nan")
        return K, symmetrize(K)
    D = check_sparse_graph(G, "distance graph", distances=True)
    row_max = np.zeros(D.shape[0])
    np.maximum.at(row_max, np.repeat(np.arange(D.shape[0]), np.diff(D.indptr)), D.data)
    sigma = resolve_sigma(dm, row_max[np.diff(D.indptr) > 0])
    dm._sigma = sigma
    K = D.copy()
    K.data = np.exp(-((K.data / sigma) ** 2))  # explicit zeros become weight 1
    dm.geometry_ = PrecomputedGeometry().fit(D.copy())  # its fit edits the graph in place
    return K, symmetrize(K)
