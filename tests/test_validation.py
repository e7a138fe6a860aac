"""The shared validation helpers (geoforest/_validation.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import InvalidParameterError

import geoforest as gf
from geoforest._validation import N_JOBS, check_not_complex, validate_data


class _Jobs(BaseEstimator):
    _parameter_constraints: dict = {"n_jobs": N_JOBS}

    def __init__(self, n_jobs=None):
        self.n_jobs = n_jobs


@pytest.mark.parametrize("n_jobs", [None, 1, 4, -1, -2, np.int64(2)])
def test_n_jobs_constraint_keeps_none_and_nonzero_integers(n_jobs):
    _Jobs(n_jobs)._validate_params()


@pytest.mark.parametrize("n_jobs", [0, np.int32(0), 1.0, "2"])
def test_n_jobs_constraint_refuses_zero_and_non_integers(n_jobs):
    with pytest.raises(InvalidParameterError, match=r"'n_jobs' parameter of _Jobs must be"):
        _Jobs(n_jobs)._validate_params()


def test_n_jobs_message_names_the_allowed_values():
    with pytest.raises(ValueError) as info:
        _Jobs(0)._validate_params()
    assert str(info.value) == (
        "The 'n_jobs' parameter of _Jobs must be an int in the range (-inf, -1], an int "
        "in the range [1, inf) or None. Got 0 instead."
    )


@pytest.mark.parametrize(
    "X",
    [
        np.ones((30, 30)) + 1j,
        sp.csr_array(np.eye(3) * (1 + 1j)),
        [[1.0, 2.0], [3.0, 1j]],
    ],
    ids=["dense", "sparse", "list"],
)
def test_complex_input_gets_one_short_line(X):
    with pytest.raises(
        ValueError, match="^Complex data not supported by LLPD: X has dtype"
    ) as info:
        validate_data(gf.LLPD(), X)
    assert len(str(info.value)) < 200 and "\n" not in str(info.value)


def test_real_input_passes_through():
    X = validate_data(gf.LLPD(), [[1, 2], [3, 4]], dtype=np.float64)
    assert X.dtype == np.float64 and X.shape == (2, 2)
    check_not_complex([[1, [2, 3]]], "x")  # ragged: left to scikit-learn's own message
    check_not_complex("no_validation", "x")
