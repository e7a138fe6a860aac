"""Checks of LLPD's inputs: coordinates whose squared distances fit float64, neighbour ranks."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["MAX_MAGNITUDE"]


#: Coordinates are refused beyond this magnitude (and nonzero spreads below its
#: inverse): squared Euclidean distances, which the MST and the neighbour searches
#: compare, overflow to inf near 1e154 and underflow to 0 near 1e-154.
MAX_MAGNITUDE = 1e150


def _check_magnitude(X: np.ndarray) -> None:
    """Refuse coordinates whose squared distances overflow or underflow float64."""
    if X.size == 0:
        return
    top = float(np.max(np.abs(X)))
    spread = float(np.max(X.max(axis=0) - X.min(axis=0)))
    if top > MAX_MAGNITUDE / np.sqrt(X.shape[1]) or 0.0 < spread < 1.0 / MAX_MAGNITUDE:
        raise ValueError(
            f"LLPD needs coordinates whose squared distances are finite float64 numbers; "
            f"X has values up to {top:.3g} and a spread of {spread:.3g}. LLPD scales with X: "
            "divide X by a constant (a power of 2 is exact) and multiply the distances back."
        )


def _check_k(k, n: int, name: str) -> int:
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise TypeError(f"{name} must be an integer, got {k!r}")
    if not 1 <= k <= n - 1:
        raise ValueError(f"{name} must be in [1, n_samples - 1] = [1, {n - 1}], got {k}")
    return int(k)
