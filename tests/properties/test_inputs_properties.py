"""Malformed inputs to every public unsupervised estimator end in a clear error (issue 44).

The hypothesis tests draw well-shaped matrices with bad values; these are the
bad shapes and types: no columns, 1-d, 3-d, no rows, strings, complex, mixed
objects, a scalar, ``None``, sparse matrices, booleans.  Each ``fit`` is
refused by an input check (``_contract.assert_clear_error_or``) or, for
booleans (0/1 features) and the forests' sparse input, gives a fitted
estimator.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import geoforest as gf

from ._contract import assert_clear_error_or

# Any input may warn (constant columns, K = 1, ...): the contract is about results
# and errors, so warnings pass here (the suite makes them errors elsewhere).
pytestmark = pytest.mark.filterwarnings("ignore")

ESTIMATORS = {
    "UnsupervisedForest": lambda: gf.UnsupervisedForest(3),
    "RandomProjectionForest": lambda: gf.RandomProjectionForest(3),
    "ForestNeighborsTransformer": lambda: gf.ForestNeighborsTransformer(n_neighbors=2),
    "ForestSpectralClustering": lambda: gf.ForestSpectralClustering(
        2, n_neighbors=2, forest=gf.UnsupervisedForest(3)
    ),
    "KernelSpectralClustering": lambda: gf.KernelSpectralClustering(2),
    "LLPD": lambda: gf.LLPD(),
    "LLPDSpectralClustering": lambda: gf.LLPDSpectralClustering(2, n_neighbors=2, k_nse=2),
    "LUND": lambda: gf.LUND(2, n_neighbors=2, n_components=2),
    "DiffusionMap": lambda: gf.DiffusionMap(2, n_components=2),
}

INPUTS = {
    "no columns": np.zeros((10, 0)),
    "1-d": np.arange(10.0),
    "3-d": np.zeros((4, 3, 2)),
    "no rows": np.zeros((0, 3)),
    "strings": np.array([["a", "b"], ["c", "d"], ["e", "f"]]),
    "complex": np.ones((5, 2)) + 1j,
    "mixed objects": np.array([[1, None], [2, 3], [4, 5]], dtype=object),
    "scalar": 3.0,
    "None": None,
    "sparse": sp.random(20, 4, density=0.5, format="csr", random_state=0),
    "booleans": np.eye(6, dtype=bool),
}
MAY_FIT = {"booleans", "sparse"}


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("kind", INPUTS)
def test_malformed_input(estimator, kind):
    est = ESTIMATORS[estimator]()
    fitted = assert_clear_error_or(
        lambda: est.fit(INPUTS[kind]), must_fail=kind not in MAY_FIT, what=f"{estimator}.fit"
    )
    assert fitted is None or fitted is est
