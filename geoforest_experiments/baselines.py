"""Baseline neighbour finders for the URerF geodesic-precision experiments.

The URerF paper (Figs. 4 and 5) compares the geodesic precision@k of the
neighbours found by an unsupervised randomer forest with those found by other
methods as noise dimensions are added.  This module runs those other methods
"as users would run them" (library defaults unless stated) and returns their
neighbours in exactly the format of
``UnsupervisedForest.kneighbors(n_neighbors=k, return_distance=False)`` with
``X=None``: an ``int64`` array of shape ``(n, k)`` whose row ``i`` lists the
``k`` nearest *other* training points of point ``i`` (never ``i`` itself),
nearest first, ties broken by the lower index.

The baselines, and the "distance" each one ranks by:

``"Euclidean"`` (:func:`euclidean_neighbors`)
    Exact k-nearest neighbours in the ambient space with scikit-learn's
    :class:`~sklearn.neighbors.NearestNeighbors`.  Distance: the Euclidean
    distance in all ``n_features`` dimensions, noise included.

``"Isomap"`` (:func:`isomap_neighbors`)
    scikit-learn's :class:`~sklearn.manifold.Isomap` with ``n_neighbors=5`` and
    its other defaults (``n_components=2``).  Distance: Isomap's geodesic
    estimate ``dist_matrix_``, the shortest-path length in the symmetric
    5-nearest-neighbour graph whose edges carry Euclidean lengths.  If that
    graph is disconnected, scikit-learn (1.9) warns and joins every pair of
    components by one edge between their closest pair of points (Euclidean
    distance) before running the shortest paths, so every distance is finite.
    ``dist_matrix_`` is a dense ``n x n`` matrix: this baseline needs O(n^2)
    memory and O(n^2 log n) time by nature.

``"UMAP"`` (:func:`umap_neighbors`)
    ``umap.UMAP(random_state=random_state)`` with its defaults
    (``n_neighbors=15``, ``n_components=2``, ``min_dist=0.1``).  Distance
    (``source="embedding"``, used by the experiments): the Euclidean distance
    in the 2-D embedding.  With ``source="graph"`` the ranking is by the
    membership strength of UMAP's fuzzy simplicial set ``graph_`` (higher is
    closer), falling back to the embedding distance beyond the graph's
    nonzeros of a row.

``"NNDescent"`` (:func:`nndescent_neighbors`)
    ``pynndescent.NNDescent`` approximate nearest neighbours in the ambient
    space (the paper used FLANN; both are approximate-NN indices of the
    Euclidean distance).  Distance: the Euclidean distance, approximately
    minimised.

``"URF-Breiman"`` (:func:`breiman_urf_neighbors`)
    Breiman's unsupervised random forest, as in Shi & Horvath (2006): a
    scikit-learn :class:`~sklearn.ensemble.RandomForestClassifier` (defaults:
    Gini, ``max_features="sqrt"``, bootstrap, fully grown trees) separates the
    real data (label 1) from synthetic data drawn from the product of its
    marginals (each column of ``X`` permuted independently, label 0).
    Distance: ``1 - proximity``, where the proximity of real points ``i`` and
    ``j`` is the fraction of trees in which they fall in the same leaf,
    averaged over ``n_synthetic`` forests each trained on a fresh synthetic
    sample.  The proximity is built sparsely from the leaf memberships (its
    size is the number of co-leaf pairs; no dense ``n x n`` array is formed,
    although on noisy data that number can approach ``n^2``).

Ties and padding follow :meth:`geoforest.UnsupervisedForest.kneighbors`: equal
distances go to the lower index, and when a forest row has fewer than ``k``
points of nonzero proximity it is padded with the lowest-index remaining
points.

``umap`` and ``pynndescent`` are optional (the ``experiments`` extra); they are
imported only when their baseline runs, so this module imports with numpy,
scipy and scikit-learn alone.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from sklearn.ensemble import RandomForestClassifier
from sklearn.manifold import Isomap
from sklearn.neighbors import NearestNeighbors

__all__ = [
    "BASELINES",
    "baseline_neighbors",
    "breiman_urf_neighbors",
    "breiman_urf_proximity",
    "euclidean_neighbors",
    "isomap_neighbors",
    "nndescent_neighbors",
    "umap_neighbors",
]

BASELINES: tuple[str, ...] = ("Euclidean", "Isomap", "UMAP", "NNDescent", "URF-Breiman")

_EXTRA_HINT = "requires the 'experiments' extra: pip install 'geoforest[experiments]'"

# Rows per block of a dense (rows x n) scratch array: at most ~32 MB of float64.
_BLOCK_ELEMENTS = 1 << 22

# Relative gap below which two consecutive Euclidean distances returned by
# sklearn are treated as a possible tie (the row is then recomputed exactly).
_TIE_RTOL = 1e-7


# --------------------------------------------------------------------------- validation
def _check_X(X: Any) -> np.ndarray:
    """Validate ``X`` as a 2-D finite float array with at least 2 rows."""
    if sp.issparse(X):
        raise ValueError("X must be a dense 2-D array, got a sparse matrix")
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"X must be a 2-D array of numbers: {exc}") from exc
    if arr.ndim != 2:
        raise ValueError(f"X must be a 2-D array, got an array of shape {arr.shape}")
    if arr.shape[0] < 2:
        raise ValueError(f"X must have at least 2 samples, got {arr.shape[0]}")
    if arr.shape[1] < 1:
        raise ValueError("X must have at least 1 feature")
    if not np.isfinite(arr).all():
        raise ValueError("X contains NaN or infinity")
    return arr


def _check_int(value: Any, name: str, low: int, high: int | None = None) -> int:
    """Validate an integer parameter in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f"{low} <= {name}" + (f" <= {high}" if high is not None else "")
        raise ValueError(f"{name} must satisfy {bound}, got {value}")
    return value


