"""Geometries: where a clusterer's neighbour graph comes from.

A clustering method is a rule over a neighbour graph; which points are
neighbours, and how far apart, is the *geometry*, the user's choice rather
than the method's.  A :class:`Geometry` is fitted once
(:func:`geoforest.graph.fit_geometry`) and then answers every question a
clustering family asks of it, so the families never ask which geometry they
hold:

* :meth:`~Geometry.neighbors` — each training point's ``k`` nearest others;
* :meth:`~Geometry.distinct_neighbors` — the same lists with each point's
  exact copies left out, what the neighbour *graphs* are built from;
* :meth:`~Geometry.query` — new points' nearest training points;
* :meth:`~Geometry.bridges` — the edges of a minimum spanning forest, *in this
  metric*, that join a disconnected graph's components, so that a connected
  graph never mixes the units of two geometries;
* :meth:`~Geometry.spanning_tree` — the minimum spanning tree of every edge
  the geometry holds (the exact Euclidean MST; every stored entry of a given
  graph; a forest's ``n_neighbors``-NN graph with its bridges);
* :meth:`~Geometry.query_edges` — a new point's edges into that graph;
* :meth:`~Geometry.subset` — the same geometry on some of its training points,
  never refitted.

``n_neighbors`` means the same in every geometry: the length of each point's
neighbour list, the ``n_neighbors`` smallest distances of its row.  For a
precomputed graph those are the row's ``n_neighbors`` smallest stored
entries (a row holding fewer is refused).  What uses the whole graph (the
spanning tree, a new point's edges) uses every edge the geometry holds.

This module holds the base class and :class:`SubsetGeometry`;
``_geometries.py`` the three geometries of ``metric`` and the entry point.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ._spanning import spanning_tree

__all__ = ["COPIES_LOOKED_PAST", "Geometry", "SubsetGeometry", "check_n_neighbors", "sorted_rows"]

#: :meth:`Geometry.distinct_neighbors` looks past at most this many times ``k``
#: copies of a point; a point with more copies keeps its plain list.
COPIES_LOOKED_PAST = 4


def copy_groups(X) -> np.ndarray | None:
    """Each row's group of exact copies (equal in every coordinate), or ``None`` if none repeat."""
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64) + 0.0)  # -0.0 equals 0.0
    if X.ndim != 2 or X.shape[0] < 2:
        return None
    rows = X.view(np.dtype((np.void, X.dtype.itemsize * X.shape[1]))).ravel()
    _, group, counts = np.unique(rows, return_inverse=True, return_counts=True)
    return group.reshape(-1).astype(np.int64) if counts.max() > 1 else None


def check_n_neighbors(n_neighbors, n_samples: int, *, queries: bool = False) -> int:
    """``n_neighbors`` as an int, refused unless a point has that many others.

    ``queries``: a new point's neighbours, which may be every training point.
    The one check of ``n_neighbors`` every estimator shares.
    """
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, Integral):
        raise TypeError(f"n_neighbors must be an int, got {n_neighbors!r}")
    top = n_samples if queries else n_samples - 1
    if n_neighbors < 1:
        raise ValueError(f"n_neighbors must be at least 1, got {n_neighbors}")
    if n_neighbors > top:
        if queries:
            raise ValueError(f"n_neighbors={n_neighbors} exceeds the {n_samples} training points")
        raise ValueError(f"n_neighbors={n_neighbors} must be smaller than n_samples={n_samples}")
    return int(n_neighbors)


