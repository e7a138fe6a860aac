"""The fit of a diffusion map as one function of explicit arguments.

:class:`~geoforest.DiffusionMap` validates its parameters and input, calls
:func:`fit_diffusion` with them and stores the fields of the returned
:class:`DiffusionFit` as its fitted attributes; :class:`~geoforest.LUND`
reaches the same function through its own diffusion map.  Keeping the
numeric pipeline free of the estimator lets it be called, tested and reused
(on reference points, on pixel windows) without building an estimator, and
makes what a fit depends on visible in one signature:
``geometry → kNN lists → Gaussian weights (_kernel_graph.py) → symmetrised,
bridged graph → eigenpairs (_eigenpairs.py)``.  :func:`diffusion_coordinates`
is ``Psi_t`` of the result at any time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..graph import Geometry
from ._eigenpairs import diffusion_eigenpairs
from ._kernel_graph import GraphSettings, fit_graph

__all__ = ["DiffusionFit", "diffusion_coordinates", "diffusion_power", "fit_diffusion"]


class DiffusionFit(NamedTuple):
    """What :func:`fit_diffusion` finds; :class:`~geoforest.DiffusionMap` stores it.

    Each field is the fitted attribute of the same name with a trailing
    underscore (``affinity`` is ``affinity_``), but for ``local_scale``
    (the private ``_local_scale``) and the kNN lists, which are stored only
    when there are lists (not for a given affinity).
    """

    geometry: Geometry | None
    forest: object | None
    affinity: sp.csr_matrix
    kernel_density: np.ndarray
    sigma: float
    local_scale: np.ndarray | None
    n_bridges: int
    knn_distances: np.ndarray | None
    knn_indices: np.ndarray | None
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    degree: np.ndarray
    stationary: np.ndarray
    n_graph_components: int


def fit_diffusion(
    X,
    metric: str | None,
    *,
    graph_settings: GraphSettings,
    n_components: int,
    normalization: str,
    eigen_solver: str,
    eigen_tol: float,
    random_state,
    neighbors: tuple[np.ndarray, np.ndarray] | Callable | None = None,
    owner=None,
    stacklevel: int,
) -> DiffusionFit:
    """The graph of ``X`` and the leading eigenpairs of its random walk.

    Parameters
    ----------
    X : ndarray or sparse matrix
        Validated features, or the precomputed graph.
    metric : str or None
        The geometry's metric (``_kernel_graph.geometry_metric``); ``None``:
        ``X`` is a given affinity.
    graph_settings : GraphSettings
        The graph's parameters (:func:`~geoforest.diffusion._kernel_graph.fit_graph`).
    n_components, normalization, eigen_solver, eigen_tol
        The eigenpairs (:func:`~geoforest.diffusion._eigenpairs.diffusion_eigenpairs`).
    random_state
        Seed of the eigensolver and of a forest grown for ``metric="forest"``.
    neighbors : (dist, ind), callable or None
        Neighbour lists replacing the geometry's (LUND's pixel windows).
    owner : estimator or None
        Named in error messages.
    stacklevel : int
        Where the user's call is, as :func:`warnings.warn` counts from here:
        the warning that the graph is in pieces is attributed to it.

    Returns
    -------
    DiffusionFit
    """
    graph = fit_graph(
        X,
        metric,
        **graph_settings._asdict(),
        random_state=random_state,
        neighbors=neighbors,
        owner=owner,
    )
    n = graph.W.shape[0]
    if n_components > n:
        raise ValueError(f"n_components={n_components} exceeds n_samples={n}")
    kernel_density = np.asarray(graph.K.sum(axis=1)).ravel()
    values, vectors, degree, n_graph_components = diffusion_eigenpairs(
        graph.W,
        n_components,
        eigen_solver,
        float(eigen_tol),
        random_state,
        normalization,
        stacklevel=stacklevel + 1,
    )
    return DiffusionFit(
        geometry=graph.geometry,
        forest=getattr(graph.geometry, "forest_", None),
        affinity=graph.W,
        kernel_density=kernel_density,
        sigma=graph.sigma,
        local_scale=graph.local_scale,
        n_bridges=graph.n_bridges,
        knn_distances=graph.knn_distances,
        knn_indices=graph.knn_indices,
        eigenvalues=values,
        eigenvectors=vectors,
        degree=degree,
        stationary=degree / degree.sum(),
        n_graph_components=n_graph_components,
    )


def diffusion_power(eigenvalues: np.ndarray, t: float) -> np.ndarray:
    """``sign(lambda) |lambda|^t``: the weight of each eigenvector in ``Psi_t``.

    A negative eigenvalue at a non-integer time has no real power; its sign
    is kept, so the coordinate still oscillates as the walk does.
    """
    return np.sign(eigenvalues) * np.abs(eigenvalues) ** t


def diffusion_coordinates(
    eigenvectors: np.ndarray, eigenvalues: np.ndarray, t: float
) -> np.ndarray:
    """``Psi_t`` of the training points: each eigenvector weighed by its power at ``t``.

    Euclidean distances between its rows are the diffusion distances ``D_t``;
    the fit does not depend on ``t``, so any time is this one product.
    """
    return eigenvectors * diffusion_power(eigenvalues, t)[None, :]
