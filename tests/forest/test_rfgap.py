"""RF-GAP proximities (Rhodes, Cutler & Moon 2023) of the supervised forests: the
definition against a brute-force loop, and the paper's defining property, the
proximity-weighted training labels reproduce each point's out-of-bag prediction."""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_friedman1

import geoforest as gf


def _brute_rfgap(forest, X_query=None):
    """p(i, j) from the definition, one point, tree and training row at a time."""
    train = forest.apply()
    counts = forest.inbag_counts_
    w = forest._fit_weights
    queries = train if X_query is None else forest.apply(X_query)
    n_q, (n, n_trees) = queries.shape[0], train.shape
    P = np.zeros((n_q, n))
    for i in range(n_q):
        trees = [t for t in range(n_trees) if X_query is not None or counts[i, t] == 0]
        for t in trees:
            members = [j for j in range(n) if counts[j, t] > 0 and train[j, t] == queries[i, t]]
            mass = sum(counts[j, t] * w[j] for j in members)
            for j in members:
                P[i, j] += counts[j, t] * w[j] / mass / len(trees)
    return P


def test_rfgap_is_the_definition():
    X, y = make_friedman1(60, random_state=0)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=60)
    reg = gf.ObliqueForestRegressor(n_estimators=7, random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(reg.proximity(method="rfgap").toarray(), _brute_rfgap(reg))
    new = X[:9] + 0.05
    np.testing.assert_allclose(
        reg.proximity(new, method="rfgap", dense=True), _brute_rfgap(reg, new), atol=1e-15
    )


@pytest.mark.parametrize("outputs", [1, 2])
def test_proximity_weighted_targets_are_the_oob_predictions(outputs):
    X, y = make_friedman1(400, random_state=1)
    Y = y if outputs == 1 else np.column_stack([y, np.cos(y)])
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=400)
    reg = gf.ObliqueForestRegressor(n_estimators=25, oob_score=True, random_state=0)
    reg.fit(X, Y, sample_weight=w)
    P = reg.proximity(method="rfgap")
    np.testing.assert_allclose(P @ Y, reg.oob_prediction_, rtol=1e-10, atol=1e-10)
    assert np.all(P.diagonal() == 0)
    np.testing.assert_allclose(P.sum(axis=1).A1, 1.0)  # every row left out by some tree
    # A new point counts every tree: its weighted targets are its prediction.
    Xn, _ = make_friedman1(30, random_state=2)
    np.testing.assert_allclose(reg.proximity(Xn, method="rfgap") @ Y, reg.predict(Xn))


# The 10-tree part leaves some rows in every tree's sample (no OOB estimate: said).
@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores:UserWarning")
def test_proximity_weighted_labels_are_the_oob_class_probabilities():
    X, y = make_classification(400, 8, n_informative=4, n_classes=3, random_state=0)
    clf = gf.ObliqueForestClassifier(
        n_estimators=25, oob_score=True, class_weight="balanced", random_state=0
    ).fit(X, y)
    onehot = np.eye(3)[y]
    P = clf.proximity(method="rfgap")
    np.testing.assert_allclose(P @ onehot, clf.oob_decision_function_, atol=1e-12)
    Xn, _ = make_classification(20, 8, n_informative=4, n_classes=3, random_state=5)
    np.testing.assert_allclose(
        clf.proximity(Xn, method="rfgap") @ onehot, clf.predict_proba(Xn), atol=1e-12
    )
    # Merged forests are one forest: the property holds for the merged trees too.
    other = gf.ObliqueForestClassifier(
        n_estimators=10, oob_score=True, class_weight="balanced", random_state=1
    ).fit(X, y)
    merged = gf.merge_forests(clf, other)
    Pm = merged.proximity(method="rfgap")
    assert Pm.shape == (400, 400) and np.allclose(Pm.sum(axis=1).A1, 1.0)


def test_rfgap_neighbours_are_the_largest_proximities():
    X, y = make_friedman1(120, random_state=3)
    reg = gf.ObliqueForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    P = reg.proximity(method="rfgap").toarray()
    dist, ind = reg.kneighbors(n_neighbors=40, method="rfgap")
    for i in range(120):
        order = np.lexsort((np.arange(120), -P[i]))
        order = order[order != i][:40]
        nonzero = P[i, order] > 0
        # The co-leaf points by proximity (ties by index), then padding at distance 1.
        np.testing.assert_array_equal(ind[i][nonzero], order[nonzero])
        np.testing.assert_allclose(dist[i], 1.0 - P[i, ind[i]])
        assert i not in ind[i]
    assert np.all(np.diff(dist, axis=1) >= 0)
    G = reg.kneighbors_graph(n_neighbors=5, method="rfgap", mode="distance")
    assert (G != G.T).nnz == 0  # the symmetric training graph of every forest


def test_rfgap_refuses_what_it_cannot_define():
    X, y = make_friedman1(50, random_state=4)
    with pytest.raises(ValueError, match="needs a supervised forest"):
        gf.UnsupervisedForest(n_estimators=2, random_state=0).fit(X).proximity(method="rfgap")
    with pytest.raises(ValueError, match="needs a supervised forest"):
        gf.UnsupervisedForest(n_estimators=2, random_state=0).fit(X).kneighbors(method="rfgap")
    reg = gf.ObliqueForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="Y=None"):
        reg.proximity(X[:3], X[:5], method="rfgap")
