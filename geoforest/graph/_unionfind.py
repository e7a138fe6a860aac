"""Union-find (disjoint sets) over an ``int64`` parent array, for the numba kernels.

A set is a tree of parent links named by its root (``parent[r] == r``).  The
callers link roots themselves (``parent[ra] = rb``), so the order of their
unions alone decides which point names a set; :func:`find_root` only shortens
paths, which never changes a root.
"""

from __future__ import annotations

from .._jit import njit

__all__ = ["find_root"]


@njit(inline="always")
def find_root(parent, a):
    """Root of ``a`` in the union-find forest ``parent``, halving the path on the way."""
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a
