"""Property tests of the clusterers (issue 44).

``ForestSpectralClustering`` (affinity ``"knn"`` and ``"kernel"``),
``LLPDSpectralClustering``, ``LUND`` on features and
``KernelSpectralClustering`` on affinities, with ``n_clusters`` given or
estimated, on any data a user may bring (``_strategies.py``): a clear error,
or labels in range (``-1`` only for LLPD's noise) with ``n_clusters``
respected, new points labelled alike, and the same labels for the same seed,
``n_jobs`` 1 and 2, and after pickling (``_contract.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone

import geoforest as gf

from ._contract import assert_clear_error_or, assert_same, check_labels, pickled
from ._strategies import has_nonfinite, profile, recipes

# Any input may warn (constant columns, K = 1, ...): the contract is about results
# and errors, so warnings pass here (the suite makes them errors elsewhere).
pytestmark = pytest.mark.filterwarnings("ignore")


def _small_forest(seed: int):
    return gf.UnsupervisedForest(4, min_samples_split=5, random_state=seed)


def _make(name: str, draw, n: int, seed: int):
    """A clusterer ``name`` with drawn options (``n``: training points)."""
    n_clusters = draw(st.one_of(st.none(), st.integers(1, 5)))
    k = draw(st.integers(1, max(1, min(n, 20))))
    if name == "forest_spectral":
        metric = draw(st.sampled_from(["forest", "euclidean"]))
        return gf.ForestSpectralClustering(
            n_clusters,
            affinity=draw(st.sampled_from(["knn", "kernel"])),
            metric=metric,
            n_neighbors=k,
            forest=_small_forest(seed) if metric == "forest" else None,
            stability_forests=2,
            max_clusters=5,
            n_init=2,
            random_state=seed,
        )
    if name == "llpd_spectral":
        return gf.LLPDSpectralClustering(
            n_clusters,
            n_neighbors=k,
            k_nse=draw(st.integers(1, max(1, min(n - 1, 10)))),
            max_clusters=5,
            n_init=2,
            random_state=seed,
        )
    return gf.LUND(
        n_clusters,
        max_clusters=5,
        n_neighbors=k,
        t=draw(st.sampled_from([1.0, "multiscale"])),
        max_log2_t=6,
        n_components=draw(st.integers(1, 6)),
        n_search=draw(st.integers(1, 10)),
        random_state=seed,
    )


@profile()
@pytest.mark.parametrize("name", ["forest_spectral", "llpd_spectral", "lund"])
@given(data=st.data(), recipe=recipes(max_rows=150, max_cols=20))
def test_clusterer(name, data, recipe):
    """Labels in range for training and new points; clear errors otherwise."""
    X = recipe.build()
    n, p = X.shape
    est = _make(name, data.draw, n, recipe.seed)
    f32 = est.get_params().get("metric") == "forest"  # forests compute in float32
    labels = assert_clear_error_or(
        lambda: est.fit_predict(X), must_fail=has_nonfinite(X, f32), what=f"{name}.fit_predict"
    )
    if labels is None:
        return
    check_labels(labels, n, est.n_clusters_ if hasattr(est, "n_clusters_") else None,
                 noise=name == "llpd_spectral")  # fmt: skip
    if est.n_clusters is not None:
        assert est.n_clusters_ == est.n_clusters or est.n_clusters > n
    assert est.n_clusters_ <= max(est.n_clusters or est.max_clusters, 1)
    distinct, copy_of = np.unique(X, axis=0, return_inverse=True)
    if len(distinct) < n and name == "lund":
        return  # test_lund_labels_duplicates_alike
    if est.n_clusters is None or est.n_clusters <= len(distinct):  # else copies must part
        for c in range(len(distinct)):
            assert len(set(labels[copy_of.ravel() == c])) == 1, "copies, different labels"
    if name == "lund":  # documented: predict(X_train) returns labels_
        assert_same(est.predict(X), labels, "LUND.predict(X_train)")
    Xq = data.draw(recipes(min_cols=p, max_cols=p, max_rows=20)).build()
    new = assert_clear_error_or(
        lambda: est.predict(Xq), must_fail=has_nonfinite(Xq, f32), what=f"{name}.predict"
    )
    if new is not None:
        check_labels(new, len(Xq), est.n_clusters_, noise=name == "llpd_spectral")


@profile()
@pytest.mark.parametrize("name", ["forest_spectral", "llpd_spectral", "lund"])
@given(data=st.data(), recipe=recipes(min_rows=2, max_rows=100, max_cols=10, nonfinite=False))
def test_clusterer_is_reproducible(name, data, recipe):
    """Same seed, n_jobs 1 and 2, pickling: the same labels and predictions."""
    X = recipe.build()
    if has_nonfinite(X):
        return
    est = _make(name, data.draw, len(X), recipe.seed)
    labels = assert_clear_error_or(lambda: est.fit_predict(X), what=f"{name}.fit_predict")
    if labels is None:
        return
    Xq = X[:5] + 0.25 * X.std()
    pred = est.predict(Xq)
    again = clone(est).fit(X)
    assert_same(labels, again.labels_, "refit with the same random_state")
    assert_same(pred, again.predict(Xq), "predict after refit")
    assert_same(pred, pickled(est).predict(Xq), "predict after pickling")
    if "n_jobs" in est.get_params():
        two = clone(est).set_params(n_jobs=2).fit(X)
        assert_same(labels, two.labels_, "n_jobs=2")


@profile()
@given(data=st.data(), recipe=recipes(max_rows=80, max_cols=8))
def test_kernel_spectral_clustering(data, recipe):
    """Affinities built from any data: a Gaussian kernel, perhaps with a NaN or
    a negative entry; labels in range or a clear error."""
    X = recipe.build()
    n = len(X)
    with np.errstate(all="ignore"):
        D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        scale = np.median(D2[D2 > 0]) if (D2 > 0).any() else 1.0
        A = np.exp(-D2 / scale)
    flip = data.draw(st.sampled_from([None, "negative", "asymmetric"]))
    if flip == "negative" and n > 1:
        A[0, 1] = A[1, 0] = -0.5
    elif flip == "asymmetric" and n > 1:
        A[0, 1] += 0.5
    n_clusters = data.draw(st.one_of(st.none(), st.integers(1, 5)))
    est = gf.KernelSpectralClustering(
        n_clusters,
        max_clusters=5,
        n_init=2,
        selection=data.draw(st.sampled_from(["relgap", "eigengap"])),
        random_state=0,
    )
    bad = not np.isfinite(A).all() or (flip is not None and n > 1)
    labels = assert_clear_error_or(lambda: est.fit_predict(A), must_fail=bad, what="kernel")
    if labels is not None:
        check_labels(labels, n, est.n_clusters_)
        if n_clusters is not None:
            assert est.n_clusters_ == n_clusters
        assert_same(clone(est).fit_predict(A), labels, "refit with the same random_state")


def test_lund_labels_duplicates_alike():
    X = np.array([[0.0], [1.0], [0.0], [1.0]])
    est = gf.LUND(n_neighbors=2, t=1.0, n_components=3, random_state=0)
    labels = est.fit_predict(X)
    assert labels[0] == labels[2] and labels[1] == labels[3]
    np.testing.assert_array_equal(est.predict(X), labels)  # as its docstring says
