"""Growing a forest from a ``dask.array.Array`` whose chunks stay on the workers.

The in-memory fit (``BaseForest._grow``) gives tree ``t`` the rows at
``n_draw`` random *positions* of the canonical order (the rows sorted by
``(hash of the row's float32 values, row index)``; ``_engine/sampling.py``).
The distributed fit keeps every piece of that definition and only changes
where each piece is computed, so each tree is the in-memory tree array for
array, whatever the chunking or the order of the rows:

1. **Checks and shift** — one pass of reductions over the chunks: NaN/inf,
   the column minima and maxima (the centring shift of ``forest/_input.py``
   and the constant-column warning follow from them).
2. **Canonical order, sorted across the cluster** — each chunk hashes its
   float32 rows and splits ``(hash, row)`` pairs by hash range into ``G``
   groups (the hashes are uniform, so the groups are even whatever the
   data); group ``g`` sorts its pairs and *is* the slice
   ``order[start_g : start_g + n_g]`` of the in-memory order.  16 bytes per
   row cross the network once (24 with the float64 duplicate check).
3. **Per tree** — one task replays the tree's draw from its seed
   (:func:`~geoforest._engine.sampling.draw_positions`, ``O(n_draw)``
   memory) and splits the positions by group; each group looks its positions
   up; the rows, sorted, are split by chunk.  One task per chunk takes the
   drawn rows of every tree from it (where the chunk is, before any tree
   grows); one task per tree stacks its rows in row order and grows the tree
   with the generator state the draw left, as the in-memory fit does.  Only
   the tree comes back to the client.

The engine reads a node's rows in increasing row order and a sample's values
only through them, so a tree grown on the stacked sample (local rows
``0..n_draw-1``) equals the tree grown on all of ``X`` with the global rows.

Nothing here holds ``n``-sized data on the client: the fitted forest keeps
the float32 training data as a lazy Dask array (``_X_fit``) and the in-bag
counts as another (``inbag_counts_``), computed from the canonical ranks when
they are asked for.
"""

from __future__ import annotations

import math

import numpy as np

from ..._engine.builder import Tree
from ..._engine.projections import GAUSSIAN
from ..._engine.rng import make_state
from ..._engine.sampling import draw_positions, row_hashes
from ..._progress import progress
from .._growth import grow_tree, tree_limits, tree_sample_size, tree_seeds
from .._input import (
    input_dtype,
    offset_from_range,
    row_hashes64,
    to_float32,
    warn_if_constant,
    warn_rows_merged,
)
from ._queries import whole_rows

#: Canonical-order pairs per sorting group (16 bytes each: 64 MB groups).
GROUP_ROWS = 1 << 22

#: Most bytes of gathered rows the client receives at once (:func:`gather_rows`).
GATHER_BYTES = 1 << 23


# --------------------------------------------------------------------------- checks
def check_dask_X(forest, X):
    """``X`` as a 2-D Dask array of whole rows, or a clear error before any task runs."""
    X = whole_rows(X)
    if any(math.isnan(s) for s in X.shape):
        raise ValueError("X has chunks of unknown size; call X.compute_chunk_sizes() first")
    n, p = X.shape
    name = type(forest).__name__
    if p == 0:
        raise ValueError(f"{name} needs at least 1 feature, got a dask array of shape {X.shape}")
    if n < 2:
        raise ValueError(f"{name} needs at least 2 samples to grow trees, got n_samples={n}")
    kind = np.dtype(X.dtype).kind
    if kind == "c":
        raise ValueError(f"Complex data not supported: X has dtype {X.dtype}")
    if kind not in "biuf":
        raise ValueError(f"X must hold numbers, got a dask array of dtype {X.dtype}")
    return X


def _input_summary(X):
    """Column minima and maxima (float64) and whether every value is finite."""
    import dask
    import dask.array as da

    X64 = X.astype(np.float64)
    finite = da.isfinite(X64).all() if X.dtype.kind == "f" else True
    lo, hi, finite = dask.compute(X64.min(axis=0), X64.max(axis=0), finite)
    return np.asarray(lo), np.asarray(hi), bool(finite)


