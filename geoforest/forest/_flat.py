"""The flat query forest and the parallel query tasks that read it.

A fitted forest keeps its trees twice: ``trees_`` (one :class:`Tree` each, as
the builder returns them) and :class:`FlatForest`, every tree's nodes packed in
one set of arrays with global node ids.  Every query (``apply``,
``predict_proba``, ``kneighbors``, ``proximity``) reads the flat copy, so a
kernel walks all trees without a Python loop over them.

Queries run in blocks of at most :data:`CHUNK` rows, one joblib task each.
Every task *returns* its block (any joblib backend, Dask included, can run
it), and the big arrays go as top-level arguments so that Dask scatters them
once per call rather than with every task (``docs/scale.md``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed

from .. import proximity as _proximity
from .._counted_search import counted_rows
from .._engine.builder import Tree
from .._engine.walk import apply_flat, apply_tree_rows
from ..proximity import (
    LeafIndex,
    Queries,
    coleaf_counts,
    forest_kneighbors,
    leaf_lists,
    locality_order,
    scatter_rows,
    search_block,
)

#: Rows per parallel task when pushing points down the forest or gathering neighbours.
CHUNK = 2048


class FlatForest(NamedTuple):
    """All trees of a forest concatenated (global node ids ``node_offset[t] + local``).

    ``nodes[g] = (left, right, proj_start, proj_end)`` (int64; children as
    local ids, ``-1`` at leaves) and ``threshold[g]`` describe global node
    ``g``; its projection is ``proj_idx/proj_weight[proj_start:proj_end]``.
    """

    nodes: np.ndarray
    threshold: np.ndarray
    proj_idx: np.ndarray
    proj_weight: np.ndarray
    node_offset: np.ndarray

    @property
    def left(self) -> np.ndarray:
        """Left child (local id) of every global node, ``-1`` at leaves."""
        return self.nodes[:, 0]

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return sum(a.nbytes for a in self)

    @classmethod
    def from_trees(cls, trees: list[Tree]) -> FlatForest:
        sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
        node_offset = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        nnz = np.array([t.proj_idx.shape[0] for t in trees], dtype=np.int64)
        nnz_offset = np.concatenate([[0], np.cumsum(nnz)])
        nodes = np.empty((int(node_offset[-1]), 4), dtype=np.int64)
        for t, (tree, o) in enumerate(zip(trees, nnz_offset[:-1], strict=True)):
            rows = slice(node_offset[t], node_offset[t + 1])
            nodes[rows, 0] = tree.left
            nodes[rows, 1] = tree.right
            nodes[rows, 2] = tree.proj_ptr[:-1] + o
            nodes[rows, 3] = tree.proj_ptr[1:] + o
        return cls(
            nodes=nodes,
            threshold=np.concatenate([t.threshold for t in trees]),
            proj_idx=np.concatenate([t.proj_idx for t in trees]),
            proj_weight=np.concatenate([t.proj_weight for t in trees]),
            node_offset=node_offset,
        )


#: Which trees a proximity counts for a pair (``BaseForest.proximity_counts``).
METHODS = ("all", "inbag", "oob")


def check_method(method: str) -> None:
    """Refuse a ``method`` that is not one of :data:`METHODS`.

    ``"rfgap"`` is handled before this check where it is served (supervised
    forests), but the message lists it too: a user who mistyped it must learn
    that it exists.
    """
    if method not in METHODS:
        raise ValueError(
            "method must be one of 'all', 'inbag', 'oob' or 'rfgap' (supervised forests), "
            f"got {method!r}"
        )


def row_blocks(n: int) -> list[tuple[int, int]]:
    """Row blocks ``(lo, hi)`` of at most :data:`CHUNK` rows (one parallel task each)."""
    return [(lo, min(lo + CHUNK, n)) for lo in range(0, n, CHUNK)]


def apply_rows(X, lo, hi, *flat) -> np.ndarray:
    """Leaves of rows ``lo:hi`` of ``X`` in every tree of a :class:`FlatForest`."""
    out = np.empty((hi - lo, flat[-1].shape[0] - 1), dtype=np.int32)
    apply_flat(X, lo, hi, *flat, out)
    return out


def tree_rows_leaves(X, rows, t, *flat) -> np.ndarray:
    """Leaves of rows ``rows`` of ``X`` in tree ``t`` of a :class:`FlatForest`."""
    out = np.empty(rows.shape[0], dtype=np.int32)
    apply_tree_rows(X, rows, t, *flat, out)
    return out


def kneighbors_rows(
    queries: Queries, index: LeafIndex, lo: int, hi: int, k: int, exclude_self: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` forest neighbours ``(ind, sim)`` of queries ``queries.order[lo:hi]``."""
    if queries.mask.shape[0] == 0:  # one tree count for every pair: rank by counting
        ind, sim, _ = counted_rows(queries, index, lo, hi, k, k, exclude_self)
        return ind, sim
    ind = np.empty((hi - lo, k), dtype=np.int64)
    sim = np.empty((hi - lo, k), dtype=np.float64)
    block = search_block(index.n_ref)
    forest_kneighbors(queries, index, lo, hi, k, exclude_self, block, ind, sim)
    return ind, sim


def coleaf_matrix(xleaves, yleaves, mask, node_offset, n_jobs: int):
    """Co-leaf counts ``L`` (CSR ``(n_x, n_y)`` int32) of two sets of points' leaves.

    ``mask`` (uint8 ``(n, n_trees)`` or None) says which trees count for a
    point.  Columns are numbered, and rows visited, in leaf order (see
    :func:`~geoforest.proximity.locality_order`); blocks of rows run in
    parallel threads and each row is placed at its own index at the end.
    """
    empty = np.zeros((0, 0), dtype=np.uint8)
    qmask = empty if mask is None else mask
    col_order = locality_order(yleaves)
    row_order = col_order if xleaves is yleaves else locality_order(xleaves)
    ptr, members = leaf_lists(yleaves, node_offset, qmask, col_order)
    n_rows, n_cols = xleaves.shape[0], yleaves.shape[0]
    chunks = row_blocks(n_rows)
    queries = Queries(xleaves, qmask, row_order)
    # The columns' masks are in their leaf lists: the index needs none.
    index = LeafIndex(node_offset, ptr, members, col_order, empty, n_cols)
    block, scan_ratio = search_block(n_cols), _proximity.COLEAF_SCAN_RATIO
    pieces = Parallel(n_jobs=max(1, min(n_jobs, len(chunks))), prefer="threads")(
        delayed(coleaf_counts)(queries, index, lo, hi, block, scan_ratio) for lo, hi in chunks
    )
    # Pieces hold rows in row_order: place each row at its own index.
    row_nnz = np.empty(n_rows, dtype=np.int64)
    for (lo, hi), (p_indptr, _, _) in zip(chunks, pieces, strict=True):
        row_nnz[row_order[lo:hi]] = np.diff(p_indptr)
    indptr = np.concatenate([[0], np.cumsum(row_nnz)])
    indices = np.empty(indptr[-1], dtype=np.int32)
    data = np.empty(indptr[-1], dtype=np.int32)
    for (lo, hi), (p_indptr, p_indices, p_data) in zip(chunks, pieces, strict=True):
        scatter_rows(p_indptr, p_indices, p_data, row_order[lo:hi], indptr, indices, data)
    return sp.csr_array((data, indices, indptr), shape=(n_rows, n_cols))
