"""The leading eigenpairs of a diffusion map's random walk ``P = D^-1 W``.

``P`` is not symmetric, but ``M = D^{-1/2} W D^{-1/2}`` is and has the same
eigenvalues, so the library's symmetric eigensolvers (``graph/_eigensolvers.py``)
give the pairs of ``P`` (``docs/paths-and-diffusion.md``).  :func:`diffusion_eigenpairs`
chooses the solver, scales the eigenvectors of ``M`` to those of ``P`` and
recomputes them where that scaling would magnify the solver's error;
:class:`~geoforest.DiffusionMap` calls it from ``fit``.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..graph import AUTO_DENSE_MAX_N, walk_eigenpairs

__all__ = ["AUTO_DENSE_MAX_N", "Eigenpairs", "diffusion_eigenpairs"]

#: Eigenvalues smaller than this (in absolute value) are not used to re-average ``psi``.
_MIN_STABLE_EIGENVALUE = 1e-3


class Eigenpairs(NamedTuple):
    """The leading eigenpairs of a random walk, with the degrees and components they came from."""

    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    degree: np.ndarray
    n_graph_components: int


def diffusion_eigenpairs(
    W: sp.csr_matrix,
    n_components: int,
    eigen_solver: str,
    eigen_tol: float,
    random_state,
    normalization: str,
    *,
    stacklevel: int,
) -> Eigenpairs:
    """Leading eigenpairs of the random walk on the symmetric affinity ``W``.

    Warns (``UserWarning``, attributed ``stacklevel`` frames up from here:
    the caller says where the user's call is) when ``W`` has more than one
    connected component.

    Parameters
    ----------
    W : scipy.sparse.csr_matrix of shape (n, n)
        Symmetric non-negative affinity; every point needs an edge.
    n_components : int
        Eigenpairs to compute, ``<= n``.
    eigen_solver : {"auto", "dense", "shift-invert", "arpack", "lobpcg"}
        As :class:`~geoforest.DiffusionMap`'s ``eigen_solver``: ``"auto"`` is
        dense up to :data:`AUTO_DENSE_MAX_N` points, shift-invert above;
        every solver but ``"dense"`` falls back to it when ``n_components >= n``.
    eigen_tol : float
        Tolerance of the iterative solvers.
    random_state : int, RandomState instance or None
        Seeds the starting vector of the iterative solvers.
    normalization : {"textbook", "symmetric"}
        ``"textbook"``: the right eigenvectors ``psi`` of ``P``;
        ``"symmetric"``: the unit eigenvectors ``phi`` of ``M``.
    stacklevel : int
        Of the warning, as :func:`warnings.warn` counts it from here.

    Returns
    -------
    Eigenpairs
        ``eigenvalues`` (n_components,), descending; ``eigenvectors`` (n,
        n_components), ``psi`` or ``phi``, one column per eigenvalue;
        ``degree`` (n,), ``d = W 1``; ``n_graph_components``, the connected
        components of ``W``.
    """
    degree = np.asarray(W.sum(axis=1)).ravel()
    if np.any(degree <= 0):
        raise ValueError(
            f"{int(np.sum(degree <= 0))} point(s) have no edge in the affinity; "
            "the random walk is undefined there"
        )
    n_graph_components = int(connected_components(W, directed=False)[0])
    if n_graph_components > 1:
        warnings.warn(
            f"the affinity has {n_graph_components} connected components; "
            "each keeps eigenvalue 1 and its points stay apart at every t",
            UserWarning,
            stacklevel=stacklevel,
        )
    values, phi, degree = walk_eigenpairs(
        W, n_components, solver=eigen_solver, random_state=random_state, tol=eigen_tol
    )
    if normalization == "symmetric":
        return Eigenpairs(values, phi, degree, n_graph_components)
    psi = phi * np.sqrt(degree.sum() / degree)[:, None]
    # psi = P psi / lambda: recompute every value as the average of its neighbours'
    # (bounded, and exact for exact eigenvectors): docs/paths-and-diffusion.md.
    stable = np.abs(values) > _MIN_STABLE_EIGENVALUE
    if np.any(stable):
        P_psi = (W @ psi[:, stable]) / degree[:, None]
        psi[:, stable] = P_psi / values[stable]
    return Eigenpairs(values, psi, degree, n_graph_components)
