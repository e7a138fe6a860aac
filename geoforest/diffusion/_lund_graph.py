"""LUND's input in its geometry, and the label-free check of the structure it finds.

LUND's graph, density and diffusion distances all come from one
:class:`~geoforest.DiffusionMap` built with LUND's own parameters, so every
kNN use of LUND (graph, density, :meth:`~geoforest.LUND.predict`) reads the
same geometry (``metric``, ``forest``; :mod:`geoforest.graph`).
:func:`lund_input` validates what that map is fitted on; the spatial options
restrict Euclidean neighbours to a pixel window (:func:`pixel_windows`) and
exist for ``metric="euclidean"`` only.  :func:`structure_check` compares the
graph's spectrum with the same pipeline on structureless references
(:func:`reference_graphs`), all from explicit arguments.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from .._validation import check_not_complex, validate_data
from ..graph import (
    MIN_EXCESS,
    Geometry,
    LabelFreeChoiceWarning,
    Levels,
    check_metric_in,
    choose_by_excess,
    explain_choice,
    explain_levels,
    label_free_levels,
    spatial_knn,
    spectral_excess,
)
from ._kernel_graph import GraphSettings, fit_graph, takes_square_input

__all__ = [
    "DiffusionNeighborsMixin",
    "LundInput",
    "check_image_shape",
    "lund_input",
    "reference_graphs",
    "structure_check",
    "structureless_excess",
    "warn_if_structureless",
]


class LundInput(NamedTuple):
    """LUND's validated ``X`` and the neighbour lists its graph uses instead of the geometry's."""

    X: np.ndarray | sp.spmatrix
    #: The pixel windows' lists as a function of the features, or ``None``.
    neighbors: Callable | None


def check_image_shape(image_shape, n: int) -> tuple[int, int]:
    """``image_shape`` checked against the ``n`` rows of ``X``."""
    if image_shape is None:
        raise ValueError("spatial_radius and spatial_vote_radius need image_shape")
    shape = tuple(int(s) for s in image_shape)
    if len(shape) != 2 or shape[0] * shape[1] != n:
        raise ValueError(f"image_shape {image_shape} does not hold the {n} rows of X")
    return shape


def lund_input(est, X) -> LundInput:
    """LUND ``est``'s input validated (errors name LUND), with its pixel windows.

    Validation of the estimator's parameters and data, so it reads ``est``
    and sets its ``n_features_in_`` (and ``feature_names_in_``) as
    scikit-learn's ``validate_data`` does.
    """
    spatial = (est.image_shape, est.spatial_radius, est.spatial_vote_radius)
    if any(s is not None for s in spatial):
        check_metric_in(
            est.metric,
            ("euclidean",),
            type(est).__name__,
            "image_shape, spatial_radius and spatial_vote_radius (a pixel window of "
            "Euclidean neighbours)",
        )
    features = not takes_square_input(est)
    if est.spatial_radius is None:
        if features:
            # Validated here, so that errors name LUND and not the inner DiffusionMap.
            X = validate_data(est, X, dtype=np.float64, order="C", ensure_min_samples=2)
        else:
            check_not_complex(X, est)
        return LundInput(X, None)
    if not features:
        raise ValueError("spatial_radius needs affinity='gaussian' (features per pixel)")
    X = validate_data(est, X, dtype=np.float64, order="C", ensure_min_samples=2)
    # The pixel windows replace the geometry's lists; the geometry still bridges.
    shape = check_image_shape(est.image_shape, X.shape[0])
    return LundInput(X, pixel_windows(shape, int(est.spatial_radius), int(est.n_neighbors)))


def pixel_windows(shape: tuple[int, int], radius: int, k: int) -> Callable:
    """LUND's spatial neighbour lists as a function of the features."""
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


def reference_graphs(
    metric: str, settings: GraphSettings, **extra
) -> Callable[[np.ndarray, int], sp.csr_matrix]:
    """``graph(points, seed)``: the affinity ``W`` of a fit's graph pipeline on other points.

    ``settings`` are the fit's graph parameters and ``extra`` the other
    keywords of :func:`~geoforest.diffusion._kernel_graph.fit_graph` but
    ``random_state`` (the seed of each call); the forest among the settings
    is cloned for each call, so each reference grows its own.
    """

    def graph(points: np.ndarray, seed: int) -> sp.csr_matrix:
        fresh = None if settings.forest is None else clone(settings.forest)
        params = settings._replace(forest=fresh)._asdict()
        return fit_graph(points, metric, **params, random_state=seed, **extra).W

    return graph


