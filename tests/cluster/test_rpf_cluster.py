"""rpfCluster (ForestSpectralClustering) and its kernel map."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs
from sklearn.exceptions import NotFittedError
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest.cluster import (
    RPF_SCALES,
    RPF_THRESHOLDS,
    consensus_scores,
    select_best,
    sharpen_kernel,
    truncated_kernel,
    unfragmented_threshold,
)
from geoforest.cluster._rpf_kernel import _sharpen_kept, attach_by_kernel, kept_by_threshold
from geoforest.cluster._rpf_selection import _pairwise_ari
from geoforest.graph import (
    normalized_affinity,
    spectral_clustering,
)


def _kernel(n=120, seed=0):
    X, y = make_blobs(n, centers=3, n_features=4, cluster_std=0.6, random_state=seed)
    S = gf.RandomProjectionForest(60, random_state=seed).fit(X).proximity()
    return X, y, S


def test_sharpen_kernel_matches_the_papers_map():
    _, _, S = _kernel()
    dense = S.toarray()
    for b1, b2 in [(0.0, 1.0), (0.2, 0.3), (0.4, 5.0)]:
        A = sharpen_kernel(S, b1, b2)
        # Zeros stay zero, entries below beta_1 are removed, the rest are mapped.
        keep = dense >= b1
        keep &= dense > 0
        assert np.array_equal(A.toarray() > 0, keep)
        assert np.allclose(A.toarray()[keep], np.exp((dense[keep] - 1) / b2))
        # The paper's exp(S / beta_2) differs by a constant factor: same normalised affinity.
        paper = np.where(keep, np.exp(dense / b2), 0.0)
        assert np.allclose(normalized_affinity(A)[0].toarray(), normalized_affinity(paper)[0])
    # No overflow at tiny scales (exp(1 / 0.001) would overflow).
    assert np.all(np.isfinite(sharpen_kernel(S, 0.0, 1e-3).data))
    with pytest.raises(ValueError, match="scale"):
        sharpen_kernel(S, 0.0, 0.0)


def test_sharpening_a_thresholded_kernel_once_per_threshold_is_sharpen_kernel():
    """The candidates share beta_1's entries: bit for bit sharpen_kernel, nothing mutated."""
    _, _, S = _kernel()
    before = S.copy()
    kept = kept_by_threshold(S)
    for b1, b2 in [(0.1, 0.02), (0.1, 1.0), (0.1, 100.0), (0.0, 0.5), (0.3, 0.05)]:
        shared = kept(b1)
        A = _sharpen_kept(shared, b2)
        B = sharpen_kernel(S, b1, b2)
        for part in ("data", "indices", "indptr"):
            np.testing.assert_array_equal(getattr(A, part), getattr(B, part))
        assert kept(b1) is shared  # computed once for a run of equal thresholds
        dense = S.toarray()  # dense: old scipy refuses a sparse `S >= 0`
        np.testing.assert_array_equal(shared.toarray(), np.where(dense >= b1, dense, 0.0))
    assert (S != before).nnz == 0
    with pytest.raises(ValueError, match="scale"):
        _sharpen_kept(kept(0.0), 0.0)


def test_fixed_betas_equal_kernel_spectral_clustering_of_the_sharpened_kernel():
    X, y, _ = _kernel()
    forest = gf.RandomProjectionForest(60, random_state=0)
    model = gf.ForestSpectralClustering(
        3, forest=forest, threshold=0.1, scale=0.5, random_state=0, affinity="kernel"
    ).fit(X)
    S = forest.fit(X).proximity()
    assert np.allclose(model.kernel_.toarray(), S.toarray())
    A = sharpen_kernel(S, 0.1, 0.5)
    ref = gf.KernelSpectralClustering(3, random_state=0).fit(A)
    assert np.array_equal(model.labels_, ref.labels_)
    assert model.threshold_ == 0.1 and model.scale_ == 0.5 and len(model.candidates_) == 1
    assert sp.issparse(model.affinity_matrix_) and model.affinity_matrix_.nnz == A.nnz
    assert adjusted_rand_score(y, model.labels_) == pytest.approx(1.0)


