"""rpfCluster: spectral clustering of a forest's proximity kernel."""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClusterMixin, clone
from sklearn.metrics import adjusted_rand_score
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._progress import progress
from .._validation import N_JOBS, validate_data
from ._choice import (
    choose_by_relative_gap,
    eigengap_scores,
    explain_choice,
    min_cluster_size,
    n_components,
    score_partitions,
)
from ._spectral import (
    AUTO_DENSE_MAX_N,
    canonical_labels,
    spectral_clustering,
    spectral_partitions,
)

__all__ = [
    "ForestSpectralClustering",
    "attach_by_kernel",
    "kernel_vote",
    "sharpen_kernel",
    "truncated_kernel",
    "unfragmented_threshold",
]

#: Threshold grid of the paper (beta_1).
THRESHOLDS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4)
#: Scale grid (beta_2), log-spaced over the paper's range (0, 200].
SCALES: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0)
#: Queries per forest-kernel block in :meth:`ForestSpectralClustering.predict`.
PREDICT_CHUNK = 1024


def sharpen_kernel(S, threshold: float, scale: float, *, min_weight: float = 1e-12) -> sp.csr_array:
    """rpfCluster's affinity: zero entries below ``threshold``, map the rest by ``exp``.

    Kept entries ``s`` become ``exp((s - 1) / scale)``, which is the paper's
    ``exp(s / scale)`` divided by the constant ``exp(1 / scale)``: the same
    normalised affinity (and so the same clustering), without overflow for
    small scales.  Zeros stay zero, so the result is as sparse as ``S``.

    Weights below ``min_weight`` are dropped too: next to the diagonal's 1
    they cannot change the clustering, but they leave the graph numerically
    almost disconnected, an eigenvalue 1 repeated to rounding, on which Krylov
    eigensolvers stall (minutes on MAGIC's 19,020 points with ``scale=0.02``).
    Dropped, the components are exact and are solved one at a time.

    Parameters
    ----------
    S : scipy sparse matrix/array or ndarray of shape (n, n)
        A proximity kernel with values in [0, 1] (1 on the diagonal).
    threshold : float
        ``beta_1``: entries ``< threshold`` are removed.
    scale : float
        ``beta_2 > 0``: the bandwidth of the exponential map.
    min_weight : float, default=1e-12
        Sharpened weights below this are removed (``0`` keeps them all).

    Returns
    -------
    scipy.sparse.csr_array

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[1.0, 0.5, 0.05], [0.5, 1.0, 0.0], [0.05, 0.0, 1.0]])
    >>> A = sharpen_kernel(S, threshold=0.1, scale=0.5)
    >>> A.nnz, round(float(A[0, 1]), 4)
    (5, 0.3679)
    """
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    A = sp.csr_array(S, dtype=np.float64, copy=True)
    A.data[A.data < threshold] = 0.0
    A.eliminate_zeros()
    A.data = np.exp((A.data - 1.0) / scale)
    if min_weight > 0:
        A.data[A.data < min_weight] = 0.0
        A.eliminate_zeros()
    return A


def truncated_kernel(forest, n_neighbors: int) -> sp.csr_array:
    """A fitted forest's proximity kernel restricted to each point's nearest neighbours.

    Keeps ``S[i, j]`` when ``j`` is among the ``n_neighbors`` points of largest
    proximity to ``i`` or ``i`` among those of ``j`` (the union, so the result
    is symmetric), plus the diagonal of ones.  Memory is at most
    ``n * (2 * n_neighbors + 1)`` entries, where the full kernel holds every
    co-leaf pair (about ``n_estimators * leaf size`` per row, often ten times
    more); the neighbours come from :meth:`kneighbors`, which never forms the
    full kernel.  Ties in proximity go to the lower index, as in
    :meth:`kneighbors`.

    Parameters
    ----------
    forest : fitted geoforest forest
    n_neighbors : int
        Neighbours kept per point, ``1 <= n_neighbors < n_samples``.

    Returns
    -------
    scipy.sparse.csr_array of shape (n_samples, n_samples)
    """
    n = forest.inbag_counts_.shape[0]
    if not isinstance(n_neighbors, numbers.Integral) or not 1 <= n_neighbors < n:
        raise ValueError(f"n_neighbors must be an integer in [1, n_samples - 1 = {n - 1}]")
    dist, ind = forest.kneighbors(n_neighbors=int(n_neighbors))
    rows = np.repeat(np.arange(n), ind.shape[1])
    S = sp.csr_array((1.0 - dist.ravel(), (rows, ind.ravel())), shape=(n, n))
    S = S.maximum(S.T) + sp.eye_array(n, format="csr")
    S.eliminate_zeros()  # padding neighbours at proximity 0
    S.sort_indices()
    return sp.csr_array(S)


