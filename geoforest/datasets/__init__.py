"""Data sets: URerF simulations (Appendix B), 2-D sheets with geodesic truth, LDLN clusters
with noise, real data."""

from ._benchmarks import CLUSTERING_BENCHMARKS, load_clustering_benchmark
from ._diffusion import (
    MULTIDENSITY_SHAPES,
    make_hyperspectral_image,
    make_multidensity_clusters,
)
from ._drosophila import load_drosophila
from ._ldln import LDLN_SHAPES, make_ldln
from ._mnist35 import load_mnist35
from ._morf import make_bars, make_circle_segments, make_impulse_signal
from ._sheets import SHEET_KINDS, add_rotated_noise, make_sheet, sheet_geodesic_truth
from ._simulations import (
    add_noise_dims,
    helix_arc_length,
    make_gaussian_mixture,
    make_helix,
    make_linear,
    make_sphere,
    minmax_rescale,
)
from ._suite import RESERVED_DATASETS, SUITE_DATASETS, load_suite_dataset

__all__ = [
    "CLUSTERING_BENCHMARKS",
    "LDLN_SHAPES",
    "SHEET_KINDS",
    "MULTIDENSITY_SHAPES",
    "add_noise_dims",
    "add_rotated_noise",
    "helix_arc_length",
    "load_clustering_benchmark",
    "load_suite_dataset",
    "RESERVED_DATASETS",
    "SUITE_DATASETS",
    "load_drosophila",
    "load_mnist35",
    "make_bars",
    "make_circle_segments",
    "make_gaussian_mixture",
    "make_helix",
    "make_hyperspectral_image",
    "make_impulse_signal",
    "make_ldln",
    "make_linear",
    "make_sheet",
    "make_multidensity_clusters",
    "make_sphere",
    "minmax_rescale",
    "sheet_geodesic_truth",
]
