"""Geodesic precision and recall (URerF paper, section 3.5).

A geodesic learner retrieves, for every point, a list of neighbours ordered
nearest first.  Geodesic precision and recall compare these lists with the
*relevant* neighbours defined by the latent ground truth rather than by the
observed coordinates:

* continuous ground truth (``latent=``): the relevant set of a point at query
  size ``k`` is its ``k`` nearest other points by the true geodesic distance,
  so ``|relevant| = |retrieved| = k`` and precision equals recall;
* discrete ground truth (``labels=``): the relevant set of a point is every
  other point carrying the same label (for example a mixture component or a
  cell type).

All query sizes are evaluated at once in ``O(n * k_max)`` time and memory
from cumulative hit counts.  True neighbours are found with a KD-tree and an
exact tie-break (smaller distance first, then smaller point index), so large
data sets never need an ``n x n`` matrix unless one is passed in.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Sequence

import numpy as np
from sklearn.neighbors import KDTree
from sklearn.utils import Bunch

__all__ = ["chance_precision", "geodesic_neighbors", "geodesic_precision_recall"]

_METRICS = ("euclidean", "great_circle", "precomputed")
# Upper bound on the number of float64 entries held by a temporary block.
_BLOCK_ENTRIES = 2**22
# Relative slack between KD-tree distances and our own distance evaluation.
_REL_TOL = 1e-9


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------
def _check_neighbors(neighbors: object) -> np.ndarray:
    """Validate a retrieved-neighbour array and return it as ``intp``."""
    nb = np.asarray(neighbors)
    if nb.ndim != 2:
        raise ValueError(f"neighbors must be a 2-D array (n_samples, k_max), got shape {nb.shape}.")
    if not np.issubdtype(nb.dtype, np.integer):
        raise ValueError(f"neighbors must hold integer point indices, got dtype {nb.dtype}.")
    n, k_max = nb.shape
    if n < 2 or k_max < 1:
        raise ValueError(f"neighbors needs n_samples >= 2 and k_max >= 1, got shape {nb.shape}.")
    if k_max > n - 1:
        raise ValueError(f"neighbors has k_max={k_max} columns but only {n - 1} other points.")
    if nb.min() < 0 or nb.max() >= n:
        raise ValueError(f"neighbors contains indices outside [0, {n}).")
    nb = nb.astype(np.intp, copy=False)
    own = nb == np.arange(n)[:, None]
    if own.any():
        row = int(np.flatnonzero(own.any(axis=1))[0])
        raise ValueError(
            f"neighbors row {row} contains the point's own index; retrieved lists must "
            "exclude the query point (as kneighbors() with X=None does)."
        )
    srt = np.sort(nb, axis=1)
    dup = srt[:, 1:] == srt[:, :-1]
    if dup.any():
        row = int(np.flatnonzero(dup.any(axis=1))[0])
        raise ValueError(f"neighbors row {row} contains a repeated index.")
    return nb


def _check_ks(ks: int | Sequence[int] | np.ndarray | None, k_max: int) -> np.ndarray:
    """Return the query sizes as a 1-D ``intp`` array within ``[1, k_max]``."""
    if ks is None:
        return np.arange(1, k_max + 1)
    arr = np.atleast_1d(np.asarray(ks))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("ks must be an int or a non-empty 1-D sequence of ints.")
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"ks must contain integers, got dtype {arr.dtype}.")
    if arr.min() < 1 or arr.max() > k_max:
        raise ValueError(f"every k in ks must lie in [1, k_max={k_max}], got {arr.tolist()}.")
    return arr.astype(np.intp)


def _as_float_array(values: object, name: str) -> np.ndarray:
    """Convert to float64 and reject NaN."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array.") from exc
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN.")
    return arr


