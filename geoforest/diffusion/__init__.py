"""Diffusion geometry: diffusion maps and LUND clustering.

* :class:`DiffusionMap` — the random walk on a sparse kNN Gaussian graph (or a
  precomputed affinity, e.g. a forest's ``kneighbors_graph``), its leading
  eigenpairs, the diffusion map ``Psi_t`` and diffusion distances ``D_t``;
* :class:`LUND` — learning by unsupervised nonlinear diffusion: modes of
  density times diffusion distance, estimated number of clusters,
  multiscale time, spatial regularisation for images, active learning.

Both build their graph in the geometry of :mod:`geoforest.graph` (``metric``:
Euclidean features, a forest's learned distance, or a precomputed graph).
"""

from .._moved import moved_to_graph
from ._diffusion_map import DiffusionMap
from ._lund import LUND
from ._lund_multiscale import variation_of_information

__all__ = [
    "DiffusionMap",
    "LUND",
    "variation_of_information",
]

#: ``bridge_components`` and ``spatial_knn``: :mod:`geoforest.graph`.
__getattr__ = moved_to_graph(__name__, ["bridge_components", "spatial_knn"])