class Geometry(ABC):
    """Nearest neighbours of training points, and of new points, under one metric.

    Subclasses set ``metric`` and implement :meth:`fit`, :meth:`_neighbors` and
    :meth:`_query`; those that bridge also :meth:`_lists` (neighbour lists of
    chosen training rows, read by :meth:`bridges`) and :meth:`training_points`.

    Attributes
    ----------
    n_neighbors : int or None
        The list length :meth:`neighbors` and :meth:`query` use when given
        none (set by :func:`~geoforest.graph.fit_geometry`).
    n_samples_ : int
        Training points (after :meth:`fit`).
    """

    metric = ""
    #: ``False``: the graph is used as given, its components are not bridged.
    can_bridge = True
    #: ``True``: every pair of training points is an edge at the Euclidean distance
    #: of their :meth:`training_points` (what LLPD's exact EMST and K-d tree need).
    euclidean_coordinates = False
    n_neighbors: int | None = None

    @abstractmethod
    def fit(self, X) -> Geometry:
        """Learn the geometry of the training points ``X``."""

    @abstractmethod
    def _neighbors(self, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    @abstractmethod
    def _query(self, X, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def _k(self, k, queries: bool = False) -> int:
        if k is None:
            if self.n_neighbors is None:
                raise ValueError(f"{type(self).__name__}: pass k (no n_neighbors was set)")
            k = self.n_neighbors
        return check_n_neighbors(k, self.n_samples_, queries=queries)

    def neighbors(self, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(dist, ind)`` of shape (n, k): each training point's nearest others, ascending.

        ``k`` defaults to :attr:`n_neighbors`; it must be below ``n_samples_``.
        """
        return self._neighbors(self._k(k))

    def distinct_neighbors(self, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`neighbors` with each point's exact copies left out of its list.

        Tabular data of coded columns repeat rows, often in groups larger
        than ``k``.  In a plain ``k``-NN list such a group lists only itself:
        its points form a clique the rest reaches only through the points
        that list them, and a spectral cut takes it for a cluster, one per
        group (``docs/results/label-free-levels.md``, round 5).  A copy says
        nothing about where a point lies, so a point's list
        here holds its ``k`` nearest points *not equal to it*; its copies
        get the same list, so they stay together in any partition (equal
        rows of the affinity) without being a clique.  Copies are found in
        the user's coordinates (:meth:`coordinates`; a geometry of distances
        only keeps its plain lists), looking past at most
        ``COPIES_LOOKED_PAST * k`` of them: a point with more keeps its plain
        list (so many equal rows are a cluster of their own).  So does a
        point whose ``k`` nearest other points all lie in *atoms*, groups of
        more than ``k`` copies (each a clique in plain lists): its
        surroundings are then other atoms, not a neighbourhood, and atoms
        that list only each other form a complete multipartite graph no cut
        separates, however far apart they lie (data of a few values, each
        repeated); with their plain lists each atom is the cluster it is.
        Without copies this is :meth:`neighbors`, at no extra cost.
        """
        k = self._k(k)
        group = self.copy_groups()
        if group is None:
            return self._neighbors(k)
        look = min(int(np.bincount(group).max()) - 1, COPIES_LOOKED_PAST * k)
        look = min(look, self.n_samples_ - 1 - k)
        if look <= 0:
            return self._neighbors(k)
        dist, ind = self._neighbors(k + look)
        other = group[ind] != group[:, None]
        others = np.argsort(~other, axis=1, kind="stable")
        # Rows whose first k others all lie in atoms (groups of more than k
        # copies, cliques in plain lists) have no neighbourhood to be tied to
        # (the docstring above).
        size = np.bincount(group)
        nearest = np.take_along_axis(ind, others[:, :k], axis=1)
        among_atoms = (size[group[nearest]] > k).all(axis=1)
        distinct = (other.sum(axis=1) >= k) & ~among_atoms
        # Rows with k others not all in atoms: those k, in order (still
        # ascending); the rest keep their plain first k.
        order = np.where(distinct[:, None], others, np.arange(ind.shape[1]))[:, :k]
        return np.take_along_axis(dist, order, axis=1), np.take_along_axis(ind, order, axis=1)

    def copy_groups(self) -> np.ndarray | None:
        """Each training point's group of exact copies in the user's coordinates
        (:func:`copy_groups`), or ``None`` when no two are equal or the
        geometry has no coordinates."""
        coordinates = self.coordinates()
        return None if coordinates is None else copy_groups(coordinates)

    def query(self, X, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(dist, ind)`` of shape (m, k): the training points nearest to new points."""
        return self._query(X, self._k(k, queries=True))

    def training_points(self, rows) -> np.ndarray:
        """Training rows in the user's coordinates, as :meth:`query` takes them."""
        raise NotImplementedError(f"{type(self).__name__} has no coordinates")

    def coordinates(self, rows=None) -> np.ndarray | None:
        """The training points ``rows`` (every one by default) in the user's
        coordinates (float64), or ``None`` for a geometry of distances only
        (``metric="precomputed"``): what the label-free rules draw Gaussian
        references from (their mean and covariance;
        :func:`~geoforest.graph.spectral_excess`), and a subset they choose
        the level on."""
        rows = np.arange(self.n_samples_) if rows is None else rows
        try:
            return np.asarray(self.training_points(rows), np.float64)
        except NotImplementedError:
            return None

    def _lists(self, rows, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest others of training ``rows`` (the row itself may be listed)."""
        n = self.n_samples_
        return self._query(self.training_points(rows), min(k + 1, n))

    # ------------------------------------------------------------------ graphs
    def spanning_tree(self) -> tuple[np.ndarray, np.ndarray]:
        """The minimum spanning tree of the geometry's graph (:func:`spanning_tree`).

        Here: the symmetrised ``n_neighbors``-NN graph, its components joined
        by :meth:`bridges`; an edge listed by both end points at two lengths
        counts at the shorter.  Geometries that hold every edge override it.
        """
        n = self.n_samples_
        dist, ind = self.neighbors(min(int(self.n_neighbors), n - 1))
        rows = np.repeat(np.arange(n), ind.shape[1])
        pattern = sp.csr_matrix((np.ones(ind.size), (rows, ind.ravel())), shape=(n, n))
        pairs, lengths = self.bridges(pattern + pattern.T, (dist, ind))
        return spanning_tree(
            n,
            np.concatenate([rows, pairs[:, 0]]),
            np.concatenate([ind.ravel(), pairs[:, 1]]),
            np.concatenate([dist.ravel(), lengths]),
        )

    def query_edges(self, X, estimator=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """New points' edges into the graph: ``(dist, ind, counts)``, ascending.

        Here a new point's ``n_neighbors`` nearest training points; rows are
        padded with ``inf`` (index 0) past ``counts[q]`` edges.
        """
        dist, ind = self.query(X, min(int(self.n_neighbors), self.n_samples_))
        dist = np.ascontiguousarray(dist, dtype=np.float64)
        counts = np.isfinite(dist).sum(axis=1).astype(np.int64)  # padding at inf comes last
        return dist, np.ascontiguousarray(ind, dtype=np.int64), counts

    def subset(self, rows) -> Geometry:
        """This geometry on the training points ``rows`` alone, never refitted."""
        return SubsetGeometry(self, rows)

    def bridges(self, G, neighbors: tuple[np.ndarray, np.ndarray]):
        """Edges of a minimum spanning forest in this metric joining the components of ``G``.

        Borůvka rounds: each component adds its shortest edge to a point outside
        it, read from its members' neighbour lists (``neighbors``, ascending), which
        is exact when the shortest outside candidate found is no longer than the
        last listed distance of every member whose list stays inside; members that
        fail this get lists twice as long, up to every point.  Equal lengths go to
        the smaller end points, so the forest is unique.

        Returns
        -------
        pairs : ndarray of shape (c - 1, 2)
            Bridge end points ``(i, j)``, ``i < j``, for ``c`` components.
        lengths : ndarray of shape (c - 1,)
        """
        n_comp, comp = connected_components(G, directed=False)
        if n_comp == 1 or not self.can_bridge:
            return np.zeros((0, 2), dtype=np.intp), np.zeros(0)
        dist, ind = (np.asarray(a) for a in neighbors)
        n = comp.shape[0]
        lists = {}  # row -> (dist, ind) extended beyond the graph's own lists
        pairs, lengths = [], []
        while n_comp > 1:
            best = np.full(n_comp, np.inf)
            best_edge = np.full((n_comp, 2), -1, dtype=np.int64)
            pending = np.arange(n)
            k = dist.shape[1]
            while pending.size:  # the members whose lists may miss their shortest way out
                d, i = self._rows_lists(pending, dist, ind, lists)
                outside = comp[i] != comp[pending][:, None]
                has = outside.any(axis=1)
                first = np.argmax(outside, axis=1)
                cand_d = np.where(has, d[np.arange(pending.size), first], np.inf)
                cand_j = i[np.arange(pending.size), first]
                _take_best(best, best_edge, comp[pending], cand_d, pending, cand_j)
                # A member whose whole list stays inside is resolved when its last
                # listed distance already reaches its component's best candidate.
                finite = np.isfinite(d)
                last = np.where(finite, d, -np.inf).max(axis=1)
                # Complete: every other point listed (a query of a training point
                # lists the point itself, which is no way out).
                others = finite & (i != pending[:, None])
                complete = others.sum(axis=1) >= n - 1
                unresolved = ~has & (last < best[comp[pending]]) & ~complete
                pending = pending[unresolved]
                if pending.size:
                    k = min(2 * max(k, d.shape[1]), n - 1)
                    new_d, new_i = self._lists(pending, k)
                    for r, row_d, row_i in zip(pending, new_d, new_i, strict=True):
                        lists[int(r)] = (row_d, row_i)
            for c in range(n_comp):
                a, b = best_edge[c]
                pairs.append((min(a, b), max(a, b)))
                lengths.append(best[c])
            pairs_arr = np.asarray(pairs, dtype=np.intp)
            edges = sp.coo_matrix((np.ones(len(pairs)), pairs_arr.T), shape=(n, n))
            n_comp, comp = connected_components(G + edges + edges.T, directed=False)
        # Two components may pick the same edge; keep each once, in order.
        pairs_arr = np.asarray(pairs, dtype=np.intp)
        _, first = np.unique(pairs_arr, axis=0, return_index=True)
        first = np.sort(first)
        return pairs_arr[first], np.asarray(lengths, dtype=np.float64)[first]

    @staticmethod
    def _rows_lists(rows, dist, ind, lists):
        if not lists:
            return dist[rows], ind[rows]
        width = max(dist.shape[1], max(len(v[0]) for v in lists.values()))
        d = np.full((rows.size, width), np.inf)
        i = np.repeat(rows[:, None], width, axis=1)  # padding points at the row itself
        for r, row in enumerate(rows):
            rd, ri = lists.get(int(row), (dist[row], ind[row]))
            d[r, : len(rd)], i[r, : len(ri)] = rd, ri
        return d, i


def _take_best(best, best_edge, comp, cand_d, rows, cand_j) -> None:
    """Per component, the shortest candidate edge (ties: smaller end points)."""
    order = np.lexsort((np.maximum(rows, cand_j), np.minimum(rows, cand_j), cand_d))
    first = order[np.unique(comp[order], return_index=True)[1]]  # each component's best
    better = cand_d[first] < best[comp[first]]
    first = first[better]
    best[comp[first]] = cand_d[first]
    best_edge[comp[first]] = np.stack([rows[first], cand_j[first]], axis=1)


# ------------------------------------------------------------------ kept points
class SubsetGeometry(Geometry):
    """A fitted geometry restricted to some of its training points, never refitted.

    Neighbour lists are the base geometry's with the other points left out
    (read deeper where too few kept points are listed), so the kept points'
    ``k``-NN graph and its bridges are those of the same metric on the kept
    points alone; ``k`` is capped at the kept points' number.  Indices are
    positions among the kept points.  LLPD spectral clustering's kept points
    use it.

    Parameters
    ----------
    base : Geometry
        Fitted, with coordinates (:meth:`Geometry.training_points`).
    rows : ndarray of int
        The kept training points, increasing.
    """

    def __init__(self, base: Geometry, rows) -> None:
        rows = np.asarray(rows)
        if rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer):
            raise ValueError("SubsetGeometry's rows must be a 1-d array of integers")
        if rows.size < 2 or np.any(np.diff(rows) <= 0) or rows[0] < 0:
            raise ValueError("SubsetGeometry needs at least 2 rows, increasing, non-negative")
        if rows[-1] >= base.n_samples_:
            raise ValueError(f"SubsetGeometry's rows must be below {base.n_samples_}")
        self.base = base
        self.metric = base.metric
        self.n_neighbors = base.n_neighbors
        self.rows = rows.astype(np.int64)
        self.n_samples_ = int(self.rows.size)
        self.position = np.full(base.n_samples_, -1, dtype=np.int64)
        self.position[self.rows] = np.arange(self.rows.size)

    def fit(self, X=None) -> SubsetGeometry:
        return self

    def _k(self, k, queries: bool = False) -> int:
        k = self.n_neighbors if k is None else k
        return check_n_neighbors(
            min(int(k), self.n_samples_ - (not queries)), self.n_samples_, queries=queries
        )

    def training_points(self, rows) -> np.ndarray:
        return self.base.training_points(self.rows[np.asarray(rows, dtype=np.int64)])

    def _kept(self, dist, ind, k, exclude, pad):
        """The first ``k`` kept entries of every row, padded with ``(inf, pad)``.

        ``exclude``: each row's own point (not its own neighbour), or None.
        """
        pos = self.position[ind]
        ok = pos >= 0
        if exclude is not None:
            ok &= ind != exclude[:, None]
        out_d = np.full((ind.shape[0], k), np.inf)
        out_i = np.repeat(np.asarray(pad, dtype=np.int64)[:, None], k, axis=1)
        counts = np.zeros(ind.shape[0], dtype=np.int64)
        for r in range(ind.shape[0]):
            sel = np.flatnonzero(ok[r])[:k]
            out_d[r, : sel.size], out_i[r, : sel.size] = dist[r, sel], pos[r, sel]
            counts[r] = sel.size
        return out_d, out_i, counts

    def _deeper(self, Q, k, exclude, pad, found, depth):
        """Rows still short of ``k`` kept neighbours, read again from lists twice as deep."""
        n_base = self.base.n_samples_
        d, i, counts = found
        pending = np.flatnonzero(counts < k)
        while pending.size and depth < n_base:
            depth = min(2 * depth, n_base)
            qd, qi = self.base.query(Q[pending], depth)
            ex = None if exclude is None else exclude[pending]
            pd, pi, pc = self._kept(qd, qi, k, ex, pad[pending])
            d[pending], i[pending], counts[pending] = pd, pi, pc
            pending = pending[pc < k]
        return d, i

    def _neighbors(self, k: int):
        depth = min(2 * k, self.base.n_samples_ - 1)
        dist, ind = self.base.neighbors(depth)
        pad = np.arange(self.n_samples_)
        found = self._kept(dist[self.rows], ind[self.rows], k, None, pad)
        Q = self.base.training_points(self.rows)
        return self._deeper(Q, k, self.rows, pad, found, depth + 1)

    def _lists(self, rows, k):
        k = min(int(k), self.n_samples_ - 1)
        rows = np.asarray(rows, dtype=np.int64)
        base_rows = self.rows[rows]
        # Deep enough to hold k kept points when the left-out ones are spread evenly.
        depth = min(-(-(k + 1) * self.base.n_samples_ // self.n_samples_), self.base.n_samples_)
        Q = self.base.training_points(base_rows)
        qd, qi = self.base.query(Q, depth)
        found = self._kept(qd, qi, k, base_rows, rows)
        return self._deeper(Q, k, base_rows, rows, found, depth)

    def _query(self, X, k: int):
        depth = min(k, self.base.n_samples_)
        qd, qi = self.base.query(X, depth)
        pad = np.zeros(qd.shape[0], dtype=np.int64)
        found = self._kept(qd, qi, k, None, pad)
        return self._deeper(np.asarray(X), k, None, pad, found, depth)


# ------------------------------------------------------------------ sparse rows
def sorted_rows(G: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every stored entry of each row, ascending (ties: lower column), padded with ``inf``.

    Returns ``(dist, ind, counts)`` of shapes (m, w), (m, w), (m,): ``w`` the
    most entries of a row, ``counts`` each row's own number (index 0 pads).
    """
    counts = np.diff(G.indptr).astype(np.int64)
    width = max(int(counts.max()), 1) if counts.size else 1
    dist = np.full((G.shape[0], width), np.inf)
    ind = np.zeros((G.shape[0], width), dtype=np.int64)
    rows = np.repeat(np.arange(G.shape[0]), counts)
    order = np.lexsort((G.indices, G.data, rows))  # by row, then distance, then column
    slot = np.arange(rows.size) - np.repeat(G.indptr[:-1], counts)
    dist[rows, slot] = G.data[order]
    ind[rows, slot] = G.indices[order]
    return dist, ind, counts


def _row_smallest(G: sp.csr_matrix, k: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` smallest stored entries of every row, ascending (ties: lower column)."""
    dist, ind, counts = sorted_rows(G)
    if counts.size and counts.min() < k:
        row = int(np.argmin(counts))
        raise ValueError(
            f"the precomputed distance graph stores {counts[row]} neighbours for {what} "
            f"{row}; {k} are needed (n_neighbors): build the graph with at least "
            f"{k} neighbours per point"
        )
    return dist[:, :k], ind[:, :k].astype(np.intp)