def _prepare_latent(latent: object, metric: str) -> np.ndarray:
    """Validate ``latent`` for ``metric``; vectors come back 2-D (unit rows for great_circle)."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}.")
    Z = _as_float_array(latent, "latent")
    if metric == "precomputed":
        if Z.ndim != 2 or Z.shape[0] != Z.shape[1]:
            raise ValueError(f"precomputed latent must be a square matrix, got shape {Z.shape}.")
        if (Z < 0).any():
            raise ValueError("precomputed latent distances must be non-negative.")
        return Z
    if Z.ndim == 1 and metric == "euclidean":
        Z = Z[:, None]
    if Z.ndim != 2:
        raise ValueError(f"latent must be 1-D or 2-D for metric={metric!r}, got shape {Z.shape}.")
    if not np.isfinite(Z).all():
        raise ValueError("latent contains infinite values.")
    if metric == "great_circle":
        norms = np.linalg.norm(Z, axis=1)
        if (norms == 0).any():
            raise ValueError("great_circle latent rows must be non-zero vectors.")
        Z = Z / norms[:, None]
    return Z


def _check_count(value: object, name: str, *, low: int, high: int) -> int:
    """Check ``value`` is an integer (not a bool) in ``[low, high]``."""
    is_int = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    if not is_int or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}.")
    return int(value)


# ---------------------------------------------------------------------------
# exact true neighbours
# ---------------------------------------------------------------------------
def _blocks(rows: np.ndarray, size: int) -> Iterator[np.ndarray]:
    """Split ``rows`` into consecutive blocks of at most ``size`` entries."""
    size = max(1, size)
    for start in range(0, rows.size, size):
        yield rows[start : start + size]


def _smallest_k_rows(D: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` smallest entries of each row of ``D``, skipping ``D[r, rows[r]]``.

    Order is by value, then by column index, without sorting whole rows.
    ``D`` is modified in place (the self entries are set to ``inf``).
    """
    c = D.shape[0]
    D[np.arange(c), rows] = np.inf
    kth = np.partition(D, k - 1, axis=1)[:, k - 1 : k]
    not_self = np.ones(D.shape, dtype=bool)
    not_self[np.arange(c), rows] = False
    below = D < kth
    tied = (D == kth) & not_self
    need = k - below.sum(axis=1, keepdims=True)
    keep = below | (tied & (np.cumsum(tied, axis=1) <= need))
    cols = np.nonzero(keep)[1].reshape(c, k)  # ascending column index within each row
    order = np.argsort(np.take_along_axis(D, cols, axis=1), axis=1, kind="stable")
    return np.take_along_axis(cols, order, axis=1)