def _check_inputs(X: Any, n_neighbors: Any) -> tuple[np.ndarray, int]:
    """Validate ``X`` and ``1 <= n_neighbors <= n_samples - 1``."""
    arr = _check_X(X)
    n = arr.shape[0]
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral):
        raise ValueError(f"n_neighbors must be an integer, got {n_neighbors!r}")
    if not 1 <= n_neighbors <= n - 1:
        raise ValueError(
            f"n_neighbors must satisfy 1 <= n_neighbors <= n_samples - 1 = {n - 1}, "
            f"got {n_neighbors}"
        )
    return arr, int(n_neighbors)


def _import_optional(module: str, baseline: str):
    """Import ``module`` lazily, with a helpful error if it is missing."""
    try:
        with warnings.catch_warnings():
            # umap warns at import that ParametricUMAP needs TensorFlow.
            warnings.filterwarnings("ignore", category=ImportWarning)
            if module == "umap":
                import umap as mod
            else:
                import pynndescent as mod
    except ImportError as exc:
        raise ImportError(f"The {baseline!r} baseline {_EXTRA_HINT}") from exc
    return mod


class _RestoreNumbaThreads:
    """Context manager restoring numba's (thread-local) thread count.

    UMAP and pynndescent call ``numba.set_num_threads`` and restore it only on
    a normal exit; this makes sure an exception cannot leave geoforest's own
    numba kernels running single-threaded.
    """

    def __enter__(self):
        import numba

        self._numba = numba
        self._n = numba.get_num_threads()
        return self

    def __exit__(self, *exc):
        self._numba.set_num_threads(self._n)
        return False


