"""Every forest's way to Dask: one entry point per public method.

Each public method of a forest first calls its own entry point here
(:func:`dask_fit`, :func:`dask_apply`, :func:`dask_kneighbors`, ...).  When
Dask has no part in the call — ``X`` is not a Dask array and the forest was
not grown from one — it returns :data:`LOCAL` at the cost of two type checks,
and the method goes on in memory; otherwise it returns the Dask answer, or
refuses, with a clear error naming what is available, what has no
distributed path.  One function per method, called by name, so that reading
``kneighbors`` leads to the neighbour search and nowhere else.

Behind the entry points:

- ``_queries.py``: queries of any fitted forest on a ``dask.array.Array``,
  block by block on the workers (Dask arrays in, Dask arrays out);
- ``_fit.py``: growing a forest from a Dask array whose chunks stay on the
  workers, tree for tree the in-memory forest, and the training rows the
  learned metric's estimate reads (the estimate rows in the canonical order,
  their pools' rows, the column variances), fetched from where they are;
- ``_neighbors.py``: neighbours and proximities of a forest grown from a Dask
  array, searched on the workers, ranked by proximity or by the forest's
  learned metric;

These modules import nothing from the estimators: they read a forest through
its public methods and the small interface ``BaseForest`` documents for them
(``_install_fit``, ``_for_workers``, ``_with_training_leaves``,
``_fitted_on_dask``, ``_validate_X``, ``_apply``, the supervised forests'
``_prediction_shape``, the training rows ``_X_fit`` and the flat trees
``_flat``), and a learned metric through the ``PartitionRanking`` the
forest hands them (``forest/_ranking.py``).  Dask itself is imported only
inside functions, so the library imports without it.
"""

from __future__ import annotations

import numpy as np

from ..._sparse import neighbors_rows_graph
from ..._validation import is_dask_array
from . import _fit, _neighbors, _queries, _ranked
from ._fit import CanonicalOrder, canonical_rows_at, rows_and_variances, take_rows
from ._neighbors import refuse

__all__ = [
    "LOCAL",
    "CanonicalOrder",
    "canonical_rows_at",
    "dask_apply",
    "dask_fit",
    "dask_kneighbors",
    "dask_kneighbors_graph",
    "dask_predict",
    "dask_predict_proba",
    "dask_proximity",
    "dask_proximity_counts",
    "dask_transform",
    "refuse",
    "rows_and_variances",
    "take_rows",
]

#: What every entry point returns when the call has nothing to do with Dask.
LOCAL = object()


def _involved(forest, X) -> bool:
    """Whether Dask has a part in a query: a Dask ``X``, or a forest grown from one."""
    return is_dask_array(X) or forest._fitted_on_dask


def dask_fit(forest, X):
    """``forest.fit(X)`` of a Dask array ``X`` (``_fit.py``), or :data:`LOCAL`."""
    if not is_dask_array(X):
        return LOCAL
    forest._check_dask_fit()
    return _fit.fit_forest(forest, X)


def dask_apply(forest, X):
    """``forest.apply(X)``: the leaves of a Dask ``X`` or of a Dask fit's training rows."""
    if not _involved(forest, X):
        return LOCAL
    if is_dask_array(X):
        return _queries.map_query(forest, X, "apply", len(forest.trees_), np.int32)
    if X is None:  # a Dask fit's training points
        return _neighbors.training_leaves(forest)
    return LOCAL  # new in-memory points of a Dask fit: the flat trees are here


def dask_transform(forest, X):
    """``forest.transform(X)`` of a Dask ``X``: CSR blocks with its row chunks."""
    if not is_dask_array(X):
        return LOCAL
    import scipy.sparse as sp

    n_leaves = int(np.count_nonzero(forest._flat.left == -1))
    return _queries.map_query(forest, X, "transform", n_leaves, np.float64, sp.csr_matrix((0, 0)))


def dask_proximity_counts(forest, X):
    """``forest.proximity_counts(X)``: refused wherever Dask is involved (it would
    gather the training rows' or ``X``'s leaves on the client)."""
    if not _involved(forest, X):
        return LOCAL
    if forest._fitted_on_dask:
        refuse("proximity_counts()")
    raise NotImplementedError(
        "proximity_counts() takes in-memory arrays (a Dask array would be gathered on "
        "the client); proximity(X) of a Dask array X is computed block by block on the "
        "workers, and so are apply(), transform() and kneighbors()"
    )


def dask_proximity(forest, X, Y, method, dense, max_bytes):
    """``forest.proximity(X, Y, ...)`` with Dask involved, or :data:`LOCAL`."""
    if not _involved(forest, X):
        return LOCAL
    if forest._fitted_on_dask:
        return _neighbors.proximity_of(forest, X, Y, method, dense, max_bytes)
    return _queries.proximity(forest, X, Y, method, dense, max_bytes)


def dask_kneighbors(forest, X, n_neighbors, return_distance, method, ranking, prepared=False):
    """``forest.kneighbors`` with Dask involved, or :data:`LOCAL`.

    ``ranking``: the learned metric ranking the proximity candidates, as a
    ``_ranking.PartitionRanking`` (``None``: rank by proximity);
    ``prepared``: ``X`` holds rows already in the forest's float32 (the
    estimate's rows), not user input.
    """
    if not _involved(forest, X):
        return LOCAL
    if forest._fitted_on_dask:
        return _ranked.kneighbors_of(
            forest, X, n_neighbors, return_distance, method, ranking, prepared
        )
    forest._masks(method, False)  # only "all" is defined for new points
    metric = None if ranking is None else ranking.metric
    return _queries.kneighbors(forest, X, n_neighbors, return_distance, metric)


def dask_kneighbors_graph(forest, X, n_neighbors, mode, method):
    """``forest.kneighbors_graph`` with Dask involved, or :data:`LOCAL`."""
    if not _involved(forest, X):
        return LOCAL
    if X is None:  # a Dask fit's training points
        refuse("kneighbors_graph() of the training points (kneighbors_graph(X) of new points is)")
    dist, ind = forest.kneighbors(X, n_neighbors, return_distance=True, method=method)
    n_train = forest._X_fit.shape[0]
    if is_dask_array(ind):
        return _queries.neighbors_graph(dist, ind, mode, n_train)
    return neighbors_rows_graph(dist, ind, mode, n_train)


def dask_predict_proba(forest, X):
    """``forest.predict_proba(X)`` of a Dask ``X``, or :data:`LOCAL`."""
    if not is_dask_array(X):
        return LOCAL
    return _queries.map_query(forest, X, "predict_proba", forest.n_classes_, np.float64)


def dask_predict(forest, X):
    """``forest.predict(X)`` of a Dask ``X``, or :data:`LOCAL`."""
    if not is_dask_array(X):
        return LOCAL
    n_cols, dtype = forest._prediction_shape()
    return _queries.map_query(forest, X, "predict", n_cols, dtype)
