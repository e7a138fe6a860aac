"""The ranking's partial sort (``_smallest_order``) and the rows it ranks
(``_rank_rows``) against numpy's stable argsort and a direct reading of the rule."""

from __future__ import annotations

import numpy as np
import pytest

from geoforest.forest._ranking import _rank_rows, _smallest_order


@pytest.mark.parametrize("seed", range(3))
def test_smallest_order_is_the_head_of_the_stable_argsort(seed):
    # Few distinct keys and many infinities (candidates sharing no leaf): ties
    # everywhere, which a stable sort keeps in position order.
    rng = np.random.default_rng(seed)
    for m in [0, 1, 2, 3, 7, 8, 31, 64, 200]:
        key = rng.integers(0, 5, size=m + 4).astype(np.float64)
        key[rng.random(m + 4) < 0.3] = np.inf
        items = np.flatnonzero(rng.random(m + 4) < 0.7)  # a subset, increasing
        for k in [0, 1, 5, 20, m + 10]:
            out = np.full(m + 14, -1, dtype=np.int64)
            j = _smallest_order(key, items, items.shape[0], k, out)
            want = items[np.argsort(key[items], kind="stable")][:k]
            assert j == want.shape[0]
            np.testing.assert_array_equal(out[:j], want)
            assert (out[j:] == -1).all()  # nothing past j is written


def _rank_reference(sim, d2, m, k):
    """The documented rule, read directly: shared-leaf candidates nearest first
    (stable), the nearest others to complete, the set in ascending distance
    (stable in that pick order)."""
    shared = [c for c in np.argsort(d2[:m], kind="stable") if sim[c] > 0][:k]
    if len(shared) < k:
        rest = [c for c in np.argsort(d2[:m], kind="stable") if not sim[c] > 0]
        picked = shared + rest[: k - len(shared)]
        picked = [picked[q] for q in np.argsort(d2[picked], kind="stable")]
        return picked
    return shared


@pytest.mark.parametrize("seed", range(4))
def test_rank_rows_follows_the_rule(seed):
    rng = np.random.default_rng(seed)
    n_rows, width, k = 40, 60, 10
    cand = rng.integers(0, 1000, size=(n_rows, width)).astype(np.int64)
    sim = np.where(rng.random((n_rows, width)) < 0.2, rng.random((n_rows, width)), 0.0)
    d2 = rng.integers(0, 6, size=(n_rows, width)).astype(np.float64)  # many ties
    n_out = rng.integers(0, width + 1, size=n_rows).astype(np.int64)
    ind = np.full((n_rows, k), -1, dtype=np.int64)
    dist = np.full((n_rows, k), np.nan)
    _rank_rows(cand, sim, n_out, d2, k, ind, dist)
    for i in range(n_rows):
        want = _rank_reference(sim[i], d2[i], n_out[i], k)
        got = len(want)
        np.testing.assert_array_equal(ind[i, :got], cand[i, want])
        np.testing.assert_allclose(dist[i, :got], np.sqrt(d2[i, want]))
        assert (ind[i, got:] == -1).all()
