"""The neighbour search by co-leaf counts against brute force, in each way of keeping counts."""

from __future__ import annotations

import numpy as np
import pytest

from geoforest._counted_search import CountedRows, CountedSearch, counted_neighbors
from geoforest.proximity import LeafIndex, Queries, leaf_lists, locality_order


def brute(leaves, qleaves, n_cand, width, exclude_self):
    """Rows by definition: counts, the n_cand best by (count desc, index asc) and
    the ties of the last up to width, padded with the lowest free indices."""
    n, n_trees = leaves.shape
    out = []
    for i in range(qleaves.shape[0]):
        counts = (leaves == qleaves[i]).sum(axis=1)
        idx = np.array([j for j in range(n) if not (exclude_self and j == i) and counts[j] > 0])
        order = idx[np.lexsort((idx, -counts[idx]))] if idx.size else idx
        if order.size >= n_cand:
            c_star = counts[order[n_cand - 1]]
            order = order[counts[order] >= c_star]
        row = [(int(j), counts[j] / n_trees) for j in order[:width]]
        if len(row) < n_cand:
            taken = {j for j, _ in row}
            free = [j for j in range(n) if j not in taken and not (exclude_self and j == i)]
            row += [(j, 0.0) for j in free[: width - len(row)]]
        out.append(row)
    return out


def run(leaves, qleaves, n_cand, width, exclude_self, scan_block, scan_ratio):
    n, n_trees = leaves.shape
    node_offset = np.arange(n_trees + 1, dtype=np.int64) * (leaves.max() + 1)
    order = locality_order(leaves)
    ptr, members = leaf_lists(leaves, node_offset, np.zeros((0, 0), np.uint8), order)
    qorder = order if exclude_self else locality_order(qleaves)
    n_q = qleaves.shape[0]
    no_mask = np.zeros((0, 0), np.uint8)
    queries = Queries(qleaves, no_mask, qorder)
    index = LeafIndex(node_offset, ptr, members, order, no_mask, n)
    search = CountedSearch(n_cand, width, exclude_self, scan_ratio)
    out = CountedRows(
        np.full((n_q, width), -1, dtype=np.int64),
        np.full((n_q, width), np.nan),
        np.empty(n_q, dtype=np.int64),
    )
    counted_neighbors(queries, index, 0, n_q, search, out, scan_block if scan_ratio else None)
    ind, sim, n_out = out
    rows = [None] * n_q
    for p in range(n_q):
        i = qorder[p]
        rows[i] = [(int(ind[p, q]), sim[p, q]) for q in range(n_out[p])]
    return rows


# (trees, leaves per tree): few leaves make high counts, so the scan's word test
# meets floors above 128 (its inexact branch) with 200 trees; 300 trees cannot
# use one-byte counters at all.
@pytest.mark.parametrize("n_trees, n_leaves", [(9, 6), (40, 3), (200, 2), (300, 3)])
@pytest.mark.parametrize(
    "scan_block, scan_ratio",
    [(1 << 15, 0), (8, 10**9), (16, 10**9), (1 << 15, 10**9)],
    ids=["listed", "scan-blocks-of-8", "scan-blocks-of-16", "scan-one-block"],
)
@pytest.mark.parametrize("exclude_self", [True, False])
def test_counted_neighbors_match_brute_force(
    n_trees, n_leaves, scan_block, scan_ratio, exclude_self
):
    rng = np.random.default_rng(n_trees)
    leaves = rng.integers(0, n_leaves, (61, n_trees)).astype(np.int32)
    leaves[:8] = leaves[30:38]  # points sharing every leaf: counts of n_trees
    leaves[8:12, : n_trees // 2] = leaves[40:44, : n_trees // 2]  # ... or half of them
    qleaves = leaves if exclude_self else rng.integers(0, n_leaves, (23, n_trees)).astype(np.int32)
    for n_cand, width in [(1, 1), (5, 5), (5, 20), (60, 60)]:
        got = run(leaves, qleaves, n_cand, width, exclude_self, scan_block, scan_ratio)
        want = brute(leaves, qleaves, n_cand, width, exclude_self)
        assert got == want
