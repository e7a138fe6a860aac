"""geoforest: learned, data-dependent distances.

Forests whose shared leaves reveal which points are close on the hidden
low-dimensional structure of the data, even under heavy noise.
"""

from . import datasets, embedding, metrics
from .forest import RandomProjectionForest, UnsupervisedForest, merge_forests
from .proximity import ProximityCounts

__version__ = "0.1.0.dev0"

__all__ = [
    "ProximityCounts",
    "RandomProjectionForest",
    "UnsupervisedForest",
    "datasets",
    "embedding",
    "merge_forests",
    "metrics",
    "__version__",
]
