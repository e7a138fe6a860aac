"""Clustering metrics: accuracy under the best cluster-to-class matching, and co-cluster accuracy.

:func:`clustering_accuracy` matches each cluster to at most one class (the
Hungarian algorithm on the contingency table) and counts the points whose
cluster meets their class; :func:`cocluster_accuracy` counts the pairs of
points on which the two partitions agree (together in both, or apart in both:
the Rand index), with no matching.  Neither allocates anything of size
``n_classes * n_clusters`` when both partitions have very many clusters.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import coo_array
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

__all__ = ["clustering_accuracy", "cocluster_accuracy"]

# Contingency tables with at most this many cells (or at most ``n_samples``)
# are counted densely with ``np.bincount``; the Hungarian algorithm runs on a
# dense table only up to this size and on the sparse table of non-zero cells
# otherwise, so nothing of size ``n_clusters_true * n_clusters_pred`` is
# allocated when both partitions have very many clusters.
_DENSE_TABLE_ENTRIES = 2**22


def _encode_partition(values: object, name: str) -> tuple[np.ndarray, int]:
    """Validate a 1-D label array; return integer codes ``0..k-1`` and ``k``."""
    try:
        lab = np.asarray(values)
    except ValueError as exc:  # ragged: sequences among the labels (NumPy's message is opaque)
        raise ValueError(
            f"{name} must be a 1-D array of labels; sequences of different lengths among "
            "them cannot be one label each (encode them, e.g. as strings)."
        ) from exc
    if lab.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of labels, got shape {lab.shape}.")
    if lab.size == 0:
        raise ValueError(f"{name} is empty.")
    if lab.dtype.kind in "fc":
        if np.isnan(lab).any():
            raise ValueError(f"{name} contains NaN.")
    elif lab.dtype.kind == "O" and any(isinstance(v, float) and v != v for v in lab):
        raise ValueError(f"{name} contains NaN.")
    if lab.dtype.kind in "iu":
        low, high = lab.min(), lab.max()
        if int(high) - int(low) <= max(lab.size, 2**16):
            # Small integer range: O(n) histogram encoding instead of sorting.
            # Exact: unsigned differences are >= 0, signed ones are small in int64.
            wide = lab.astype(np.int64) if lab.dtype.kind == "i" else lab
            offsets = (wide - wide.dtype.type(low)).astype(np.intp)
            present = np.bincount(offsets) > 0
            return np.cumsum(present, dtype=np.intp)[offsets] - 1, int(present.sum())
    try:
        uniq, codes = np.unique(lab, return_inverse=True)
        return codes.reshape(-1).astype(np.intp, copy=False), int(uniq.size)
    except TypeError:
        if lab.dtype.kind != "O":
            raise ValueError(f"{name} must hold comparable or hashable labels.") from None
    # Object labels that cannot be sorted (e.g. None mixed with ints): hash them.
    index: dict[object, int] = {}
    try:
        codes = np.fromiter((index.setdefault(v, len(index)) for v in lab), np.intp, lab.size)
    except TypeError as exc:
        raise ValueError(f"{name} must hold comparable or hashable labels.") from exc
    return codes, len(index)


def _check_partitions(y_true: object, y_pred: object) -> tuple[np.ndarray, int, np.ndarray, int]:
    """Encode both partitions and check they describe the same points."""
    t_codes, k_true = _encode_partition(y_true, "y_true")
    p_codes, k_pred = _encode_partition(y_pred, "y_pred")
    if t_codes.size != p_codes.size:
        raise ValueError(
            f"y_true and y_pred must have the same length, got {t_codes.size} and {p_codes.size}."
        )
    return t_codes, k_true, p_codes, k_pred


def _contingency_cells(
    t_codes: np.ndarray, k_true: int, p_codes: np.ndarray, k_pred: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-zero cells of the contingency table as ``(rows, cols, counts)``.

    Uses ``O(n_samples + n_cells)`` memory: a dense ``bincount`` when the
    table is small, otherwise ``np.unique`` over the cell keys of the points.
    """
    keys = t_codes.astype(np.int64) * k_pred + p_codes  # < n_samples**2, fits in int64
    if k_true * k_pred <= max(_DENSE_TABLE_ENTRIES, t_codes.size):
        table = np.bincount(keys, minlength=k_true * k_pred)
        cells = np.flatnonzero(table)
        counts = table[cells]
    else:
        cells, counts = np.unique(keys, return_counts=True)
    return cells // k_pred, cells % k_pred, counts.astype(np.int64, copy=False)


