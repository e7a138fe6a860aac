"""Property tests of the public functions that take user data (issue 44).

``gf.embedding.adjacency_spectral_embedding``; ``gf.metrics``'
``clustering_accuracy``, ``cocluster_accuracy`` (odd label types),
``geodesic_neighbors``, ``geodesic_precision_recall``, ``chance_precision``;
``gf.graph``'s ``euclidean_mst``, ``canonical_labels`` and
``estimate_n_clusters``: a clear error or a result meeting their documented
invariants (``_contract.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import geoforest as gf

from ._contract import (
    assert_clear_error_or,
    assert_same,
    check_finite,
    check_kneighbors,
    check_labels,
)
from ._strategies import has_nonfinite, profile, recipes

# Any input may warn (constant columns, K = 1, ...): the contract is about results
# and errors, so warnings pass here (the suite makes them errors elsewhere).
pytestmark = pytest.mark.filterwarnings("ignore")

_LABELS = st.one_of(
    st.lists(st.integers(-3, 3), min_size=0, max_size=60),
    st.lists(st.sampled_from(["a", "b", "c", ""]), min_size=0, max_size=60),
    st.lists(st.sampled_from([0.5, -1.0, 2.0, float("nan")]), min_size=0, max_size=60),
    st.lists(st.sampled_from([True, False]), min_size=0, max_size=60),
    st.lists(st.sampled_from([1, "a", None, (1, 2)]), min_size=0, max_size=60),
)


@profile()
@given(y_true=_LABELS, y_pred=_LABELS)
def test_clustering_scores(y_true, y_pred):
    """Scores in [0, 1], 1 on identical partitions; clear errors for bad labels."""
    for score in (gf.metrics.clustering_accuracy, gf.metrics.cocluster_accuracy):
        value = assert_clear_error_or(
            lambda s=score: s(y_true, y_pred), what=score.__name__, names=("y_true", "y_pred")
        )
        if value is not None:
            assert 0.0 <= value <= 1.0, f"{score.__name__} = {value}"
        same = assert_clear_error_or(lambda s=score: s(y_true, y_true), what=score.__name__)
        if same is not None:
            assert same == 1.0, f"{score.__name__}(y, y) = {same}"


@profile()
@given(data=st.data(), recipe=recipes(max_rows=150, max_cols=6))
def test_geodesic_metrics(data, recipe):
    """True neighbours sorted without self-matches; precision and recall in [0, 1]."""
    latent = recipe.build()
    n = len(latent)
    k = data.draw(st.integers(1, max(1, n)))
    metric = data.draw(st.sampled_from(["euclidean", "great_circle"]))
    ind = assert_clear_error_or(
        lambda: gf.metrics.geodesic_neighbors(latent, k, metric=metric),
        must_fail=has_nonfinite(latent, float32=False),
        what="geodesic_neighbors",
    )
    if ind is None:
        return
    assert k <= n - 1
    check_kneighbors(np.zeros(ind.shape), ind, n, k, n, training=True)
    rng = np.random.default_rng(recipe.seed)
    retrieved = np.argsort(rng.random((n, n)) + np.eye(n), axis=1)[:, :k]
    res = gf.metrics.geodesic_precision_recall(retrieved, latent=latent, metric=metric)
    for name in ("precision", "recall"):
        check_finite(res[name], name, (k,))
        assert ((res[name] >= 0) & (res[name] <= 1)).all(), name
    own = gf.metrics.geodesic_precision_recall(ind, latent=latent, metric=metric)
    np.testing.assert_allclose(own.precision, 1.0)
    chance = gf.metrics.chance_precision(n, res.ks)
    assert np.all((np.asarray(chance) >= 0) & (np.asarray(chance) <= 1))


@profile()
@given(recipe=recipes(max_rows=200, max_cols=10), n_components=st.integers(0, 6))
def test_adjacency_spectral_embedding(recipe, n_components):
    """Finite latent positions from any finite adjacency; clear errors otherwise."""
    X = recipe.build()
    n = len(X)
    A = X[:, :1] @ X[:, :1].T if X.shape[1] else np.zeros((n, n))
    Y = assert_clear_error_or(
        lambda: gf.embedding.adjacency_spectral_embedding(A, n_components, random_state=0),
        must_fail=not np.isfinite(A).all(),
        what="adjacency_spectral_embedding",
    )
    if Y is not None:
        check_finite(Y, "embedding", (n, n_components))


@profile()
@given(recipe=recipes(max_rows=200, max_cols=8))
def test_euclidean_mst(recipe):
    """n - 1 finite edges joining every point; clear errors for bad input."""
    X = recipe.build()
    n = len(X)
    edges = assert_clear_error_or(
        lambda: gf.graph.euclidean_mst(X), must_fail=not np.isfinite(X).all(), what="mst"
    )
    if edges is None:
        return
    weights, pairs = edges
    pairs = np.asarray(pairs)
    assert pairs.shape == (n - 1, 2) and weights.shape == (n - 1,)
    assert (weights >= 0).all() and not np.isnan(weights).any()
    assert (np.diff(weights) >= 0).all(), "mst: weights not non-decreasing"
    labels = np.arange(n)
    for a, b in pairs:  # union-find by relabelling: small n
        labels[labels == labels[a]] = labels[b]
    assert len(np.unique(labels)) == min(n, 1) or n == 0


@profile()
@given(values=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=30),
       max_clusters=st.one_of(st.none(), st.integers(1, 12)))  # fmt: skip
def test_estimate_n_clusters(values, max_clusters):
    """A number of clusters in [1, max_clusters] from any eigenvalues, or a clear error."""
    k = assert_clear_error_or(
        lambda: gf.graph.estimate_n_clusters(np.array(values), max_clusters=max_clusters),
        must_fail=not np.isfinite(values).all(),
        what="estimate_n_clusters",
    )
    if k is not None:  # documented: 1 for fewer than two eigenvalues
        assert 1 <= k <= max(1, min(max_clusters or len(values), len(values) - 1)), k


def _gaussian_affinity(X: np.ndarray) -> np.ndarray:
    """``exp(-d^2 / median d^2)`` of the rows of ``X`` (NaN where ``X`` is not finite)."""
    with np.errstate(all="ignore"):
        D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        positive = D2[D2 > 0]
        return np.exp(-D2 / (np.median(positive) if positive.size else 1.0))


@profile()
@given(
    data=st.data(),
    recipe=recipes(max_rows=80, max_cols=6),
    sparse=st.booleans(),
    n_clusters=st.one_of(st.none(), st.integers(1, 5)),
)
def test_graph_spectral_clustering(data, recipe, sparse, n_clusters):
    """Canonical labels, K as asked (or at most max_clusters), from any affinity."""
    A = _gaussian_affinity(recipe.build())
    n = len(A)
    if sparse:
        A = sp.csr_matrix(np.where(A > 0.1, A, 0.0))
    res = assert_clear_error_or(
        lambda: gf.graph.spectral_clustering(A, n_clusters, max_clusters=5, random_state=0),
        must_fail=not np.isfinite(A.data if sparse else A).all(),
        what="spectral_clustering",
    )
    if res is None:
        return
    check_labels(res.labels, n, res.n_clusters)
    assert_same(gf.graph.canonical_labels(res.labels), res.labels, "canonical order")
    if n_clusters is not None and n_clusters <= n:
        assert res.n_clusters == n_clusters
    else:
        assert 1 <= res.n_clusters <= max(5, 1)
    directed = data.draw(st.booleans())
    if not sparse and n > 2 and np.isfinite(A).all():
        B = A.copy()
        B[0, 1] += float(directed)
        Y = gf.embedding.adjacency_spectral_embedding(sp.csr_matrix(B), 1, random_state=0)
        check_finite(Y, "embedding", (n, 2 if directed else 1))
