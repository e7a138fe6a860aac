"""Neighbourhood quality: forest neighbours against Euclidean neighbours and other anchors.

How good are the ``k`` nearest neighbours an unsupervised forest gives, next to
the Euclidean ones and other unsupervised neighbour finders, on labelled real
data (clean and with appended noise columns), on clean 2-D sheets, on rotated
noisy problems and on the URerF paper's simulations?  Every method returns, for
every point, its ``k`` nearest *other* points (never itself), in the format of
``UnsupervisedForest.kneighbors(n_neighbors=k, return_distance=False)``.

Data
----
Every cell has a *family* (:data:`FAMILIES`: ``"real"``, ``"sheet"``,
``"rotated"``, ``"simulation"``) and a *half* (``"selection"``, ``"report"``;
``"simulation"`` for the simulations).  Defaults are chosen by looking at the
selection half only and reported on the report half (``docs/defaults.md``);
:func:`cells_of` gives a study the cells of one family and one half.

Real (family ``"real"``, half ``"selection"`` or ``"report"``, as in the clustering suite): every
real data set of :mod:`~geoforest_experiments.clustering_suite`
(``SELECTION + REPORT``; not its synthetic controls), loaded with
``load_suite_data(name, max_n=3000)``: its stratified subsample (seed 0, the
same points whatever ``--seed``) and its preprocessing (``PREPROCESSING``).
Each set comes in three versions: clean, and with 10 and 100 appended columns
drawn iid ``N(0, sigma^2)``, ``sigma`` = the median of the prepared data's
column standard deviations (the scale of a typical column), drawn with
``numpy.random.default_rng([seed, crc32(name), n_columns])``.  The reserved
data sets (``digits``, ``optdigits``, ``fashion-mnist``) are never loaded:
:func:`load_real` refuses every name outside the two halves.

Simulations (family and half ``"simulation"``): linear, helix, sphere and
mixture of the URerF paper, N = 1000, with 0, 10, 100 and 1000 iid
``N(0, 70)`` noise dimensions (:func:`~geoforest_experiments._runner.simulation`,
seed ``--seed``, as the noise sweep).

Sheets (family ``"sheet"``; :data:`SHEETS`): clean 2-D surfaces in 3-D with
unequal in-plane extents (``gf.datasets.make_sheet``, N = 1000, seed
``--seed``): flat strips at aspect 3 and 10, rolled sheets (an isometric
swiss roll) at 3 and 10, a ring-shaped cylinder, a torus with radii 3 : 1,
paraboloid patches at 3 and 10 and a strip whose density changes twentyfold
along its length at 3 and 10.  They test that a ranking does not distort a
direction the forest resolved.  Each comes with 0, 10, 100 and 1000 appended
iid ``N(0, sigma^2)`` columns, ``sigma`` the median column sd of the clean 3-D
points (:func:`with_noise`, as the real data: noise at the scale of a typical
coordinate of the surface, about its short side, so that it hides the short
direction before the long one).  Truth (``gf.datasets.sheet_geodesic_truth``):
the intrinsic coordinates, exact, for the strips, rolls and uneven strips; the
closed form for the cylinder; shortest paths over a 15-NN graph of the points
and 4,000 more on the surface for the torus and the paraboloids, an
approximation that shares 98 % of the 50 nearest with the exact distance on the
cylinder and with a ten times denser graph.

Rotated sets (family ``"rotated"``): the 3-D signal of a simulation or a sheet
plus :data:`ROTATED_DIMS` iid Gaussian columns of sd ``level`` x (the median
signal column sd), the whole matrix multiplied by a random orthogonal matrix
(``gf.datasets.add_rotated_noise``; noise and rotation seeded by
``crc32("{seed}/{name}/{level}")``), at levels :data:`ROTATED_LEVELS`.  The
noise lies along no axis; the truth is the signal's.  They test that a forest
which finds nothing to learn falls back to Euclidean quality.

Halves of the new families (fixed in :data:`SHEET_SELECTION`,
:data:`SHEET_REPORT`, :data:`ROTATED_SELECTION`, :data:`ROTATED_REPORT`, each
with one of every kind of difficulty): sheets strip-10, roll-3, torus-3,
paraboloid-10, uneven-3 | strip-3, roll-10, cylinder-3, paraboloid-3,
uneven-10; rotated helix, mixture, roll-3 | linear, sphere, roll-10.

Metrics
-------
``agreement@10`` (real data): the mean over points of the fraction of their 10
neighbours that share their class (:func:`label_agreement`).
``precision@50`` (simulations, sheets, rotated sets): geodesic precision at 50
(``gf.metrics.geodesic_precision_recall`` with the data set's ground truth,
as the noise sweep; for the mixture the fraction of neighbours in the point's
component).  ``chance``: the value of random neighbours (:func:`chance_level`:
``k / (n - 1)``, or the expected share of a point's class for labels).
``best_euclid``: the best Euclidean value of the cell.  ``seconds``: fit +
neighbour query of the method (each method first runs once on a small random
set, so no timing holds one-off JIT compilation).
The summary, per half, family and noise level (never pooling two families,
whose metrics differ), divides every value by the best Euclidean value of its
cell (the larger of ``Euclid raw`` and ``Euclid z-scored``), and counts the bar
of the rotated sets: cells with ratio >= 0.95 among those where the best
Euclid is above twice chance.

Methods (:data:`METHODS`; each ``method(X, k, seed, n_jobs) -> (n, k)`` int64)
-----------------------------------------------------------------------------
``URerF``
    ``gf.UnsupervisedForest(n_estimators=100)`` at its defaults.  More forests
    with pinned keywords: add them to :data:`FOREST_VARIANTS` (they are built
    with :func:`forest_method` and come right after ``URerF``).
``Euclid raw``, ``Euclid z-scored``
    Exact Euclidean neighbours (scikit-learn ``NearestNeighbors`` through
    :func:`~geoforest_experiments.baselines.euclidean_neighbors`), of the data
    as given and of its z-scores (constant columns become 0).
``RPF``
    ``gf.RandomProjectionForest(n_estimators=100)`` at its defaults.
``RandomTreesEmbedding``
    scikit-learn's totally random trees, 100 of them, with ``max_depth=None,
    min_samples_split=30`` (:data:`RTE_PARAMS`) and its other defaults.  The
    proximity of two points is the number of trees in which they share a leaf
    (``E @ E.T`` of the one-hot leaf embedding ``E``, computed in row blocks).
    Its default ``max_depth=5`` caps a tree at 32 leaves, so the leaf size grows
    with ``n`` (hundreds of points per leaf at ``n = 3000``, and skewed
    features make it worse); ``max_depth=None`` alone grows the trees until
    every leaf holds one point, and then no two points ever share a leaf.
    ``min_samples_leaf`` is no cure: a totally random tree draws one threshold
    per node and, when that cut leaves too few points on one side, the node
    stops as a leaf, so on skewed data most of the points stay in a few huge
    leaves.  ``min_samples_split=30`` (nodes of fewer than 30 points are
    leaves) bounds every leaf below 30 points on any data, the leaf-size rule
    of ``RPF`` at its default: the same neighbourhood scale for both random
    partitions.
``UMAP graph``
    UMAP's fuzzy simplicial set ``graph_`` of
    ``umap.UMAP(n_neighbors=max(15, k), random_state=seed)`` (``n_neighbors``
    at most ``n - 1``; otherwise its defaults), fitted with
    ``transform_mode="graph"`` (no embedding is optimised) on the matrix of
    Euclidean distances (``metric="precomputed"``, scikit-learn's
    ``euclidean_distances``).  That is the graph of a default fit: below 4096
    points (all data here) UMAP builds it from the same exact distance matrix,
    only computed pair by pair in Python; the edges are the same and the
    weights equal to float32 rounding.  Neighbours: the ``k`` largest
    membership strengths of each row (ties to the lower index).  UMAP counts
    the point itself among its ``n_neighbors``, so with ``k >= 15`` a row can
    hold only ``k - 1`` nonzero strengths; such rows are completed with the
    nearest remaining points in raw Euclidean distance.
``Isolation Kernel``
    ``ikpykit.kernel.IsoKernel(random_state=seed)`` at the defaults of
    ikpykit 0.4.0: ``method="anne"`` (Voronoi cells around sampled points),
    200 estimators, ``max_samples="auto"`` (16 points per estimator).
    Neighbours: the ``k`` largest kernel similarities (dot products of the
    sparse feature map, i.e. the number of estimators in which two points
    share a cell), ties to the lower index.  ikpykit is licensed CC BY-NC-ND
    4.0, so it is no dependency of any extra of geoforest: the anchor runs
    only when ikpykit is installed (``pip install ikpykit==0.4.0``), and the
    run says so (and records it in its JSON record) when it is not.

Ties go to the lower index everywhere; a point sharing a leaf (or cell) with
fewer than ``k`` others is completed with the lowest-index remaining points,
as the forests' own ``kneighbors`` does.  A method that raises gives a row with
its ``error`` and a NaN value.

``--quick``: iris, wine, raw WDBC (no data wheel needed), clean and with 10
noise columns; helix and sphere at N = 300 with 0 and 10 noise dimensions,
strip-10 and roll-10 at N = 300 with 0 and 10, the rotated helix at N = 300
and level 0.5, geodesic precision@30; 20 trees per ensemble; only the anchors
of the ``dev`` extra (no Isolation Kernel).
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import warnings
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist

import geoforest as gf

from ._runner import (
    SIMULATIONS,
    ExperimentConfig,
    ExperimentResult,
    MissingExtraError,
    Timer,
    precision_recall,
    progress,
    simulation,
    truth,
    write_csv,
)
from .baselines import _RestoreNumbaThreads, euclidean_neighbors
from .clustering_suite import REPORT, SELECTION, load_suite_data

#: ``method(X, k, seed, n_jobs) -> (n, k)`` int64 neighbour indices, self excluded.
Method = Callable[..., np.ndarray]

#: Real data sets: both halves of the clustering suite (never its controls).
REAL: tuple[str, ...] = SELECTION + REPORT
QUICK_REAL: tuple[str, ...] = ("iris", "wine", "wdbc-raw")  # no data wheel needed

_HALVES = ("selection", "report", "simulation")
#: Families of cells; the summary never pools two families (their metrics differ).
FAMILIES: tuple[str, ...] = ("real", "sheet", "rotated", "simulation")
#: Sheets: name -> (kind, aspect) of ``gf.datasets.make_sheet``.
SHEETS: dict[str, tuple[str, float]] = {
    f"{kind}-{aspect}": (kind, float(aspect))
    for kind, aspect in [("strip", 3), ("strip", 10), ("roll", 3), ("roll", 10),
                         ("cylinder", 3), ("torus", 3), ("paraboloid", 3), ("paraboloid", 10),
                         ("uneven", 3), ("uneven", 10)]
}  # fmt: skip
# The halves of the sheets and of the rotated sets, fixed before any forest ran on them.
# Each half holds one of every kind of difficulty: a flat strip, a rolled sheet, a closed
# curved surface (torus | cylinder), an open curved patch and an uneven density; and, rotated,
# a 1-D curve (helix | line), a 2-D simulation (mixture | sphere) and a rolled sheet.  The
# known failure (the rotated helix) is on the selection side, so that a default can be chosen
# to fix it and be checked on the line, the sphere and the other roll.
SHEET_SELECTION: tuple[str, ...] = ("strip-10", "roll-3", "torus-3", "paraboloid-10", "uneven-3")
SHEET_REPORT: tuple[str, ...] = ("strip-3", "roll-10", "cylinder-3", "paraboloid-3", "uneven-10")
ROTATED_SELECTION: tuple[str, ...] = ("helix", "mixture", "roll-3")
ROTATED_REPORT: tuple[str, ...] = ("linear", "sphere", "roll-10")
#: Rotated sets: noise columns appended to the 3-D signal before the rotation, and their
#: standard deviations as multiples of the signal's median column standard deviation.
ROTATED_DIMS = 20
ROTATED_LEVELS: tuple[float, ...] = (0.25, 0.5, 1.0)
#: The Euclidean anchors; the best of them per cell is the reference of the ratios.
EUCLID: tuple[str, ...] = ("Euclid raw", "Euclid z-scored")
#: scikit-learn ``RandomTreesEmbedding`` settings (module docstring: why).
RTE_PARAMS: dict[str, Any] = {"max_depth": None, "min_samples_split": 30}
#: Forests compared, name -> keyword arguments pinned on top of the defaults
#: (``estimator`` chooses the geoforest class; default ``UnsupervisedForest``).
#: For example ``"URerF (paper-tuned)": dict(feature_combinations="paper", ...)``.
FOREST_VARIANTS: dict[str, dict[str, Any]] = {
    "URerF": {},
    # The same trees ranked by proximity (the default before distance="auto").
    "URerF (proximity)": {"distance": "proximity"},
    # The URerF paper's forest: no grown projections, proximity.
    "URerF (paper)": {"max_tied_fraction": None, "distance": "proximity"},
}
#: Methods that need a package outside the ``dev`` extra: name -> module.
NOT_IN_DEV: dict[str, str] = {"Isolation Kernel": "ikpykit"}
IKPYKIT_HINT = "pip install ikpykit==0.4.0 (CC BY-NC-ND 4.0 licence, not an extra)"

# Entries per dense (rows x n) block of a similarity matrix: ~32 MB of float64.
_BLOCK_ELEMENTS = 1 << 22


# --------------------------------------------------------------------------- settings
def settings(quick: bool) -> dict[str, Any]:
    """Sizes of the full and the quick run."""
    if quick:
        return {
            "real": QUICK_REAL,
            "real_noise": (0, 10),
            "simulations": ("helix", "sphere"),
            "n_samples": 300,
            "sim_noise": (0, 10),
            "sheets": ("strip-10", "roll-10"),  # one of each half
            "sheet_noise": (0, 10),
            "rotated": ("helix",),
            "rotated_levels": (0.5,),
            "k_real": 10,
            "k_sim": 30,
            "max_n": 3000,
            "n_estimators": 20,
        }
    return {
        "real": REAL,
        "real_noise": (0, 10, 100),
        "simulations": SIMULATIONS,
        "n_samples": 1000,
        "sim_noise": (0, 10, 100, 1000),
        "sheets": SHEET_SELECTION + SHEET_REPORT,
        "sheet_noise": (0, 10, 100, 1000),
        "rotated": ROTATED_SELECTION + ROTATED_REPORT,
        "rotated_levels": ROTATED_LEVELS,
        "k_real": 10,
        "k_sim": 50,
        "max_n": 3000,
        "n_estimators": 100,
    }


# --------------------------------------------------------------------------- data
def load_real(name: str, max_n: int = 3000) -> tuple[np.ndarray, np.ndarray, str]:
    """Prepared features, class labels and half of a real data set of the suite.

    Raises
    ------
    ValueError
        For any name outside :data:`REAL` (the reserved data sets included).
    """
    if name not in REAL:
        raise ValueError(f"{name!r} is not a real data set of the suite; choose from {REAL}")
    return load_suite_data(name, max_n=max_n)


def with_noise(X: np.ndarray, n_columns: int, seed: int, name: str) -> np.ndarray:
    """``X`` with ``n_columns`` iid ``N(0, sigma^2)`` columns appended.

    ``sigma`` is the median of the column standard deviations of ``X``; the
    noise is drawn with ``numpy.random.default_rng([seed, crc32(name), n_columns])``.
    """
    if n_columns == 0:
        return X
    sigma = float(np.median(X.std(axis=0)))
    rng = np.random.default_rng([seed, zlib.crc32(name.encode()), n_columns])
    return np.hstack([X, rng.normal(0.0, sigma, size=(X.shape[0], n_columns))])


def zscore(X: np.ndarray) -> np.ndarray:
    """Columns centred and scaled to unit variance; constant columns become 0."""
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def label_agreement(neighbors: np.ndarray, y: np.ndarray) -> float:
    """Mean over points of the fraction of their neighbours that share their class."""
    y = np.asarray(y)
    return float(np.mean(y[neighbors] == y[:, None]))


# --------------------------------------------------------------------------- ranking
def top_k_shared(E: Any, k: int) -> np.ndarray:
    """Top ``k`` of each row of ``E @ E.T`` (descending, ties to the lower index), self excluded.

    ``E`` is a (sparse) membership matrix, one row per point: for one-hot leaf or
    cell indicators, ``E @ E.T`` counts the trees (estimators) in which two
    points share a leaf (cell).  Computed in dense row blocks; points sharing
    nothing rank by index, so a short row is completed with the lowest-index
    remaining points.
    """
    E = sp.csr_matrix(E, dtype=np.float64)
    n = E.shape[0]
    ET = E.T.tocsc()
    out = np.empty((n, k), dtype=np.int64)
    step = max(1, _BLOCK_ELEMENTS // max(1, n))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        S = (E[lo:hi] @ ET).toarray()
        S[np.arange(hi - lo), np.arange(lo, hi)] = -np.inf
        out[lo:hi] = np.argsort(-S, axis=1, kind="stable")[:, :k]
    return out


def graph_top_k(graph: Any, X: np.ndarray, k: int) -> np.ndarray:
    """Top ``k`` of each row of a weighted graph, completed by Euclidean distance.

    Neighbours are the largest positive weights of the row (ties to the lower
    index, self excluded); a row with fewer than ``k`` of them is completed with
    the nearest remaining points in Euclidean distance on ``X`` (ties to the
    lower index).
    """
    graph = sp.csr_matrix(graph)
    graph.sum_duplicates()
    n = graph.shape[0]
    out = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        cols = graph.indices[graph.indptr[i] : graph.indptr[i + 1]].astype(np.int64)
        vals = graph.data[graph.indptr[i] : graph.indptr[i + 1]]
        keep = (cols != i) & (vals > 0)
        cols, vals = cols[keep], vals[keep]
        taken = cols[np.lexsort((cols, -vals))][:k]
        if taken.size < k:
            d = cdist(X[i : i + 1], X)[0]
            d[i] = np.inf
            d[taken] = np.inf
            taken = np.concatenate([taken, np.argsort(d, kind="stable")[: k - taken.size]])
        out[i] = taken
    return out


# --------------------------------------------------------------------------- methods
def forest_method(*, estimator: str = "UnsupervisedForest", **params: Any) -> Method:
    """A method: the ``kneighbors`` of the training set of a geoforest forest.

    ``estimator`` names the class (``"UnsupervisedForest"``,
    ``"RandomProjectionForest"``); ``params`` are pinned on top of its defaults
    (a pinned ``n_estimators`` overrides the run's tree count).
    """

    def neighbours(X, k, seed, n_jobs, n_estimators=100):
        kw = {"n_estimators": n_estimators, "random_state": seed, "n_jobs": n_jobs, **params}
        forest = getattr(gf, estimator)(**kw).fit(X)
        return forest.kneighbors(n_neighbors=k, return_distance=False)

    return neighbours


def euclid_raw(X, k, seed, n_jobs):
    """Exact Euclidean neighbours of the data as given."""
    return euclidean_neighbors(X, k, n_jobs=n_jobs)


def euclid_zscored(X, k, seed, n_jobs):
    """Exact Euclidean neighbours of the z-scored data (constant columns 0)."""
    return euclidean_neighbors(zscore(X), k, n_jobs=n_jobs)


def random_trees(X, k, seed, n_jobs, n_estimators=100):
    """Most shared leaves of scikit-learn's ``RandomTreesEmbedding`` (:data:`RTE_PARAMS`)."""
    from sklearn.ensemble import RandomTreesEmbedding

    rte = RandomTreesEmbedding(
        n_estimators=n_estimators, random_state=seed, n_jobs=n_jobs, **RTE_PARAMS
    )
    return top_k_shared(rte.fit_transform(X), k)


def umap_graph(X, k, seed, n_jobs):
    """Strongest memberships of UMAP's fuzzy simplicial set (no embedding computed)."""
    from sklearn.metrics import euclidean_distances

    # UMAP's own small-data path (n < 4096) computes this matrix pair by pair in Python.
    D = euclidean_distances(X)
    np.fill_diagonal(D, 0.0)
    with warnings.catch_warnings(), _RestoreNumbaThreads():
        warnings.filterwarnings("ignore", category=ImportWarning)  # ParametricUMAP, TensorFlow
        warnings.filterwarnings("ignore", message=r"n_jobs value .* overridden")
        warnings.filterwarnings("ignore", message="using precomputed metric")
        import umap

        n_neighbors = min(max(15, k), X.shape[0] - 1)
        model = umap.UMAP(
            n_neighbors=n_neighbors, random_state=seed, metric="precomputed", transform_mode="graph"
        )
        graph = model.fit(D).graph_
    return graph_top_k(graph, X, k)


def isolation_kernel(X, k, seed, n_jobs):
    """Largest Isolation Kernel similarities (ikpykit's ``IsoKernel`` at its defaults)."""
    from ikpykit.kernel import IsoKernel

    return top_k_shared(IsoKernel(random_state=seed).fit(X).transform(X), k)


#: Optional packages (import name -> name to install), checked before any work
#: (``_runner.run_staged``): the UMAP graph anchor and the figure.
REQUIRES = {"umap": "umap-learn", "matplotlib": "matplotlib"}

#: name -> method; forests of :data:`FOREST_VARIANTS` first, then the anchors.
METHODS: dict[str, Method] = {
    **{name: forest_method(**params) for name, params in FOREST_VARIANTS.items()},
    "Euclid raw": euclid_raw,
    "Euclid z-scored": euclid_zscored,
    "RPF": forest_method(estimator="RandomProjectionForest"),
    "RandomTreesEmbedding": random_trees,
    "UMAP graph": umap_graph,
    "Isolation Kernel": isolation_kernel,
}


def active_methods(quick: bool) -> tuple[dict[str, Method], dict[str, str]]:
    """The methods this run uses, and the ones it skips with the reason.

    :data:`METHODS`, plus :data:`FOREST_VARIANTS` added after import; without
    those outside the ``dev`` extra in a quick run, and without the Isolation
    Kernel when ikpykit is not installed.
    """
    methods = dict(METHODS)
    for name, params in FOREST_VARIANTS.items():
        methods.setdefault(name, forest_method(**params))
    skipped = {}
    for name, module in NOT_IN_DEV.items():
        if name not in methods:
            continue
        if quick:
            skipped[name] = "not in --quick (only the anchors of the dev extra)"
        elif importlib.util.find_spec(module) is None:
            skipped[name] = f"{module} not installed: {IKPYKIT_HINT}"
        else:
            continue
        del methods[name]
    return methods, skipped


def _call(method: Method, X: np.ndarray, k: int, config: ExperimentConfig, trees: int):
    """``method(X, k, seed, n_jobs)``, with ``n_estimators`` when it takes one."""
    import inspect

    extra = {}
    if "n_estimators" in inspect.signature(method).parameters:
        extra["n_estimators"] = trees
    ind = np.asarray(method(X, k, config.seed, config.n_jobs, **extra))
    if ind.shape != (X.shape[0], k):
        raise ValueError(f"expected neighbours of shape {(X.shape[0], k)}, got {ind.shape}")
    return ind.astype(np.int64, copy=False)


# --------------------------------------------------------------------------- the grid
def _real_data(s: dict[str, Any]) -> list[tuple[str, np.ndarray, np.ndarray, str]]:
    """Every real data set of the run, loaded before any work (a missing wheel fails here)."""
    data = []
    for name in s["real"]:
        try:
            X, y, half = load_real(name, s["max_n"])
        except ImportError as exc:
            raise MissingExtraError(f"data set {name}: {' '.join(str(exc).split())}") from exc
        data.append((name, X, y, half))
    return data


def half_of(family: str, name: str) -> str:
    """The half (``"selection"``, ``"report"`` or ``"simulation"``) of a data set of a family."""
    if family == "simulation":
        return "simulation"
    if family == "real":
        if name not in REAL:
            raise ValueError(f"{name!r} is not a real data set of the suite; choose from {REAL}")
        return "selection" if name in SELECTION else "report"
    halves = {"sheet": (SHEET_SELECTION, SHEET_REPORT),
              "rotated": (ROTATED_SELECTION, ROTATED_REPORT)}.get(family)  # fmt: skip
    if halves is None:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    if name in halves[0]:
        return "selection"
    if name in halves[1]:
        return "report"
    raise ValueError(f"{name!r} is not a {family} data set; choose from {halves[0] + halves[1]}")


def chance_level(k: int, n: int, labels: np.ndarray | None = None) -> float:
    """Expected score of ``k`` random other points: ``k / (n - 1)`` against a continuous
    truth, the mean over points of ``(class size - 1) / (n - 1)`` against labels."""
    if labels is None:
        return float(gf.metrics.chance_precision(n, k))
    _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    return float(np.mean((counts[inverse] - 1) / (n - 1)))


def sheet_data(name: str, n_samples: int, seed: int) -> tuple[np.ndarray, dict[str, Any]]:
    """A sheet of :data:`SHEETS` (``make_sheet(..., random_state=seed)``) and its truth.

    The truth's extra points (torus, paraboloid) are drawn with seed 0, whatever ``seed``.
    """
    kind, aspect = SHEETS[name]
    X, latent = gf.datasets.make_sheet(kind, n_samples, aspect=aspect, random_state=seed)
    return X, gf.datasets.sheet_geodesic_truth(kind, latent, aspect=aspect, random_state=0)


def rotated_data(
    name: str, level: float, n_samples: int, seed: int
) -> tuple[np.ndarray, dict[str, Any]]:
    """A simulation or sheet with :data:`ROTATED_DIMS` noise columns at ``level`` times its
    median column sd, the whole matrix rotated at random, and its (unchanged) truth.

    The signal is the simulation's (sheet's) at ``seed``; the noise and the rotation are drawn
    with the seed ``crc32("{seed}/{name}/{level}")``.
    """
    if name in SHEETS:
        X, truth_kw = sheet_data(name, n_samples, seed)
    else:
        X, latent = simulation(name, n_samples, random_state=seed)
        truth_kw = truth(name, latent)
    state = zlib.crc32(f"{seed}/{name}/{level}".encode())
    X = gf.datasets.add_rotated_noise(X, ROTATED_DIMS, level=level, random_state=state)
    return X, truth_kw


def _precision(ind: np.ndarray, k: int, truth_kw: dict[str, Any]) -> float:
    """Geodesic precision@k of the neighbours (``truth_kw``: the data set's ground truth)."""
    return float(precision_recall(ind, [k], **truth_kw).precision[0])


def _geodesic_cell(family, half, name, noise, X, k, truth_kw) -> dict[str, Any]:
    labels = truth_kw.get("labels")
    return {
        "half": half, "family": family, "dataset": name, "noise": noise, "X": X, "k": k,
        "metric": f"precision@{k}", "chance": chance_level(k, X.shape[0], labels),
        "score": lambda ind: _precision(ind, k, truth_kw),
    }  # fmt: skip


def _family_cells(
    family: str, s: dict[str, Any], seed: int, names: tuple[str, ...], real: list | None = None
) -> Iterator[dict[str, Any]]:
    """The cells of one family, for the data sets ``names`` (``real``: loaded real sets)."""
    k = s["k_sim"]
    if family == "real":
        k = s["k_real"]
        for name, X, y, half in real or []:
            if name not in names:
                continue
            chance = chance_level(k, X.shape[0], y)
            for noise in s["real_noise"]:
                yield {
                    "half": half, "family": "real", "dataset": name, "noise": noise,
                    "X": with_noise(X, noise, seed, name), "k": k, "metric": f"agreement@{k}",
                    "chance": chance, "score": lambda ind, y=y: label_agreement(ind, y),
                }  # fmt: skip
    elif family == "simulation":
        for sim in names:
            for noise in s["sim_noise"]:
                X, latent = simulation(sim, s["n_samples"], noise_dims=noise, random_state=seed)
                yield _geodesic_cell(family, "simulation", sim, noise, X, k, truth(sim, latent))
    elif family == "sheet":
        for name in names:
            X, truth_kw = sheet_data(name, s["n_samples"], seed)
            for noise in s["sheet_noise"]:
                Xn = with_noise(X, noise, seed, name)
                yield _geodesic_cell(family, half_of(family, name), name, noise, Xn, k, truth_kw)
    elif family == "rotated":
        for name in names:
            for level in s["rotated_levels"]:
                X, truth_kw = rotated_data(name, level, s["n_samples"], seed)
                yield _geodesic_cell(family, half_of(family, name), name, level, X, k, truth_kw)
    else:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")


def cells(s: dict[str, Any], seed: int, real: list) -> Iterator[dict[str, Any]]:
    """Every (family, half, data set, noise) cell: its data, ``k``, metric name, chance
    level and scoring function (``real``: the loaded real data sets, :func:`_real_data`)."""
    yield from _family_cells("real", s, seed, s["real"], real)
    yield from _family_cells("simulation", s, seed, s["simulations"])
    yield from _family_cells("sheet", s, seed, s["sheets"])
    yield from _family_cells("rotated", s, seed, s["rotated"])


def n_cells(s: dict[str, Any]) -> int:
    """Number of cells of a run with settings ``s``."""
    return (len(s["real"]) * len(s["real_noise"]) + len(s["simulations"]) * len(s["sim_noise"])
            + len(s["sheets"]) * len(s["sheet_noise"])
            + len(s["rotated"]) * len(s["rotated_levels"]))  # fmt: skip


def cells_of(
    family: str, half: str, *, quick: bool = False, seed: int = 0
) -> Iterator[dict[str, Any]]:
    """The cells of one family and one half, as the experiment builds them, one at a time.

    For studies that choose a forest's setting on the selection half without running
    the whole experiment::

        for cell in cells_of("rotated", "selection"):
            ind = my_method(cell["X"], cell["k"])  # (n, k) neighbours, self excluded
            print(cell["dataset"], cell["noise"], cell["score"](ind), cell["chance"])

    Parameters
    ----------
    family : {"real", "sheet", "rotated", "simulation"}
    half : {"selection", "report", "simulation"}
        ``"simulation"`` (only) for the simulation family.
    quick : bool, default=False
        The data of ``--quick`` (smaller, fewer sets) instead of the full run's.
    seed : int, default=0
        The run's ``--seed``.

    Yields
    ------
    cell : dict
        ``half, family, dataset, noise`` (noise columns; for ``"rotated"`` the noise
        level), ``X``, ``k``, ``metric``, ``chance`` (the score of random neighbours) and
        ``score`` (a function of an ``(n, k)`` neighbour array).
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    if (half == "simulation") != (family == "simulation") or half not in _HALVES:
        raise ValueError(
            f"half must be 'selection' or 'report' for the {family} family "
            f"('simulation' for the simulations), got {half!r}"
        )
    s = settings(quick)
    key = {"real": "real", "simulation": "simulations", "sheet": "sheets", "rotated": "rotated"}
    names = tuple(n for n in s[key[family]] if half_of(family, n) == half)
    real = None
    if family == "real":
        real = _real_data({**s, "real": names})
    yield from _family_cells(family, s, seed, names, real)


def run_cell(cell: dict[str, Any], name: str, method: Method, config, trees: int) -> dict:
    """One (cell, method) row; a method that raises gives its ``error`` and a NaN value."""
    X = cell["X"]
    row = {key: cell[key] for key in ("half", "family", "dataset", "noise")}
    row.update(method=name, metric=cell["metric"], value=np.nan, best_euclid=np.nan,
               chance=cell["chance"], seconds=np.nan, n=int(X.shape[0]), p=int(X.shape[1]),
               error="")  # fmt: skip
    try:
        with Timer() as timer:
            ind = _call(method, X, cell["k"], config, trees)
        row.update(value=float(cell["score"](ind)), seconds=timer.seconds)
    except Exception as exc:  # noqa: BLE001 - recorded in the table, never silent
        row["error"] = f"{type(exc).__name__}: {exc}"[:200]
    return row


def warm_up(methods: dict[str, Method], config: ExperimentConfig, trees: int) -> None:
    """Run every method once on a small random set, so that no timing holds JIT compilation.

    Errors are ignored here: a broken method shows them in its rows.
    """
    X = np.random.default_rng(config.seed).normal(size=(60, 3))
    for method in methods.values():
        with warnings.catch_warnings(), contextlib.suppress(Exception):
            warnings.simplefilter("ignore")
            _call(method, X, 5, config, trees)


# --------------------------------------------------------------------------- summary
def _cell_key(r: dict[str, Any]) -> tuple:
    return (r["half"], r["family"], r["dataset"], r["noise"])


def best_euclid(rows: list[dict[str, Any]]) -> dict[tuple, float]:
    """``(half, family, dataset, noise)`` -> the best Euclidean value of the cell."""
    best: dict[tuple, float] = {}
    for r in rows:
        if r["method"] in EUCLID and np.isfinite(r["value"]):
            best[_cell_key(r)] = max(best.get(_cell_key(r), -np.inf), r["value"])
    return best


def ratios(rows: list[dict[str, Any]]) -> dict[tuple, float]:
    """``(half, family, dataset, noise, method)`` -> value / best Euclidean value of its cell."""
    best = best_euclid(rows)
    out = {}
    for r in rows:
        ref = best.get(_cell_key(r), np.nan)
        ok = np.isfinite(r["value"]) and ref > 0
        out[(*_cell_key(r), r["method"])] = r["value"] / ref if ok else np.nan
    return out


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per half, family, noise level and method: the ratios to the best Euclidean over data
    sets, and the bar of the rotated sets (ratio >= 0.95 where Euclid beats twice chance)."""
    ratio = ratios(rows)
    best = best_euclid(rows)
    methods = list(dict.fromkeys(r["method"] for r in rows))
    levels = sorted({(r["half"], r["family"], r["noise"]) for r in rows},
                    key=lambda t: (_HALVES.index(t[0]), FAMILIES.index(t[1]), t[2]))  # fmt: skip
    out = []
    for half, family, noise in levels:
        for method in methods:
            mine = [r for r in rows if (r["half"], r["family"], r["noise"], r["method"])
                    == (half, family, noise, method)]  # fmt: skip
            if not mine:
                continue
            vals = np.array([ratio[(*_cell_key(r), method)] for r in mine])
            informative = np.array([best.get(_cell_key(r), np.nan) > 2 * r["chance"]
                                    for r in mine])  # fmt: skip
            kept = np.isfinite(vals)
            v = vals[kept]
            out.append({
                "half": half, "family": family, "noise": noise, "method": method,
                "metric": mine[0]["metric"], "datasets": int(v.size),
                "median_ratio": float(np.median(v)) if v.size else np.nan,
                "min_ratio": float(v.min()) if v.size else np.nan,
                "n_ratio_ge_0.97": int(np.sum(v >= 0.97)),
                "n_beats_euclid": int(np.sum(v > 1.0)),
                "n_euclid_gt_2chance": int(np.sum(informative & kept)),
                "n_ratio_ge_0.95_there": int(np.sum(informative & kept & (vals >= 0.95))),
                "errors": sum(bool(r["error"]) for r in mine),
            })  # fmt: skip
    return out


def noise_label(family: str, noise: float) -> str:
    """``+10`` (appended noise columns) or ``x0.5sd`` (the noise level of a rotated set)."""
    return f"x{noise:g}sd" if family == "rotated" else f"+{noise:g}"


def text_table(summary: list[dict[str, Any]]) -> str:
    """The summary as fixed-width text (counts out of the data sets with a ratio)."""
    head = ("half", "family", "noise", "method", "metric", "median_ratio", "min_ratio",
            "ratio>=0.97", "beats_euclid", ">=0.95|euclid>2chance", "errors")  # fmt: skip
    body = [
        [e["half"], e["family"], noise_label(e["family"], e["noise"]), e["method"], e["metric"],
         f"{e['median_ratio']:.3f}", f"{e['min_ratio']:.3f}",
         f"{e['n_ratio_ge_0.97']}/{e['datasets']}", f"{e['n_beats_euclid']}/{e['datasets']}",
         f"{e['n_ratio_ge_0.95_there']}/{e['n_euclid_gt_2chance']}", str(e["errors"])]
        for e in summary
    ]  # fmt: skip
    widths = [max(len(h), *(len(r[j]) for r in body)) for j, h in enumerate(head)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(head, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in body]
    return "\n".join(lines)


def _header(s: dict[str, Any], skipped: dict[str, str]) -> str:
    lines = [
        "Ratio to the best Euclidean neighbours (max of Euclid raw and Euclid z-scored) of each "
        "cell, over data sets;",
        f"real data: {s['k_real']}-NN label agreement (agreement@{s['k_real']}), at most "
        f"{s['max_n']} points, +noise = N(0, median column sd^2) columns;",
        f"simulations: geodesic precision@{s['k_sim']}, N={s['n_samples']}, "
        "+noise = N(0, 70) dimensions;",
        f"sheets: geodesic precision@{s['k_sim']}, N={s['n_samples']}, +noise = N(0, median "
        "column sd^2) dimensions;",
        f"rotated: geodesic precision@{s['k_sim']} (label precision for the mixture), "
        f"N={s['n_samples']}, signal + {ROTATED_DIMS} noise columns of sd x (median signal "
        "column sd), rotated at random;",
        ">=0.95|euclid>2chance: cells with ratio >= 0.95 / cells where the best Euclid is above "
        f"twice chance; {s['n_estimators']} trees per ensemble.",
    ]
    lines += [f"{name} skipped: {why}" for name, why in skipped.items()]
    return "\n".join(lines)


# --------------------------------------------------------------------------- figure
_STYLE = {
    "URerF": {"color": "tab:red", "marker": "o"},
    "Euclid raw": {"color": "black", "marker": "s"},
    "Euclid z-scored": {"color": "tab:gray", "marker": "D"},
    "RPF": {"color": "tab:blue", "marker": "^"},
    "RandomTreesEmbedding": {"color": "tab:green", "marker": "v"},
    "UMAP graph": {"color": "tab:purple", "marker": "P"},
    "Isolation Kernel": {"color": "tab:orange", "marker": "X"},
}
_EXTRA_STYLES = [
    {"color": "tab:pink", "marker": "h"},
    {"color": "tab:brown", "marker": "*"},
    {"color": "tab:olive", "marker": "<"},
    {"color": "tab:cyan", "marker": ">"},
]


def _figure(rows: list[dict[str, Any]], s: dict[str, Any], path) -> None:
    """Ratio to the best Euclidean per data set: one panel per real noise level, one for the
    simulations, the sheets and the rotated sets; one marker per method."""
    from geoforest.plotting import pyplot

    plt = pyplot()
    ratio = ratios(rows)
    methods = list(dict.fromkeys(r["method"] for r in rows))
    extra = iter(_EXTRA_STYLES * 4)
    style = {m: _STYLE.get(m) or next(extra) for m in methods}
    real = list(dict.fromkeys((r["half"], r["dataset"]) for r in rows if r["family"] == "real"))
    panels = [(f"real data +{d} noise columns, agreement@{s['k_real']}",
               [(h, "real", name, d) for h, name in real], [f"{n} ({h[:3]})" for h, n in real])
              for d in s["real_noise"]]  # fmt: skip
    k = s["k_sim"]
    for family, title in [("simulation", "simulations by noise dimensions"),
                          ("sheet", "sheets by noise dimensions"),
                          ("rotated", "rotated sets by noise level")]:  # fmt: skip
        keys = list(dict.fromkeys(_cell_key(r) for r in rows if r["family"] == family))
        labels = [f"{name} {noise_label(family, noise)}" + ("" if h == "simulation" else
                  f" ({h[:3]})") for h, _, name, noise in keys]  # fmt: skip
        if keys:
            panels.append((f"{title}, precision@{k}", keys, labels))
    width = max(9.0, 2.5 + 0.45 * max(len(keys) for _, keys, _ in panels))
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, 2.6 * len(panels) + 0.8),
                             layout="constrained", squeeze=False)  # fmt: skip
    offsets = np.linspace(-0.3, 0.3, len(methods)) if len(methods) > 1 else [0.0]
    for ax, (title, keys, labels) in zip(axes[:, 0], panels, strict=True):
        for method, dx in zip(methods, offsets, strict=True):
            y = [ratio.get((*key, method), np.nan) for key in keys]
            ax.plot(np.arange(len(keys)) + dx, y, linestyle="none", markersize=5,
                    label=method, **style[method])  # fmt: skip
        ax.axhline(1.0, color="k", linestyle="--", linewidth=1)
        ax.axhline(0.97, color="k", linestyle=":", linewidth=1)
        ax.set_xticks(range(len(keys)), labels, rotation=50, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("ratio to best Euclid")
        ax.grid(alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(methods), 4),
               frameon=False)  # fmt: skip
    fig.suptitle("Neighbourhood quality relative to the best Euclidean neighbours "
                 "(dashed: 1, dotted: 0.97)")  # fmt: skip
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------- run
def _plain(value: Any) -> Any:
    """``value`` if JSON can hold it as it is, else its ``repr``."""
    return value if isinstance(value, bool | int | float | str | None) else repr(value)