def _n_pairs(counts: np.ndarray) -> int:
    """``sum(C(c, 2))`` over ``counts`` as a Python int (exact for counts < 3e9)."""
    c = np.asarray(counts, dtype=np.int64)
    return int(np.sum(c * (c - 1) // 2, dtype=np.int64))


def clustering_accuracy(y_true: object, y_pred: object) -> float:
    """Accuracy of a clustering under the best one-to-one cluster-to-class matching.

    Each predicted cluster is matched to at most one true class and each class
    to at most one cluster so that the number of points whose cluster is
    matched to their own class is as large as possible (Hungarian algorithm on
    the contingency table).  The score is that number divided by
    ``n_samples``.  The numbers of clusters and classes may differ: points in
    an unmatched cluster, or in an unmatched class, count as errors.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True class of each point.  Labels can be any values that ``np.unique``
        can sort (ints, floats other than NaN, strings, ...); object arrays of
        hashable but unsortable values are also accepted.
    y_pred : array-like of shape (n_samples,)
        Predicted cluster of each point, same rules as ``y_true``.  No label
        is special: ``-1`` (the "noise" label of DBSCAN or HDBSCAN) is an
        ordinary cluster that can be matched to a class.  To score only the
        points a clusterer kept, mask both arrays first, e.g.
        ``clustering_accuracy(y_true[y_pred != -1], y_pred[y_pred != -1])``.

    Returns
    -------
    accuracy : float
        Fraction of correctly assigned points, in ``[0, 1]``; ``1.0`` if and
        only if the partitions are identical up to renaming the clusters.

    Raises
    ------
    ValueError
        If an input is not 1-D, is empty or contains NaN, or if the inputs
        have different lengths.

    See Also
    --------
    cocluster_accuracy : pair-counting agreement (Rand index), matching-free.

    Notes
    -----
    With contingency table :math:`n_{ij}` (points of class :math:`i` in
    cluster :math:`j`) the score is :math:`\\max_\\sigma \\sum_i
    n_{i\\sigma(i)} / n` over partial one-to-one maps :math:`\\sigma`.  The
    table is never larger than ``n_classes * n_clusters`` cells and is built
    from integer codes in ``O(n_samples)`` memory;
    :func:`scipy.optimize.linear_sum_assignment` solves small tables and
    :func:`scipy.sparse.csgraph.min_weight_full_bipartite_matching` the
    non-zero cells of very large ones.

    References
    ----------
    .. [1] D. Yan, S. Gu, Y. Xu and Z. Qin, "Similarity Kernel and Clustering via
       Random Projection Forests" (rpfCluster; the clustering accuracy of its tables).
    .. [2] H. W. Kuhn, "The Hungarian method for the assignment problem",
       Naval Research Logistics Quarterly 2(1-2), 83-97, 1955.
    .. [3] J. Xie, R. Girshick and A. Farhadi, "Unsupervised deep embedding
       for clustering analysis", ICML 2016, 478-487.

    Examples
    --------
    >>> from geoforest.metrics import clustering_accuracy
    >>> clustering_accuracy([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    >>> clustering_accuracy(["a", "a", "a", "b", "b", "b"], [0, 0, 1, 1, 1, 2])
    0.6666666666666666
    >>> clustering_accuracy([0, 0, 1, 1], [0, 0, 0, 0])  # one cluster matches one class
    0.5
    """
    t_codes, k_true, p_codes, k_pred = _check_partitions(y_true, y_pred)
    rows, cols, counts = _contingency_cells(t_codes, k_true, p_codes, k_pred)
    if k_true * k_pred <= _DENSE_TABLE_ENTRIES:
        table = np.zeros((k_true, k_pred), dtype=np.int64)
        table[rows, cols] = counts
        r, c = linear_sum_assignment(table, maximize=True)
        matched = int(table[r, c].sum())
    else:
        matched = _sparse_max_matching(rows, cols, counts, k_true, k_pred)
    return matched / t_codes.size


def _sparse_max_matching(
    rows: np.ndarray, cols: np.ndarray, counts: np.ndarray, k_true: int, k_pred: int
) -> int:
    """Maximum-weight one-to-one matching total of a sparse contingency table.

    The partial matching problem is turned into a perfect matching on a square
    graph of ``k_true + k_pred`` vertices a side, with ``O(n_cells)`` edges:

    * class ``i`` -- cluster ``j`` for every non-zero cell (weight ``n_ij``);
    * class ``i`` -- its own dummy cluster ``k_pred + i`` (``i`` unmatched);
    * dummy class ``k_true + j`` -- cluster ``j`` (``j`` unmatched);
    * dummy class ``k_true + j`` -- dummy cluster ``k_pred + i`` for every
      non-zero cell, which pairs up the dummies of matched classes and clusters.

    Every partial matching of the table extends to a perfect matching this way
    and every perfect matching restricts to one, with the same weight.  All
    weights are shifted by +1 (the sparse solver needs non-zero weights); a
    perfect matching has ``k_true + k_pred`` edges, so the shift is removed
    exactly at the end.
    """
    classes = np.arange(k_true)
    clusters = np.arange(k_pred)
    n_cells = counts.size
    weight = np.concatenate(
        [counts + 1, np.ones(k_true + k_pred + n_cells, dtype=np.int64)]
    ).astype(np.float64)  # exact: every total is below 2**53
    row_ind = np.concatenate([rows, classes, k_true + clusters, k_true + cols])
    col_ind = np.concatenate([cols, k_pred + classes, clusters, k_pred + rows])
    size = k_true + k_pred
    # int32 indices where they fit: scipy < 1.15's matching takes no int64 indices.
    idx = np.int32 if size < 2**31 else np.int64
    graph = coo_array(
        (weight, (row_ind.astype(idx), col_ind.astype(idx))), shape=(size, size)
    ).tocsr()
    r, c = min_weight_full_bipartite_matching(graph, maximize=True)
    return round(float(graph[r, c].sum())) - size


def cocluster_accuracy(y_true: object, y_pred: object) -> float:
    """Fraction of point pairs on which two partitions agree (Rand index).

    A pair of points ``{i, j}`` with ``i < j`` is an agreement if both
    partitions put ``i`` and ``j`` in the same cluster, or both put them in
    different clusters.  No matching between clusters and classes is needed,
    and the score equals :func:`sklearn.metrics.rand_score`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True class of each point.  Labels can be any values that ``np.unique``
        can sort (ints, floats other than NaN, strings, ...); object arrays of
        hashable but unsortable values are also accepted.
    y_pred : array-like of shape (n_samples,)
        Predicted cluster of each point, same rules as ``y_true``.  No label
        is special: ``-1`` is an ordinary cluster (mask first, e.g.
        ``cocluster_accuracy(y_true[y_pred != -1], y_pred[y_pred != -1])``, to
        score only the points a clusterer kept).

    Returns
    -------
    accuracy : float
        Agreeing pairs divided by ``n_samples * (n_samples - 1) / 2``, in
        ``[0, 1]``.  With a single point there are no pairs and the score is
        ``1.0``.

    Raises
    ------
    ValueError
        If an input is not 1-D, is empty or contains NaN, or if the inputs
        have different lengths.

    See Also
    --------
    clustering_accuracy : accuracy under the best cluster-to-class matching.

    Notes
    -----
    Let :math:`n_{ij}` be the contingency table, :math:`a_i` its row sums,
    :math:`b_j` its column sums and :math:`N = \\binom{n}{2}`.  Pairs together
    in both partitions number :math:`S = \\sum_{ij} \\binom{n_{ij}}{2}`,
    together in ``y_true`` :math:`A = \\sum_i \\binom{a_i}{2}` and together in
    ``y_pred`` :math:`B = \\sum_j \\binom{b_j}{2}`.  Pairs apart in both
    number :math:`N - A - B + S`, so

    .. math:: \\text{agreements} = S + (N - A - B + S) = N - A - B + 2S.

    Everything is counted exactly with integers in ``O(n_samples + n_cells)``
    time and memory; the only rounding is the final division.

    References
    ----------
    .. [1] D. Yan, S. Gu, Y. Xu and Z. Qin, "Similarity Kernel and Clustering via
       Random Projection Forests" (rpfCluster; the co-cluster accuracy of its tables).
    .. [2] W. M. Rand, "Objective criteria for the evaluation of clustering
       methods", Journal of the American Statistical Association 66(336),
       846-850, 1971.

    Examples
    --------
    >>> from geoforest.metrics import cocluster_accuracy
    >>> cocluster_accuracy([0, 0, 1, 1], [5, 5, 7, 7])
    1.0
    >>> cocluster_accuracy([0, 0, 1, 1], [0, 0, 1, 2])  # only the pair {2, 3} disagrees
    0.8333333333333334
    >>> cocluster_accuracy(["x"], ["y"])  # no pairs
    1.0
    """
    t_codes, k_true, p_codes, k_pred = _check_partitions(y_true, y_pred)
    n = t_codes.size
    n_all = n * (n - 1) // 2  # Python int: exact for any n
    if n_all == 0:
        return 1.0
    _, _, counts = _contingency_cells(t_codes, k_true, p_codes, k_pred)
    together_true = _n_pairs(np.bincount(t_codes, minlength=k_true))
    together_pred = _n_pairs(np.bincount(p_codes, minlength=k_pred))
    together_both = _n_pairs(counts)
    agreements = n_all - together_true - together_pred + 2 * together_both
    return agreements / n_all
