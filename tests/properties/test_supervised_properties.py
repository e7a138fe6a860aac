"""Property tests of the supervised forests: a clear error or a right answer (issue 44).

Over the four supervised estimators, hypothesis draws awkward training sets —
one row to a few hundred, one to 50 columns, duplicated rows, constant
columns, integer, huge and tiny scales, NaN and inf, values beyond float32,
mostly-zero sample weights, odd ``class_weight`` values and odd label types —
and every fit must end in one of two ways:

* a ``ValueError`` or ``TypeError`` whose message says what is wrong (not an
  ``IndexError``, a ``ZeroDivisionError``, a numba error or a
  ``RuntimeWarning``, which the tests turn into errors), exactly when the
  input is invalid (:func:`_expected`: what scikit-learn refuses, and values
  the float32 engine cannot hold);
* a model whose answers meet the invariants: shapes, finite values,
  probabilities in ``[0, 1]`` summing to 1, regression predictions within
  the targets of the rows with positive weight (a forest's prediction is a
  mean of leaf means), one positive weight giving that row's target, and the
  same answers for ``n_jobs=1`` and ``2`` and after a pickle round trip.

Each test has a fixed budget from a fixed seed (``derandomize``), so every
run tries the same cases; forests are small (a few trees).
"""

from __future__ import annotations

import os
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import geoforest as gf

# Any input may warn (constant columns, K = 1, ...): the contract is about results
# and errors, so warnings pass here (the suite makes them errors elsewhere).
pytestmark = pytest.mark.filterwarnings("ignore")

CLASSIFIERS = [gf.ObliqueForestClassifier, gf.ManifoldForestClassifier]
REGRESSORS = [gf.ObliqueForestRegressor, gf.ManifoldForestRegressor]
F32_MAX = float(np.finfo(np.float32).max)


def _estimators(classes: list) -> list:
    return [pytest.param(c, id=c.__name__) for c in classes]


