"""Reliability: every public estimator against a matrix of bad inputs.

The estimators are discovered from ``geoforest.__all__`` (every exported
scikit-learn estimator class), so a new one joins the matrix without an edit
here; :data:`SMALL` only makes some of them cheap or well-posed on 30 points.
How an estimator is fed follows from what it declares: an affinity matrix
when its ``input_tags.pairwise`` tag is set, labels ``y`` when it is a
classifier or a regressor, and the query methods checked are those whose first argument is
``X``.

Every cell asserts one of two things:

* a clear ``ValueError``/``TypeError`` (:func:`assert_clear`): the first line
  of the message says what is wrong with the input (a pattern per input),
  in under 400 characters; the whole message is under 1,000 (no array
  dumped into it; scikit-learn's NaN message, one line plus advice and links,
  is about 650); it holds no numpy/numba internals ("index", "cannot
  reshape", "assertion", ...; scikit-learn's "Reshape your data" advice is
  not one); and it names no other geoforest estimator than the one called;
* or a documented result: a list of lists, or an object array of numbers,
  gives the same result as the float array.

Cells that fail for a reason outside ``cluster/``, ``llpd/`` (bar
``LLPD.fit``/``pairwise``) and ``diffusion/`` are strict xfails
(:data:`KNOWN_FAILURES`): remove the entry once fixed.
"""

from __future__ import annotations

import inspect
import re
from functools import cache

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, is_classifier, is_regressor

import geoforest as gf

# ------------------------------------------------------------------ estimators
ESTIMATORS = sorted(
    name
    for name in gf.__all__
    if isinstance(getattr(gf, name), type) and issubclass(getattr(gf, name), BaseEstimator)
)

#: Parameters that keep a fit on 30 points fast and well-posed (anything else: defaults,
#: with ``n_estimators=5`` and ``random_state=0`` where the estimator has them).
SMALL = {
    # The default path (the forest's kNN graph); rpfCluster's kernel is checked in
    # tests/cluster/test_rpf_cluster.py and by scikit-learn's checks.
    "ForestSpectralClustering": lambda: {
        "n_clusters": 2,
        "forest": gf.UnsupervisedForest(n_estimators=5),
        "n_neighbors": 5,
    },
    "KernelSpectralClustering": lambda: {"n_clusters": 2},
    "LLPDSpectralClustering": lambda: {"n_clusters": 2},
    "DiffusionMap": lambda: {"n_neighbors": 5, "n_components": 3},
    "LUND": lambda: {"n_neighbors": 5, "n_components": 3, "n_clusters": 2, "t": 8.0},
}

#: Query methods checked after a good fit, when the estimator has them with ``X`` first.
QUERY_METHODS = (
    "predict",
    "predict_proba",
    "predict_log_proba",
    "decision_function",
    "transform",
    "apply",
    "kneighbors",
    "kneighbors_graph",
    "proximity",
    "score_samples",
)


def make(name: str) -> BaseEstimator:
    cls = getattr(gf, name)
    defaults = cls().get_params(deep=False)
    params = {k: v for k, v in (("n_estimators", 5), ("random_state", 0)) if k in defaults}
    params.update(SMALL.get(name, dict)())
    return cls(**params)


def takes_affinity(name: str) -> bool:
    return bool(make(name).__sklearn_tags__().input_tags.pairwise)


def query_methods(name: str) -> list[str]:
    cls = getattr(gf, name)
    out = []
    for method in QUERY_METHODS:
        f = getattr(cls, method, None)
        if callable(f) and list(inspect.signature(f).parameters)[1:2] == ["X"]:
            out.append(method)
    return out


# ------------------------------------------------------------------------ data
_rng = np.random.default_rng(0)
X = np.r_[_rng.normal(0.0, 0.3, (15, 3)), _rng.normal(3.0, 0.3, (15, 3))]
Y = np.repeat([0, 1], 15)
A = np.exp(-np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1))  # symmetric affinity


def _with(Z, value):
    Z = Z.copy()
    Z[0, 1] = Z[1, 0] = value  # symmetric, so an affinity fails on the value, not on symmetry
    return Z


#: input id -> (bad X from the good one, pattern the message's first line must match)
BAD_INPUTS = {
    "nan": (lambda Z: _with(Z, np.nan), r"nan"),
    "inf": (lambda Z: _with(Z, np.inf), r"inf"),
    "empty-rows": (
        lambda Z: Z[:0, :0] if Z.shape[0] == Z.shape[1] else Z[:0],
        r"0 sample|n_samples ?= ?0",
    ),
    "no-columns": (lambda Z: Z[:, :0], r"0 feature|n_features ?= ?0"),
    "one-sample": (
        lambda Z: Z[:1, :1] if Z.shape[0] == Z.shape[1] else Z[:1],
        r"1 sample|n_samples ?= ?1|at least 2 samples",
    ),
    "1-d": (lambda Z: Z[0], r"2D array|2-d"),
    "3-d": (lambda Z: Z[:, :, None], r"dim 3|2D array|2-d"),
    "strings": (lambda Z: np.full(Z.shape, "a", dtype=object), r"string|could not convert"),
    "complex": (lambda Z: Z + 1j, r"complex"),
}

#: valid inputs of another container or dtype: same result as the float array
EQUIVALENT_INPUTS = {
    "list-of-lists": lambda Z: Z.tolist(),
    "object-dtype-numbers": lambda Z: Z.astype(object),
}

#: inputs checked at query time, after a good fit
QUERY_INPUTS = {
    "wrong-n-features": (lambda Z: Z[:, :2], r"2 features.*expecting 3"),
    **{k: BAD_INPUTS[k] for k in ("nan", "inf", "empty-rows", "1-d", "3-d", "strings", "complex")},
}

