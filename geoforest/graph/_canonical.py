"""An order of a graph's nodes that does not depend on the order of the rows.

k-means seeds its centres by drawing rows (k-means++): the same seed picks
other points when the rows come in another order, and where k-means has
several local optima the partition follows the row order
(``docs/results/label-free-levels.md``, round 8). The affinity itself is the
same graph up to that permutation, so it can name its nodes:
:func:`node_keys` gives each node a 64-bit key computed from its edges'
weights and, over a few rounds, its neighbours' keys (the colour refinement
of Weisfeiler and Lehman, with the multiset of each node's neighbour colours
hashed as a sum, which no order of the entries changes). Sorting by the keys
orders the nodes the same way for any row order, so k-means sees the same
rows in the same order and draws the same centres. Nodes with equal keys
have the same weighted neighbourhoods up to the rounds looked at: exact
copies, and *twins* (two mutual neighbours with the same other neighbours,
which the shared-neighbour weights make interchangeable). No rule on the
graph alone tells such nodes apart; they keep their relative order, so a row
order can only swap them.

The keys read exact bit patterns of the weights: a graph built from shifted
data whose weights differ in their last bit gets other keys.  The weights of
:func:`~geoforest.graph.knn_affinity` are the overlaps ``|N(i) ∩ N(j)| /
|N(i) ∪ N(j)|`` of two lists, the same bits for the same lists, so its keys
move only when the lists do.

References
----------
.. [1] B. Weisfeiler and A. Leman, "The reduction of a graph to canonical
   form and the algebra which appears therein", NTI Series 2(9), 1968.
.. [2] N. Shervashidze, P. Schweitzer, E. J. van Leeuwen, K. Mehlhorn and
   K. M. Borgwardt, "Weisfeiler-Lehman graph kernels", JMLR 12, 2011.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["ROUNDS", "canonical_order", "node_keys"]

#: Refinement rounds: each adds the keys of one more ring of neighbours.
ROUNDS = 3
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_ODD = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a bijection of ``uint64`` whose every output bit
    depends on every input bit (integer arithmetic wraps modulo ``2**64``)."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def node_keys(W, rounds: int = ROUNDS) -> np.ndarray:
    """A 64-bit key per node of ``W``, equal for the same node in any row order.

    Parameters
    ----------
    W : ndarray or scipy sparse matrix/array of shape (n, n)
        Weighted graph (an affinity).  Stored entries are edges; their weights
        enter by their exact float64 bits.
    rounds : int, default=ROUNDS
        Refinement rounds.

    Returns
    -------
    ndarray of uint64, shape (n,)
        ``key[perm]`` for ``W[perm][:, perm]``, for any permutation ``perm``.

    Examples
    --------
    >>> W = np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]], dtype=float)
    >>> perm = np.array([2, 0, 1])
    >>> bool(np.array_equal(node_keys(W)[perm], node_keys(W[perm][:, perm])))
    True
    """
    W = sp.csr_array(W)
    n = W.shape[0]
    weights = _mix(np.ascontiguousarray(W.data, dtype=np.float64).view(np.uint64))
    starts = W.indptr[:-1]
    has_edges = np.diff(W.indptr) > 0
    key = np.zeros(n, dtype=np.uint64)
    for _ in range(rounds):
        edges = _mix(weights ^ (key[W.indices] * _ODD + _ODD))
        summed = np.zeros(n, dtype=np.uint64)
        summed[has_edges] = np.add.reduceat(edges, starts[has_edges])
        key = _mix(summed ^ _mix(key + _ODD))
    return key


def canonical_order(W) -> np.ndarray:
    """The nodes of ``W`` sorted by :func:`node_keys` (ties in row order).

    ``order`` for ``W`` and ``order'`` for ``W[perm][:, perm]`` name the same
    nodes, ``perm[order'] == order``, wherever the keys are distinct.
    """
    return np.argsort(node_keys(W), kind="stable")
