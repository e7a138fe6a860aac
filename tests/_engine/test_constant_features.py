"""Features found constant in a node are not drawn again below it (issue 45).

Axis forests only; sparse ones draw as before, their known constants kept
apart and only sparing them projections (``docs/engine.md``; tested in
``test_cuts_from_sums.py``).  An axis node's known constants are
``perm[:n_const]`` of its tree's candidate buffers
(``projections.mark_constants``); the node's descendants draw from
``perm[n_const:]`` only.  Checked here: the marking moves exactly the
constant features of a constant candidate and keeps the prefix pending nodes
rely on; draws never pick a known constant, and draw as before while none
is known; the trees of data where no feature is ever constant in a node are the
engine's trees from before the change; and on one-hot data no split uses a
feature constant in its node.
"""

import hashlib

import numpy as np
import pytest

import geoforest as gf
from geoforest._engine.buffers import candidate_buffers
from geoforest._engine.projections import (
    AXIS,
    SPARSE,
    draw_candidates,
    draw_node_projections,
    mark_constants,
)
from geoforest._engine.rng import make_state


def _one_hot(rng, n, levels):
    codes = [rng.integers(0, k, n) for k in levels]
    return np.hstack([(c[:, None] == np.arange(k)) for c, k in zip(codes, levels, strict=True)])


@pytest.mark.parametrize("seed", range(40))
def test_mark_constants_moves_the_constant_features_behind_the_known_ones(seed):
    rng = np.random.default_rng(seed)
    n, p = 40, 12
    X = rng.normal(size=(n, p)).astype(np.float32)
    rows = rng.permutation(n).astype(np.int64)
    lo, hi = 5, 25
    constant = rng.choice(p, size=5, replace=False)
    X[rows[lo:hi, None], constant[None, :]] = rng.normal(size=5).astype(np.float32)
    perm = rng.permutation(p).astype(np.int32)
    n_known = int(rng.integers(0, 3))  # pretend the first ones are known constants
    known = perm[:n_known].copy()
    before = perm.copy()
    idx = rng.choice(perm[n_known:], size=int(rng.integers(1, 6)), replace=False).astype(np.int32)
    cand = candidate_buffers(X, 1, p)
    cand.perm[:] = perm
    cand.idx[: idx.shape[0]], cand.ptr[:2] = idx, (0, idx.shape[0])
    n_const = mark_constants(X, rows, lo, hi, cand, 0, n_known)
    perm = cand.perm
    expect = [f for f in idx if f in constant] if idx.shape[0] > 1 else list(idx)
    np.testing.assert_array_equal(perm[:n_known], known)  # the pending nodes' prefix
    assert n_const == n_known + len(expect)
    assert sorted(perm[n_known:n_const]) == sorted(expect)
    assert sorted(perm) == list(range(p))  # still a permutation
    if n_const == n_known:
        np.testing.assert_array_equal(perm, before)


def test_draws_never_pick_a_known_constant():
    kind = AXIS
    rng = np.random.default_rng(1)
    p, n_proj = 20, 20
    state = make_state(0)
    cand = candidate_buffers(np.zeros((1, p), np.float32), n_proj, p)
    params = np.array([2.5])
    for _ in range(50):
        cand.perm[:] = rng.permutation(p)
        n_const = int(rng.integers(0, p))
        known = cand.perm[:n_const].copy()
        k = draw_candidates(kind, params, n_proj, cand, n_const, state)
        assert not np.isin(cand.idx[: cand.ptr[k]], known).any()
        np.testing.assert_array_equal(cand.perm[:n_const], known)
        assert k == min(n_proj, p - n_const)


def test_sparse_draws_ignore_the_known_constants():
    """Sparse candidates draw from all of ``perm`` whatever ``n_const`` (their
    known constants are kept apart, in ``Candidates.known``, and only spare them
    the projection): the same draws as with none known."""
    p, n_proj = 20, 20
    cand = candidate_buffers(np.zeros((1, p), np.float32), n_proj, p)
    s1, s2 = make_state(4), make_state(4)
    ptr, idx = np.zeros(n_proj + 1, np.int64), np.empty(n_proj * p, np.int32)
    w = np.empty(n_proj * p, np.float32)
    rng = np.random.default_rng(0)
    for n_const in (0, 3, 19):
        perm = rng.permutation(p).astype(np.int32)
        cand.perm[:] = perm
        k1 = draw_candidates(SPARSE, np.array([2.5]), n_proj, cand, n_const, s1)
        k2 = draw_node_projections(SPARSE, np.array([2.5]), n_proj, perm, s2, ptr, idx, w)
        assert k1 == k2 == n_proj
        np.testing.assert_array_equal(cand.idx[: cand.ptr[k1]], idx[: ptr[k2]])
        np.testing.assert_array_equal(cand.w[: cand.ptr[k1]], w[: ptr[k2]])


