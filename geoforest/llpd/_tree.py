"""LLPD's fit as functions: a geometry's spanning tree, its dendrogram, the denoising rule.

:class:`~geoforest.LLPD` validates its parameters, fits its geometry and
stores what :func:`fit_llpd_tree` returns; :class:`~geoforest.LLPDSpectralClustering`
denoises with :func:`denoise_dendrogram`.  Neither function reads an
estimator: every setting is an argument, so a step can be called, tested and
reused (on a subset's geometry, by another estimator) on its own.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from ..graph import Geometry
from ._checks import _check_k, _check_magnitude
from ._dendrogram import Dendrogram, kth_neighbor_heights, single_linkage
from ._graph import mscale_tree
from ._noise import auto_noise_threshold

__all__ = ["Denoising", "LLPDTree", "denoise_dendrogram", "fit_llpd_tree"]


class LLPDTree(NamedTuple):
    """A fitted LLPD: the tree every query runs on, as :class:`~geoforest.LLPD` stores it.

    Attributes
    ----------
    geometry : Geometry
        The fitted geometry (``geometry_``).
    points : ndarray of shape (n_samples, n_features) or None
        The training coordinates when the legs are their Euclidean distances
        (the tie-break and the out-of-sample K-d tree read them), ``None``
        over a graph.
    weights : ndarray of shape (n_samples - 1,)
        The spanning tree's edge lengths, non-decreasing (``mst_weights_``).
    edges : ndarray of shape (n_samples - 1, 2)
        Its edges (``mst_edges_``).
    dendrogram : Dendrogram
        The single-linkage dendrogram of those edges (``dendrogram_``).
    """

    geometry: Geometry
    points: np.ndarray | None
    weights: np.ndarray
    edges: np.ndarray
    dendrogram: Dendrogram


class Denoising(NamedTuple):
    """The points a denoising keeps and the threshold it applied.

    Attributes
    ----------
    kept : ndarray of shape (n_samples,), bool
        True for the points whose LLPD to their ``k_nse``-th neighbour is at
        most ``threshold``.
    threshold : float
        The threshold ``theta`` used (``inf`` when every point is kept
        without a test).
    """

    kept: np.ndarray
    threshold: float


def fit_llpd_tree(
    geometry: Geometry,
    points: np.ndarray | None,
    *,
    mst_method: str,
    mscale: int | None,
    mscale_neighbors: int,
) -> LLPDTree:
    """The spanning tree of a fitted geometry and its single-linkage dendrogram.

    The LLPD of two points is the largest edge on the path joining them in a
    minimum spanning tree of the legs, so one tree and its dendrogram answer
    every query.  With Euclidean coordinates the tree is the exact EMST of
    every pair (or the m-scale approximation's); without, the geometry's own
    graph's minimum spanning tree.

    Parameters
    ----------
    geometry : Geometry
        A fitted geometry (:func:`geoforest.graph.fit_geometry`).
    points : ndarray of shape (n_samples, n_features) or None
        Its training points when every pair is a leg at their Euclidean
        distance (float64, C order), else ``None``.
    mst_method : {"auto", "kdtree", "boruvka", "brute"}
        The exact EMST engine (:func:`geoforest.graph.euclidean_mst`); read
        only with coordinates and no ``mscale``.
    mscale : int or None
        ``None``: the exact tree.  ``m``: the m-scale approximation (the
        ``mscale_neighbors``-NN graph, heights rounded up to ``m`` scales),
        which approximates the Euclidean LLPD and so needs ``points``.
    mscale_neighbors : int
        Neighbours of the m-scale approximation's kNN graph.

    Returns
    -------
    LLPDTree

    Raises
    ------
    ValueError
        Coordinates whose squared distances overflow or underflow float64;
        ``mscale`` without coordinates (the LLPD over a graph is exact).
    """
    if points is not None:
        _check_magnitude(points)
        if mscale is None:
            weights, edges = geometry.spanning_tree(method=mst_method)
        else:
            weights, edges = mscale_tree(points, mscale_neighbors, mscale)
    elif mscale is not None:
        raise ValueError(
            "mscale approximates the Euclidean LLPD (metric='euclidean'); the LLPD over "
            f"the graph of metric={geometry.metric!r} is exact: drop mscale"
        )
    else:
        weights, edges = geometry.spanning_tree()
    dendrogram = single_linkage(geometry.n_samples_, weights, edges)
    return LLPDTree(geometry, points, weights, edges, dendrogram)


def denoise_dendrogram(dendrogram: Dendrogram, k_nse, threshold) -> Denoising:
    """Keep the points whose LLPD to their ``k_nse``-th neighbour is at most ``threshold``.

    A point in a cluster has many others at a small LLPD; a noise point joins
    the data only at a large height, so its ``k_nse``-th neighbour LLPD (read
    off the dendrogram in ``O(n)``) stands out.

    Parameters
    ----------
    dendrogram : Dendrogram
        The LLPD of all the points.
    k_nse : int
        Neighbour rank, in ``[1, n_samples - 1]``.
    threshold : "auto" or float
        ``theta``; ``"auto"``: :func:`~geoforest.llpd.auto_noise_threshold`
        of the ``k_nse``-th neighbour LLPDs.

    Returns
    -------
    Denoising

    Raises
    ------
    TypeError, ValueError
        ``k_nse`` or ``threshold`` of the wrong type or out of range.
    """
    t = dendrogram
    k = _check_k(k_nse, t.n_samples, "k_nse")
    values = kth_neighbor_heights(t.n_samples, t.left, t.right, t.node_size, t.heights, k)
    if isinstance(threshold, str):
        if threshold != "auto":
            raise ValueError(f"threshold must be 'auto' or a float, got {threshold!r}")
        theta = auto_noise_threshold(values)
    elif isinstance(threshold, numbers.Real) and not isinstance(threshold, bool):
        theta = float(threshold)
        if not theta >= 0:
            raise ValueError(f"threshold must be non-negative, got {threshold!r}")
    else:
        raise TypeError(f"threshold must be 'auto' or a float, got {threshold!r}")
    return Denoising(values <= theta, theta)