def test_auto_selection_is_the_consensus_candidate():
    X, y, _ = _kernel(seed=1)
    model = gf.ForestSpectralClustering(
        3, selection="consensus", random_state=0, affinity="kernel"
    ).fit(X)
    cands = model.candidates_
    assert len(cands) == 5 * 10
    # Recompute every candidate's labels independently and the consensus scores.
    labels = []
    for c in cands:
        A = sharpen_kernel(model.kernel_, c["threshold"], c["scale"])
        labels.append(gf.KernelSpectralClustering(3, random_state=0).fit(A).labels_)
    scores = [
        np.mean([adjusted_rand_score(a, b) for j, b in enumerate(labels) if j != i])
        for i, a in enumerate(labels)
    ]
    assert np.allclose(scores, [c["score"] for c in cands])
    # Best score; among ties (same partition) the largest scale, then the smallest threshold.
    tied = [i for i, v in enumerate(scores) if v >= max(scores) - 1e-9]
    best = min(tied, key=lambda i: (-cands[i]["scale"], cands[i]["threshold"]))
    assert (model.threshold_, model.scale_) == (cands[best]["threshold"], cands[best]["scale"])
    assert np.array_equal(model.labels_, labels[best])
    assert adjusted_rand_score(y, model.labels_) == pytest.approx(1.0)


def test_public_candidates_and_consensus_reproduce_the_fit():
    """cluster_candidate, consensus_scores and select_best: what fit does, in public."""
    X, _, _ = _kernel(seed=1)
    model = gf.ForestSpectralClustering(
        3, selection="consensus", random_state=0, affinity="kernel"
    ).fit(X)
    cands = [
        model.cluster_candidate(b1, b2, kernel=model.selection_kernel_)
        for b1 in RPF_THRESHOLDS
        for b2 in RPF_SCALES
    ]
    for c, fitted in zip(cands, model.candidates_, strict=True):
        assert (c.threshold, c.scale) == (fitted["threshold"], fitted["scale"])
        assert np.array_equal(c.labels, fitted["labels"])
    scores = consensus_scores([c.labels for c in cands])
    np.testing.assert_array_equal(scores, [c["score"] for c in model.candidates_])
    best = cands[select_best(scores, [c.scale for c in cands], [c.threshold for c in cands])]
    assert (best.threshold, best.scale) == (model.threshold_, model.scale_)
    # on the full kernel (the default) at the chosen pair: the fit's labels and affinity
    again = model.cluster_candidate(model.threshold_, model.scale_)
    assert np.array_equal(again.labels, model.labels_) and again.n_clusters == 3
    assert (again.affinity != model.affinity_matrix_).nnz == 0
    # more eigenvalues on request (the eigengap after K), capped at what the solver allows
    assert model.cluster_candidate(0.0, 1.0, n_eigenvalues=4).eigenvalues.shape == (4,)
    assert model.cluster_candidate(0.0, 1.0, n_clusters=2).n_clusters == 2
    assert np.isnan(consensus_scores([np.zeros(4, int)])).all()
    with pytest.raises(NotFittedError):
        gf.ForestSpectralClustering(3, affinity="kernel").cluster_candidate(0.0, 1.0)


def test_relgap_candidate_reproduces_the_fit():
    X, _, _ = _kernel(seed=1)
    # K estimated: relgap
    model = gf.ForestSpectralClustering(random_state=0, affinity="kernel").fit(X)
    again = model.cluster_candidate(model.threshold_, model.scale_)
    assert again.n_clusters == model.n_clusters_
    assert np.array_equal(again.labels, model.labels_)


def test_select_best_breaks_ties_toward_the_smoothest_candidate():
    scores = np.array([0.9, 0.5, 0.9 - 1e-12, 0.9, 0.2])
    scales = np.array([0.05, 100.0, 1.0, 1.0, 5.0])
    thresholds = np.array([0.0, 0.0, 0.3, 0.1, 0.0])
    assert select_best(scores, scales, thresholds) == 3  # scale 1 ties; threshold 0.1 < 0.3
    assert select_best(np.array([0.1, 0.3, 0.2]), scales[:3], thresholds[:3]) == 1
    assert select_best(np.array([-np.inf, -np.inf]), scales[:2], thresholds[:2]) == 0


