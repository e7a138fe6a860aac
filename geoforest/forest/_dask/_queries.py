"""Queries of a fitted forest on a ``dask.array.Array``: Dask arrays in, Dask arrays out.

``apply``, ``transform``, ``proximity``, ``kneighbors``, ``kneighbors_graph``,
``predict_proba`` and ``predict`` of a forest fitted in memory come here
(through the entry points of ``forest/_dask/__init__.py``) when ``X`` is a Dask array.
Each row chunk of ``X`` becomes one task that runs the in-memory method on its
block, on whichever worker holds the block, so ``X`` is never gathered on the
client and every row's answer is the in-memory one (each row's leaves,
neighbours and probabilities depend on that row and the forest alone).

The forest is one node of the graph (``dask.delayed(forest, pure=True)``), a
dependency of every block task, not an argument pickled into each of them: it
travels to the cluster once and to each worker at most once.  ``kneighbors``
also needs the training points' leaves, which pickling drops
(``BaseForest.__getstate__``); they are one more node, computed by one task
from the forest, and likewise sent to each worker at most once.

Nothing here imports Dask at module level, so the library imports without it:
:func:`~geoforest._validation.is_dask_array` looks only at the type's module.
"""

from __future__ import annotations

import numpy as np

from ..._limits import check_dense_size
from ..._sparse import neighbors_rows_graph
from ..._validation import check_n_neighbors


def whole_rows(X):
    """The 2-D Dask array ``X`` with a single chunk along its columns (rechunked if needed).

    A block must hold whole rows: the trees project rows onto several features.
    """
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D dask array, got {X.ndim} dimension(s)")
    return X.rechunk({1: -1}) if X.numblocks[1] > 1 else X


def _rows_only(forest, X):
    """:func:`whole_rows` of queries, their number of features checked before any task runs."""
    X = whole_rows(X)
    if X.shape[1] != forest.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(forest).__name__} is expecting "
            f"{forest.n_features_in_} features as input"
        )
    return X


def shipped(forest):
    """The forest as one graph node that every block task depends on.

    Block queries read the flat copy of the trees, never the per-tree arrays
    (``trees_``: sample counts, gains, class values), so those stay on the
    client, which halves what every query graph carries; ``trees_`` becomes a
    list of ``None`` of the same length.  A forest grown from a Dask array
    also goes without its training data and in-bag counts (lazy Dask arrays
    the block queries do not read).
    """
    import dask

    return dask.delayed(forest._for_workers(), pure=True, traverse=False)


def _call(block, forest, method, kwargs):
    return getattr(forest, method)(block, **kwargs)


def map_query(forest, X, method: str, n_cols: int, dtype, meta=None, **kwargs):
    """``forest.method(block, **kwargs)`` on every row chunk of the Dask array ``X``.

    Parameters
    ----------
    forest : BaseForest
        Fitted forest, shipped as one graph node.
    X : dask.array.Array of shape (n_samples, n_features)
        Queries; rechunked to one chunk along the columns if needed.
    method : str
        Name of the in-memory query method.
    n_cols : int or None
        Columns of the result (``None``: a 1-D result, one value per row).
    dtype, meta
        Of the result's blocks (``meta`` default: an empty ndarray of ``dtype``).

    Returns
    -------
    result : dask.array.Array
        Row chunks as ``X``'s.
    """
    X = _rows_only(forest, X)
    if n_cols is None:
        chunks, drop = (X.chunks[0],), 1
    else:
        chunks, drop = (X.chunks[0], (n_cols,)), None
    if meta is None:  # given, so that Dask does not call the method on a Delayed
        meta = np.empty((0,) * len(chunks), dtype=dtype)
    return X.map_blocks(
        _call,
        shipped(forest),
        method,
        kwargs,
        dtype=dtype,
        chunks=chunks,
        drop_axis=drop,
        meta=meta,
        token=f"geoforest-{method}",
    )


def _training_leaves(forest) -> np.ndarray:
    return forest.apply()


def _kneighbors_block(block, forest, train_leaves, n_neighbors, metric):
    # A copy carrying the training leaves: the forest node, shared by the
    # worker's tasks, is left as it arrived.
    local = forest._with_training_leaves(train_leaves)
    return local._kneighbors(block, n_neighbors, True, "all", metric)


def _take(pair, i):
    return pair[i]


def kneighbors(forest, X, n_neighbors: int, return_distance: bool, metric=None):
    """Forest neighbours of the rows of the Dask array ``X`` among the training points,
    ranked by ``metric`` (the forest's learned metric; ``None``: by proximity).

    One task computes the training points' leaves from the forest node; every
    block task depends on it and on the forest.  Each block task returns its
    ``(dist, ind)`` pair, from which two light tasks take the arrays, so a
    block's neighbours are searched once.

    Returns
    -------
    dist : dask.array.Array of float64, shape (n_queries, n_neighbors)
        Only if ``return_distance``.
    ind : dask.array.Array of int64, shape (n_queries, n_neighbors)
    """
    import dask

    check_n_neighbors(n_neighbors, forest._X_fit.shape[0], is_train=False)
    X = _rows_only(forest, X)
    node = shipped(forest)
    leaves = dask.delayed(_training_leaves, pure=True)(node)
    chunks = (X.chunks[0], (int(n_neighbors),))
    pairs = X.map_blocks(
        _kneighbors_block,
        node,
        leaves,
        int(n_neighbors),
        metric,
        chunks=chunks,
        meta=np.empty((0, 0), dtype=object),
        token="geoforest-kneighbors",
    )
    ind = pairs.map_blocks(
        _take,
        1,
        dtype=np.int64,
        chunks=chunks,
        meta=np.empty((0, 0), np.int64),
        token="geoforest-ind",
    )
    if not return_distance:
        return ind
    dist = pairs.map_blocks(
        _take,
        0,
        dtype=np.float64,
        chunks=chunks,
        meta=np.empty((0, 0), np.float64),
        token="geoforest-dist",
    )
    return dist, ind


def proximity(forest, X, Y, method: str, dense: bool, max_bytes):
    """Rows of ``forest.proximity`` for the row chunks of the Dask array ``X``."""
    import scipy.sparse as sp

    if Y is not None:
        raise ValueError("with a Dask array X, Y must be None (the training points)")
    forest._masks(method, False)  # only "all" is defined for new points
    n_train = forest._X_fit.shape[0]
    if dense:
        check_dense_size(
            (max(X.chunks[0]), n_train),
            np.float64,
            what="a block of proximity(dense=True)",
            max_bytes=max_bytes,
            hint="Use smaller row chunks, or dense=False.",
        )
        return map_query(forest, X, "proximity", n_train, np.float64, dense=True)
    return map_query(forest, X, "proximity", n_train, np.float64, sp.csr_matrix((0, 0)))


def _graph_block(dist, ind, mode, n_train):
    return neighbors_rows_graph(dist, ind, mode, n_train)


def neighbors_graph(dist, ind, mode: str, n_train: int):
    """``kneighbors_graph`` rows from Dask ``(dist, ind)``: one CSR block per row chunk."""
    import dask.array as da
    import scipy.sparse as sp

    return da.map_blocks(
        _graph_block,
        dist,
        ind,
        mode,
        n_train,
        dtype=np.float64,
        chunks=(ind.chunks[0], (n_train,)),
        meta=sp.csr_matrix((0, 0)),
    )
