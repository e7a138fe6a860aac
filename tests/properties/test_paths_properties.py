"""Property tests of the path and diffusion distances (issue 44).

``LLPD`` (Euclidean and forest geometry: neighbours of training and new
points, pairwise LLPD, denoising, cuts) and ``DiffusionMap`` (embedding,
Nyström extension, diffusion neighbours) on any data a user may bring
(``_strategies.py``): a clear error, or results meeting the invariants of
``_contract.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone

import geoforest as gf

from ._contract import (
    assert_clear_error_or,
    assert_same,
    check_finite,
    check_kneighbors,
    check_labels,
    pickled,
)
from ._strategies import has_nonfinite, profile, recipes

# Any input may warn (constant columns, K = 1, ...): the contract is about results
# and errors, so warnings pass here (the suite makes them errors elsewhere).
pytestmark = pytest.mark.filterwarnings("ignore")


def _geometry(draw, n: int, seed: int) -> dict:
    metric = draw(st.sampled_from(["euclidean", "forest"]))
    if metric == "euclidean":
        return {"metric": "euclidean"}
    return {
        "metric": "forest",
        "forest": gf.UnsupervisedForest(3, min_samples_split=5, random_state=seed),
        "n_neighbors": draw(st.integers(1, max(1, min(n, 15)))),
    }


@profile()
@given(data=st.data(), recipe=recipes(max_rows=200, max_cols=20))
def test_llpd(data, recipe):
    """LLPD neighbours sorted, no self-match; pairwise symmetric with a zero diagonal."""
    draw = data.draw
    X = recipe.build()
    n, p = X.shape
    est = gf.LLPD(**_geometry(draw, n, recipe.seed), random_state=0)
    f32 = est.metric == "forest"  # the forest computes in float32, LLPD's EMST in float64
    fitted = assert_clear_error_or(lambda: est.fit(X), must_fail=has_nonfinite(X, f32), what="fit")
    if fitted is None:
        return
    k = draw(st.integers(1, n))
    found = assert_clear_error_or(lambda: est.kneighbors(None, k), what="kneighbors(None)")
    assert (found is None) == (k > n - 1), f"kneighbors(None, {k}) with {n} points"
    if found is not None:
        check_kneighbors(*found, n, k, n, training=True)
        assert_same(found[0][:, -1], est.knn_distance(k), "knn_distance vs kneighbors")
    D = est.pairwise()
    check_finite(D, "pairwise", (n, n))
    assert_same(D, D.T, "pairwise symmetric")
    assert (np.diag(D) == 0).all() and (D >= 0).all()
    kept = est.denoise(min(max(1, n - 1), 3)) if n > 1 else None
    if kept is not None:
        assert kept.shape == (n,) and kept.dtype == bool
    height = float(np.median(D)) if n else 0.0
    check_labels(est.cut(height), n)
    Xq = draw(recipes(min_cols=p, max_cols=p, max_rows=20)).build()
    kq = draw(st.integers(1, n))
    new = assert_clear_error_or(
        lambda: est.kneighbors(Xq, kq), must_fail=has_nonfinite(Xq, f32), what="kneighbors(Xq)"
    )
    if new is not None:
        check_kneighbors(*new, len(Xq), kq, n, training=False)


@profile()
@given(data=st.data(), recipe=recipes(max_rows=200, max_cols=20))
def test_diffusion_map(data, recipe):
    """Finite coordinates of the right shape for training and new points."""
    draw = data.draw
    X = recipe.build()
    n, p = X.shape
    geometry = _geometry(draw, n, recipe.seed)
    k = geometry.pop("n_neighbors", draw(st.integers(1, max(1, min(n, 20)))))
    est = gf.DiffusionMap(
        k,
        **geometry,
        t=draw(st.sampled_from([0.0, 1.0, 3.5])),
        n_components=draw(st.integers(1, 8)),
        kernel=draw(st.sampled_from(["gaussian", "adaptive"])),
        normalization=draw(st.sampled_from(["textbook", "symmetric"])),
        random_state=0,
    )
    f32 = est.metric == "forest"
    Y = assert_clear_error_or(
        lambda: est.fit_transform(X),
        must_fail=has_nonfinite(X, f32),
        what="DiffusionMap.fit_transform",
    )
    if Y is None:
        return
    check_finite(Y, "fit_transform", (n, Y.shape[1]))
    assert 1 <= Y.shape[1] <= est.n_components
    Xq = draw(recipes(min_cols=p, max_cols=p, max_rows=20)).build()
    Z = assert_clear_error_or(
        lambda: est.transform(Xq), must_fail=has_nonfinite(Xq, f32), what="transform"
    )
    if Z is not None:
        check_finite(Z, "transform", (len(Xq), Y.shape[1]))
    if n > 1:
        kn = draw(st.integers(1, n - 1))
        check_kneighbors(*est.kneighbors(n_neighbors=kn), n, kn, n, training=True)


@profile()
@pytest.mark.parametrize("kind", ["llpd", "diffusion"])
@given(data=st.data(), recipe=recipes(min_rows=3, max_rows=100, max_cols=8, nonfinite=False))
def test_paths_are_reproducible(kind, data, recipe):
    """Same seed, n_jobs 1 and 2 and pickling: the same distances and coordinates."""
    X = recipe.build()
    if has_nonfinite(X):
        return
    geometry = _geometry(data.draw, len(X), recipe.seed)
    if kind == "llpd":
        est = gf.LLPD(**geometry, random_state=0)
        Xq = X[:4] * 0.5

        def answers(e):
            return e.pairwise(), e.kneighbors(None, 1), e.kneighbors(Xq, 2)
    else:
        k = geometry.pop("n_neighbors", min(len(X) - 1, 5))
        est = gf.DiffusionMap(k, **geometry, n_components=3, random_state=0)
        Xq = X[:4] * 0.5

        def answers(e):
            return e.embedding(), e.transform(Xq)

    if assert_clear_error_or(lambda: est.fit(X), what="fit") is None:
        return
    first = answers(est)
    assert_same(first, answers(clone(est).fit(X)), "refit with the same random_state")
    assert_same(first, answers(clone(est).set_params(n_jobs=2).fit(X)), "n_jobs=2")
    assert_same(first, answers(pickled(est)), "after pickling")


def test_forest_bridges_of_a_disconnected_graph():
    X = np.random.default_rng(0).normal(size=(4, 1))
    forest = gf.UnsupervisedForest(3, min_samples_split=5, random_state=0)
    est = gf.DiffusionMap(1, metric="forest", forest=forest, n_components=1, random_state=0)
    assert np.isfinite(est.fit_transform(X)).all()


def test_adaptive_kernel_on_duplicates():
    X = np.array([[0.0], [0.0], [1.0]])
    est = gf.DiffusionMap(1, kernel="adaptive", n_components=1, random_state=0)
    assert np.isfinite(est.fit_transform(X)).all()


@profile()
@given(recipe=recipes(min_rows=2, max_rows=80, max_cols=6), sparse=st.booleans())
def test_llpd_of_a_precomputed_distance_matrix(recipe, sparse):
    """LLPD of the full matrix of Euclidean distances is LLPD of the points."""
    X = recipe.build()
    n = len(X)
    with np.errstate(all="ignore"):
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    G = sp.csr_matrix(D) if sparse else D
    est = gf.LLPD(metric="precomputed")
    fitted = assert_clear_error_or(
        lambda: est.fit(G), must_fail=not np.isfinite(D).all(), what="fit(precomputed)"
    )
    if fitted is None:
        return
    reference = assert_clear_error_or(lambda: gf.LLPD().fit(X), what="fit(X)")
    if reference is None or (sparse and len(np.unique(X, axis=0)) < n):
        return  # the sparse conversion above dropped the copies' zero distances
    np.testing.assert_allclose(est.pairwise(), reference.pairwise(), rtol=1e-12)
    d, i = est.kneighbors(None, 1)
    check_kneighbors(d, i, n, 1, n, training=True)


def test_llpd_of_a_dense_matrix_with_duplicates():
    """A dense matrix lists every pair: its off-diagonal zeros join copies."""
    D = np.zeros((2, 2))
    est = gf.LLPD(metric="precomputed").fit(D)
    np.testing.assert_array_equal(est.pairwise(), np.zeros((2, 2)))