def test_estimates_k_and_takes_any_forest():
    X, y, _ = _kernel(seed=2)
    model = gf.ForestSpectralClustering(
        forest=gf.UnsupervisedForest(40, min_samples_split=10),
        threshold=0.0,
        scale=0.2,
        random_state=0,
        affinity="kernel",
    ).fit(X)
    assert model.n_clusters_ == 3
    assert adjusted_rand_score(y, model.labels_) > 0.95
    eig = gf.ForestSpectralClustering(
        3, selection="eigengap", scale=1.0, random_state=0, affinity="kernel"
    ).fit(X)
    # The eigengap score is lambda_K - lambda_{K+1} of each candidate, recomputed here
    # with a dense numpy eigendecomposition, and the largest one is chosen.
    for c in eig.candidates_:
        A = sharpen_kernel(eig.kernel_, c["threshold"], c["scale"])
        lam = np.sort(np.linalg.eigvalsh(normalized_affinity(A)[0].toarray()))[::-1]
        assert c["score"] == pytest.approx(lam[2] - lam[3], abs=1e-8)
    best = max(eig.candidates_, key=lambda c: c["score"])
    assert (eig.threshold_, eig.scale_) == (best["threshold"], best["scale"])


def test_reproducible_and_validated():
    X, _, _ = _kernel()
    a = gf.ForestSpectralClustering(
        3, threshold=0.0, random_state=5, affinity="kernel"
    ).fit_predict(X)
    b = gf.ForestSpectralClustering(
        3, threshold=0.0, random_state=5, n_jobs=2, affinity="kernel"
    ).fit_predict(X)
    assert np.array_equal(a, b)
    with pytest.raises(ValueError):
        gf.ForestSpectralClustering(threshold=1.0, affinity="kernel").fit(X)
    with pytest.raises(ValueError):
        gf.ForestSpectralClustering(scale=0, affinity="kernel").fit(X)
    with pytest.raises(ValueError, match="n_clusters"):
        gf.ForestSpectralClustering(500, threshold=0.0, scale=1.0, affinity="kernel").fit(X)
    with pytest.raises(ValueError):
        gf.ForestSpectralClustering(forest="rp", affinity="kernel").fit(X)


def test_large_n_compares_candidates_on_a_subset():
    X, y = make_blobs(600, centers=3, n_features=4, cluster_std=0.6, random_state=4)
    forest = gf.RandomProjectionForest(40, random_state=0)
    model = gf.ForestSpectralClustering(
        3, forest=forest, max_selection_samples=200, random_state=0, affinity="kernel"
    ).fit(X)
    sub = model.selection_indices_
    assert sub.shape == (200,) and np.all(np.diff(sub) > 0)
    assert all(c["labels"].shape == (200,) for c in model.candidates_)
    # The candidates saw the kernel of a forest grown on the subset alone.
    own = gf.RandomProjectionForest(40, random_state=0).fit(X[sub]).proximity()
    assert np.allclose(model.selection_kernel_.toarray(), own.toarray())
    # The chosen pair clusters every point exactly as on its own.
    A = sharpen_kernel(model.kernel_, model.threshold_, model.scale_)
    ref = spectral_clustering(A, 3, random_state=0, tol=model.eigen_tol)
    ref_labels = attach_by_kernel(model.kernel_, ref.labels, ref.unembedded)
    assert np.array_equal(model.labels_, ref_labels) and model.labels_.shape == (600,)
    assert adjusted_rand_score(y, model.labels_) == pytest.approx(1.0)
    # Without the subset the candidates see all points.
    full = gf.ForestSpectralClustering(
        3, forest=forest, max_selection_samples=None, affinity="kernel"
    ).fit(X)
    assert full.selection_indices_ is None and full.candidates_[0]["labels"].shape == (600,)


def test_attach_by_kernel_against_brute_force():
    rng = np.random.RandomState(0)
    n, k = 40, 3
    S = sp.random(n, n, density=0.3, random_state=1)
    S = sp.csr_array(S + S.T)
    labels = rng.randint(k, size=n)
    points = np.array([2, 7, 19])
    out = attach_by_kernel(S, labels, points)
    dense = S.toarray()
    clustered = np.setdiff1d(np.arange(n), points)
    expected = labels.copy()
    for i in points:
        means = [dense[i, clustered[labels[clustered] == c]].mean() for c in range(k)]
        if max(means) > 0:
            expected[i] = int(np.argmax(means))
    assert adjusted_rand_score(out, expected) == 1.0


def test_disconnected_threshold_points_join_their_kernel_cluster():
    # Two blobs; beta_1 = 0.4 cuts some points off the graph.  Every point must
    # still land in its own blob's cluster, through the raw kernel.
    X, y = make_blobs(300, centers=[[0, 0], [10, 10]], cluster_std=1.0, random_state=3)
    model = gf.ForestSpectralClustering(
        2,
        forest=gf.RandomProjectionForest(50),
        threshold=0.4,
        scale=0.05,
        random_state=0,
        affinity="kernel",
    ).fit(X)
    assert adjusted_rand_score(y, model.labels_) == 1.0


