"""Patch projections (MORF atoms) against brute-force enumeration of all patches."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

import geoforest as gf
from geoforest._engine.projections import (
    PATCH,
    draw_node_projections,
    max_nonzeros,
    patch_params,
    project_samples,
)
from geoforest._engine.rng import make_state


def brute_patch_distribution(H, W, h_min, h_max, w_min, w_max, wrap):
    """Probability of every pixel set, enumerating every (u, v, w, h) the paper allows."""
    probs: dict[frozenset, float] = {}
    us = range(W) if wrap else range(W - w_min + 1)
    vs = range(H) if wrap else range(H - h_min + 1)
    for u, v in itertools.product(us, vs):
        widths = range(w_min, (w_max if wrap else min(w_max, W - u)) + 1)
        heights = range(h_min, (h_max if wrap else min(h_max, H - v)) + 1)
        p = 1.0 / (len(us) * len(vs) * len(widths) * len(heights))
        for w, h in itertools.product(widths, heights):
            rows = [(v + r) % H for r in range(h)] if wrap else list(range(v, v + h))
            cols = [(u + c) % W for c in range(w)] if wrap else list(range(u, u + w))
            assert all(0 <= r < H for r in rows) and all(0 <= c < W for c in cols)
            key = frozenset(r * W + c for r in rows for c in cols)
            probs[key] = probs.get(key, 0.0) + p
    return probs


def draw_patches(params, n_draws, seed=0):
    H, W = int(params[0]), int(params[1])
    n_features = H * W
    k = max_nonzeros(PATCH, params, n_features)
    batch = 50
    ptr = np.zeros(batch + 1, dtype=np.int64)
    idx = np.empty(batch * k, dtype=np.int32)
    w = np.empty(batch * k, dtype=np.float32)
    perm = np.arange(n_features, dtype=np.int32)
    state = make_state(seed)
    out = []
    for _ in range(n_draws // batch):
        assert draw_node_projections(PATCH, params, batch, perm, state, ptr, idx, w) == batch
        for j in range(batch):
            sel = idx[ptr[j] : ptr[j + 1]]
            assert np.all(w[ptr[j] : ptr[j + 1]] == 1.0)
            assert len(set(sel.tolist())) == sel.size, "a pixel appears twice"
            out.append(frozenset(sel.tolist()))
    return out


CONFIGS = [
    # H, W, h_min, h_max, w_min, w_max, wrap
    (3, 5, 1, 2, 2, 4, False),
    (3, 5, 1, 3, 2, 5, True),
    (1, 9, 1, 1, 1, 4, False),
    (1, 9, 1, 1, 3, 9, True),
    (4, 4, 2, 3, 1, 2, False),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_patch_sampling_matches_the_stated_distribution(config):
    H, W, h_min, h_max, w_min, w_max, wrap = config
    params = np.array(config, dtype=np.float64)
    probs = brute_patch_distribution(H, W, h_min, h_max, w_min, w_max, wrap)
    n_draws = 30_000
    draws = draw_patches(params, n_draws)
    counts: dict[frozenset, int] = {}
    for d in draws:
        assert d in probs, f"patch {sorted(d)} is not an allowed patch"
        counts[d] = counts.get(d, 0) + 1
    keys = list(probs)
    observed = np.array([counts.get(k, 0) for k in keys], dtype=float)
    expected = np.array([probs[k] for k in keys]) * len(draws)
    assert np.isclose(expected.sum(), len(draws))
    # Every allowed size occurs (all patches have expected counts >= ~25 here).
    assert expected.min() > 5 and observed.min() > 0
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_wrapped_patches_cross_the_edges():
    params = np.array([1, 10, 1, 1, 3, 3, 1.0])
    draws = draw_patches(params, 2000)
    crossing = [d for d in draws if 0 in d and 9 in d]
    assert crossing, "no patch wrapped around the end of the series"
    for d in crossing:
        assert d in ({8, 9, 0}, {9, 0, 1})


def test_patch_projection_is_the_sum_of_its_pixels():
    rng = np.random.default_rng(0)
    H, W = 6, 7
    X = rng.normal(size=(30, H * W)).astype(np.float32)
    for wrap in (False, True):
        params = np.array([H, W, 1, 4, 2, 5, float(wrap)])
        k = max_nonzeros(PATCH, params, H * W)
        ptr = np.zeros(21, dtype=np.int64)
        idx = np.empty(20 * k, dtype=np.int32)
        w = np.empty(20 * k, dtype=np.float32)
        perm = np.arange(H * W, dtype=np.int32)
        draw_node_projections(PATCH, params, 20, perm, make_state(3), ptr, idx, w)
        samples = np.arange(30, dtype=np.int64)
        out = np.empty(30)
        images = X.reshape(30, H, W).astype(np.float64)
        for j in range(20):
            project_samples(X, samples, 0, 30, idx, w, ptr[j], ptr[j + 1], out)
            rows, cols = np.divmod(idx[ptr[j] : ptr[j + 1]], W)
            expected = images[:, rows, cols].sum(axis=1)
            np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-10)


def is_patch(pixels, H, W, h_range, w_range, wrap):
    """True if ``pixels`` is some allowed (possibly wrapped) rectangle."""
    pixels = set(pixels.tolist())
    for u, v in itertools.product(range(W), range(H)):
        for h, w in itertools.product(h_range, w_range):
            if not wrap and (u + w > W or v + h > H):
                continue
            rect = {((v + r) % H) * W + (u + c) % W for r in range(h) for c in range(w)}
            if rect == pixels:
                return True
    return False


@pytest.mark.parametrize("wrap", [False, True])
def test_fitted_morf_splits_on_allowed_patches(wrap):
    X, y = gf.datasets.make_bars(60, image_size=8, mean_bars=3, random_state=0)
    clf = gf.ManifoldForestClassifier(
        image_shape=(8, 8),
        min_patch_shape=(1, 2),
        max_patch_shape=(2, 3),
        wrap=wrap,
        n_estimators=3,
        random_state=0,
    ).fit(X, y)
    n_split = 0
    for tree in clf.trees_:
        for node in np.flatnonzero(tree.left != -1):
            pix = tree.proj_idx[tree.proj_ptr[node] : tree.proj_ptr[node + 1]]
            assert is_patch(pix, 8, 8, range(1, 3), range(2, 4), wrap)
            n_split += 1
    assert n_split > 0


def test_patch_params_errors():
    with pytest.raises(ValueError, match="image_shape"):
        patch_params(None, None, None, False, 10)
    with pytest.raises(ValueError, match="pixels but X has"):
        patch_params((3, 4), None, None, False, 10)
    with pytest.raises(ValueError, match=r"\(L,\) or \(H, W\)"):
        patch_params((2, 2, 2), None, None, False, 8)
    with pytest.raises(ValueError, match="exceeds max_patch_shape"):
        patch_params((5, 5), (3, 3), (2, 4), False, 25)
    with pytest.raises(ValueError, match="does not fit"):
        patch_params((5, 5), None, (6, 2), False, 25)
    with pytest.raises(ValueError, match="positive integers"):
        patch_params((5, 5), (0, 1), None, False, 25)
    # 1-D series: H = 1, int shapes apply to the single axis.
    np.testing.assert_array_equal(patch_params((12,), 2, 5, True, 12), [1, 12, 1, 1, 2, 5, 1.0])
    X = np.random.default_rng(0).normal(size=(20, 10))
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="pixels but X has"):
        gf.ManifoldForestClassifier(image_shape=(3, 3), n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="exceeds max_patch_shape"):
        gf.ManifoldForestClassifier(
            image_shape=(10,), min_patch_shape=4, max_patch_shape=3, n_estimators=2
        ).fit(X, y)
    with pytest.raises(ValueError, match="needs image_shape"):
        gf.UnsupervisedForest(projection="patch", n_estimators=2).fit(X)


def test_unsupervised_patch_forest_learns_signal_neighbours():
    """Beyond the paper: patch projections in the unsupervised forest.

    Two classes of series differ only in a bump's position; patch trees
    should find same-class neighbours far more often than chance.
    """
    rng = np.random.default_rng(0)
    n, L = 120, 40
    y = np.arange(n) % 2
    X = rng.normal(scale=0.3, size=(n, L))
    X[y == 0, 5:12] += 2.0
    X[y == 1, 25:32] += 2.0
    forest = gf.UnsupervisedForest(
        projection="patch", image_shape=(L,), max_patch_shape=8, n_estimators=20, random_state=0
    ).fit(X)
    for tree in forest.trees_:
        for node in np.flatnonzero(tree.left != -1):
            pix = np.sort(tree.proj_idx[tree.proj_ptr[node] : tree.proj_ptr[node + 1]])
            assert np.all(np.diff(pix) == 1) and pix.size <= 8
    ind = forest.kneighbors(n_neighbors=10, return_distance=False)
    assert np.mean(y[ind] == y[:, None]) > 0.9


@pytest.mark.parametrize("order", ["C", "F"])
def test_project_samples_matches_an_ordered_float32_sum(order):
    """Both layouts (row blocks for C order, columns for F order) give each value as
    numpy does: float32 products added to a float64 from 0.0 in the stored order,
    bit for bit, over node ranges that cross the row blocks' boundaries."""
    rng = np.random.default_rng(7)
    X = np.asarray(rng.normal(size=(400, 9)), dtype=np.float32, order=order)
    samples = np.sort(rng.choice(400, 300, replace=False)).astype(np.int64)
    idx = np.array([4, 0, 8, 4, 2], dtype=np.int32)  # unsorted, one feature twice
    w = rng.normal(size=5).astype(np.float32)
    for lo, hi in [(0, 300), (5, 70), (64, 129), (10, 11)]:
        out = np.full(hi - lo + 3, np.nan)
        project_samples(X, samples, lo, hi, idx, w, 1, 5, out)
        expect = np.zeros(hi - lo)
        for q in range(1, 5):
            expect += (w[q] * X[samples[lo:hi], idx[q]]).astype(np.float64)
        np.testing.assert_array_equal(out[: hi - lo], expect)
        assert np.isnan(out[hi - lo :]).all()
