"""Spectral clustering shared by geoforest's clustering methods.

The functions work on any symmetric non-negative affinity given as a dense
array, a scipy sparse matrix/array or a
:class:`scipy.sparse.linalg.LinearOperator` (computing ``W @ x`` only), and
always through the normalised affinity ``M = D^{-1/2} W D^{-1/2}``.
"""

from ._choice import (
    MIN_RELATIVE_GAP,
    LabelFreeChoiceWarning,
    choose_by_relative_gap,
    eigengap_scores,
    explain_choice,
    min_cluster_size,
    n_components,
    relative_gaps,
    score_partitions,
)
from ._forest import ForestSpectralClustering, sharpen_kernel, truncated_kernel
from ._kernel import KernelSpectralClustering
from ._spectral import (
    canonical_labels,
    estimate_n_clusters,
    normalized_affinity,
    spectral_clustering,
    spectral_eigs,
    spectral_embedding_njw,
    spectral_partitions,
)

__all__ = [
    "ForestSpectralClustering",
    "KernelSpectralClustering",
    "LabelFreeChoiceWarning",
    "MIN_RELATIVE_GAP",
    "choose_by_relative_gap",
    "min_cluster_size",
    "n_components",
    "relative_gaps",
    "score_partitions",
    "eigengap_scores",
    "explain_choice",
    "canonical_labels",
    "estimate_n_clusters",
    "normalized_affinity",
    "spectral_clustering",
    "spectral_eigs",
    "spectral_embedding_njw",
    "spectral_partitions",
    "sharpen_kernel",
    "truncated_kernel",
]
