"""Unsupervised randomer forests (URerF) and unsupervised random forests (URF)."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions

from .._engine.projections import (
    GROWN_REDRAWS,
    MAX_GROWN_NONZEROS,
    PATCH,
    PROJECTIONS,
    SPARSE,
    max_nonzeros,
    patch_params,
)
from .._engine.splits import CRITERIA, default_params
from ._base import BaseForest
from ._growth import EngineConfig, resolve_max_features
from ._relevance import LearnedRankingMixin


class UnsupervisedForest(LearnedRankingMixin, TransformerMixin, BaseForest):
    """Unsupervised randomer forest (URerF) for geodesic neighbours and kernels.

    Each tree recursively splits its sample without labels: at every node it
    draws ``max_features`` random sparse projections, sorts the node's values
    under each, and cuts where a two-cluster model fits best (Fast-BIC by
    default).  Points that share leaves across many trees lie close on the
    data's underlying structure, even under many noise dimensions.  With
    ``projection="axis"`` the trees split single features (URF).

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    projection : {"sparse", "axis", "patch"}, default="sparse"
        Candidate projections: sparse combinations of features with ``+-1``
        weights (URerF), single features (URF), or sums of contiguous patches
        of an image or series (``image_shape``; the manifold forests' atoms,
        for geodesic learning on images and signals).
    criterion : {"fastbic", "twomeans", "gmm"}, default="fastbic"
        Split rule: Fast-BIC gain (exact two-Gaussian BIC over all cuts), the
        two-means cut, or a two-component Gaussian mixture fitted by EM.
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
        Candidate projections per node: an int, a fraction of ``n_features``,
        ``"sqrt"``, ``"log2"``, or ``None`` for ``n_features``.  Sparse
        projections may exceed ``n_features``; axis projections are capped at it.
    feature_combinations : float or "paper", default=1.5
        Mean number of nonzeros per sparse projection (``1 + Poisson(c - 1)``
        distinct features, so at least one).  ``"paper"`` uses the URerF
        paper's ``lambda = 1/20`` of the features per projection.
    max_tied_fraction : float in (0, 1) or None, default=0.05
        With ``projection="sparse"``: a candidate projection on which more
        than this fraction of the node's samples share one value (integer
        counts, pixels that are mostly 0, grids) gains random discrete
        features (those with repeated values) until no value is that
        frequent (at most 64 nonzeros), and a node whose candidates grew
        redraws them once rather than ``max_redraws`` times.  Data without repeated values
        never trigger it, so their trees are unchanged.  ``None`` never grows
        a projection, as in the URerF paper (see Notes).
    distance : {"auto", "relevance", "proximity"}, default="auto"
        What :meth:`kneighbors` (and :meth:`kneighbors_graph`) rank by.
        ``"relevance"``: the ``6 k`` highest-proximity points of a query,
        ranked by a weighted Euclidean distance the forest learned,
        ``sum_j min(1, rho_j / (0.5 max rho))^3 (x_j - y_j)^2``, where the
        relevance ``rho_j`` (``feature_relevance_``) says how much tighter a
        point's nearest forest neighbours are along feature ``j`` than its
        wider pool of forest neighbours (0 for noise columns); along a curve
        each term is divided by the pool's spread along ``j``.  Proximity
        finds the region; the learned metric orders it (see Notes).
        ``"proximity"``: the forest distance ``1 - proximity`` of the URerF
        paper.  ``"auto"``: ``"relevance"``, in memory and for a forest grown
        from a Dask array alike: the same metric and the same neighbours,
        computed next to the training rows on the workers
        (``docs/scale.md``); ``distance_`` says which.  :meth:`proximity` is
        the same for all.
    min_samples_split : int, default=45
        Nodes with fewer samples become leaves (the paper's *minparent*).
        On fewer training points than this every tree is a single leaf:
        every point is then as close as any other by proximity,
        ``feature_relevance_`` is 0 and :meth:`kneighbors` ranks by the
        z-scored Euclidean distance.  Pass a smaller value on such data.
    min_samples_leaf : int, default=1
        Minimum samples on each side of a cut.
    max_depth : int or None, default=None
        Maximum depth of a tree (``None``: unlimited).
    max_samples : int, float or None, default=0.5
        Rows drawn for each tree: an int, a fraction of ``n_samples`` or
        ``None`` for all.  Neighbour search costs grow with ``n_samples /
        max_samples``: a leaf holds that many times its own rows' worth of
        training points, and a query meets all of them in every tree.  An
        absolute ``max_samples`` on large data makes ``kneighbors`` the
        dominant cost (it warns above about 10**10 co-leaf points per call);
        keep it a fraction when every point's neighbours are needed
        (``docs/scale.md``).  A fraction that gives fewer rows than a node
        needs to be split (``max(min_samples_split, 2 * min_samples_leaf)``)
        is raised to that many where the data hold them: 0.5 of fewer than 90
        rows would otherwise leave every tree a single leaf.  An int that
        small is kept, with a warning.
    bootstrap : bool, default=False
        Draw each tree's rows with replacement.
    min_gain : float or None, default=None
        A node whose best gain is ``<= min_gain`` becomes a leaf (for
        ``"fastbic"``/``"gmm"``, ``0.0`` stops when two Gaussians are no better
        than one by BIC).  ``None`` never stops on gain.
    max_redraws : int, default=8
        When none of a node's candidate projections shows two-cluster
        structure (Fast-BIC or GMM gain ``<= 0``), draw up to this many further
        batches of ``max_features`` candidates before cutting anyway (at the
        best two-means cut; see Notes).  ``0`` tries one batch, as the paper.
    decay_redraws : bool, default=False
        Halve the redraws of a node's children when the node itself found no
        structure after all its redraws (8, 4, 2, 1, 0 down a branch; the
        budget never grows again below such a node).  Saves most of the redraw
        work on noise-like data, at a cost in many noise dimensions (see Notes).
    split_samples : int or None, default=8192
        A node holding more rows than this chooses its projection and cut on
        about this many of them and then sends all its rows down the cut; its
        gain is scaled to its size.  Each row is drawn with probability
        ``split_samples / rows`` by a hash of its values salted per node, so
        the tree is the same for any row order and for a Dask fit.  Near the
        root of a tree grown on many rows the cut a sample finds is the cut
        all rows would find, at a fraction of the sorting; nodes this small
        or smaller are unchanged, so are trees grown on no more rows (see
        Notes).  ``None``: every node chooses on all its rows.
    image_shape : tuple of int or None, default=None
        With ``projection="patch"``: ``(L,)`` or ``(H, W)`` (row-major), whose
        product is ``n_features``.
    min_patch_shape, max_patch_shape : int, tuple of int or None, default=None
        Patch sizes per axis for ``projection="patch"`` (``None``: 1 and
        ``min(4, size)``).
    wrap : bool, default=False
        Let patches wrap around the grid's edges (periodic features).
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
        Candidate projections per node, resolved from ``max_features``.
    distance_ : {"relevance", "proximity"}
        The ranking ``distance`` resolved at fit.
    feature_relevance_ : ndarray of float64, shape (n_features,)
        With ``distance_ == "relevance"``: ``rho_j = max(0, 1 - near_j /
        s_j)``, with ``near_j`` and ``s_j`` the mean squared differences along
        feature ``j`` between points and the first sixth of their (at most)
        180 highest-proximity neighbours and all of these, counting only
        neighbours that share a leaf with the point (at most 2,000 points,
        evenly spread).  1: the forest's nearest agree exactly along ``j``;
        0: no closer than the rest of the pool.
    metric_weights_ : ndarray of float64, shape (n_features,), or None
        With ``distance_ == "relevance"``: the weights ``w`` of the metric
        ``d(x, y)^2 = sum_j w_j (x_j - y_j)^2`` that ranks and measures the
        neighbours of :meth:`kneighbors`; ``None`` with ``"proximity"``.
    nbytes_ : int
        Memory of the fitted trees in bytes: ``trees_``, their flat copy for
        queries and ``inbag_counts_`` (not the training data).

    Notes
    -----
    Defaults were chosen on the URerF paper's four simulations (N = 1000) with
    10, 100 and 1,000 noise dimensions N(0, 70), by the precision@50 of
    100-tree forests (``studies/tune_defaults.py``; tables in
    ``docs/defaults.md``, figures in ``docs/forests.md``).  Much better than
    Euclidean neighbours at every noise level; the reasons for each default:

    * ``max_tied_fraction=0.05`` was chosen later, on real data: the
      selection half of the neighbourhood suite, clean and with appended
      noise columns, and the paper's sphere, whose grid has repeated
      coordinates (``studies/tied_projections.py``; ``geoforest experiment
      neighbours``).  On integer-valued or zero-inflated features a
      one-feature projection puts many samples on one value; Fast-BIC's
      variance floor then makes the gain of a cut isolating that value grow
      with the number of tied samples, so such cuts win the nodes and the
      neighbours fall well below Euclidean ones (MNIST digits: 10-NN label
      agreement 0.55 against Euclid's 0.85; 0.81 with growth).  Growth
      draws only discrete features: growing with any feature lets
      continuous noise columns break the ties, and then the projections
      are mostly noise.  A node whose candidates grew redraws once: growth
      makes honest gains of 0 common, and spending every redraw on grown
      candidates multiplies the fit time of integer data for no better
      neighbours (``docs/defaults.md``).  Ranked by proximity, growth loses
      on all-discrete data with many noise columns (letters + 100 noise
      columns: 0.34 against 0.47 without growth, Euclid 0.13); ranked by
      relevance (the default) it gives 0.55 there.
    * ``feature_combinations=1.5``: with the paper's density (``"paper"``,
      p/20 nonzeros) precision falls to chance at 1,000 noise dimensions,
      because every projection then mixes the few signal features with dozens
      of noise features.
    * ``max_samples=0.5``: half the rows per tree (the paper subsamples too)
      is both more precise and cheaper than all rows in many noise dimensions.
    * ``min_samples_split=45`` beat 20 on all four simulations.
    * ``max_redraws=8``: without redraws precision collapses as noise
      dimensions are added; more redraws add little for their cost.
    * ``decay_redraws=False``: decaying redraws fit faster and help a little
      in few noise dimensions, but lose precision in many.  An option for many
      points in few dimensions, not a default.
    * ``split_samples=8192``: no tree of the neighbours' or clustering
      suites (at most 1,500 rows) has a node that large, so they are
      unchanged.  On the suite's larger selection sets at full size (up to
      20,000 rows, clean and with 100 noise columns) 8192 kept the neighbours'
      label share, while 4096 and 2048 lost some under noise columns; a
      forest on 200,000 points grows each tree about a quarter faster
      (``studies/split_samples.py``, ``docs/defaults.md``).

    * ``distance="auto"`` (the learned metric) was designed on
      real data, the simulations and larger helices
      (``studies/relevance_distance.py``, ``docs/defaults.md``) and checked
      at 10^6 points (``benchmarks/bench_million.py``): proximity ranks the
      points of a region by counts out of ``n_estimators``, which is blocky;
      Euclidean distance ranks them better on clean data but not under
      noise columns.  The learned metric weighs each feature by how much
      tighter the forest's nearest are along it than the rest of the
      candidate pool, so noise columns drop out and the neighbours match or
      beat Euclidean ones on clean data while gaining under noise and at
      scale (figures in ``docs/defaults.md``).  Only neighbours sharing a
      leaf enter the estimate: a few rows padded with unrelated points
      would otherwise decide the structure features' spread.

    Two departures from the paper.  Fast-BIC is used in gain form (BIC of one
    Gaussian minus the best two-Gaussian BIC), which makes the choice between
    projections independent of each projection's scale.  And where no cut of
    any candidate beats one Gaussian, the paper's minimum-BIC cut peels off a
    single extreme point, so trees on structureless data (noise, or any small
    enough region of real data) become chains of depth ~n and cost O(n^2);
    geoforest first redraws candidates (``max_redraws``) and then cuts at the
    two-means cut of the most divisible candidate, keeping trees O(log n) deep.

    References
    ----------
    .. [1] M. Madhyastha, P. Li, J. Browne, V. Strnadova-Neeley, C. E. Priebe,
       R. Burns and J. T. Vogelstein, "Geodesic Learning via Unsupervised
       Decision Forests" (URerF, Fast-BIC).
    .. [2] T. M. Tomita et al., "Sparse Projection Oblique Randomer Forests",
       JMLR 21(104), 2020 (arXiv:1506.03410) (the sparse projections).
    .. [3] R. Perry, T. M. Tomita, J. Patsolic, B. Falk and J. T. Vogelstein,
       "Manifold Forests: Closing the Gap on Neural Networks" (the patch
       projections).
    .. [4] L. Breiman, "Random Forests", Machine Learning 45, 2001 (forest
       proximities; ``projection="axis"``).
    .. [5] C. Domeniconi, J. Peng and D. Gunopulos, "Locally Adaptive Metric
       Nearest-Neighbor Classification", IEEE TPAMI 24(9), 2002 (feature
       relevance measured in neighbourhoods weighting a nearest-neighbour
       metric, there from labels; ``distance="relevance"`` takes it from the
       forest's neighbourhoods).

    Examples
    --------
    >>> import geoforest as gf
    >>> X, s = gf.datasets.make_helix(300, random_state=0)
    >>> forest = gf.UnsupervisedForest(n_estimators=20, random_state=0).fit(X)
    >>> dist, ind = forest.kneighbors(n_neighbors=5)
    >>> ind.shape
    (300, 5)
    """

    _parameter_constraints: dict = {
        **BaseForest._parameter_constraints,
        "projection": [StrOptions({"sparse", "axis", "patch"})],
        "criterion": [StrOptions(set(CRITERIA))],
        "feature_combinations": [
            Interval(numbers.Real, 1.0, None, closed="left"),
            StrOptions({"paper"}),
        ],
        "max_tied_fraction": [Interval(numbers.Real, 0.0, 1.0, closed="neither"), None],
        "distance": [StrOptions({"auto", "relevance", "proximity"})],
        "min_gain": [numbers.Real, None],
        "max_redraws": [Interval(numbers.Integral, 0, None, closed="left")],
        "decay_redraws": ["boolean"],
        "split_samples": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "image_shape": ["array-like", Interval(numbers.Integral, 1, None, closed="left"), None],
        "min_patch_shape": ["array-like", Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_patch_shape": ["array-like", Interval(numbers.Integral, 1, None, closed="left"), None],
        "wrap": ["boolean"],
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        projection: str = "sparse",
        criterion: str = "fastbic",
        max_features="sqrt",
        feature_combinations=1.5,
        max_tied_fraction: float | None = 0.05,
        distance: str = "auto",
        min_samples_split: int = 45,
        min_samples_leaf: int = 1,
        max_depth: int | None = None,
        max_samples=0.5,
        bootstrap: bool = False,
        min_gain: float | None = None,
        max_redraws: int = 8,
        decay_redraws: bool = False,
        split_samples: int | None = 8192,
        image_shape=None,
        min_patch_shape=None,
        max_patch_shape=None,
        wrap: bool = False,
        n_jobs: int | None = None,
        random_state=None,
        verbose: int = 0,
    ):
        self.n_estimators = n_estimators
        self.projection = projection
        self.criterion = criterion
        self.max_features = max_features
        self.feature_combinations = feature_combinations
        self.max_tied_fraction = max_tied_fraction
        self.distance = distance
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.max_samples = max_samples
        self.bootstrap = bootstrap
        self.min_gain = min_gain
        self.max_redraws = max_redraws
        self.decay_redraws = decay_redraws
        self.split_samples = split_samples
        self.image_shape = image_shape
        self.min_patch_shape = min_patch_shape
        self.max_patch_shape = max_patch_shape
        self.wrap = wrap
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _engine_config(self, n_features: int) -> EngineConfig:
        kind = PROJECTIONS[self.projection]
        if self.feature_combinations == "paper":
            mean_nnz = max(1.0, n_features / 20.0)
        else:
            mean_nnz = float(self.feature_combinations)
        params = np.array([mean_nnz])
        if kind == SPARSE and self.max_tied_fraction is not None:
            params = np.array(
                [mean_nnz, float(self.max_tied_fraction), MAX_GROWN_NONZEROS, GROWN_REDRAWS]
            )
        if kind == PATCH:
            params = patch_params(
                self.image_shape, self.min_patch_shape, self.max_patch_shape, self.wrap, n_features
            )
        rule = CRITERIA[self.criterion]
        return EngineConfig(
            projection=kind,
            projection_params=params,
            max_nonzeros=max_nonzeros(kind, params, n_features),
            criterion=rule,
            criterion_params=default_params(rule),
            n_projections=resolve_max_features(
                self.max_features, n_features, allow_more=self.projection != "axis"
            ),
            n_batches=1 + int(self.max_redraws),
            decay_batches=bool(self.decay_redraws),
            split_samples=(
                0
                if self.split_samples is None
                else max(int(self.split_samples), 2 * int(self.min_samples_leaf))
            ),
        )

    def _min_gain(self) -> float:
        return -np.inf if self.min_gain is None else float(self.min_gain)