def run(config: ExperimentConfig) -> ExperimentResult:
    """Every method on every cell; the tidy table, the summary, the figure."""
    s = settings(config.quick)
    methods, skipped = active_methods(config.quick)
    if "Isolation Kernel" in skipped and not config.quick:
        print(f"Isolation Kernel anchor skipped: {IKPYKIT_HINT}", file=sys.stderr)
    real = _real_data(s)
    warm_up(methods, config, s["n_estimators"])
    rows: list[dict[str, Any]] = []
    with progress(n_cells(s) * len(methods), "neighbours", config) as bar:
        for cell in cells(s, config.seed, real):
            label = f"{cell['dataset']} {noise_label(cell['family'], cell['noise'])}"
            for name, method in methods.items():
                bar.set_postfix_str(f"{label} {name}")
                rows.append(run_cell(cell, name, method, config, s["n_estimators"]))
                bar.update()
    best = best_euclid(rows)
    for r in rows:
        r["best_euclid"] = best.get(_cell_key(r), np.nan)
        if r["error"]:
            where = f"{r['family']} {r['dataset']} {noise_label(r['family'], r['noise'])}"
            warnings.warn(f"{r['method']} on {where}: {r['error']}", RuntimeWarning,
                          stacklevel=2)  # fmt: skip
    summary = summarise(rows)
    files = [
        write_csv(rows, config.out / "neighbours.csv"),
        write_csv(summary, config.out / "neighbours_summary.csv"),
    ]
    figure = config.out / "neighbours.png"
    _figure(rows, s, figure)
    files.append(figure)
    notes = {
        "settings": {key: list(v) if isinstance(v, tuple) else v for key, v in s.items()},
        "methods": list(methods),
        "skipped": skipped,
        "halves": {
            "sheet": {"selection": list(SHEET_SELECTION), "report": list(SHEET_REPORT)},
            "rotated": {"selection": list(ROTATED_SELECTION), "report": list(ROTATED_REPORT)},
        },
        "sheets": {name: list(v) for name, v in SHEETS.items()},
        "rotated_dims": ROTATED_DIMS,
        "rte_params": dict(RTE_PARAMS),
        "forest_variants": {
            name: {key: _plain(v) for key, v in params.items()}
            for name, params in FOREST_VARIANTS.items()
        },
    }
    if "Isolation Kernel" in methods:
        from importlib.metadata import version

        notes["ikpykit"] = version("ikpykit")
    table = _header(s, skipped) + "\n\n" + text_table(summary)
    return ExperimentResult("neighbours", rows, table, files, notes=notes)
