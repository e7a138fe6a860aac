"""The contract every public estimator keeps for any input (issue 44).

Each case ends in one of two ways:

* a **clear error**: a ``ValueError`` or ``TypeError`` raised by geoforest's
  own checks or scikit-learn's input validation, with a message; an
  ``IndexError``, ``ZeroDivisionError``, ``KeyError``, a numba error or a
  ``ValueError`` from deep inside NumPy / SciPy is a bug, however it reads;
* a **result meeting the estimator's invariants**, checked by the
  ``check_*`` helpers here: shapes, finite values, labels in range, sorted
  neighbour lists without duplicates or self-matches, proximities symmetric
  in ``[0, 1]``, the same result for the same ``random_state``, for
  ``n_jobs=1`` and ``2`` and after a pickle round-trip.

:func:`assert_clear_error_or` runs a case and returns its result or ``None``
when it was refused clearly; ``must_fail`` says the input is one that no
result can be right for (a NaN, an inf, a value float32 cannot hold).
"""

from __future__ import annotations

import os
import pickle
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from hypothesis import currently_in_test_context, event

CLEAR_ERRORS = (ValueError, TypeError)

# Where a clear error may be raised: geoforest's own checks and scikit-learn's
# parameter and input validation.  A ValueError raised anywhere else (NumPy's
# broadcasting, SciPy's ARPACK, joblib) reached the user unchecked.
_CHECKERS = (
    os.sep + "geoforest" + os.sep,
    os.path.join("sklearn", "utils", "validation.py"),
    os.path.join("sklearn", "utils", "_param_validation.py"),
    os.path.join("sklearn", "utils", "multiclass.py"),
    os.path.join("sklearn", "utils", "_array_api.py"),
    os.path.join("sklearn", "base.py"),
)


def _event(text: str) -> None:
    """Count an outcome in ``--hypothesis-show-statistics`` (inside a hypothesis test)."""
    if currently_in_test_context():
        event(text)


def _raised_at(exc: BaseException) -> str:
    """The file of the innermost frame that raised ``exc``."""
    frames = traceback.extract_tb(exc.__traceback__)
    return frames[-1].filename if frames else ""


def assert_clear_error_or(
    case: Callable[[], Any],
    *,
    must_fail: bool = False,
    what: str = "case",
    names: tuple[str, ...] = (),
) -> Any | None:
    """Run ``case()``: its result, or ``None`` after a clear error.

    Parameters
    ----------
    case : callable
        The estimator call(s) under test.
    must_fail : bool, default=False
        The input admits no right result (non-finite data): a clear error is
        required, a result is a silent failure.
    what : str
        Named in the assertion messages.
    names : tuple of str
        An error message must name one of these (the arguments at fault).

    Returns
    -------
    result : object or None
        ``None`` when ``case`` raised a clear error.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = case()
    except CLEAR_ERRORS as exc:
        where = _raised_at(exc)
        assert str(exc).strip(), f"{what}: {type(exc).__name__} without a message"
        assert any(part in where for part in _CHECKERS), (
            f"{what}: {type(exc).__name__}({exc}) raised in {where}, not by an input check"
        )
        assert not names or any(nm in str(exc) for nm in names), (
            f"{what}: the message does not name {' or '.join(names)}: {exc}"
        )
        _event(f"{what}: refused ({str(exc)[:40]})")
        return None
    assert not must_fail, f"{what}: returned a result for non-finite input instead of an error"
    _event(f"{what}: result")
    return result


def dense(a) -> np.ndarray:
    """``a`` as a dense float64 ndarray (sparse matrices and arrays alike)."""
    return np.asarray(a.toarray() if sp.issparse(a) else a, dtype=np.float64)


def check_finite(a, what: str, shape: tuple | None = None) -> None:
    """Finite values (and ``shape``, if given)."""
    arr = a.data if sp.issparse(a) else np.asarray(a)
    if shape is not None:
        assert a.shape == shape, f"{what}: shape {a.shape}, expected {shape}"
    if arr.dtype.kind in "fc":
        assert np.isfinite(arr).all(), f"{what}: non-finite values"


def check_kneighbors(dist, ind, n_queries: int, k: int, n_train: int, training: bool) -> None:
    """Neighbour lists: shapes, finite ascending distances, distinct indices in
    range, and (``training``: the query is training point ``i``) no self-match."""
    assert dist.shape == ind.shape == (n_queries, k), (dist.shape, ind.shape, (n_queries, k))
    assert np.isfinite(dist).all(), "kneighbors: non-finite distances"
    assert (dist >= 0).all(), "kneighbors: negative distances"
    assert (np.diff(dist, axis=1) >= 0).all(), "kneighbors: distances not ascending in a row"
    assert ((ind >= 0) & (ind < n_train)).all(), "kneighbors: indices out of range"
    srt = np.sort(ind, axis=1)
    assert (np.diff(srt, axis=1) != 0).all(), "kneighbors: an index twice in a row"
    if training:
        own = np.arange(n_queries)[:, None]
        assert not (ind == own).any(), "kneighbors(X=None): a point is its own neighbour"


def check_proximity(S, shape: tuple, symmetric: bool) -> None:
    """Proximities: shape, values in ``[0, 1]``, symmetric for ``X = Y``."""
    D = dense(S)
    assert D.shape == shape, f"proximity: shape {D.shape}, expected {shape}"
    assert np.isfinite(D).all() and (D >= 0).all() and (D <= 1 + 1e-12).all(), (
        "proximity: values outside [0, 1]"
    )
    if symmetric:
        np.testing.assert_allclose(D, D.T, atol=1e-12, err_msg="proximity not symmetric")


def check_labels(labels, n: int, n_clusters: int | None = None, noise: bool = False) -> None:
    """Cluster labels: one per point, integers ``0..K-1`` (``-1`` too if ``noise``),
    exactly ``n_clusters`` distinct ones when it was given and feasible."""
    labels = np.asarray(labels)
    assert labels.shape == (n,), f"labels: shape {labels.shape}, expected {(n,)}"
    assert labels.dtype.kind in "iu", f"labels: dtype {labels.dtype}"
    low = -1 if noise else 0
    assert (labels >= low).all(), "labels: below range"
    found = labels[labels >= 0]
    if n_clusters is not None:
        assert (found < n_clusters).all(), f"labels: {found.max()} >= n_clusters={n_clusters}"


def assert_same(a, b, what: str) -> None:
    """Equal results (arrays, sparse matrices, tuples of them, or scalars)."""
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), what
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{what}[{i}]")
        return
    if sp.issparse(a) or sp.issparse(b):
        assert sp.issparse(a) and sp.issparse(b), f"{what}: sparse vs dense"
        assert a.shape == b.shape, f"{what}: shapes {a.shape} vs {b.shape}"
        diff = abs(a - b)
        assert diff.nnz == 0 or diff.max() == 0, f"{what}: values differ"
        return
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=what)


def pickled(estimator):
    """A pickle round-trip of ``estimator``."""
    return pickle.loads(pickle.dumps(estimator))
