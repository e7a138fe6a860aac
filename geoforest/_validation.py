"""Validation shared by geoforest's estimators: parameter constraints and input checks.

* :data:`N_JOBS`, the ``_parameter_constraints`` entry of every ``n_jobs``:
  ``None`` or a non-zero integer.  joblib gives ``n_jobs=0`` no meaning and
  fails deep inside a fit ("n_jobs == 0 in Parallel has no meaning"); the
  constraint refuses it when the parameters are validated, with
  scikit-learn's message naming the parameter and the allowed values.
* :func:`validate_data`, scikit-learn's ``validate_data`` with a short
  message for complex input (scikit-learn's prints the whole array: 17,000
  characters for a 30 x 30 affinity).
* :func:`check_not_complex`, that check alone, for estimators that hand
  ``X`` on to another estimator before validating it.
* :func:`with_seed_and_threads`, how an estimator that grows a forest inside
  passes its ``random_state`` and ``n_jobs`` on.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import validate_data as _sklearn_validate_data

__all__ = [
    "N_JOBS",
    "check_not_complex",
    "check_not_dask",
    "is_dask_array",
    "validate_data",
    "with_seed_and_threads",
]

#: ``n_jobs`` constraint: ``None`` (joblib's default, one job unless a
#: ``parallel_config`` says otherwise), a positive number of jobs, or a
#: negative one (``-1``: all cores, ``-2``: all but one, ...); never 0.
#: Use it as ``"n_jobs": N_JOBS`` in ``_parameter_constraints`` (a list, as
#: scikit-learn expects; copy it with ``list(N_JOBS)`` before changing it).
N_JOBS: list = [
    Interval(numbers.Integral, None, -1, closed="right"),
    Interval(numbers.Integral, 1, None, closed="left"),
    None,
]


def _dtype_of(X) -> np.dtype | None:
    """The dtype ``X`` would convert to, without converting arrays (None when unknown)."""
    dtype = getattr(X, "dtype", None)
    if isinstance(dtype, np.dtype):
        return dtype
    dtypes = getattr(X, "dtypes", None)  # a pandas DataFrame
    if dtypes is not None:
        complex_kinds = [d for d in dtypes if getattr(d, "kind", "") == "c"]
        return complex_kinds[0] if complex_kinds else None
    if isinstance(X, (list, tuple)):
        try:
            return np.asarray(X).dtype
        except (ValueError, TypeError):  # ragged: left to scikit-learn's message
            return None
    return None


def check_not_complex(X, estimator) -> None:
    """Raise a short ``ValueError`` when ``X`` holds complex numbers.

    Parameters
    ----------
    X : array-like, sparse matrix or LinearOperator
    estimator : estimator instance or str
        Named in the message.

    Raises
    ------
    ValueError
        ``X`` has a complex dtype.  The message starts with scikit-learn's
        "Complex data not supported" (what its estimator checks look for).
    """
    dtype = _dtype_of(X)
    if dtype is not None and dtype.kind == "c":
        name = estimator if isinstance(estimator, str) else type(estimator).__name__
        raise ValueError(
            f"Complex data not supported by {name}: X has dtype {dtype}. Pass real "
            "features, for example X.real and X.imag as separate columns, or abs(X)."
        )


def is_dask_array(X) -> bool:
    """Whether ``X`` is a ``dask.array.Array`` (checked without importing Dask)."""
    cls = type(X)
    return cls.__module__.startswith("dask") and cls.__name__ == "Array"


def check_not_dask(X, estimator) -> None:
    """Refuse a ``dask.array.Array`` where it would be pulled whole into memory.

    scikit-learn's validation converts it with ``np.asarray``: the whole array
    would be computed on the client, silently.  The forests take Dask arrays
    on their own paths, before validating; everything else asks for
    ``X.compute()`` explicitly.
    """
    if is_dask_array(X):
        name = estimator if isinstance(estimator, str) else type(estimator).__name__
        raise TypeError(
            f"{name} does not take a dask.array.Array here: it would be computed whole "
            "into this process's memory. Pass X.compute() if it fits; the forests' fit, "
            "apply, transform, kneighbors and proximity take Dask arrays "
            "(docs/scale.md)."
        )


def validate_data(_estimator, /, X="no_validation", y="no_validation", **kwargs):
    """:func:`sklearn.utils.validation.validate_data`, refusing complex ``X`` in one line.

    Same parameters and result; see :func:`check_not_complex` for the message.
    """
    if not (isinstance(X, str) and X == "no_validation"):
        check_not_complex(X, _estimator)
        check_not_dask(X, _estimator)
    return _sklearn_validate_data(_estimator, X, y, **kwargs)


def check_n_neighbors(n_neighbors, n_train: int, is_train: bool) -> None:
    """Refuse an ``n_neighbors`` that is not a positive integer or exceeds the candidates.

    A training point is not its own neighbour, so it has ``n_train - 1`` candidates.
    """
    import numbers

    if not isinstance(n_neighbors, numbers.Integral) or n_neighbors < 1:
        raise ValueError(f"n_neighbors must be a positive integer, got {n_neighbors!r}")
    if n_neighbors > (n_train - 1 if is_train else n_train):
        raise ValueError(
            f"Expected n_neighbors <= n_samples_fit{' - 1' if is_train else ''}, "
            f"but n_neighbors = {n_neighbors}, n_samples_fit = {n_train}"
        )


def with_seed_and_threads(forest, random_state, n_jobs, verbose: int = 0):
    """``forest`` with a wrapper's ``random_state`` / ``n_jobs`` where its own are None,
    and the wrapper's positive ``verbose`` where its own is 0.

    Estimators that grow a forest inside (the clusterers' forest geometry,
    rpfCluster, the neighbours transformer) pass their seed and threads on
    without overriding what the user set on the forest itself.  Only public
    ``get_params`` / ``set_params`` are used.
    """
    params = forest.get_params(deep=False)
    updates = {}
    if params.get("random_state", 0) is None:
        updates["random_state"] = random_state
    if params.get("n_jobs", 0) is None:
        updates["n_jobs"] = n_jobs
    if verbose and params.get("verbose", None) == 0:  # a wrapper asked for progress
        updates["verbose"] = verbose
    return forest.set_params(**updates)
