"""The manifold forests paper's simulations: structured features for patch forests.

Each generator returns ``(X, y)`` with ``X`` of float64 and ``y`` in ``{0, 1}``,
half the samples in each class (the odd one in class 0), rows in a random
order controlled by ``random_state``.

* :func:`make_circle_segments` — experiment (A): 100 features on a circle, two
  non-adjacent segments of ones, lengths 5 + 5 (class 0) or 4 + 6 (class 1).
* :func:`make_bars` — experiment (B): 28 x 28 binary images with
  ``Poisson(10)`` horizontal (class 0) or vertical (class 1) bars, across the
  whole image (the paper's reading) or of random lengths (``bar_length``).
* :func:`make_impulse_signal` — experiment (C): 100 steps of N(0, 1) noise,
  plus ``u(t - 20) exp(-(t - 20))`` for class 1.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ._simulations import _check_int

__all__ = ["make_bars", "make_circle_segments", "make_impulse_signal"]


def _balanced_labels(n_samples: int, rng: np.random.RandomState) -> np.ndarray:
    y = (np.arange(n_samples) >= (n_samples + 1) // 2).astype(np.int64)
    return y[rng.permutation(n_samples)]


def make_circle_segments(n_samples: int, *, n_features: int = 100, random_state=None):
    """Two non-adjacent segments of ones on a discretised circle.

    Class 0 has two segments of length 5, class 1 one of length 4 and one of
    length 6 (in random order around the circle).  The first segment starts
    anywhere; the gap before the second is uniform among the gaps that leave
    at least one zero between the segments on both sides.  Only the segments'
    lengths tell the classes apart, and their positions are arbitrary, so a
    classifier must look at contiguous, wrapping runs of features.

    Parameters
    ----------
    n_samples : int
        Number of samples (at least 2).
    n_features : int, default=100
        Points on the circle (at least 13, so that 4 + 6 fit with gaps).
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Zeros and ones.
    y : ndarray of shape (n_samples,)
        0 (5 + 5) or 1 (4 + 6).

    References
    ----------
    .. [1] R. Perry, T. M. Tomita, J. Patsolic, B. Falk and J. T. Vogelstein,
       "Manifold Forests: Closing the Gap on Neural Networks".
    """
    n_samples = _check_int(n_samples, "n_samples", minimum=2)
    n_features = _check_int(n_features, "n_features", minimum=13)
    rng = check_random_state(random_state)
    y = _balanced_labels(n_samples, rng)
    X = np.zeros((n_samples, n_features))
    for i in range(n_samples):
        if y[i] == 0:
            first, second = 5, 5
        else:
            first, second = (4, 6) if rng.rand() < 0.5 else (6, 4)
        start = rng.randint(n_features)
        gap = 1 + rng.randint(n_features - first - second - 1)  # 1 .. free - 1
        pos1 = (start + np.arange(first)) % n_features
        pos2 = (start + first + gap + np.arange(second)) % n_features
        X[i, pos1] = 1.0
        X[i, pos2] = 1.0
    return X, y


def make_bars(
    n_samples: int,
    *,
    image_size: int = 28,
    mean_bars: float = 10.0,
    bar_length: str = "full",
    random_state=None,
):
    """Binary images with horizontal (class 0) or vertical (class 1) bars.

    Each image draws ``k ~ Poisson(mean_bars)`` (capped at ``image_size``)
    distinct rows (class 0) or columns (class 1) uniformly, one bar in each;
    adjacent bars form thicker ones, so bars have random widths and spacings.
    The two classes are the same distribution up to a 90 degree rotation.

    ``bar_length="full"`` (the paper's "bars distributed among the rows or
    columns") sets the whole row or column.  Every forest then reaches the
    Bayes error (``exp(-mean_bars) / 2``: images without bars, 2.3e-5 at the
    default) by about 200 training images.  ``bar_length="random"`` (ours,
    a harder reading of the paper's "randomly sized" bars) sets a run of
    ``L ~ U{2..image_size}`` consecutive pixels at a uniform start instead, so
    a bar's position along its row, and its length, vary too; at least two
    pixels, so that every bar still has an orientation.

    Parameters
    ----------
    n_samples : int
        Number of samples (at least 2).
    image_size : int, default=28
        Side of the square image.
    mean_bars : float, default=10.0
        Poisson rate of the number of bars.
    bar_length : {"full", "random"}, default="full"
        Bars across the whole image, or runs of random length and position.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, image_size ** 2)
        Images flattened row-major (``image_shape=(image_size, image_size)``).
    y : ndarray of shape (n_samples,)
        0 (horizontal) or 1 (vertical).

    References
    ----------
    .. [1] R. Perry, T. M. Tomita, J. Patsolic, B. Falk and J. T. Vogelstein,
       "Manifold Forests: Closing the Gap on Neural Networks".
    """
    n_samples = _check_int(n_samples, "n_samples", minimum=2)
    size = _check_int(image_size, "image_size", minimum=2)
    if not (np.isfinite(mean_bars) and mean_bars > 0):
        raise ValueError(f"mean_bars must be a positive number, got {mean_bars!r}")
    if bar_length not in ("full", "random"):
        raise ValueError(f"bar_length must be 'full' or 'random', got {bar_length!r}")
    rng = check_random_state(random_state)
    y = _balanced_labels(n_samples, rng)
    X = np.zeros((n_samples, size, size))
    for i in range(n_samples):
        k = min(int(rng.poisson(mean_bars)), size)
        lines = rng.choice(size, size=k, replace=False)
        # Bars are drawn as rows; class 1's image is transposed (columns).
        img = X[i] if y[i] == 0 else X[i].T
        if bar_length == "full":
            img[lines, :] = 1.0
        else:
            for line in lines:
                length = rng.randint(2, size + 1)
                start = rng.randint(size - length + 1)
                img[line, start : start + length] = 1.0
    return X.reshape(n_samples, size * size), y


def make_impulse_signal(n_samples: int, *, n_steps: int = 100, onset: int = 20, random_state=None):
    """White noise (class 0) or noise plus a decaying unit impulse (class 1).

    ``x_t = eps_t`` or ``x_t = u(t - onset) exp(-(t - onset)) + eps_t`` for
    ``t = 0 .. n_steps - 1``, ``eps_t ~ N(0, 1)`` and ``u`` the unit step
    (``u(0) = 1``).

    Parameters
    ----------
    n_samples : int
        Number of samples (at least 2).
    n_steps : int, default=100
        Length of each series.
    onset : int, default=20
        Step at which the impulse starts (``0 <= onset < n_steps``).
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, n_steps)
    y : ndarray of shape (n_samples,)

    References
    ----------
    .. [1] R. Perry, T. M. Tomita, J. Patsolic, B. Falk and J. T. Vogelstein,
       "Manifold Forests: Closing the Gap on Neural Networks".
    """
    n_samples = _check_int(n_samples, "n_samples", minimum=2)
    n_steps = _check_int(n_steps, "n_steps", minimum=2)
    onset = _check_int(onset, "onset", minimum=0)
    if onset >= n_steps:
        raise ValueError(f"onset must be < n_steps={n_steps}, got {onset}")
    rng = check_random_state(random_state)
    y = _balanced_labels(n_samples, rng)
    t = np.arange(n_steps)
    impulse = np.where(t >= onset, np.exp(-(t - onset).astype(float)), 0.0)
    X = rng.standard_normal((n_samples, n_steps)) + y[:, None] * impulse
    return X, y
