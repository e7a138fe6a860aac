"""Sparse candidates that grow while their values tie (``max_tied_fraction``).

On discrete data (integer counts, pixels, zero-inflated features) a sparse
projection of one or two features takes few distinct values, so many of a
node's rows tie and no cut can separate them.  An unsupervised tree whose
sample has such features (:func:`tied_features`) lets a candidate on which
more than ``max_tied_fraction`` of the node's rows share one value grow random
``+-1`` discrete features until no value holds that many (at most ``cap``
features): :func:`grow_until_resolved`, called by the node loop
(``builder.build_tree``) for each candidate of such a tree.
``proj_params = [mean_nnz, max_tied_fraction, cap, grown_redraws]``.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .projections import SLOT_GROWTH_CAP, SLOT_TIED_FRACTION, SPARSE
from .rng import randint, uniform
from .sorting import sort_values


@njit(nogil=True, cache=True)
def _largest_tie(z, m):
    """Length of the longest run of equal values in sorted ``z[:m]``."""
    best = 1
    run = 1
    for i in range(1, m):
        if z[i] == z[i - 1]:
            run += 1
            if run > best:
                best = run
        else:
            run = 1
    return best


@njit(nogil=True, cache=True)
def tied_features(X, samples, z, sort_keys, sort_tmp):
    """Features with three or more equal values among at most 4,096 ``samples``.

    Continuous measurements, and the Gaussian noise columns of the noise
    experiments, essentially never repeat a value three times; counts,
    pixels and grids do.  The samples are taken at an even stride over
    ``samples``, so the scan costs the same at any size, and a row drawn
    more than once (a bootstrap copy; ``samples`` is sorted, so its copies
    are adjacent) counts once: copies of one row tie under every
    projection and say nothing about the feature.
    """
    stride = max(1, samples.shape[0] // 4096)
    rows = np.empty((samples.shape[0] + stride - 1) // stride, dtype=samples.dtype)
    n = 0
    for s in range(0, samples.shape[0], stride):
        if n == 0 or samples[s] != rows[n - 1]:
            rows[n] = samples[s]
            n += 1
    keep = np.empty(X.shape[1], dtype=np.int32)
    q = 0
    for f in range(X.shape[1]):
        for s in range(n):
            z[s] = X[rows[s], f]
        sort_values(z, n, sort_keys, sort_tmp)
        if _largest_tie(z, n) >= 3:
            keep[q] = f
            q += 1
    return keep[:q].copy()


@njit(nogil=True, cache=True)
def _draw_varying_feature(X, samples, lo, hi, g_idx, width, pool, state):
    """A random feature of ``pool``, not in ``g_idx[:width]``, varying over ``samples[lo:hi]``.

    ``pool`` is not empty; ``-1`` when 64 draws found none (most features
    constant at a small node).
    """
    first = samples[lo]
    for _ in range(64):
        f = pool[randint(state, pool.shape[0])]
        usable = True
        for q in range(width):
            if g_idx[q] == f:
                usable = False
                break
        if usable:
            usable = False
            for s in range(lo + 1, hi):
                if X[samples[s], f] != X[first, f]:
                    usable = True
                    break
        if usable:
            return f
    return -1


@njit(nogil=True, cache=True)
def grow_until_resolved(X, samples, lo, hi, z_cur, m, cand, width, proj_params, pool, state, vals):
    """Add random features to a sparse projection until its values resolve the node.

    ``cand.g_idx/g_w[:width]`` is the candidate (``cand`` the node loop's
    ``nodes.Candidates``), ``z_cur[:m]`` its values at the node's samples
    ``samples[lo:hi]`` and ``vals.z_sorted[:m]`` the same sorted (``vals``
    the loop's ``nodes.ValueScratch``, whose sort scratch it uses);
    ``proj_params = [mean_nnz, max_tied_fraction, cap, grown_redraws]``.  While more than
    ``tie_limit = max(max_tied_fraction * m, 1)`` samples share one value (integer-valued or
    zero-inflated features), more distinct features of ``pool``, weighted
    ``+1`` or ``-1``, are added to the projection and to its values (1, then
    2, 4, ... between two checks; a check sorts a strided subsample of at
    most 256 values, and the full values are sorted once at the end), until
    ``cap`` nonzeros or no feature of ``pool`` is left; features constant at
    the node are never added, and a candidate constant at the node is
    replaced rather than extended (so columns without variation are never
    stored).  ``pool`` holds the tree's discrete features
    (:func:`tied_features`): a continuous feature would break every tie at
    once, and when it is noise (appended noise columns) the grown
    projections are mostly noise.
    Returns the new width.

    Why: on a side made of one repeated value Fast-BIC's variance is its
    floor, and the gain of such a cut grows with the number of tied samples,
    not with any separation, so one-feature projections of pixels or counts
    win every node with cuts that peel off the mode (``docs/defaults.md``).
    Added terms are summed after the existing ones in the stored order, so
    the values equal :func:`~.projections.project_samples`' bit for bit.
    """
    g_idx, g_w = cand.g_idx, cand.g_w
    z_sorted, sort_keys, sort_tmp = vals.z_sorted, vals.sort_keys, vals.sort_tmp
    p = X.shape[1]
    tied_fraction = proj_params[SLOT_TIED_FRACTION]
    tie_limit = max(tied_fraction * m, 1.0)
    cap = int(proj_params[SLOT_GROWTH_CAP])
    largest = _largest_tie(z_sorted, m)
    if largest <= tie_limit:
        return width
    if largest == m:
        # Constant at the node: its features carry nothing, start afresh.
        width = 0
        z_cur[:m] = 0.0
    # Ties are checked on a strided subsample of at most 256 values, which
    # sorts quickly; the full values are sorted once at the end.
    stride = max(1, m // 256)
    s = (m + stride - 1) // stride
    sub, sub_keys, sub_tmp = np.empty(s), np.empty(s, np.int64), np.empty(s)
    sub_limit = max(tied_fraction * s, 1.0)
    step = 1  # features added before the next check: 1, 2, 4, ...
    while width < cap and width < p:
        added = 0
        while added < step and width < cap and width < p:
            f = _draw_varying_feature(X, samples, lo, hi, g_idx, width, pool, state)
            if f < 0:
                break
            wq = np.float32(1.0) if uniform(state) < 0.5 else np.float32(-1.0)
            g_idx[width] = f
            g_w[width] = wq
            width += 1
            added += 1
            for i in range(m):
                z_cur[i] += wq * X[samples[lo + i], f]
        if added == 0:
            break
        step *= 2
        for i in range(s):
            sub[i] = z_cur[i * stride]
        sort_values(sub, s, sub_keys, sub_tmp)
        if _largest_tie(sub, s) <= sub_limit:
            break
    z_sorted[:m] = z_cur[:m]
    sort_values(z_sorted, m, sort_keys, sort_tmp)
    return width


@njit(nogil=True, cache=True)
def growth_pool(X, samples, proj_kind, proj_params, vals):
    """Whether an unsupervised tree grows tied candidates, and the discrete
    features it grows with.

    Only sparse projections of unsupervised trees grow (the builder asks only
    for those), and only when the tree's sample has discrete features: without
    any, no candidate can tie, so the per-candidate checks are skipped
    (continuous data cost nothing).  ``vals`` is the node loop's
    ``buffers.ValueScratch``, used as the scan's scratch.
    """
    if proj_kind == SPARSE and proj_params.shape[0] > SLOT_GROWTH_CAP:
        pool = tied_features(X, samples, vals.z_sorted, vals.sort_keys, vals.sort_tmp)
        return pool.shape[0] > 0, pool
    return False, np.empty(0, dtype=np.int32)
