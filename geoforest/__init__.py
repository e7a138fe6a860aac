"""geoforest: learned, data-dependent distances.

Forests whose shared leaves reveal which points are close on the hidden
low-dimensional structure of the data, even under heavy noise.

Public names are imported on first use (PEP 562), so ``import geoforest`` and
the command line start without loading the graph layer and the clustering,
LLPD and diffusion modules (and the parts of SciPy and scikit-learn they need)
until asked.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0.dev0"

# public name -> submodule that defines it (relative to this package)
_NAMES = {
    "ForestSpectralClustering": ".cluster",
    "KernelSpectralClustering": ".cluster",
    "DiffusionMap": ".diffusion",
    "ForestNeighborsTransformer": ".forest",
    "LUND": ".diffusion",
    "ManifoldForestClassifier": ".forest",
    "ManifoldForestRegressor": ".forest",
    "ObliqueForestClassifier": ".forest",
    "ObliqueForestRegressor": ".forest",
    "RandomProjectionForest": ".forest",
    "UnsupervisedForest": ".forest",
    "merge_forests": ".forest",
    "LLPD": ".llpd",
    "LLPDSpectralClustering": ".llpd",
    "ProximityCounts": ".proximity",
}
_SUBMODULES = ("cluster", "datasets", "diffusion", "embedding", "graph", "llpd", "metrics")

__all__ = [
    "DiffusionMap",
    "LUND",
    "ForestNeighborsTransformer",
    "ForestSpectralClustering",
    "KernelSpectralClustering",
    "LLPD",
    "LLPDSpectralClustering",
    "ManifoldForestClassifier",
    "ManifoldForestRegressor",
    "ObliqueForestClassifier",
    "ObliqueForestRegressor",
    "ProximityCounts",
    "RandomProjectionForest",
    "UnsupervisedForest",
    "cluster",
    "datasets",
    "diffusion",
    "embedding",
    "graph",
    "llpd",
    "merge_forests",
    "metrics",
    "__version__",
]

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from . import cluster, datasets, diffusion, embedding, graph, llpd, metrics
    from .cluster import ForestSpectralClustering, KernelSpectralClustering
    from .diffusion import LUND, DiffusionMap
    from .forest import (
        ManifoldForestClassifier,
        ManifoldForestRegressor,
        ObliqueForestClassifier,
        ObliqueForestRegressor,
        RandomProjectionForest,
        UnsupervisedForest,
        merge_forests,
    )
    from .llpd import LLPD, LLPDSpectralClustering
    from .proximity import ProximityCounts


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name], __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
