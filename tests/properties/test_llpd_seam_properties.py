"""LLPD and LLPD spectral clustering on the graph seam (issue 53).

* data far from zero: LLPD's distances and neighbours, and LLPD spectral
  clustering's labels and predictions, are those of ``X`` for ``X + c``
  (``c`` up to 1e6 per column), in the Euclidean geometry and the forest's;
* ``predict(X_train)`` equals ``labels_`` over the forest's graph;
* complex input is refused on every path (fit, kneighbors, predict);
* a label-free K >= 2 on structureless data comes with a warning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

import geoforest as gf
from geoforest.graph import LabelFreeChoiceWarning

from ._strategies import SEAM_SETTINGS, far_shifts, seam_blobs, shifts

EPS = np.finfo(np.float64).eps


def _shifts(metric: str):
    return shifts if metric == "euclidean" else far_shifts


def _tolerance(X: np.ndarray, c: np.ndarray, metric: str) -> float:
    """How far LLPDs of ``X`` and ``X + c`` may differ.

    Euclidean: ``X + c`` holds ``X`` rounded to the spacing of floats near
    ``|X + c|``, so each coordinate moves by up to ``eps |X + c|``: a few such
    units, however small the data's own scale.  Forest: the forest's distances
    are its own, computed from the rounded coordinates; they agree to about
    1e-5 of their range (and, before the geometry read the user's
    coordinates, differed by 1.4e4).  ``c`` is beyond where the forest
    centres its columns (``far_shifts``).
    """
    if metric == "euclidean":
        return 16 * EPS * float(np.max(np.abs(X + c))) * np.sqrt(X.shape[1])
    return 1e-4


FOREST_SHIFT = pytest.param(
    "forest",
    marks=pytest.mark.xfail(
        reason="the forest's own neighbours of X and X + c differ (its trees, geoforest/forest); "
        "LLPD's geometry now reads the forest in the user's coordinates",
        strict=False,
    ),
)


def _llpd(metric: str) -> gf.LLPD:
    if metric == "forest":
        return gf.LLPD(metric="forest", forest=gf.UnsupervisedForest(10, random_state=0))
    return gf.LLPD()


@pytest.mark.parametrize("metric", ["euclidean", FOREST_SHIFT])
@SEAM_SETTINGS
@given(seed=st.integers(0, 2**16), n=st.integers(20, 90), data=st.data())
def test_llpd_is_the_same_for_data_far_from_zero(metric, seed, n, data):
    shift = data.draw(_shifts(metric))
    X = seam_blobs(seed, n, 3)
    c = np.asarray(shift)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the forest's few-trees notes
        a, b = _llpd(metric).fit(X), _llpd(metric).fit(X + c)
    tol = _tolerance(X, c, metric)
    Pa, Pb = a.pairwise(), b.pairwise()
    np.testing.assert_allclose(Pb, Pa, rtol=0, atol=tol)
    # Neighbours: ties may be ordered differently, but each list is a right one.
    da, _ = a.kneighbors(n_neighbors=5)
    db, ib = b.kneighbors(n_neighbors=5)
    np.testing.assert_allclose(db, da, rtol=0, atol=tol)
    np.testing.assert_allclose(np.take_along_axis(Pa, ib, axis=1), db, rtol=0, atol=2 * tol)
    Q = X[:7] + 0.05
    qa, _ = a.kneighbors(Q, n_neighbors=4)
    qb, _ = b.kneighbors(Q + c, n_neighbors=4)
    np.testing.assert_allclose(qb, qa, rtol=0, atol=2 * tol)


@pytest.mark.parametrize("metric", ["euclidean", FOREST_SHIFT])
@SEAM_SETTINGS
@given(seed=st.integers(0, 2**16), data=st.data())
def test_llpd_spectral_clustering_is_the_same_for_data_far_from_zero(metric, seed, data):
    shift = data.draw(_shifts(metric))
    X = seam_blobs(seed, 150, 3)
    c = np.asarray(shift)
    kw = {"forest": gf.UnsupervisedForest(10, random_state=0)} if metric == "forest" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = gf.LLPDSpectralClustering(3, metric=metric, random_state=0, **kw).fit(X)
        b = gf.LLPDSpectralClustering(3, metric=metric, random_state=0, **kw).fit(X + c)
    np.testing.assert_array_equal(b.kept_, a.kept_)
    np.testing.assert_array_equal(b.labels_, a.labels_)
    Q = X[::5] + 0.05
    np.testing.assert_array_equal(b.predict(Q + c), a.predict(Q))


def test_a_fitted_forest_far_from_zero_is_the_llpd_geometry():
    # The example: "grown on other points" before the geometry read
    # the forest through its public methods.
    X = np.random.default_rng(1).normal(size=(120, 2)) + 1e4
    forest = gf.UnsupervisedForest(10, random_state=0).fit(X)
    model = gf.LLPD(metric="forest", forest=forest).fit(X)
    assert model.geometry_.forest_ is forest
    assert np.isfinite(model.pairwise()).all()


@SEAM_SETTINGS
@given(seed=st.integers(0, 2**16), n=st.integers(16, 120))
def test_forest_llpd_sc_predicts_its_training_points_as_fitted(seed, n):
    X = seam_blobs(seed, n, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gf.LLPDSpectralClustering(metric="forest", random_state=0).fit(X)
    np.testing.assert_array_equal(model.predict(X), model.labels_)


# ------------------------------------------------------------------ complex input
def _complex_inputs():
    X = seam_blobs(0, 30, 2)
    D = cdist(X, X)
    return X, D


@pytest.mark.parametrize("cls", [gf.LLPD, gf.LLPDSpectralClustering])
@pytest.mark.parametrize("metric", ["euclidean", "forest", "precomputed"])
def test_complex_input_is_refused_on_every_path(cls, metric):
    X, D = _complex_inputs()
    kw = {"k_nse": 5} if cls is gf.LLPDSpectralClustering else {}
    data = D if metric == "precomputed" else X
    for bad in (data + 0j, sp.csr_matrix(data).astype(np.complex128)):
        if metric != "precomputed" and sp.issparse(bad):
            continue
        with pytest.raises(ValueError, match="Complex data not supported"):
            cls(metric=metric, **kw).fit(bad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = cls(metric=metric, random_state=0, **kw).fit(data)
    rows = data[:3]
    for bad in (rows + 0j, sp.csr_matrix(rows).astype(np.complex128)):
        if metric != "precomputed" and sp.issparse(bad):
            continue
        with pytest.raises(ValueError, match="Complex data not supported"):
            model.kneighbors(bad, n_neighbors=2)
        if cls is gf.LLPDSpectralClustering:
            with pytest.raises(ValueError, match="Complex data not supported"):
                model.predict(bad)


# ------------------------------------------------------------------ label-free K
@pytest.mark.parametrize(
    "X",
    [
        *(np.random.default_rng(s).normal(size=(12, 2)) for s in range(6)),
        *(np.random.default_rng(s).uniform(size=(300, 2)) for s in range(3)),
    ],
)
def test_label_free_k_on_structureless_data_warns(X):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = gf.LLPDSpectralClustering(k_nse=5, random_state=0).fit(X)
    warned = any(issubclass(w.category, LabelFreeChoiceWarning) for w in caught)
    assert model.n_clusters_ == 1 or warned, model.n_clusters_


# ------------------------------------------------------------------ vocabulary
def test_kneighbors_defaults_to_the_estimators_n_neighbors():
    X = seam_blobs(0, 40, 2)
    model = gf.LLPD(n_neighbors=7).fit(X)
    d, i = model.kneighbors()
    assert i.shape == (40, 7)
    np.testing.assert_array_equal(model.kneighbors(n_neighbors=7)[1], i)
    sc = gf.LLPDSpectralClustering(3, n_neighbors=6, random_state=0).fit(X)
    d, i = sc.kneighbors()
    assert i.shape == (40, 6)
    np.testing.assert_array_equal(i, gf.LLPD().fit(X).kneighbors(n_neighbors=6)[1])
    assert sc.kneighbors(X[:2] + 0.01, 3, return_distance=False).shape == (2, 3)
