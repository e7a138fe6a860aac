"""Forest estimators: one shared base, thin subclasses per paper."""

from ._classifiers import ManifoldForestClassifier, ObliqueForestClassifier
from ._merge import merge_forests
from ._neighbors import ForestNeighborsTransformer
from ._random_projection import RandomProjectionForest
from ._regressors import ManifoldForestRegressor, ObliqueForestRegressor
from ._unsupervised import UnsupervisedForest

__all__ = [
    "ForestNeighborsTransformer",
    "ManifoldForestClassifier",
    "ManifoldForestRegressor",
    "ObliqueForestClassifier",
    "ObliqueForestRegressor",
    "RandomProjectionForest",
    "UnsupervisedForest",
    "merge_forests",
]
