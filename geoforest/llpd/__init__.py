"""Longest-leg path distance (LLPD): exact Euclidean MST, single-linkage dendrogram, LLPD.

* :class:`Dendrogram`, :func:`single_linkage` — the union-find dendrogram as flat
  arrays, with ``to_scipy_linkage()``;
* :func:`auto_noise_threshold` — the denoising rule (a jump, else two log-populations);
* :class:`LLPD` — neighbours, k-th neighbour distances, denoising and the
  ``exp(-rho^2 / sigma^2)`` kernel as a ``LinearOperator``; over the exact
  Euclidean MST, or over the minimum spanning tree of any geometry's graph
  (``metric="forest"`` or ``"precomputed"``, :mod:`geoforest.graph`);
* :class:`LLPDSpectralClustering` — denoising, eigengap over a scale grid, NJW
  through the library's one spectral module (:mod:`geoforest.graph`).
"""

from .._moved import moved_to_graph
from ._clustering import LLPDSpectralClustering, sigma_grid
from ._clustering_steps import ATOM_SCALE_RATIO
from ._dendrogram import DENDROGRAM_DTYPE, Dendrogram, single_linkage
from ._llpd import LLPD
from ._noise import auto_noise_threshold, jump_threshold, two_population_threshold

__all__ = [
    "ATOM_SCALE_RATIO",
    "DENDROGRAM_DTYPE",
    "LLPD",
    "LLPDSpectralClustering",
    "Dendrogram",
    "auto_noise_threshold",
    "jump_threshold",
    "sigma_grid",
    "single_linkage",
    "two_population_threshold",
]

#: ``geoforest.llpd.euclidean_mst`` and ``AUTO_KDTREE_MAX_DIM``: :mod:`geoforest.graph`.
__getattr__ = moved_to_graph(__name__, ["AUTO_KDTREE_MAX_DIM", "euclidean_mst"])