def _budget(n: int):
    # GEOFOREST_SUPERVISED_PROPERTIES_SCALE=10 runs ten times the examples (a local search).
    scale = int(os.environ.get("GEOFOREST_SUPERVISED_PROPERTIES_SCALE", "1"))
    return settings(
        max_examples=n * scale,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# ------------------------------------------------------------------ strategies
@st.composite
def feature_matrices(draw, max_rows: int = 200, min_rows: int = 1, finite: bool = False):
    """``X`` with duplicates, constant columns, integer / huge / tiny scales and,
    unless ``finite``, NaN, inf or values beyond float32."""
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(1, 50 if n <= 60 else 8))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["normal", "integer", "huge", "tiny", "offset"]))
    X = rng.normal(size=(n, d))
    if kind == "integer":
        X = rng.integers(-3, 4, size=(n, d)).astype(np.float64)
    elif kind == "huge":
        X *= 1e30
    elif kind == "tiny":
        X *= 1e-30
    elif kind == "offset":
        X += 1e8
    if draw(st.booleans()) and n > 1:  # duplicated rows
        X[rng.integers(0, n, size=n // 2)] = X[rng.integers(0, n, size=n // 2)]
    if draw(st.booleans()):  # a constant column
        X[:, rng.integers(0, d)] = 7.0
    bad = "none" if finite else draw(st.sampled_from(["none"] * 15 + ["nan", "inf", "f32"]))
    if bad != "none":
        X[rng.integers(0, n), rng.integers(0, d)] = {"nan": np.nan, "inf": -np.inf, "f32": 1e39}[
            bad
        ]
    return X


@st.composite
def sample_weights(draw, n: int):
    """None, ordinary, mostly zero, one positive, tiny or huge, or invalid weights."""
    good = ["none", "ones", "random", "sparse", "one", "tiny", "huge"]
    kind = draw(st.sampled_from(good * 2 + ["f32", "neg", "nan", "inf", "zeros"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if kind == "none":
        return None
    w = {
        "ones": np.ones(n),
        "random": rng.uniform(0.1, 3.0, size=n),
        "sparse": np.where(rng.random(n) < 0.15, rng.uniform(0.5, 2.0, size=n), 0.0),
        "one": np.zeros(n),
        "tiny": rng.uniform(1.0, 2.0, size=n) * 1e-300,
        "huge": rng.uniform(1.0, 2.0, size=n) * 1e30,
        "f32": np.ones(n),
        "neg": np.ones(n),
        "nan": np.ones(n),
        "inf": np.ones(n),
        "zeros": np.zeros(n),
    }[kind]
    i = int(rng.integers(0, n))
    w[i] = {"one": 1.0, "f32": 1e39, "neg": -1.0, "nan": np.nan, "inf": np.inf}.get(kind, w[i])
    return w


def _weights_error(w) -> bool:
    """Whether scikit-learn (or the float32 engine) must refuse these weights."""
    if w is None:
        return False
    return bool(
        not np.isfinite(w).all() or (w < 0).any() or (np.abs(w) > F32_MAX).any() or w.sum() <= 0
    )


@st.composite
def labels(draw, n: int):
    """Labels of an odd type: ints, negative ints, strings, bools, integral or
    continuous floats; between one and four classes."""
    kind = draw(st.sampled_from(["int", "negint", "str", "bool", "float", "continuous"]))
    k = draw(st.sampled_from([1, 2, 2, 3, 4] if kind != "bool" else [1, 2, 2]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    codes = rng.integers(0, k, size=n)
    if draw(st.booleans()) and n >= k:  # every class present
        codes[:k] = np.arange(k)
    values = {
        "int": np.arange(k) * 3,
        "negint": -np.arange(k) - 5,
        "str": np.array(["cat", "dog", "emu", "yak"][:k]),
        "bool": np.array([False, True][:k]),
        "float": np.arange(k) + 1.0,
        "continuous": np.arange(k) + 0.5,
    }[kind]
    return values[codes], kind


def class_weight_values():
    return st.sampled_from([1.0, 0.5, 3.0, 0.0] * 3 + [-1.0, np.nan, np.inf, 1e39])


@st.composite
def class_weights(draw, classes):
    """None, "balanced" or a dict with odd values, missing classes and extra keys."""
    kind = draw(st.sampled_from(["none", "balanced", "dict", "dict"]))
    if kind == "none":
        return None
    if kind == "balanced":
        return "balanced"
    cw = {}
    for c in classes:
        if draw(st.booleans()) or len(classes) == 1:
            cw[c.item() if hasattr(c, "item") else c] = draw(class_weight_values())
    if draw(st.booleans()):  # a label y does not hold
        cw["absent" if isinstance(classes[0], str) else 99] = draw(class_weight_values())
    return cw


# ------------------------------------------------------------------ helpers
def _make(cls, **params):
    params.setdefault("n_estimators", 4)
    params.setdefault("random_state", 0)
    return cls(**params)


def _run(call):
    """``call()``'s result, or the ``ValueError`` / ``TypeError`` it raised.

    Any other exception fails the test, and so does a ``RuntimeWarning`` (made
    an error here): the silent overflows and divisions by zero the audit found.
    The message must say something, and not come from numba.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            return call(), None
        except (ValueError, TypeError) as err:
            assert str(err).strip(), f"{type(err).__name__} without a message"
            assert "numba" not in type(err).__module__, f"numba error: {err}"
            return None, err


def _check_outcome(fitted, err, expect_error: bool | None, why: str):
    """``expect_error``: True (must raise), False (must fit), None (either)."""
    event("fitted" if err is None else f"refused: {type(err).__name__}")
    if expect_error is True:
        assert err is not None, f"accepted silently: {why}"
    elif expect_error is False:
        assert err is None, f"refused valid input ({why}): {err}"


def _check_classifier(clf, X, y, w):
    P, _ = _run(lambda: clf.predict_proba(X))
    assert P is not None
    assert P.shape == (X.shape[0], clf.classes_.shape[0])
    assert np.isfinite(P).all()
    assert (P >= -1e-12).all() and (P <= 1 + 1e-12).all(), P[(P < 0) | (P > 1)][:5]
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-9)
    pred = clf.predict(X)
    assert pred.shape == (X.shape[0],)
    assert np.isin(pred, clf.classes_).all()
    if w is not None and np.count_nonzero(w) == 1:  # every leaf holds that one row
        only = y[np.flatnonzero(w)[0]]
        assert (pred == only).all(), f"one positive weight (label {only!r}): predicted {pred[:5]}"
        at = np.flatnonzero(clf.classes_ == only)[0]
        np.testing.assert_allclose(P[:, at], 1.0, err_msg="one positive weight: its class")
    if hasattr(clf, "oob_decision_function_"):
        assert np.isfinite(clf.oob_decision_function_).all()
        assert np.isfinite(clf.oob_score_)


def _check_regressor(reg, X, y, w):
    pred, _ = _run(lambda: reg.predict(X))
    assert pred is not None
    assert pred.shape == (X.shape[0],), f"y of shape {np.shape(y)} predicts shape {pred.shape}"
    assert np.isfinite(pred).all()
    y1 = np.asarray(y, dtype=np.float64).reshape(-1)
    held = y1 if w is None else y1[w > 0]
    lo, hi = held.min(), held.max()
    slack = 1e-9 * max(abs(lo), abs(hi), 1e-300)
    assert (pred >= lo - slack).all() and (pred <= hi + slack).all(), (
        f"predictions {pred.min()}..{pred.max()} outside the positive-weight targets {lo}..{hi}"
    )
    if w is not None and np.count_nonzero(w) == 1:
        np.testing.assert_allclose(pred, held[0], rtol=1e-9, err_msg="one positive weight")
    if hasattr(reg, "oob_prediction_"):
        assert np.isfinite(reg.oob_prediction_).all()
        assert np.isfinite(reg.oob_score_)


def _check_bad_queries(est, X, method: str) -> None:
    """A query row with NaN, inf or a value beyond float32 is refused in words."""
    for bad in (np.nan, np.inf, 1e39):
        Xq = np.zeros((2, X.shape[1]))
        Xq[1, -1] = bad
        _, err = _run(lambda Xq=Xq: getattr(est, method)(Xq))
        assert isinstance(err, ValueError), f"{method} of a row holding {bad}: {err!r}"


def _forest_params(draw, cls, n: int, d: int) -> dict:
    params = {"n_estimators": draw(st.integers(1, 6))}
    if draw(st.booleans()):
        params["bootstrap"] = draw(st.booleans())
    if params.get("bootstrap", True) and draw(st.booleans()):
        params["oob_score"] = True
    if draw(st.booleans()) and n >= 4:
        params["max_samples"] = draw(st.sampled_from([0.5, 0.9]))
    if draw(st.booleans()):
        params["max_depth"] = draw(st.integers(1, 4))
    if cls in (gf.ObliqueForestClassifier, gf.ObliqueForestRegressor) and draw(st.booleans()):
        params["projection"] = "axis"
    if params.get("oob_score") and not params.get("bootstrap", True):
        params["oob_score"] = False
    return params


# ------------------------------------------------------------------ class weights
@pytest.mark.parametrize("cls", _estimators(CLASSIFIERS))
@_budget(60)
@given(data=st.data())
def test_class_weight_values(cls, data):
    """Negative, zero, NaN, inf or huge class weights are refused; valid ones give
    probabilities (scikit-learn refuses negative and all-zero weights)."""
    n = data.draw(st.integers(6, 60), label="n")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    X = rng.normal(size=(n, 4))
    y = np.array(["a", "b", "c"])[np.arange(n) % 3]
    cw = data.draw(class_weights(np.unique(y)), label="class_weight")
    clf = _make(cls, class_weight=cw)
    fitted, err = _run(lambda: clf.fit(X, y))
    bad = isinstance(cw, dict) and any(
        not np.isfinite(v) or v < 0 or v > F32_MAX for v in cw.values()
    )
    all_zero = isinstance(cw, dict) and sum(cw.get(c, 1.0) for c in "abc") == 0
    extra = isinstance(cw, dict) and bool(set(cw) - {"a", "b", "c"})
    expect = True if bad or all_zero else (None if extra else False)  # scikit-learn's call
    _check_outcome(fitted, err, expect, f"class_weight={cw}")
    if fitted is not None:
        _check_classifier(fitted, X, y, None)


# ------------------------------------------------------------------ sparse weights
@pytest.mark.parametrize("cls", _estimators(CLASSIFIERS + REGRESSORS))
@_budget(60)
@given(data=st.data())
def test_mostly_zero_weights(cls, data):
    """Rows of zero weight take no part: predictions stay within the targets of the
    weighted rows, and one positive weight predicts that row's target everywhere
    (a tree whose sample holds no weighted row must not vote 0)."""
    n = data.draw(st.integers(2, 120), label="n")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    X = rng.normal(size=(n, 3))
    k = data.draw(st.integers(1, max(1, n // 5)), label="n_weighted")
    w = np.zeros(n)
    w[rng.choice(n, size=k, replace=False)] = rng.uniform(0.5, 2.0, size=k)
    regression = cls in REGRESSORS
    y = rng.normal(size=n) if regression else np.arange(n) % 2
    params = {"n_estimators": data.draw(st.integers(1, 8), label="n_estimators")}
    params["oob_score"] = data.draw(st.booleans(), label="oob_score")
    est = _make(cls, **params)
    fitted, err = _run(lambda: est.fit(X, y, sample_weight=w))
    _check_outcome(fitted, err, False, "mostly-zero weights")
    Xq = np.vstack([X, rng.normal(size=(20, 3))])
    if regression:
        _check_regressor(fitted, Xq, y, w)
    else:
        _check_classifier(fitted, Xq, y, w)


# ------------------------------------------------------------------ float32 range
@pytest.mark.parametrize("cls", _estimators(CLASSIFIERS + REGRESSORS))
@_budget(40)
@given(data=st.data())
def test_values_beyond_float32(cls, data):
    """Targets or weights beyond float32 (the engine's leaf statistics square them)
    are refused in words, not fitted into one-leaf stumps with a cast warning;
    large values within range are fitted."""
    n = data.draw(st.integers(4, 60), label="n")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    X = rng.normal(size=(n, 3))
    regression = cls in REGRESSORS
    y = rng.normal(size=n) if regression else np.arange(n) % 2
    w = None
    where = data.draw(st.sampled_from(["y", "w"] if regression else ["w"]), label="where")
    scale = data.draw(st.sampled_from([1e30, 1e38, 1e39, 1e170, 1e200, 1e300]), label="scale")
    if where == "y":
        y = y * scale
    else:
        w = rng.uniform(0.5, 2.0, size=n) * scale
    est = _make(cls)
    fitted, err = _run(lambda: est.fit(X, y, sample_weight=w))
    beyond = np.abs(y).max() > F32_MAX or (w is not None and w.max() > F32_MAX)
    _check_outcome(fitted, err, bool(beyond), f"{where} scaled by {scale:g}")
    if fitted is not None:
        (_check_regressor if regression else _check_classifier)(fitted, X, y, w)


# ------------------------------------------------------------------ weight scale
@pytest.mark.parametrize("cls", _estimators(CLASSIFIERS + REGRESSORS))
@_budget(30)
@given(data=st.data())
def test_weight_scale_does_not_matter(cls, data):
    """Tiny weights (times 2**-100 to 2**-1000) grow the forest of the weights
    themselves: every leaf statistic is a ratio of weighted sums, and squared
    sums of tiny weights must not underflow to leaf means or gains of 0."""
    n = data.draw(st.integers(4, 80), label="n")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    X = rng.normal(size=(n, 3))
    regression = cls in REGRESSORS
    y_scale = data.draw(st.sampled_from([1.0, 1e-10, 1e-30]), label="y_scale")
    y = rng.uniform(1.0, 2.0, size=n) * y_scale if regression else np.arange(n) % 2
    w = rng.uniform(0.5, 1.9, size=n)
    w[0] = 1.95  # the largest in [1, 2): where tiny weights are scaled back to
    k = data.draw(st.sampled_from([-1000, -300, -100]), label="k")
    answer = "predict" if regression else "predict_proba"
    a = getattr(_make(cls).fit(X, y, sample_weight=w), answer)(X)
    fitted, err = _run(lambda: _make(cls).fit(X, y, sample_weight=np.ldexp(w, k)))
    _check_outcome(fitted, err, False, f"weights times 2**{k}")
    np.testing.assert_array_equal(getattr(fitted, answer)(X), a)


# ------------------------------------------------------------------ y as a column
@pytest.mark.parametrize("cls", _estimators(REGRESSORS))
@_budget(10)
@given(data=st.data())
def test_column_vector_y(cls, data):
    """y of shape (n, 1) is flattened with scikit-learn's DataConversionWarning:
    ``predict`` (and ``oob_prediction_``) have shape (n,), as scikit-learn's."""
    from sklearn.exceptions import DataConversionWarning

    n = data.draw(st.integers(4, 80), label="n")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    X = rng.normal(size=(n, 3))
    y = rng.normal(size=(n, 1))
    est = _make(cls, oob_score=True, n_estimators=6)
    with pytest.warns(DataConversionWarning):
        est.fit(X, y)
    _check_regressor(est, X, y, None)
    assert est.oob_prediction_.shape == (n,)


# ------------------------------------------------------------------ everything at once
@st.composite
def classification_cases(draw, cls):
    X = draw(feature_matrices())
    n, d = X.shape
    y, label_kind = draw(labels(n))
    w = draw(sample_weights(n))
    cw = draw(class_weights(np.unique(y)))
    params = _forest_params(draw, cls, n, d)
    return X, y, label_kind, w, cw, params


def _classification_expectation(X, y, label_kind, w, cw) -> tuple[bool | None, str]:
    if X.shape[0] < 2 or not np.isfinite(X).all() or (np.abs(X) > F32_MAX).any():
        return True, "fewer than 2 rows, or X not finite in float32"
    if label_kind == "continuous" or np.unique(y).size < 2:
        return True, "continuous labels or a single class"
    if _weights_error(w):
        return True, "invalid sample_weight"
    eff = np.ones(len(y)) if w is None else w.copy()
    if isinstance(cw, dict):
        if any(not np.isfinite(v) or v < 0 or v > F32_MAX for v in cw.values()):
            return True, f"invalid class_weight {cw}"
        eff = eff * np.array([cw.get(v.item() if hasattr(v, "item") else v, 1.0) for v in y])
        if eff.sum() <= 0:
            return True, "class weights leave no weight"
        if set(cw) - set(np.unique(y).tolist()):
            return None, "class_weight names a label y does not hold (scikit-learn may refuse)"
    return False, "valid input"


@pytest.mark.parametrize("cls", _estimators(CLASSIFIERS))
@_budget(150)
@given(data=st.data())
def test_classifier_contract(cls, data):
    """Any training set: a clear error when it is invalid, else probabilities."""
    X, y, label_kind, w, cw, params = data.draw(classification_cases(cls), label="case")
    clf = _make(cls, class_weight=cw, **params)
    fitted, err = _run(lambda: clf.fit(X, y, sample_weight=w))
    expect, why = _classification_expectation(X, y, label_kind, w, cw)
    _check_outcome(fitted, err, expect, why)
    if fitted is not None:
        Xq = X[np.isfinite(X).all(axis=1)]
        _check_classifier(fitted, Xq, y, w if cw is None else None)
        _check_bad_queries(fitted, X, "predict_proba")


@st.composite
def regression_cases(draw, cls):
    X = draw(feature_matrices())
    n, d = X.shape
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    kind = draw(
        st.sampled_from(["normal", "integer", "huge", "tiny", "nan", "f32", "constant", "object"])
    )
    y = {
        "normal": rng.normal(size=n),
        "integer": rng.integers(-5, 5, size=n).astype(np.float64),
        "huge": rng.normal(size=n) * 1e30,
        "tiny": rng.normal(size=n) * 1e-30,
        "nan": np.where(np.arange(n) == 0, np.nan, 1.0),
        "f32": np.where(np.arange(n) == 0, 1e39, 1.0),
        "constant": np.full(n, 2.5),
        "object": np.array([None] + [1.5] * (n - 1), dtype=object),  # None: a missing target
    }[kind]
    if draw(st.booleans()):
        y = y[:, None]
    w = draw(sample_weights(n))
    return X, y, w, _forest_params(draw, cls, n, d)


@pytest.mark.parametrize("cls", _estimators(REGRESSORS))
@_budget(150)
@given(data=st.data())
def test_regressor_contract(cls, data):
    """Any training set: a clear error when it is invalid, else predictions within
    the weighted rows' targets."""
    X, y, w, params = data.draw(regression_cases(cls), label="case")
    reg = _make(cls, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # DataConversionWarning, constant X
        fitted, err = _run(lambda: reg.fit(X, y, sample_weight=w))
    bad_x = X.shape[0] < 2 or not np.isfinite(X).all() or (np.abs(X) > F32_MAX).any()
    y64 = np.asarray(y, dtype=np.float64)  # None -> NaN
    bad_y = not np.isfinite(y64).all() or (np.abs(y64) > F32_MAX).any()
    expect = bad_x or bad_y or _weights_error(w)
    _check_outcome(fitted, err, expect, "X, y or sample_weight invalid" if expect else "valid")
    if fitted is not None:
        _check_regressor(fitted, X, y, w)
        _check_bad_queries(fitted, X, "predict")


# ------------------------------------------------------------------ determinism
@pytest.mark.parametrize("cls", _estimators(CLASSIFIERS + REGRESSORS))
@_budget(15)
@given(data=st.data())
def test_same_answers_for_n_jobs_and_pickle(cls, data):
    """n_jobs=1 and 2 grow the same forest; a pickled forest answers the same."""
    X = data.draw(feature_matrices(max_rows=120, min_rows=4, finite=True), label="X")
    n = X.shape[0]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    y = rng.normal(size=n) if cls in REGRESSORS else np.arange(n) % 3
    w = data.draw(st.sampled_from([None, "sparse"]), label="w")
    if w == "sparse":
        w = np.where(rng.random(n) < 0.3, 1.0, 0.0)
        w[0] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        one = _make(cls, n_jobs=1, oob_score=True).fit(X, y, sample_weight=w)
        two = _make(cls, n_jobs=2, oob_score=True).fit(X, y, sample_weight=w)
        back = pickle.loads(pickle.dumps(one))
        answer = "predict" if cls in REGRESSORS else "predict_proba"
        a, b, c = (getattr(f, answer)(X) for f in (one, two, back))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    oob = "oob_prediction_" if cls in REGRESSORS else "oob_decision_function_"
    np.testing.assert_array_equal(getattr(one, oob), getattr(two, oob))
    assert np.isfinite(getattr(one, oob)).all()