def _rank_distances(Z: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Ranking distances from ``Z[rows]`` to ``Z[cols]`` (``cols`` 1-D or one row per row).

    One-dimensional data use ``|a - b|``; otherwise the sum of squared
    coordinate differences (no square root, no dot-product shortcut), so equal
    distances of exactly representable data tie exactly.
    """
    diff = Z[cols] - Z[rows][:, None, :]
    if Z.shape[1] == 1:
        return np.abs(diff[:, :, 0])
    return np.sum(diff**2, axis=2)


def _tree_to_rank_scale(dist: np.ndarray, n_dims: int) -> np.ndarray:
    """Convert KD-tree (Euclidean) distances to the scale of :func:`_rank_distances`."""
    return dist if n_dims == 1 else dist**2


def _brute_force_neighbors(Z: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """Exact neighbours of ``rows`` against every point, in memory-bounded blocks."""
    n, d = Z.shape
    everyone = np.arange(n)
    out = np.empty((rows.size, k), dtype=np.intp)
    start = 0
    for block in _blocks(rows, _BLOCK_ENTRIES // (n * d)):
        D = _rank_distances(Z, block, everyone)
        out[start : start + block.size] = _smallest_k_rows(D, block, k)
        start += block.size
    return out


def _tree_candidates(
    Z: np.ndarray, tree: KDTree, block: np.ndarray, k: int, n_query: int
) -> tuple[np.ndarray, np.ndarray]:
    """Tie-broken neighbours from ``n_query`` tree candidates and a flag saying they are exact.

    Every point outside the candidate list is at tree distance >= the last
    candidate's.  The selection is exact when that bound is strictly beyond
    the k-th selected distance (with slack for rounding differences).
    """
    dist, cand = tree.query(Z[block], k=n_query)
    dz = _rank_distances(Z, block, cand)
    dz[cand == block[:, None]] = np.inf
    order = np.lexsort((cand, dz), axis=-1)[:, :k]
    chosen = np.take_along_axis(cand, order, axis=1)
    kth = np.take_along_axis(dz, order[:, -1:], axis=1)[:, 0]
    exact = _tree_to_rank_scale(dist[:, -1], Z.shape[1]) * (1.0 - _REL_TOL) > kth
    return chosen, exact


def _vector_neighbors(Z: np.ndarray, k: int) -> np.ndarray:
    """Exact ``k`` nearest other points for every row of ``Z`` (Euclidean ranking)."""
    n, d = Z.shape
    out = np.empty((n, k), dtype=np.intp)
    pending = np.arange(n)
    tree = KDTree(Z)
    n_query = k + 1 + max(8, k // 4)
    while pending.size and 2 * n_query < n:
        unresolved = []
        for block in _blocks(pending, _BLOCK_ENTRIES // (n_query * d)):
            chosen, exact = _tree_candidates(Z, tree, block, k, n_query)
            out[block[exact]] = chosen[exact]
            unresolved.append(block[~exact])
        pending = np.concatenate(unresolved)
        n_query *= 2
    if pending.size:
        out[pending] = _brute_force_neighbors(Z, pending, k)
    return out


def _precomputed_neighbors(D: np.ndarray, k: int) -> np.ndarray:
    """Exact ``k`` nearest other points from a full distance matrix, in row blocks."""
    n = D.shape[0]
    out = np.empty((n, k), dtype=np.intp)
    for block in _blocks(np.arange(n), _BLOCK_ENTRIES // n):
        out[block] = _smallest_k_rows(D[block].copy(), block, k)
    return out


def geodesic_neighbors(
    latent: np.ndarray, n_neighbors: int, *, metric: str = "euclidean"
) -> np.ndarray:
    """True nearest neighbours on the latent manifold, with deterministic tie-breaking.

    Parameters
    ----------
    latent : array-like of shape (n_samples,), (n_samples, d) or (n_samples, n_samples)
        Latent ground truth: arc lengths or latent coordinates for
        ``"euclidean"``, points on a sphere for ``"great_circle"`` (rows are
        normalised to unit length; the great-circle ranking equals the
        Euclidean ranking of unit vectors), or true geodesic distances for
        ``"precomputed"`` (``inf`` allowed, NaN and negative values not).
    n_neighbors : int
        Number of neighbours, in ``[1, n_samples - 1]``.
    metric : {"euclidean", "great_circle", "precomputed"}, default="euclidean"
        How ``latent`` encodes the geodesic distance.

    Returns
    -------
    indices : ndarray of shape (n_samples, n_neighbors)
        For each point the indices of its nearest *other* points, nearest
        first; equal distances are ordered by increasing point index.

    Notes
    -----
    Vector inputs use a KD-tree for candidates, verified against an exact
    bound and re-queried (or brute-forced in blocks) where ties reach the
    boundary, so memory stays ``O(n * n_neighbors)``.  Distances are ranked
    as ``|a - b|`` for one-dimensional latents and as sums of squared
    coordinate differences otherwise; ties are exact ties of these values.

    References
    ----------
    .. [1] M. Madhyastha, P. Li, J. Browne, V. Strnadova-Neeley, C. E. Priebe,
       R. Burns and J. T. Vogelstein, "Geodesic Learning via Unsupervised
       Decision Forests", section 3.5 (the true neighbours that
       geodesic precision and recall compare with).

    Examples
    --------
    >>> from geoforest.metrics import geodesic_neighbors
    >>> geodesic_neighbors([0.0, 1.0, 3.0, 2.0], 2)
    array([[1, 3],
           [0, 3],
           [3, 1],
           [1, 2]])
    """
    Z = _prepare_latent(latent, metric)
    n = Z.shape[0]
    n_neighbors = _check_count(n_neighbors, "n_neighbors", low=1, high=n - 1)
    if metric == "precomputed":
        return _precomputed_neighbors(Z, n_neighbors)
    return _vector_neighbors(Z, n_neighbors)


# ---------------------------------------------------------------------------
# hit counting
# ---------------------------------------------------------------------------
def _continuous_hits(retrieved: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Total ``|retrieved[i, :k] & truth[i, :k]|`` over ``i`` for every ``k`` in ``1..k_max``.

    Entry ``j`` of a retrieved row whose point has true rank ``r`` counts for
    every ``k > max(j, r)``; a histogram of ``max(j, r)`` followed by a
    cumulative sum gives all query sizes at once.
    """
    n, k_max = retrieved.shape
    offset = np.arange(n, dtype=np.int64)[:, None] * n
    true_keys = (offset + truth).ravel()
    order = np.argsort(true_keys)
    sorted_keys = true_keys[order]
    true_rank = np.tile(np.arange(k_max), n)[order]
    ret_keys = (offset + retrieved).ravel()
    pos = np.minimum(np.searchsorted(sorted_keys, ret_keys), sorted_keys.size - 1)
    found = sorted_keys[pos] == ret_keys
    position = np.tile(np.arange(k_max), n)
    first_k = np.maximum(position[found], true_rank[pos[found]])
    return np.cumsum(np.bincount(first_k, minlength=k_max))


