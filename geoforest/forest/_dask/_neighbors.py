"""Forest neighbours of a forest grown from a Dask array, computed on the workers.

The training points of a distributed fit stay in their chunks
(``_fit.py``).  Their leaves are computed chunk by chunk, and so
is their inverted index: the training points are cut into *reference
partitions* of at most :data:`REF_ROWS` rows (whole chunks), and each partition
builds the leaf lists of its own points (``leaf_lists``), on the worker that
holds its chunks.

A query chunk is searched against every partition (``forest_kneighbors``
with the partition's first row as ``ref_base``).  Within a partition a
candidate's co-leaf count is exact — the partition holds every tree's leaves
of its points — so the partition's top ``k`` by (proximity, lower index) are
exactly the best ``k`` of its points, and the global top ``k`` is the top
``k`` of the union of the partitions' answers (merged pairwise in a tree).
The result is the in-memory answer, ties and padding included.

Ranked by the forest's learned metric, the search and its merge are in
``_ranked.py``.

What crosses the network, per query row: its leaves (``4 x n_trees`` bytes)
to each worker holding a partition, and ``16 x k`` bytes per partition back
to the merge.  The co-leaf counting itself — ``n_trees`` times the leaf size
in training points per query, the bulk of the work — happens next to the
partition's index and moves nothing.
"""

from __future__ import annotations

import numpy as np

from ... import proximity as _proximity
from ..._limits import check_dense_size
from ..._sparse import as_output_csr
from ..._validation import is_dask_array
from ...proximity import (
    LeafIndex,
    Queries,
    coleaf_counts,
    forest_kneighbors,
    leaf_lists,
    locality_order,
    scatter_rows,
    search_block,
)
from .._flat import apply_rows, check_method
from ._queries import map_query, shipped, whole_rows

#: Most training rows per reference partition (whole chunks; a larger chunk is
#: a partition of its own): small enough that the search's counters stay in
#: cache, which decides its speed once leaves hold many training points
#: (figures in ``docs/scale.md``), while merging the answers costs little.
REF_ROWS = 1 << 18

#: Most reference partitions (above ``MAX_PARTITIONS x REF_ROWS`` training rows the
#: partitions grow instead): bounds the answers merged per query row.
MAX_PARTITIONS = 64

#: Query rows per block when a Dask-fitted forest is asked about in-memory points.
QUERY_ROWS = 1 << 16

_EMPTY_MASK = np.zeros((0, 0), dtype=np.uint8)

#: Index of a partition's missing or cut candidates (at proximity -1, after every real one).
_NONE = np.iinfo(np.int64).max


def refuse(what: str):
    """Fail loudly where a forest grown from a Dask array has no distributed path,
    saying what it has."""
    raise NotImplementedError(
        f"{what} is not available for a forest grown from a Dask array: its "
        "training points stay on the workers. Available there: kneighbors() "
        "(method='all', ranked by distance_, the learned metric or proximity) "
        "and kneighbors_graph(X) of new points, proximity(X) (method='all', Y=None), "
        "apply(), transform(), feature_relevance_ and the queries of new points; "
        "fit on X.compute() for the rest."
    )


def _queries(forest, X, method: str, what: str, prepared: bool = False):
    """The queries' leaves as a Dask array: the training points' (``X=None``) or ``X``'s.

    Only ``method="all"`` is distributed; an in-memory ``X`` is pushed down
    the forest here and cut into blocks of :data:`QUERY_ROWS` rows
    (``prepared``: ``X`` is already the forest's float32).
    """
    import dask.array as da

    check_method(method)
    if method != "all":
        refuse(f"{what}(method={method!r})")
    if X is None:
        return training_leaves(forest)
    if is_dask_array(X):
        return map_query(forest, X, "apply", len(forest.trees_), np.int32)
    leaves = forest._apply(X) if prepared else forest.apply(X)
    return da.from_array(leaves, chunks=(QUERY_ROWS, -1))


def _query_rows(forest, X, method: str, prepared: bool):
    """``(leaves, features)`` of the queries as Dask arrays with the same row
    chunks: the features in the forest's float32 (validated, centred), which the
    learned metric's distances read, and the leaves pushed down from them."""
    import dask.array as da

    check_method(method)
    if method != "all":
        refuse(f"kneighbors(method={method!r})")
    if X is None:
        return training_leaves(forest), forest._X_fit
    if is_dask_array(X):
        if prepared:
            Xq = whole_rows(X)
        else:
            p = forest.n_features_in_
            Xq = map_query(forest, X, "_validate_X", p, np.float32, reset=False)
        return _leaves_of_rows(forest, Xq, "geoforest-query-leaves"), Xq
    Xq = X if prepared else forest._validate_X(X, reset=False)
    chunks = (QUERY_ROWS, -1)
    return da.from_array(forest._apply(Xq), chunks=chunks), da.from_array(Xq, chunks=chunks)


