"""LLPD spectral clustering's numeric steps as functions: denoise, scan the scales, cluster.

:class:`~geoforest.LLPDSpectralClustering` validates its parameters, fits
the LLPD of all the points and of the kept ones (:class:`~geoforest.LLPD`),
calls these steps on their dendrograms with its parameters as arguments,
reports the label-free choice, and stores what they return.  No step reads
the estimator, so each can be called and tested with explicit settings.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._progress import progress
from ..graph import spectral_clustering, spectral_eigs
from ._dendrogram import Dendrogram, affinity_operator
from ._tree import Denoising, denoise_dendrogram

__all__ = [
    "ATOM_SCALE_RATIO",
    "LLPD_DENSE_MAX_N",
    "ScaleChoice",
    "cluster_at_scale",
    "denoise_points",
    "eigen_solver_for",
    "scale_grid",
    "scan_scales",
    "sigma_grid",
]

#: The last scale of :func:`sigma_grid` where the lowest positive merge height
#: leaves only groups of equal points: that height over this, at which the
#: kernel between the groups is ``exp(-9)``.
ATOM_SCALE_RATIO = 3.0
#: ``eigen_solver="auto"`` materialises LLPD's kernel ``W`` only up to this many
#: kept points.  Not the graph layer's ``AUTO_DENSE_MAX_N`` (1000, a sparse or
#: dense matrix already in memory): here ``W`` exists only as the dendrogram's
#: ``O(n)`` operator, and materialising it costs ``n`` products, so ARPACK on
#: the operator wins from far fewer points.
LLPD_DENSE_MAX_N = 200


class ScaleChoice(NamedTuple):
    """The scan of the scales and the ``(sigma, K)`` it chose (:func:`scan_scales`).

    Attributes
    ----------
    sigmas : ndarray
        The scales scanned, descending (``sigmas_``).
    sigma : float
        The scale chosen (``sigma_``).
    n_clusters : int
        The ``K`` chosen, or the one given (``n_clusters_``).
    eigenvalues : ndarray
        Leading eigenvalues at ``sigma``, descending (``eigenvalues_``).
    eigengaps : ndarray of shape (len(sigmas), max_clusters)
        ``lambda_K - lambda_(K+1)`` at every scale (``eigengaps_``).
    n_clusters_scores : ndarray of shape (max_clusters,)
        The largest eigengap after each ``K`` over the scales, NaN where not
        computed (``n_clusters_scores_``).
    seed : int
        The seed of the eigensolver at ``sigma``, which the spectral step
        reuses so that its embedding is the one the scan scored.
    """

    sigmas: np.ndarray
    sigma: float
    n_clusters: int
    eigenvalues: np.ndarray
    eigengaps: np.ndarray
    n_clusters_scores: np.ndarray
    seed: int


def sigma_grid(heights: np.ndarray, max_clusters: int, *, min_ratio: float = 1.5) -> np.ndarray:
    """Kernel scales between consecutive top merge heights of a dendrogram.

    With the distinct positive merge heights sorted descending,
    ``H_1 > H_2 > ...``, the candidates are the geometric means
    ``sqrt(H_j H_(j+1))`` for ``j = 1 .. max_clusters``.  The scale between
    ``H_j`` and ``H_(j+1)`` is the one at which the ``j + 1`` subtrees left by
    undoing the top ``j`` distinct merges are nearly disconnected from each
    other (``exp(-(H_j / sigma)^2)`` small) and cohesive inside
    (``exp(-(H_(j+1) / sigma)^2)`` near 1).  Below the last between-cluster
    merge the heights form a continuum and the candidates crowd together, so
    a candidate less than ``min_ratio`` times smaller than the last one kept
    is dropped (it would give the same spectrum, at the cost of one more
    eigensolve).

    Merges at height 0 join exact copies.  Where they leave at most
    ``max_clusters`` groups of equal points below the lowest positive height
    ``H_min`` (data of a few values, each repeated), that partition is a
    level too, cohesive at every scale, and no geometric mean of two
    positive heights separates it: the grid ends with
    ``H_min / ATOM_SCALE_RATIO``, at which the groups are nearly
    disconnected (``exp(-9)``).

    Parameters
    ----------
    heights : ndarray
        Merge heights (any order).
    max_clusters : int
        Largest number of clusters considered.
    min_ratio : float, default=1.5
        Smallest ratio between consecutive scales kept.

    Returns
    -------
    ndarray
        Scales, descending (at least one).

    Examples
    --------
    >>> sigma_grid(np.array([0.1, 0.1, 0.2, 4.0, 9.0]), 3)
    array([6.        , 0.89442719, 0.14142136])
    >>> sigma_grid(np.array([1.0, 1.1, 1.2, 1.3, 8.0]), 4)
    array([3.2249031, 1.2489996])

    Two values, three copies each (zero heights inside each):

    >>> sigma_grid(np.array([0.0, 0.0, 6.0, 0.0, 0.0]), 3)
    array([6., 2.])
    """
    all_heights = np.asarray(heights, dtype=np.float64).reshape(-1)
    h = np.unique(all_heights)
    h = h[np.isfinite(h) & (h > 0)][::-1]
    if h.size == 0:
        return np.ones(1)
    top = h[: max_clusters + 1]
    candidates = np.sqrt(top[:-1] * top[1:]) if h.size > 1 else h.copy()
    kept = [candidates[0]]
    for sigma in candidates[1:]:
        if kept[-1] >= min_ratio * sigma:
            kept.append(sigma)
    groups = all_heights.size + 1 - int(np.sum(all_heights == 0))  # of equal points
    if groups < all_heights.size + 1 and groups <= max_clusters:
        kept.append(h[-1] / ATOM_SCALE_RATIO)
    return np.array(kept)


def denoise_points(dendrogram: Dendrogram, *, k_nse: int, noise_threshold) -> Denoising:
    """The denoising of LLPD-SC: :func:`~geoforest.llpd._tree.denoise_dendrogram`, or none.

    ``noise_threshold=None`` keeps every point at threshold ``inf`` without
    reading the ``k_nse``-th neighbours (so ``k_nse`` is not checked): the
    user declined the denoising, and a rank above the data's size must not
    refuse a fit that does not use it.

    Parameters
    ----------
    dendrogram : Dendrogram
        The LLPD of all the points.
    k_nse : int
        Neighbour rank of the rule, in ``[1, n_samples - 1]``.
    noise_threshold : "auto", float or None
        The threshold ``theta`` of the rule, or ``None``.

    Returns
    -------
    Denoising
    """
    if noise_threshold is None:
        return Denoising(np.ones(dendrogram.n_samples, dtype=bool), float("inf"))
    return denoise_dendrogram(dendrogram, int(k_nse), noise_threshold)


def scale_grid(heights: np.ndarray, sigma, max_clusters: int) -> np.ndarray:
    """The scales to scan: the given ``sigma`` (descending), or :func:`sigma_grid` of ``heights``.

    Descending, so that the eigengap choice's ties go to the larger scale.

    Parameters
    ----------
    heights : ndarray
        The merge heights of the kept points' dendrogram.
    sigma : float, array-like of float or None
        The user's scale(s); ``None`` derives them from ``heights``.
    max_clusters : int
        Largest number of clusters the grid serves.

    Returns
    -------
    ndarray
        Scales, descending.

    Raises
    ------
    ValueError
        ``sigma`` is not one or more positive finite numbers.
    """
    if sigma is None:
        return sigma_grid(heights, int(max_clusters))
    sigmas = np.atleast_1d(np.asarray(sigma, dtype=np.float64))
    if sigmas.ndim != 1 or sigmas.size == 0 or not np.all(np.isfinite(sigmas) & (sigmas > 0)):
        raise ValueError(f"sigma must be positive finite numbers, got {sigma!r}")
    return np.sort(sigmas)[::-1]


def eigen_solver_for(eigen_solver: str, n: int) -> str:
    """The eigensolver of ``n`` kept points: ``"auto"`` is dense up to :data:`LLPD_DENSE_MAX_N`.

    The operator makes a product ``O(n)``, so ARPACK on it beats
    materialising ``W`` from far fewer points than for a matrix in memory.

    Parameters
    ----------
    eigen_solver : {"auto", "dense", "arpack", "lobpcg"}
        The estimator's ``eigen_solver``.
    n : int
        Kept points.

    Returns
    -------
    str
        The solver :func:`geoforest.graph.spectral_eigs` is given.
    """
    if eigen_solver == "auto":
        return "dense" if n <= LLPD_DENSE_MAX_N else "arpack"
    return eigen_solver


def _kernel(dendrogram: Dendrogram, sigma: float):
    """``x -> W x``, ``W = exp(-rho^2 / sigma^2)`` through the dendrogram (never ``n x n``)."""
    return affinity_operator(dendrogram, np.exp(-np.square(dendrogram.heights / float(sigma))))


def scan_scales(
    dendrogram: Dendrogram,
    *,
    sigma,
    n_clusters: int | None,
    max_clusters: int,
    eigen_solver: str,
    eigen_tol: float,
    random_state: np.random.RandomState,
    verbose: int,
) -> ScaleChoice:
    """Choose ``(sigma, K)`` by the largest eigengap of ``M = D^-1/2 W D^-1/2`` over the scales.

    At a scale between the merge heights of two levels of the dendrogram,
    the clusters below are nearly disconnected and ``M`` has one eigenvalue
    near 1 per cluster, then a gap; the largest gap over the scales and
    ``K = 1 .. max_clusters`` is the best-separated clustering (ties: the
    larger ``sigma``, then the smaller ``K``).

    Parameters
    ----------
    dendrogram : Dendrogram
        The LLPD of the kept points.
    sigma : float, array-like of float or None
        The scales to scan (:func:`scale_grid`).
    n_clusters : int or None
        ``None`` chooses ``K``; an integer only the scale, for that ``K``.
    max_clusters : int
        Largest ``K`` considered when choosing.
    eigen_solver : {"auto", "dense", "arpack", "lobpcg"}
        :func:`geoforest.graph.spectral_eigs`'s solver (:func:`eigen_solver_for`).
    eigen_tol : float
        Its tolerance.
    random_state : RandomState
        Draws one eigensolver seed per scale (after the checks).
    verbose : int
        A progress bar over the scales when positive.

    Returns
    -------
    ScaleChoice

    Raises
    ------
    ValueError
        ``sigma`` is not positive and finite; ``n_clusters`` exceeds the
        kept points.
    """
    n_kept = dendrogram.n_samples
    sigmas = scale_grid(dendrogram.heights, sigma, max_clusters)
    max_k = int(max_clusters if n_clusters is None else n_clusters)
    n_eigs = min(max_k + 1, n_kept - 1 if n_kept > 2 else 2)
    if n_clusters is not None and n_clusters > n_kept:
        raise ValueError(f"n_clusters={n_clusters} > {n_kept} points kept")
    solver = eigen_solver_for(eigen_solver, n_kept)
    table = np.zeros((sigmas.size, max_k + 1))
    seeds = random_state.randint(np.iinfo(np.int32).max, size=sigmas.size)
    for s, scale in enumerate(progress(sigmas, len(sigmas), verbose, "LLPD scales")):
        values, _ = spectral_eigs(
            _kernel(dendrogram, float(scale)),
            n_eigs,
            solver=solver,
            random_state=int(seeds[s]),
            tol=float(eigen_tol),
        )
        table[s, : values.size] = values
    gaps = table[:, :-1] - table[:, 1:]
    if n_clusters is None:
        gaps[:, n_eigs - 1 :] = -np.inf  # no lambda_(K+1) was computed
        flat = int(np.argmax(gaps))  # row-major: the larger sigma, then the smaller K
        best_s, k = np.unravel_index(flat, gaps.shape)
        k = int(k) + 1
    else:
        k = int(n_clusters)
        best_s = int(np.argmax(gaps[:, k - 1])) if k < n_eigs else 0
    with np.errstate(invalid="ignore"):
        k_scores = np.max(gaps[:, :max_k], axis=0)
    k_scores[~np.isfinite(k_scores)] = np.nan
    return ScaleChoice(
        sigmas=sigmas,
        sigma=float(sigmas[best_s]),
        n_clusters=k,
        eigenvalues=table[best_s, :n_eigs],
        eigengaps=gaps[:, :max_k],
        n_clusters_scores=k_scores,
        seed=int(seeds[best_s]),
    )


def cluster_at_scale(
    dendrogram: Dendrogram,
    kept: np.ndarray,
    *,
    sigma: float,
    n_clusters: int,
    n_init: int,
    eigen_solver: str,
    eigen_tol: float,
    seed: int,
) -> np.ndarray:
    """NJW spectral clustering of the kept points with LLPD's kernel at ``sigma``.

    Parameters
    ----------
    dendrogram : Dendrogram
        The LLPD of the kept points.
    kept : ndarray of shape (n_samples,), bool
        The points kept by the denoising, ``dendrogram.n_samples`` of them.
    sigma : float
        Kernel scale.
    n_clusters : int
        ``K``; ``1`` puts every kept point in cluster 0 without an eigensolve.
    n_init : int
        k-means restarts.
    eigen_solver : {"auto", "dense", "arpack", "lobpcg"}
        As for :func:`scan_scales`.
    eigen_tol : float
        Its tolerance.
    seed : int
        The seed of the eigensolver and k-means (the scan's at ``sigma``).

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Cluster of every point, ``-1`` for those not kept.
    """
    labels = np.full(kept.shape[0], -1, dtype=np.intp)
    if n_clusters == 1:
        labels[kept] = 0
        return labels
    result = spectral_clustering(
        _kernel(dendrogram, sigma),
        n_clusters=n_clusters,
        n_init=n_init,
        solver=eigen_solver_for(eigen_solver, dendrogram.n_samples),
        random_state=int(seed),
        tol=float(eigen_tol),
    )
    labels[kept] = result.labels
    return labels
