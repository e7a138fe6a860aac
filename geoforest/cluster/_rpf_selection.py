"""How rpfCluster chooses beta_1 (threshold), beta_2 (scale) and K without labels.

The candidates are the pairs of :data:`RPF_THRESHOLDS` x :data:`RPF_SCALES`
(or the one given), each clustered by
:meth:`~geoforest.cluster.ForestSpectralClustering.cluster_candidate`.  The
rules of ``ForestSpectralClustering(selection=..., affinity="kernel")`` live here:

* beta_1 from the kernel's connectivity (:func:`unfragmented_threshold`);
* the consensus of the candidates' partitions (:func:`consensus_scores`),
  ties broken towards the smoothest affinity (:func:`select_best`);
* the stability of each scale's partition across redrawn forests;
* beta_2 and K together by the relative spectral gap (the library's shared
  label-free rule, :func:`~geoforest.graph.choose_by_relative_gap`), with
  the connected components that persist one grid threshold lower counted as
  clusters;
* the eigengap of each candidate.

Why each rule is the default where it is, with the figures, is in
``docs/results/rpf-cluster.md`` and ``docs/choosing-k.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .._progress import progress
from ..graph import (
    choose_by_relative_gap,
    min_cluster_size,
    n_components,
    score_partitions,
    spectral_partitions,
)
from ._rpf_kernel import _sharpen_kept, entries_from, kept_by_threshold, truncated_kernel

__all__ = [
    "RPF_SCALES",
    "RPF_THRESHOLDS",
    "consensus_scores",
    "select_best",
    "unfragmented_threshold",
]

#: rpfCluster's threshold grid (beta_1), the paper's.
RPF_THRESHOLDS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4)
#: rpfCluster's scale grid (beta_2), log-spaced over the paper's range (0, 200].
RPF_SCALES: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0)
#: Scores this close to the best are ties (same partition, summed in another order).
SCORE_TIE = 1e-9


def unfragmented_threshold(S, thresholds, *, min_size: int | None = None) -> float:
    """The largest threshold whose thresholded kernel has no small connected component.

    A threshold beta_1 removes weak similarities; past some level it starts
    cutting single points and small groups off the graph.  This returns the
    largest of ``thresholds`` at which every connected component of
    ``S >= beta_1`` (entries of ``S`` below ``beta_1`` removed) still holds at
    least ``min_size`` points, or the smallest threshold when none qualifies.

    Parameters
    ----------
    S : scipy sparse array of shape (n, n)
        The forest kernel (1 on the diagonal).
    thresholds : sequence of float
        Candidate beta_1 values, e.g. :data:`RPF_THRESHOLDS`.
    min_size : int or None, default=None
        Smallest component size allowed; ``None`` means ``max(5, 2 % of n)``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[1.0, 0.5, 0.05], [0.5, 1.0, 0.3], [0.05, 0.3, 1.0]])
    >>> unfragmented_threshold(S, (0.0, 0.1, 0.4), min_size=2)
    0.1
    """
    S = sp.csr_array(S)
    n = S.shape[0]
    if min_size is None:
        min_size = max(5, int(np.ceil(0.02 * n)))
    ordered = sorted(float(t) for t in thresholds)
    # Every graph but the smallest threshold's lies inside the one at the second
    # smallest: cut that one from S once, the larger thresholds from it (a
    # fraction of S's entries), and S itself only if the scan gets that far.
    inner = entries_from(S, ordered[1]) if len(ordered) > 1 else S
    for i in reversed(range(len(ordered))):
        A = entries_from(S if i == 0 else inner, ordered[i])
        _, comp = connected_components(A, directed=False)
        if np.bincount(comp).min() >= min(min_size, n):
            return ordered[i]
    return ordered[0]


def select_best(scores, scales, thresholds) -> int:
    """Index of the best candidate; among ties the largest scale, then the smallest threshold.

    Tied scores (within ``1e-9``) mean, for the consensus, that the
    candidates gave the same partition of the points they were compared on.
    The largest ``scale`` (beta_2) among them is the smoothest affinity with
    that partition: the sharpest ones can leave the full graph numerically
    disconnected (``docs/benchmarks.md``, 200,000 blobs).  The smallest
    ``threshold`` (beta_1) cuts the fewest edges.

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
        What the rule maximises (``-inf`` or NaN: never chosen unless all are).
    scales, thresholds : array-like of shape (n_candidates,)
        Each candidate's beta_2 and beta_1.

    Returns
    -------
    int
        0 when no score is finite.

    Examples
    --------
    >>> select_best([0.9, 0.9, 0.5], scales=[0.1, 1.0, 5.0], thresholds=[0.0, 0.0, 0.0])
    1
    """
    scores = np.asarray(scores, dtype=float)
    if not np.any(np.isfinite(scores)):
        return 0
    tied = np.flatnonzero(scores >= np.nanmax(scores) - SCORE_TIE)
    # lexsort: the last key is the primary one
    order = np.lexsort((np.asarray(thresholds)[tied], -np.asarray(scales)[tied]))
    return int(tied[order[0]])


def _adjusted_rand(a: np.ndarray, ka: int, b: np.ndarray, kb: int) -> float:
    """Adjusted Rand index of two partitions coded ``0 .. ka - 1`` and ``0 .. kb - 1``.

    The value of :func:`sklearn.metrics.adjusted_rand_score`, to the bit: the
    same pair counts (exact integers, from the contingency table) in the same
    formula.  Without scikit-learn's input checks, which cost milliseconds a
    call, more than the counting at a few thousand points; the candidates of
    one fit are compared pairwise, 45 pairs for 10 of them.  Symmetric in its
    arguments (swapping them swaps two pair counts, the formula is symmetric).
    """
    n = a.shape[0]
    table = np.bincount(a * kb + b, minlength=ka * kb).astype(np.int64)
    squares = int(np.dot(table, table))
    rows = np.bincount(a, minlength=ka).astype(np.int64)
    cols = np.bincount(b, minlength=kb).astype(np.int64)
    tp = squares - n
    fp = int(np.dot(cols, cols)) - squares  # ordered pairs together in b only
    fn = int(np.dot(rows, rows)) - squares  # together in a only
    tn = n * n - fp - fn - squares
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


def _coded(partitions) -> list[tuple[np.ndarray, int]]:
    """Each partition as integer codes ``0 .. k - 1`` and ``k``, all of one length."""
    coded = []
    for labels in partitions:
        uniq, codes = np.unique(np.asarray(labels).reshape(-1), return_inverse=True)
        coded.append((codes.reshape(-1).astype(np.int64), int(uniq.size)))
    if len({c.shape[0] for c, _ in coded}) > 1:
        raise ValueError("the partitions must label the same points")
    return coded


def _pairwise_ari(partitions) -> np.ndarray:
    """Symmetric matrix of adjusted Rand indices between ``partitions`` (diagonal 1)."""
    coded = _coded(partitions)
    m = len(coded)
    ari = np.ones((m, m))
    for i in range(m):
        for j in range(i + 1, m):
            ari[i, j] = ari[j, i] = _adjusted_rand(*coded[i], *coded[j])
    return ari


def consensus_scores(partitions) -> np.ndarray:
    """Mean adjusted Rand index of each partition with all the others.

    The score of ``selection="consensus"`` and ``"unfragmented"``: the
    candidate that agrees best with the others is the partition most
    candidates share.  Pick with :func:`select_best`.

    Parameters
    ----------
    partitions : sequence of array-like of shape (n,)
        Labels of the same points, one array per candidate.

    Returns
    -------
    ndarray of shape (n_candidates,)
        NaN when there are fewer than two candidates.

    Examples
    --------
    >>> consensus_scores([[0, 0, 1, 1], [1, 1, 0, 0], [0, 1, 0, 1]]).round(2)
    array([ 0.25,  0.25, -0.5 ])
    """
    labels = list(partitions)
    if len(labels) < 2:
        return np.full(len(labels), np.nan)
    ari = _pairwise_ari(labels)
    # The mean of a list in the order of the candidates, as before the pairs were
    # computed once each: the same float sums, so the same ties in select_best.
    return np.array(
        [
            float(np.mean([ari[i, j] for j in range(len(labels)) if j != i]))
            for i in range(len(labels))
        ]
    )


def _persistent_components(S, threshold: float) -> int:
    """Components of at least :func:`min_cluster_size` points at the grid threshold below."""
    lower = max((t for t in RPF_THRESHOLDS if t < threshold), default=threshold)
    A = sp.csr_array(S, copy=True)
    A.data[A.data < lower] = 0.0
    A.eliminate_zeros()
    _, comp = connected_components(A, directed=False)
    return max(1, int(np.sum(np.bincount(comp) >= min_cluster_size(S.shape[0]))))


def _relgap_candidates(
    S, grid, seed: int, *, max_clusters: int, eigen_solver: str, eigen_tol: float, verbose
):
    """Score every (beta_1, beta_2, K) by its relative gap; the shared rule picks one."""
    max_k = int(min(max_clusters, S.shape[0] - 1))
    gaps = np.full((len(grid), max_k), np.nan)
    fragmented = np.ones((len(grid), max_k), dtype=bool)
    parts = []
    kept = kept_by_threshold(S)
    for c, (b1, b2) in enumerate(progress(grid, len(grid), verbose, "rpfCluster scales")):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*zero degree", category=UserWarning)
            part = spectral_partitions(
                _sharpen_kept(kept(b1), b2),
                max_k,
                n_init=4,
                solver=eigen_solver,
                random_state=seed,
                tol=eigen_tol,
            )
        gaps[c], fragmented[c] = score_partitions(part, max_k)
        parts.append(part)
    # Connected components of the thresholded kernel are clusters when they
    # persist at the next lower threshold (a split made by beta_1 alone is
    # not: it can cut one Gaussian blob in two); the gaps judge finer splits.
    base_k = min(
        min(n_components(p.eigenvalues) for p in parts),
        _persistent_components(S, min(b1 for b1, _ in grid)),
    )
    best, k_hat, scores = choose_by_relative_gap(gaps, fragmented, base_k=base_k)
    candidates = []
    for c, (b1, b2) in enumerate(grid):
        row = np.where(fragmented[c], -np.inf, np.nan_to_num(gaps[c], nan=-np.inf))
        k_c = int(np.argmax(row)) + 1 if np.isfinite(row.max()) else base_k
        if c == best:
            k_c = k_hat
        labels = parts[c].labels.get(k_c, np.zeros(parts[c].rows.size, dtype=np.intp))
        score = float(gaps[c, k_c - 1]) if k_c > 1 else np.nan
        candidates.append(
            {"threshold": b1, "scale": b2, "n_clusters": k_c, "score": score, "_labels": labels}
        )
    return candidates, best, scores


def _score_stability(
    candidates,
    grid,
    X_sel,
    seed: int,
    *,
    n_forests: int,
    make_forest: Callable[[], Any],
    kernel_neighbors: int | None,
    cluster: Callable[..., dict[str, Any]],
) -> None:
    """Score each candidate by its partition's agreement across redrawn forests.

    ``make_forest()`` gives an unfitted forest like the fit's; ``cluster(S,
    beta_1, beta_2, seed, kept=...)`` clusters one candidate of a kernel
    ``S`` as the fit does.
    """
    partitions = [[c["_res"].labels for c in candidates]]
    for b in range(1, n_forests):
        # Further forests: the same data (or subset), seeds derived from ``seed``.
        other = make_forest().set_params(random_state=(seed + 7919 * b) % (2**31 - 1))
        other.fit(X_sel)
        m = X_sel.shape[0]
        if kernel_neighbors is None:
            S_b = sp.csr_array(other.proximity())
        else:
            S_b = truncated_kernel(other, min(kernel_neighbors, m - 1))
        kept = kept_by_threshold(S_b)
        partitions.append(
            [cluster(S_b, b1, b2, seed, kept=kept(b1))["_res"].labels for b1, b2 in grid]
        )
    # A partition with a cluster of a few points is stable for a trivial
    # reason (the same outliers split off in every forest): such candidates
    # only win when every candidate has one.  Same size as the
    # unfragmented threshold's.
    m = partitions[0][0].shape[0]
    min_size = min(max(5, int(np.ceil(0.02 * m))), m)
    fragmented = [np.bincount(lab).min() < min_size for lab in partitions[0]]
    for j, c in enumerate(candidates):
        labels = [p[j] for p in partitions]
        c["fragmented"] = bool(fragmented[j])
        ari = _pairwise_ari(labels)
        c["score"] = float(
            np.mean([ari[a, b] for a in range(len(labels)) for b in range(a + 1, len(labels))])
        )


def _select(rule: str, candidates: list[dict[str, Any]]) -> int:
    """Index of the candidate ``rule`` picks; sets each candidate's ``score``."""
    if len(candidates) == 1:
        candidates[0]["score"] = np.nan
        return 0
    if rule == "stability":
        scores = np.array([c["score"] for c in candidates])
        fragmented = np.array([c.get("fragmented", False) for c in candidates])
        if not fragmented.all():
            scores = np.where(fragmented, -np.inf, scores)
        return select_best(
            scores,
            np.array([c["scale"] for c in candidates]),
            np.array([c["threshold"] for c in candidates]),
        )
    if rule in ("consensus", "unfragmented"):
        scores = consensus_scores([c["_res"].labels for c in candidates])
        for c, score in zip(candidates, scores, strict=True):
            c["score"] = float(score)
    else:
        for c in candidates:
            values, k = c["_res"].eigenvalues, c["n_clusters"]
            c["score"] = float(values[k - 1] - values[k]) if values.shape[0] > k else -np.inf
    scores = np.array([c["score"] for c in candidates])
    return select_best(
        scores,
        np.array([c["scale"] for c in candidates]),
        np.array([c["threshold"] for c in candidates]),
    )
