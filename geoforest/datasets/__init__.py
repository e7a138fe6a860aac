"""Simulated data sets for geodesic learning (URerF paper, Appendix B)."""

from ._simulations import (
    add_noise_dims,
    helix_arc_length,
    make_gaussian_mixture,
    make_helix,
    make_linear,
    make_sphere,
    minmax_rescale,
)

__all__ = [
    "add_noise_dims",
    "helix_arc_length",
    "make_gaussian_mixture",
    "make_helix",
    "make_linear",
    "make_sphere",
    "minmax_rescale",
]
