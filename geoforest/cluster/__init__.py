"""Spectral clustering shared by geoforest's clustering methods.

The functions work on any symmetric non-negative affinity given as a dense
array, a scipy sparse matrix/array or a
:class:`scipy.sparse.linalg.LinearOperator` (computing ``W @ x`` only), and
always through the normalised affinity ``M = D^{-1/2} W D^{-1/2}``.

The spectral functions and the label-free choice of ``K`` live in the graph
layer (:mod:`geoforest.graph`), below every clustering family.  rpfCluster
(:class:`ForestSpectralClustering`) adds its kernel
(:func:`truncated_kernel`, :func:`sharpen_kernel`), its grids of
(beta_1, beta_2) candidates (:data:`RPF_THRESHOLDS`, :data:`RPF_SCALES`) and
the label-free rules that pick one (:func:`unfragmented_threshold`,
:func:`consensus_scores`, :func:`select_best`).
"""

from .._moved import moved_to_graph
from ._kernel import KernelSpectralClustering
from ._rpf_cluster import ForestSpectralClustering
from ._rpf_kernel import sharpen_kernel, truncated_kernel
from ._rpf_selection import (
    RPF_SCALES,
    RPF_THRESHOLDS,
    consensus_scores,
    select_best,
    unfragmented_threshold,
)

__all__ = [
    "ForestSpectralClustering",
    "KernelSpectralClustering",
    "RPF_SCALES",
    "RPF_THRESHOLDS",
    "consensus_scores",
    "select_best",
    "sharpen_kernel",
    "truncated_kernel",
    "unfragmented_threshold",
]

#: The spectral functions and the label-free choice: :mod:`geoforest.graph`.
__getattr__ = moved_to_graph(
    __name__,
    [
        "MIN_RELATIVE_GAP",
        "LabelFreeChoiceWarning",
        "canonical_labels",
        "choose_by_relative_gap",
        "eigengap_scores",
        "estimate_n_clusters",
        "explain_choice",
        "knn_affinity",
        "min_cluster_size",
        "n_components",
        "normalized_affinity",
        "relative_gaps",
        "score_partitions",
        "spectral_clustering",
        "spectral_eigs",
        "spectral_embedding_njw",
        "spectral_partitions",
    ],
)
