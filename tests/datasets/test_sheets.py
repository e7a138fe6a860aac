"""Tests for geoforest.datasets sheets (2-D surfaces with geodesic truth) and rotated noise."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.spatial.distance import cdist, pdist

from geoforest.datasets import (
    SHEET_KINDS,
    add_rotated_noise,
    make_helix,
    make_sheet,
    sheet_geodesic_truth,
)
from geoforest.datasets._sheets import _draw_latent, _embed, _graph_geodesics
from geoforest.metrics import geodesic_precision_recall


def _nearest(D: np.ndarray, k: int) -> np.ndarray:
    D = np.array(D, dtype=float)
    np.fill_diagonal(D, np.inf)
    return np.argsort(D, axis=1, kind="stable")[:, :k]


def _overlap(D1: np.ndarray, D2: np.ndarray, k: int) -> float:
    a, b = _nearest(D1, k), _nearest(D2, k)
    return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(a, b, strict=True)]))


@pytest.mark.parametrize("kind", SHEET_KINDS)
@pytest.mark.parametrize("n", [1, 2, 57])
def test_shapes_dtypes_and_seeds(kind, n):
    X, latent = make_sheet(kind, n, aspect=4.0, random_state=0)
    assert X.shape == (n, 3) and latent.shape == (n, 2)
    assert X.dtype == np.float64 and np.isfinite(X).all()
    X2, latent2 = make_sheet(kind, n, aspect=4.0, random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(latent, latent2)
    if n > 1:
        assert not np.array_equal(X, make_sheet(kind, n, aspect=4.0, random_state=1)[0])


def test_bad_inputs():
    with pytest.raises(ValueError, match="kind must be one of"):
        make_sheet("swiss", 10)
    with pytest.raises(ValueError, match="n_samples"):
        make_sheet("strip", 0)
    with pytest.raises(ValueError, match="n_samples"):
        make_sheet("strip", 10.0)
    with pytest.raises(ValueError, match="aspect"):
        make_sheet("strip", 10, aspect=0.5)
    with pytest.raises(ValueError, match="aspect"):
        make_sheet("strip", 10, aspect=np.nan)
    with pytest.raises(ValueError, match="tube would cross"):
        make_sheet("torus", 10, aspect=1.0)
    latent = make_sheet("cylinder", 20, aspect=5.0, random_state=0)[1]
    with pytest.raises(ValueError, match="2 columns"):
        sheet_geodesic_truth("strip", np.zeros((5, 3)))
    with pytest.raises(ValueError, match="pass the aspect"):
        sheet_geodesic_truth("cylinder", latent, aspect=2.0)  # made with aspect 5
    with pytest.raises(ValueError, match="n_neighbors"):
        sheet_geodesic_truth("torus", latent, n_neighbors=1)
    with pytest.raises(ValueError, match="level"):
        add_rotated_noise(np.ones((4, 2)), level=-1.0)
    with pytest.raises(ValueError, match="2-D"):
        add_rotated_noise(np.ones(4))


def test_extents_are_as_documented():
    X, latent = make_sheet("strip", 2000, aspect=10, random_state=0)
    u, v = latent.T
    assert 0 <= u.min() and u.max() <= 10 and 0 <= v.min() and v.max() <= 1
    assert u.max() > 9.9 and v.max() > 0.99
    # the plane is tilted: no constant column, the short side in columns 2 and 3
    assert np.allclose(X[:, 2] / X[:, 1], np.tan(np.pi / 6))
    X, latent = make_sheet("torus", 500, aspect=3, random_state=0)
    ring = np.hypot(X[:, 0], X[:, 1])
    np.testing.assert_allclose(np.hypot(ring - 3.0, X[:, 2]), 1.0)
    np.testing.assert_allclose(np.arctan2(X[:, 1], X[:, 0]) % (2 * np.pi), latent[:, 0])
    # uniform on the surface: more points on the outside of the tube (cos phi > 0)
    outside = np.mean(np.cos(latent[:, 1]) > 0)
    assert 0.55 < outside < 0.65  # expected 1/2 + 1/(3 pi) = 0.606
    X = make_sheet("cylinder", 500, aspect=6.0, random_state=0)[0]
    np.testing.assert_allclose(np.hypot(X[:, 0], X[:, 1]), 6.0 / (2 * np.pi))


@pytest.mark.parametrize("kind", ["strip", "roll", "uneven"])
def test_isometric_truth_is_the_latent_distance(kind):
    X, latent = make_sheet(kind, 80, aspect=3.0, random_state=2)
    truth = sheet_geodesic_truth(kind, latent, aspect=3.0)
    assert set(truth) == {"latent"}
    np.testing.assert_array_equal(cdist(truth["latent"], truth["latent"]), cdist(latent, latent))
    if kind != "roll":  # flat: the embedding is an isometry of the whole plane
        np.testing.assert_allclose(cdist(X, X), cdist(latent, latent), atol=1e-12)


def test_roll_is_an_arc_length_parametrisation():
    # Along a line of constant height, a fine polyline's length between two latent u values
    # equals their difference (an independent check of the spiral's inversion).
    aspect = 7.0
    u = np.linspace(0.0, aspect, 20001)
    pts = _embed("roll", np.column_stack([u, np.zeros_like(u)]), aspect)
    steps = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    np.testing.assert_allclose(steps.sum(), aspect, rtol=1e-6)
    np.testing.assert_allclose(steps, aspect / 20000, rtol=1e-4)
    # the spiral's own arc length by quadrature: r = c theta over one turn
    from geoforest.datasets._sheets import _ROLL_THETA, _roll_scale

    c = _roll_scale(aspect)
    length = quad(lambda t: c * np.sqrt(t**2 + 1.0), *_ROLL_THETA)[0]
    assert length == pytest.approx(aspect, rel=1e-10)


def test_uneven_density_ratio():
    latent = make_sheet("uneven", 40000, aspect=3.0, random_state=0)[1]
    counts = np.histogram(latent[:, 0], bins=10, range=(0, 3))[0]
    # density exp(ln 20 u / 3): the last tenth over the first is about 20 ** 0.9
    assert counts[-1] / counts[0] == pytest.approx(20**0.9, rel=0.15)


def test_cylinder_truth_equals_the_closed_form():
    aspect = 5.0
    X, latent = make_sheet("cylinder", 60, aspect=aspect, random_state=3)
    D = sheet_geodesic_truth("cylinder", latent, aspect=aspect)["latent"]
    # independently: the arc between angles on the circle of radius R, and the height
    R = aspect / (2 * np.pi)
    angle = np.arctan2(X[:, 1], X[:, 0])
    dphi = np.abs(np.angle(np.exp(1j * (angle[:, None] - angle[None, :]))))
    expected = np.hypot(R * dphi, X[:, 2][:, None] - X[:, 2][None, :])
    np.testing.assert_allclose(D, expected, atol=1e-12)
    assert np.allclose(D, D.T) and not np.diag(D).any()


def test_graph_geodesic_approximates_the_cylinder_closed_form():
    # The torus / paraboloid truth's graph, on the surface where the exact answer is known.
    aspect, n = 3.0, 300
    _, latent = make_sheet("cylinder", n, aspect=aspect, random_state=0)
    exact = sheet_geodesic_truth("cylinder", latent, aspect=aspect)["latent"]
    extra = _draw_latent("cylinder", 4000, aspect, np.random.RandomState(1))
    graph = _graph_geodesics(_embed("cylinder", np.vstack([latent, extra]), aspect), n, 15)
    far = exact > 0.3
    rel = (graph[far] - exact[far]) / exact[far]
    assert rel.min() > -1e-9  # chords are shorter than arcs: paths never undercut the geodesic
    assert np.median(rel) < 0.04
    assert _overlap(graph, exact, 30) > 0.95


def test_graph_truth_is_stable_against_a_much_denser_sample():
    n = 200
    _, latent = make_sheet("torus", n, aspect=3.0, random_state=0)
    default = sheet_geodesic_truth("torus", latent, aspect=3.0)
    dense = sheet_geodesic_truth("torus", latent, aspect=3.0, n_dense=16000, n_neighbors=20)
    assert default["metric"] == "precomputed" and default["latent"].shape == (n, n)
    assert _overlap(default["latent"], dense["latent"], 30) > 0.95
    # the truth scores itself perfectly and random neighbours at chance
    ind = _nearest(default["latent"], 30)
    assert geodesic_precision_recall(ind, ks=[30], **default).precision[0] == 1.0


def test_rotation_preserves_pairwise_distances_and_the_signal():
    X, _ = make_helix(150, random_state=0)
    Xr, Q = add_rotated_noise(X, 20, level=0.5, random_state=4, return_rotation=True)
    assert Xr.shape == (150, 23)
    np.testing.assert_allclose(Q @ Q.T, np.eye(23), atol=1e-12)
    Z = Xr @ Q.T  # the unrotated [signal, noise]
    np.testing.assert_allclose(Z[:, :3], X, atol=1e-10)
    np.testing.assert_allclose(pdist(Xr), pdist(Z), rtol=1e-10)
    sigma = 0.5 * np.median(X.std(axis=0))
    assert Z[:, 3:].std() == pytest.approx(sigma, rel=0.05)
    # the noise is spread over every column: no column of Xr is signal alone
    assert np.abs(Q[3:, :]).max(axis=0).min() > 0.01
    np.testing.assert_array_equal(Xr, add_rotated_noise(X, 20, level=0.5, random_state=4))
    assert not np.array_equal(Xr, add_rotated_noise(X, 20, level=0.5, random_state=5))
    Xz = add_rotated_noise(X, 0, level=0.0, random_state=0)
    np.testing.assert_allclose(pdist(Xz), pdist(X), rtol=1e-10)


_BAD_VALUES = [None, "3", -1, 0, 0.5, np.nan, np.inf, -np.inf, True, [3], 1e12]


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@settings(max_examples=80, deadline=None)
@given(
    kind=st.sampled_from([*SHEET_KINDS, "Strip", "", None, 3]),
    n=st.sampled_from([1, 5, *_BAD_VALUES]),
    aspect=st.sampled_from([1.0, 3.0, *_BAD_VALUES]),
)
def test_any_bad_argument_is_refused_with_a_clear_error(kind, n, aspect):
    # Whatever a careless caller passes: either valid data, or a ValueError /
    # TypeError naming the argument; never NaN, a crash or a silent coercion.
    try:
        X, latent = make_sheet(kind, n, aspect=aspect, random_state=0)
    except (ValueError, TypeError) as exc:
        assert any(w in str(exc) for w in ("kind", "n_samples", "aspect", "tube")), exc
        return
    assert kind in SHEET_KINDS and isinstance(n, int) and not isinstance(n, bool) and n >= 1
    assert np.isfinite(aspect) and aspect >= 1.0
    assert X.shape == (n, 3) and np.isfinite(X).all() and np.isfinite(latent).all()


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@settings(max_examples=60, deadline=None)
@given(
    n_dims=st.sampled_from([0, 3, *_BAD_VALUES]),
    level=st.sampled_from([0.0, 0.5, *_BAD_VALUES]),
    X=st.sampled_from([np.ones((4, 2)), np.ones(4), np.zeros((0, 3)), np.full((3, 2), np.nan)]),
)
def test_rotated_noise_refuses_bad_arguments(n_dims, level, X):
    try:
        out = add_rotated_noise(X, n_dims, level=level, random_state=0)
    except (ValueError, TypeError) as exc:
        assert any(w in str(exc) for w in ("n_dims", "level", "X", "2-D", "finite", "sample")), exc
        return
    assert out.shape == (X.shape[0], X.shape[1] + n_dims) and np.isfinite(out).all()
