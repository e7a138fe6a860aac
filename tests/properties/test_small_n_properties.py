"""Property tests of forests on small data (issue 53, "small n").

On fewer than about 90 rows a default ``UnsupervisedForest`` used to grow
one-leaf trees (``max_samples=0.5`` of the rows against
``min_samples_split=45``): every point then shared every leaf with every
other, the learned ranking kept only the lowest-index tied candidates, and a
training row given as a query lost itself from its own neighbours.  The
contract kept here, at the defaults on a few seeds and data shapes
(duplicated rows, columns of a few integer levels, values far from zero):

* ``kneighbors(X_train, k)`` lists each row first at distance 0: the row
  itself, or, for a row with exact copies, the lowest index of its copies
  (equal queries get equal answers; ``forest/_search.py``);
* ``kneighbors(None, k)`` never lists a point among its own neighbours;
* where the data hold the rows a split needs, each tree's sample holds them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import geoforest as gf

from ._contract import check_kneighbors
from ._strategies import profile, recipes

# Small data warn (constant columns, rows that float32 merges): the contract is
# about the neighbours, so warnings pass here.
pytestmark = pytest.mark.filterwarnings("ignore")


def _lowest_copy(X: np.ndarray) -> np.ndarray:
    """For each row of ``X``, the lowest index of a row equal to it (itself if none)."""
    _, first, inverse = np.unique(X, axis=0, return_index=True, return_inverse=True)
    return first[inverse.ravel()]


@profile()
@given(
    recipe=recipes(
        min_rows=2, max_rows=120, max_cols=8, kinds=("normal", "integer", "offset"), nonfinite=False
    ),
    far=st.booleans(),
    trees=st.sampled_from([100, 10, 3]),
    seed=st.integers(0, 2**16),
    data=st.data(),
)
def test_training_rows_find_themselves_first(recipe, far, trees, seed, data):
    """At the defaults, every training row as a query is its own first neighbour."""
    X = recipe.build() + (1e6 if far else 0.0)
    n = X.shape[0]
    forest = gf.UnsupervisedForest(trees, random_state=seed).fit(X)
    k = data.draw(st.integers(1, n), label="k")
    dist, ind = forest.kneighbors(X, k)
    check_kneighbors(dist, ind, n, k, n, training=False)
    np.testing.assert_array_equal(ind[:, 0], _lowest_copy(X), err_msg="first neighbour")
    np.testing.assert_array_equal(dist[:, 0], 0.0, err_msg="first distance")
    if n > 1:
        k = data.draw(st.integers(1, n - 1), label="k_train")
        dist, ind = forest.kneighbors(None, k)
        check_kneighbors(dist, ind, n, k, n, training=True)
    # Each tree's sample holds the rows a split needs wherever the data do.
    need = max(forest.min_samples_split, 2 * forest.min_samples_leaf)
    if n >= need:
        drawn = forest.inbag_counts_.sum(axis=0)
        assert (drawn >= need).all(), drawn
