"""Projection distributions: which linear combinations of features a node tries.

A projection is a short sparse vector ``(idx, w)``: feature indices and their
weights.  The value of a sample under it is ``sum_j w_j * X[i, idx_j]``, always
summed in the stored order so that fitting and prediction agree bit for bit.

Each distribution is one integer code and one branch in
:func:`draw_node_projections`; its real-valued settings travel in a small
float64 ``params`` array.  Adding a distribution (Gaussian directions for
rpTrees, image patches for MORF) means adding a code, a sampler function and a
branch here; the tree builder never changes.

Codes and their ``params``:

``AXIS`` (0)
    One feature per projection; the ``n_proj`` features of a node are distinct
    (as in Breiman's forests).  No params.
``SPARSE`` (1)
    ``1 + Poisson(params[0] - 1)`` distinct features per projection (mean
    ``params[0]``, at least one), each weighted ``+1`` or ``-1`` with equal
    probability.  ``params[0] = 1.5`` is SPORF's default; the URerF paper's
    ``lambda = 1/20`` corresponds to ``params[0] = p / 20``.
``GAUSSIAN`` (2)
    A random unit direction over all features: iid N(0, 1) weights divided by
    their Euclidean norm, i.e. uniform on the sphere (random projection trees,
    Dasgupta & Freund 2008).  Dense: ``n_features`` nonzeros.  No params.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .rng import normal, poisson, randint, uniform

AXIS = 0
SPARSE = 1
GAUSSIAN = 2

PROJECTIONS = {"axis": AXIS, "sparse": SPARSE, "gaussian": GAUSSIAN}


def max_nonzeros(kind: int, params: np.ndarray, n_features: int) -> int:
    """Upper bound on the nonzeros of one projection (sizes the node buffers)."""
    if kind == AXIS:
        return 1
    return n_features


@njit(nogil=True, cache=True)
def _partial_shuffle(perm, k, state):
    """Move a uniform random k-subset of ``perm`` to ``perm[:k]`` (Fisher-Yates).

    ``perm`` stays a permutation, so it can be reused without resetting.
    """
    n = perm.shape[0]
    for j in range(k):
        r = j + randint(state, n - j)
        tmp = perm[j]
        perm[j] = perm[r]
        perm[r] = tmp


@njit(nogil=True, cache=True)
def _draw_axis(n_proj, perm, state, ptr, idx, w):
    n_features = perm.shape[0]
    k = min(n_proj, n_features)
    _partial_shuffle(perm, k, state)
    for j in range(k):
        ptr[j + 1] = j + 1
        idx[j] = perm[j]
        w[j] = 1.0
    return k


@njit(nogil=True, cache=True)
def _draw_sparse(n_proj, mean_nnz, perm, state, ptr, idx, w):
    n_features = perm.shape[0]
    pos = 0
    for j in range(n_proj):
        nnz = 1 + poisson(state, mean_nnz - 1.0)
        if nnz > n_features:
            nnz = n_features
        _partial_shuffle(perm, nnz, state)
        for q in range(nnz):
            idx[pos] = perm[q]
            w[pos] = 1.0 if uniform(state) < 0.5 else -1.0
            pos += 1
        ptr[j + 1] = pos
    return n_proj


@njit(nogil=True, cache=True)
def _draw_gaussian(n_proj, n_features, state, ptr, idx, w):
    pos = 0
    for j in range(n_proj):
        norm2 = 0.0
        for f in range(n_features):
            g = normal(state)
            idx[pos + f] = f
            w[pos + f] = g
            norm2 += g * g
        scale = 1.0 / np.sqrt(norm2) if norm2 > 0.0 else 1.0
        for f in range(n_features):
            w[pos + f] = w[pos + f] * scale
        pos += n_features
        ptr[j + 1] = pos
    return n_proj


@njit(nogil=True, cache=True)
def draw_node_projections(kind, params, n_proj, perm, state, ptr, idx, w):
    """Draw the candidate projections of one node.

    Writes projection ``j`` into ``idx[ptr[j]:ptr[j + 1]]`` and
    ``w[ptr[j]:ptr[j + 1]]`` (``ptr[0]`` must be 0) and returns how many
    projections were drawn (at most ``n_proj``).
    """
    ptr[0] = 0
    if kind == AXIS:
        return _draw_axis(n_proj, perm, state, ptr, idx, w)
    if kind == GAUSSIAN:
        return _draw_gaussian(n_proj, perm.shape[0], state, ptr, idx, w)
    return _draw_sparse(n_proj, params[0], perm, state, ptr, idx, w)


@njit(nogil=True, cache=True)
def project_row(X, i, idx, w, start, end):
    """Value of row ``i`` of ``X`` under the projection ``idx/w[start:end]``."""
    acc = 0.0
    for q in range(start, end):
        acc += w[q] * X[i, idx[q]]
    return acc


@njit(nogil=True, cache=True)
def project_samples(X, samples, lo, hi, idx, w, start, end, out):
    """Project rows ``samples[lo:hi]`` into ``out[0:hi - lo]``."""
    for s in range(lo, hi):
        out[s - lo] = project_row(X, samples[s], idx, w, start, end)
