"""Minimum spanning trees of graphs given by their edges (Kruskal).

A geometry's graph, its bridges included, is a list of edges; the minimum
spanning tree of that list is what LLPD builds its dendrogram on (the minimax
path distance of two points is the longest edge on the tree path joining
them).  :func:`spanning_tree` sorts the edges by length (ties by end points,
so the tree is unique), keeps those that join two trees of a union-find
forest, and joins the trees it cannot connect by edges of infinite length:
their points are at LLPD ``inf``.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ._unionfind import find_root

__all__ = ["join_at_infinity", "spanning_tree"]


@njit(nogil=True, cache=True)
def _kruskal(n, weights, edges):
    """Minimum spanning forest of a graph whose edges are sorted by weight."""
    uf = np.arange(n)
    keep = np.zeros(weights.shape[0], np.bool_)
    for e in range(weights.shape[0]):
        ra = find_root(uf, edges[e, 0])
        rb = find_root(uf, edges[e, 1])
        if ra != rb:
            uf[ra] = rb
            keep[e] = True
    roots = np.empty(n, np.int64)
    for i in range(n):
        roots[i] = find_root(uf, i)
    return keep, roots


def join_at_infinity(weights, pairs, roots):
    """A spanning forest's trees joined into one tree by edges of infinite length."""
    comps = np.unique(roots)
    if comps.size > 1:
        bridges = np.stack([comps[:-1], comps[1:]], axis=1)
        weights = np.concatenate([weights, np.full(comps.size - 1, np.inf)])
        pairs = np.concatenate([pairs, bridges])
    return weights, pairs


def spanning_tree(n: int, rows, cols, lengths) -> tuple[np.ndarray, np.ndarray]:
    """Minimum spanning tree of an undirected graph given by its edges (Kruskal).

    Parameters
    ----------
    n : int
        Number of vertices, at least 1.
    rows, cols : array-like of int
        End points of every edge, in ``[0, n)`` (either direction; self-loops
        are ignored; an edge given twice counts at its shorter length).
    lengths : array-like of float
        Non-negative lengths (``inf`` allowed), one per edge.

    Returns
    -------
    weights : ndarray of shape (n - 1,)
        Non-decreasing; ``inf`` for the edges joining the graph's components.
    edges : ndarray of shape (n - 1, 2)
        ``(i, j)`` with ``i < j`` for the graph's edges; equal lengths go to
        the smaller end points, so the tree is unique.

    Raises
    ------
    ValueError
        Edges of different counts, end points outside ``[0, n)``, or lengths
        that are negative or NaN.

    Examples
    --------
    >>> w, e = spanning_tree(4, [0, 1, 0, 2], [1, 2, 2, 0], [1.0, 2.0, 5.0, 3.0])
    >>> w, e.tolist()
    (array([ 1.,  2., inf]), [[0, 1], [1, 2], [2, 3]])
    """
    n = int(n)
    rows = np.asarray(rows).ravel()
    cols = np.asarray(cols).ravel()
    w = np.asarray(lengths).ravel()
    if n < 1:
        raise ValueError(f"spanning_tree needs at least one vertex, got n={n}")
    if not (rows.size == cols.size == w.size):
        raise ValueError(
            f"spanning_tree needs one length per edge: got {rows.size} rows, {cols.size} "
            f"cols and {w.size} lengths"
        )
    for name, ends in (("rows", rows), ("cols", cols)):
        if ends.size and (
            not np.issubdtype(ends.dtype, np.integer) or ends.min() < 0 or ends.max() >= n
        ):
            raise ValueError(f"spanning_tree's {name} must be integers in [0, {n}), got {ends}")
    if np.iscomplexobj(w) or (w.size and not (w >= 0).all()):
        raise ValueError("spanning_tree's lengths must be real, non-negative and not NaN")
    pairs = np.stack([rows.astype(np.int64), cols.astype(np.int64)], 1)
    pairs.sort(axis=1)
    w = w.astype(np.float64)
    loop = pairs[:, 0] == pairs[:, 1]
    pairs, w = pairs[~loop], w[~loop]
    order = np.lexsort((pairs[:, 1], pairs[:, 0], w))
    w, pairs = w[order], np.ascontiguousarray(pairs[order])
    keep, roots = _kruskal(n, w, pairs)
    return join_at_infinity(w[keep], pairs[keep], roots)
