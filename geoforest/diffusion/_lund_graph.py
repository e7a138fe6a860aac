"""The diffusion map a :class:`~geoforest.LUND` fit runs on, in its geometry.

LUND's graph, density and diffusion distances all come from one
:class:`~geoforest.DiffusionMap` built with LUND's own parameters, so every
kNN use of LUND (graph, density, :meth:`~geoforest.LUND.predict`) reads the
same geometry (``metric``, ``forest``; :mod:`geoforest.graph`).  The spatial
options restrict Euclidean neighbours to a pixel window and exist for
``metric="euclidean"`` only.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_not_complex, validate_data
from ..graph import spatial_knn
from ._diffusion_map import DiffusionMap
from ._kernel_graph import takes_graph

__all__ = ["image_shape", "lund_diffusion_map"]


def image_shape(est, n: int) -> tuple[int, int]:
    """``est.image_shape`` checked against the ``n`` rows of ``X``."""
    if est.image_shape is None:
        raise ValueError("spatial_radius and spatial_vote_radius need image_shape")
    shape = tuple(int(s) for s in est.image_shape)
    if len(shape) != 2 or shape[0] * shape[1] != n:
        raise ValueError(f"image_shape {est.image_shape} does not hold the {n} rows of X")
    return shape


def lund_diffusion_map(est, X) -> DiffusionMap:
    """The fitted :class:`DiffusionMap` of LUND ``est`` on ``X`` (errors name LUND)."""
    spatial = (est.image_shape, est.spatial_radius, est.spatial_vote_radius)
    if est.metric != "euclidean" and any(s is not None for s in spatial):
        raise ValueError(
            "image_shape, spatial_radius and spatial_vote_radius restrict Euclidean "
            f"neighbours to a pixel window: they need metric='euclidean', got {est.metric!r}"
        )
    dm = DiffusionMap(
        est.n_neighbors,
        metric=est.metric,
        forest=est.forest,
        sigma=est.sigma,
        n_components=est.n_components,
        affinity=est.affinity,
        normalization=est.normalization,
        connect=est.connect,
        eigen_solver=est.eigen_solver,
        eigen_tol=est.eigen_tol,
        kernel=est.kernel,
        cutoff=est.cutoff,
        random_state=est.random_state,
        n_jobs=est.n_jobs,
    )
    features = not takes_graph(est)
    if est.spatial_radius is None:
        if features:
            # Validated here, so that errors name LUND and not the inner DiffusionMap.
            X = validate_data(est, X, dtype=np.float64, order="C", ensure_min_samples=2)
        else:
            check_not_complex(X, est)
        return dm._fit(X, owner=est)
    if not features:
        raise ValueError("spatial_radius needs affinity='gaussian' (features per pixel)")
    X = validate_data(est, X, dtype=np.float64, order="C", ensure_min_samples=2)
    shape = image_shape(est, X.shape[0])
    radius, k = int(est.spatial_radius), int(est.n_neighbors)
    # The pixel windows replace the geometry's lists; the geometry still bridges.
    return dm._fit(X, lambda Z: _spatial_lists(Z, shape, radius, k), owner=est)


def _spatial_lists(X: np.ndarray, shape, radius: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~geoforest.graph.spatial_knn` of ``X`` in its units, safe from overflow.

    The features are divided by a power of two near ``max |X|`` and the
    distances multiplied back: both exact, so squared distances of extreme
    values (1e200) stay in float64 and ordinary ones are unchanged.
    """
    top = float(np.max(np.abs(X))) if X.size else 0.0
    scale = float(2.0 ** np.round(np.log2(top))) if top > 0 and np.isfinite(top) else 1.0
    dist, ind = spatial_knn(X / scale, shape, radius, k)
    return dist * scale, ind
