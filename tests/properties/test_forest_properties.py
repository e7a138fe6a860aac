"""Property tests of the unsupervised forests and their neighbour graphs (issue 44).

``UnsupervisedForest``, ``RandomProjectionForest``, ``ForestNeighborsTransformer``,
``merge_forests`` and ``ProximityCounts`` on any data a user may bring
(``_strategies.py``): each case is refused with a clear error or meets the
invariants of ``_contract.py``.  Few trees and few rows keep the whole file
within seconds; few trees are also where neighbour lists once came out of
order (their padding), which these tests keep fixed.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import geoforest as gf
from geoforest.forest._merge import tree_digest

from ._contract import (
    assert_clear_error_or,
    assert_same,
    check_finite,
    check_kneighbors,
    check_proximity,
    pickled,
)
from ._strategies import as_user_input, has_nonfinite, profile, recipes

# Any input may warn (constant columns, K = 1, ...): the contract is about results
# and errors, so warnings pass here (the suite makes them errors elsewhere).
pytestmark = pytest.mark.filterwarnings("ignore")


def _forest(draw, kind: str, seed: int, n_features: int):
    """A small forest of ``kind`` with drawn options (patches: a 1-D image of the features)."""
    n_estimators = draw(st.integers(1, 6))
    split = draw(st.sampled_from([2, 5, 45]))
    if kind == "rpf":
        return gf.RandomProjectionForest(
            n_estimators,
            split=draw(st.sampled_from(["uniform", "median"])),
            min_samples_split=split,
            max_samples=draw(st.sampled_from([None, 0.5, 3])),
            bootstrap=draw(st.booleans()),
            random_state=seed,
        )
    projection = draw(st.sampled_from(["sparse", "axis", "patch"]))
    return gf.UnsupervisedForest(
        n_estimators,
        projection=projection,
        image_shape=(n_features,) if projection == "patch" else None,
        criterion=draw(st.sampled_from(["fastbic", "twomeans", "gmm"])),
        distance=draw(st.sampled_from(["auto", "relevance", "proximity"])),
        min_samples_split=split,
        max_samples=draw(st.sampled_from([0.5, None, 3])),
        bootstrap=draw(st.booleans()),
        random_state=seed,
    )


def _queries(forest, X, Xq, k_train: int, k_new: int):
    """Everything a fitted forest answers, as one tuple (for equality checks)."""
    out = [forest.apply(), forest.transform(X), forest.proximity()]
    if k_train:
        out += list(forest.kneighbors(None, k_train))
    if Xq is not None:
        out += [forest.apply(Xq), forest.proximity(Xq)]
        out += list(forest.kneighbors(Xq, k_new))
    return tuple(out)


@profile()
@given(data=st.data(), kind=st.sampled_from(["urerf", "rpf"]), recipe=recipes())
def test_forest_fit_and_queries(data, kind, recipe):
    """Fit, apply, transform, proximity and kneighbors (training and new points)."""
    draw = data.draw
    X = recipe.build()
    Xin = as_user_input(draw, X)
    forest = _forest(draw, kind, recipe.seed, X.shape[1])
    fitted = assert_clear_error_or(
        lambda: forest.fit(Xin), must_fail=has_nonfinite(np.asarray(Xin, float)), what="fit"
    )
    if fitted is None:
        return
    n, p = X.shape
    T = forest.n_estimators
    leaves = forest.apply()
    assert leaves.shape == (n, T)
    Z = forest.transform(Xin)
    check_finite(Z, "transform", (n, Z.shape[1]))
    assert (np.asarray(Z.sum(axis=1)).ravel() == T).all(), "transform: one leaf per tree"
    check_proximity(forest.proximity(), (n, n), symmetric=True)
    np.testing.assert_allclose(forest.proximity(dense=True).diagonal(), 1.0)
    counts = forest.proximity_counts()
    assert_same(counts.proximity(), forest.proximity(), "proximity_counts().proximity()")

    k = draw(st.integers(1, n + 1))
    method = draw(st.sampled_from(["all", "inbag", "oob"]))
    result = assert_clear_error_or(
        lambda: forest.kneighbors(None, k, method=method), what="kneighbors(None)"
    )
    if method == "all":
        assert (result is None) == (k > n - 1), f"kneighbors(None, {k}) with {n} points"
    if result is not None:
        check_kneighbors(*result, n, k, n, training=True)
        G = forest.kneighbors_graph(None, k, mode="distance", method=method)
        check_finite(G, "kneighbors_graph", (n, n))
        # documented: the union of the lists and their transpose, made connected
        assert (np.diff(G.indptr) >= k).all() and not G.diagonal().any()
        assert_same(G, G.T.tocsr(), "kneighbors_graph(None): symmetric")
    S = assert_clear_error_or(lambda: forest.proximity(method=method), what="proximity(method)")
    if S is not None:
        check_proximity(S, (n, n), symmetric=True)

    new = draw(recipes(min_cols=p, max_cols=p, max_rows=30))
    Xq = new.build()
    k_new = draw(st.integers(1, n))
    found = assert_clear_error_or(
        lambda: forest.kneighbors(Xq, k_new), must_fail=has_nonfinite(Xq), what="kneighbors(Xq)"
    )
    if found is not None:
        check_kneighbors(*found, len(Xq), k_new, n, training=False)
        check_proximity(forest.proximity(Xq), (len(Xq), n), symmetric=False)
        check_proximity(forest.proximity(Xq, Xq), (len(Xq), len(Xq)), symmetric=True)
    wrong = np.zeros((2, p + 1))
    assert assert_clear_error_or(lambda: forest.kneighbors(wrong, 1), what="wrong width") is None


@profile()
@given(data=st.data(), kind=st.sampled_from(["urerf", "rpf"]), recipe=recipes(nonfinite=False))
def test_forest_is_reproducible(data, kind, recipe):
    """The same results for the same seed, for n_jobs 1 and 2, and after pickling."""
    draw = data.draw
    X = recipe.build()
    if has_nonfinite(X):
        return
    forest = _forest(draw, kind, recipe.seed, X.shape[1])
    if assert_clear_error_or(lambda: forest.fit(X), what="fit") is None:
        return
    n = len(X)
    Xq = X[: min(n, 7)] + 0.5
    k_train = draw(st.integers(0, n - 1))
    k_new = draw(st.integers(1, n))
    first = _queries(forest, X, Xq, k_train, k_new)
    again = _queries(_forest_like(forest, n_jobs=1).fit(X), X, Xq, k_train, k_new)
    assert_same(first, again, "refit with the same random_state")
    two = _queries(_forest_like(forest, n_jobs=2).fit(X), X, Xq, k_train, k_new)
    assert_same(first, two, "n_jobs=2")
    assert_same(first, _queries(pickled(forest), X, Xq, k_train, k_new), "after pickling")


def _forest_like(forest, **params):
    from sklearn.base import clone

    return clone(forest).set_params(**params)


@profile()
@given(data=st.data(), recipe=recipes(min_rows=2))
def test_neighbors_transformer(data, recipe):
    """Training graph: symmetric, connected; new points: exactly k sorted neighbours."""
    draw = data.draw
    X = recipe.build()
    n, p = X.shape
    k = draw(st.integers(1, n))
    mode = draw(st.sampled_from(["distance", "connectivity"]))
    distance = draw(st.sampled_from(["auto", "proximity"]))
    forest = gf.UnsupervisedForest(draw(st.integers(1, 5)), min_samples_split=5, distance=distance)
    est = gf.ForestNeighborsTransformer(forest, n_neighbors=k, mode=mode, random_state=1)
    G = assert_clear_error_or(lambda: est.fit_transform(X), must_fail=has_nonfinite(X))
    if G is None:
        return
    check_finite(G, "fit_transform", (n, n))
    assert_same(G, G.T.tocsr(), "fit_transform: symmetric")
    assert (G.data >= 0).all()
    if mode == "distance" and distance == "proximity":  # the learned metric is unbounded
        assert (G.data <= 1).all(), "fit_transform: a forest distance above 1"
    Xq = X[: min(n, 9)] * 0.5
    H = assert_clear_error_or(lambda: est.transform(Xq), must_fail=has_nonfinite(Xq))
    if H is None:
        return
    check_finite(H, "transform", (len(Xq), n))
    assert_same(pickled(est).transform(Xq), H, "transform after pickling")
    two = gf.ForestNeighborsTransformer(forest, n_neighbors=k, mode=mode, random_state=1, n_jobs=2)
    assert_same(two.fit(X).transform(Xq), H, "n_jobs=2")
    per_row = np.diff(H.indptr)
    expected = min(k + (mode == "distance"), n)
    assert (per_row == expected).all(), f"transform: {per_row} entries per row, {expected} asked"


@profile()
@given(recipe=recipes(nonfinite=False, max_rows=120), trees=st.integers(1, 4))
def test_merge_forests_adds_counts(recipe, trees):
    """Merged proximity counts are the sums of the parts'; a bad merge is refused clearly."""
    X = recipe.build()
    if has_nonfinite(X):
        return
    parts = [gf.UnsupervisedForest(trees, min_samples_split=5, random_state=s) for s in (1, 2)]
    if assert_clear_error_or(lambda: [f.fit(X) for f in parts], what="fit") is None:
        return
    digests = [{tree_digest(t) for t in f.trees_} for f in parts]
    if digests[0] & digests[1]:  # test_merge_refuses_equal_trees_of_distinct_seeds
        return
    merged = gf.merge_forests(*parts)
    assert len(merged.trees_) == 2 * trees
    L = merged.proximity_counts()
    L1, L2 = (f.proximity_counts() for f in parts)
    assert_same(L.coleaf, L1.coleaf + L2.coleaf, "merged co-leaf counts")
    check_proximity(merged.proximity(), (len(X), len(X)), symmetric=True)
    for bad in ([parts[0], parts[0]], [parts[0], parts], [parts[0], gf.UnsupervisedForest()]):
        assert assert_clear_error_or(lambda b=bad: gf.merge_forests(*b), what="merge") is None


def test_merge_takes_equal_trees_of_distinct_seeds():
    """Single-leaf trees of two seeds coincide; their seeds tell them apart."""
    X = np.random.default_rng(0).normal(size=(2, 1))
    parts = [gf.UnsupervisedForest(1, min_samples_split=5, random_state=s).fit(X) for s in (1, 2)]
    assert len(gf.merge_forests(*parts).trees_) == 2