def test_truncated_kernel_against_brute_force_top_m():
    X, _ = make_blobs(150, centers=3, n_features=3, random_state=2)
    forest = gf.RandomProjectionForest(30, random_state=2).fit(X)
    full = forest.proximity().toarray()
    n = full.shape[0]
    for m in (1, 5, 40):
        T = truncated_kernel(forest, m)
        assert T.shape == (n, n) and T.format == "csr"
        expected = np.zeros_like(full)
        for i in range(n):
            others = np.array([j for j in range(n) if j != i])
            # largest proximity first, ties to the lower index
            order = others[np.lexsort((others, -full[i, others]))][:m]
            expected[i, order] = full[i, order]
        expected = np.maximum(expected, expected.T)
        np.fill_diagonal(expected, 1.0)
        assert np.allclose(T.toarray(), expected)
        assert (T != T.T).nnz == 0
        assert T.nnz <= n * (2 * m + 1)
    with pytest.raises(ValueError, match="n_neighbors"):
        truncated_kernel(forest, n)


def test_kernel_neighbors_clusters_like_the_full_kernel():
    X, y = make_blobs(300, centers=3, n_features=4, cluster_std=0.8, random_state=5)
    kw = dict(threshold=0.0, scale=0.5, random_state=0)
    full = gf.ForestSpectralClustering(3, **kw, affinity="kernel").fit(X)
    part = gf.ForestSpectralClustering(3, kernel_neighbors=30, **kw, affinity="kernel").fit(X)
    assert part.kernel_.nnz < full.kernel_.nnz
    assert adjusted_rand_score(y, part.labels_) > 0.95
    assert adjusted_rand_score(full.labels_, part.labels_) > 0.95
    # capped at n - 1, with a warning: keeps every co-leaf pair, i.e. the full kernel
    with pytest.warns(UserWarning, match=r"kernel_neighbors=10000 is above n_samples - 1 = 299"):
        capped = gf.ForestSpectralClustering(
            3, kernel_neighbors=10_000, **kw, affinity="kernel"
        ).fit(X)
    assert np.allclose(capped.kernel_.toarray(), full.kernel_.toarray())


def _small_rpf(**params):
    forest = gf.RandomProjectionForest(n_estimators=5, min_samples_split=5)
    return gf.ForestSpectralClustering(
        2, forest=forest, threshold=0.0, scale=1.0, random_state=0, **params, affinity="kernel"
    )


def test_kernel_neighbors_above_n_minus_1_warns_at_n_minus_1_does_not():
    """Issue 23: kernel_neighbors above n - 1 was capped without a word."""
    X, _ = make_blobs(40, centers=2, random_state=0)
    with pytest.warns(UserWarning, match=r"kernel_neighbors=1000 is above n_samples - 1 = 39"):
        capped = _small_rpf(kernel_neighbors=1000).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        exact = _small_rpf(kernel_neighbors=39).fit(X)
    assert (capped.kernel_ != exact.kernel_).nnz == 0


def test_n_jobs_zero_refused_at_validation(monkeypatch):
    """Issue 23: n_jobs=0 passed validation and failed inside joblib."""
    X, _ = make_blobs(30, centers=2, random_state=0)

    def no_fit(*args, **kwargs):
        raise AssertionError("the forest was fitted before n_jobs was checked")

    with monkeypatch.context() as m:
        m.setattr(gf.RandomProjectionForest, "fit", no_fit)
        with pytest.raises(ValueError, match=r"'n_jobs' parameter of ForestSpectralClustering"):
            _small_rpf(n_jobs=0).fit(X)
    for n_jobs in (None, 1, -1):
        assert _small_rpf(n_jobs=n_jobs).fit(X).labels_.shape == (30,)


@pytest.mark.parametrize(
    "X, match",
    [
        (np.zeros((1, 3)), "minimum of 2 is required by ForestSpectralClustering"),
        (np.full((10, 3), np.nan), "ForestSpectralClustering does not accept missing values"),
        (np.ones((10, 3)) + 1j, "Complex data not supported by ForestSpectralClustering"),
    ],
    ids=["one-sample", "nan", "complex"],
)
def test_input_errors_name_forest_spectral_clustering(X, match):
    """Issue 23: errors named the inner RandomProjectionForest, which the user did not call."""
    with pytest.raises(ValueError, match=match) as info:
        _small_rpf().fit(X)
    assert "RandomProjectionForest" not in str(info.value)


