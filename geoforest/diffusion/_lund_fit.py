"""LUND's pipeline on a fitted diffusion map, as functions of explicit arguments.

:class:`~geoforest.LUND` validates its parameters, fits its diffusion map
(``_diffusion_fit.py``), passes the map's arrays and its own parameters to
:func:`fit_lund` and stores the fields of the :class:`LundFit` it returns:
the density and its order (steps 2 and 5 of the algorithm), the clustering
at the given time or the multiscale medoid (steps 3-5).  :func:`final_labels`
adds what the user gave (partial labels, the spatial vote) and
:func:`predict_rows` labels new points by the same rule.  Nothing here reads
an estimator, so each step can be run and checked on its own arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ._diffusion_fit import diffusion_coordinates
from ._lund_graph import check_image_shape
from ._lund_labels import (
    LundClustering,
    cluster_at_time,
    densest_copies,
    density_rank,
    nearest_given,
    spatial_majority_vote,
)
from ._lund_multiscale import multiscale_fit
from ._modes import _significant_mask, nearest_denser_to

__all__ = ["LundFit", "final_labels", "fit_lund", "lund_at_time", "predict_rows"]


class LundFit(NamedTuple):
    """What :func:`fit_lund` finds; :class:`~geoforest.LUND` stores it.

    ``density`` is ``density_``; ``rank`` (strict density order, 0 =
    densest) and ``twin`` (each point's densest copy) are kept privately for
    :meth:`~geoforest.LUND.labels_at`, ``predict`` and ``query``;
    ``clustering`` holds ``t_``, ``rho_``, ``parent_``, ``scores_``,
    ``modes_``, ``n_clusters_``, ``n_clusters_scores_`` and the
    unsupervised labels; ``multiscale`` is ``multiscale_``.
    """

    density: np.ndarray
    rank: np.ndarray
    twin: np.ndarray
    clustering: LundClustering
    multiscale: dict | None


def lund_at_time(
    eigenvectors: np.ndarray,
    eigenvalues: np.ndarray,
    density: np.ndarray,
    rank: np.ndarray,
    t: float,
    *,
    n_search: int,
    max_clusters: int,
    n_clusters: int | None,
    twin: np.ndarray | None,
) -> LundClustering:
    """Steps 3-5 at diffusion time ``t`` (:func:`cluster_at_time` on ``Psi_t``)."""
    return cluster_at_time(
        diffusion_coordinates(eigenvectors, eigenvalues, t),
        density,
        rank,
        t,
        n_search=int(n_search),
        max_clusters=int(max_clusters),
        n_clusters=n_clusters,
        twin=twin,
    )


def fit_lund(
    eigenvectors: np.ndarray,
    eigenvalues: np.ndarray,
    kernel_density: np.ndarray,
    knn_distances: np.ndarray | None,
    knn_indices: np.ndarray | None,
    *,
    t: float | str,
    n_clusters: int | None,
    max_clusters: int,
    max_log2_t: int,
    n_search: int,
    verbose,
) -> LundFit:
    """LUND's unsupervised clustering of a fitted diffusion map.

    Parameters
    ----------
    eigenvectors, eigenvalues, kernel_density
        The diffusion map's (``eigenvectors_``, ``eigenvalues_``,
        ``kernel_density_``): ``Psi_t`` at any time and the density.
    knn_distances, knn_indices
        Its kNN lists (``None`` for a given affinity), where copies of a
        point are found (:func:`densest_copies`).
    t : float or "multiscale"
        The diffusion time, or the medoid over the times of
        :func:`~geoforest.diffusion._lund_multiscale.multiscale_times`.
    n_clusters, max_clusters, max_log2_t, n_search, verbose
        LUND's parameters of the same names.

    Returns
    -------
    LundFit
    """
    density = kernel_density / kernel_density.sum()
    rank = density_rank(density)
    twin = densest_copies(knn_distances, knn_indices, rank)

    def at_time(time: float) -> LundClustering:
        return lund_at_time(
            eigenvectors,
            eigenvalues,
            density,
            rank,
            time,
            n_search=n_search,
            max_clusters=max_clusters,
            n_clusters=n_clusters,
            twin=twin,
        )

    if t == "multiscale":
        clustering, record = multiscale_fit(at_time, eigenvalues, int(max_log2_t), verbose)
        return LundFit(density, rank, twin, clustering, record)
    return LundFit(density, rank, twin, at_time(float(t)), None)


def final_labels(
    labels: np.ndarray,
    y_partial: np.ndarray | None,
    semi_supervised: Callable[[np.ndarray], np.ndarray],
    *,
    image_shape,
    vote_radius: int | None,
) -> np.ndarray:
    """``labels_``: the unsupervised ``labels``, with partial labels propagated, then voted.

    Partial labels (any ``>= 0`` in ``y_partial``) relabel the clustering
    by ``semi_supervised(y_partial)`` (:func:`semi_supervised_labels` on the
    fitted clustering, which ``query`` uses as well); ``vote_radius``
    (LUND's ``spatial_vote_radius``) applies :func:`spatial_majority_vote`
    on the image of shape ``image_shape``.
    """
    if y_partial is not None and np.any(y_partial >= 0):
        labels = semi_supervised(y_partial)
    if vote_radius is not None:
        shape = check_image_shape(image_shape, labels.size)
        labels = spatial_majority_vote(labels, shape, int(vote_radius))
    return labels


def predict_rows(
    Yq: np.ndarray,
    density_q: np.ndarray,
    Y: np.ndarray,
    density: np.ndarray,
    labels: np.ndarray,
    y_partial: np.ndarray | None,
    n_search: int,
) -> np.ndarray:
    """Labels of new rows ``Yq`` of ``Psi_t`` with densities ``density_q`` (LUND.predict).

    Each takes the label (in ``labels``, LUND's ``labels_``) of its
    ``D_t``-nearest training point of higher density among the rows ``Y``
    of the training points, searched in the columns the fit searched; after
    partial labels ``y_partial``, the nearest given label wins when nearer.
    """
    keep = _significant_mask(Y)  # the columns fit searched
    Y, Yq = np.ascontiguousarray(Y[:, keep]), np.ascontiguousarray(Yq[:, keep])
    dist, parent = nearest_denser_to(Yq, density_q, Y, density, int(n_search))
    out = labels[parent]
    if y_partial is not None and np.any(y_partial >= 0):
        known = np.flatnonzero(y_partial >= 0)
        j, given_dist = nearest_given(Yq, Y, known)
        nearer = given_dist < dist
        out[nearer] = y_partial[known[j[nearer]]]
    return out
