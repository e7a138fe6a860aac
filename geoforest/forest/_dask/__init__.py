"""Every forest's way to Dask: one door, :func:`route`.

Each public method of a forest first calls ``route(forest, "<method>", X,
...)``.  When Dask has no part in the call — ``X`` is not a Dask array and the
forest was not grown from one — it returns :data:`LOCAL` at the cost of two
type checks, and the method goes on in memory; otherwise it returns the Dask
answer, or refuses, with a clear error, what has no distributed path.

Behind the door:

- ``_queries.py``: queries of any fitted forest on a ``dask.array.Array``,
  block by block on the workers (Dask arrays in, Dask arrays out);
- ``_fit.py``: growing a forest from a Dask array whose chunks stay on the
  workers, tree for tree the in-memory forest;
- ``_neighbors.py``: neighbours and proximities of a forest grown from a Dask
  array, searched on the workers.

These modules import nothing from the estimators: they read a forest through
its public methods and the small interface ``BaseForest`` documents for them
(``_install_fit``, ``_for_workers``, ``_with_training_leaves``,
``_fitted_on_dask``, the supervised forests' ``_prediction_shape``, the
training rows ``_X_fit`` and the flat trees ``_flat``).  Dask itself is
imported only inside functions, so the library imports without it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._sparse import neighbors_rows_graph
from ..._validation import is_dask_array
from . import _fit, _neighbors, _queries
from ._neighbors import refuse

__all__ = ["LOCAL", "refuse", "route"]

#: What :func:`route` returns when the call has nothing to do with Dask.
LOCAL = object()


def _fit_forest(forest, X):
    forest._check_dask_fit()
    return _fit.fit_forest(forest, X)


def _apply(forest, X):
    if is_dask_array(X):
        return _queries.map_query(forest, X, "apply", len(forest.trees_), np.int32)
    if X is None:  # a Dask fit's training points
        return _neighbors.training_leaves(forest)
    return LOCAL  # new in-memory points of a Dask fit: the flat trees are here


def _transform(forest, X):
    if not is_dask_array(X):
        return LOCAL
    import scipy.sparse as sp

    n_leaves = int(np.count_nonzero(forest._flat.left == -1))
    return _queries.map_query(forest, X, "transform", n_leaves, np.float64, sp.csr_matrix((0, 0)))


def _proximity_counts(forest, X):
    if forest._fitted_on_dask:
        refuse("proximity_counts()")
    raise NotImplementedError(
        "proximity_counts() takes in-memory arrays (a Dask array would be gathered on "
        "the client); proximity(X) of a Dask array X is computed block by block on the workers"
    )


def _proximity(forest, X, Y, method, dense, max_bytes):
    if forest._fitted_on_dask:
        return _neighbors.proximity_of(forest, X, Y, method, dense, max_bytes)
    return _queries.proximity(forest, X, Y, method, dense, max_bytes)


def _kneighbors(forest, X, n_neighbors, return_distance, method):
    if forest._fitted_on_dask:
        return _neighbors.kneighbors_of(forest, X, n_neighbors, return_distance, method)
    forest._masks(method, False)  # only "all" is defined for new points
    return _queries.kneighbors(forest, X, n_neighbors, return_distance)


def _kneighbors_graph(forest, X, n_neighbors, mode, method):
    if X is None:  # a Dask fit's training points
        refuse("kneighbors_graph() of the training points")
    dist, ind = forest.kneighbors(X, n_neighbors, return_distance=True, method=method)
    n_train = forest._X_fit.shape[0]
    if is_dask_array(ind):
        return _queries.neighbors_graph(dist, ind, mode, n_train)
    return neighbors_rows_graph(dist, ind, mode, n_train)


def _predict_proba(forest, X):
    if not is_dask_array(X):
        return LOCAL
    return _queries.map_query(forest, X, "predict_proba", forest.n_classes_, np.float64)


def _predict(forest, X):
    if not is_dask_array(X):
        return LOCAL
    n_cols, dtype = forest._prediction_shape()
    return _queries.map_query(forest, X, "predict", n_cols, dtype)


_ROUTES = {
    "apply": _apply,
    "transform": _transform,
    "proximity_counts": _proximity_counts,
    "proximity": _proximity,
    "kneighbors": _kneighbors,
    "kneighbors_graph": _kneighbors_graph,
    "predict_proba": _predict_proba,
    "predict": _predict,
}


def route(forest, name: str, X=None, /, **kwargs: Any):
    """The Dask answer to ``forest.<name>(X, **kwargs)``, or :data:`LOCAL`.

    Parameters
    ----------
    forest : BaseForest
        For ``"fit"`` the forest to grow; for every other method a fitted one.
    name : str
        The public method asking: ``"fit"``, ``"apply"``, ``"transform"``,
        ``"proximity_counts"``, ``"proximity"``, ``"kneighbors"``,
        ``"kneighbors_graph"``, ``"predict_proba"`` or ``"predict"``.
    X : array-like, dask.array.Array or None
        The method's ``X``.
    **kwargs
        The method's other arguments, by name.

    Returns
    -------
    answer : object
        What the method returns, or :data:`LOCAL` when Dask has no part in the
        call (``X`` is not a Dask array and, except for ``"fit"``, the forest
        was not grown from one).

    Raises
    ------
    NotImplementedError
        The call involves Dask and has no distributed path.
    """
    if name == "fit":
        return _fit_forest(forest, X) if is_dask_array(X) else LOCAL
    if not (is_dask_array(X) or forest._fitted_on_dask):
        return LOCAL
    return _ROUTES[name](forest, X, **kwargs)
