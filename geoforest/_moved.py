"""Names that moved: the old path keeps working for one release, with a FutureWarning.

The graph layer's names were once exported by the clustering family that
used them first as well (``geoforest.cluster.spectral_clustering``,
``geoforest.llpd.euclidean_mst``, ...): two public paths for one object.
They now live in :mod:`geoforest.graph` only; a family module's
``__getattr__`` (PEP 562) made by :func:`moved_to_graph` still answers the old
path, warning as scikit-learn's deprecations do.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable

__all__ = ["moved_to_graph"]


def moved_to_graph(module: str, names: Iterable[str]) -> Callable[[str], object]:
    """A module ``__getattr__`` serving ``names`` from :mod:`geoforest.graph`, with a warning.

    Parameters
    ----------
    module : str
        The family module's name, e.g. ``"geoforest.cluster"``.
    names : iterable of str
        The names that moved.

    Returns
    -------
    callable
        Assign it to the module's ``__getattr__``.
    """
    moved = frozenset(names)

    def __getattr__(name: str) -> object:
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is geoforest.graph.{name}; the old path goes in the next "
            "release: import it from geoforest.graph",
            FutureWarning,
            stacklevel=2,
        )
        from . import graph

        return getattr(graph, name)

    return __getattr__
