"""The Nyström extension of a fitted diffusion map to new points.

An eigenvector of the random walk ``P`` is its own neighbourhood average,
``psi_l(i) = (1 / lambda_l) sum_j P_ij psi_l(j)``; the right-hand side is
defined for a new point ``x`` as soon as its random-walk row ``p(x, .)`` to
the training points is (derived in ``docs/paths-and-diffusion.md``).
:func:`query_rows` builds those rows from the fitted kernel (from the
geometry's neighbour lists of the queries, or a given affinity's rows), and
:func:`nystrom_extend` turns them into ``Psi_t(x)``.
:meth:`DiffusionMap.transform <geoforest.DiffusionMap.transform>` and
:meth:`LUND.predict <geoforest.LUND.predict>` use both.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..graph import Geometry
from ._diffusion_fit import diffusion_power

__all__ = [
    "NystromExtension",
    "QueryRows",
    "nystrom_extend",
    "query_rows",
    "training_match",
]


class QueryRows(NamedTuple):
    """The random walk from new points into a fitted graph (:func:`query_rows`)."""

    #: Rows ``p(x, .)`` of shape (n_queries, n_samples), each summing to 1.
    P: sp.csr_matrix
    #: Kernel weights summed over each row's edges, ``sum_j k(x, j)``.
    degree: np.ndarray
    #: Kernel density (for a Gaussian kernel: over all ``n_neighbors``
    #: neighbours, before the cutoff), in the units of the fitted ``kernel_density_``.
    density: np.ndarray
    #: The training point equal to each row (:func:`training_match`), ``-1`` for none.
    match: np.ndarray


class NystromExtension(NamedTuple):
    """New points in a fitted diffusion map (:func:`nystrom_extend`)."""

    #: ``Psi_t`` of the queries, shape (n_queries, n_components).
    embedding: np.ndarray
    #: Kernel density, in the units of the fitted ``kernel_density_``.
    density: np.ndarray
    #: The training point equal to each query (``-1`` for none), whose fitted
    #: values replace the formula's.
    match: np.ndarray


def nystrom_extend(
    X,
    t: float,
    *,
    geometry: Geometry | None,
    eigenvalues: np.ndarray,
    eigenvectors: np.ndarray,
    degree: np.ndarray,
    kernel_density: np.ndarray,
    local_scale: np.ndarray | None,
    sigma: float,
    kernel: str,
    local_scale_neighbor: int,
    cutoff: float | None,
    normalization: str,
) -> NystromExtension:
    """Nyström ``Psi_t`` of validated queries, their kernel density, their training match.

    Every fitted array it reads is an argument, so that the extension is one
    formula of the fit's results (``DiffusionMap.transform`` and
    ``LUND.predict`` pass their own).

    Parameters
    ----------
    X : ndarray of shape (n_queries, n_features) or sparse (n_queries, n_samples)
        Queries already checked by ``DiffusionMap._validate_query``.
    t : float
        Diffusion time, ``t >= 0``.
    geometry, eigenvalues, eigenvectors, degree, kernel_density, local_scale, sigma
        The fit's results (:class:`~geoforest.diffusion._diffusion_fit.DiffusionFit`).
    kernel, local_scale_neighbor, cutoff, normalization
        The fitted map's parameters of the same names.

    Returns
    -------
    NystromExtension
    """
    P, q_degree, density, match = query_rows(
        X,
        geometry=geometry,
        n_samples=eigenvectors.shape[0],
        local_scale=local_scale,
        sigma=sigma,
        kernel=kernel,
        local_scale_neighbor=local_scale_neighbor,
        cutoff=cutoff,
    )
    lam = eigenvalues
    with np.errstate(divide="ignore", over="ignore"):
        # sign(lambda) |lambda|^t / lambda; a zero eigenvalue's coordinate is 0.
        coef = np.where(lam != 0, np.abs(lam) ** (t - 1.0), 0.0)
    if normalization == "symmetric":
        Y = np.sqrt(q_degree)[:, None] * (P @ (eigenvectors / np.sqrt(degree)[:, None]))
    else:
        Y = P @ eigenvectors
    Y = np.asarray(Y) * coef[None, :]
    hit = match >= 0
    if np.any(hit):
        Y[hit] = eigenvectors[match[hit]] * diffusion_power(eigenvalues, t)[None, :]
        density[hit] = kernel_density[match[hit]]
    return NystromExtension(Y, density, match)


def query_rows(
    X,
    *,
    geometry: Geometry | None,
    n_samples: int,
    local_scale: np.ndarray | None,
    sigma: float,
    kernel: str,
    local_scale_neighbor: int,
    cutoff: float | None,
) -> QueryRows:
    """Random-walk rows ``p(x, .)``, degrees ``sum_j k(x, j)``, densities, matches.

    Parameters
    ----------
    X : ndarray of shape (n_queries, n_features) or sparse (n_queries, n_samples)
        Queries already checked by ``DiffusionMap._validate_query``.
    geometry : Geometry or None
        The fitted geometry, whose ``query`` gives each query's
        ``n_neighbors`` nearest training points (in every geometry); ``None``
        for a given affinity, whose rows are used as they are.
    n_samples : int
        Training points (the rows' length).
    local_scale : ndarray of shape (n_samples,) or None
        The training points' local scales of ``kernel="adaptive"``.
    sigma : float
        The fitted kernel scale.
    kernel, local_scale_neighbor, cutoff
        The fitted map's kernel parameters: the queries' edges are weighed
        as the training graph's were.

    Returns
    -------
    QueryRows
    """
    m = X.shape[0]
    if geometry is None:  # a given affinity
        G = X
        rows = np.repeat(np.arange(m), np.diff(G.indptr))
        top = np.zeros(m)
        np.maximum.at(top, rows, G.data)
        _refuse_empty_rows(top > 0, "no positive affinity")
        # Divided by the row's largest entry first: sums of huge affinities stay finite.
        w = G.data / top[rows]
        P = sp.csr_matrix((w / np.bincount(rows, w, m)[rows], G.indices, G.indptr), G.shape)
        degree = np.asarray(G.sum(axis=1)).ravel()
        return QueryRows(P, degree, degree.copy(), np.full(m, -1, dtype=np.intp))
    dist, ind = geometry.query(X)
    dist = np.asarray(dist, dtype=np.float64)
    if not np.all(np.isfinite(dist)):
        raise ValueError(
            "X has values so far from the training data that their distances overflow float64"
        )
    match = training_match(geometry, X, dist, ind)
    exponent = (dist / sigma) ** 2
    density = np.exp(-exponent).sum(axis=1)
    keep = np.ones(dist.shape, dtype=bool)
    if kernel == "adaptive":
        k_local = min(int(local_scale_neighbor), dist.shape[1]) - 1
        local = np.maximum(dist[:, k_local], 1e-300)
        exponent = (dist / local[:, None]) * (dist / local_scale[ind])
    elif cutoff is not None:
        keep = np.exp(-exponent) >= np.exp(-(float(cutoff) ** 2))
        # No edge left: the one to the nearest training point, weighted like a bridge.
        lonely = ~keep.any(axis=1)
        keep[lonely, 0] = True
        exponent[lonely, 0] = np.minimum(dist[lonely, 0] / sigma, float(cutoff)) ** 2
    indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))])
    G = sp.csr_matrix((exponent[keep], ind[keep], indptr), shape=(m, n_samples))
    rows = np.repeat(np.arange(m), np.diff(indptr))
    degree = np.bincount(rows, np.exp(-exponent[keep]), m)
    return QueryRows(_row_softmax(G, exponent[keep]), degree, density, match)


def training_match(geometry, X, dist: np.ndarray, ind: np.ndarray) -> np.ndarray:
    """The training point each query equals, ``-1`` for none.

    Among a query's listed neighbours (``geometry.query``), the first whose
    coordinates equal the query's (compared exactly in the user's units: a
    brute-force distance to itself can be 1e-7, not 0); for a graph without
    coordinates (precomputed distances), the first at distance 0.
    """
    match = np.full(dist.shape[0], -1, dtype=np.intp)
    # A cheap, loose filter before the exact comparison: rounding in a distance to
    # itself grows with the coordinates' size, not with the neighbours' distances
    # (with one neighbour listed, the last listed is the point itself).
    size = np.abs(np.asarray(X, dtype=np.float64)).max(axis=1) if not sp.issparse(X) else 0.0
    near = np.flatnonzero(dist[:, 0] <= 1e-6 * (dist[:, -1] + size))
    if near.size == 0:
        return match
    try:
        points = geometry.training_points(ind[near])
    except NotImplementedError:  # distances only: a stored 0 is a copy
        equal = dist[near] == 0
    else:
        equal = np.all(np.asarray(X)[near, None, :] == points, axis=2)
    found = equal.any(axis=1)
    match[near[found]] = ind[near[found], np.argmax(equal[found], axis=1)]
    return match


def _refuse_empty_rows(ok: np.ndarray, what: str) -> None:
    if not np.all(ok):
        bad = np.flatnonzero(~ok)
        raise ValueError(
            f"{bad.size} row(s) of X (first: {int(bad[0])}) have {what} to the training "
            "points; the random walk from them is undefined"
        )


def _row_softmax(G: sp.csr_matrix, exponent: np.ndarray) -> sp.csr_matrix:
    """Rows ``exp(-a_j) / sum_j exp(-a_j)`` over the stored entries, without underflow."""
    rows = np.repeat(np.arange(G.shape[0]), np.diff(G.indptr))
    low = np.full(G.shape[0], np.inf)
    np.minimum.at(low, rows, exponent)
    # exp(-(a - min a)); equal exponents (infinite ones too) weigh 1.
    w = np.exp(-np.where(exponent == low[rows], 0.0, exponent - low[rows]))
    total = np.bincount(rows, weights=w, minlength=G.shape[0])
    return sp.csr_matrix((w / total[rows], G.indices, G.indptr), shape=G.shape)