def lund_levels(
    affinity: sp.csr_matrix,
    geometry: Geometry | None,
    reference_graph: Callable[[np.ndarray, int], sp.csr_matrix],
    max_clusters: int,
    random_state,
) -> Levels:
    """The levels of LUND's diffusion kernel ``W`` and the K they support (``selection="levels"``).

    The graph layer's one label-free rule
    (:func:`~geoforest.graph.label_free_levels`) on ``W``, the Gaussian
    references built by the same pipeline (``reference_graph``); a graph
    without coordinates (precomputed) has none, and the relative-gap rule
    decides.
    """
    n = affinity.shape[0]
    points = None if geometry is None else geometry.coordinates()
    seed = int(random_state) if isinstance(random_state, numbers.Integral) else 0
    return label_free_levels(
        affinity,
        min(int(max_clusters), n - 1),
        points=points,
        reference_graph=None if points is None else reference_graph,
        random_state=seed,
    )


def level_scores(levels: Levels, max_clusters: int) -> np.ndarray:
    """``n_clusters_scores_`` of a fit whose K the levels chose: their relative
    gaps, ``max_clusters`` long (NaN where not scored)."""
    scores = np.full(int(max_clusters), np.nan)
    scores[: levels.gaps.size] = levels.gaps
    return scores


def explain_lund_k(
    name: str,
    k: int,
    scores: np.ndarray,
    levels: Levels | None,
    *,
    n_clusters: int | None,
    max_clusters: int,
    random_state,
    affinity: sp.csr_matrix,
    geometry: Geometry | None,
    reference_graph: Callable[[np.ndarray, int], sp.csr_matrix],
    windowed: bool,
) -> np.ndarray | None:
    """Warn about a label-free K of ``LUND.fit`` (its caller) and return ``reference_excess_``.

    ``selection="levels"``: :func:`~geoforest.graph.explain_levels`, and the
    levels' excess.  ``"mode-ratio"``: the close-call warning of the mode-score
    ratios, then :func:`structure_check` against Gaussian references.
    """
    if levels is not None:
        explain_levels(name, levels, stacklevel=4)  # warn, here, fit, the user's line
        return levels.excess if levels.rule == "finest-level" else None
    if n_clusters is None:
        explain_choice(name, k, scores, criterion="mode-score ratio", stacklevel=4)
    return structure_check(
        name,
        k,
        n_clusters=n_clusters,
        max_clusters=max_clusters,
        random_state=random_state,
        affinity=affinity,
        geometry=geometry,
        reference_graph=reference_graph,
        windowed=windowed,
        stacklevel=4,
    )


def structure_check(
    name: str,
    k: int,
    *,
    n_clusters: int | None,
    max_clusters: int,
    random_state,
    affinity: sp.csr_matrix,
    geometry: Geometry | None,
    reference_graph: Callable[[np.ndarray, int], sp.csr_matrix],
    windowed: bool,
    stacklevel: int,
) -> np.ndarray | None:
    """``reference_excess_`` of a label-free LUND fit, warning when K >= 2 may be noise.

    ``stacklevel`` is the user's call as :func:`warnings.warn` counts from
    here.  ``None`` when K was given or is 1.
    """
    if n_clusters is not None or k < 2:
        return None
    seed = int(random_state) if isinstance(random_state, numbers.Integral) else 0
    excess = structureless_excess(
        affinity, geometry, reference_graph, max_clusters, seed, windowed=windowed
    )
    warn_if_structureless(name, k, excess, stacklevel)
    return excess


def structureless_excess(
    affinity: sp.csr_matrix,
    geometry: Geometry | None,
    reference_graph: Callable[[np.ndarray, int], sp.csr_matrix],
    max_k: int,
    seed: int,
    *,
    windowed: bool = False,
) -> np.ndarray | None:
    """The excess of each K over Gaussian references of LUND's diffusion kernel ``W``.

    :func:`~geoforest.graph.spectral_excess` of ``affinity`` (``W``) against
    the same graph (``reference_graph``: geometry, kernel, cutoff, bridges,
    pixel windows) built on points drawn from one Gaussian of the data's
    mean and covariance.  ``None`` when the graph has no coordinates to draw
    references from (a precomputed graph or affinity) or ``max_k < 2``.
    Entry ``K - 1`` holds ``s_K`` (NaN at K = 1).  ``windowed``: the graph
    uses pixel windows, which need every pixel (no subset).
    """
    n = affinity.shape[0]
    max_k = min(int(max_k), n - 1)
    if geometry is None or max_k < 2:
        return None
    X = geometry.coordinates()
    if X is None:  # distances only: no mean and covariance
        return None
    W = affinity
    if not windowed and n > REFERENCE_SAMPLES:
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
    ``stacklevel`` counts from the caller of this function.
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
