"""The diffusion map a :class:`~geoforest.LUND` fit runs on, in its geometry.

LUND's graph, density and diffusion distances all come from one
:class:`~geoforest.DiffusionMap` built with LUND's own parameters, so every
kNN use of LUND (graph, density, :meth:`~geoforest.LUND.predict`) reads the
same geometry (``metric``, ``forest``; :mod:`geoforest.graph`).  The spatial
options restrict Euclidean neighbours to a pixel window and exist for
``metric="euclidean"`` only.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from .._validation import check_not_complex, validate_data
from ..graph import (
    MIN_EXCESS,
    LabelFreeChoiceWarning,
    check_metric_in,
    choose_by_excess,
    spatial_knn,
    spectral_excess,
)
from ._diffusion_map import DiffusionMap
from ._kernel_graph import fit_graph, takes_square_input

__all__ = [
    "DiffusionNeighborsMixin",
    "check_structure",
    "image_shape",
    "lund_diffusion_map",
    "structureless_excess",
    "warn_if_structureless",
]


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
    if any(s is not None for s in spatial):
        check_metric_in(
            est.metric,
            ("euclidean",),
            type(est).__name__,
            "image_shape, spatial_radius and spatial_vote_radius (a pixel window of "
            "Euclidean neighbours)",
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
    features = not takes_square_input(est)
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
    # The pixel windows replace the geometry's lists; the geometry still bridges.
    return dm._fit(X, _pixel_windows(est, X.shape[0]), owner=est)


def _pixel_windows(est, n: int):
    """LUND's spatial neighbour lists as a function of the features, or None."""
    if est.spatial_radius is None:
        return None
    shape = image_shape(est, n)
    radius, k = int(est.spatial_radius), int(est.n_neighbors)
    return lambda Z: _spatial_lists(Z, shape, radius, k)


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


#: Above this many points the structure check runs on a random subset of this size.
REFERENCE_SAMPLES = 500


def check_structure(est, dm: DiffusionMap) -> np.ndarray | None:
    """``reference_excess_`` of a label-free LUND fit, warning when K >= 2 may be noise.

    Called by ``fit`` right after it; the warning is attributed to the
    caller of ``fit``.
    """
    if est.n_clusters is not None or est.n_clusters_ < 2:
        return None
    rs = est.random_state
    seed = int(rs) if isinstance(rs, numbers.Integral) else 0
    excess = structureless_excess(est, dm, est.max_clusters, seed)
    warn_if_structureless(type(est).__name__, est.n_clusters_, excess, 3)
    return excess


def structureless_excess(est, dm: DiffusionMap, max_k: int, seed: int) -> np.ndarray | None:
    """The excess of each K over Gaussian references of LUND's diffusion kernel ``W``.

    :func:`~geoforest.graph.spectral_excess` of ``dm.affinity_`` against the
    same graph (geometry, kernel, cutoff, bridges, pixel windows) built on
    points drawn from one Gaussian of the data's mean and covariance.
    ``None`` when the graph has no coordinates to draw references from (a
    precomputed graph or affinity) or ``max_k < 2``.  Entry ``K - 1`` holds
    ``s_K`` (NaN at K = 1).
    """
    n = dm.affinity_.shape[0]
    max_k = min(int(max_k), n - 1)
    if dm.geometry_ is None or max_k < 2:
        return None
    try:
        X = np.asarray(dm.geometry_.training_points(np.arange(n)), dtype=np.float64)
    except NotImplementedError:  # distances only: no mean and covariance
        return None
    windows = _pixel_windows(est, n)

    def reference_graph(points, ref_seed):  # the same pipeline, a fresh forest
        forest = None if dm.forest is None else clone(dm.forest)
        ref = clone(dm).set_params(forest=forest, random_state=ref_seed)
        return fit_graph(ref, points, windows, owner=est).W

    W = dm.affinity_
    if windows is None and n > REFERENCE_SAMPLES:
        # The data's structure at a fixed size: the same pipeline on a random subset,
        # so that the check costs the same at any n (pixel windows need every pixel).
        X = X[np.sort(np.random.RandomState(seed).choice(n, REFERENCE_SAMPLES, replace=False))]
        W = reference_graph(X, seed)
        max_k = min(max_k, REFERENCE_SAMPLES - 1)
    excess = spectral_excess(W, X, reference_graph, max_k, seed)
    out = np.full(max_k, np.nan)
    out[1:] = excess
    return out


def warn_if_structureless(name: str, k: int, excess: np.ndarray | None, stacklevel: int) -> bool:
    """Warn that a label-free ``K >= 2`` sits on data no more clustered than the reference.

    No K's excess reaches :data:`~geoforest.graph.MIN_EXCESS`: the diffusion
    kernel's spectrum is nowhere clearly below that of one Gaussian of the
    data's mean and covariance, so the K clusters may be noise.  Only a
    warning: the labels stay as chosen.  Returns whether it warned.
    """
    if excess is None or k < 2 or choose_by_excess(excess[1:]) > 1:
        return False
    top = np.nanmax(excess) if np.isfinite(excess).any() else np.nan
    warnings.warn(
        f"{name}: K = {k} was chosen without labels, but the data are no more clustered "
        "than structureless Gaussian data of their mean and covariance (largest spectral "
        f"excess {top:.2f} < {MIN_EXCESS}; reference_excess_): the {k} clusters may be "
        "noise; pass n_clusters if you know K",
        LabelFreeChoiceWarning,
        stacklevel=stacklevel + 1,
    )
    return True


class DiffusionNeighborsMixin:
    """``kneighbors`` of a fitted LUND: its diffusion map's, at the time it clustered at."""

    def kneighbors(self, X=None, n_neighbors=None, return_distance: bool = True):
        """The ``n_neighbors`` training points nearest in diffusion distance ``D_t``, at ``t_``.

        :meth:`DiffusionMap.kneighbors <geoforest.DiffusionMap.kneighbors>` of
        ``diffusion_map_`` at the diffusion time the labels were found at.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features) or None, default=None
            New points (as :meth:`predict` takes them); ``None``: every
            training point, itself excluded.
        n_neighbors : int or None, default=None
            ``None``: the estimator's ``n_neighbors``.
        return_distance : bool, default=True

        Returns
        -------
        dist : ndarray of shape (n_queries, n_neighbors)
            Only with ``return_distance=True``.
        ind : ndarray of shape (n_queries, n_neighbors)
        """
        check_is_fitted(self, "labels_")
        dm = self.diffusion_map_
        if X is not None:  # checked here, so that a bad X is reported as this estimator's
            X = dm._validate_query(X, self)
        return dm.kneighbors(X, n_neighbors, return_distance, t=self.t_)