def unfragmented_threshold(S, thresholds, *, min_size: int | None = None) -> float:
    """The largest threshold whose thresholded kernel has no small connected component.

    A threshold beta_1 removes weak similarities; past some level it starts
    cutting single points and small groups off the graph.  This returns the
    largest of ``thresholds`` at which every connected component of
    ``S >= beta_1`` (entries of ``S`` below ``beta_1`` removed) still holds at
    least ``min_size`` points, or the smallest threshold when none qualifies.

    Parameters
    ----------
    S : scipy sparse array of shape (n, n)
        The forest kernel (1 on the diagonal).
    thresholds : sequence of float
        Candidate beta_1 values.
    min_size : int or None, default=None
        Smallest component size allowed; ``None`` means ``max(5, 2 % of n)``.

    Returns
    -------
    float
    """
    from scipy.sparse.csgraph import connected_components

    S = sp.csr_array(S)
    n = S.shape[0]
    if min_size is None:
        min_size = max(5, int(np.ceil(0.02 * n)))
    ordered = sorted(float(t) for t in thresholds)
    for b1 in reversed(ordered):
        A = S.copy()
        A.data[A.data < b1] = 0.0
        A.eliminate_zeros()
        _, comp = connected_components(A, directed=False)
        if np.bincount(comp).min() >= min(min_size, n):
            return b1
    return ordered[0]


#: Scores this close to the best are ties (same partition, summed in another order).
SCORE_TIE = 1e-9


def select_best(scores: np.ndarray, scales: np.ndarray, thresholds: np.ndarray) -> int:
    """Index of the best candidate; among ties the largest scale, then the smallest threshold.

    Tied consensus scores mean the candidates gave the same partition of the
    points they were compared on.  The largest ``scale`` (beta_2) among them
    is the smoothest affinity with that partition: the sharpest ones can leave
    the full graph numerically disconnected (200,000 blobs: beta_2 = 0.05,
    first among tied candidates, scored 0.255 where 0.1 and 1 scored 0.998).
    The smallest ``threshold`` (beta_1) cuts the fewest edges.
    """
    scores = np.asarray(scores, dtype=float)
    if not np.any(np.isfinite(scores)):
        return 0
    tied = np.flatnonzero(scores >= np.nanmax(scores) - SCORE_TIE)
    # lexsort: the last key is the primary one
    order = np.lexsort((np.asarray(thresholds)[tied], -np.asarray(scales)[tied]))
    return int(tied[order[0]])


def _persistent_components(S, threshold: float) -> int:
    """Components of at least :func:`min_cluster_size` points at the grid threshold below."""
    from scipy.sparse.csgraph import connected_components

    lower = max((t for t in THRESHOLDS if t < threshold), default=threshold)
    A = sp.csr_array(S, copy=True)
    A.data[A.data < lower] = 0.0
    A.eliminate_zeros()
    _, comp = connected_components(A, directed=False)
    return max(1, int(np.sum(np.bincount(comp) >= min_cluster_size(S.shape[0]))))