# --------------------------------------------------------------------------- ranking helpers
def _smallest_k(d: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the ``k`` smallest entries of each row, ties to the lower index.

    Parameters
    ----------
    d : ndarray of float64, shape (m, n)
        Distances.  Excluded entries must be ``+inf`` and every row must hold at
        least ``k`` finite entries, so excluded entries are never selected.
    k : int
        ``1 <= k <= n``.

    Returns
    -------
    ind : ndarray of int64, shape (m, k)
        Ascending distance, equal distances by ascending index.
    """
    m, n = d.shape
    if k == n:
        return np.argsort(d, axis=1, kind="stable").astype(np.int64)
    part = np.argpartition(d, k - 1, axis=1)[:, :k]
    pd = np.take_along_axis(d, part, axis=1)
    order = np.lexsort((part, pd), axis=-1)
    ind = np.take_along_axis(part, order, axis=1).astype(np.int64)
    # argpartition picks arbitrarily among entries tied with the k-th value;
    # rows where such a tie crosses the boundary are redone with a stable sort.
    kth = pd.max(axis=1)
    crossing = np.flatnonzero((d <= kth[:, None]).sum(axis=1) > k)
    for r in crossing:
        ind[r] = np.argsort(d[r], kind="stable")[:k]
    return ind


def _block_rows(n_cols: int) -> int:
    """Rows per block so that a (rows, n_cols) float64 scratch stays ~32 MB."""
    return max(1, _BLOCK_ELEMENTS // max(1, n_cols))


def _sort_and_drop_self(ind: np.ndarray, dist: np.ndarray, k: int) -> np.ndarray:
    """Order candidate lists by (distance, index), drop self (else the last), keep ``k``.

    Entries outside ``[0, n)`` (pynndescent's ``-1``, "no neighbour") are dropped
    too; rows left with fewer than ``k`` entries are padded with the
    lowest-index remaining points.
    """
    n = ind.shape[0]
    ind = ind.astype(np.int64, copy=True)
    dist = np.array(dist, dtype=np.float64)
    invalid = (ind < 0) | (ind >= n)
    dist[invalid] = np.inf
    ind[invalid] = n  # sentinel, sorts after every real index
    order = np.lexsort((ind, dist), axis=-1)
    ind = np.take_along_axis(ind, order, axis=1)
    rows = np.arange(n)
    is_self = ind == rows[:, None]
    # Drop self where present (first occurrence), otherwise the last candidate.
    pos = np.where(is_self.any(axis=1), is_self.argmax(axis=1), ind.shape[1] - 1)
    keep = np.ones(ind.shape, dtype=bool)
    keep[rows, pos] = False
    out = np.ascontiguousarray(ind[keep].reshape(n, -1)[:, :k])
    for i in np.flatnonzero((out == n).any(axis=1)):
        out[i] = _padded(out[i][out[i] < n], int(i), k)
    return out


def _padded(taken: np.ndarray, i: int, k: int) -> np.ndarray:
    """``taken`` followed by the lowest-index points not in ``taken`` and not ``i``."""
    need = k - taken.size
    if need <= 0:
        return taken[:k]
    # At most taken.size + 1 of the first k + 1 indices are excluded.
    pool = np.arange(k + 1, dtype=np.int64)
    pool = pool[~np.isin(pool, taken) & (pool != i)][:need]
    return np.concatenate([taken, pool])


# --------------------------------------------------------------------------- Euclidean
def euclidean_neighbors(
    X: np.ndarray,
    n_neighbors: int,
    *,
    random_state: int | None = 0,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Exact Euclidean k-nearest neighbours of every point, self excluded.

    Uses :class:`sklearn.neighbors.NearestNeighbors` (default algorithm) to
    query ``n_neighbors + 2`` points per row, removes the query row itself by
    index (or, if duplicates pushed it out, the farthest candidate) and orders
    the rest by (distance, index).  Rows whose first ``n_neighbors + 1``
    candidate distances contain a (near-)tie are recomputed exactly against
    all points (``scipy.spatial.distance.cdist``), so ties always go to the
    lower index, duplicates included, even across the top-k boundary.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    n_neighbors : int
        Neighbours per point, ``1 <= n_neighbors <= n_samples - 1``.
    random_state : int or None, default=0
        Unused (exact and deterministic); accepted for a uniform signature.
    n_jobs : int or None, default=None
        Passed to ``NearestNeighbors``.

    Returns
    -------
    ind : ndarray of int64, shape (n_samples, n_neighbors)
        Nearest other points, nearest first, ties by lower index.
    """
    del random_state
    X, k = _check_inputs(X, n_neighbors)
    n = X.shape[0]
    n_query = min(n, k + 2)
    nn = NearestNeighbors(n_neighbors=n_query, n_jobs=n_jobs).fit(X)
    dist, ind = nn.kneighbors(X, return_distance=True)
    ind = ind.astype(np.int64)
    order = np.lexsort((ind, dist), axis=-1)
    ind = np.take_along_axis(ind, order, axis=1)
    dist = np.take_along_axis(dist, order, axis=1)
    rows = np.arange(n)[:, None]
    is_self = ind == rows
    drop = is_self.copy()
    drop[~is_self.any(axis=1), -1] = True
    keep = ~drop
    ind_o = ind[keep].reshape(n, n_query - 1)
    dist_o = dist[keep].reshape(n, n_query - 1)
    out = np.ascontiguousarray(ind_o[:, :k])
    # Rows with (near-)equal consecutive distances among the first k + 1
    # candidates may hold a tie that sklearn broke arbitrarily, possibly
    # across the top-k boundary: redo those rows exactly.
    d = dist_o[:, : k + 1]
    gaps = np.diff(d, axis=1) <= _TIE_RTOL * np.maximum(d[:, 1:], 1.0)
    suspect = np.flatnonzero(gaps.any(axis=1))
    if suspect.size:
        step = _block_rows(n)
        for lo in range(0, suspect.size, step):
            rows_b = suspect[lo : lo + step]
            d = cdist(X[rows_b], X)
            d[np.arange(rows_b.size), rows_b] = np.inf
            out[rows_b] = _smallest_k(d, k)
    return out.astype(np.int64, copy=False)


# --------------------------------------------------------------------------- Isomap
def isomap_neighbors(
    X: np.ndarray,
    n_neighbors: int,
    *,
    isomap_neighbors: int = 5,
    random_state: int | None = 0,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Nearest neighbours in Isomap's geodesic (graph shortest-path) distance.

    Fits ``sklearn.manifold.Isomap(n_neighbors=isomap_neighbors, n_jobs=n_jobs)``
    with its other defaults (``n_components=2``) and ranks each row of
    ``dist_matrix_``: the shortest-path lengths in the symmetric
    ``isomap_neighbors``-nearest-neighbour graph weighted by Euclidean edge
    lengths.  When that graph is disconnected, scikit-learn (1.9) emits a
    ``UserWarning`` and adds, for every pair of components, one edge between
    their closest pair of points, so all distances are finite.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    n_neighbors : int
        Neighbours per point, ``1 <= n_neighbors <= n_samples - 1``.
    isomap_neighbors : int, default=5
        Isomap's own ``n_neighbors`` (its default), the degree of the graph.
    random_state : int or None, default=0
        Unused (the geodesic distances are deterministic); accepted for a
        uniform signature.
    n_jobs : int or None, default=None
        Passed to ``Isomap``.

    Returns
    -------
    ind : ndarray of int64, shape (n_samples, n_neighbors)
        Geodesically nearest other points, nearest first, ties by lower index.

    Notes
    -----
    ``dist_matrix_`` is a dense ``n x n`` float64 matrix (8 n^2 bytes, e.g.
    800 MB at n = 10,000), and Isomap also eigendecomposes an ``n x n``
    kernel for its embedding: this baseline is O(n^2) in memory by nature.
    The ranking itself works on blocks of rows with ``np.argpartition``.
    """
    del random_state
    X, k = _check_inputs(X, n_neighbors)
    n = X.shape[0]
    n_iso = _check_int(isomap_neighbors, "isomap_neighbors", 1, n - 1)
    iso = Isomap(n_neighbors=n_iso, n_jobs=n_jobs).fit(X)
    D = iso.dist_matrix_
    out = np.empty((n, k), dtype=np.int64)
    big = np.finfo(np.float64).max
    step = _block_rows(n)
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        d = np.array(D[lo:hi], dtype=np.float64)
        # Never expected after sklearn joins the components, but keep an
        # infinite distance strictly below the excluded self entry.
        d[np.isinf(d)] = big
        d[np.arange(hi - lo), np.arange(lo, hi)] = np.inf
        out[lo:hi] = _smallest_k(d, k)
    return out


# --------------------------------------------------------------------------- UMAP
def umap_neighbors(
    X: np.ndarray,
    n_neighbors: int,
    *,
    source: str = "embedding",
    random_state: int | None = 0,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Nearest neighbours according to UMAP (default parameters).

    Fits ``umap.UMAP(random_state=random_state)`` with its defaults
    (``n_neighbors=15``, ``n_components=2``, ``min_dist=0.1``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    n_neighbors : int
        Neighbours per point, ``1 <= n_neighbors <= n_samples - 1``.
    source : {"embedding", "graph"}, default="embedding"
        ``"embedding"`` (what the experiments use): exact Euclidean
        neighbours in the 2-D embedding ``embedding_``.  ``"graph"``: rank by
        the membership strength of UMAP's fuzzy simplicial set ``graph_``
        (higher is closer, ties by lower index); a row with fewer than
        ``n_neighbors`` nonzero strengths is completed with the remaining
        points nearest in the embedding.
    random_state : int or None, default=0
        Seed of UMAP.  With a seed UMAP runs single-threaded and is
        reproducible; ``None`` lets it run in parallel, non-deterministically.
    n_jobs : int or None, default=None
        Passed to UMAP only when ``random_state is None`` (with a seed UMAP
        forces ``n_jobs=1`` for determinism); ``None`` keeps UMAP's default
        (``-1``, all cores).

    Returns
    -------
    ind : ndarray of int64, shape (n_samples, n_neighbors)
        Nearest other points, nearest first, ties by lower index.

    Raises
    ------
    ImportError
        If ``umap-learn`` is not installed.
    """
    X, k = _check_inputs(X, n_neighbors)
    if source not in ("embedding", "graph"):
        raise ValueError(f"source must be 'embedding' or 'graph', got {source!r}")
    umap = _import_optional("umap", "UMAP")
    params: dict[str, Any] = {"random_state": random_state}
    if random_state is None and n_jobs is not None:
        params["n_jobs"] = n_jobs
    with warnings.catch_warnings(), _RestoreNumbaThreads():
        # UMAP warns that a random_state overrides n_jobs to 1 (intended here).
        warnings.filterwarnings("ignore", message=r"n_jobs value .* overridden", module="umap")
        reducer = umap.UMAP(**params).fit(X)
    emb = np.asarray(reducer.embedding_, dtype=np.float64)
    if source == "embedding":
        return euclidean_neighbors(emb, k, n_jobs=n_jobs)
    return _graph_neighbors(sp.csr_matrix(reducer.graph_), emb, k)


def _graph_neighbors(graph: sp.csr_matrix, emb: np.ndarray, k: int) -> np.ndarray:
    """Top-``k`` by graph weight (descending, ties by index), completed by embedding distance."""
    n = graph.shape[0]
    graph = graph.copy()
    graph.sum_duplicates()
    graph.sort_indices()
    out = np.empty((n, k), dtype=np.int64)
    short_rows: list[int] = []
    taken_lists: dict[int, np.ndarray] = {}
    for i in range(n):
        cols = graph.indices[graph.indptr[i] : graph.indptr[i + 1]].astype(np.int64)
        vals = graph.data[graph.indptr[i] : graph.indptr[i + 1]]
        keep = (cols != i) & (vals > 0)
        cols, vals = cols[keep], vals[keep]
        order = np.lexsort((cols, -vals))[:k]
        taken = cols[order]
        if taken.size == k:
            out[i] = taken
        else:
            short_rows.append(i)
            taken_lists[i] = taken
    step = _block_rows(n)
    for lo in range(0, len(short_rows), step):
        rows_b = np.asarray(short_rows[lo : lo + step], dtype=np.int64)
        d = cdist(emb[rows_b], emb)
        for r, i in enumerate(rows_b):
            d[r, i] = np.inf
            d[r, taken_lists[i]] = np.inf
        for r, i in enumerate(rows_b):
            taken = taken_lists[i]
            need = k - taken.size
            fill = _smallest_k(d[r : r + 1], need)[0]
            out[i] = np.concatenate([taken, fill])
    return out


# --------------------------------------------------------------------------- NNDescent
def nndescent_neighbors(
    X: np.ndarray,
    n_neighbors: int,
    *,
    random_state: int | None = 0,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Approximate Euclidean nearest neighbours with pynndescent (FLANN stand-in).

    Builds ``pynndescent.NNDescent(X, n_neighbors=n_neighbors + 1,
    random_state=random_state)`` and reads its
    ``neighbor_graph``; the query row itself is removed by index (or, if it
    is missing, the farthest candidate), candidates are ordered by
    (distance, index), and any missing entries (``-1``) are padded with the
    lowest-index remaining points.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    n_neighbors : int
        Neighbours per point, ``1 <= n_neighbors <= n_samples - 1``.
    random_state : int or None, default=0
        Seed of NNDescent.
    n_jobs : int or None, default=None
        Threads of NNDescent, used only when ``random_state`` is None.
        NNDescent's result depends on its thread count, so with a seed it
        runs on one thread (as UMAP does) and the output is the same on every
        machine.

    Returns
    -------
    ind : ndarray of int64, shape (n_samples, n_neighbors)
        Approximate nearest other points, nearest first.

    Raises
    ------
    ImportError
        If ``pynndescent`` is not installed.
    """
    X, k = _check_inputs(X, n_neighbors)
    pynndescent = _import_optional("pynndescent", "NNDescent")
    with _RestoreNumbaThreads():
        index = pynndescent.NNDescent(
            X,
            n_neighbors=k + 1,
            random_state=random_state,
            n_jobs=1 if random_state is not None else n_jobs,
        )
        ind, dist = index.neighbor_graph
    return _sort_and_drop_self(np.asarray(ind), np.asarray(dist), k)


# --------------------------------------------------------------------------- Breiman URF
def _coleaf_counts(
    X: np.ndarray,
    n_estimators: int,
    n_synthetic: int,
    random_state: int | None,
    n_jobs: int | None,
) -> tuple[sp.csr_array, int, list[RandomForestClassifier]]:
    """Summed co-leaf counts of the real points over ``n_synthetic`` Breiman forests."""
    n = X.shape[0]
    rng = np.random.default_rng(random_state)
    y = np.concatenate([np.ones(n, dtype=np.int64), np.zeros(n, dtype=np.int64)])
    counts = sp.csr_array((n, n), dtype=np.int64)
    forests = []
    rows = np.repeat(np.arange(n, dtype=np.int64), n_estimators)
    for _ in range(n_synthetic):
        # Product of the marginals: every column permuted independently.
        synthetic = rng.permuted(X, axis=0)
        seed = int(rng.integers(np.iinfo(np.int32).max))
        forest = RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=n_jobs)
        forest.fit(np.vstack([X, synthetic]), y)
        leaves = forest.apply(X).astype(np.int64)  # (n, n_estimators) node ids per tree
        offsets = np.zeros(n_estimators, dtype=np.int64)
        sizes = np.array([est.tree_.node_count for est in forest.estimators_], dtype=np.int64)
        offsets[1:] = np.cumsum(sizes)[:-1]
        cols = (leaves + offsets).ravel()
        M = sp.csr_array(
            (np.ones(rows.size, dtype=np.int32), (rows, cols)), shape=(n, int(sizes.sum()))
        )
        counts = counts + (M @ M.T).astype(np.int64)
        forests.append(forest)
    counts = sp.csr_array(counts)
    counts.sum_duplicates()
    counts.sort_indices()
    return counts, n_estimators * n_synthetic, forests


def _check_urf_params(n_estimators: Any, n_synthetic: Any) -> tuple[int, int]:
    return (
        _check_int(n_estimators, "n_estimators", 1),
        _check_int(n_synthetic, "n_synthetic", 1),
    )


def breiman_urf_proximity(
    X: np.ndarray,
    *,
    n_estimators: int = 100,
    n_synthetic: int = 1,
    random_state: int | None = 0,
    n_jobs: int | None = None,
    return_forests: bool = False,
) -> sp.csr_array | tuple[sp.csr_array, list[RandomForestClassifier]]:
    """Sparse Breiman (Shi-Horvath) unsupervised random-forest proximity.

    For each of ``n_synthetic`` rounds, a synthetic copy of ``X`` is drawn
    from the product of its marginals (each column permuted independently)
    and a ``RandomForestClassifier(n_estimators=n_estimators)`` (otherwise
    scikit-learn defaults) learns real (label 1) versus synthetic (label 0).
    The proximity of real points ``i`` and ``j`` is the fraction of trees,
    over all rounds, in which both fall in the same leaf (``forest.apply`` on
    the real rows): the average of the per-forest proximities.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    n_estimators : int, default=100
        Trees per forest.
    n_synthetic : int, default=1
        Forests, each trained on a fresh synthetic sample; their proximities
        are averaged.
    random_state : int or None, default=0
        Seeds the permutations and the forests.
    n_jobs : int or None, default=None
        Passed to ``RandomForestClassifier``.
    return_forests : bool, default=False
        Also return the fitted forests.

    Returns
    -------
    proximity : scipy.sparse.csr_array of float64, shape (n_samples, n_samples)
        Symmetric, diagonal 1, stored only where two points share a leaf in at
        least one tree (built from the sparse one-hot leaf-indicator matrix
        ``M`` as ``M @ M.T``; never a dense ``n x n`` array).
    forests : list of RandomForestClassifier
        Only if ``return_forests``.

    Notes
    -----
    Memory is that of the output: one stored entry per pair of points sharing
    a leaf in at least one tree.  Leaves holding only real points can be large
    (no synthetic point landed there), so with many trees on noisy data the
    pattern can be far from sparse: on 1000 standard-normal points in 1003
    dimensions with 100 trees, about 86% of the pairs share some leaf.
    """
    X = _check_X(X)
    n_estimators, n_synthetic = _check_urf_params(n_estimators, n_synthetic)
    counts, n_trees, forests = _coleaf_counts(X, n_estimators, n_synthetic, random_state, n_jobs)
    proximity = sp.csr_array(
        (counts.data / n_trees, counts.indices, counts.indptr), shape=counts.shape
    )
    if return_forests:
        return proximity, forests
    return proximity


def _sparse_top_k(counts: sp.csr_array, k: int) -> np.ndarray:
    """Top-``k`` of each row by value (descending, ties by lower column), self excluded, padded."""
    n = counts.shape[0]
    row = np.repeat(np.arange(n, dtype=np.int64), np.diff(counts.indptr))
    col = counts.indices.astype(np.int64)
    val = counts.data
    keep = (col != row) & (val > 0)
    row, col, val = row[keep], col[keep], val[keep]
    order = np.lexsort((col, -val, row))
    row, col = row[order], col[order]
    starts = np.searchsorted(row, np.arange(n))
    rank = np.arange(row.size) - starts[row]
    sel = rank < k
    out = np.full((n, k), -1, dtype=np.int64)
    out[row[sel], rank[sel]] = col[sel]
    short = np.flatnonzero(out[:, -1] < 0)
    for i in short:
        taken = out[i][out[i] >= 0]
        out[i] = _padded(taken, int(i), k)
    return out


def breiman_urf_neighbors(
    X: np.ndarray,
    n_neighbors: int,
    *,
    n_estimators: int = 100,
    n_synthetic: int = 1,
    random_state: int | None = 0,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Nearest neighbours in the Breiman unsupervised random-forest proximity.

    See :func:`breiman_urf_proximity` for the forest.  Each row is ranked by
    proximity (descending; equal proximities by lower index), self excluded;
    a point sharing a leaf with fewer than ``n_neighbors`` others is padded
    with the lowest-index remaining points, exactly as
    :meth:`geoforest.UnsupervisedForest.kneighbors` does.  Ranking uses the
    integer co-leaf counts, so ties are exact.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    n_neighbors : int
        Neighbours per point, ``1 <= n_neighbors <= n_samples - 1``.
    n_estimators : int, default=100
        Trees per forest.
    n_synthetic : int, default=1
        Forests (fresh synthetic samples) whose proximities are averaged.
    random_state : int or None, default=0
        Seeds the permutations and the forests.
    n_jobs : int or None, default=None
        Passed to ``RandomForestClassifier``.

    Returns
    -------
    ind : ndarray of int64, shape (n_samples, n_neighbors)
        Most proximal other points first.
    """
    X, k = _check_inputs(X, n_neighbors)
    n_estimators, n_synthetic = _check_urf_params(n_estimators, n_synthetic)
    counts, _, _ = _coleaf_counts(X, n_estimators, n_synthetic, random_state, n_jobs)
    return _sparse_top_k(counts, k)


# --------------------------------------------------------------------------- dispatch
_DISPATCH: dict[str, Callable[..., np.ndarray]] = {
    "Euclidean": euclidean_neighbors,
    "Isomap": isomap_neighbors,
    "UMAP": umap_neighbors,
    "NNDescent": nndescent_neighbors,
    "URF-Breiman": breiman_urf_neighbors,
}


def baseline_neighbors(
    name: str,
    X: np.ndarray,
    n_neighbors: int,
    *,
    random_state: int | None = 0,
    n_jobs: int | None = None,
    **options: Any,
) -> np.ndarray:
    """Neighbours of every training point under the baseline ``name``.

    Parameters
    ----------
    name : {"Euclidean", "Isomap", "UMAP", "NNDescent", "URF-Breiman"}
        The baseline (see :data:`BASELINES` and the module docstring).
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    n_neighbors : int
        Neighbours per point, ``1 <= n_neighbors <= n_samples - 1``.
    random_state : int or None, default=0
        Seed (ignored by the deterministic baselines).
    n_jobs : int or None, default=None
        Parallelism, passed to the baseline.
    **options
        Baseline-specific keywords, e.g. ``isomap_neighbors`` (Isomap),
        ``source`` (UMAP), ``n_estimators`` / ``n_synthetic`` (URF-Breiman).

    Returns
    -------
    ind : ndarray of int64, shape (n_samples, n_neighbors)
        For each point the indices of its nearest *other* points, nearest
        first, ties by lower index: the format of
        ``UnsupervisedForest.kneighbors(n_neighbors=k, return_distance=False)``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0], [7.0]])
    >>> baseline_neighbors("Euclidean", X, 2).tolist()
    [[1, 2], [0, 2], [1, 0], [2, 1]]
    """
    try:
        func = _DISPATCH[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown baseline {name!r}; valid names are: {', '.join(BASELINES)}"
        ) from None
    return func(X, n_neighbors, random_state=random_state, n_jobs=n_jobs, **options)
