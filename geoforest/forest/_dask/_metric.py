"""The training rows the learned metric's estimate reads, for a forest grown from
a Dask array (``forest/_relevance.py``, ``_dask_pools``).

The estimate reads, besides the forest's proximity neighbours, the estimate
rows (at most 2,000, picked in the canonical order), the rows of their
neighbour pools and the column variances.  Here each is fetched from where
the rows are: the rows' positions are looked up in the fit's sorting groups,
and only the rows asked for travel, never the data set.
"""

from __future__ import annotations

import numpy as np

from ._fit import CanonicalOrder


def canonical_rows_at(X, order, positions: np.ndarray) -> np.ndarray:
    """The rows at ``positions`` of the canonical order of the Dask array ``X``.

    ``order``: the fit's :class:`~._fit.CanonicalOrder` (or an ndarray), or
    ``None``: then ``X``, the forest's float32 rows, is hashed and sorted
    again, which gives the same order (the fit hashes those float32 values).
    """
    if order is None:
        order = CanonicalOrder.of(X)
    if isinstance(order, np.ndarray):
        return order[positions]
    return order.take(positions)


def take_rows(X, rows: np.ndarray) -> np.ndarray:
    """``X[rows]`` (sorted indices) of the Dask array ``X``, as a contiguous ndarray."""
    return np.ascontiguousarray(X[rows].compute())


def rows_and_variances(X, rows: np.ndarray):
    """``(X[rows], column variances)`` in one pass over the Dask array ``X``: the
    rows (sorted indices) as an ndarray, the float64 variance of every column
    (about the float64 mean, as ``_relevance.column_variances``)."""
    import dask

    dev = X - X.mean(axis=0, dtype=np.float64)
    X_rows, var = dask.compute(X[rows], (dev * dev).mean(axis=0))
    return np.ascontiguousarray(X_rows), np.asarray(var, dtype=np.float64)
