"""Every array a tree's node loop writes, made once per tree (``builder.build_tree``).

:func:`tree_buffers` gives the loop its buffers: the tree's own arrays
(:func:`new_tree`, cut to size at the end by :func:`finish_tree`), the
candidates' (:class:`Candidates`), the projected values' (:class:`ValueScratch`
and the two value arrays the loop swaps), the supervised task's
(:class:`~.labels.LabelBuffers`) and the stack of pending nodes
(:func:`pending_root`).  Bundles are named tuples read by field name: the
loop's steps take one bundle instead of a run of arrays, several of the same
dtype and length, whose order nothing would check.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit
from .labels import label_buffers
from .nodes import STACK_COLUMNS, push


class Candidates(NamedTuple):
    """A node's candidate projections and the best one so far (:func:`candidate_buffers`)."""

    perm: np.ndarray  # int32 feature permutation the samplers shuffle
    ptr: np.ndarray  # int64 (n_proj + 1): candidate j is idx/w[ptr[j]:ptr[j + 1]]
    idx: np.ndarray  # int32 features of the drawn candidates
    w: np.ndarray  # float32 their weights
    win_idx: np.ndarray  # int32 the winning projection, kept across batches
    win_w: np.ndarray  # float32
    g_idx: np.ndarray  # int32 the candidate being tried, where it may grow
    g_w: np.ndarray  # float32
    known: np.ndarray  # int32 features, those known constant in a node first
    known_at: np.ndarray  # int32 where each feature is in ``known``


class ValueScratch(NamedTuple):
    """Scratch of a node's projected values (:func:`value_buffers`)."""

    z_sorted: np.ndarray  # float64 a candidate's values, sorted
    sort_keys: np.ndarray  # int64 the sort's stack of ranges
    sort_tmp: np.ndarray  # float64 its partition or scatter buffer
    part_buf: np.ndarray  # the partition's right side (dtype of the samples)


@njit(nogil=True, cache=True)
def new_tree(cap, width):
    """Empty ``builder.Tree`` arrays for up to ``cap`` nodes (every node a leaf until split);
    ``width`` columns of ``value`` (classes, outputs, or 0)."""
    return (
        np.full(cap, -1, dtype=np.int32),
        np.full(cap, -1, dtype=np.int32),
        np.full(cap, np.nan),
        np.zeros(cap + 1, dtype=np.int64),
        np.empty(cap, dtype=np.int32),
        np.empty(cap, dtype=np.float32),
        np.zeros(cap, dtype=np.int32),
        np.full(cap, np.nan),
        np.zeros((cap, width)),
    )


@njit(nogil=True, cache=True)
def finish_tree(tree_arrays, n_nodes, nnz, node_lo, node_hi, n):
    """The fitted arrays cut to size, and the leaf of every sample.

    Partitions are final, so each leaf's range of ``samples`` holds exactly
    the samples that reach it.
    """
    left, right, threshold, proj_ptr, proj_idx, proj_w, n_node, gain, value = tree_arrays
    sample_leaf = np.empty(n, dtype=np.int32)
    for node in range(n_nodes):
        if left[node] == -1:
            sample_leaf[node_lo[node] : node_hi[node]] = node
    tree = (
        left[:n_nodes].copy(),
        right[:n_nodes].copy(),
        threshold[:n_nodes].copy(),
        proj_ptr[: n_nodes + 1].copy(),
        proj_idx[:nnz].copy(),
        proj_w[:nnz].copy(),
        n_node[:n_nodes].copy(),
        gain[:n_nodes].copy(),
        value[:n_nodes].copy(),
    )
    return tree, sample_leaf


@njit(nogil=True, cache=True)
def candidate_buffers(X, n_proj, max_nnz):
    """The :class:`Candidates` of a tree on ``X``: ``n_proj`` candidates of at
    most ``max_nnz`` nonzeros each."""
    return Candidates(
        perm=np.arange(X.shape[1]).astype(np.int32),
        ptr=np.zeros(n_proj + 1, dtype=np.int64),
        idx=np.empty(n_proj * max_nnz, dtype=np.int32),
        w=np.empty(n_proj * max_nnz, dtype=np.float32),
        win_idx=np.empty(max_nnz, dtype=np.int32),
        win_w=np.empty(max_nnz, dtype=np.float32),
        g_idx=np.empty(max_nnz, dtype=np.int32),
        g_w=np.empty(max_nnz, dtype=np.float32),
        known=np.arange(X.shape[1]).astype(np.int32),
        known_at=np.arange(X.shape[1]).astype(np.int32),
    )


@njit(nogil=True, cache=True, inline="always")
def value_buffers(samples):
    """Per-value scratch of a tree on ``samples``: ``(z_cur, z_best, scratch)``.

    ``z_cur`` and ``z_best`` (the candidate's and the best candidate's values)
    are apart from the :class:`ValueScratch`: the loop swaps them.
    """
    n = samples.shape[0]
    scratch = ValueScratch(
        z_sorted=np.empty(n),
        sort_keys=np.empty(n, dtype=np.int64),
        sort_tmp=np.empty(n),
        part_buf=np.empty(n, dtype=samples.dtype),
    )
    return np.empty(n), np.empty(n), scratch


@njit(nogil=True, cache=True, inline="always")
def pending_root(cap, n, n_batches):
    """The stack of pending nodes holding the root, and each node's range of samples.

    ``(stack, top, node_lo, node_hi)``; a stack row is ``(lo, hi, depth,
    parent, is_left, batches, n_const)`` (:func:`~.nodes.push`).
    """
    stack = np.empty((cap, STACK_COLUMNS), dtype=np.int64)
    node_lo, node_hi = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
    return stack, push(stack, 0, 0, n, 0, -1, 1, n_batches, 0), node_lo, node_hi


@njit(nogil=True, cache=True, inline="always")
def tree_buffers(X, samples, cap, n_proj, max_nnz, n_classes, n_outputs, n_batches):
    """Every array a tree's node loop writes: ``(tree, candidates, values, labels, pending)``.

    The tree's arrays for ``cap`` nodes (:func:`new_tree`), the
    :class:`Candidates`, the values' buffers (:func:`value_buffers`), the
    :class:`~.labels.LabelBuffers` and the stack of pending nodes holding the
    root (:func:`pending_root`).
    """
    return (
        new_tree(cap, n_classes if n_classes > 0 else n_outputs),
        candidate_buffers(X, n_proj, max_nnz),
        value_buffers(samples),
        label_buffers(samples.shape[0], n_classes, n_outputs),
        pending_root(cap, samples.shape[0], n_batches),
    )
