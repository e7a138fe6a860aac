"""Tests for geoforest.datasets simulations."""

import numpy as np
import pytest
from scipy.integrate import quad

from geoforest.datasets import (
    add_noise_dims,
    helix_arc_length,
    make_gaussian_mixture,
    make_helix,
    make_linear,
    make_sphere,
    minmax_rescale,
)

MAKERS = [make_linear, make_helix, make_sphere, make_gaussian_mixture]


@pytest.mark.parametrize("maker", MAKERS)
@pytest.mark.parametrize("n", [1, 2, 37])
def test_shapes_and_dtypes(maker, n):
    X, y = maker(n, random_state=0)
    assert X.shape == (n, 3)
    assert X.dtype == np.float64
    assert np.isfinite(X).all()
    assert y.shape[0] == n


@pytest.mark.parametrize("maker", MAKERS)
def test_determinism(maker):
    X1, y1 = maker(50, random_state=3)
    X2, y2 = maker(50, random_state=3)
    X3, _ = maker(50, random_state=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)


@pytest.mark.parametrize("maker", [make_linear, make_helix])
def test_curve_rows_are_shuffled_grid(maker):
    X, y = maker(200, random_state=0)
    assert not np.all(np.diff(y) > 0)  # not in generation order
    y_sorted = np.sort(y)
    steps = np.diff(X[np.argsort(y), 2])  # third coordinate is linear in t
    np.testing.assert_allclose(steps, steps[0])  # equally spaced grid
    assert y_sorted[0] > 0


@pytest.mark.parametrize("maker", MAKERS)
@pytest.mark.parametrize("bad", [0, -3, 2.5, "10", True, None])
def test_bad_n_samples(maker, bad):
    with pytest.raises(ValueError, match="n_samples"):
        maker(bad)


def test_linear_values():
    X, y = make_linear(10, random_state=1)
    t = X[:, 0] / 4
    np.testing.assert_allclose(X, t[:, None] * [4, 6, 9])
    np.testing.assert_allclose(np.sort(t), (np.arange(10) + 0.5) / 10)
    np.testing.assert_allclose(y, t * np.sqrt(133))


def test_helix_points_and_range():
    X, _ = make_helix(500, random_state=0)
    t = X[:, 2]
    np.testing.assert_allclose(X[:, 0], t * np.cos(t))
    np.testing.assert_allclose(X[:, 1], t * np.sin(t))
    assert t.min() > 2 * np.pi and t.max() < 9 * np.pi
    np.testing.assert_allclose(np.sort(t), 2 * np.pi + 7 * np.pi * (np.arange(500) + 0.5) / 500)


def test_helix_arc_length_vs_quad():
    X, y = make_helix(25, random_state=0)
    for t, s in zip(X[:, 2], y, strict=True):
        expected, _ = quad(lambda u: np.sqrt(u**2 + 2.0), 2 * np.pi, t)
        assert s == pytest.approx(expected, rel=1e-10)


def test_helix_arc_length_vs_polyline():
    t = np.linspace(2 * np.pi, 9 * np.pi, 200_001)
    curve = np.column_stack([t * np.cos(t), t * np.sin(t), t])
    polyline = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(curve, axis=0), axis=1))])
    np.testing.assert_allclose(helix_arc_length(t[::1000]), polyline[::1000], rtol=1e-6)


def test_sphere_geometry_and_grid():
    n = 300
    X, y = make_sphere(n, random_state=0)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 9.0)
    np.testing.assert_allclose(y, X / 9.0)
    assert len(np.unique(np.round(X, 10), axis=0)) == n  # drawn without replacement
    v = np.arccos(y[:, 2])
    u = np.mod(np.arctan2(y[:, 1], y[:, 0]), 2 * np.pi)
    n_v = int(np.ceil(np.sqrt(n)))
    n_u = int(np.ceil(n / n_v))
    # u and v sit on cell midpoints of the open intervals
    iv = v / (np.pi / n_v) - 0.5
    iu = u / (2 * np.pi / n_u) - 0.5
    np.testing.assert_allclose(iv, np.round(iv), atol=1e-8)
    np.testing.assert_allclose(iu, np.round(iu), atol=1e-8)


