"""What the graph layer asks of training points held in a Dask array.

A forest grown from a ``dask.array.Array`` keeps its rows on the workers and
searches its neighbours there (``geoforest/forest/_dask``); its lists, ``n``
rows of ``k`` indices, come back to this process, where the graph, its
eigenvectors and k-means run as they do in memory.  Three questions of the
graph layer read the points themselves, and each is answered here without
gathering ``X``:

* :func:`rows_of`: some training rows (a label-free subset, the points of a
  small fit's Gaussian references), fetched by index;
* :func:`copy_groups_of`: which rows are exact copies of one another, from a
  64-bit hash of each row computed on the workers; only rows whose hash
  repeats are fetched and compared exactly, so the groups equal
  :func:`~geoforest.graph._geometry.copy_groups` of the gathered rows (up to
  their numbering);
* :func:`computed`: a result that may be lazy, as an array here.

Dask is imported inside the functions, so the graph layer imports without it.
"""

from __future__ import annotations

import numpy as np

from .._validation import is_dask_array
from ._geometry import copy_groups

__all__ = ["computed", "copy_groups_of", "rows_of"]


def computed(a) -> np.ndarray:
    """``a`` as an in-memory array (a Dask array is computed, anything else converted)."""
    return np.asarray(a.compute() if is_dask_array(a) else a)


def rows_of(X, rows) -> np.ndarray:
    """The rows ``rows`` of ``X`` (in that order) as an in-memory array.

    A Dask array is indexed by the sorted distinct rows, so each chunk
    contributes one slice, and only those rows cross to this process.
    """
    rows = np.asarray(rows, dtype=np.int64)
    if not is_dask_array(X):
        return np.asarray(X[rows])
    distinct, back = np.unique(rows, return_inverse=True)
    return computed(X[distinct])[back.reshape(-1)]


#: Odd 64-bit multipliers of the row hash (splitmix64's finaliser constants).
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def _row_hashes(block: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's float64 values (``-0.0`` hashed as ``0.0``)."""
    words = np.ascontiguousarray(np.asarray(block, dtype=np.float64) + 0.0).view(np.uint64)
    h = np.full(words.shape[0], np.uint64(words.shape[1]), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            h = (h ^ words[:, j]) * _MIX[0]
            h ^= h >> np.uint64(31)
            h *= _MIX[1]
    return h


def copy_groups_of(X) -> np.ndarray | None:
    """Each row of the Dask array ``X``'s group of exact copies, or ``None`` if
    no two rows are equal.

    :func:`~geoforest.graph._geometry.copy_groups` is applied to the rows
    whose hash repeats, so a hash collision between different rows costs a
    fetch, never a wrong group.  Rows equal to no other get groups of their own.
    """
    import dask.array as da

    hashes = computed(da.map_blocks(_row_hashes, X, drop_axis=1, dtype=np.uint64))
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    suspects = np.flatnonzero(counts[inverse.reshape(-1)] > 1)
    if suspects.size == 0:
        return None
    local = copy_groups(rows_of(X, suspects))
    if local is None:
        return None
    label = np.arange(hashes.shape[0], dtype=np.int64)
    # Each group of copies is named by its first row; the names are then numbered 0, 1, ...
    first = np.full(int(local.max()) + 1, hashes.shape[0], dtype=np.int64)
    np.minimum.at(first, local, suspects)
    label[suspects] = first[local]
    return np.unique(label, return_inverse=True)[1].reshape(-1).astype(np.int64)
