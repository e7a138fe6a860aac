"""geoforest: learned, data-dependent distances.

Forests whose shared leaves reveal which points are close on the hidden
low-dimensional structure of the data, even under heavy noise.
"""

from . import cluster, datasets, diffusion, embedding, llpd, metrics
from .cluster import ForestSpectralClustering, KernelSpectralClustering
from .diffusion import LUND, DiffusionMap
from .forest import (
    ManifoldForestClassifier,
    ObliqueForestClassifier,
    RandomProjectionForest,
    UnsupervisedForest,
    merge_forests,
)
from .llpd import LLPD, LLPDSpectralClustering
from .proximity import ProximityCounts

__version__ = "0.1.0.dev0"

__all__ = [
    "DiffusionMap",
    "LUND",
    "ForestSpectralClustering",
    "KernelSpectralClustering",
    "LLPD",
    "LLPDSpectralClustering",
    "ManifoldForestClassifier",
    "ObliqueForestClassifier",
    "ProximityCounts",
    "RandomProjectionForest",
    "UnsupervisedForest",
    "cluster",
    "datasets",
    "diffusion",
    "embedding",
    "llpd",
    "merge_forests",
    "metrics",
    "__version__",
]
