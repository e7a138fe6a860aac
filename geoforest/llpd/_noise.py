"""The LLPD denoising rule: where the cluster points end and the background begins.

Background noise spread through the ambient space is sparser than clusters
on low-dimensional sets, so its LLPD to the ``k``-th LLPD neighbour is larger.
Two ways to find the level that separates them, both on the sorted values:

* :func:`jump_threshold` — a jump of at least 2x over a short window of the
  sorted values (the noise sits far above the clusters, with an empty
  stretch in between);
* :func:`two_population_threshold` — a two-component Gaussian mixture on the
  *logarithm* of the values.  Noise in the clusters' own plane (or noise not
  much sparser than the clusters) leaves no empty stretch: the sorted values
  rise smoothly from one level to the other, but on a log scale they are two
  well separated bumps.

:func:`auto_noise_threshold` takes the jump when there is one and the two
populations otherwise.
"""

from __future__ import annotations

import numpy as np

from .._engine.cuts import em_two_gaussians, equal_density_point, twomeans

__all__ = [
    "AUTO_THRESHOLD_MIN_RATIO",
    "AUTO_THRESHOLD_WINDOW",
    "MAX_NOISE_FRACTION",
    "MIN_SEPARATION",
    "auto_noise_threshold",
    "jump_threshold",
    "two_population_threshold",
]

#: The jump rule needs a jump of at least this factor...
AUTO_THRESHOLD_MIN_RATIO = 2.0
#: ... over a window of this fraction of the sorted values.
AUTO_THRESHOLD_WINDOW = 0.005
#: Smallest separation (Ashman's D) of the two log-populations taken as clusters and noise.
MIN_SEPARATION = 3.0
#: Largest share of the points the two-population rule may call noise.
MAX_NOISE_FRACTION = 1.0 / 3.0
_EM_MAX_ITER = 200
_EM_TOL = 1e-10


def _sorted_logs(values) -> tuple[np.ndarray, np.ndarray]:
    """Finite values sorted ascending, and their logs (zeros raised to the smallest positive)."""
    v = np.sort(np.asarray(values, dtype=np.float64).reshape(-1))
    v = v[np.isfinite(v)]
    positive = v[v > 0]
    logs = np.log(np.maximum(v, positive[0] if positive.size else 1.0))
    return v, logs


def jump_threshold(
    values,
    *,
    min_ratio: float = AUTO_THRESHOLD_MIN_RATIO,
    window: float = AUTO_THRESHOLD_WINDOW,
) -> float | None:
    """Threshold at the widest jump of the sorted values, or ``None`` without one.

    With the values sorted, ``v_1 <= ... <= v_n``, and ``m = max(1, round(window
    * n))``, the window of ``m`` steps with the largest ratio ``v_(j+m) / v_j``
    is the valley between the two populations (a window rather than a single
    step, because at large ``n`` a few noise points close to a cluster fill the
    valley in with small steps).  Below ``min_ratio`` there is no jump
    (``None``); otherwise the threshold is the geometric mean of the two values
    around the largest single step inside the window.  The defaults were chosen
    on :func:`~geoforest.datasets.make_ldln` data (docs/results/llpd.md).

    Examples
    --------
    >>> round(jump_threshold(np.array([0.1, 0.11, 0.12, 0.1, 0.13, 2.0, 2.5])), 4)
    0.5099
    >>> jump_threshold(np.array([1.0, 1.1, 1.2, 1.3])) is None
    True
    """
    v, logs = _sorted_logs(values)
    if v.size < 2:
        return None
    m = min(max(1, int(round(window * v.size))), v.size - 1)
    spans = logs[m:] - logs[:-m]
    j = int(np.argmax(spans))
    if spans[j] < np.log(min_ratio):
        return None
    t = j + int(np.argmax(np.diff(logs[j : j + m + 1])))
    return float(np.exp(0.5 * (logs[t] + logs[t + 1])))


