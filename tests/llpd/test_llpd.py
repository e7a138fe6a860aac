"""LLPD: exact EMST, dendrogram, LLPD queries and LLPD spectral clustering against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.cluster.hierarchy import cophenet, fcluster, linkage
from scipy.spatial.distance import cdist, squareform
from sklearn.exceptions import NotFittedError
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest.datasets import make_ldln
from geoforest.graph import (
    euclidean_mst,
)
from geoforest.llpd import (
    DENDROGRAM_DTYPE,
    LLPD,
    LLPDSpectralClustering,
    auto_noise_threshold,
    jump_threshold,
    sigma_grid,
    single_linkage,
    two_population_threshold,
)
from geoforest.metrics import clustering_accuracy
from tests.properties._strategies import repeated_scales, repeated_shifts, repeated_values


# ----------------------------------------------------------------- references
def minimax_floyd_warshall(X: np.ndarray) -> np.ndarray:
    """Brute-force LLPD: minimax path lengths in the complete Euclidean graph."""
    D = cdist(X, X)
    for k in range(X.shape[0]):
        D = np.minimum(D, np.maximum(D[:, k : k + 1], D[k : k + 1, :]))
    return D


def brute_kneighbors(X: np.ndarray, P: np.ndarray, k: int, key=None):
    """Rank by (LLPD, Euclidean distance, index) or (LLPD, key), the point itself excluded."""
    n = X.shape[0]
    E = cdist(X, X)
    ind = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        others = np.delete(np.arange(n), i)
        if key is None:
            order = np.lexsort((others, E[i, others], P[i, others]))
        else:
            order = np.lexsort((key[others], P[i, others]))
        ind[i] = others[order[:k]]
    return np.take_along_axis(P, ind, axis=1), ind


def point_sets():
    rng = np.random.default_rng(0)
    return {
        "uniform-2d": rng.random((300, 2)),
        "gauss-5d": rng.standard_normal((200, 5)),
        "uniform-20d": rng.random((150, 20)),
        # Integer grid points: many equal distances and duplicate points (LLPD 0).
        "grid-2d-ties": rng.integers(0, 6, (200, 2)).astype(float),
        "grid-3d-ties": rng.integers(0, 4, (150, 3)).astype(float),
    }


SETS = point_sets()


@pytest.fixture(scope="module", params=list(SETS))
def fitted(request):
    X = SETS[request.param]
    return X, LLPD().fit(X), minimax_floyd_warshall(X)


# ----------------------------------------------------------------- exactness
def test_pairwise_equals_minimax_floyd_warshall(fitted):
    X, model, P = fitted
    D = model.pairwise()
    np.testing.assert_array_equal(D, D.T)
    np.testing.assert_allclose(D, P, rtol=1e-12, atol=0)
    assert np.all(np.diag(D) == 0)


@pytest.mark.parametrize("k", [1, 4, 17])
def test_knn_distance_and_kneighbors_equal_brute_force(fitted, k):
    X, model, P = fitted
    Q = P.copy()
    np.fill_diagonal(Q, np.inf)
    np.testing.assert_allclose(model.knn_distance(k), np.sort(Q, axis=1)[:, k - 1], rtol=1e-12)
    dist, ind = model.kneighbors(n_neighbors=k)
    ref_dist, ref_ind = brute_kneighbors(X, P, k)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-12)
    np.testing.assert_array_equal(model.kneighbors(n_neighbors=k, return_distance=False), ind)
    # Tree tie-break: by depth-first position in the dendrogram.
    position = np.empty(X.shape[0], dtype=np.int64)
    position[model.dendrogram_.order] = np.arange(X.shape[0])
    dist_t, ind_t = model.kneighbors(n_neighbors=k, tie_break="tree")
    ref_dist_t, ref_ind_t = brute_kneighbors(X, P, k, key=position)
    np.testing.assert_array_equal(ind_t, ref_ind_t)
    np.testing.assert_allclose(dist_t, ref_dist, rtol=1e-12)


def test_kneighbors_sees_every_point():
    X = SETS["grid-2d-ties"]
    n = X.shape[0]
    _, ind = LLPD().fit(X).kneighbors(n_neighbors=n - 1)
    np.testing.assert_array_equal(np.sort(ind, axis=1)[0], np.arange(1, n))


@pytest.mark.parametrize("sigma", [0.05, 0.5, 3.0])
def test_affinity_operator_equals_dense_product(fitted, sigma):
    X, model, P = fitted
    W = np.exp(-((P / sigma) ** 2))
    op = model.affinity_operator(sigma)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(X.shape[0])
    B = rng.standard_normal((X.shape[0], 7))
    for got, want in ((op @ x, W @ x), (op @ B, W @ B), (op.matvec(x), W @ x)):
        assert got.shape == want.shape
        assert np.linalg.norm(got - want) <= 1e-10 * np.linalg.norm(want)
    np.testing.assert_allclose(op @ np.ones(X.shape[0]), W.sum(axis=1), rtol=1e-10)


def test_scipy_linkage_and_cophenetic(fitted):
    X, model, P = fitted
    Z = model.dendrogram_.to_scipy_linkage()
    assert Z.shape == (X.shape[0] - 1, 4)
    np.testing.assert_allclose(squareform(cophenet(Z)), P, rtol=1e-12)
    np.testing.assert_allclose(cophenet(Z), cophenet(linkage(X, "single")), rtol=1e-12)
    # Cuts agree with scipy's flat clusters of the same linkage.
    for height in np.quantile(Z[:, 2], [0.2, 0.6, 0.95]):
        ours = model.cut(height)
        theirs = fcluster(Z, height, criterion="distance")
        assert clustering_accuracy(theirs, ours) == 1.0


def test_linkage_equals_scipy_without_ties():
    X = np.random.default_rng(3).random((120, 4))
    Z = LLPD().fit(X).dendrogram_.to_scipy_linkage()
    np.testing.assert_allclose(Z, linkage(X, "single"), rtol=1e-12)


def test_dendrogram_structure():
    X = np.array([[0.0], [3.0], [1.0], [10.0]])
    tree = LLPD().fit(X).dendrogram_
    assert tree.merges.dtype == DENDROGRAM_DTYPE
    assert tree.merges.tolist() == [(0, 2, 1.0, 2), (1, 4, 2.0, 3), (3, 5, 7.0, 4)]
    assert tree.parent.tolist() == [4, 5, 4, 6, 5, 6, -1]
    np.testing.assert_array_equal(np.sort(tree.order), np.arange(4))
    with pytest.raises(ValueError, match="sorted"):
        single_linkage(3, np.array([2.0, 1.0]), np.array([[0, 1], [1, 2]]))


# ----------------------------------------------------------------- denoising
def test_auto_threshold_and_denoise_on_ldln():
    X, y = make_ldln(1000, random_state=0)
    model = LLPD().fit(X)
    kept, theta = model.denoise(10, return_threshold=True)
    assert kept.dtype == bool and kept.shape == (1000,)
    assert np.all(kept[y >= 0])  # every cluster point kept
    assert np.mean(kept[y < 0]) < 0.05  # background noise removed
    values = model.knn_distance(10)
    np.testing.assert_array_equal(kept, values <= theta)
    np.testing.assert_array_equal(model.denoise(10, threshold=theta), kept)
    assert model.denoise(10, threshold=np.inf).all()


def test_auto_threshold_rules():
    # No jump of a factor 2: keep everything.
    assert auto_noise_threshold(np.linspace(1, 1.5, 50)) == 1.5
    values = np.r_[np.full(80, 0.1), np.full(20, 1.0)]
    assert auto_noise_threshold(values) == pytest.approx(np.sqrt(0.1))
    assert auto_noise_threshold(np.zeros(5)) == 0.0


def test_two_population_threshold_matches_sklearn_mixture():
    from sklearn.mixture import GaussianMixture

    rng = np.random.default_rng(4)
    z = np.r_[rng.normal(-4.0, 0.4, 1600), rng.normal(-1.8, 0.3, 400)]
    theta, fit = two_population_threshold(np.exp(z), return_fit=True)
    gm = GaussianMixture(2, n_init=5, random_state=0, tol=1e-10, max_iter=1000).fit(z[:, None])
    order = np.argsort(gm.means_.ravel())
    np.testing.assert_allclose(fit["means"], gm.means_.ravel()[order], atol=1e-3)
    np.testing.assert_allclose(fit["stds"], np.sqrt(gm.covariances_.ravel()[order]), atol=1e-3)
    assert fit["weight_noise"] == pytest.approx(gm.weights_[order[1]], abs=1e-3)
    # The threshold is where the weighted densities cross: equal posteriors there.
    post = gm.predict_proba(np.log([[theta]]))[0]
    assert post[0] == pytest.approx(0.5, abs=1e-3)


def test_two_population_threshold_refusals():
    rng = np.random.default_rng(5)
    assert two_population_threshold(np.exp(rng.normal(0.0, 0.5, 2000))) is None  # one population
    # Two separated populations, but the upper one is half the points: not noise.
    half = np.exp(np.r_[rng.normal(-4, 0.2, 1000), rng.normal(-2.8, 0.3, 1000)])
    assert two_population_threshold(half) is None
    assert two_population_threshold(half, max_noise_fraction=0.6) is not None
    # Overlapping populations (D < 3) are refused.
    close = np.exp(np.r_[rng.normal(0, 0.5, 1500), rng.normal(1.0, 0.5, 500)])
    assert two_population_threshold(close) is None
    assert two_population_threshold(np.ones(10)) is None


def test_in_plane_noise_is_removed_and_k_found():
    # Background noise in the clusters' own plane: the sorted k-NN LLPDs rise
    # without a jump, so only the two-population rule can find the level.
    X, y = make_ldln(
        3000,
        n_clusters=4,
        ambient_dim=2,
        intrinsic_dim=1,
        cluster_noise=0.02,
        separation=0.3,
        noise_fraction=0.2,
        random_state=3,
    )
    values = LLPD().fit(X).knn_distance(10)
    assert jump_threshold(values) is None
    model = LLPDSpectralClustering(random_state=0).fit(X)
    assert model.n_clusters_ == 4
    core = (y >= 0) & model.kept_
    assert core.sum() >= 0.97 * (y >= 0).sum()
    assert np.mean(model.kept_[y < 0]) < 0.1
    assert clustering_accuracy(y[core], model.labels_[core]) >= 0.99


def test_in_plane_circles_in_ten_dimensions():
    # Three noisy circles with 15 % uniform background in their plane, embedded in
    # 10-D with jitter: no jump in the sorted k-NN LLPDs, two log-populations.
    rng = np.random.default_rng(7)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [1.5, 2.6]])
    angle = rng.uniform(0, 2 * np.pi, (3, 300))
    radius = 1.0 + 0.05 * rng.standard_normal((3, 300))
    rings = centres[:, None, :] + np.stack([radius * np.cos(angle), radius * np.sin(angle)], -1)
    P = rings.reshape(-1, 2)
    background = rng.uniform(P.min(0) - 0.5, P.max(0) + 0.5, (160, 2))
    frame, _ = np.linalg.qr(rng.standard_normal((10, 2)))
    X = np.vstack([P, background]) @ frame.T + 0.01 * rng.standard_normal((1060, 10))
    y = np.r_[np.repeat([0, 1, 2], 300), -np.ones(160, dtype=int)]
    assert jump_threshold(LLPD().fit(X).knn_distance(10)) is None
    model = LLPDSpectralClustering(random_state=0).fit(X)
    assert model.n_clusters_ == 3
    core = (y >= 0) & model.kept_
    assert core.sum() >= 0.95 * 900 and np.mean(model.kept_[y < 0]) < 0.3
    assert clustering_accuracy(y[core], model.labels_[core]) >= 0.99


def test_one_gaussian_blob_is_one_cluster():
    X = np.random.default_rng(0).standard_normal((1500, 5))
    with pytest.warns(gf.graph.LabelFreeChoiceWarning, match="no cluster structure: K = 1"):
        model = LLPDSpectralClustering(random_state=0).fit(X)
    assert model.n_clusters_ == 1
    assert model.kept_.all()


# ----------------------------------------------------------------- approximation
def test_mscale_approximation_bounds_exact():
    X = np.random.default_rng(2).random((200, 3))
    exact = LLPD().fit(X).pairwise()
    approx = LLPD(mscale=64, mscale_neighbors=199).fit(X).pairwise()
    off = ~np.eye(200, dtype=bool)
    # Rounding up to the next scale: never below the exact value, at most one scale step above.
    assert np.all(approx[off] >= exact[off] * (1 - 1e-12))
    ratio = (approx[off] / exact[off]).max()
    edges = np.sort(cdist(X, X)[off])
    assert ratio <= (edges[-1] / edges[0]) ** (1 / 63) * (1 + 1e-9)
    # A 10-NN graph of two far groups is disconnected: LLPD inf between the groups.
    rng = np.random.default_rng(3)
    Y = np.r_[rng.random((30, 2)), 100 + rng.random((30, 2))]
    P = LLPD(mscale=8, mscale_neighbors=10).fit(Y).pairwise()
    assert np.isinf(P[0, 45]) and np.isfinite(P[0, 1:30]).all()


# ----------------------------------------------------------------- clustering
def test_ldln_ten_seeds_exact_k_and_accuracy():
    for seed in range(10):
        X, y = make_ldln(
            1000,
            n_clusters=4,
            ambient_dim=10,
            intrinsic_dim="mixed",
            noise_fraction=0.2,
            random_state=seed,
        )
        model = LLPDSpectralClustering(random_state=seed).fit(X)
        assert model.n_clusters_ == 4, seed
        core = (y >= 0) & model.kept_
        assert core.sum() >= 0.95 * (y >= 0).sum()
        assert clustering_accuracy(y[core], model.labels_[core]) >= 0.99, seed
        assert np.all(model.labels_[~model.kept_] == -1)
        assert set(np.unique(model.labels_[model.kept_])) == {0, 1, 2, 3}


def test_clustering_attributes_and_options():
    X, y = make_ldln(400, n_clusters=3, intrinsic_dim=1, random_state=1)
    model = LLPDSpectralClustering(random_state=0).fit(X)
    assert model.n_clusters_ == 3
    assert model.eigenvalues_[0] == pytest.approx(1.0)
    assert model.sigma_ in model.sigmas_
    assert model.eigengaps_.shape == (model.sigmas_.size, 10)
    assert np.argmax(model.eigengaps_.max(axis=0)) == 2  # the largest gap is after lambda_3
    # Given K and sigma; no denoising: every point labelled.
    fixed = LLPDSpectralClustering(3, sigma=model.sigma_, noise_threshold=None, random_state=0).fit(
        X
    )
    assert (
        fixed.n_clusters_ == 3 and np.all(fixed.labels_ >= 0) and fixed.noise_threshold_ == np.inf
    )
    # With noise kept there are more than 3 components; n_clusters=1 labels every kept point 0.
    one = LLPDSpectralClustering(1, random_state=0).fit(X)
    assert set(np.unique(one.labels_[one.kept_])) == {0}
    # The same result for the same seed; the iterative solver agrees with the dense one.
    again = LLPDSpectralClustering(random_state=0, eigen_solver="arpack").fit(X)
    np.testing.assert_array_equal(again.labels_, model.labels_)


def test_sigma_grid():
    # One zero height (a pair of copies): 5 groups of equal points below the
    # lowest positive height, within max_clusters=5, so its scale 1/3 ends the
    # grid; with max_clusters=4 they are too many.
    heights = np.array([1.0, 1.0, 4.0, 9.0, 0.0])
    np.testing.assert_allclose(sigma_grid(heights, 5), [6.0, 2.0, 1.0 / 3.0])
    np.testing.assert_allclose(sigma_grid(heights, 4), [6.0, 2.0])
    np.testing.assert_allclose(sigma_grid(np.array([1.0, 2.0, 4.0, 8.0]), 1), [np.sqrt(32)])
    assert sigma_grid(np.zeros(3), 4).tolist() == [1.0]
    # Crowded candidates (ratio < 1.5 to the last one kept) are dropped.
    heights = np.array([10.0, 9.0, 1.0, 0.9, 0.85, 0.8])
    np.testing.assert_allclose(sigma_grid(heights, 5), [np.sqrt(90), 3.0, np.sqrt(0.9)])
    np.testing.assert_allclose(sigma_grid(heights, 5, min_ratio=1.0).size, 5)


# ----------------------------------------------------------------- validation
def test_input_validation():
    with pytest.raises(ValueError, match="NaN"):
        LLPD().fit([[0.0, 1.0], [np.nan, 2.0]])
    with pytest.raises(ValueError, match="infinity|NaN"):
        LLPD().fit([[0.0, 1.0], [np.inf, 2.0]])
    with pytest.raises(ValueError, match="0 sample"):
        LLPD().fit(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="minimum of 2"):
        LLPD().fit([[1.0, 2.0]])
    with pytest.raises(ValueError, match="2D array"):
        LLPD().fit([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="dim"):
        LLPD().fit(np.zeros((3, 2, 2)))
    with pytest.raises(ValueError, match="mst_method"):
        LLPD(mst_method="prim").fit(np.zeros((3, 2)))
    with pytest.raises(NotFittedError):
        LLPD().knn_distance(1)
    with pytest.raises(ValueError, match="X has no points"):
        euclidean_mst(np.zeros((0, 2)))


def test_query_validation():
    model = LLPD().fit(np.random.default_rng(0).random((10, 2)))
    for bad in (0, 10, 11):
        with pytest.raises(ValueError, match=r"\[1, 9\]"):
            model.knn_distance(bad)
        with pytest.raises(ValueError, match=r"\[1, 9\]"):
            model.kneighbors(n_neighbors=bad)
    with pytest.raises(TypeError):
        model.knn_distance(2.5)
    with pytest.raises(ValueError, match="tie_break"):
        model.kneighbors(n_neighbors=2, tie_break="index")
    for sigma in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="sigma"):
            model.affinity_operator(sigma)
    with pytest.raises(ValueError, match="threshold"):
        model.denoise(3, threshold="median")
    with pytest.raises(ValueError, match="non-negative"):
        model.denoise(3, threshold=-1.0)
    with pytest.raises(ValueError, match="sigma"):
        LLPDSpectralClustering(sigma=[1.0, -2.0]).fit(np.random.default_rng(0).random((20, 2)))


@pytest.mark.filterwarnings("ignore::geoforest.graph.LabelFreeChoiceWarning")
def test_k_nse_above_n_minus_1_refused_like_denoise():
    """Issue 23: k_nse=1000 on 60 points was capped silently where LLPD.denoise refused it."""
    X = np.random.default_rng(0).random((60, 2))
    message = r"k_nse must be in \[1, n_samples - 1\] = \[1, 59\], got 1000"
    with pytest.raises(ValueError, match=message):
        LLPDSpectralClustering(k_nse=1000, random_state=0).fit(X)
    with pytest.raises(ValueError, match=message):
        LLPD().fit(X).denoise(1000)
    ten = X[:10]
    with pytest.raises(ValueError, match=r"k_nse .* \[1, 9\], got 10"):  # the default on 10 points
        LLPDSpectralClustering(random_state=0).fit(ten)
    assert LLPDSpectralClustering(k_nse=9, random_state=0).fit(ten).labels_.shape == (10,)
    # threshold=None does not denoise, so k_nse is not used
    small = LLPDSpectralClustering(k_nse=1000, noise_threshold=None, random_state=0).fit(ten)
    assert small.labels_.shape == (10,)


def test_cut_refuses_heights_without_meaning():
    """Issue 23: cut(nan) returned n singletons (every comparison with NaN is false)."""
    model = LLPD().fit(np.random.default_rng(0).random((20, 2)))
    for bad in (np.nan, -1.0, -np.inf, np.float32(-0.5)):
        with pytest.raises(ValueError, match=r"height must be in \[0, inf\]"):
            model.cut(bad)
        with pytest.raises(ValueError, match=r"height must be in \[0, inf\]"):
            model.dendrogram_.cut(bad)
    for bad in ("1.0", None, 1 + 1j, True):
        with pytest.raises(TypeError, match="height must be a real number"):
            model.cut(bad)
    # inf and 0 keep their meaning: one cluster, and only duplicates joined
    assert np.unique(model.cut(np.inf)).size == 1
    assert np.unique(model.cut(0)).size == 20
    assert model.cut(np.float32(0.5)).shape == (20,)


def test_mscale_neighbors_above_n_minus_1_refused():
    """Issue 23: the m-scale kNN graph clipped mscale_neighbors to n - 1 silently."""
    X = np.random.default_rng(0).random((30, 2))
    with pytest.raises(
        ValueError, match=r"mscale_neighbors must be in \[1, n_samples - 1\] = \[1, 29\], got 1000"
    ):
        LLPD(mscale=5, mscale_neighbors=1000).fit(X)
    with pytest.raises(ValueError, match=r"mscale_neighbors .* \[1, 19\], got 20"):
        LLPD(mscale=5).fit(X[:20])  # the default, 20, on 20 points
    assert LLPD(mscale=5, mscale_neighbors=29).fit(X).mst_weights_.shape == (29,)
    # the exact LLPD does not use it
    assert LLPD(mscale_neighbors=1000).fit(X).mst_weights_.shape == (29,)


def test_pairwise_refused_above_the_byte_limit(monkeypatch):
    import geoforest._limits as limits

    model = LLPD().fit(np.random.default_rng(0).random((10, 2)))
    with pytest.raises(ValueError, match=r"dense 10 x 10 matrix .*max_bytes"):
        model.pairwise(max_bytes=799)  # 10 x 10 float64 = 800 bytes
    assert model.pairwise(max_bytes=800).shape == (10, 10)
    monkeypatch.setattr(limits, "DENSE_MAX_BYTES", 799)
    with pytest.raises(ValueError, match="limit"):
        model.pairwise()
    with pytest.raises(ValueError, match="max_bytes must be"):
        model.pairwise(max_bytes=-1)


def test_default_limit_refuses_30000_points_before_allocating():
    """Issue 23: exactly 30,000 points (7.2 GB) used to be allowed."""
    from geoforest._limits import DENSE_MAX_BYTES, check_dense_size

    assert DENSE_MAX_BYTES == 4 * 2**30
    with pytest.raises(ValueError, match="30,000 x 30,000 matrix of 6.7 GiB"):
        check_dense_size((30_000, 30_000), np.float64, what="x", max_bytes=None, hint="")


def test_duplicate_points():
    X = np.r_[np.zeros((5, 3)), np.ones((4, 3))]
    model = LLPD().fit(X)
    assert model.knn_distance(4).tolist() == [0.0] * 5 + [np.sqrt(3)] * 4
    assert model.knn_distance(3)[5:].tolist() == [0.0] * 4
    P = model.pairwise()
    assert P[0, 4] == 0 and P[0, 5] == pytest.approx(np.sqrt(3))
    op = model.affinity_operator(1.0)
    np.testing.assert_allclose(op @ np.ones(9), np.exp(-(P**2)).sum(axis=1), rtol=1e-12)
    # All points identical: every LLPD is 0, the kernel is all ones.
    same = LLPD().fit(np.ones((6, 2)))
    assert np.all(same.pairwise() == 0) and np.all(same.knn_distance(5) == 0)


def test_row_order_does_not_matter():
    X = SETS["grid-2d-ties"]
    perm = np.random.default_rng(7).permutation(X.shape[0])
    a = LLPD().fit(X)
    b = LLPD().fit(X[perm])
    np.testing.assert_array_equal(b.pairwise(), a.pairwise()[np.ix_(perm, perm)])
    np.testing.assert_array_equal(b.knn_distance(5), a.knn_distance(5)[perm])


def test_top_level_exports():
    assert gf.LLPD is LLPD and gf.LLPDSpectralClustering is LLPDSpectralClustering
    assert gf.datasets.make_ldln is make_ldln


# ----------------------------------------------------------------- make_ldln
def test_make_ldln():
    X, y = make_ldln(1001, n_clusters=4, ambient_dim=12, noise_fraction=0.2, random_state=3)
    assert X.shape == (1001, 12) and y.shape == (1001,)
    counts = np.bincount(y + 1)
    assert counts[0] == 200 and counts[1:].tolist() == [201, 200, 200, 200]
    X2, y2 = make_ldln(1001, n_clusters=4, ambient_dim=12, noise_fraction=0.2, random_state=3)
    np.testing.assert_array_equal(X, X2)
    # Clusters lie on their sets (tiny jitter) and are at least `separation` apart.
    X, y = make_ldln(800, n_clusters=4, cluster_noise=0.0, separation=0.7, random_state=0)
    for a in range(4):
        for b in range(a + 1, 4):
            assert cdist(X[y == a], X[y == b]).min() >= 0.7 - 1e-9
    seg, y_seg = make_ldln(
        300, n_clusters=1, intrinsic_dim=1, noise_fraction=0.0, cluster_noise=0.0, random_state=0
    )
    assert np.linalg.svd(seg - seg.mean(axis=0), compute_uv=False)[1] < 1e-9  # a segment
    assert np.all(y_seg == 0)
    with pytest.raises(ValueError, match="intrinsic_dim"):
        make_ldln(100, intrinsic_dim=3)
    with pytest.raises(ValueError, match="noise_fraction"):
        make_ldln(100, noise_fraction=1.0)
    with pytest.raises(ValueError, match="sphere"):
        make_ldln(100, ambient_dim=2, intrinsic_dim=2)


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_extreme_magnitudes_refused_clearly(scale):
    """Issue 20: values near 1e200 died in an assertion inside the EMST library."""
    X = np.random.default_rng(0).normal(size=(30, 3)) * scale
    with pytest.raises(ValueError, match="divide X by a constant"):
        LLPD().fit(X)
    fitted = LLPD().fit(X / scale)
    with pytest.raises(ValueError, match="squared distances"):
        fitted.kneighbors(X[:2], n_neighbors=2)
    LLPD().fit(X / scale * 1e100)  # large but safe


def test_predict_refuses_extreme_magnitudes_like_kneighbors():
    X, _ = gf.datasets.make_ldln(200, n_clusters=2, noise_fraction=0.0, random_state=0)
    model = LLPDSpectralClustering(random_state=0).fit(X)
    with pytest.raises(ValueError, match="squared distances"):
        model.predict(X[:3] * 1e200)


def test_threshold_is_the_former_name_of_noise_threshold():
    X = np.random.default_rng(0).normal(size=(120, 2)) + np.repeat(np.eye(3, 2) * 8, 40, 0)
    new = LLPDSpectralClustering(3, noise_threshold=None, random_state=0).fit(X)
    with pytest.warns(FutureWarning, match="noise_threshold="):
        old = LLPDSpectralClustering(3, threshold=None, random_state=0).fit(X)
    np.testing.assert_array_equal(new.labels_, old.labels_)
    with pytest.warns(FutureWarning, match="noise_threshold_"):
        assert old.threshold_ == new.noise_threshold_ == np.inf


@settings(max_examples=15, deadline=None)
@given(
    sizes=st.lists(st.integers(12, 60), min_size=2, max_size=6),
    shift=repeated_shifts,
    scale=repeated_scales,
    seed=st.integers(0, 2**16),
)
def test_a_few_repeated_values_are_its_clusters(sizes, shift, scale, seed):
    """Data of a few distinct values, each repeated (tied rows): below the
    lowest merge every group is its copies, a level no geometric mean of two
    positive heights separated (K = 1 or 2 for two to four values, with or
    without a warning).  Every value is a cluster, label-free and with K
    given, far from zero and in any unit."""
    X, y = repeated_values(sizes, shift, scale, seed)
    free = LLPDSpectralClustering(random_state=0, noise_threshold=None).fit(X)
    given = LLPDSpectralClustering(len(sizes), random_state=0, noise_threshold=None).fit(X)
    assert free.n_clusters_ == len(sizes)
    np.testing.assert_allclose(adjusted_rand_score(y, free.labels_), 1.0)
    np.testing.assert_allclose(adjusted_rand_score(y, given.labels_), 1.0)
