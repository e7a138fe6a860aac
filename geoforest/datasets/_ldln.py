"""Low-dimensional, large-noise (LDLN) data: clusters on manifolds plus background noise.

The data model of Little, Maggioni & Murphy, "Path-based spectral clustering:
guarantees, robustness to outliers, and fast algorithms" (2017/2020): ``K``
clusters, each sampled uniformly (for its Hausdorff measure) from a connected
set of small intrinsic dimension ``d`` embedded in ``R^D``, with a little
Gaussian jitter, plus points drawn uniformly from a box around them.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ._simulations import _check_int, _check_positive_float

__all__ = ["LDLN_SHAPES", "make_ldln"]

#: Shapes by intrinsic dimension.  Every shape has diameter at most ``sqrt(2)``
#: and fits in a ball of radius ``_RADIUS`` around its centre.
LDLN_SHAPES: dict[str, int] = {"segment": 1, "circle": 1, "plane": 2, "sphere": 2}
_RADIUS = np.sqrt(0.5)
#: Shapes used, in turn, for ``intrinsic_dim`` 1, 2 and "mixed".
_BY_DIM = {
    1: ("segment", "circle"),
    2: ("plane", "sphere"),
    "mixed": ("segment", "plane", "circle", "sphere"),
}
#: Extra space (in units of the shapes' size) around the clusters for the background.
_MARGIN = 0.5


def _sample_shape(shape: str, n: int, rng: np.random.RandomState) -> np.ndarray:
    """``n`` points uniform on a shape, in its own coordinates (``(n, 3)``)."""
    out = np.zeros((n, 3))
    if shape == "segment":  # length 1
        out[:, 0] = rng.uniform(-0.5, 0.5, n)
    elif shape == "circle":  # radius 0.5
        angle = rng.uniform(0.0, 2.0 * np.pi, n)
        out[:, 0], out[:, 1] = 0.5 * np.cos(angle), 0.5 * np.sin(angle)
    elif shape == "plane":  # unit square
        out[:, :2] = rng.uniform(-0.5, 0.5, (n, 2))
    else:  # sphere of radius 0.5 (the 2-sphere)
        g = rng.standard_normal((n, 3))
        out = 0.5 * g / np.linalg.norm(g, axis=1, keepdims=True)
    return out


def _centres(k: int, dim: int, gap: float, rng: np.random.RandomState) -> np.ndarray:
    """``k`` centres at least ``2 * _RADIUS + gap`` apart, uniform in a growing cube."""
    min_dist = 2.0 * _RADIUS + gap
    side = min_dist * max(1.0, k ** (1.0 / dim))
    centres = np.empty((k, dim))
    for _ in range(200):
        placed = 0
        for _ in range(1000 * k):
            c = rng.uniform(0.0, side, dim)
            if placed == 0 or np.min(np.linalg.norm(centres[:placed] - c, axis=1)) >= min_dist:
                centres[placed] = c
                placed += 1
                if placed == k:
                    return centres
        side *= 1.25
    raise RuntimeError("could not place the clusters")  # pragma: no cover


def make_ldln(
    n_samples: int = 2000,
    *,
    n_clusters: int = 4,
    ambient_dim: int = 10,
    intrinsic_dim: int | str = "mixed",
    noise_fraction: float = 0.2,
    cluster_noise: float = 0.005,
    separation: float = 0.5,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Clusters on low-dimensional sets in ``R^D`` plus uniform background noise.

    Each cluster is a segment (length 1) or a circle (radius 1/2) for
    intrinsic dimension 1, a unit square ("plane") or a 2-sphere of radius 1/2
    for dimension 2, placed in a random orientation (a random orthonormal
    frame of ``R^D``) around a random centre; the sets are at least
    ``separation`` apart.  Cluster points are uniform on their set (for its
    length or area) plus isotropic Gaussian noise of standard deviation
    ``cluster_noise`` in all ``D`` coordinates.  Background noise is uniform in
    the bounding box of the clusters widened by ``0.5`` on every side.

    Parameters
    ----------
    n_samples : int, default=2000
        Total number of points, noise included.
    n_clusters : int, default=4
        Number of clusters ``K``; cluster sizes differ by at most one point.
    ambient_dim : int, default=10
        Ambient dimension ``D`` (at least 2; at least 3 when a sphere is used).
    intrinsic_dim : {1, 2, "mixed"}, default="mixed"
        1: segments and circles in turn; 2: squares and spheres in turn;
        "mixed": segment, square, circle, sphere in turn.
    noise_fraction : float, default=0.2
        Fraction of the points that are background noise, in ``[0, 1)``.
    cluster_noise : float, default=0.005
        Standard deviation of the Gaussian jitter of cluster points.
    separation : float, default=0.5
        Smallest distance between two clusters' sets (before the jitter).
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, ambient_dim)
        The points, rows in random order.
    y : ndarray of shape (n_samples,), int
        Cluster of each point in ``0 .. K-1``, ``-1`` for background noise.

    Examples
    --------
    >>> X, y = make_ldln(500, n_clusters=3, ambient_dim=5, random_state=0)
    >>> X.shape
    (500, 5)
    >>> np.bincount(y + 1)  # 100 noise points, then 3 clusters
    array([100, 134, 133, 133])
    """
    n_samples = _check_int(n_samples, "n_samples", minimum=1)
    n_clusters = _check_int(n_clusters, "n_clusters", minimum=1)
    ambient_dim = _check_int(ambient_dim, "ambient_dim", minimum=2)
    if intrinsic_dim not in _BY_DIM:
        raise ValueError(f"intrinsic_dim must be 1, 2 or 'mixed', got {intrinsic_dim!r}")
    noise_fraction = _check_positive_float(noise_fraction, "noise_fraction", allow_zero=True)
    if noise_fraction >= 1:
        raise ValueError(f"noise_fraction must be in [0, 1), got {noise_fraction}")
    cluster_noise = _check_positive_float(cluster_noise, "cluster_noise", allow_zero=True)
    separation = _check_positive_float(separation, "separation", allow_zero=False)
    shapes = [_BY_DIM[intrinsic_dim][k % len(_BY_DIM[intrinsic_dim])] for k in range(n_clusters)]
    if "sphere" in shapes and ambient_dim < 3:
        raise ValueError("a sphere needs ambient_dim >= 3; use intrinsic_dim=1")
    rng = check_random_state(random_state)

    n_noise = int(round(noise_fraction * n_samples))
    n_in = n_samples - n_noise
    sizes = np.full(n_clusters, n_in // n_clusters)
    sizes[: n_in % n_clusters] += 1
    centres = _centres(n_clusters, ambient_dim, separation, rng)
    parts, labels = [], []
    for k, shape in enumerate(shapes):
        local = _sample_shape(shape, int(sizes[k]), rng)
        frame, _ = np.linalg.qr(rng.standard_normal((ambient_dim, min(3, ambient_dim))))
        points = centres[k] + local[:, : frame.shape[1]] @ frame.T
        points += cluster_noise * rng.standard_normal(points.shape)
        parts.append(points)
        labels.append(np.full(int(sizes[k]), k))
    clusters = np.concatenate(parts) if n_in else np.zeros((0, ambient_dim))
    box_lo = (clusters.min(axis=0) if n_in else centres.min(axis=0)) - _MARGIN
    box_hi = (clusters.max(axis=0) if n_in else centres.max(axis=0)) + _MARGIN
    noise = rng.uniform(box_lo, box_hi, (n_noise, ambient_dim))
    X = np.concatenate([clusters, noise])
    y = np.concatenate([*labels, np.full(n_noise, -1)]).astype(np.intp)
    order = rng.permutation(n_samples)
    return X[order], y[order]
