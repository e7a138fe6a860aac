"""Forest estimators: one shared base, thin subclasses per paper."""

from ._base import merge_forests
from ._unsupervised import UnsupervisedForest

__all__ = ["UnsupervisedForest", "merge_forests"]
