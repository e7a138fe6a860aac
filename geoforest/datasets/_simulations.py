"""Synthetic manifolds used to evaluate geodesic learners.

The four simulations follow Appendix B of the URerF paper ("Geodesic Learning
via Unsupervised Decision Forests"): a straight line, a helix, a sphere and a
three-component Gaussian mixture, all in three dimensions.  Each generator
returns ``(X, y)`` where ``y`` carries the latent ground truth needed by
:func:`geoforest.metrics.geodesic_precision_recall`.  Rows are returned in a
random order controlled by ``random_state`` so that learners cannot exploit
the generation order.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
    "add_noise_dims",
    "helix_arc_length",
    "make_gaussian_mixture",
    "make_helix",
    "make_linear",
    "make_sphere",
    "minmax_rescale",
]

_LINE_DIRECTION = np.array([4.0, 6.0, 9.0])
_HELIX_T_START = 2.0 * np.pi
_HELIX_T_STOP = 9.0 * np.pi
_MIXTURE_MEANS = np.array([[-3.0, -3.0, -3.0], [0.0, 0.0, 0.0], [3.0, 3.0, 3.0]])
_MIXTURE_WEIGHTS = np.array([0.3, 0.3, 0.4])


# ---------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------
def _is_int(value: object) -> bool:
    """True for Python or NumPy integers (booleans excluded)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _check_int(value: object, name: str, *, minimum: int) -> int:
    """Return ``value`` as an ``int`` after checking its type and lower bound."""
    if not _is_int(value) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def _check_positive_float(value: object, name: str, *, allow_zero: bool) -> float:
    """Return ``value`` as a finite float that is positive (or non-negative)."""
    is_real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if not is_real or not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite real number {bound}, got {value!r}.")
    return float(value)


def _check_2d_finite(X: object, name: str = "X") -> np.ndarray:
    """Return ``X`` as a finite float64 2-D array with at least one row."""
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array.") from exc
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}.")
    if arr.shape[0] < 1:
        raise ValueError(f"{name} must contain at least one sample.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values.")
    return arr


def _open_grid(n: int, start: float, stop: float) -> np.ndarray:
    """Midpoints of ``n`` equal cells splitting the open interval ``(start, stop)``."""
    return start + (np.arange(n) + 0.5) * ((stop - start) / n)