# --------------------------------------------------------------------------- tasks
def _hash_block(block, base, edges, offset, with64):
    """A chunk's ``(hash, row)`` pairs sorted and split by hash range (one piece per group)."""
    X32 = to_float32(block, offset)
    h = row_hashes(X32)
    idx = np.argsort(h, kind="stable")  # rows ascend within a chunk: ties by row
    h = h[idx]
    rows = idx.astype(np.int64) + base
    h64 = row_hashes64(block)[idx] if with64 else None
    cuts = np.concatenate([[0], np.searchsorted(h, edges), [h.shape[0]]])
    return [
        (h[a:b], rows[a:b], None if h64 is None else h64[a:b])
        for a, b in zip(cuts[:-1], cuts[1:], strict=True)
    ]


def _piece(pieces, g):
    return pieces[g]


def _order_group(*pieces):
    """One group's slice of the canonical order, and its distinct-row counts."""
    h = np.concatenate([p[0] for p in pieces])
    rows = np.concatenate([p[1] for p in pieces])
    idx = np.lexsort((rows, h))
    distinct = (0, 0)
    if pieces and pieces[0][2] is not None:
        h64 = np.concatenate([p[2] for p in pieces])
        distinct = (np.unique(h64).size, np.unique(h).size)
    return rows[idx], distinct


def _first(pair):
    return pair[0]


def _starts(*groups):
    sizes = np.array([g[0].shape[0] for g in groups], dtype=np.int64)
    return np.concatenate([[0], np.cumsum(sizes)])


def _distinct(*groups):
    return tuple(int(sum(g[1][i] for g in groups)) for i in range(2))


def _draw(seed, n, n_draw, replace, starts):
    """A tree's generator state after its draw, and its positions split by group."""
    state = make_state(seed)
    pos = np.sort(draw_positions(n, n_draw, replace, state))
    cuts = np.searchsorted(pos, starts)
    pieces = [pos[cuts[g] : cuts[g + 1]] - starts[g] for g in range(starts.shape[0] - 1)]
    return state, pieces


def _lookup(order_g, draw, g):
    return order_g[draw[1][g]]


def _split_rows(bounds, *rows):
    """A tree's drawn rows, sorted, as local row numbers of each chunk."""
    rows = np.sort(np.concatenate(rows))
    cuts = np.searchsorted(rows, bounds)
    return [rows[cuts[c] : cuts[c + 1]] - bounds[c] for c in range(bounds.shape[0] - 1)]


def _take_all(block, c, offset, *splits):
    """Chunk ``c``'s drawn rows for every tree (float32), one list entry per tree.

    One task per chunk, for all trees at once: it runs where the chunk is,
    before any tree is grown, so the scheduler has no reason to move the
    chunk to a less busy worker.
    """
    return [to_float32(block[split[c]], offset) for split in splits]


def _grow_tree(draw, cfg, limits, fortran, *values):
    """Grow one tree on its stacked sample with the state its draw left."""
    Xs = np.concatenate(values) if len(values) > 1 else values[0]
    Xs = np.asfortranarray(Xs) if fortran else np.ascontiguousarray(Xs)
    rows = np.arange(Xs.shape[0], dtype=np.int64)
    arrays, _, _ = grow_tree(Xs, rows, cfg, limits, draw[0].copy())
    return Tree(*arrays)


