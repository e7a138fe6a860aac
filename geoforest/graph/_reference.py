"""Cluster structure against a structureless reference: a graph spectrum's excess.

The relative spectral gap (:func:`~geoforest.graph.choose_by_relative_gap`)
finds K where one eigenvalue of the normalised Laplacian stands far above the
one before it.  Many classes that touch give no such step: their smallest
eigenvalues fall gradually (vowel, the digits), as those of one Gaussian blob
do, and the gap says K = 1.  What tells them apart is how low the spectrum
lies.  Data drawn from one Gaussian with the data's mean and covariance, run
through the same geometry, show what the first eigenvalues of a graph of
this size and dimension are without clusters; clusters press the first K of
them below that reference.  The *excess* of ``K`` is::

    s_K = log( mean over references of mu_K(reference) / mu_K(data) )

(``mu_K`` the K-th smallest eigenvalue of the normalised Laplacian): near 0
for structureless data, large for the first K of clustered data.
:func:`choose_by_excess` takes the largest K whose excess reaches
:data:`MIN_EXCESS`: the last level at which the data are clearly more
clustered than the reference (K = 1 when none is).  The bar was chosen on the
selection half of the clustering suite (``docs/defaults.md``); the statistic
is in the spirit of the gap statistic of Tibshirani, Walther and Hastie
(2001), with the graph spectrum in place of the within-cluster dispersion.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ._eigensolvers import spectral_eigs
from ._knn import feature_scale

__all__ = [
    "MIN_EXCESS",
    "N_REFERENCES",
    "choose_by_excess",
    "gaussian_reference",
    "mixture_reference",
    "reference_spectra",
    "spectral_excess",
    "uniform_reference",
]

#: Gaussian references drawn per fit.
N_REFERENCES = 2
#: The excess a K must reach: below it at every K, the data are no more clustered
#: than one Gaussian (K = 1).
MIN_EXCESS = 0.5
#: Above this many features the references use the per-feature variances only
#: (a full covariance would be ``p x p``).
FULL_COVARIANCE_MAX_FEATURES = 2000


def _laplacian_spectrum(A, n_eigs: int, seed: int, tol: float = 0.0) -> np.ndarray:
    """The ``n_eigs`` smallest eigenvalues ``mu`` of the normalised Laplacian, ascending."""
    values, _ = spectral_eigs(A, n_eigs, random_state=seed, tol=tol)
    return _smallest_mu(values, n_eigs)


def _smallest_mu(values, n_eigs: int) -> np.ndarray:
    """``mu = 1 - lambda`` of the ``n_eigs`` largest ``lambda``, ascending, floored above 0."""
    values = np.sort(np.asarray(values, dtype=np.float64).reshape(-1))[::-1][:n_eigs]
    if values.size < n_eigs:
        raise ValueError(f"eigenvalues has {values.size} entries, fewer than {n_eigs}")
    return np.maximum(1.0 - values, np.finfo(np.float64).tiny)


def gaussian_reference(X, rng) -> np.ndarray:
    """Points from one Gaussian with the mean and covariance of ``X`` (same shape).

    The structureless reference of :func:`spectral_excess`: what a graph of
    this many points in this spread looks like without clusters.  Above
    ``FULL_COVARIANCE_MAX_FEATURES`` (2,000) features only the per-feature
    variances are kept (a full covariance would be ``p x p``).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite real data, at least one row.
    rng : int, RandomState instance or None
        The draw's seed or generator (:func:`sklearn.utils.check_random_state`).

    Returns
    -------
    ndarray of shape (n_samples, n_features)

    Raises
    ------
    ValueError
        ``X`` not 2-D, empty, complex or not finite.

    Examples
    --------
    >>> X = np.random.RandomState(0).normal([5.0, -3.0], [1.0, 4.0], size=(4000, 2))
    >>> R = gaussian_reference(X, 0)
    >>> R.shape, np.allclose(R.mean(axis=0), X.mean(axis=0), atol=0.2)
    ((4000, 2), True)
    """
    return _reference_points(X, rng, "gaussian_reference", _gaussian_points)


def _gaussian_points(X: np.ndarray, rng) -> np.ndarray:
    mean = X.mean(axis=0)
    if X.shape[1] <= FULL_COVARIANCE_MAX_FEATURES and X.shape[0] > 1:
        cov = np.atleast_2d(np.cov(X, rowvar=False))
        try:
            R = rng.multivariate_normal(mean, cov, size=X.shape[0])
        except np.linalg.LinAlgError:
            # LAPACK's SVD, which multivariate_normal factors with, can fail to
            # converge on a nearly singular covariance; the symmetric
            # eigendecomposition is the robust factor of the same matrix.
            R = _along_axes(mean, cov, rng.standard_normal(X.shape))
    else:
        R = mean + rng.standard_normal(X.shape) * X.std(axis=0)
    return _constant_columns_kept(X, R)


def _constant_columns_kept(X: np.ndarray, R: np.ndarray) -> np.ndarray:
    """``R`` with each column that is constant in ``X`` set to that constant.

    The mean of equal values can round off them by an ulp, which leaves the
    covariance rounding noise; drawn with it, a part of equal rows (an atom
    of copies) became distinct points that a float32 forest merged again,
    where the reference of an atom is that atom.  The other columns keep
    their draw from the full covariance.
    """
    constant = np.all(X == X[0], axis=0)
    R[:, constant] = X[0, constant]
    return R


def _along_axes(mean: np.ndarray, cov: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """``unit`` (draws of mean 0 and variance 1, one column per axis) laid along the
    principal axes of ``cov`` (``eigh``; rounding's negative eigenvalues clipped
    to 0) with their spreads, around ``mean``."""
    values, vectors = np.linalg.eigh(cov)
    return mean + (unit * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T


def _reference_points(X, rng, who: str, draw) -> np.ndarray:
    """``draw(X, rng)`` for the checked ``X``; where squares of ``X`` would leave
    float64, for ``X / 2^k`` scaled back (both exact)."""
    X = _checked_points(X, who)
    rng = check_random_state(rng)
    scale = feature_scale(X)
    return draw(X, rng) if scale == 1.0 else draw(X / scale, rng) * scale


def uniform_reference(X, rng) -> np.ndarray:
    """Points spread uniformly over a box on the principal axes of ``X`` (same shape).

    The box is centred on the data's mean, aligned with their principal axes
    and as wide along each as a uniform law of the same variance
    (``±sqrt(3)`` standard deviations), so it has the data's mean and
    covariance, as :func:`gaussian_reference` does, but a flat density and
    sharp edges.  Why a second null: a Gaussian cloud thins out into tails
    that a neighbour graph cuts easily, so data flatter than a Gaussian (a
    uniform cube, a uniform background) look *more* clustered than their
    Gaussian reference, and a weak spectral step in them passes the Gaussian
    test alone (``docs/results/label-free-levels.md``).  The principal-axes
    box of the gap statistic (Tibshirani, Walther and Hastie 2001, reference
    (b)), with the box widths set by the variances rather than the ranges, so
    that one outlier does not stretch it.  Above
    ``FULL_COVARIANCE_MAX_FEATURES`` features the box is aligned with the
    coordinate axes.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite real data, at least one row.
    rng : int, RandomState instance or None
        The draw's seed or generator (:func:`sklearn.utils.check_random_state`).

    Returns
    -------
    ndarray of shape (n_samples, n_features)

    Raises
    ------
    ValueError
        ``X`` not 2-D, empty, complex or not finite.

    Examples
    --------
    The same spread as Gaussian data, over a range of ``2 sqrt(3)``
    standard deviations where the Gaussian's reaches about 7:

    >>> X = np.random.RandomState(0).normal([5.0, -3.0], [1.0, 4.0], size=(4000, 2))
    >>> R = uniform_reference(X, 0)
    >>> np.allclose(np.cov(R, rowvar=False), np.cov(X, rowvar=False), atol=0.5)
    True
    >>> def width(P):
    ...     return np.ptp(P, axis=0) / P.std(axis=0)
    >>> np.round(width(R), 2), np.round(width(X), 1)
    (array([3.46, 3.46]), array([7.6, 7. ]))
    """
    return _reference_points(X, rng, "uniform_reference", _uniform_points)


def _uniform_points(X: np.ndarray, rng) -> np.ndarray:
    half_width = np.sqrt(3.0)  # a uniform law on [-sqrt 3, sqrt 3] has variance 1
    unit = rng.uniform(-half_width, half_width, size=X.shape)
    if X.shape[1] <= FULL_COVARIANCE_MAX_FEATURES and X.shape[0] > 1:
        R = _along_axes(X.mean(axis=0), np.atleast_2d(np.cov(X, rowvar=False)), unit)
    else:
        R = X.mean(axis=0) + unit * X.std(axis=0)
    return _constant_columns_kept(X, R)


def _checked_points(X, who: str) -> np.ndarray:
    """``X`` as finite real float64 of shape (n >= 1, p >= 1), or a ``ValueError``."""
    if np.iscomplexobj(X):
        raise ValueError(f"{who}: complex data are not supported")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{who}: X must be 2-D and non-empty, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{who}: X has NaN or infinite values")
    return X


def mixture_reference(X, labels, rng) -> np.ndarray:
    """Points from one Gaussian per part of ``X`` (same shape, same rows per part).

    Row ``i`` of the result is drawn from the Gaussian with the mean and
    covariance of its part ``labels == labels[i]`` (:func:`gaussian_reference`
    of the part).  The reference for levels finer than a partition already
    found: structureless *within* each part, so one part standing far from
    the others does not elongate the reference as one Gaussian of the whole
    set would (its graph would then be nearly cut in two, and the finer
    levels' excess would vanish).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite real data.
    labels : array-like of shape (n_samples,)
        The parts.
    rng : int, RandomState instance or None

    Returns
    -------
    ndarray of shape (n_samples, n_features)

    Raises
    ------
    ValueError
        ``X`` as :func:`gaussian_reference` refuses it, or ``labels`` not one
        per row.

    Examples
    --------
    >>> X = np.r_[np.zeros((500, 2)), np.full((500, 2), 50.0)]
    >>> X += np.random.RandomState(0).normal(size=X.shape)
    >>> R = mixture_reference(X, np.repeat([0, 1], 500), 0)
    >>> bool(np.all(R[:500, 0] < 25) and np.all(R[500:, 0] > 25))
    True
    """
    X = np.asarray(X)
    labels = np.asarray(labels).reshape(-1)
    if labels.shape[0] != np.shape(X)[0]:
        raise ValueError(f"mixture_reference: {labels.shape[0]} labels for {np.shape(X)[0]} rows")
    return _per_part(X, labels, check_random_state(rng), gaussian_reference)


def _per_part(X, labels: np.ndarray, rng, draw) -> np.ndarray:
    """``draw(X[part], rng)`` for every part of ``labels``, in the parts' rows."""
    if labels.size == 0:
        return draw(X, rng)  # refuses the empty data, as for one part
    parts = [np.flatnonzero(labels == part) for part in np.unique(labels)]
    drawn = [draw(X[rows], rng) for rows in parts]
    R = np.empty((labels.shape[0], drawn[0].shape[1]))
    for rows, points in zip(parts, drawn, strict=True):
        R[rows] = points
    return R


def spectral_excess(
    A: sp.spmatrix,
    X: np.ndarray,
    build_graph: Callable[[np.ndarray, int], sp.spmatrix],
    max_clusters: int,
    seed: int,
    n_references: int = N_REFERENCES,
    *,
    eigenvalues=None,
    labels=None,
    tol: float = 0.0,
    null: str = "gaussian",
) -> np.ndarray:
    """The excess of each K from 2 to ``max_clusters`` over structureless references.

    ``s_K = log(mean mu_K(reference) / mu_K(data))``, as the module docstring
    derives.

    Parameters
    ----------
    A : sparse matrix of shape (n, n)
        The data's graph (symmetric affinity).
    X : ndarray of shape (n, p)
        The data it was built from.
    build_graph : callable ``(points, seed) -> affinity``
        The same geometry and weights, applied to reference points.
    max_clusters : int
    seed : int
    n_references : int, default=2
    eigenvalues : array-like or None, default=None
        Leading eigenvalues ``lambda`` of ``A``'s normalised affinity (any
        order, at least ``max_clusters``) when already computed, as
        :func:`~geoforest.graph.spectral_partitions` returns them; ``None``
        solves for them.
    labels : array-like of shape (n,) or None, default=None
        Parts of the data: the references are then mixtures of one Gaussian
        per part (:func:`mixture_reference`); ``None``: one Gaussian of the
        whole set.
    tol : float, default=0.0
        Eigensolver tolerance of every spectrum solved here (``0``: machine
        precision), as :func:`~geoforest.graph.spectral_eigs`.  Solve the
        references as the data were solved: at machine precision a
        reference graph whose spectrum decays slowly (a Gaussian cloud in
        five or more dimensions) exhausts Lanczos's budget and falls back
        to a sparse LU that fills in.
    null : {"gaussian", "uniform"}, default="gaussian"
        The references' law: one Gaussian of the data's mean and covariance
        (:func:`gaussian_reference`), or a uniform box on their principal
        axes (:func:`uniform_reference`); with ``labels``, one per part.

    Returns
    -------
    ndarray of shape (max_clusters - 1,)
        Entry ``K - 2`` is ``s_K``.
    """
    if (
        isinstance(tol, bool)
        or not isinstance(tol, numbers.Real)
        or not np.isfinite(tol)
        or tol < 0
    ):
        raise ValueError(f"spectral_excess: tol must be a finite number >= 0, got {tol!r}")
    draws = {"gaussian": gaussian_reference, "uniform": uniform_reference}
    if not isinstance(null, str) or null not in draws:
        raise ValueError(f"spectral_excess: null must be 'gaussian' or 'uniform', got {null!r}")
    draw = draws[null]
    if labels is not None:
        labels = np.asarray(labels).reshape(-1)
        if labels.shape[0] != np.shape(X)[0]:
            raise ValueError(f"spectral_excess: {labels.shape[0]} labels for {np.shape(X)[0]} rows")
    n_eigs = int(max_clusters)
    if eigenvalues is None:
        mu = _laplacian_spectrum(A, n_eigs, seed, tol)
    else:
        mu = _smallest_mu(eigenvalues, n_eigs)
    refs = reference_spectra(
        X, build_graph, n_eigs, seed, range(int(n_references)), labels=labels, tol=tol, draw=draw
    )
    return np.log(np.mean(refs, axis=0)[1:] / mu[1:])


def reference_spectra(
    X,
    build_graph: Callable[[np.ndarray, int], sp.spmatrix],
    n_eigs: int,
    seed: int,
    which: range,
    *,
    labels=None,
    tol: float = 0.0,
    draw: Callable = gaussian_reference,
) -> list[np.ndarray]:
    """The ``n_eigs`` smallest eigenvalues of references ``which`` of the
    sequence :func:`spectral_excess` draws (checked inputs).

    Reference ``r`` is the ``r``-th draw of ``RandomState(seed)`` (per part
    with ``labels``), its graph and eigensolver seeded ``seed + 1 + r``.  The
    draws before ``which.start`` are replayed (points only, no graph), so a
    caller that draws the first reference, then the second only when it is
    needed (:func:`~geoforest.graph.label_free_levels`), gets exactly the
    references of one call for both.
    """
    rng = np.random.RandomState(seed)
    spectra = []
    for r in range(which.stop):
        R = draw(X, rng) if labels is None else _per_part(X, labels, rng, draw)
        if r >= which.start:
            graph = build_graph(R, seed + 1 + r)
            spectra.append(_laplacian_spectrum(graph, n_eigs, seed + 1 + r, tol))
    return spectra


def choose_by_excess(excess, *, min_excess: float = MIN_EXCESS) -> int:
    """The number of clusters from the excesses: the last K whose excess reaches the bar.

    ``excess`` holds ``s_K`` for ``K = 2, 3`` and on; the answer is the largest
    K with ``s_K >= min_excess``, or 1 when there is none.

    Examples
    --------
    >>> choose_by_excess([2.0, 1.4, 0.9, 0.3, 0.1])
    4
    >>> choose_by_excess([0.1, -0.2, 0.15])
    1
    """
    s = np.asarray(excess, dtype=np.float64)
    above = np.flatnonzero(np.isfinite(s) & (s >= min_excess))
    return int(above.max()) + 2 if above.size else 1
