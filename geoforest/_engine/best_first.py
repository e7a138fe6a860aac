"""``max_leaf_nodes``: a grown tree cut back to the splits a best-first builder makes.

scikit-learn grows a tree with ``max_leaf_nodes`` best first: of the nodes
that could still split, the one whose split decreases the impurity most
(weighted by the node's weight) is split next, until the tree has that many
leaves.  The builder here grows depth first, each node's split depending only
on the node's samples and the tree's random state, and stores every split's
gain (the weighted impurity decrease, in the same units as scikit-learn's
``improvement`` times the tree's total weight).  Expanding the same frontier
in the same order over the stored gains therefore yields the tree a
best-first builder would grow from these splits; :func:`keep_best_first`
does that on the grown tree's arrays.  The price is that of the full tree's
growth: the cut happens after it.  It runs outside the node loop
(``forest/_growth.py``), so a forest without ``max_leaf_nodes`` never
compiles it.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit


@njit(nogil=True, cache=True, inline="always")
def _before(gain, a, b):
    """Heap order of nodes ``a`` and ``b``: the larger gain first, ties to the smaller id."""
    return gain[a] > gain[b] or (gain[a] == gain[b] and a < b)


@njit(nogil=True, cache=True)
def _sift(heap, size, gain, i):
    """Move ``heap[i]`` down to its place in the max-heap ``heap[:size]`` of node ids."""
    node = heap[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _before(gain, heap[child + 1], heap[child]):
            child += 1
        if not _before(gain, heap[child], node):
            break
        heap[i] = heap[child]
        i = child
    heap[i] = node


@njit(nogil=True, cache=True)
def best_first_splits(left, right, gain, n_nodes, max_leaves):
    """Which of the first ``n_nodes`` nodes keep their split: a boolean per node.

    Starting from the root, the frontier node with the largest ``gain`` (ties:
    the smaller node id) is split, its children join the frontier if they are
    split in the grown tree, until ``max_leaves`` leaves or no split is left.
    """
    split = np.zeros(n_nodes, dtype=np.bool_)
    heap = np.empty(n_nodes, dtype=np.int64)
    size = 0
    if n_nodes > 0 and left[0] >= 0:
        heap[0] = 0
        size = 1
    leaves = 1
    while size > 0 and leaves < max_leaves:
        node = heap[0]
        split[node] = True
        leaves += 1
        size -= 1
        heap[0] = heap[size]
        _sift(heap, size, gain, 0)
        for child in (left[node], right[node]):
            if left[child] >= 0:
                # Push: up from the end while it ranks before its parent.
                i = size
                size += 1
                while i > 0 and _before(gain, child, heap[(i - 1) // 2]):
                    heap[i] = heap[(i - 1) // 2]
                    i = (i - 1) // 2
                heap[i] = child
    return split


@njit(nogil=True, cache=True)
def keep_best_first(tree_arrays, sample_leaf, max_leaves):
    """The grown tree cut to at most ``max_leaves`` leaves, best first.

    ``tree_arrays`` are a fitted :class:`~geoforest._engine.builder.Tree`'s
    arrays and ``sample_leaf`` the leaf each training sample reached.  The
    kept nodes keep their depth-first pre-order (a node's descendants follow
    it, so the kept ones are renumbered by rank), a node whose split is
    dropped becomes a leaf, and each sample moves to its deepest kept node.
    Returns ``(tree_arrays, sample_leaf)`` of the cut tree, in new arrays.
    """
    left, right, threshold, proj_ptr, proj_idx, proj_w, n_node, gain, value = tree_arrays
    n_nodes = left.shape[0]
    split = best_first_splits(left, right, gain, n_nodes, max_leaves)
    # ``home[node]``: the new id of the kept node that holds ``node``'s samples.
    kept = np.zeros(n_nodes, dtype=np.bool_)
    home = np.empty(n_nodes, dtype=np.int64)
    kept[0] = True
    n_kept = nnz = 0
    for node in range(n_nodes):  # a parent comes before its children in pre-order
        if kept[node]:
            home[node] = n_kept
            n_kept += 1
        if left[node] >= 0:
            for child in (left[node], right[node]):
                kept[child] = split[node]  # only kept nodes split
                home[child] = home[node]  # overwritten if the child is kept
        if split[node]:
            nnz += proj_ptr[node + 1] - proj_ptr[node]
    new_left = np.full(n_kept, -1, dtype=left.dtype)
    new_right = np.full(n_kept, -1, dtype=right.dtype)
    new_threshold = np.full(n_kept, np.nan)
    new_gain = np.full(n_kept, np.nan)
    new_ptr = np.zeros(n_kept + 1, dtype=proj_ptr.dtype)
    new_idx = np.empty(nnz, dtype=proj_idx.dtype)
    new_w = np.empty(nnz, dtype=proj_w.dtype)
    new_n_node = np.empty(n_kept, dtype=n_node.dtype)
    new_value = np.empty((n_kept, value.shape[1]), dtype=value.dtype)
    nnz = 0
    for node in range(n_nodes):
        if not kept[node]:
            continue
        new = home[node]
        if split[node]:
            new_left[new] = home[left[node]]
            new_right[new] = home[right[node]]
            new_threshold[new] = threshold[node]
            new_gain[new] = gain[node]
            for k in range(proj_ptr[node], proj_ptr[node + 1]):
                new_idx[nnz] = proj_idx[k]
                new_w[nnz] = proj_w[k]
                nnz += 1
        new_ptr[new + 1] = nnz
        new_n_node[new] = n_node[node]
        new_value[new, :] = value[node, :]
    leaf = np.empty_like(sample_leaf)
    for i in range(sample_leaf.shape[0]):
        leaf[i] = home[sample_leaf[i]]
    arrays = (
        new_left,
        new_right,
        new_threshold,
        new_ptr,
        new_idx,
        new_w,
        new_n_node,
        new_gain,
        new_value,
    )
    return arrays, leaf