# --------------------------------------------------------------------------- fit
def _order_groups(blocks, bounds, offset, with64: bool) -> list:
    """The canonical order in sorting groups (Delayed): step 2 of the module docstring."""
    import dask

    delayed = dask.delayed
    n = int(bounds[-1])
    n_groups = int(min(len(blocks), max(1, -(-n // GROUP_ROWS))))
    edges = np.array([(g << 64) // n_groups for g in range(1, n_groups)], dtype=np.uint64)
    hashed = [
        delayed(_hash_block, pure=True)(b, int(lo), edges, offset, with64)
        for b, lo in zip(blocks, bounds[:-1], strict=True)
    ]
    return [
        delayed(_order_group, pure=True)(*[delayed(_piece, pure=True)(h, g) for h in hashed])
        for g in range(n_groups)
    ]


def _group_rows_at(group, starts, g, positions):
    """The rows at the sorted ``positions`` of the canonical order held by group ``g``."""
    lo, hi = np.searchsorted(positions, [starts[g], starts[g + 1]])
    return group[0][positions[lo:hi] - starts[g]]


class CanonicalOrder:
    """The canonical row order of a distributed fit, left in its sorting groups on
    the workers: what the in-memory fit passes to ``_finish_fit`` as an array,
    with only the lookup of given positions (:meth:`take`).

    Parameters
    ----------
    groups : list of Delayed
        The sorting groups (:func:`_order_groups`).
    starts : Delayed
        Each group's first position.
    n : int
        Rows.
    """

    def __init__(self, groups, starts, n: int):
        self.groups, self.starts, self.shape = groups, starts, (int(n),)

    @classmethod
    def of(cls, X) -> CanonicalOrder:
        """The order of the float32 Dask array ``X`` (hashed and sorted again)."""
        import dask

        bounds = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        groups = _order_groups(list(X.to_delayed().ravel()), bounds, None, False)
        return cls(groups, dask.delayed(_starts, pure=True)(*groups), X.shape[0])

    def take(self, positions: np.ndarray) -> np.ndarray:
        """The rows at ``positions`` of the order (ndarray in, ndarray out, same order)."""
        import dask

        positions = np.asarray(positions, dtype=np.int64)
        sort = np.argsort(positions, kind="stable")
        wanted = positions[sort]
        delayed = dask.delayed
        parts = dask.compute(
            *[
                delayed(_group_rows_at, pure=True)(grp, self.starts, g, wanted)
                for g, grp in enumerate(self.groups)
            ]
        )
        out = np.empty_like(positions)
        out[sort] = np.concatenate(parts) if parts else positions[:0]
        return out


class DaskFit:
    """The lazy graph of a distributed fit: canonical order, per-tree samples, trees.

    Built once per fit; ``trees`` is the list of Delayed trees, ``distinct``
    the Delayed ``(distinct float64 rows, distinct float32 rows)`` (or None
    for float32 input), and :meth:`ranks` the canonical rank of every row as
    a Dask array (for the in-bag counts).
    """

    def __init__(self, X, offset, seeds, n_draw, replace, cfg, limits):
        import dask

        delayed = dask.delayed
        n = X.shape[0]
        self.n, self.n_draw, self.replace, self.seeds = n, n_draw, replace, seeds
        self.bounds = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        with64 = input_dtype(X) is np.float64 and X.dtype != np.float32
        self.blocks = list(X.to_delayed().ravel())
        self.groups = _order_groups(self.blocks, self.bounds, offset, with64)
        orders = [delayed(_first, pure=True)(grp) for grp in self.groups]
        self.starts = delayed(_starts, pure=True)(*self.groups)
        self.distinct = delayed(_distinct, pure=True)(*self.groups) if with64 else None
        fortran = cfg.projection != GAUSSIAN
        draws, splits = [], []
        for seed in seeds:
            draw = delayed(_draw, pure=True)(int(seed), n, n_draw, replace, self.starts)
            rows = [delayed(_lookup, pure=True)(o, draw, g) for g, o in enumerate(orders)]
            draws.append(draw)
            splits.append(delayed(_split_rows, pure=True)(self.bounds, *rows))
        taken = [
            delayed(_take_all, pure=True)(b, c, offset, *splits) for c, b in enumerate(self.blocks)
        ]
        self.trees = [
            delayed(_grow_tree, pure=True)(
                draw, cfg, limits, fortran, *[delayed(_piece, pure=True)(tk, t) for tk in taken]
            )
            for t, draw in enumerate(draws)
        ]


def _compute_trees(fit: DaskFit, verbose) -> tuple[list, tuple | None]:
    """The trees (in order) and the distinct-row counts, with a progress bar if asked."""
    import dask

    extra = [] if fit.distinct is None else [fit.distinct]
    client = _distributed_client() if verbose else None
    if client is None:  # no bar without a distributed client (local schedulers)
        out = dask.compute(*fit.trees, *extra)
    else:
        from distributed import as_completed

        futures = client.compute([*fit.trees, *extra])
        for _ in progress(as_completed(futures), len(futures), verbose, "trees"):
            pass
        out = client.gather(futures)
    trees = list(out[: len(fit.trees)])
    return trees, (out[-1] if extra else None)


def _distributed_client():
    """The current ``distributed`` client, or None (not installed, none running)."""
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        return None


def fit_forest(forest, X):
    """Fit ``forest`` to the Dask array ``X``: trees, lazy training data and in-bag counts."""
    trees, cfg, offset, X32, fit = fit_dask(forest, X)
    if hasattr(forest, "feature_names_in_"):
        del forest.feature_names_in_
    order = CanonicalOrder(fit.groups, fit.starts, fit.n)
    return forest._install_fit(
        trees, X32, offset, inbag_counts(fit), cfg.n_projections, order, tree_seeds=fit.seeds
    )


def fit_dask(forest, X):
    """Grow ``forest``'s trees from the Dask array ``X`` (see the module docstring)."""
    X = check_dask_X(forest, X)
    n, p = X.shape
    lo, hi, finite = _input_summary(X)
    if not finite:
        raise ValueError("Input X contains NaN or infinity.")
    offset = offset_from_range(lo, hi) if input_dtype(X) is np.float64 else None
    lo32, hi32 = (to_float32(v[None, :], offset)[0] for v in (lo, hi))
    if np.all(lo32 == hi32):
        warn_if_constant(np.stack([lo32, hi32]))
    cfg = forest._engine_config(p)
    n_draw = tree_sample_size(forest, n, stacklevel=5)  # the caller of fit
    seeds = tree_seeds(forest.random_state, forest.n_estimators)
    fit = DaskFit(X, offset, seeds, n_draw, bool(forest.bootstrap), cfg, tree_limits(forest))
    trees, distinct = _compute_trees(fit, forest.verbose)
    if distinct is not None:
        warn_rows_merged(*distinct, stacklevel=4)
    X32 = X.map_blocks(to_float32, offset, dtype=np.float32, meta=np.empty((0, 0), np.float32))
    return trees, cfg, offset, X32, fit


# --------------------------------------------------------------------------- in-bag counts
def _rank_pieces(group, starts, g, bounds):
    """Group ``g``'s rows and canonical ranks, split by the chunk that holds each row."""
    order = group[0]
    idx = np.argsort(order, kind="stable")
    rows = order[idx]
    ranks = starts[g] + idx
    cuts = np.searchsorted(rows, bounds)
    return [
        (rows[cuts[c] : cuts[c + 1]] - bounds[c], ranks[cuts[c] : cuts[c + 1]])
        for c in range(bounds.shape[0] - 1)
    ]


def _ranks_block(size, *pieces):
    """Canonical rank of every row of one chunk, from its piece of every group."""
    out = np.empty(size, dtype=np.int64)
    for local, ranks in pieces:
        out[local] = ranks
    return out


def _tree_positions(seed, n, n_draw, replace):
    return np.sort(draw_positions(n, n_draw, replace, make_state(seed)))


def _inbag_block(ranks, *positions):
    out = np.empty((ranks.shape[0], len(positions)), dtype=np.uint8)
    for t, pos in enumerate(positions):
        hits = np.searchsorted(pos, ranks, side="right") - np.searchsorted(pos, ranks)
        out[:, t] = np.minimum(hits, 255)
    return out


def inbag_counts(fit: DaskFit):
    """The in-bag counts (n x trees uint8) as a lazy Dask array with ``X``'s row chunks.

    Row ``i``'s count in tree ``t`` is how often the tree's draw hit ``i``'s
    canonical rank: the same numbers the in-memory fit stores.  Computing it
    sorts the canonical order again (nothing from the fit is kept).
    """
    import dask
    import dask.array as da

    delayed = dask.delayed
    split = [
        delayed(_rank_pieces, pure=True)(grp, fit.starts, g, fit.bounds)
        for g, grp in enumerate(fit.groups)
    ]
    positions = [
        delayed(_tree_positions, pure=True)(int(s), fit.n, fit.n_draw, fit.replace)
        for s in fit.seeds
    ]
    blocks = []
    for c in range(fit.bounds.shape[0] - 1):
        rows = int(fit.bounds[c + 1] - fit.bounds[c])
        pieces = [delayed(_piece, pure=True)(sp, c) for sp in split]
        ranks = delayed(_ranks_block, pure=True)(rows, *pieces)
        block = delayed(_inbag_block, pure=True)(ranks, *positions)
        blocks.append(da.from_delayed(block, (rows, len(fit.seeds)), dtype=np.uint8))
    return da.concatenate(blocks, axis=0)


# --------------------------------------------------------------------------- fitted rows
# What the learned metric's estimate reads of the training rows
# (``forest/_relevance.py``, ``_dask_pools``): the estimate rows, picked in the
# canonical order, the rows of their neighbour pools and the column variances.
# Only the rows asked for travel, never the data set.
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


def _rows_of(block, local):
    return block[local]


def _scheduler_client():
    """The ``distributed`` client ``dask.compute`` would use now, or None (a local
    scheduler, chosen by ``dask.config`` or by default)."""
    try:
        from distributed import Client
    except ImportError:
        return None
    from dask.base import get_scheduler

    client = getattr(get_scheduler(), "__self__", None)
    return client if isinstance(client, Client) else None


def gather_rows(X, rows: np.ndarray, *extra) -> tuple[np.ndarray, list]:
    """``X[rows]`` of the Dask array ``X`` (``rows`` sorted) written straight into
    one array, and the Dask collections ``extra`` computed in the same graph.

    Each chunk's rows are one piece.  On a ``distributed`` cluster the pieces
    are fetched a batch of at most :data:`GATHER_BYTES` at a time and copied
    into place, so the client holds the answer and one batch, never the whole
    answer twice (``X[rows].compute()`` receives it as one message and the
    scheduler's copy of it, in the client's process under a ``LocalCluster``).
    A local scheduler computes them all at once.

    Parameters
    ----------
    X : dask.array.Array of shape (n, p)
        One chunk along the columns.
    rows : ndarray of int64
        Sorted row numbers.
    *extra : dask collections
        Computed with the rows, in one graph (sharing ``X``'s tasks).

    Returns
    -------
    taken : ndarray of shape (len(rows), p), ``X.dtype``, C-contiguous
    extras : list
        The computed ``extra``, in order.
    """
    import dask

    rows = np.asarray(rows, dtype=np.int64)
    bounds = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
    cuts = np.searchsorted(rows, bounds)
    blocks = X.to_delayed().ravel()
    take = dask.delayed(_rows_of, pure=True)
    spans, pieces = [], []
    for c in np.flatnonzero(cuts[1:] > cuts[:-1]):
        lo, hi = int(cuts[c]), int(cuts[c + 1])
        spans.append((lo, hi))
        pieces.append(take(blocks[c], rows[lo:hi] - bounds[c]))
    out = np.empty((rows.shape[0], X.shape[1]), dtype=X.dtype)
    client = _scheduler_client()
    if client is None:
        values = dask.compute(*extra, *pieces)
        for (lo, hi), value in zip(spans, values[len(extra) :], strict=True):
            out[lo:hi] = value
        return out, list(values[: len(extra)])
    futures = client.compute([*extra, *pieces])
    extras = client.gather(futures[: len(extra)])
    _fill(client, out, spans, futures[len(extra) :])
    return out, extras


def _fill(client, out: np.ndarray, spans: list, futures: list) -> None:
    """Copy each gathered piece into ``out[lo:hi]``, fetching consecutive pieces
    of at most :data:`GATHER_BYTES` together (at least one), each batch released
    on the cluster once copied."""
    batch_rows = max(1, GATHER_BYTES // max(1, out[:1].nbytes))
    start = 0
    while start < len(spans):
        stop = start + 1
        while stop < len(spans) and spans[stop][1] - spans[start][0] <= batch_rows:
            stop += 1
        values = client.gather(futures[start:stop])
        for (lo, hi), value in zip(spans[start:stop], values, strict=True):
            out[lo:hi] = value
        del values, value
        for future in futures[start:stop]:
            future.release()
        start = stop


def take_rows(X, rows: np.ndarray) -> np.ndarray:
    """``X[rows]`` (sorted indices) of the Dask array ``X``, as a contiguous ndarray
    (:func:`gather_rows`)."""
    return gather_rows(X, rows)[0]


def rows_and_variances(X, rows: np.ndarray):
    """``(X[rows], column variances)`` in one pass over the Dask array ``X``: the
    rows (sorted indices) as an ndarray (:func:`gather_rows`), the float64
    variance of every column (about the float64 mean, as
    ``_relevance.column_variances``)."""
    dev = X - X.mean(axis=0, dtype=np.float64)
    X_rows, (var,) = gather_rows(X, rows, (dev * dev).mean(axis=0))
    return X_rows, np.asarray(var, dtype=np.float64)