def _discrete_curves(retrieved: np.ndarray, labels: object) -> tuple[np.ndarray, np.ndarray]:
    """Precision and recall for every ``k`` in ``1..k_max`` with label ground truth."""
    n, k_max = retrieved.shape
    codes, class_size = _encode_labels(labels, n)
    size_of_point = class_size[codes]
    has_peers = size_of_point > 1
    weight = np.where(has_peers, 1.0 / np.maximum(size_of_point - 1, 1), 0.0)
    hit_total = np.zeros(k_max)
    recall_total = np.zeros(k_max)
    for block in _blocks(np.arange(n), _BLOCK_ENTRIES // k_max):
        hit = codes[retrieved[block]] == codes[block][:, None]
        hit_total += hit.sum(axis=0)
        recall_total += weight[block] @ hit
    ks = np.arange(1, k_max + 1)
    precision = np.cumsum(hit_total) / (n * ks)
    n_recall = int(has_peers.sum())
    recall = np.cumsum(recall_total) / n_recall if n_recall else np.full(k_max, np.nan)
    return precision, recall


def _encode_labels(labels: object, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of ``labels`` and the size of each class."""
    lab = np.asarray(labels)
    if lab.shape != (n,):
        raise ValueError(f"labels must have shape ({n},), got {lab.shape}.")
    if lab.dtype.kind == "f" and np.isnan(lab).any():
        raise ValueError("labels contains NaN.")
    try:
        _, codes, counts = np.unique(lab, return_inverse=True, return_counts=True)
    except TypeError as exc:
        raise ValueError("labels must be mutually comparable values.") from exc
    return codes.reshape(n), counts


# ---------------------------------------------------------------------------
# public metric
# ---------------------------------------------------------------------------
def geodesic_precision_recall(
    neighbors: np.ndarray,
    *,
    latent: np.ndarray | None = None,
    labels: np.ndarray | None = None,
    metric: str = "euclidean",
    ks: int | Sequence[int] | np.ndarray | None = None,
) -> Bunch:
    """Geodesic precision and recall of retrieved neighbour lists.

    Parameters
    ----------
    neighbors : array-like of int, shape (n_samples, k_max)
        For each point, the learner's retrieved neighbours, nearest first,
        excluding the point itself (as ``kneighbors()`` returns with
        ``X=None``).  Indices must lie in ``[0, n_samples)`` and be distinct
        within a row.
    latent : array-like, optional
        Continuous ground truth, see :func:`geodesic_neighbors`.  The relevant
        set of point ``i`` at query size ``k`` is its ``k`` nearest other
        points by true geodesic distance (ties: lower index first).  Exactly
        one of ``latent`` and ``labels`` must be given.
    labels : array-like of shape (n_samples,), optional
        Discrete ground truth (component or class of each point).  The
        relevant set of point ``i`` is every *other* point with its label.
    metric : {"euclidean", "great_circle", "precomputed"}, default="euclidean"
        How ``latent`` encodes the geodesic distance; ignored with ``labels``.
    ks : int or sequence of int, optional
        Query sizes in ``[1, k_max]``; default ``1, 2, ..., k_max``.  The
        retrieved set at size ``k`` is ``neighbors[i, :k]``.

    Returns
    -------
    result : sklearn.utils.Bunch
        ``ks`` (int array), ``precision`` and ``recall`` (float arrays, one
        value per ``k``, averaged over points).  With ``latent`` both sets have
        ``k`` members, so precision equals recall.  With ``labels``, precision
        is ``|hits| / k`` averaged over all points and recall is
        ``|hits| / (class size - 1)`` averaged over the points that have at
        least one other point in their class (singleton classes are left out
        of the recall average; recall is NaN if every class is a singleton).

    See Also
    --------
    chance_precision : expected continuous precision of random neighbours.

    References
    ----------
    .. [1] M. Madhyastha, P. Li, J. Browne, V. Strnadova-Neeley, C. E. Priebe,
       R. Burns and J. T. Vogelstein, "Geodesic Learning via Unsupervised
       Decision Forests", section 3.5.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.metrics import geodesic_precision_recall
    >>> s = np.array([0.0, 1.0, 2.0, 3.0])
    >>> retrieved = np.array([[1, 2], [0, 2], [1, 3], [2, 1]])
    >>> geodesic_precision_recall(retrieved, latent=s).precision
    array([1., 1.])
    >>> res = geodesic_precision_recall(retrieved, labels=[0, 0, 1, 1])
    >>> res.precision, res.recall
    (array([0.75, 0.5 ]), array([0.75, 1.  ]))
    """
    nb = _check_neighbors(neighbors)
    n, k_max = nb.shape
    ks = _check_ks(ks, k_max)
    if (latent is None) == (labels is None):
        raise ValueError("Exactly one of latent and labels must be given.")
    if labels is not None:
        precision, recall = _discrete_curves(nb, labels)
        return Bunch(ks=ks, precision=precision[ks - 1], recall=recall[ks - 1])
    k_need = int(ks.max())
    Z = _prepare_latent(latent, metric)
    if Z.shape[0] != n:
        raise ValueError(f"latent describes {Z.shape[0]} points but neighbors has {n} rows.")
    if metric == "precomputed":
        truth = _precomputed_neighbors(Z, k_need)
    else:
        truth = _vector_neighbors(Z, k_need)
    hits = _continuous_hits(nb[:, :k_need], truth)
    precision = hits[ks - 1] / (n * ks)
    return Bunch(ks=ks, precision=precision, recall=precision.copy())


def chance_precision(n_samples: int, k: int | Sequence[int] | np.ndarray) -> float | np.ndarray:
    """Expected continuous geodesic precision (= recall) of random neighbours.

    If the ``k`` retrieved points are a uniformly random subset of the other
    ``n_samples - 1`` points, each relevant point is retrieved with
    probability ``k / (n_samples - 1)``, so the expected precision is
    ``k / (n_samples - 1)``.  (With ``labels`` ground truth the chance level
    depends on the class sizes instead.)

    Parameters
    ----------
    n_samples : int
        Number of points, >= 2.
    k : int or array-like of int
        Query size(s) in ``[1, n_samples - 1]``.

    Returns
    -------
    chance : float or ndarray
        ``k / (n_samples - 1)``, with the shape of ``k``.

    References
    ----------
    .. [1] M. Madhyastha, P. Li, J. Browne, V. Strnadova-Neeley, C. E. Priebe,
       R. Burns and J. T. Vogelstein, "Geodesic Learning via Unsupervised
       Decision Forests" (geodesic precision, whose chance level this is).

    Examples
    --------
    >>> from geoforest.metrics import chance_precision
    >>> chance_precision(1001, 50)
    0.05
    """
    n_samples = _check_count(n_samples, "n_samples", low=2, high=np.iinfo(np.int64).max)
    k_arr = np.asarray(k)
    if not np.issubdtype(k_arr.dtype, np.integer) or k_arr.dtype == bool:
        raise ValueError(f"k must be an integer or an array of integers, got {k!r}.")
    if (k_arr < 1).any() or (k_arr > n_samples - 1).any():
        raise ValueError(f"k must lie in [1, {n_samples - 1}], got {k!r}.")
    chance = k_arr / (n_samples - 1)
    return float(chance) if chance.ndim == 0 else chance
