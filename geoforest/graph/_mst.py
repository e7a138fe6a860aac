"""Exact Euclidean minimum spanning trees.

Two exact engines, chosen by dimension (``method="auto"``):

``"kdtree"``
    :func:`quitefastmst.mst_euclid` (sesqui-tree Borůvka over a K-d tree,
    OpenMP-parallel).  quitefastmst's trees exist for ``2 <= d <= 20`` only.
``"boruvka"``
    Borůvka over a K-d tree with *component pruning* (numba,
    :mod:`geoforest.graph._boruvka`): each round finds, for every component,
    its exact shortest edge to another component.  Any dimension; exact.
``"brute"``
    quitefastmst's Jarník-Prim with distances computed on the fly, run on one
    OpenMP thread (it synchronises its threads once per added vertex, which
    stalls when threads share a core): ``O(n^2 d)`` time, ``O(n)`` memory,
    exact in any dimension.

``"auto"`` uses ``"kdtree"`` for ``2 <= d <= AUTO_KDTREE_MAX_DIM``,
``"brute"`` above and ``"boruvka"`` for ``d = 1``: in many dimensions uniform
background noise defeats the tree's pruning, and the single-thread Prim is
faster (the comparison: docs/paths-and-diffusion.md, ``benchmarks/bench_emst.py``).
A kNN graph alone is not used: it is usually disconnected and its spanning
forest need not be part of the Euclidean MST.

All engines return the same tree up to the choice among equal-weight edges,
hence the same total weight and the same single-linkage dendrogram heights.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ._boruvka import boruvka_forest, no_neighbor_lists
from ._kdtree import LEAF_SIZE

__all__ = ["AUTO_KDTREE_MAX_DIM", "euclidean_mst"]

#: ``method="auto"`` uses quitefastmst's K-d tree up to this dimension, Prim above.
AUTO_KDTREE_MAX_DIM = 20

EmstMethod = Literal["auto", "kdtree", "boruvka", "brute"]
_METHODS = ("auto", "kdtree", "boruvka", "brute")


# --------------------------------------------------------------------- public
def _resolve_method(method: str, d: int) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    if method == "auto":
        if d == 1:
            return "boruvka"
        return "kdtree" if d <= AUTO_KDTREE_MAX_DIM else "brute"
    if method == "kdtree" and not 2 <= d <= AUTO_KDTREE_MAX_DIM:
        raise ValueError(
            f"method='kdtree' (quitefastmst) supports 2 <= d <= {AUTO_KDTREE_MAX_DIM}, "
            f"got d={d}; use 'boruvka' or 'brute'"
        )
    return method


def euclidean_mst(X, *, method: EmstMethod = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Exact Euclidean minimum spanning tree of a point set.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite points (converted to float64, C order); duplicates allowed.
    method : {"auto", "kdtree", "boruvka", "brute"}, default="auto"
        Engine, see the module docstring.  ``"auto"``: quitefastmst's K-d tree
        for ``2 <= d <= 20``, its single-thread Prim above, our Borůvka for
        ``d = 1``.

    Returns
    -------
    weights : ndarray of shape (n_samples - 1,), float64
        Edge lengths, non-decreasing.
    edges : ndarray of shape (n_samples - 1, 2), int64
        End points of each edge, ``edges[i, 0] < edges[i, 1]``; ties in weight
        are ordered by the end points (lexicographically).

    Examples
    --------
    >>> import numpy as np
    >>> weights, edges = euclidean_mst(np.array([[0.0, 0.0], [3.0, 0.0], [1.0, 0.0]]))
    >>> weights
    array([1., 2.])
    >>> edges
    array([[0, 2],
           [1, 2]])
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d, got shape {X.shape}")
    n, d = X.shape
    if n == 0:
        raise ValueError("X has no points")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity")
    if n == 1:
        return np.zeros(0), np.zeros((0, 2), dtype=np.int64)
    resolved = _resolve_method(method, d)
    if resolved == "boruvka":
        weights, edges, _ = boruvka_forest(X, LEAF_SIZE, np.arange(n), *no_neighbor_lists())
    else:
        import quitefastmst

        if resolved == "brute":
            # Jarník-Prim synchronises its OpenMP threads once per added vertex, which
            # stalls when threads share a core (docs/paths-and-diffusion.md).  One
            # thread, restored afterwards.
            threads = quitefastmst.omp_get_max_threads()
            quitefastmst.omp_set_num_threads(1)
            try:
                weights, edges = quitefastmst.mst_euclid(X, algorithm="brute")
            finally:
                quitefastmst.omp_set_num_threads(threads)
        else:
            weights, edges = quitefastmst.mst_euclid(X, algorithm="auto")
        weights = np.asarray(weights, dtype=np.float64)
        edges = np.asarray(edges, dtype=np.int64)
    edges = np.sort(edges, axis=1)
    order = np.lexsort((edges[:, 1], edges[:, 0], weights))
    return np.ascontiguousarray(weights[order]), np.ascontiguousarray(edges[order])