#: No geoforest or numpy/numba internals in a message meant for the user.
INTERNALS = (
    "index",
    "cannot reshape",
    "assertion",
    "out of bounds",
    "numba",
    "nopython",
    "broadcast",
    "setting an array element",
    "not subscriptable",
    "has no attribute",
    "unsupported operand",
    "negative dimensions",
    "larger sample than population",
    "has no meaning",
    "invalid value encountered",
)


def assert_clear(error: BaseException, name: str, pattern: str) -> None:
    """The error is one a user can act on (see the module docstring)."""
    assert isinstance(error, (ValueError, TypeError)), repr(error)
    message = str(error)
    headline = message.splitlines()[0] if message else ""
    assert 0 < len(headline.strip()) < 400, f"headline of {len(headline)} characters"
    assert len(message) < 1000, f"{len(message)} characters: {message[:300]}..."
    assert re.search(pattern, headline, flags=re.IGNORECASE), (pattern, headline)
    lowered = message.lower()
    leaked = [word for word in INTERNALS if word in lowered]
    assert not leaked, (leaked, message)
    others = [o for o in ESTIMATORS if o != name and re.search(rf"\b{o}\b", message)]
    assert not others, f"{name}'s error names {others}: {message}"


#: Cells that fail today for a reason the matrix cannot fix, by test id
#: ("Estimator-input" or "Estimator-method-input") -> the reason; each is a strict
#: xfail, so a fix makes it fail until its entry is removed.  (The last entries, the
#: forests' complex input and n_jobs=0, were fixed in forest/_base.py.)
KNOWN_FAILURES: dict[str, str] = {}


def _cells(names, cells):
    for name in names:
        for cell in cells(name):
            values = (name, *cell) if isinstance(cell, tuple) else (name, cell)
            key = "-".join(str(v) for v in values[1:])
            reason = KNOWN_FAILURES.get(f"{name}-{key}")
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(*values, id=f"{name}-{key}", marks=marks)


# ----------------------------------------------------------------------- tests
def _fit(est, data, y=None):
    return est.fit(data, y) if is_classifier(est) or is_regressor(est) else est.fit(data)


def _good(name: str) -> np.ndarray:
    return A if takes_affinity(name) else X


@cache
def _fitted(name: str) -> BaseEstimator:
    return _fit(make(name), _good(name), Y)


def test_every_exported_estimator_is_in_the_matrix():
    expected = {
        "UnsupervisedForest", "RandomProjectionForest", "ObliqueForestClassifier",
        "ManifoldForestClassifier", "ForestSpectralClustering", "KernelSpectralClustering",
        "LLPD", "LLPDSpectralClustering", "DiffusionMap", "LUND",
    }  # fmt: skip
    assert expected <= set(ESTIMATORS)
    assert "ProximityCounts" not in ESTIMATORS  # a result class, not an estimator
    assert set(SMALL) <= set(ESTIMATORS)


@pytest.mark.parametrize("name, bad", list(_cells(ESTIMATORS, lambda n: list(BAD_INPUTS))))
def test_fit_refuses_bad_input_clearly(name, bad):
    make_bad, pattern = BAD_INPUTS[bad]
    data = make_bad(_good(name))
    y = Y[: len(data)] if np.ndim(data) >= 1 else Y
    with pytest.raises((ValueError, TypeError)) as info:
        _fit(make(name), data, y)
    assert_clear(info.value, name, pattern)


def _fingerprint(est, data):
    """What a fit produced, to compare two fits of the same data."""
    for attr in ("labels_", "eigenvalues_", "mst_weights_"):
        if hasattr(est, attr):
            return getattr(est, attr)
    if hasattr(est, "apply"):
        return est.apply(data)
    out = est.transform(data)
    return out.toarray() if hasattr(out, "toarray") else out


@pytest.mark.parametrize("name, kind", list(_cells(ESTIMATORS, lambda n: list(EQUIVALENT_INPUTS))))
def test_fit_accepts_equivalent_input(name, kind):
    data = _good(name)
    est = _fit(make(name), EQUIVALENT_INPUTS[kind](data), Y)
    np.testing.assert_array_equal(_fingerprint(est, data), _fingerprint(_fitted(name), data))


def _has_n_jobs(name: str) -> bool:
    return "n_jobs" in make(name).get_params(deep=False)


@pytest.mark.parametrize(
    "name, cell", list(_cells([n for n in ESTIMATORS if _has_n_jobs(n)], lambda n: ["n_jobs=0"]))
)
def test_n_jobs_zero_refused_at_validation(name, cell):
    est = make(name).set_params(n_jobs=0)
    with pytest.raises((ValueError, TypeError)) as info:
        _fit(est, _good(name), Y)
    assert_clear(info.value, name, r"'n_jobs' parameter .* must be")


def _query_cells(name):
    return [(method, bad) for method in query_methods(name) for bad in QUERY_INPUTS]


@pytest.mark.parametrize("name, method, bad", list(_cells(ESTIMATORS, _query_cells)))
def test_query_refuses_bad_input_clearly(name, method, bad):
    make_bad, pattern = QUERY_INPUTS[bad]
    est = _fitted(name)
    with pytest.raises((ValueError, TypeError)) as info:
        getattr(est, method)(make_bad(_good(name)))
    assert_clear(info.value, name, pattern)


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for u, v in zip(a, b, strict=True):
            _same(u, v)
    elif sp.issparse(a):
        assert sp.issparse(b) and a.shape == b.shape and (a != b).nnz == 0
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "name, method",
    list(_cells(ESTIMATORS, lambda n: query_methods(n))),
)
def test_query_accepts_a_list_of_lists(name, method):
    est = _fitted(name)
    data = _good(name)[:7]
    _same(getattr(est, method)(data.tolist()), getattr(est, method)(data))