def test_no_known_constant_draws_as_before():
    """With ``n_const == 0`` the draws are :func:`draw_node_projections`' on all of ``perm``."""
    p, n_proj = 30, 7
    for kind in (AXIS, SPARSE):
        cand = candidate_buffers(np.zeros((1, p), np.float32), n_proj, p)
        perm = np.arange(p, dtype=np.int32)
        ptr, idx = np.zeros(n_proj + 1, np.int64), np.empty(n_proj * p, np.int32)
        w = np.empty(n_proj * p, np.float32)
        s1, s2 = make_state(5), make_state(5)
        for _ in range(20):
            k1 = draw_candidates(kind, np.array([2.0]), n_proj, cand, 0, s1)
            k2 = draw_node_projections(kind, np.array([2.0]), n_proj, perm, s2, ptr, idx, w)
            assert k1 == k2
            np.testing.assert_array_equal(cand.idx[: cand.ptr[k1]], idx[: ptr[k2]])
            np.testing.assert_array_equal(cand.w[: cand.ptr[k1]], w[: ptr[k2]])


def _forest_hash(X, y):
    h = hashlib.sha256()
    for est in (
        gf.ObliqueForestRegressor(n_estimators=4, max_features=0.5, random_state=0, n_jobs=1),
        gf.ObliqueForestRegressor(
            n_estimators=4, projection="axis", max_features=0.5, random_state=0, n_jobs=1
        ),
        gf.ObliqueForestClassifier(n_estimators=4, random_state=0, n_jobs=1),
    ):
        est.fit(X, y if isinstance(est, gf.ObliqueForestRegressor) else (y > 0).astype(int))
        for t in est.trees_:
            for a in (t.left, t.threshold, t.proj_idx, t.proj_weight):
                h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def test_trees_without_constant_features_are_the_trees_from_before():
    """Continuous features never tie, so no node finds a constant feature and the
    draws are the old engine's: the hash is the trees' before issue 45's change."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 8)).astype(np.float32)
    y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=300)
    assert _forest_hash(X, y) == EXPECTED_HASH


@pytest.mark.parametrize("projection", ["axis", "sparse"])
def test_no_split_uses_a_feature_constant_in_its_node(projection):
    rng = np.random.default_rng(0)
    X = np.hstack([_one_hot(rng, 600, (3, 5, 8)), rng.normal(size=(600, 2))]).astype(np.float32)
    y = X[:, 0] * 2.0 + X[:, 4] - X[:, 10] + X[:, -1] + 0.1 * rng.normal(size=600)
    est = gf.ObliqueForestRegressor(
        n_estimators=3, projection=projection, bootstrap=False, random_state=0, n_jobs=1
    ).fit(X, y)
    for t in est.trees_:
        stack = [(0, np.arange(X.shape[0]))]
        while stack:
            node, rows = stack.pop()
            if t.left[node] == -1:
                continue
            feats = t.proj_idx[t.proj_ptr[node] : t.proj_ptr[node + 1]]
            w = t.proj_weight[t.proj_ptr[node] : t.proj_ptr[node + 1]]
            if projection == "axis":
                assert np.ptp(X[rows, feats[0]]) > 0
            z = (X[rows][:, feats].astype(np.float64) * w).sum(axis=1)
            assert np.ptp(z) > 0  # the split's projection is not constant either
            go_left = z <= t.threshold[node]
            stack += [(t.left[node], rows[go_left]), (t.right[node], rows[~go_left])]


#: ``_forest_hash`` of the forests in
#: ``test_trees_without_constant_features_are_the_trees_from_before``, computed
#: with the engine before features found constant were skipped (0e18bc6).
EXPECTED_HASH = "e2d165b2719e8bac"
