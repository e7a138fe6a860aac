"""Checks of LLPD's inputs: feature data or a graph, coordinates, neighbour ranks.

The two facts LLPD needs beyond what its geometry answers are read here and
nowhere else: whether ``fit`` was given a graph rather than feature data (the
user's declaration, ``metric="precomputed"``), and whether the geometry's
legs are the Euclidean distances of every pair of training points (the exact
EMST, the out-of-sample K-d tree search, the tie-break by coordinates and
``mscale`` need those coordinates).  Everything else asks the fitted geometry.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .._validation import check_not_complex, validate_data
from ..graph import Geometry, check_query_graph, takes_graph

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


def _training_data(estimator, X, *, copy: bool = True):
    """``fit``'s input: a graph as given (its geometry checks it), else validated features.

    ``copy``: the model keeps its own rows, so a caller editing its array
    does not change it.
    """
    if takes_graph(estimator.metric):
        check_not_complex(X, estimator)  # named here; the geometry checks the rest
        return X
    X_in = X
    X = validate_data(estimator, X, dtype=np.float64, order="C", ensure_min_samples=2)
    return X.copy() if copy and (X is X_in or not X.flags.owndata) else X


def _euclidean_points(geometry: Geometry, X):
    """``X`` when every pair of training points is a leg at its Euclidean distance, else None.

    The Euclidean geometry's graph is complete: LLPD's exact EMST, its
    out-of-sample search and its tie-break read these coordinates.  A
    forest's coordinates are not its metric's, and a graph has none.
    """
    return X if geometry.euclidean_coordinates else None


def _takes_features(geometry: Geometry) -> bool:
    """Whether the geometry's queries are points in features (not rows of a graph)."""
    try:
        geometry.training_points(np.zeros(0, dtype=np.int64))
    except NotImplementedError:
        return False
    return True


def _query_input(estimator, geometry: Geometry, X):
    """New points validated as ``fit`` validated the training data.

    Features: finite, the training data's number of columns.  A graph's
    rows: non-negative, finite, one column per training point (a dense row
    keeps its zeros, each an edge to a copy).
    """
    if _takes_features(geometry):
        return validate_data(estimator, X, dtype=np.float64, order="C", reset=False)
    rows = check_query_graph(X, geometry.n_samples_, "distance graph", estimator)
    return rows if sp.issparse(X) else np.asarray(X, dtype=np.float64)
