"""The graph layer's numba building blocks, for kernels built on top of it.

LLPD's dendrogram walks and out-of-sample search (:mod:`geoforest.llpd`) are
numba kernels that search the graph layer's flat K-d tree and its union-find
forests from inside their own loops; they take these steps from here, the
one public door to them, rather than from the graph layer's private modules.
Each is an ``njit`` function callable from Python too.

* :class:`KDTree`, :func:`kdtree` — the flat K-d tree of a point set and its
  build; :data:`LEAF_SIZE` its points per leaf;
* :func:`sq_dist`, :func:`box_dist2`, :func:`push_children`,
  :func:`insert_sorted` — the search steps every query shares: a squared
  distance, a box's lower bound, the children in near-first order, an
  insertion into a sorted top-k list;
* :func:`find_root` — the union-find root lookup (path halving).
"""

from ._kdtree import LEAF_SIZE, KDTree, box_dist2, insert_sorted, kdtree, push_children, sq_dist
from ._unionfind import find_root

__all__ = [
    "LEAF_SIZE",
    "KDTree",
    "box_dist2",
    "find_root",
    "insert_sorted",
    "kdtree",
    "push_children",
    "sq_dist",
]