# ---------------------------------------------------------------------------
# simulations
# ---------------------------------------------------------------------------
def make_linear(
    n_samples: int = 1000, *, random_state: int | np.random.RandomState | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Points on the line ``(4t, 6t, 9t)`` with ``t`` on a grid in ``(0, 1)``.

    The parameter takes the cell midpoints ``t_i = (i + 0.5) / n_samples`` and
    the rows are returned in a random order.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points, at least 1.
    random_state : int, RandomState instance or None, default=None
        Controls the order of the rows.

    Returns
    -------
    X : ndarray of shape (n_samples, 3)
        The points, float64.
    y : ndarray of shape (n_samples,)
        Arc length from the origin, ``t * sqrt(4**2 + 6**2 + 9**2)``.  The
        geodesic distance between two points is ``abs(y[i] - y[j])``.

    References
    ----------
    .. [1] M. Madhyastha, P. Li, J. Browne, V. Strnadova-Neeley, C. E. Priebe,
       R. Burns and J. T. Vogelstein, "Geodesic Learning via Unsupervised
       Decision Forests", Appendix B.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.datasets import make_linear
    >>> X, y = make_linear(4, random_state=0)
    >>> X.shape, y.shape
    ((4, 3), (4,))
    >>> bool(np.allclose(np.linalg.norm(X, axis=1), y))
    True
    """
    n_samples = _check_int(n_samples, "n_samples", minimum=1)
    rng = check_random_state(random_state)
    t = _open_grid(n_samples, 0.0, 1.0)[rng.permutation(n_samples)]
    X = t[:, None] * _LINE_DIRECTION
    y = t * np.sqrt(np.sum(_LINE_DIRECTION**2))
    return X, y


def helix_arc_length(t: np.ndarray | float) -> np.ndarray:
    """Arc length of the helix ``(t cos t, t sin t, t)`` measured from ``t = 2*pi``.

    The speed of the curve is ``sqrt(t**2 + 2)``; its antiderivative is
    ``0.5 * (t * sqrt(t**2 + 2) + 2 * asinh(t / sqrt(2)))``.

    Parameters
    ----------
    t : float or array-like
        Curve parameter(s).

    Returns
    -------
    s : ndarray
        Arc length from ``2*pi`` to ``t`` (negative for ``t < 2*pi``).

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.datasets._simulations import helix_arc_length
    >>> float(helix_arc_length(2 * np.pi))
    0.0
    """
    return _helix_antiderivative(np.asarray(t, dtype=np.float64)) - _helix_antiderivative(
        np.float64(_HELIX_T_START)
    )


def _helix_antiderivative(t: np.ndarray) -> np.ndarray:
    """Antiderivative of ``sqrt(t**2 + 2)``."""
    return 0.5 * (t * np.sqrt(t**2 + 2.0) + 2.0 * np.arcsinh(t / np.sqrt(2.0)))


def make_helix(
    n_samples: int = 1000, *, random_state: int | np.random.RandomState | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Points on the helix ``(t cos t, t sin t, t)`` with ``t`` on a grid in ``(2pi, 9pi)``.

    The parameter takes the midpoints of ``n_samples`` equal cells of the
    open interval and the rows are returned in a random order.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points, at least 1.
    random_state : int, RandomState instance or None, default=None
        Controls the order of the rows.

    Returns
    -------
    X : ndarray of shape (n_samples, 3)
        The points, float64.
    y : ndarray of shape (n_samples,)
        Arc length from ``t = 2*pi`` (the curve's speed is ``sqrt(t**2 + 2)``).
        The geodesic distance between two points is ``abs(y[i] - y[j])``.

    References
    ----------
    .. [1] M. Madhyastha, P. Li, J. Browne, V. Strnadova-Neeley, C. E. Priebe,
       R. Burns and J. T. Vogelstein, "Geodesic Learning via Unsupervised
       Decision Forests", Appendix B.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.datasets import make_helix
    >>> X, y = make_helix(5, random_state=0)
    >>> X.shape, y.shape
    ((5, 3), (5,))
    >>> bool(np.all(np.diff(y[np.argsort(X[:, 2])]) > 0))
    True
    """
    n_samples = _check_int(n_samples, "n_samples", minimum=1)
    rng = check_random_state(random_state)
    t = _open_grid(n_samples, _HELIX_T_START, _HELIX_T_STOP)[rng.permutation(n_samples)]
    X = np.column_stack([t * np.cos(t), t * np.sin(t), t])
    return X, helix_arc_length(t)


def _sphere_grid_shape(n_samples: int) -> tuple[int, int]:
    """Grid sizes ``(n_u, n_v)`` with ``n_u * n_v >= n_samples`` and ``n_u ~ n_v``."""
    n_v = int(np.ceil(np.sqrt(n_samples)))
    n_u = int(np.ceil(n_samples / n_v))
    return n_u, n_v


def make_sphere(
    n_samples: int = 1000,
    *,
    radius: float = 9.0,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Points of an equally spaced ``(u, v)`` grid on a sphere.

    The points are ``(r cos u sin v, r sin u sin v, r cos v)`` with ``u`` on a
    midpoint grid of ``(0, 2pi)`` and ``v`` on a midpoint grid of ``(0, pi)``.
    The grid has ``n_u * n_v >= n_samples`` nodes with ``n_v = ceil(sqrt(n))``
    and ``n_u = ceil(n / n_v)``; ``n_samples`` distinct nodes are drawn without
    replacement, in random order.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points, at least 1.
    radius : float, default=9.0
        Radius of the sphere, > 0.
    random_state : int, RandomState instance or None, default=None
        Controls which grid nodes are kept and their order.

    Returns
    -------
    X : ndarray of shape (n_samples, 3)
        The points, float64, each of norm ``radius``.
    y : ndarray of shape (n_samples, 3)
        Unit vectors ``X / radius``.  The great-circle distance is
        ``radius * arccos(y[i] @ y[j])``, whose neighbour ranking equals the
        Euclidean ranking of the unit vectors (use ``metric="great_circle"``).

    References
    ----------
    .. [1] M. Madhyastha, P. Li, J. Browne, V. Strnadova-Neeley, C. E. Priebe,
       R. Burns and J. T. Vogelstein, "Geodesic Learning via Unsupervised
       Decision Forests", Appendix B.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.datasets import make_sphere
    >>> X, y = make_sphere(10, random_state=0)
    >>> X.shape, y.shape
    ((10, 3), (10, 3))
    >>> bool(np.allclose(np.linalg.norm(X, axis=1), 9.0))
    True
    """
    n_samples = _check_int(n_samples, "n_samples", minimum=1)
    radius = _check_positive_float(radius, "radius", allow_zero=False)
    rng = check_random_state(random_state)
    n_u, n_v = _sphere_grid_shape(n_samples)
    nodes = rng.choice(n_u * n_v, size=n_samples, replace=False)
    u = _open_grid(n_u, 0.0, 2.0 * np.pi)[nodes // n_v]
    v = _open_grid(n_v, 0.0, np.pi)[nodes % n_v]
    y = np.column_stack([np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v)])
    return radius * y, y


def make_gaussian_mixture(
    n_samples: int = 1000, *, random_state: int | np.random.RandomState | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Three spherical Gaussians centred at ``(-3,-3,-3)``, ``(0,0,0)`` and ``(3,3,3)``.

    Component sizes are drawn from a multinomial with weights
    ``(0.3, 0.3, 0.4)``; each component has identity covariance.  Rows are
    returned in a random order.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points, at least 1.
    random_state : int, RandomState instance or None, default=None
        Controls component sizes, the draws and the row order.

    Returns
    -------
    X : ndarray of shape (n_samples, 3)
        The points, float64.
    y : ndarray of shape (n_samples,)
        Component labels in ``{0, 1, 2}`` (use them as ``labels=`` ground truth).

    References
    ----------
    .. [1] M. Madhyastha, P. Li, J. Browne, V. Strnadova-Neeley, C. E. Priebe,
       R. Burns and J. T. Vogelstein, "Geodesic Learning via Unsupervised
       Decision Forests", Appendix B.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.datasets import make_gaussian_mixture
    >>> X, y = make_gaussian_mixture(100, random_state=0)
    >>> X.shape, y.shape
    ((100, 3), (100,))
    >>> sorted(set(y.tolist()))
    [0, 1, 2]
    """
    n_samples = _check_int(n_samples, "n_samples", minimum=1)
    rng = check_random_state(random_state)
    sizes = rng.multinomial(n_samples, _MIXTURE_WEIGHTS)
    y = np.repeat(np.arange(len(sizes)), sizes)
    X = _MIXTURE_MEANS[y] + rng.standard_normal((n_samples, 3))
    order = rng.permutation(n_samples)
    return X[order], y[order]


# ---------------------------------------------------------------------------
# noise and rescaling
# ---------------------------------------------------------------------------
def minmax_rescale(X: np.ndarray) -> np.ndarray:
    """Linearly rescale every column of ``X`` to ``[0, 1]``.

    Constant columns are mapped to 0.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite input data.

    Returns
    -------
    X_scaled : ndarray of shape (n_samples, n_features)
        A new float64 array.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.datasets import minmax_rescale
    >>> minmax_rescale([[1.0, 5.0], [3.0, 5.0], [2.0, 5.0]])
    array([[0. , 0. ],
           [1. , 0. ],
           [0.5, 0. ]])
    """
    X = _check_2d_finite(X)
    low = X.min(axis=0)
    span = X.max(axis=0) - low
    constant = span == 0
    span[constant] = 1.0
    X_scaled = (X - low) / span
    X_scaled[:, constant] = 0.0
    return X_scaled


def add_noise_dims(
    X: np.ndarray,
    n_dims: int,
    *,
    variance: float = 70.0,
    rescale: bool = False,
    random_state: int | np.random.RandomState | None = None,
) -> np.ndarray:
    """Append ``n_dims`` columns of iid ``N(0, variance)`` noise to ``X``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite signal data.
    n_dims : int
        Number of noise columns, >= 0.  ``0`` returns a copy of ``X``
        (rescaled if requested).
    variance : float, default=70.0
        Variance (not standard deviation) of each noise column, >= 0.
    rescale : bool, default=False
        If True, min-max rescale every column of the result to ``[0, 1]``
        (see :func:`minmax_rescale`).
    random_state : int, RandomState instance or None, default=None
        Controls the noise.

    Returns
    -------
    X_noisy : ndarray of shape (n_samples, n_features + n_dims)
        Float64 array; the first ``n_features`` columns are ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.datasets import add_noise_dims, make_linear
    >>> X, _ = make_linear(50, random_state=0)
    >>> Xn = add_noise_dims(X, 7, random_state=0)
    >>> Xn.shape
    (50, 10)
    >>> bool(np.array_equal(Xn[:, :3], X))
    True
    >>> Xr = add_noise_dims(X, 7, rescale=True, random_state=0)
    >>> float(Xr.min()), float(Xr.max())
    (0.0, 1.0)
    """
    X = _check_2d_finite(X)
    n_dims = _check_int(n_dims, "n_dims", minimum=0)
    variance = _check_positive_float(variance, "variance", allow_zero=True)
    rng = check_random_state(random_state)
    noise = rng.normal(0.0, np.sqrt(variance), size=(X.shape[0], n_dims))
    X_noisy = np.hstack([X, noise])
    if rescale:
        X_noisy = minmax_rescale(X_noisy)
    return X_noisy
