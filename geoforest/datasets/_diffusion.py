"""Data for diffusion clustering: non-convex clusters of different densities, a synthetic image.

* :func:`make_multidensity_clusters` — 3 to 5 non-convex planar shapes (half
  moons, rings, three-quarter arcs, hooks) with different numbers of points
  and widths, plus uniform background noise, optionally rotated into ``R^D``;
* :func:`make_hyperspectral_image` — a piecewise-constant image of regions
  (a Voronoi partition of the pixel grid), each region carrying one class's
  smooth spectral signature times a random brightness, plus Gaussian noise.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ._simulations import _check_int, _check_positive_float

__all__ = ["MULTIDENSITY_SHAPES", "make_hyperspectral_image", "make_multidensity_clusters"]

#: Shapes used in turn by :func:`make_multidensity_clusters`.
MULTIDENSITY_SHAPES = ("moon", "ring", "arc", "hook", "moon")
#: Distance between the centres of neighbouring shapes (shapes have radius 1).
_SPACING = 3.0


def _sample_shape(shape: str, n: int, width: float, rng: np.random.RandomState) -> np.ndarray:
    """``n`` points near a planar curve of radius 1 centred at the origin, Gaussian width."""
    if shape == "moon":  # upper half circle
        angle = rng.uniform(0.0, np.pi, n)
        curve = np.column_stack([np.cos(angle), np.sin(angle) - 0.5])
    elif shape == "ring":  # full circle of radius 0.8
        angle = rng.uniform(0.0, 2.0 * np.pi, n)
        curve = 0.8 * np.column_stack([np.cos(angle), np.sin(angle)])
    elif shape == "arc":  # three quarters of a circle, open to the right
        angle = rng.uniform(0.25 * np.pi, 1.75 * np.pi, n)
        curve = np.column_stack([np.cos(angle), np.sin(angle)])
    else:  # hook: a segment that ends in a half circle
        u = rng.uniform(0.0, 1.0, n)
        straight = u < 0.5
        curve = np.empty((n, 2))
        s = u[straight] / 0.5
        curve[straight] = np.column_stack([-1.0 + 1.5 * s, np.full(s.size, -0.5)])
        a = (u[~straight] - 0.5) / 0.5 * np.pi - 0.5 * np.pi
        curve[~straight] = np.column_stack([0.5 + 0.5 * np.cos(a), 0.5 * np.sin(a)])
    return curve + width * rng.standard_normal((n, 2))


def make_multidensity_clusters(
    n_samples: int = 2000,
    *,
    n_clusters: int = 4,
    noise_fraction: float = 0.1,
    density_ratio: float = 4.0,
    width: float = 0.06,
    ambient_dim: int = 2,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Non-convex clusters of different densities plus uniform background noise.

    Cluster ``k`` (``k = 0 .. K-1``) is a planar curve of radius about 1 (a
    half moon, a ring, a three-quarter arc or a hook, in turn) with
    isotropic Gaussian width ``width * (1 + 0.5 k / (K - 1))``.  Its share of
    the cluster points is proportional to ``density_ratio ** (-k / (K - 1))``,
    so the first cluster holds ``density_ratio`` times as many points as the
    last one, on a thinner curve.  Shapes are centred on a row of a grid
    ``3`` apart (gaps of about 1 between shapes).  Background points are
    uniform in the bounding box of the clusters widened by 0.5.  With
    ``ambient_dim > 2`` the plane is rotated into ``R^D`` by a random
    orthonormal frame (the data stay two-dimensional).

    Parameters
    ----------
    n_samples : int, default=2000
        Total number of points, background included.
    n_clusters : int, default=4
        Number of clusters, 2 to 5.
    noise_fraction : float, default=0.1
        Fraction of background points, in ``[0, 1)``.
    density_ratio : float, default=4.0
        Points in the densest cluster over points in the sparsest (``>= 1``).
    width : float, default=0.06
        Gaussian width of the densest cluster.
    ambient_dim : int, default=2
        Dimension ``D >= 2`` of the returned points.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, ambient_dim)
        Points in a random order.
    y : ndarray of shape (n_samples,) of int
        Cluster ``0 .. K-1``, ``-1`` for background points.

    Examples
    --------
    >>> X, y = make_multidensity_clusters(500, n_clusters=3, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((500, 2), [-1, 0, 1, 2])
    """
    n = _check_int(n_samples, "n_samples", minimum=1)
    k = _check_int(n_clusters, "n_clusters", minimum=2)
    if k > len(MULTIDENSITY_SHAPES):
        raise ValueError(f"n_clusters must be at most {len(MULTIDENSITY_SHAPES)}, got {k}.")
    noise = _check_positive_float(noise_fraction, "noise_fraction", allow_zero=True)
    if noise >= 1.0:
        raise ValueError(f"noise_fraction must be < 1, got {noise_fraction!r}.")
    ratio = _check_positive_float(density_ratio, "density_ratio", allow_zero=False)
    if ratio < 1.0:
        raise ValueError(f"density_ratio must be >= 1, got {density_ratio!r}.")
    width = _check_positive_float(width, "width", allow_zero=True)
    dim = _check_int(ambient_dim, "ambient_dim", minimum=2)
    rng = check_random_state(random_state)

    n_noise = int(round(noise * n))
    n_clustered = n - n_noise
    if n_clustered < k:
        raise ValueError(f"n_samples={n} leaves fewer than one point per cluster.")
    share = ratio ** (-np.arange(k) / (k - 1))
    sizes = np.floor(share / share.sum() * n_clustered).astype(int)
    sizes[: n_clustered - sizes.sum()] += 1
    parts, labels = [], []
    for c in range(k):
        w = width * (1.0 + 0.5 * c / (k - 1))
        pts = _sample_shape(MULTIDENSITY_SHAPES[c], sizes[c], w, rng)
        pts[:, 0] += _SPACING * (c % 3)
        pts[:, 1] += _SPACING * (c // 3)
        parts.append(pts)
        labels.append(np.full(sizes[c], c))
    clustered = np.concatenate(parts)
    low = clustered.min(axis=0) - 0.5
    high = clustered.max(axis=0) + 0.5
    background = rng.uniform(low, high, size=(n_noise, 2))
    X2 = np.concatenate([clustered, background])
    y = np.concatenate(labels + [np.full(n_noise, -1)])
    if dim > 2:
        frame, _ = np.linalg.qr(rng.standard_normal((dim, 2)))
        X = X2 @ frame.T
    else:
        X = X2
    order = rng.permutation(n)
    return np.ascontiguousarray(X[order]), y[order].astype(np.intp)


def _signatures(n_classes: int, n_bands: int, rng: np.random.RandomState) -> np.ndarray:
    """Smooth positive spectra: a baseline plus three Gaussian bumps per class."""
    grid = np.linspace(0.0, 1.0, n_bands)
    out = np.empty((n_classes, n_bands))
    for c in range(n_classes):
        centres = rng.uniform(0.0, 1.0, 3)
        heights = rng.uniform(0.3, 1.0, 3)
        widths = rng.uniform(0.05, 0.2, 3)
        bumps = heights[:, None] * np.exp(-0.5 * ((grid - centres[:, None]) / widths[:, None]) ** 2)
        out[c] = 0.2 + bumps.sum(axis=0)
    return out


def make_hyperspectral_image(
    shape: tuple[int, int] = (60, 60),
    *,
    n_classes: int = 4,
    n_regions: int = 12,
    n_bands: int = 30,
    noise: float = 0.15,
    brightness: float = 0.15,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic hyperspectral-like image: regions with spectral signatures plus noise.

    The pixel grid is split into ``n_regions`` Voronoi cells of random seed
    pixels; cell ``r`` belongs to class ``r mod n_classes`` (so every class
    has several separate regions).  Each class has a smooth positive spectrum
    over ``n_bands`` bands (a baseline plus three Gaussian bumps).  A pixel is
    its class's spectrum times a brightness drawn uniformly in
    ``[1 - brightness, 1 + brightness]`` (one per region) plus independent
    Gaussian noise of standard deviation ``noise`` in every band.

    Parameters
    ----------
    shape : tuple of int, default=(60, 60)
        Image height and width.
    n_classes : int, default=4
        Number of classes (at least 2, at most ``n_regions``).
    n_regions : int, default=12
        Number of Voronoi regions.
    n_bands : int, default=30
        Spectral bands (columns of ``X``).
    noise : float, default=0.15
        Standard deviation of the per-pixel, per-band Gaussian noise.
    brightness : float, default=0.15
        Half-width of the per-region brightness factor around 1.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (height * width, n_bands)
        Pixels in row-major (C) order of the image, one spectrum per row.
    y : ndarray of shape (height * width,) of int
        Class of every pixel; ``y.reshape(shape)`` is the class map.

    Examples
    --------
    >>> X, y = make_hyperspectral_image((20, 30), n_bands=10, random_state=0)
    >>> X.shape, y.reshape(20, 30).shape
    ((600, 10), (20, 30))
    """
    if len(shape) != 2:
        raise ValueError(f"shape must be (height, width), got {shape!r}.")
    h = _check_int(shape[0], "height", minimum=2)
    w = _check_int(shape[1], "width", minimum=2)
    n_classes = _check_int(n_classes, "n_classes", minimum=2)
    n_regions = _check_int(n_regions, "n_regions", minimum=n_classes)
    n_bands = _check_int(n_bands, "n_bands", minimum=1)
    noise = _check_positive_float(noise, "noise", allow_zero=True)
    brightness = _check_positive_float(brightness, "brightness", allow_zero=True)
    if brightness >= 1.0:
        raise ValueError(f"brightness must be < 1, got {brightness!r}.")
    if n_regions > h * w:
        raise ValueError(f"n_regions={n_regions} exceeds the {h * w} pixels.")
    rng = check_random_state(random_state)

    seeds = rng.choice(h * w, size=n_regions, replace=False)
    rows, cols = np.divmod(np.arange(h * w), w)
    d2 = (rows[:, None] - rows[seeds][None, :]) ** 2 + (cols[:, None] - cols[seeds][None, :]) ** 2
    region = np.argmin(d2, axis=1)
    region_class = np.arange(n_regions) % n_classes
    y = region_class[region]
    spectra = _signatures(n_classes, n_bands, rng)
    gain = rng.uniform(1.0 - brightness, 1.0 + brightness, n_regions)
    X = gain[region, None] * spectra[y] + noise * rng.standard_normal((h * w, n_bands))
    return X, y.astype(np.intp)