def _components_by_hand(A: np.ndarray) -> list[int]:
    """Component sizes of a dense symmetric graph by depth-first search."""
    n = A.shape[0]
    seen = np.zeros(n, bool)
    sizes = []
    for start in range(n):
        if seen[start]:
            continue
        stack, size = [start], 0
        seen[start] = True
        while stack:
            i = stack.pop()
            size += 1
            for j in np.flatnonzero(A[i] > 0):
                if not seen[j]:
                    seen[j] = True
                    stack.append(j)
        sizes.append(size)
    return sizes


def test_unfragmented_threshold_against_depth_first_search():
    X, _ = make_blobs(90, centers=3, n_features=3, cluster_std=1.5, random_state=4)
    S = gf.RandomProjectionForest(40, random_state=4).fit(X).proximity()
    dense = S.toarray()
    for min_size in (1, 5, 20, 31, 200):
        ok = [
            b
            for b in RPF_THRESHOLDS
            if min(_components_by_hand(dense * (dense >= b))) >= min(min_size, 90)
        ]
        expected = max(ok) if ok else min(RPF_THRESHOLDS)
        assert unfragmented_threshold(S, RPF_THRESHOLDS, min_size=min_size) == expected
    # the default size bound is max(5, 2 % of n)
    assert unfragmented_threshold(S, RPF_THRESHOLDS) == unfragmented_threshold(
        S, RPF_THRESHOLDS, min_size=5
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unfragmented_threshold_on_random_graphs_and_grids(dtype):
    """Any grid (one value, unsorted, repeated) and kernel dtype, against the search by hand."""
    rng = np.random.RandomState(5)
    for _ in range(40):
        n = int(rng.randint(2, 40))
        W = rng.rand(n, n) * (rng.rand(n, n) < rng.uniform(0.05, 0.5))
        W = np.maximum(W, W.T).astype(dtype)
        np.fill_diagonal(W, 1.0)
        S = sp.csr_array(W)
        rows = np.repeat(np.arange(n), np.diff(S.indptr))
        S.data[(rows + S.indices) % int(rng.randint(2, 9)) == 1] = 0.0  # stored zeros, symmetric
        W = S.toarray()
        grid = list(rng.choice([0.0, 0.1, 0.25, 0.5, 0.7, 0.9], size=rng.randint(1, 6)))
        min_size = int(rng.randint(1, 8))
        ok = [b for b in grid if min(_components_by_hand(W * (W >= b))) >= min(min_size, n)]
        expected = max(ok) if ok else min(grid)
        assert unfragmented_threshold(S, grid, min_size=min_size) == expected
        assert unfragmented_threshold(S.multiply(S > 0), grid, min_size=min_size) == expected


def test_unfragmented_selection_is_consensus_at_that_threshold():
    X, y, _ = _kernel(seed=1)
    # With K given, the default ("auto") is the unfragmented rule (docs/results/rpf-cluster.md).
    model = gf.ForestSpectralClustering(3, random_state=0, affinity="kernel").fit(X)
    explicit = gf.ForestSpectralClustering(
        3, selection="unfragmented", random_state=0, affinity="kernel"
    ).fit(X)
    assert model.selection == "auto" and np.array_equal(model.labels_, explicit.labels_)
    b1 = unfragmented_threshold(model.kernel_, (0.0, 0.1, 0.2, 0.3, 0.4))
    cands = model.candidates_
    assert [c["scale"] for c in cands] == list(RPF_SCALES)
    assert {c["threshold"] for c in cands} == {b1} == {model.threshold_}
    fixed = gf.ForestSpectralClustering(3, threshold=b1, random_state=0, affinity="kernel").fit(X)
    assert model.scale_ == fixed.scale_ and np.array_equal(model.labels_, fixed.labels_)
    assert adjusted_rand_score(y, model.labels_) == pytest.approx(1.0)
    # The consensus among the 10 scales, recomputed independently (each candidate by
    # KernelSpectralClustering of the sharpened kernel, scores by scikit-learn's ARI).
    labels = [
        gf.KernelSpectralClustering(3, random_state=0)
        .fit(sharpen_kernel(model.kernel_, b1, b2))
        .labels_
        for b2 in RPF_SCALES
    ]
    scores = [
        np.mean([adjusted_rand_score(a, b) for j, b in enumerate(labels) if j != i])
        for i, a in enumerate(labels)
    ]
    assert np.allclose(scores, [c["score"] for c in cands])
    tied = [i for i, v in enumerate(scores) if v >= max(scores) - 1e-9]
    assert model.scale_ == max(RPF_SCALES[i] for i in tied)


@pytest.mark.filterwarnings("ignore:.* lie in connected components of the affinity:UserWarning")
def test_stability_selection_against_independently_redrawn_forests():
    """Scores recomputed from forests fitted by hand (documented seeds), fragments refused."""
    from sklearn.datasets import load_iris

    X = load_iris().data

    def stability_model():
        return gf.ForestSpectralClustering(
            3,
            forest=gf.RandomProjectionForest(60),
            selection="stability",
            stability_forests=3,
            random_state=1,
            affinity="kernel",
        ).fit(X)

    model = stability_model()
    b1 = unfragmented_threshold(model.kernel_, (0.0, 0.1, 0.2, 0.3, 0.4))
    cands = model.candidates_
    assert [c["scale"] for c in cands] == list(RPF_SCALES)
    assert {c["threshold"] for c in cands} == {b1}

    # The same partitions from scratch: forests with seeds 1 + 7919 b, each
    # candidate by spectral clustering of the sharpened kernel, points the
    # threshold cut off attached through the raw kernel (tested above).
    def partition(S, b2):
        res = spectral_clustering(sharpen_kernel(S, b1, b2), 3, n_init=10, random_state=1)
        return attach_by_kernel(S, res.labels, res.unembedded)

    kernels = [
        gf.RandomProjectionForest(60, random_state=(1 + 7919 * b) % (2**31 - 1)).fit(X).proximity()
        for b in range(3)
    ]
    np.testing.assert_allclose(kernels[0].toarray(), model.kernel_.toarray())
    parts = [[partition(S, b2) for b2 in RPF_SCALES] for S in kernels]
    scores = [
        np.mean(
            [adjusted_rand_score(parts[a][j], parts[b][j]) for a, b in ((0, 1), (0, 2), (1, 2))]
        )
        for j in range(len(RPF_SCALES))
    ]
    assert np.allclose(scores, [c["score"] for c in cands])
    fragmented = [np.bincount(parts[0][j]).min() < 5 for j in range(len(RPF_SCALES))]
    assert [c["fragmented"] for c in cands] == fragmented
    assert not all(fragmented)
    allowed = [j for j in range(len(RPF_SCALES)) if not fragmented[j]]
    best = max(scores[j] for j in allowed)
    tied = [j for j in allowed if scores[j] >= best - 1e-9]
    assert model.scale_ == max(RPF_SCALES[j] for j in tied)
    assert np.array_equal(model.labels_, stability_model().labels_)
    with pytest.raises(ValueError):
        gf.ForestSpectralClustering(
            3, selection="stability", stability_forests=1, affinity="kernel"
        ).fit(X)


def test_consensus_ari_is_scikit_learns_to_the_bit():
    """The pairwise ARI of the consensus and stability scores: sklearn's value exactly.

    The candidates are compared without sklearn's per-call checks; the value must
    still be bit-identical, or ties in select_best (1e-9) could break otherwise.
    """
    rng = np.random.RandomState(0)
    for trial in range(400):
        n = int(rng.randint(1, 120))
        a = rng.randint(rng.randint(1, 9), size=n)
        b = rng.randint(rng.randint(1, 9), size=n)
        if trial % 3 == 0:  # near-copies, as most candidates are
            b = a.copy()
            b[rng.rand(n) < 0.05] = 0
        if trial % 7 == 0:
            b = np.arange(n)  # all singletons
        ari = _pairwise_ari([a * 3 - 5, b.astype(str)])  # any label values
        assert ari[0, 1] == ari[1, 0] == adjusted_rand_score(a, b) == adjusted_rand_score(b, a)
    partitions = [rng.randint(k, size=50) for k in (2, 3, 3, 5, 8)]
    partitions += [partitions[0], partitions[0][::-1]]  # a copy, a reordering
    expected = [
        np.mean([adjusted_rand_score(p, q) for j, q in enumerate(partitions) if j != i])
        for i, p in enumerate(partitions)
    ]
    np.testing.assert_array_equal(consensus_scores(partitions), expected)
    with pytest.raises(ValueError, match="same points"):
        consensus_scores([[0, 1, 1], [0, 1]])
