"""Per-tree samples that do not depend on the order of the rows.

A tree's sample (``max_samples`` rows, with or without replacement) is drawn
from positions in a *canonical order* of the rows: the rows sorted by a 64-bit
hash of their contents.  Permuting the rows of ``X`` therefore gives every tree
the same set of points, and — because split rules read statistics by sorted
position and never cut between equal values — the same partition.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.typed import Dict

from .._jit import njit
from .rng import randint

_PRIME = np.uint64(0x100000001B3)
_OFFSET = np.uint64(0xCBF29CE484222325)
_S29 = np.uint64(29)
_S32 = np.uint64(32)

#: ``draw_tree_sample`` sorts by counting when ``n_draw * ratio >= max(order) + 1``:
#: one pass over ``max(order) + 1`` counters against ``n_draw log n_draw``
#: comparisons (figures for the switch point in ``docs/engine.md``).
_COUNT_SORT_RATIO = 32


@njit(nogil=True, cache=True)
def _hash_rows(bits):
    n, p = bits.shape
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = _OFFSET
        for j in range(p):
            h = (h ^ np.uint64(bits[i, j])) * _PRIME
            h ^= h >> _S29
        out[i] = h ^ (h >> _S32)
    return out


def canonical_order(X: np.ndarray) -> np.ndarray:
    """Row indices of float32 ``X`` sorted by a hash of each row's values.

    ``-0.0`` and ``0.0`` hash alike.  Identical rows keep their relative order,
    which cannot change anything since they are interchangeable.
    """
    return np.argsort(row_hashes(X), kind="stable")


@njit(nogil=True, cache=True)
def draw_tree_sample(order, n_draw, replace, state):
    """Rows of one tree's sample: ``n_draw`` positions of ``order``, sorted.

    Without replacement this is a partial Fisher-Yates shuffle; with
    replacement, ``n_draw`` independent uniform positions.  ``order`` holds
    row indices (non-negative).  The drawn rows are sorted by counting them
    when there are many (a sample of nearly every row, the common case, is
    sorted in one pass over the rows instead of ``n log n`` comparisons) and
    by ``np.sort`` otherwise; either way the result is the sorted multiset.
    """
    n = order.shape[0]
    out = np.empty(n_draw, dtype=np.int64)
    if replace:
        for k in range(n_draw):
            out[k] = order[randint(state, n)]
    else:
        pos = np.arange(n)
        for k in range(n_draw):
            r = k + randint(state, n - k)
            tmp = pos[k]
            pos[k] = pos[r]
            pos[r] = tmp
            out[k] = order[pos[k]]
    size = order.max() + 1 if n > 0 else 0
    if n_draw * _COUNT_SORT_RATIO < size:
        out.sort()
        return out
    counts = np.zeros(size, dtype=np.int32)  # a row's count is at most n_draw
    for k in range(n_draw):
        counts[out[k]] += 1
    j = 0
    for v in range(size):
        for _ in range(counts[v]):
            out[j] = v
            j += 1
    return out


def row_hashes(X: np.ndarray) -> np.ndarray:
    """The 64-bit hash :func:`canonical_order` sorts float32 rows by.

    A distributed fit hashes each chunk of rows where it lives and sorts the
    hashes across the cluster; ordering by ``(hash, row index)`` gives exactly
    :func:`canonical_order` (whose stable sort breaks ties by row index).
    """
    bits = np.ascontiguousarray(X + np.float32(0.0), dtype=np.float32).view(np.uint32)
    return _hash_rows(bits)


@njit(nogil=True, cache=True)
def draw_positions(n, n_draw, replace, state):
    """Positions in ``[0, n)`` that :func:`draw_tree_sample` takes, in draw order.

    ``np.sort(order[draw_positions(...)])`` is ``draw_tree_sample(order, ...)``
    and the generator ends in the same state, but without an ``n``-long array:
    the partial Fisher-Yates shuffle keeps only the positions it has swapped
    in a hash map, so memory is ``O(n_draw)`` however many rows there are.
    """
    out = np.empty(n_draw, dtype=np.int64)
    if replace:
        for k in range(n_draw):
            out[k] = randint(state, n)
        return out
    swapped = Dict.empty(key_type=types.int64, value_type=types.int64)
    for k in range(n_draw):
        r = k + randint(state, n - k)
        at_k = swapped.get(k, k)
        at_r = swapped.get(r, r)
        swapped[k] = at_r
        swapped[r] = at_k
        out[k] = at_r
    return out