def _leaves_block(block, forest):
    return apply_rows(block, 0, block.shape[0], *forest._flat)


def _leaves_of_rows(forest, X, token: str):
    """Leaves (n x n_trees int32) of the float32 rows of the Dask array ``X`` (its row chunks)."""
    n_trees = len(forest.trees_)
    chunks = (X.chunks[0], (n_trees,))
    meta = np.empty((0, 0), np.int32)
    node = shipped(forest)
    return X.map_blocks(_leaves_block, node, dtype=np.int32, chunks=chunks, meta=meta, token=token)


def training_leaves(forest):
    """Leaves of the training points (n x n_trees int32) as a Dask array with their row chunks."""
    return _leaves_of_rows(forest, forest._X_fit, "geoforest-train-leaves")


def _partitions(chunks: tuple[int, ...]) -> list[tuple[int, int]]:
    """Consecutive chunks grouped into reference partitions.

    At most :data:`REF_ROWS` rows each, unless that would make more than
    :data:`MAX_PARTITIONS` of them: every partition sends ``16 x k`` bytes per
    query row to the merge, so their number, not their size, is capped then.
    """
    limit = max(REF_ROWS, -(-sum(chunks) // MAX_PARTITIONS))
    out, first, rows = [], 0, 0
    for c, size in enumerate(chunks):
        if c > first and rows + size > limit:
            out.append((first, c))
            first, rows = c, 0
        rows += size
    out.append((first, len(chunks)))
    return out


def _ref_index(node_offset, *leaf_blocks):
    """A partition's leaf lists, numbered in its own leaf order."""
    leaves = np.concatenate(leaf_blocks) if len(leaf_blocks) > 1 else leaf_blocks[0]
    order = locality_order(leaves)
    ptr, members = leaf_lists(leaves, node_offset, _EMPTY_MASK, order)
    return ptr, members, order


def _indexes(forest, delayed):
    """``(leaf lists, first row, rows)`` of every reference partition (Delayed lists)."""
    train = training_leaves(forest)
    node_offset = forest._flat.node_offset
    bounds = np.concatenate([[0], np.cumsum(train.chunks[0])]).astype(np.int64)
    blocks = list(train.to_delayed().ravel())
    ref_index = delayed(_ref_index, pure=True)
    return [
        (ref_index(node_offset, *blocks[a:b]), int(bounds[a]), int(bounds[b] - bounds[a]))
        for a, b in _partitions(train.chunks[0])
    ]


def partition_index(lists, node_offset, ref_base: int, n_ref: int) -> LeafIndex:
    """The :class:`~geoforest.proximity.LeafIndex` of a reference partition from
    its leaf lists (``_ref_index``): ``n_ref`` training rows from ``ref_base``."""
    ptr, members, order = lists
    return LeafIndex(node_offset, ptr, members, order, _EMPTY_MASK, int(n_ref), int(ref_base))


def _search(qleaves, lists, node_offset, ref_base, n_ref, q_base, k, exclude_self):
    """Top ``k`` of one partition for every query of a block (query rows in order)."""
    index = partition_index(lists, node_offset, ref_base, n_ref)
    n_q = qleaves.shape[0]
    ind = np.empty((n_q, k), dtype=np.int64)
    sim = np.empty((n_q, k), dtype=np.float64)
    qorder = locality_order(qleaves)
    queries = Queries(qleaves, _EMPTY_MASK, qorder, int(q_base))
    forest_kneighbors(queries, index, 0, n_q, k, exclude_self, search_block(n_ref), ind, sim)
    out_ind = np.empty_like(ind)
    out_sim = np.empty_like(sim)
    out_ind[qorder] = ind
    out_sim[qorder] = sim
    return out_ind, out_sim


def _merge(k, *parts):
    """The best ``k`` per row of several partitions' answers, by (-proximity, index).

    Each answer is ``(ind, sim, ...)``; arrays after the first two (the
    candidates' metric distances) follow their candidates.
    """
    if len(parts) == 1:
        return parts[0]
    columns = [np.concatenate([p[i] for p in parts], axis=1) for i in range(len(parts[0]))]
    best = np.lexsort((columns[0], -columns[1]), axis=1)[:, :k]
    return tuple(np.take_along_axis(c, best, axis=1) for c in columns)


def _tree_merge(delayed, k, parts, merge=_merge):
    while len(parts) > 1:
        parts = [delayed(merge, pure=True)(k, *parts[i : i + 2]) for i in range(0, len(parts), 2)]
    return parts[0]


def _take(pair, i, as_distance):
    return 1.0 - pair[i] if as_distance else pair[i]


def query_bounds(queries) -> np.ndarray:
    """First row of each row chunk of the Dask array ``queries``, and the total."""
    return np.concatenate([[0], np.cumsum(queries.chunks[0])]).astype(np.int64)


def stack_pairs(pairs, qbounds, k: int, return_distance: bool, as_distance: bool):
    """Dask arrays ``(dist, ind)`` (or ``ind``) from one delayed ``(ind, values)``
    pair per query chunk; ``as_distance``: the values are proximities, given
    as ``1 - proximity``."""
    import dask
    import dask.array as da

    take = dask.delayed(_take, pure=True)
    shapes = [(int(qbounds[c + 1] - qbounds[c]), k) for c in range(len(pairs))]

    def column(i, flip, dtype):
        blocks = [
            da.from_delayed(take(p, i, flip), s, dtype=dtype)
            for p, s in zip(pairs, shapes, strict=True)
        ]
        return da.concatenate(blocks, axis=0)

    ind = column(0, False, np.int64)
    return (column(1, as_distance, np.float64), ind) if return_distance else ind


def kneighbors(forest, queries, n_neighbors: int, return_distance: bool, is_train: bool):
    """Forest neighbours of the Dask array of leaves ``queries`` among the training points.

    ``queries`` holds the query points' leaves (``training_leaves`` for the
    training set, whose points then exclude themselves).  Returns Dask arrays
    with the queries' row chunks.
    """
    import dask

    delayed = dask.delayed
    k = int(n_neighbors)
    indexes = _indexes(forest, delayed)
    node_offset = forest._flat.node_offset
    qbounds = query_bounds(queries)
    pairs = []
    for c, qblock in enumerate(queries.to_delayed().ravel()):
        found = [
            delayed(_search, pure=True)(
                qblock, index, node_offset, base, size, int(qbounds[c]), k, is_train
            )
            for index, base, size in indexes
        ]
        pairs.append(_tree_merge(delayed, k, found))
    return stack_pairs(pairs, qbounds, k, return_distance, as_distance=True)


def _proximity_block(qleaves, lists, node_offset, n_ref, n_trees, dense):
    """Proximity of a block of queries to one reference partition (CSR, or dense)."""
    import scipy.sparse as sp

    index = partition_index(lists, node_offset, 0, n_ref)
    n_q = qleaves.shape[0]
    qorder = locality_order(qleaves)
    queries = Queries(qleaves, _EMPTY_MASK, qorder)
    block, scan_ratio = search_block(n_ref), _proximity.COLEAF_SCAN_RATIO
    p_indptr, p_indices, p_data = coleaf_counts(queries, index, 0, n_q, block, scan_ratio)
    row_nnz = np.empty(n_q, dtype=np.int64)
    row_nnz[qorder] = np.diff(p_indptr)
    indptr = np.concatenate([[0], np.cumsum(row_nnz)])
    indices = np.empty(indptr[-1], dtype=np.int32)
    data = np.empty(indptr[-1], dtype=np.int32)
    scatter_rows(p_indptr, p_indices, p_data, qorder, indptr, indices, data)
    S = sp.csr_matrix((data / n_trees, indices, indptr), shape=(n_q, n_ref))
    return S.toarray() if dense else as_output_csr(S)


def proximity_of(forest, X, Y, method: str, dense: bool, max_bytes=None):
    """``forest.proximity`` of a forest grown from a Dask array: a 2-D Dask array.

    Row chunks are the queries' (the training points' for ``X=None``), column
    chunks the reference partitions; each block is CSR (dense with
    ``dense``), computed next to its partition's leaf lists.
    """
    import dask
    import dask.array as da
    import scipy.sparse as sp

    if Y is not None:
        refuse("proximity(Y=...)")
    queries = _queries(forest, X, method, "proximity")
    delayed = dask.delayed
    indexes = _indexes(forest, delayed)
    if dense:
        check_dense_size(
            (max(queries.chunks[0]), max(size for _, _, size in indexes)),
            np.float64,
            what="a block of proximity(dense=True)",
            max_bytes=max_bytes,
            hint="Use smaller row chunks, or dense=False.",
        )
    node_offset = forest._flat.node_offset
    n_trees = len(forest.trees_)
    meta = np.empty((0, 0)) if dense else sp.csr_matrix((0, 0))
    block = delayed(_proximity_block, pure=True)
    rows = []
    for c, qblock in enumerate(queries.to_delayed().ravel()):
        n_q = queries.chunks[0][c]
        rows.append(
            [
                da.from_delayed(
                    block(qblock, lists, node_offset, size, n_trees, dense),
                    (n_q, size),
                    dtype=np.float64,
                    meta=meta,
                )
                for lists, _, size in indexes
            ]
        )
    S = da.block(rows)
    if X is None or is_dask_array(X):
        return S
    S = S.compute()
    return S if dense else as_output_csr(S.tocsr())