def test_sphere_radius_and_full_grid():
    X, _ = make_sphere(16, radius=2.5, random_state=0)  # 4 x 4 grid, every node used
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 2.5)
    for bad in [0.0, -1.0, np.nan, np.inf]:
        with pytest.raises(ValueError, match="radius"):
            make_sphere(10, radius=bad)


def test_sphere_rows_shuffled():
    _, y1 = make_sphere(100, random_state=0)
    _, y2 = make_sphere(100, random_state=1)
    assert not np.array_equal(y1, y2)


def test_gaussian_mixture_proportions_and_means():
    X, y = make_gaussian_mixture(30_000, random_state=0)
    assert y.dtype.kind == "i"
    np.testing.assert_allclose(np.bincount(y) / len(y), [0.3, 0.3, 0.4], atol=0.01)
    for label, mean in enumerate([-3.0, 0.0, 3.0]):
        np.testing.assert_allclose(X[y == label].mean(axis=0), mean, atol=0.05)
        np.testing.assert_allclose(X[y == label].var(axis=0), 1.0, atol=0.05)
    assert not np.all(np.diff(y) >= 0)  # shuffled, not grouped by component


def test_add_noise_dims_variance():
    X, _ = make_linear(20_000, random_state=0)
    Xn = add_noise_dims(X, 4, random_state=0)
    assert Xn.shape == (20_000, 7) and Xn.dtype == np.float64
    np.testing.assert_array_equal(Xn[:, :3], X)
    np.testing.assert_allclose(Xn[:, 3:].var(axis=0), 70.0, rtol=0.05)
    np.testing.assert_allclose(Xn[:, 3:].mean(axis=0), 0.0, atol=0.3)
    Xv = add_noise_dims(X, 2, variance=4.0, random_state=1)
    np.testing.assert_allclose(Xv[:, 3:].var(axis=0), 4.0, rtol=0.05)


def test_add_noise_dims_zero_and_determinism():
    X, _ = make_helix(30, random_state=0)
    X0 = add_noise_dims(X, 0)
    np.testing.assert_array_equal(X0, X)
    assert X0 is not X and not np.shares_memory(X0, X)
    np.testing.assert_array_equal(
        add_noise_dims(X, 3, random_state=5), add_noise_dims(X, 3, random_state=5)
    )


def test_add_noise_dims_rescale():
    X, _ = make_sphere(200, random_state=0)
    Xr = add_noise_dims(X, 5, rescale=True, random_state=0)
    np.testing.assert_allclose(Xr.min(axis=0), 0.0)
    np.testing.assert_allclose(Xr.max(axis=0), 1.0)
    np.testing.assert_allclose(Xr, minmax_rescale(add_noise_dims(X, 5, random_state=0)))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_dims": -1}, "n_dims"),
        ({"n_dims": 1.5}, "n_dims"),
        ({"n_dims": 2, "variance": -1.0}, "variance"),
        ({"n_dims": 2, "variance": np.nan}, "variance"),
    ],
)
def test_add_noise_dims_bad_params(kwargs, match):
    with pytest.raises(ValueError, match=match):
        add_noise_dims(np.zeros((3, 2)), **kwargs)


@pytest.mark.parametrize(
    "X, match",
    [
        (np.array([[0.0, np.nan]]), "NaN"),
        (np.zeros(3), "2-D"),
        (np.zeros((0, 2)), "at least one"),
        ([["a", "b"]], "numeric"),
    ],
)
def test_bad_X(X, match):
    with pytest.raises(ValueError, match=match):
        add_noise_dims(X, 1)
    with pytest.raises(ValueError, match=match):
        minmax_rescale(X)


def test_minmax_rescale_values():
    X = np.array([[1.0, -2.0, 7.0], [3.0, 2.0, 7.0], [2.0, 0.0, 7.0]])
    expected = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.5, 0.5, 0.0]])
    np.testing.assert_allclose(minmax_rescale(X), expected)
    minmax_rescale(X)
    assert X[0, 0] == 1.0  # input left untouched