def two_population_threshold(
    values,
    *,
    min_separation: float = MIN_SEPARATION,
    max_noise_fraction: float = MAX_NOISE_FRACTION,
    return_fit: bool = False,
):
    """Threshold between two populations of the log values, or ``None`` if there is one.

    Fits a two-component Gaussian mixture to ``log v`` by EM (the engine's
    GMM split rule: started from the best two-means cut, unequal variances)
    and accepts it as *clusters + noise* only when all of these hold:

    * BIC prefers two components to one;
    * the components are well separated: Ashman's ``D = sqrt(2) |mu_2 - mu_1|
      / sqrt(s_1^2 + s_2^2) >= min_separation`` (``D > 2`` is the usual bar of
      a clean bimodal mixture; 3 keeps a skewed single population out: one
      Gaussian blob gives ``D`` of 1.5-1.8);
    * the upper component (the noise) holds at most ``max_noise_fraction`` of
      the points: clusters of different intrinsic dimensions without any
      noise also form two log-populations, of comparable size (``make_ldln``
      without noise: ``D`` of 4.1-4.5 with half the points in the upper one).

    The threshold is where the two weighted densities cross between the
    means, mapped back from the log scale.

    Parameters
    ----------
    values : array-like of shape (n,)
        Non-negative distances (non-finite values are ignored).
    min_separation : float, default=3.0
    max_noise_fraction : float, default=1/3
    return_fit : bool, default=False
        Also return a dict with the fit (``weight_noise``, ``means``, ``stds``
        of the log values, ``separation``, ``bic_one``, ``bic_two``).

    Returns
    -------
    float or None
        ``theta`` (points with ``values > theta`` are noise), ``None`` when
        the values are one population.

    Examples
    --------
    >>> rng = np.random.RandomState(0)
    >>> v = np.exp(np.r_[rng.normal(-4.0, 0.4, 800), rng.normal(-1.8, 0.3, 200)])
    >>> round(two_population_threshold(v), 3)
    0.07
    >>> two_population_threshold(np.exp(rng.normal(0.0, 0.5, 1000))) is None
    True
    """
    _, z = _sorted_logs(values)
    n = z.size
    fit = {
        "weight_noise": np.nan,
        "means": (np.nan, np.nan),
        "stds": (np.nan, np.nan),
        "separation": np.nan,
        "bic_one": np.nan,
        "bic_two": np.nan,
    }
    theta = None
    if n >= 4 and z[-1] > z[0]:
        init, _, _ = twomeans(z, n, 1)
        var = float(np.var(z))
        loglik, w1, m1, v1, m2, v2 = em_two_gaussians(
            z, n, init, False, 1e-9 * var, _EM_MAX_ITER, _EM_TOL
        )
        if m1 > m2:
            w1, m1, v1, m2, v2 = 1.0 - w1, m2, v2, m1, v1
        bic_one = n * (np.log(2 * np.pi * var) + 1.0) + 2.0 * np.log(n)
        bic_two = -2.0 * loglik + 5.0 * np.log(n)
        separation = np.sqrt(2.0) * (m2 - m1) / np.sqrt(v1 + v2)
        fit = {
            "weight_noise": 1.0 - w1,
            "means": (m1, m2),
            "stds": (np.sqrt(v1), np.sqrt(v2)),
            "separation": separation,
            "bic_one": bic_one,
            "bic_two": bic_two,
        }
        if bic_two < bic_one and separation >= min_separation and 1.0 - w1 <= max_noise_fraction:
            t = equal_density_point(w1, m1, v1, m2, v2)
            if np.isfinite(t):
                theta = float(np.exp(t))
    return (theta, fit) if return_fit else theta


def auto_noise_threshold(
    values,
    *,
    min_ratio: float = AUTO_THRESHOLD_MIN_RATIO,
    window: float = AUTO_THRESHOLD_WINDOW,
    min_separation: float = MIN_SEPARATION,
    max_noise_fraction: float = MAX_NOISE_FRACTION,
) -> float:
    """Denoising threshold of the sorted ``k``-th neighbour distances.

    :func:`jump_threshold` when the values jump by ``min_ratio`` (background
    noise far sparser than the clusters, any noise fraction), else
    :func:`two_population_threshold` (noise in the clusters' plane: no jump,
    two log-populations), else every point is kept (the threshold is the
    largest value).  Infinite values (points the m-scale approximation leaves
    unconnected) are always above the threshold.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Non-negative distances.
    min_ratio, window : float
        See :func:`jump_threshold`.
    min_separation, max_noise_fraction : float
        See :func:`two_population_threshold`.

    Returns
    -------
    float
        The threshold ``theta``: points with ``values > theta`` are noise.

    Examples
    --------
    >>> round(auto_noise_threshold(np.array([0.1, 0.11, 0.12, 0.1, 0.13, 2.0, 2.5])), 4)
    0.5099
    >>> auto_noise_threshold(np.array([1.0, 1.1, 1.2, 1.3]))
    1.3
    """
    v, _ = _sorted_logs(values)
    if v.size < 2:
        return float(v[-1]) if v.size else 0.0
    theta = jump_threshold(v, min_ratio=min_ratio, window=window)
    if theta is None:
        theta = two_population_threshold(
            v, min_separation=min_separation, max_noise_fraction=max_noise_fraction
        )
    return float(v[-1]) if theta is None else theta
