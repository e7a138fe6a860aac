"""Walking rows down fitted trees: the leaf each row reaches.

The builder (``builder.py``) grows trees; these kernels read them, packed in
one flat node table for a whole forest (``forest/_flat.py``): ``nodes`` holds
``(left, right, proj_start, proj_end)`` per global node, and a row goes left
when its projection ``sum_j w_j x_j`` over the node's features is ``<=`` the
node's threshold, the rule the builder used to partition the training rows.
"""

from __future__ import annotations

from .._jit import njit


@njit(nogil=True, cache=True)
def apply_flat(X, lo, hi, nodes, threshold, proj_idx, proj_w, node_offset, out):
    """Leaf (local node id) of rows ``lo:hi`` of ``X`` in every tree of a flat forest.

    Tree ``t`` occupies global nodes ``node_offset[t]:node_offset[t + 1]``;
    row ``g`` of the int64 ``nodes`` is ``(left, right, proj_start, proj_end)``
    of global node ``g`` (children as local ids, ``left == -1`` at leaves), so
    a node visit reads one 32-byte row instead of four arrays.  Writes
    ``out[i - lo, t]``.

    Rows go in blocks whose values fit in cache (about 256 kB of ``X``), and
    each block walks the forest tree by tree: the tree's nodes stay in cache
    while the block's rows walk it, and the rows stay in cache across trees
    (row by row over all trees, or blocks of a fixed row count, walk slower:
    ``docs/engine.md``).
    """
    n_trees = node_offset.shape[0] - 1
    block = max(16, 262144 // max(1, X.shape[1] * X.itemsize))
    for b0 in range(lo, hi, block):
        b1 = min(b0 + block, hi)
        for t in range(n_trees):
            base = node_offset[t]
            for i in range(b0, b1):
                out[i - lo, t] = _walk(X, i, nodes, threshold, proj_idx, proj_w, base)


@njit(nogil=True, cache=True, inline="always")
def _walk(X, i, nodes, threshold, proj_idx, proj_w, base):
    """Leaf (local id) of row ``i`` of ``X`` in the tree whose root is global node ``base``.

    The projection is summed here as in :func:`~.projections.project_samples`
    (float32 products added to a float64 from 0.0, in the stored order), so
    the values are the same bit for bit; written out for one row because the
    inlined loop walks faster (``docs/engine.md``).
    """
    g = base
    child = nodes[g, 0]
    while child != -1:
        acc = 0.0
        for q in range(nodes[g, 2], nodes[g, 3]):
            acc += proj_w[q] * X[i, proj_idx[q]]
        g = base + (child if acc <= threshold[g] else nodes[g, 1])
        child = nodes[g, 0]
    return g - base


@njit(nogil=True, cache=True)
def apply_tree_rows(X, rows, t, nodes, threshold, proj_idx, proj_w, node_offset, out):
    """Leaf (local id) of rows ``rows`` of ``X`` in tree ``t`` of a flat forest, into ``out``."""
    base = node_offset[t]
    for k in range(rows.shape[0]):
        out[k] = _walk(X, rows[k], nodes, threshold, proj_idx, proj_w, base)
