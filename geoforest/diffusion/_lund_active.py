"""LUND's active learning: which unlabelled points to ask about next.

Labels reach every point along its chain of nearest denser points, so a
point's answer decides the labels of its free subtree
(:func:`free_subtree_sizes`).  :func:`active_queries` scores the unlabelled
points by that reach times their ambiguity between the two nearest classes
(``strategy="impact"``), or by the margin between those classes alone
(``"boundary"``); see :meth:`geoforest.LUND.query`.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.utils import check_random_state

__all__ = ["active_queries", "free_subtree_sizes", "random_queries"]


def free_subtree_sizes(rank: np.ndarray, parent: np.ndarray, is_seed: np.ndarray) -> np.ndarray:
    """How many points take their label through each point under :func:`propagate_labels`.

    Every point copies the label of its ``parent`` (its nearest denser
    point), so a point's label comes from the first seed on its chain of
    parents.  ``free[i]`` counts ``i`` itself and every point whose chain
    reaches ``i`` before any seed: the points whose label would follow
    ``i``'s if ``i`` were given one.  A seed's count is its own free
    subtree (its label reaches exactly these points).  O(n): one pass in
    increasing density.

    Parameters
    ----------
    rank : ndarray of shape (n,) of int
        Density rank, 0 = densest.
    parent : ndarray of shape (n,) of int
        Nearest denser point, ``-1`` for the densest.
    is_seed : ndarray of shape (n,) of bool
        Points whose label is fixed (they do not pass it on to their parent).

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> rank, parent = np.arange(5), np.array([-1, 0, 1, 2, 1])
    >>> free_subtree_sizes(rank, parent, np.array([True, False, True, False, False]))
    array([3., 2., 2., 1., 1.])
    """
    size = np.ones(rank.size)
    passes = (parent >= 0) & ~np.asarray(is_seed, dtype=bool)
    for i in np.argsort(rank)[::-1]:  # least dense first: children before parents
        if passes[i]:
            size[parent[i]] += size[i]
    return size


def active_queries(
    Y: np.ndarray,
    rank: np.ndarray,
    parent: np.ndarray,
    seeds: np.ndarray,
    seed_labels: np.ndarray,
    n_queries,
    strategy: str,
) -> np.ndarray:
    """The ``n_queries`` points :meth:`geoforest.LUND.query` picks, best first.

    Parameters
    ----------
    Y : ndarray of shape (n, m)
        The diffusion map at the time LUND used.
    rank, parent : ndarray of shape (n,) of int
        Density rank (0 = densest) and nearest denser point (``-1``: none).
    seeds, seed_labels : ndarray of int
        The labelled points and their classes.
    n_queries : int
    strategy : {"impact", "boundary"}

    Returns
    -------
    ndarray of shape (n_queries,) of int
    """
    n = rank.size
    classes = np.unique(seed_labels)
    if classes.size < 2:
        raise ValueError("query needs labelled points of at least two classes")
    is_seed = np.zeros(n, dtype=bool)
    is_seed[seeds] = True
    candidates = np.flatnonzero(~is_seed)
    if not isinstance(n_queries, numbers.Integral) or not 1 <= n_queries <= candidates.size:
        raise ValueError(f"n_queries must be in [1, {candidates.size}], got {n_queries!r}")
    per_class = np.full((candidates.size, classes.size), np.inf)
    for start in range(0, candidates.size, 4096):
        rows = candidates[start : start + 4096]
        D = cdist(Y[rows], Y[seeds])
        for j, c in enumerate(classes):
            per_class[start : start + rows.size, j] = D[:, seed_labels == c].min(axis=1)
    two = np.sort(per_class, axis=1)[:, :2]
    if strategy == "boundary":
        F = two[:, 1] - two[:, 0]
        return candidates[np.lexsort((candidates, F))[: int(n_queries)]]
    with np.errstate(divide="ignore", invalid="ignore"):
        ambiguity = np.where(two[:, 1] > 0, two[:, 0] / two[:, 1], 1.0)
    free = free_subtree_sizes(rank, parent, is_seed)
    score = np.full(n, -np.inf)
    score[candidates] = free[candidates] * ambiguity
    amb = np.zeros(n)
    amb[candidates] = ambiguity
    picked = []
    for _ in range(int(n_queries)):
        i = int(np.argmax(score))  # ties to the lower index
        picked.append(i)
        score[i] = -np.inf
        # The points labelled through i leave its ancestors' free subtrees.
        gone, j = free[i], parent[i]
        while j >= 0:
            free[j] -= gone
            if np.isfinite(score[j]):
                score[j] = free[j] * amb[j]
            if is_seed[j]:
                break
            j = parent[j]
        is_seed[i] = True
    return np.array(picked, dtype=np.intp)


def random_queries(n: int, y, n_queries, random_state) -> np.ndarray:
    """``n_queries`` of the ``n`` points unlabelled in ``y`` (``-1``), drawn uniformly."""
    pool = np.arange(n) if y is None else np.flatnonzero(y < 0)
    if pool.size == 0:
        raise ValueError("random_query has nothing to draw: y labels every point")
    if not isinstance(n_queries, numbers.Integral) or not 1 <= n_queries <= pool.size:
        raise ValueError(
            f"n_queries must be an integer in [1, {pool.size}] (the unlabelled points), "
            f"got {n_queries!r}"
        )
    return check_random_state(random_state).choice(pool, int(n_queries), replace=False)
