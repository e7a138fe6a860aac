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

import numpy as np
import scipy.sparse as sp

__all__ = ["nystrom_extend", "query_rows", "training_match"]


def nystrom_extend(dm, X, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nyström ``Psi_t`` of validated queries, their kernel density, their training match.

    Parameters
    ----------
    dm : DiffusionMap
        The fitted diffusion map.
    X : ndarray of shape (n_queries, n_features) or sparse (n_queries, n_samples)
        Queries already checked by ``dm._validate_query``.
    t : float
        Diffusion time, ``t >= 0``.

    Returns
    -------
    Y : ndarray of shape (n_queries, n_components)
        ``Psi_t`` of the queries.
    density : ndarray of shape (n_queries,)
        Kernel density, in the units of ``dm.kernel_density_``.
    match : ndarray of shape (n_queries,) of int
        The training point equal to each query (``-1`` for none), whose
        fitted values replace the formula's.
    """
    P, degree, density, match = query_rows(dm, X)
    lam = dm.eigenvalues_
    with np.errstate(divide="ignore", over="ignore"):
        # sign(lambda) |lambda|^t / lambda; a zero eigenvalue's coordinate is 0.
        coef = np.where(lam != 0, np.abs(lam) ** (t - 1.0), 0.0)
    if dm.normalization == "symmetric":
        Y = np.sqrt(degree)[:, None] * (P @ (dm.eigenvectors_ / np.sqrt(dm.degree_)[:, None]))
    else:
        Y = P @ dm.eigenvectors_
    Y = np.asarray(Y) * coef[None, :]
    hit = match >= 0
    if np.any(hit):
        Y[hit] = dm.eigenvectors_[match[hit]] * dm._power(t)[None, :]
        density[hit] = dm.kernel_density_[match[hit]]
    return Y, density, match


def query_rows(dm, X) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
    """Random-walk rows ``p(x, .)``, degrees ``sum_j k(x, j)``, densities, matches.

    Parameters
    ----------
    dm : DiffusionMap
        The fitted diffusion map, whose geometry (``geometry_.query``: each
        query's ``n_neighbors`` nearest training points, in every geometry)
        and kernel (``sigma_``, ``kernel``, ``cutoff``) weigh the edges from
        the queries; a given affinity's rows are used as they are.
    X : ndarray of shape (n_queries, n_features) or sparse (n_queries, n_samples)
        Queries already checked by ``dm._validate_query``.

    Returns
    -------
    P : scipy.sparse.csr_matrix of shape (n_queries, n_samples)
        Rows summing to 1.
    degree : ndarray of shape (n_queries,)
        Kernel weights summed over each row's edges.
    density : ndarray of shape (n_queries,)
        Kernel density (for a Gaussian kernel: over all ``n_neighbors``
        neighbours, before the cutoff).
    match : ndarray of shape (n_queries,) of int
        The training point equal to each row (:func:`training_match`), ``-1`` for none.
    """
    m = X.shape[0]
    if dm.geometry_ is None:  # a given affinity
        G = X
        rows = np.repeat(np.arange(m), np.diff(G.indptr))
        top = np.zeros(m)
        np.maximum.at(top, rows, G.data)
        _refuse_empty_rows(top > 0, "no positive affinity")
        # Divided by the row's largest entry first: sums of huge affinities stay finite.
        w = G.data / top[rows]
        P = sp.csr_matrix((w / np.bincount(rows, w, m)[rows], G.indices, G.indptr), G.shape)
        degree = np.asarray(G.sum(axis=1)).ravel()
        return P, degree, degree.copy(), np.full(m, -1, dtype=np.intp)
    dist, ind = dm.geometry_.query(X)
    dist = np.asarray(dist, dtype=np.float64)
    if not np.all(np.isfinite(dist)):
        raise ValueError(
            "X has values so far from the training data that their distances overflow float64"
        )
    match = training_match(dm.geometry_, X, dist, ind)
    sigma = dm.sigma_
    exponent = (dist / sigma) ** 2
    density = np.exp(-exponent).sum(axis=1)
    keep = np.ones(dist.shape, dtype=bool)
    if dm.kernel == "adaptive":
        k_local = min(int(dm.local_scale_neighbor), dist.shape[1]) - 1
        local = np.maximum(dist[:, k_local], 1e-300)
        exponent = (dist / local[:, None]) * (dist / dm._local_scale[ind])
    elif dm.cutoff is not None:
        keep = np.exp(-exponent) >= np.exp(-(float(dm.cutoff) ** 2))
        # No edge left: the one to the nearest training point, weighted like a bridge.
        lonely = ~keep.any(axis=1)
        keep[lonely, 0] = True
        exponent[lonely, 0] = np.minimum(dist[lonely, 0] / sigma, float(dm.cutoff)) ** 2
    indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))])
    G = sp.csr_matrix((exponent[keep], ind[keep], indptr), shape=(m, dm.eigenvectors_.shape[0]))
    rows = np.repeat(np.arange(m), np.diff(indptr))
    degree = np.bincount(rows, np.exp(-exponent[keep]), m)
    return _row_softmax(G, exponent[keep]), degree, density, match


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
