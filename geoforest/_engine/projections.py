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
    With ``params = [mean_nnz, max_tied_fraction, cap, grown_redraws]`` the
    unsupervised tree builder grows each candidate with random discrete
    features while more than ``max_tied_fraction`` of the node's samples
    share one value, up to ``cap`` nonzeros (``ties.grow_until_resolved``),
    and a node whose candidates grew redraws at most ``grown_redraws`` times.
    With ``params = [mean_nnz, 0, 0, 0, group_0, ..., group_{p-1}]``
    (:func:`sparse_params`; slots 1-3 are the growth's, unused there) a
    candidate keeps only the features in its first feature's group: the
    others it drew are dropped, so it draws as without groups and no
    candidate mixes groups.  The supervised regressors group 0/1 columns
    apart from the others (``forest._supervised.indicator_groups``): a
    one-hot column summed with a numeric one gives a continuous candidate,
    which needs the full sort where a sum of indicators takes a few values.
``GAUSSIAN`` (2)
    A random unit direction over all features: iid N(0, 1) weights divided by
    their Euclidean norm, i.e. uniform on the sphere (random projection trees,
    Dasgupta & Freund 2008).  Dense: ``n_features`` nonzeros.  No params.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._jit import njit
from .rng import normal, poisson, randint, uniform

AXIS = 0
SPARSE = 1
GAUSSIAN = 2
PATCH = 3

PROJECTIONS = {"axis": AXIS, "sparse": SPARSE, "gaussian": GAUSSIAN, "patch": PATCH}

#: Slots of a sparse projection's ``params``, ``[mean_nnz, max_tied_fraction,
#: cap, grown_redraws]`` (the last three where candidates grow while they tie).
SLOT_MEAN_NNZ, SLOT_TIED_FRACTION, SLOT_GROWTH_CAP, SLOT_GROWN_REDRAWS = 0, 1, 2, 3
#: First slot of a sparse projection's feature groups, one per feature (:func:`sparse_params`).
SLOT_GROUPS = 4
#: Slots of a patch projection's ``params`` (:func:`patch_params`).
SLOT_HEIGHT, SLOT_WIDTH, SLOT_H_MIN, SLOT_H_MAX, SLOT_W_MIN, SLOT_W_MAX, SLOT_WRAP = range(7)

#: Most nonzeros a sparse projection grows to while ties dominate its values.
MAX_GROWN_NONZEROS = 64
#: Redraw batches of a node whose candidates had to grow: one, not
#: ``max_redraws``.  Growth makes honest gains of 0 common on discrete data, so
#: every node would spend all its redraws on grown candidates, which rarely
#: find structure the first batch missed (measurements: ``docs/defaults.md``).
GROWN_REDRAWS = 1


def max_nonzeros(kind: int, params: np.ndarray, n_features: int) -> int:
    """Upper bound on the nonzeros of one projection (sizes the node buffers)."""
    if kind == AXIS:
        return 1
    if kind == PATCH:
        return int(params[SLOT_H_MAX]) * int(params[SLOT_W_MAX])
    return n_features


def sparse_params(mean_nnz: float, groups: np.ndarray | None = None) -> np.ndarray:
    """``params`` of a supervised forest's ``SPARSE`` distribution.

    Parameters
    ----------
    mean_nnz : float
        Mean number of features per projection (``feature_combinations``).
    groups : ndarray of shape (n_features,) or None
        A code per feature; a candidate keeps only the features of its first
        feature's group (module docstring).  ``None``: no groups, the
        one-slot ``[mean_nnz]`` of the draws without them.

    Returns
    -------
    params : ndarray of float64
    """
    if groups is None:
        return np.array([float(mean_nnz)])
    head = [float(mean_nnz), 0.0, 0.0, 0.0]  # slots 1-3: unsupervised growth only
    return np.concatenate([head, np.asarray(groups, dtype=np.float64)])


def _as_shape(shape: Any, ndim: int, name: str) -> tuple[int, ...]:
    if isinstance(shape, numbers.Integral):
        shape = (int(shape),) * ndim
    try:
        shape = tuple(shape)
    except TypeError:
        raise ValueError(f"{name} must be an int or a tuple of ints, got {shape!r}") from None
    if len(shape) != ndim or not all(isinstance(s, numbers.Integral) and s >= 1 for s in shape):
        raise ValueError(f"{name} must be {ndim} positive integers, got {shape!r}")
    return tuple(int(s) for s in shape)


def patch_params(
    image_shape: Any,
    min_patch_shape: Any,
    max_patch_shape: Any,
    wrap: bool,
    n_features: int,
) -> np.ndarray:
    """Validated ``params`` of the ``PATCH`` distribution.

    Parameters
    ----------
    image_shape : tuple of int
        ``(L,)`` for a 1-D series or ``(H, W)`` for an image, row-major; its
        product must equal ``n_features``.
    min_patch_shape, max_patch_shape : int, tuple of int or None
        Smallest and largest patch, per axis (an int applies to every axis).
        ``None``: 1, and ``min(4, size)`` per axis.
    wrap : bool
        Let patches wrap around the grid's edges.
    n_features : int
        Number of features of the data.

    Returns
    -------
    params : ndarray of float64, ``[H, W, h_min, h_max, w_min, w_max, wrap]``
    """
    if image_shape is None:
        raise ValueError("projection='patch' needs image_shape, e.g. (28, 28) or (100,)")
    if isinstance(image_shape, numbers.Integral):
        image_shape = (image_shape,)
    try:
        ndim = len(image_shape)
    except TypeError:
        raise ValueError(f"image_shape must be a tuple of ints, got {image_shape!r}") from None
    if ndim not in (1, 2):
        raise ValueError(f"image_shape must be (L,) or (H, W), got {image_shape!r}")
    image = _as_shape(image_shape, ndim, "image_shape")
    if int(np.prod(image)) != n_features:
        raise ValueError(
            f"image_shape {image} has {int(np.prod(image))} pixels but X has {n_features} features"
        )
    lo = (
        (1,) * ndim
        if min_patch_shape is None
        else _as_shape(min_patch_shape, ndim, "min_patch_shape")
    )
    hi = (
        tuple(min(4, s) for s in image)
        if max_patch_shape is None
        else _as_shape(max_patch_shape, ndim, "max_patch_shape")
    )
    for a, b, s in zip(lo, hi, image, strict=True):
        if a > b:
            raise ValueError(f"min_patch_shape {lo} exceeds max_patch_shape {hi}")
        if b > s:
            raise ValueError(f"max_patch_shape {hi} does not fit in image_shape {image}")
    if ndim == 1:
        image, lo, hi = (1, *image), (1, *lo), (1, *hi)
    return np.array([image[0], image[1], lo[0], hi[0], lo[1], hi[1], float(bool(wrap))])


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
def _draw_sparse(n_proj, params, perm, state, ptr, idx, w):
    """Sparse candidates; with groups (``params[SLOT_GROUPS:]``) each keeps
    the features of its first feature's group.  Every feature drawn draws its
    sign, kept or not, so the random state advances as without groups."""
    mean_nnz = params[SLOT_MEAN_NNZ]
    grouped = params.shape[0] > SLOT_GROUPS
    n_features = perm.shape[0]
    pos = 0
    for j in range(n_proj):
        nnz = 1 + poisson(state, mean_nnz - 1.0)
        if nnz > n_features:
            nnz = n_features
        _partial_shuffle(perm, nnz, state)
        group = params[SLOT_GROUPS + perm[0]] if grouped else 0.0
        for q in range(nnz):
            sign = 1.0 if uniform(state) < 0.5 else -1.0
            if grouped and params[SLOT_GROUPS + perm[q]] != group:
                continue  # a feature of another group than the first's
            idx[pos] = perm[q]
            w[pos] = sign
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
def _draw_patch(n_proj, params, state, ptr, idx, w):
    height = np.int64(params[SLOT_HEIGHT])
    width = np.int64(params[SLOT_WIDTH])
    h_min = np.int64(params[SLOT_H_MIN])
    h_max = np.int64(params[SLOT_H_MAX])
    w_min = np.int64(params[SLOT_W_MIN])
    w_max = np.int64(params[SLOT_W_MAX])
    wrap = params[SLOT_WRAP] != 0.0
    pos = 0
    for j in range(n_proj):
        if wrap:
            u = randint(state, width)
            v = randint(state, height)
            pw = w_min + randint(state, w_max - w_min + 1)
            ph = h_min + randint(state, h_max - h_min + 1)
        else:
            u = randint(state, width - w_min + 1)
            v = randint(state, height - h_min + 1)
            pw = w_min + randint(state, min(w_max, width - u) - w_min + 1)
            ph = h_min + randint(state, min(h_max, height - v) - h_min + 1)
        for r in range(ph):
            row = (v + r) % height
            for c in range(pw):
                idx[pos] = row * width + (u + c) % width
                w[pos] = 1.0
                pos += 1
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
    if kind == PATCH:
        return _draw_patch(n_proj, params, state, ptr, idx, w)
    return _draw_sparse(n_proj, params, perm, state, ptr, idx, w)


@njit(nogil=True, cache=True)
def _feature_constant(X, samples, lo, hi, f):
    """True when feature ``f`` holds one value over rows ``samples[lo:hi]``."""
    first = X[samples[lo], f]
    for s in range(lo + 1, hi):
        if X[samples[s], f] != first:
            return False
    return True


@njit(nogil=True, cache=True)
def draw_candidates(kind, params, n_proj, cand, n_const, state):
    """:func:`draw_node_projections` into the tree's candidate buffers ``cand``
    (``buffers.Candidates``), features known to be constant left out.

    Axis candidates are drawn from ``cand.perm[n_const:]``: while
    ``n_const == 0`` the same draws as from all of ``perm``.  Sparse ones are
    drawn from all of ``perm`` (their ``n_const`` counts ``cand.known``:
    :func:`mark_known`).  Returns how many candidates were drawn.
    """
    perm = cand.perm[n_const:] if kind == AXIS else cand.perm
    return draw_node_projections(kind, params, n_proj, perm, state, cand.ptr, cand.idx, cand.w)


@njit(nogil=True, cache=True)
def mark_constants(X, samples, lo, hi, cand, j, n_const):
    """Move the features of constant candidate ``j`` of ``cand`` (the tree's
    ``buffers.Candidates``) that are constant in the node to the front of
    ``cand.perm``; returns the new count of known constants.

    ``perm[:n_const]`` holds the features known to be constant in the node's
    rows ``samples[lo:hi]``; the node's descendants inherit the count and
    draw their candidates from ``perm[n_const:]`` only (as scikit-learn's
    builder skips the features it found constant).  Called for a candidate
    whose projected values were all equal: a one-feature candidate is then
    its feature's column; a wider one may be constant because its features
    cancel (two one-hot columns of one variable), so each of its features is
    checked.  Only the features after ``n_const`` move, so the prefix every
    pending node relies on stays in place.

    The builder calls it for axis candidates only.  Sparse forests draw as
    before, from all of ``perm`` (drawing only among the features that can
    vary cost them accuracy: ``docs/engine.md``); their constants go to
    :func:`mark_known` instead.  The other distributions do not draw from
    ``perm``.
    """
    idx, perm, start, end = cand.idx, cand.perm, cand.ptr[j], cand.ptr[j + 1]
    for q in range(start, end):
        f = idx[q]
        if end - start > 1 and not _feature_constant(X, samples, lo, hi, f):
            continue
        for p in range(n_const, perm.shape[0]):
            if perm[p] == f:
                perm[p] = perm[n_const]
                perm[n_const] = f
                n_const += 1
                break
    return n_const


@njit(nogil=True, cache=True)
def mark_known(X, samples, lo, hi, cand, j, n_const):
    """Sparse counterpart of :func:`mark_constants`: move the features of constant
    candidate ``j`` that are constant in the node to the front of ``cand.known``
    (not of ``perm``: the draws stay as they were); returns the new count.

    ``known[:n_const]`` are then the node's known constants, with the prefix
    bookkeeping of :func:`mark_constants` (``known_at`` says where each feature
    is, so :func:`known_constant` tests a feature in constant time); the
    builder skips a candidate made of them only, before projecting it.
    """
    idx, known, at = cand.idx, cand.known, cand.known_at
    start, end = cand.ptr[j], cand.ptr[j + 1]
    for q in range(start, end):
        f = idx[q]
        p = at[f]
        if p < n_const:
            continue
        if end - start > 1 and not _feature_constant(X, samples, lo, hi, f):
            continue
        g = known[n_const]
        known[n_const], known[p] = f, g
        at[f], at[g] = n_const, p
        n_const += 1
    return n_const


@njit(nogil=True, cache=True, inline="always")
def known_constant(cand, j, n_const):
    """True when every feature of candidate ``j`` is known constant in the node."""
    at, idx = cand.known_at, cand.idx
    for q in range(cand.ptr[j], cand.ptr[j + 1]):
        if at[idx[q]] >= n_const:
            return False
    return True


#: Rows projected together from a row-major ``X`` (:func:`project_samples`):
#: their rows stay in the L1 cache while each feature is added.
_ROW_BLOCK = 64


@njit(nogil=True, cache=True)
def project_samples(X, samples, lo, hi, idx, w, start, end, out):
    """Project rows ``samples[lo:hi]`` into ``out[0:hi - lo]``.

    A row-major ``X`` is read in blocks of :data:`_ROW_BLOCK` rows (a
    sample's features share cache lines), feature by feature within a block;
    a column-major one feature by feature, each feature's column in
    increasing row order (a contiguous gather, much cheaper per value on
    MORF's image patches; ``docs/engine.md``).
    Either way a value is its float32 products ``w[q] * X[row, idx[q]]``
    added to a float64 from ``0.0`` in the stored order: the same bits for
    either layout, and the rule the tree walk (``walk._walk``) follows.
    """
    m = hi - lo
    if X.strides[0] != X.itemsize or X.shape[1] == 1:
        # Blocks of rows, each feature by feature: every row's sum is its own
        # chain of additions in the stored order, and the chains of a block
        # overlap in the core (one row at a time waits on each addition).
        for b in range(0, m, _ROW_BLOCK):
            e = min(b + _ROW_BLOCK, m)
            for s in range(b, e):
                out[s] = 0.0
            for q in range(start, end):
                f = np.uint64(idx[q])
                wq = w[q]
                for s in range(b, e):
                    out[s] += wq * X[np.uint64(samples[np.uint64(lo + s)]), f]
        return
    for s in range(m):
        out[s] = 0.0
    rows = samples[lo:hi]
    for q in range(start, end):
        col = X[:, idx[q]]  # contiguous: the column-major copy
        wq = w[q]
        # Unsigned indices: no negative-index wraparound in the gather.
        for s in range(m):
            u = np.uint64(s)
            out[u] += wq * col[np.uint64(rows[u])]
