"""Clean 2-D manifolds in 3-D with geodesic ground truth, and rotated noise.

Why these data?  The URerF simulations are 1-D curves, a round sphere and a
mixture; none of them shows whether a forest's neighbour ranking *distorts* a
direction it resolved.  A sheet whose two in-plane extents differ (a strip
three or ten times longer than it is wide, a rolled sheet, a ring, a torus
with unequal radii, a curved patch, a sheet of uneven density) does: the true
neighbours of a point form a disc on the surface, and a ranking that stretches
one direction (as z-scoring the columns of a long strip does) retrieves an
ellipse instead.  :func:`add_rotated_noise` covers the other blind spot of
axis-aligned noise dimensions: noise spread over every coordinate, where a
forest finds no axis to ignore and should fall back to Euclidean quality.

Every surface has a *short* in-plane extent of about 1 and a long one of
about ``aspect`` (the exact geometry is listed in :func:`make_sheet`).  Points
are drawn at random, uniformly on the surface (except ``"uneven"``), so no two
geodesic distances tie.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import dijkstra
from sklearn.neighbors import kneighbors_graph
from sklearn.utils import check_random_state

from ._simulations import _check_2d_finite, _check_int, _check_positive_float

__all__ = ["SHEET_KINDS", "add_rotated_noise", "make_sheet", "sheet_geodesic_truth"]

#: Names of the surfaces :func:`make_sheet` draws.
SHEET_KINDS: tuple[str, ...] = ("strip", "roll", "cylinder", "torus", "paraboloid", "uneven")
#: Kinds whose latent coordinates are isometric (Euclidean distance of the latent = geodesic).
_ISOMETRIC = ("strip", "roll", "uneven")
#: Kinds whose geodesic comes from shortest paths over a neighbour graph (an approximation).
_GRAPH = ("torus", "paraboloid")

# Flat sheets lie in a plane tilted by 30 degrees about the first axis, so that no column
# is constant (the short direction shows in two columns, the long one in the first).
_TILT = np.pi / 6
# The rolled sheet winds once, along the spiral r = c * theta for theta in [1.5 pi, 3.5 pi]
# (the start of scikit-learn's swiss roll); c makes the arc length equal to ``aspect``.
# One turn keeps the gap between layers (2 pi c ~ 0.13 aspect) wider than the radius of a
# point's 50 nearest of 1,000 neighbours, so Euclidean neighbours of the clean roll do not
# jump between layers.
_ROLL_THETA = (1.5 * np.pi, 3.5 * np.pi)
# Density ratio between the dense and the sparse end of the "uneven" sheet.
_UNEVEN_RATIO = 20.0
# Largest slope of the paraboloid z = (x^2 + y^2) * 2 / aspect (at the long ends).
_PARABOLOID_SLOPE = 2.0


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------
def _check_kind(kind: object) -> str:
    if not isinstance(kind, str) or kind not in SHEET_KINDS:
        raise ValueError(f"kind must be one of {SHEET_KINDS}, got {kind!r}.")
    return kind


def _check_aspect(aspect: object, kind: str) -> float:
    aspect = _check_positive_float(aspect, "aspect", allow_zero=False)
    if aspect < 1.0 or (kind == "torus" and aspect == 1.0):
        bound = "> 1 (the tube would cross the axis)" if kind == "torus" else ">= 1"
        raise ValueError(f"aspect of a {kind} must be {bound}, got {aspect!r}.")
    return aspect


# ---------------------------------------------------------------------------
# geometry
# ---------------------------------------------------------------------------
def _spiral_antiderivative(theta: np.ndarray) -> np.ndarray:
    """Antiderivative of ``sqrt(theta**2 + 1)`` (arc length of ``r = theta``)."""
    return 0.5 * (theta * np.sqrt(theta**2 + 1.0) + np.arcsinh(theta))


def _roll_scale(aspect: float) -> float:
    """``c`` of the spiral ``r = c theta`` whose one turn has arc length ``aspect``."""
    lo, hi = _ROLL_THETA
    return aspect / float(_spiral_antiderivative(np.float64(hi)) - _spiral_antiderivative(lo))


def _roll_theta(s: np.ndarray, c: float) -> np.ndarray:
    """The spiral angle at arc length ``s`` from its start (Newton's method, to rounding)."""
    lo, hi = _ROLL_THETA
    target = s / c + _spiral_antiderivative(np.float64(lo))
    grid = np.linspace(lo, hi, 2049)
    theta = np.interp(target, _spiral_antiderivative(grid), grid)
    for _ in range(4):
        theta = theta - (_spiral_antiderivative(theta) - target) / np.sqrt(theta**2 + 1.0)
    return theta


def _embed(kind: str, latent: np.ndarray, aspect: float) -> np.ndarray:
    """The 3-D points of the latent coordinates ``latent`` (n, 2) of a ``kind`` sheet."""
    a, b = latent[:, 0], latent[:, 1]
    if kind in ("strip", "uneven"):
        return np.column_stack([a, b * np.cos(_TILT), b * np.sin(_TILT)])
    if kind == "roll":
        c = _roll_scale(aspect)
        theta = _roll_theta(a, c)
        return np.column_stack([c * theta * np.cos(theta), b, c * theta * np.sin(theta)])
    if kind == "cylinder":
        radius = aspect / (2.0 * np.pi)
        return np.column_stack([radius * np.cos(a / radius), radius * np.sin(a / radius), b])
    if kind == "torus":
        ring = aspect + np.cos(b)
        return np.column_stack([ring * np.cos(a), ring * np.sin(a), np.sin(b)])
    # paraboloid
    return np.column_stack([a, b, (a**2 + b**2) * (_PARABOLOID_SLOPE / aspect)])


def _draw_latent(kind: str, n: int, aspect: float, rng: np.random.RandomState) -> np.ndarray:
    """``n`` latent points, uniform on the surface (``"uneven"``: dense at ``u = aspect``)."""
    if kind in ("strip", "roll", "cylinder"):
        return np.column_stack([rng.uniform(0.0, aspect, n), rng.uniform(0.0, 1.0, n)])
    if kind == "uneven":
        # density of u proportional to exp(beta u / aspect): ratio _UNEVEN_RATIO end to end
        beta = np.log(_UNEVEN_RATIO)
        u = aspect * np.log1p(rng.uniform(0.0, 1.0, n) * (_UNEVEN_RATIO - 1.0)) / beta
        return np.column_stack([u, rng.uniform(0.0, 1.0, n)])
    if kind == "torus":
        # area element (R + cos phi) dtheta dphi with R = aspect, tube radius 1
        theta = rng.uniform(0.0, 2.0 * np.pi, n)
        phi = _rejection(
            n,
            rng,
            lambda m: rng.uniform(0.0, 2.0 * np.pi, m),
            lambda p: (aspect + np.cos(p)) / (aspect + 1.0),
        )
        return np.column_stack([theta, phi])
    # paraboloid over [-aspect/2, aspect/2] x [-1/2, 1/2]: area element sqrt(1 + |grad z|^2)
    g = 2.0 * _PARABOLOID_SLOPE / aspect
    top = np.sqrt(1.0 + g**2 * ((aspect / 2) ** 2 + 0.25))
    xy = _rejection(
        n,
        rng,
        lambda m: np.column_stack(
            [rng.uniform(-aspect / 2, aspect / 2, m), rng.uniform(-0.5, 0.5, m)]
        ),
        lambda p: np.sqrt(1.0 + g**2 * (p[:, 0] ** 2 + p[:, 1] ** 2)) / top,
    )
    return xy


def _rejection(n, rng, propose, accept_probability) -> np.ndarray:
    """``n`` draws of ``propose`` kept with ``accept_probability`` (rejection sampling)."""
    kept: list[np.ndarray] = []
    total = 0
    while total < n:
        p = propose(2 * (n - total) + 16)
        p = p[rng.uniform(size=len(p)) < accept_probability(p)]
        kept.append(p)
        total += len(p)
    return np.concatenate(kept)[:n]


def _graph_geodesics(points: np.ndarray, n_sources: int, n_neighbors: int) -> np.ndarray:
    """Shortest paths from the first ``n_sources`` points to the first ``n_sources``, over the
    symmetrised ``n_neighbors``-NN graph of ``points`` with Euclidean edge lengths."""
    graph = kneighbors_graph(points, n_neighbors, mode="distance")
    graph = graph.maximum(graph.T)
    D = dijkstra(graph, directed=False, indices=np.arange(n_sources))[:, :n_sources]
    if not np.isfinite(D).all():
        raise ValueError(
            f"the {n_neighbors}-NN graph of the sheet is disconnected; "
            "raise n_neighbors or n_dense."
        )
    return np.minimum(D, D.T)


# ---------------------------------------------------------------------------
# public functions
# ---------------------------------------------------------------------------
def make_sheet(
    kind: str,
    n_samples: int = 1000,
    *,
    aspect: float = 3.0,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Points drawn on a 2-D surface in 3-D whose in-plane extents differ.

    A learned neighbour ranking must not distort a direction it resolved: on a
    clean surface whose true neighbourhoods are small discs, a ranking that
    stretches one in-plane direction (for example by rescaling a column)
    retrieves the wrong points.  Unequal extents (``aspect``) and curvature make
    such a distortion visible; :func:`sheet_geodesic_truth` gives the true
    geodesic neighbours to score against.

    Parameters
    ----------
    kind : {"strip", "roll", "cylinder", "torus", "paraboloid", "uneven"}
        The surface (lengths below; ``A`` is ``aspect``):

        ``"strip"``
            Flat ``A x 1`` rectangle, tilted 30 degrees out of the first two
            axes: ``(u, v cos 30, v sin 30)``.
        ``"roll"``
            The same rectangle rolled once along its long side onto the spiral
            ``r = c theta``, ``theta`` in ``[1.5 pi, 3.5 pi]``, as
            ``(r cos theta, v, r sin theta)``; ``u`` is arc length along the
            spiral (an isometric swiss roll).
        ``"cylinder"``
            Ring of circumference ``A`` and height 1 (radius ``A / (2 pi)``):
            closed in one direction.
        ``"torus"``
            Tube radius 1 around a circle of radius ``A`` (``A > 1``).
        ``"paraboloid"``
            The graph of ``z = 2 (x^2 + y^2) / A`` over
            ``[-A/2, A/2] x [-1/2, 1/2]`` (slope 2 at the long ends).
        ``"uneven"``
            The flat ``"strip"`` with a density along its long side
            proportional to ``exp(ln(20) u / A)``: twenty times denser at
            ``u = A`` than at ``u = 0``.

    n_samples : int, default=1000
        Number of points, at least 1.
    aspect : float, default=3.0
        Ratio of the long to the short in-plane extent, >= 1 (> 1 for the
        torus, where it is the ratio of the radii).
    random_state : int, RandomState instance or None, default=None
        Controls the draw.

    Returns
    -------
    X : ndarray of shape (n_samples, 3)
        The points, float64.
    latent : ndarray of shape (n_samples, 2)
        Intrinsic coordinates: ``(u, v)`` (arc lengths) for ``"strip"``,
        ``"roll"``, ``"cylinder"`` and ``"uneven"``; the angles
        ``(theta, phi)`` for ``"torus"``; ``(x, y)`` for ``"paraboloid"``.
        Give them to :func:`sheet_geodesic_truth`.

    See Also
    --------
    sheet_geodesic_truth : ground truth for ``geodesic_precision_recall``.
    add_rotated_noise : noise that does not lie along coordinate axes.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.datasets import make_sheet
    >>> X, latent = make_sheet("roll", 200, aspect=10, random_state=0)
    >>> X.shape, latent.shape
    ((200, 3), (200, 2))
    >>> bool(np.allclose(X[:, 1], latent[:, 1]))  # the roll's axis is the height
    True
    """
    kind = _check_kind(kind)
    n_samples = _check_int(n_samples, "n_samples", minimum=1)
    aspect = _check_aspect(aspect, kind)
    rng = check_random_state(random_state)
    latent = _draw_latent(kind, n_samples, aspect, rng)
    return _embed(kind, latent, aspect), latent


def sheet_geodesic_truth(
    kind: str,
    latent: np.ndarray,
    *,
    aspect: float = 3.0,
    n_neighbors: int = 15,
    n_dense: int = 4000,
    random_state: int | np.random.RandomState | None = 0,
) -> dict[str, object]:
    """Geodesic ground truth of a :func:`make_sheet` surface, as keyword arguments.

    Geodesic precision scores neighbours against the true distance along the
    surface, not through the space around it; this helper gives that distance
    for every kind in the form ``geodesic_precision_recall`` takes.

    * ``"strip"``, ``"roll"``, ``"uneven"`` (isometric): ``{"latent": latent}``;
      the Euclidean distance of the intrinsic coordinates is the geodesic,
      exactly.
    * ``"cylinder"``: the exact closed form
      ``sqrt(min(|du|, A - |du|)^2 + dv^2)`` as an ``(n, n)`` matrix with
      ``metric="precomputed"``.
    * ``"torus"``, ``"paraboloid"``: an *approximation*: shortest paths over
      the symmetrised ``n_neighbors``-NN graph (Euclidean edge lengths) of the
      points together with ``n_dense`` more points drawn on the same surface,
      as an ``(n, n)`` matrix with ``metric="precomputed"``.  The extra points
      shorten the zig-zag of graph paths, which makes graph distances a little
      too long.  On the ``aspect=3`` cylinder, where the exact distance is
      known, this graph at ``n = 1000`` (+ 4,000 points, 15 neighbours)
      overestimates distances by 1.9 % (median; 3.7 % at the 95th percentile)
      and shares 98 % of each point's 50 nearest neighbours with the exact
      distance.  Against a graph ten times denser (40,000 extra points, 20
      neighbours) the 50 nearest agree at 98 % on the ``aspect=3`` torus and
      paraboloid (n = 1000).  ``tests/datasets/test_sheets.py`` checks both
      comparisons at a smaller size.

    Parameters
    ----------
    kind : {"strip", "roll", "cylinder", "torus", "paraboloid", "uneven"}
        The kind given to :func:`make_sheet`.
    latent : array-like of shape (n_samples, 2)
        The ``latent`` returned by :func:`make_sheet`.
    aspect : float, default=3.0
        The ``aspect`` given to :func:`make_sheet` (the cylinder's
        circumference, the surfaces rebuilt for the graph).
    n_neighbors : int, default=15
        Neighbours per node of the graph (torus, paraboloid).
    n_dense : int, default=4000
        Extra points drawn on the surface for the graph (torus, paraboloid).
    random_state : int, RandomState instance or None, default=0
        Controls the extra points.

    Returns
    -------
    truth : dict
        Keyword arguments for :func:`geoforest.metrics.geodesic_precision_recall`
        (``latent`` and, for a matrix, ``metric="precomputed"``).

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.datasets import make_sheet, sheet_geodesic_truth
    >>> X, latent = make_sheet("cylinder", 50, aspect=4, random_state=0)
    >>> truth = sheet_geodesic_truth("cylinder", latent, aspect=4)
    >>> truth["metric"], truth["latent"].shape
    ('precomputed', (50, 50))
    >>> sheet_geodesic_truth("strip", latent, aspect=4)["latent"] is not None
    True
    """
    kind = _check_kind(kind)
    aspect = _check_aspect(aspect, kind)
    latent = _check_2d_finite(latent, "latent")
    if latent.shape[1] != 2:
        raise ValueError(f"latent must have 2 columns (make_sheet's), got shape {latent.shape}.")
    n = latent.shape[0]
    if kind in _ISOMETRIC:
        return {"latent": latent}
    if kind == "cylinder":
        if latent[:, 0].min() < 0 or latent[:, 0].max() >= aspect:
            raise ValueError(
                "the cylinder's latent u must lie in [0, aspect): pass the aspect given to "
                "make_sheet."
            )
        du = np.abs(latent[:, :1] - latent[:, 0])
        dv = latent[:, 1:2] - latent[:, 1]
        return {"latent": np.hypot(np.minimum(du, aspect - du), dv), "metric": "precomputed"}
    n_neighbors = _check_int(n_neighbors, "n_neighbors", minimum=2)
    n_dense = _check_int(n_dense, "n_dense", minimum=0)
    if n + n_dense <= n_neighbors:
        raise ValueError(f"n_neighbors={n_neighbors} needs more than {n + n_dense} points.")
    rng = check_random_state(random_state)
    extra = _draw_latent(kind, n_dense, aspect, rng)
    points = _embed(kind, np.vstack([latent, extra]), aspect)
    return {"latent": _graph_geodesics(points, n, n_neighbors), "metric": "precomputed"}


def add_rotated_noise(
    X: np.ndarray,
    n_dims: int = 20,
    *,
    level: float = 0.5,
    random_state: int | np.random.RandomState | None = None,
    return_rotation: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Append Gaussian noise columns to ``X`` and rotate everything at random.

    Noise dimensions appended as new columns lie along coordinate axes, where
    a forest can learn to ignore them.  After a random rotation the noise is
    spread over every column and no axis holds the signal alone: a forest then
    has nothing to learn about which features matter, and its neighbours
    should be no worse than Euclidean ones.  Pairwise distances, and so the
    geodesic ground truth, are those of the unrotated matrix.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite signal.
    n_dims : int, default=20
        Number of noise columns, >= 0.
    level : float, default=0.5
        Noise standard deviation as a multiple of the median column standard
        deviation of ``X``, >= 0.
    random_state : int, RandomState instance or None, default=None
        Controls the noise and the rotation.
    return_rotation : bool, default=False
        Also return the orthogonal matrix.

    Returns
    -------
    X_rotated : ndarray of shape (n_samples, n_features + n_dims)
        ``[X, noise] @ Q``.
    Q : ndarray of shape (n_features + n_dims, n_features + n_dims)
        The rotation, Haar-distributed (QR of a Gaussian matrix with the signs
        of the diagonal of R fixed); only with ``return_rotation=True``.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.datasets import add_rotated_noise, make_helix
    >>> X, _ = make_helix(100, random_state=0)
    >>> Xr, Q = add_rotated_noise(X, 20, level=0.5, random_state=0, return_rotation=True)
    >>> Xr.shape
    (100, 23)
    >>> bool(np.allclose((Xr @ Q.T)[:, :3], X))
    True
    """
    X = _check_2d_finite(X)
    n_dims = _check_int(n_dims, "n_dims", minimum=0)
    level = _check_positive_float(level, "level", allow_zero=True)
    rng = check_random_state(random_state)
    sigma = level * float(np.median(X.std(axis=0)))
    Z = np.hstack([X, rng.normal(0.0, sigma, size=(X.shape[0], n_dims))])
    Q, R = np.linalg.qr(rng.standard_normal((Z.shape[1], Z.shape[1])))
    Q = Q * np.where(np.diag(R) < 0, -1.0, 1.0)
    X_rotated = Z @ Q
    return (X_rotated, Q) if return_rotation else X_rotated
