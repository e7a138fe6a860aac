"""Random projection forests (rpForest) and the rpf-kernel (Yan, Gu, Xu and Qin)."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils._param_validation import StrOptions

from .._engine.projections import GAUSSIAN, max_nonzeros
from .._engine.splits import RANDOM_CUTS, default_params
from ._base import BaseForest
from ._growth import EngineConfig


class RandomProjectionForest(TransformerMixin, BaseForest):
    """Random projection forest (rpForest) and its proximity kernel (rpf-kernel).

    Every node of a random projection tree draws one direction uniformly on the
    unit sphere, projects its points on it and cuts at a threshold drawn
    uniformly between the smallest and largest projected value
    (``criterion="uniform"``, Dasgupta & Freund's rpTree) or at the median
    (``criterion="median"``).  The cut never looks at how well it separates the
    data.  Nodes with fewer than ``min_samples_split`` points are leaves, and
    every tree sees all the points (no bootstrap).  The fraction of trees in
    which two points share a leaf, ``proximity()``, is the rpf-kernel: positive
    semi-definite (an average of block-diagonal indicator kernels) and
    adaptive to the data's intrinsic dimension.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    criterion : {"uniform", "median"}, default="uniform"
        Where each node cuts its random projection: the split rule, named
        ``criterion`` as in every other forest.
    split : {"uniform", "median"} or "deprecated", default="deprecated"
        The former name of ``criterion``: still read until the next release,
        with a ``FutureWarning``.
    min_samples_split : int, default=30
        Nodes with fewer samples become leaves (the paper's ``n_s``).
    min_samples_leaf : int, default=1
        Minimum samples on each side of a cut (the cut is moved to the
        nearest allowed position).
    max_depth : int or None, default=None
        Maximum depth of a tree (``None``: unlimited).
    max_samples : int, float or None, default=None
        Rows drawn for each tree: ``None`` (default) uses every row, as the
        paper does; an int or a fraction subsamples.  A fraction is raised
        to the rows a node needs to be split (``max(min_samples_split, 2 *
        min_samples_leaf)``) where it gives fewer and the data hold that
        many; an int that small is kept, with a warning.
    bootstrap : bool, default=False
        Draw each tree's rows with replacement.
    n_jobs : int or None, default=None
        Threads for growing trees and for queries (``-1``: all cores).  The
        forest is identical for any value.
    random_state : int, RandomState instance or None, default=None
        Seeds one integer per tree before any parallel work.
    verbose : int, default=0
        Show progress bars.

    Attributes
    ----------
    trees_ : list of Tree
        The fitted trees as flat arrays.
    inbag_counts_ : ndarray of uint8, shape (n_samples, n_estimators)
        How many times each training row was drawn for each tree.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_projections_ : int
        Directions tried per node (always 1).
    nbytes_ : int
        Memory of the fitted trees in bytes: ``trees_``, their flat copy for
        queries and ``inbag_counts_`` (not the training data).

    Notes
    -----
    Each node's direction is dense: iid N(0, 1) weights over all features,
    normalised to unit length, so projecting a node costs
    ``O(node size x n_features)``.  The training points of a node are split
    exactly as the drawn threshold splits them; the stored threshold is the
    midpoint between the two training values around it, which decides where
    new points between them go.

    References
    ----------
    .. [1] D. Yan, S. Gu, Y. Xu and Z. Qin, "Similarity Kernel and Clustering
       via Random Projection Forests" (rpForest, the rpf-kernel).
    .. [2] S. Dasgupta and Y. Freund, "Random projection trees and low
       dimensional manifolds", STOC 2008 (the rpTree).

    Examples
    --------
    >>> import geoforest as gf
    >>> from sklearn.datasets import load_iris
    >>> X = load_iris().data
    >>> forest = gf.RandomProjectionForest(n_estimators=50, random_state=0).fit(X)
    >>> S = forest.proximity()          # the rpf-kernel, sparse
    >>> S.shape, float(S[0, 0])
    ((150, 150), 1.0)
    """

    _parameter_constraints: dict = {
        **BaseForest._parameter_constraints,
        "criterion": [StrOptions(set(RANDOM_CUTS))],
        "split": [StrOptions(set(RANDOM_CUTS) | {"deprecated"})],
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        criterion: str = "uniform",
        split: str = "deprecated",
        min_samples_split: int = 30,
        min_samples_leaf: int = 1,
        max_depth: int | None = None,
        max_samples=None,
        bootstrap: bool = False,
        n_jobs: int | None = None,
        random_state=None,
        verbose: int = 0,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.split = split
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.max_samples = max_samples
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _criterion(self) -> str:
        """``criterion``, or the deprecated ``split`` when it was given."""
        if self.split == "deprecated":
            return self.criterion
        warnings.warn(
            "RandomProjectionForest(split=...) is deprecated and will be removed in the next "
            "release: pass criterion=..., the split rule's name in every forest",
            FutureWarning,
            stacklevel=4,
        )
        return self.split

    def _engine_config(self, n_features: int) -> EngineConfig:
        params = np.zeros(1)
        rule = RANDOM_CUTS[self._criterion()]
        return EngineConfig(
            projection=GAUSSIAN,
            projection_params=params,
            max_nonzeros=max_nonzeros(GAUSSIAN, params, n_features),
            criterion=rule,
            criterion_params=default_params(rule),
            n_projections=1,
            n_batches=1,
        )