def attach_by_kernel(S, labels: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Give ``points`` the cluster they are most similar to in the kernel ``S``.

    A threshold beta_1 can cut points (or small groups) off the rest of the
    affinity graph; spectral clustering then has no information about them.
    The unthresholded kernel still links them to the others: each such point
    joins the cluster with the largest mean similarity to it.  Points with no
    similarity to any clustered point keep their label.

    Parameters
    ----------
    S : scipy sparse array of shape (n, n)
        The forest kernel.
    labels : ndarray of shape (n,)
        Cluster labels ``0 .. K-1``.
    points : ndarray of int
        The points to (re)assign.

    Returns
    -------
    ndarray of shape (n,)
        A copy of ``labels`` with ``points`` reassigned, in canonical order.
    """
    labels = np.asarray(labels).copy()
    if points.size == 0:
        return labels
    n = labels.shape[0]
    clustered = np.setdiff1d(np.arange(n), points, assume_unique=True)
    if clustered.size == 0:
        return labels
    best, linked = kernel_vote(sp.csr_array(S)[points], labels, clustered)
    labels[points[linked]] = best[linked]
    return canonical_labels(labels)


def kernel_vote(S_rows, labels: np.ndarray, clustered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cluster of largest mean kernel similarity, for each row of ``S_rows``.

    The vote of :func:`attach_by_kernel` (points the threshold cut off) and
    :meth:`ForestSpectralClustering.predict` (new points): row ``q`` scores
    cluster ``c`` by the mean of ``S_rows[q, j]`` over the points ``j`` of
    ``clustered`` labelled ``c``.

    Parameters
    ----------
    S_rows : scipy sparse array or ndarray of shape (n_rows, n)
        Similarities of the rows to the ``n`` labelled points.
    labels : ndarray of shape (n,)
        Cluster labels ``0 .. K-1`` (only those of ``clustered`` are read).
    clustered : ndarray of int
        The points that vote.

    Returns
    -------
    best : ndarray of shape (n_rows,)
        The cluster of the largest mean similarity (ties: the lower label).
    linked : ndarray of shape (n_rows,), bool
        False for the rows with no similarity to any voting point (``best``
        is then 0, meaningless).
    """
    n = labels.shape[0]
    k = int(labels[clustered].max()) + 1
    one_hot = sp.csr_array((np.ones(clustered.size), (clustered, labels[clustered])), shape=(n, k))
    sizes = np.bincount(labels[clustered], minlength=k).astype(np.float64)
    scores = sp.csr_array(S_rows) @ one_hot
    scores = np.asarray(scores.toarray() if sp.issparse(scores) else scores) / np.maximum(sizes, 1)
    return np.argmax(scores, axis=1), scores.max(axis=1) > 0


class ForestSpectralClustering(ClusterMixin, BaseEstimator):
    """rpfCluster: spectral clustering of a forest kernel, thresholded and sharpened.

    Fits a forest (a :class:`~geoforest.RandomProjectionForest` by default,
    or any geoforest forest), takes its proximity kernel ``S`` (sparse),
    removes entries below ``threshold`` (the paper's beta_1), maps the kept
    entries by ``exp(S / scale)`` (beta_2; zeros stay zero, see
    :func:`sharpen_kernel`) and runs normalised spectral clustering
    (:func:`~geoforest.cluster.spectral_clustering`).

    When ``threshold`` or ``scale`` is ``"auto"``, the pairs of the grids
    :data:`THRESHOLDS` x :data:`SCALES` are clustered and one is chosen without
    labels by ``selection``:

    * ``"auto"`` (default): ``"relgap"`` when ``n_clusters`` is None,
      ``"unfragmented"`` when it is given;
    * ``"relgap"``: beta_1 as for ``"unfragmented"``; beta_2 and ``K``
      together, by the largest relative spectral gap ``mu_(K+1) / mu_K``
      over the scales and ``K = 2 .. max_clusters`` among partitions without
      a cluster under ``max(5, 2 % of n)`` points, ``K = 1`` when no gap
      reaches 2 (:func:`~geoforest.cluster.choose_by_relative_gap`, the
      library's shared label-free rule).  Connected components of the
      thresholded kernel that persist at the next lower grid threshold are
      clusters in any case; the gaps judge finer splits.  With ``n_clusters``
      given it is ``"unfragmented"``;
    * ``"consensus"``: the candidate partition that agrees best (mean
      adjusted Rand index) with all the others (ties: the largest beta_2,
      then the smallest beta_1; :func:`select_best`);
    * ``"eigengap"``: the candidate with the largest gap
      ``lambda_K - lambda_{K+1}`` of its normalised affinity;
    * ``"unfragmented"``: beta_1 is the largest grid threshold that leaves no
      connected component under ``max(5, 2 % of n)`` points
      (:func:`unfragmented_threshold`, on the full kernel), and beta_2 the
      consensus candidate over :data:`SCALES` at that beta_1 (10 candidates
      instead of 50).
    * ``"stability"``: beta_1 as for ``"unfragmented"``; beta_2 is the scale
      whose partition changes least when the forest is redrawn: the
      candidates at each scale are also computed from ``stability_forests - 1``
      further forests (other seeds, same data or subset), and the scale with
      the largest mean adjusted Rand index between the forests' partitions
      wins (ties as in :func:`select_best`), among the candidates without a
      cluster under ``max(5, 2 % of n)`` points when there are any (a few
      outliers split off are stable for a trivial reason).  The labels are
      the first forest's.  Costs ``stability_forests - 1`` more forests and kernels.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters; ``None`` estimates it (with the default
        ``selection``: by the relative gap, jointly with beta_2; with the
        older rules: by the largest eigengap of each candidate affinity).
    forest : geoforest forest or None, default=None
        An unfitted forest whose ``proximity()`` is the kernel; cloned before
        fitting.  ``None`` uses ``RandomProjectionForest(n_estimators=200)``.
        Its ``random_state``/``n_jobs`` are set from this estimator's when
        they are ``None``.
    threshold : float in [0, 1) or "auto", default="auto"
        beta_1.
    scale : float > 0 or "auto", default="auto"
        beta_2.
    selection : {"auto", "relgap", "unfragmented", "stability", "consensus", "eigengap"}, \
            default="auto"
        How ``"auto"`` picks a candidate (see above and Notes).
    stability_forests : int, default=4
        Forests compared by ``selection="stability"`` (the fitted one
        included); ignored by the other rules.  4 is the value measured on
        the eight data sets (``docs/results/rpf-cluster.md``); others were
        not compared.
    max_clusters : int, default=10
        Largest K the eigengap may choose when ``n_clusters`` is None.
    n_init : int, default=10
        k-means restarts.
    eigen_solver : {"auto", "dense", "arpack", "lobpcg"}, default="auto"
        Eigensolver of the spectral step.
    eigen_tol : float, default=1e-6
        Tolerance of the iterative eigensolvers (relative accuracy of the
        eigenvalues; ``0`` is machine precision).  On MAGIC a machine-precision
        solve of a candidate whose graph has a tiny spectral gap took 21 s
        (minutes for others) and ``1e-6`` 3.6 s, with the same partition.
    kernel_neighbors : int or None, default=None
        ``None`` clusters the full forest kernel.  An int keeps only each
        point's ``kernel_neighbors`` most similar points (see
        :func:`truncated_kernel`; capped at ``n_samples - 1`` with a
        ``UserWarning``: that keeps every co-leaf pair, the full kernel), so memory grows
        with ``n * kernel_neighbors`` instead of ``n * n_estimators * leaf
        size``: the option for hundreds of thousands of points.
    max_selection_samples : int or None, default=1000
        With ``"auto"`` on more points than this, the candidates are compared
        on a random subset of this many points, with the kernel of a forest
        grown on the subset alone (same settings), and only the chosen pair
        clusters all the points.  Restricting the full kernel to the subset
        instead left almost no edges at large n (5,000 blobs: accuracy 0.49
        against 0.997).  ``None`` always uses every point.
    random_state : int, RandomState instance or None, default=None
        Seeds the forest (when it has none) and the spectral step.
    n_jobs : int or None, default=None
        Threads of the forest (when it has none).
    verbose : int, default=0
        Show a progress bar over the candidate scales (beta_1, beta_2) (tqdm) when positive.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each point.
    n_clusters_ : int
        Number of clusters found.
    kernel_ : scipy.sparse.csr_array
        The forest's proximity kernel ``S`` (truncated when
        ``kernel_neighbors`` is set).
    affinity_matrix_ : scipy.sparse.csr_array
        The thresholded, sharpened affinity that was clustered.
    threshold_, scale_ : float
        The beta_1 and beta_2 used.
    candidates_ : list of dict
        Every candidate's ``threshold``, ``scale``, ``n_clusters``, ``score``
        (what ``selection`` maximised) and ``labels`` (of the points in
        ``selection_indices_`` when a subset was used).
    selection_indices_ : ndarray or None
        The subset the candidates were compared on (``None``: all points).
    selection_kernel_ : scipy.sparse.csr_array
        The kernel the candidates were compared on: ``kernel_``, or the
        subset forest's kernel.
    forest_ : fitted forest
    eigenvalues_ : ndarray
        Leading eigenvalues of the chosen normalised affinity.
    n_clusters_scores_ : ndarray of shape (max_clusters,)
        The evidence behind ``n_clusters_``: with ``"relgap"`` the best
        relative gap of each ``K`` over the scales (the entry of the base
        ``K`` holds the bar, 2; :func:`~geoforest.cluster.choose_by_relative_gap`),
        otherwise the eigengaps of the chosen affinity
        (:func:`~geoforest.cluster.eigengap_scores`); NaN where not computed.
        A :class:`~geoforest.cluster.LabelFreeChoiceWarning` says when
        ``K = 1`` was chosen or the runner-up scored within 10 % of the winner.

    Notes
    -----
    **Why ``"relgap"`` chooses K**: chosen on the selection half of the
    clustering suite and checked on its report half
    (``docs/results/clustering-suite.md``): it stops the eigengap rule's
    over-splitting of small tabular sets and noisy data, at the price of
    taking the dominant level of a hierarchy (fewer clusters than classes
    where one class sits apart).

    **Why ``selection="unfragmented"`` is the rule with K given** (measured with
    ``studies/rpf_cluster_subset.py``, K given, 200 trees, 10 seeds;
    ``docs/results/rpf-cluster.md`` and ``docs/defaults.md``).  Consensus over
    the full 5 x 10 grid lets a large beta_1 win when the thresholded graph
    has shattered and most candidates agree on the broken partition: on
    segment (2,310 points) 4 of 10 seeds picked beta_1 = 0.2 and scored 0.288,
    mean accuracy 0.529 +- 0.201.  Taking beta_1 from the kernel's
    connectivity first (the largest grid value leaving no component under
    ``max(5, 2 % of n)`` points) and beta_2 by consensus at that beta_1 gave
    0.719 +- 0.027 on the same forests (beta_1 = 0.1 on every seed), and on
    the small data sets iris 0.930 (consensus 0.930), wine 0.946 (0.929),
    WDBC 0.874 (0.874), heart 0.616 (0.612).  It clusters 10 candidates
    instead of 50.  Per seed it can lose a little (segment: 3 of 10 seeds by
    0.001-0.021).  On the other large sets (candidates compared on 1,000
    points): satimage 0.721 against consensus 0.328 (10 seeds), but musk2
    0.539 against 0.554 and MAGIC (``kernel_neighbors=50``) 0.615 against
    0.633 (10 seeds each; on both, no method measured beats putting every
    point in one cluster, 0.846 and 0.648, by more than 0.001).

    ``selection="stability"`` (same protocol, 10 seeds,
    ``docs/results/rpf-cluster.md``) reaches iris 0.935 (co-cluster 0.924),
    wine 0.947, heart 0.618, segment 0.740 and MAGIC 0.619 (WDBC 0.873), but
    picks sharp scales on satimage and scores 0.646 there against 0.721, so
    it is not the default.  Its iris gain is seed noise: on seeds 10-19 it
    scored 0.925 (default 0.927).  On musk2 it moves towards one cluster
    for all points, 0.692 +- 0.137 (default 0.539, one cluster 0.846).

    New points are labelled by :meth:`predict`, a vote of the training points
    weighted by the forest kernel.

    References
    ----------
    .. [1] D. Yan, S. Gu, Y. Xu and Z. Qin, "Similarity kernel and clustering
           via random projection forests", arXiv:1908.10506 (2019).

    Examples
    --------
    >>> import geoforest as gf
    >>> from sklearn.datasets import load_iris
    >>> X = load_iris().data
    >>> model = gf.ForestSpectralClustering(n_clusters=3, threshold=0.0, scale=0.1,
    ...                                     random_state=0).fit(X)
    >>> model.labels_.shape, model.n_clusters_
    ((150,), 3)
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "forest": [None, HasMethods(["fit", "proximity"])],
        "threshold": [Interval(numbers.Real, 0.0, 1.0, closed="left"), StrOptions({"auto"})],
        "scale": [Interval(numbers.Real, 0.0, None, closed="neither"), StrOptions({"auto"})],
        "selection": [
            StrOptions({"auto", "relgap", "consensus", "eigengap", "unfragmented", "stability"})
        ],
        "stability_forests": [Interval(numbers.Integral, 2, None, closed="left")],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "eigen_solver": [StrOptions({"auto", "dense", "arpack", "lobpcg"})],
        "eigen_tol": [Interval(numbers.Real, 0.0, None, closed="left")],
        "kernel_neighbors": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_selection_samples": [Interval(numbers.Integral, 10, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_jobs": N_JOBS,
    }

    def __init__(
        self,
        n_clusters: int | None = None,
        *,
        forest=None,
        threshold="auto",
        scale="auto",
        selection: str = "auto",
        stability_forests: int = 4,
        max_clusters: int = 10,
        n_init: int = 10,
        eigen_solver: str = "auto",
        eigen_tol: float = 1e-6,
        kernel_neighbors: int | None = None,
        max_selection_samples: int | None = 1000,
        random_state=None,
        n_jobs: int | None = None,
        verbose: int = 0,
    ):
        self.n_clusters = n_clusters
        self.forest = forest
        self.threshold = threshold
        self.scale = scale
        self.selection = selection
        self.stability_forests = stability_forests
        self.max_clusters = max_clusters
        self.n_init = n_init
        self.eigen_solver = eigen_solver
        self.eigen_tol = eigen_tol
        self.kernel_neighbors = kernel_neighbors
        self.max_selection_samples = max_selection_samples
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @property
    def _selection(self) -> str:
        """The rule ``selection`` stands for with these parameters."""
        if self.selection == "auto":
            return "relgap" if self.n_clusters is None else "unfragmented"
        if self.selection == "relgap" and self.n_clusters is not None:
            return "unfragmented"  # the rule chooses K; with K given, beta_2 as before
        return self.selection

    def _make_forest(self):
        from ..forest import RandomProjectionForest
        from ..forest._base import with_seed_and_threads

        forest = (
            RandomProjectionForest(n_estimators=200) if self.forest is None else clone(self.forest)
        )
        return with_seed_and_threads(forest, self.random_state, self.n_jobs)

    def fit(self, X, y=None):
        """Fit the forest on ``X`` and cluster its sharpened kernel.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._validate_params()
        # Validated here too, so that a bad X is reported as this estimator's input
        # (not the inner forest's); "numeric" keeps the dtype the forest picks from.
        X = validate_data(self, X, dtype="numeric", ensure_min_samples=2)
        forest = self._make_forest().fit(X)
        n = forest.inbag_counts_.shape[0]
        if self.n_clusters is not None and self.n_clusters > n:
            raise ValueError(f"n_clusters={self.n_clusters} exceeds n_samples={n}")
        if n < 2:
            raise ValueError(f"rpfCluster needs at least 2 samples, got n_samples={n}")
        if self.kernel_neighbors is None:
            S = sp.csr_array(forest.proximity())
        else:
            if self.kernel_neighbors > n - 1:
                warnings.warn(
                    f"kernel_neighbors={self.kernel_neighbors} is above n_samples - 1 = "
                    f"{n - 1}; capped at {n - 1}, which keeps every co-leaf pair (the full "
                    "kernel, as kernel_neighbors=None gives)",
                    UserWarning,
                    stacklevel=2,
                )
            S = truncated_kernel(forest, min(self.kernel_neighbors, n - 1))
        self.forest_ = forest
        self.n_features_in_ = forest.n_features_in_
        self.kernel_ = S
        if self.threshold != "auto":
            thresholds = (float(self.threshold),)
        elif self._selection in ("unfragmented", "stability", "relgap"):
            thresholds = (unfragmented_threshold(S, THRESHOLDS),)
        else:
            thresholds = THRESHOLDS
        scales = SCALES if self.scale == "auto" else (float(self.scale),)
        rs = self.random_state
        seed = (
            int(rs)
            if isinstance(rs, numbers.Integral)
            else check_random_state(rs).randint(2**31 - 1)
        )
        grid = [(b1, b2) for b1 in thresholds for b2 in scales]
        # Compare the candidates on a random subset when n is large: the choice of
        # (beta_1, beta_2) needs the shape of the kernel, not every point.  The
        # subset gets its own forest: restricting the full kernel to m of n points
        # keeps about m / n of each row's neighbours, a graph with almost no edges
        # at large n, while the subset's own kernel has the full kernel's local
        # structure (its values depend on neighbour ranks relative to the leaf
        # size, not on n).
        m = self.max_selection_samples
        if len(grid) > 1 and m is not None and n > m:
            sub = np.sort(check_random_state(seed).choice(n, size=m, replace=False))
            sub_forest = self._make_forest().fit(forest._X_fit[sub])
            if self.kernel_neighbors is None:
                S_sel = sp.csr_array(sub_forest.proximity())
            else:
                S_sel = truncated_kernel(sub_forest, min(self.kernel_neighbors, m - 1))
        else:
            sub = None
            S_sel = S
        if self._selection == "relgap":
            candidates, best, k_scores = self._relgap_candidates(S_sel, grid, seed)
            b1, b2 = grid[best]
            chosen = self._candidate(S, b1, b2, seed, n_clusters=candidates[best]["n_clusters"])
            criterion = "relative gap"
        else:
            candidates = [
                self._candidate(S_sel, b1, b2, seed)
                for b1, b2 in progress(grid, len(grid), self.verbose, "rpfCluster scales")
            ]
            if self._selection == "stability" and len(grid) > 1:
                X_sel = forest._X_fit if sub is None else forest._X_fit[sub]
                self._score_stability(candidates, grid, X_sel, seed)
            best = self._select(candidates, seed)
            chosen = (
                candidates[best]
                if sub is None
                else self._candidate(
                    S, candidates[best]["threshold"], candidates[best]["scale"], seed
                )
            )
            k_scores = eigengap_scores(chosen["_res"].eigenvalues, self.max_clusters)
            criterion = "eigengap"
        self.labels_ = chosen["_res"].labels
        self.n_clusters_ = int(chosen["n_clusters"])
        self.eigenvalues_ = chosen["_res"].eigenvalues
        self.n_clusters_scores_ = k_scores
        if self.n_clusters is None:
            explain_choice(
                type(self).__name__, self.n_clusters_, k_scores, criterion=criterion
            )  # fmt: skip
        self.affinity_matrix_ = chosen["_A"]
        self.threshold_ = chosen["threshold"]
        self.scale_ = chosen["scale"]
        self.selection_indices_ = sub
        self.selection_kernel_ = S_sel
        self.candidates_ = [
            {**{k: v for k, v in c.items() if not k.startswith("_")}, "labels": c["_labels"]}
            for c in candidates
        ]
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Cluster of new points by a vote of the training points, through the forest kernel.

        Each query is dropped down the fitted forest; its proximity to every
        training point (the fraction of trees in which they share a leaf,
        ``forest_.proximity(X)``) weighs a vote over ``labels_``: the query
        joins the cluster of largest mean proximity (:func:`kernel_vote`, the
        rule the fit uses for points the threshold cuts off,
        :func:`attach_by_kernel`).  The raw kernel is used, not the
        thresholded, sharpened affinity: that affinity's spectral embedding
        has no row for a new point.  With ``kernel_neighbors`` set, only the
        query's ``kernel_neighbors`` most similar training points vote
        (``forest_.kneighbors(X)``), as the truncated kernel keeps.

        A query that shares no leaf with any training point (not possible
        with geoforest's forests, every leaf of which holds training points,
        but possible for another ``forest``) gets the largest cluster, as
        the spectral step does for the points it cannot embed; its forest
        nearest neighbour would be arbitrary (every training point is at
        forest distance 1).

        ``predict(X_train)`` is not exactly ``labels_``: the labels come from
        spectral clustering of the thresholded, sharpened affinity, the vote
        from the raw kernel's co-leaf counts, and they can differ for points
        between clusters.  Measured agreement: 0.97-1.0 on iris, wine and
        4-blob data (3 seeds each, ``tests/test_out_of_sample.py``).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            New points, with the training data's number of features.

        Returns
        -------
        labels : ndarray of shape (n_queries,)
            Labels of ``labels_``.

        Raises
        ------
        ValueError
            ``X`` has another number of features than the training data, or
            values the forest does not accept.

        References
        ----------
        .. [1] D. Yan, S. Gu, Y. Xu and Z. Qin, "Similarity kernel and
               clustering via random projection forests", arXiv:1908.10506
               (2019).
        """
        check_is_fitted(self, "labels_")
        X = validate_data(self, X, dtype="numeric", reset=False)
        labels = np.asarray(self.labels_)
        n = labels.shape[0]
        voters = np.arange(n)
        fallback = int(np.argmax(np.bincount(labels)))
        out = np.empty(X.shape[0], dtype=np.intp)
        for lo in range(0, X.shape[0], PREDICT_CHUNK):
            rows = X[lo : lo + PREDICT_CHUNK]
            if self.kernel_neighbors is None:
                S_rows = self.forest_.proximity(rows)
            else:
                k = min(int(self.kernel_neighbors), n)
                dist, ind = self.forest_.kneighbors(rows, n_neighbors=k)
                S_rows = sp.csr_array(
                    (1.0 - dist.ravel(), (np.repeat(np.arange(rows.shape[0]), k), ind.ravel())),
                    shape=(rows.shape[0], n),
                )
            best, linked = kernel_vote(S_rows, labels, voters)
            out[lo : lo + PREDICT_CHUNK] = np.where(linked, best, fallback)
        return out

    def _relgap_candidates(self, S, grid, seed: int):
        """Score every (beta_1, beta_2, K) by its relative gap; the shared rule picks one."""
        max_k = int(min(self.max_clusters, S.shape[0] - 1))
        gaps = np.full((len(grid), max_k), np.nan)
        fragmented = np.ones((len(grid), max_k), dtype=bool)
        parts = []
        for c, (b1, b2) in enumerate(progress(grid, len(grid), self.verbose, "rpfCluster scales")):
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*zero degree", category=UserWarning)
                part = spectral_partitions(
                    sharpen_kernel(S, b1, b2), max_k, n_init=4, solver=self.eigen_solver,
                    random_state=seed, tol=self.eigen_tol,
                )  # fmt: skip
            gaps[c], fragmented[c] = score_partitions(part, max_k)
            parts.append(part)
        # Connected components of the thresholded kernel are clusters when they
        # persist at the next lower threshold (a split made by beta_1 alone is
        # not: it can cut one Gaussian blob in two); the gaps judge finer splits.
        base_k = min(
            min(n_components(p.eigenvalues) for p in parts),
            _persistent_components(S, min(b1 for b1, _ in grid)),
        )
        best, k_hat, scores = choose_by_relative_gap(gaps, fragmented, base_k=base_k)
        candidates = []
        for c, (b1, b2) in enumerate(grid):
            row = np.where(fragmented[c], -np.inf, np.nan_to_num(gaps[c], nan=-np.inf))
            k_c = int(np.argmax(row)) + 1 if np.isfinite(row.max()) else base_k
            if c == best:
                k_c = k_hat
            labels = parts[c].labels.get(k_c, np.zeros(parts[c].rows.size, dtype=np.intp))
            score = float(gaps[c, k_c - 1]) if k_c > 1 else np.nan
            candidates.append({"threshold": b1, "scale": b2, "n_clusters": k_c,
                               "score": score, "_labels": labels})  # fmt: skip
        return candidates, best, scores

    def _candidate(
        self, S, b1: float, b2: float, seed: int, n_clusters: int | None = None
    ) -> dict[str, Any]:
        n_clusters = self.n_clusters if n_clusters is None else n_clusters
        A = sharpen_kernel(S, b1, b2)
        n = S.shape[0]
        max_clusters = min(self.max_clusters, n - 1)
        n_eigenvalues = None
        if self._selection == "eigengap" and n_clusters is not None:
            # the eigengap after K needs one eigenvalue more than the clustering
            dense = self.eigen_solver == "dense" or (
                self.eigen_solver == "auto" and n <= AUTO_DENSE_MAX_N
            )
            n_eigenvalues = min(n_clusters + 1, n if dense else n - 1)
        with warnings.catch_warnings():
            # points the thresholded graph cuts off are attached below
            warnings.filterwarnings(
                "ignore", message=".*connected components", category=UserWarning
            )
            res = spectral_clustering(
                A,
                n_clusters,
                max_clusters=max_clusters,
                n_init=self.n_init,
                solver=self.eigen_solver,
                random_state=seed,
                n_eigenvalues=n_eigenvalues,
                tol=self.eigen_tol,
            )
        res.labels = attach_by_kernel(S, res.labels, res.unembedded)
        return {"threshold": b1, "scale": b2, "n_clusters": res.n_clusters, "_res": res, "_A": A,
                "_labels": res.labels}  # fmt: skip

    def _score_stability(self, candidates, grid, X_sel, seed: int) -> None:
        """Score each candidate by its partition's agreement across redrawn forests."""
        partitions = [[c["_res"].labels for c in candidates]]
        for b in range(1, self.stability_forests):
            # Further forests: the same data (or subset), seeds derived from ``seed``.
            other = self._make_forest().set_params(random_state=(seed + 7919 * b) % (2**31 - 1))
            other.fit(X_sel)
            m = X_sel.shape[0]
            if self.kernel_neighbors is None:
                S_b = sp.csr_array(other.proximity())
            else:
                S_b = truncated_kernel(other, min(self.kernel_neighbors, m - 1))
            partitions.append(
                [self._candidate(S_b, b1, b2, seed)["_res"].labels for b1, b2 in grid]
            )
        # A partition with a cluster of a few points is stable for a trivial
        # reason (the same outliers split off in every forest): such candidates
        # only win when every candidate has one.  Same size as the
        # unfragmented threshold's.
        m = partitions[0][0].shape[0]
        min_size = min(max(5, int(np.ceil(0.02 * m))), m)
        fragmented = [np.bincount(lab).min() < min_size for lab in partitions[0]]
        for j, c in enumerate(candidates):
            labels = [p[j] for p in partitions]
            c["fragmented"] = bool(fragmented[j])
            c["score"] = float(
                np.mean(
                    [
                        adjusted_rand_score(labels[a], labels[b])
                        for a in range(len(labels))
                        for b in range(a + 1, len(labels))
                    ]
                )
            )

    def _select(self, candidates: list[dict[str, Any]], seed: int) -> int:
        if len(candidates) == 1:
            candidates[0]["score"] = np.nan
            return 0
        if self._selection == "stability":
            scores = np.array([c["score"] for c in candidates])
            fragmented = np.array([c.get("fragmented", False) for c in candidates])
            if not fragmented.all():
                scores = np.where(fragmented, -np.inf, scores)
            return select_best(
                scores,
                np.array([c["scale"] for c in candidates]),
                np.array([c["threshold"] for c in candidates]),
            )
        if self._selection in ("consensus", "unfragmented"):
            labels = [c["_res"].labels for c in candidates]
            for i, c in enumerate(candidates):
                c["score"] = float(
                    np.mean(
                        [adjusted_rand_score(labels[i], l) for j, l in enumerate(labels) if j != i]
                    )
                )
        else:
            for c in candidates:
                values, k = c["_res"].eigenvalues, c["n_clusters"]
                c["score"] = float(values[k - 1] - values[k]) if values.shape[0] > k else -np.inf
        scores = np.array([c["score"] for c in candidates])
        return select_best(
            scores,
            np.array([c["scale"] for c in candidates]),
            np.array([c["threshold"] for c in candidates]),
        )
