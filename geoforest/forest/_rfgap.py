"""RF-GAP proximities of a supervised forest (Rhodes, Cutler & Moon, 2023).

For a training point ``i``, let ``S_i`` be the trees whose sample left ``i``
out; in tree ``t``, let ``M_i(t)`` be the in-bag rows in ``i``'s leaf, each
with its mass ``c_j(t) w_j`` (bootstrap multiplicity times sample weight).
Then

    p(i, j) = 1/|S_i| * sum_{t in S_i} [j in M_i(t)] c_j(t) w_j / sum_{k in M_i(t)} c_k(t) w_k.

Each row sums to 1 (rows no tree left out are all zero), ``p(i, i) = 0``,
and ``sum_j p(i, j) y_j`` is exactly ``i``'s out-of-bag prediction: the mean,
over the trees that left ``i`` out, of the leaf's in-bag weighted mean target
(regression) or class distribution (classification).  That is the paper's
defining property, *geometry- and accuracy-preserving*, which the classical
proximity (the fraction of trees in which two points share a leaf) lacks.
With unit sample weights this is the paper's formula; with weights, the
leaves' values are weighted means and so is the proximity.

A new point counts every tree, so ``sum_j p(x, j) y_j`` is ``predict(x)``
(regression) or ``predict_proba(x)`` (classification).

The result is sparse: a row holds the in-bag members of the query's leaves,
``n_trees`` leaves of a few rows each for fully grown trees.  Computed tree by
tree with numpy; nothing ``n x n`` is formed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._sparse import as_output_csr


def rfgap_proximity(forest, query_leaves: np.ndarray | None) -> sp.csr_matrix:
    """RF-GAP proximities of the queries to the training points, CSR ``(n_q, n_train)``.

    Parameters
    ----------
    forest : fitted supervised forest
        Its training leaves (``apply()``), in-bag counts, fit weights and
        flat trees are read.
    query_leaves : ndarray of int32, shape (n_queries, n_trees), or None
        Leaves of new points (every tree counts), or ``None`` for the training
        points (each counts the trees that left it out).
    """
    train = forest.apply()
    counts = forest.inbag_counts_
    weight = forest._fit_weights
    n_train, n_trees = train.shape
    is_train = query_leaves is None
    queries = train if is_train else query_leaves
    n_q = queries.shape[0]
    n_counted = (counts == 0).sum(axis=1) if is_train else np.full(n_q, n_trees)
    scale = 1.0 / np.maximum(n_counted, 1)
    rows, cols, vals = [], [], []
    for t in range(n_trees):
        members = np.flatnonzero(counts[:, t])
        mass = counts[members, t] * weight[members]
        leaf_of = train[members, t]
        n_leaves = int(max(leaf_of.max(), queries[:, t].max())) + 1
        leaf_mass = np.bincount(leaf_of, weights=mass, minlength=n_leaves)
        share = mass / leaf_mass[leaf_of]
        order = np.argsort(leaf_of, kind="stable")
        start = np.concatenate([[0], np.cumsum(np.bincount(leaf_of, minlength=n_leaves))])
        q = np.flatnonzero(counts[:, t] == 0) if is_train else np.arange(n_q)
        leaf_q = queries[q, t]
        size = start[leaf_q + 1] - start[leaf_q]
        q = np.repeat(q, size)
        # Positions start[leaf] .. start[leaf] + size - 1 of every query's leaf, in order.
        first = np.repeat(start[leaf_q] - np.concatenate([[0], np.cumsum(size)[:-1]]), size)
        pos = order[first + np.arange(first.shape[0])]
        rows.append(q)
        cols.append(members[pos])
        vals.append(share[pos] * scale[q])
    coo = sp.coo_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n_q, n_train)
    )
    return as_output_csr(coo.tocsr())  # sums each (row, column)'s trees


def top_k_rows(P: sp.csr_matrix, k: int, exclude_self: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` largest entries as ``(1 - p, index)``, ascending distance.

    Ties go to the lower index; a row with fewer than ``k`` entries is padded
    with the lowest-index remaining points at distance 1 (the convention of
    every forest's ``kneighbors``), and ``exclude_self`` keeps row ``i`` from
    listing ``i``.
    """
    n_q, n_train = P.shape
    dist = np.empty((n_q, k))
    ind = np.empty((n_q, k), dtype=np.int64)
    for i in range(n_q):
        lo, hi = P.indptr[i], P.indptr[i + 1]
        cols, vals = P.indices[lo:hi].astype(np.int64), P.data[lo:hi]
        best = np.lexsort((cols, -vals))[:k]
        chosen = cols[best]
        m = chosen.shape[0]
        dist[i, :m] = 1.0 - vals[best]
        ind[i, :m] = chosen
        if m < k:
            taken = np.zeros(n_train, dtype=bool)
            taken[chosen] = True
            if exclude_self:
                taken[i] = True
            pad = np.flatnonzero(~taken)[: k - m]
            dist[i, m:] = 1.0
            ind[i, m:] = pad
    return dist, ind
