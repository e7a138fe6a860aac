"""rpfCluster against k-means and spectral clustering on real data (rpfCluster paper, Figs. 4-5).

Every data set of the paper that loads offline
(:func:`geoforest.datasets.load_clustering_benchmark`), with the true number of
classes K given to every method, over several seeds.  Methods:

``rpfCluster``
    :class:`geoforest.ForestSpectralClustering` with its label-free defaults
    (200 random projection trees, ``n_s = 30``, beta_1 and beta_2 chosen by
    the estimator's default ``selection``), or the ``selection`` of the
    settings; ``kernel_neighbors`` per data set from :data:`KERNEL_NEIGHBORS`
    (MAGIC: 50).
``rpfCluster (oracle)``
    The same fitted kernel with the (beta_1, beta_2) of best *accuracy
    against the labels*, over the paper's beta_1 grid and a fine beta_2 grid
    (:data:`ORACLE_SCALES`): the paper's protocol as far as its text says (it
    searched beta_2 in steps of 0.01 and kept the best).  It uses the labels,
    so it is not a clustering method.  On data sets larger than the model's
    ``max_selection_samples`` the pairs are compared on its selection subset
    and the chosen pair then clusters every point.
``rpfCluster (consensus)``
    What ``selection="consensus"`` (the consensus over the full beta_1 x
    beta_2 grid) picks on the same kernel, computed from the oracle's
    candidates, so that both label-free rules are measured on every data set
    and seed from one forest.
``URerF kernel``
    ForestSpectralClustering on an :class:`~geoforest.UnsupervisedForest`
    kernel (our own combination; same label-free rule).
``K-means``
    scikit-learn ``KMeans(K, n_init=100)`` (the paper: 100 restarts).
``NJW (self-tuning)``
    NJW spectral clustering of a Gaussian kernel with automatic local
    bandwidths (Zelnik-Manor & Perona): ``exp(-d_ij^2 / (s_i s_j))`` on the
    15-nearest-neighbour graph, ``s_i`` the distance to the 7th neighbour.
``sklearn SpectralClustering``
    ``sklearn.cluster.SpectralClustering(K)`` with its defaults (dense RBF
    kernel, gamma = 1); skipped above 7,000 points (dense n x n) and stopped
    after 120 s (its ARPACK solve on a disconnected graph can run for hours).

Preprocessing follows the paper: raw features, except that the columns the
paper names are standardised on wine (magnesium, proline) and WDBC (mean and
worst perimeter and area).  Constant columns are dropped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from geoforest import datasets, metrics

from ._rpf_paper import GAUSSIAN_SPECTRAL, PAPER_RESULTS, PAPER_STANDARDIZED_FEATURES
from ._runner import ExperimentConfig, ExperimentResult, Timer, progress, select, write_csv

DATASETS_FULL = datasets.CLUSTERING_BENCHMARKS
METHODS = (
    "rpfCluster",
    "rpfCluster (oracle)",
    "rpfCluster (consensus)",
    "URerF kernel",
    "K-means",
    "NJW (self-tuning)",
    "sklearn SpectralClustering",
)
_SKLEARN_MAX_N = 7000
#: scikit-learn's SpectralClustering runs in a child process stopped after this
#: many seconds: on segment (2,310 points) its RBF graph is disconnected and
#: its ARPACK solve ran for more than 10 minutes.
_SKLEARN_TIMEOUT_S = 120.0


_SKLEARN_CHILD = """
import sys, warnings
import numpy as np
from sklearn.cluster import SpectralClustering
warnings.simplefilter("ignore")
X = np.load(sys.argv[1])
labels = SpectralClustering(int(sys.argv[2]), random_state=int(sys.argv[3])).fit_predict(X)
np.save(sys.argv[4], labels)
"""


def _sklearn_spectral(X: np.ndarray, K: int, seed: int, timeout: float):
    """scikit-learn's default SpectralClustering, or ``None`` after ``timeout`` seconds.

    It runs in a child interpreter (a fresh process, not a fork of this one
    with its BLAS and numba threads) that is killed at the timeout.
    """
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "X.npy", Path(tmp) / "labels.npy"
        np.save(src, X)
        cmd = [sys.executable, "-c", _SKLEARN_CHILD, str(src), str(K), str(seed), str(dst)]
        try:
            subprocess.run(cmd, check=True, timeout=timeout, capture_output=True)
        except subprocess.TimeoutExpired:
            return None
        return np.load(dst)


#: ``kernel_neighbors`` of the forest methods per data set (others: the full kernel).
#: MAGIC's full kernel holds about 17.5 M non-zeros (1.4 GB peak, a minute per
#: clustering on 2 cores); 50 neighbours per point hold 1.1 M (``docs/benchmarks.md``).
KERNEL_NEIGHBORS: dict[str, int] = {"magic": 50}


def settings(quick: bool) -> dict[str, Any]:
    """Data sets, seeds, forest sizes and methods of the full and the quick run.

    ``selection`` is passed to every :class:`~geoforest.ForestSpectralClustering`
    (``None``: the estimator's default) and ``kernel_neighbors`` maps data sets
    to the estimator's ``kernel_neighbors``.
    """
    common = {"methods": METHODS, "selection": None, "kernel_neighbors": dict(KERNEL_NEIGHBORS)}
    if quick:
        return {
            **common,
            "datasets": ("iris", "wine"),
            "seeds": 2,
            "n_trees": 100,
            "kmeans_init": 10,
        }
    return {**common, "datasets": DATASETS_FULL, "seeds": 10, "n_trees": 200, "kmeans_init": 100}


def prepare(name: str) -> tuple[np.ndarray, np.ndarray, int]:
    """The paper's preprocessing of one data set: ``(X, y, K)``."""
    data = datasets.load_clustering_benchmark(name)
    X = np.asarray(data.data, dtype=np.float64).copy()
    cols = list(PAPER_STANDARDIZED_FEATURES.get(name, ()))
    if cols:
        X[:, cols] = (X[:, cols] - X[:, cols].mean(axis=0)) / X[:, cols].std(axis=0)
    X = X[:, np.ptp(X, axis=0) > 0]
    return X, np.asarray(data.target), int(data.n_clusters)


def self_tuning_affinity(X: np.ndarray, n_neighbors: int = 15, scale_rank: int = 7):
    """Sparse Gaussian affinity with local bandwidths (Zelnik-Manor & Perona, 2004)."""
    from sklearn.neighbors import NearestNeighbors

    n = X.shape[0]
    k = min(n_neighbors, n - 1)
    dist, ind = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    sigma = np.maximum(dist[:, min(scale_rank, k)], np.finfo(float).tiny)
    rows = np.repeat(np.arange(n), k)
    cols = ind[:, 1:].ravel()
    vals = np.exp(-(dist[:, 1:].ravel() ** 2) / (sigma[rows] * sigma[cols]))
    W = sp.csr_array((vals, (rows, cols)), shape=(n, n))
    return W.maximum(W.T)


def _run_method(method, X, K, seed, s, config, cache, name=""):
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    from geoforest.cluster import ForestSpectralClustering, KernelSpectralClustering
    from geoforest.forest import RandomProjectionForest, UnsupervisedForest

    if method in ("rpfCluster", "URerF kernel"):
        base = RandomProjectionForest if method == "rpfCluster" else UnsupervisedForest
        extra = {} if s.get("selection") is None else {"selection": s["selection"]}
        model = ForestSpectralClustering(
            K,
            forest=base(s["n_trees"]),
            kernel_neighbors=s.get("kernel_neighbors", {}).get(name),
            random_state=seed,
            n_jobs=config.n_jobs,
            **extra,
            affinity="kernel",
        ).fit(X)
        cache[method] = model
        return model.labels_, {"threshold": model.threshold_, "scale": model.scale_}
    if method in ("rpfCluster (oracle)", "rpfCluster (consensus)"):
        return None, {}  # scored from the cached rpfCluster model's candidates
    if method == "K-means":
        # one OpenMP thread, as in geoforest's spectral step (2 threads on a loaded
        # 2-core machine were 30-60x slower, same result)
        with threadpool_limits(limits=1, user_api="openmp"):
            return KMeans(K, n_init=s["kmeans_init"], random_state=seed).fit_predict(X), {}
    if method == "NJW (self-tuning)":
        W = self_tuning_affinity(X)
        return KernelSpectralClustering(K, random_state=seed).fit(W).labels_, {}
    if X.shape[0] > _SKLEARN_MAX_N:
        return None, {"skipped": f"n > {_SKLEARN_MAX_N} (dense n x n kernel)"}
    labels = _sklearn_spectral(X, K, seed, _SKLEARN_TIMEOUT_S)
    if labels is None:
        return None, {"skipped": f"no result in {_SKLEARN_TIMEOUT_S:.0f} s"}
    return labels, {}


#: beta_2 grid of the oracle: the paper searched (0, 1] in steps of 0.01 and (1, 200]
#: in steps of 0.1; the clustering changes little between neighbouring values, so we
#: take steps of 0.01 up to 0.2, 0.05 up to 1 and a log grid above.
ORACLE_SCALES: tuple[float, ...] = tuple(
    np.round(
        np.concatenate(
            [np.arange(1, 21) / 100, np.arange(5, 21) / 20, [1.5, 2, 3, 5, 10, 20, 50, 100, 200]]
        ),
        4,
    ).tolist()
)


def _sweep(model) -> dict[tuple[float, float], Any]:
    """Every (beta_1, beta_2) of the oracle grid, clustered on the model's selection kernel.

    ``model.cluster_candidate`` is the model's own procedure for one pair:
    sharpen, spectral clustering, cut-off points attached through the kernel,
    with the model's own seed.  The kernel is the
    model's selection kernel (its subset forest's, when it compared
    candidates on a subset), so this gives exactly the candidates the
    estimator itself would compute.
    """
    from geoforest.cluster import RPF_SCALES, RPF_THRESHOLDS

    S = model.selection_kernel_
    scales = sorted(set(ORACLE_SCALES) | set(RPF_SCALES))
    return {
        (b1, b2): model.cluster_candidate(b1, b2, kernel=S)
        for b1 in RPF_THRESHOLDS
        for b2 in scales
    }


def _full_labels(model, pair: tuple[float, float], sweep_labels: np.ndarray):
    """Labels of every point for ``pair``: the sweep's, or one more clustering of all points."""
    if model.selection_indices_ is None:
        return sweep_labels
    return model.cluster_candidate(*pair).labels


def _save_sweep(path, model, sweep, y: np.ndarray, K: int) -> None:
    """Write the sweep's candidates for ``studies/rpf_rule_eval.py`` (one ``.npz``).

    Labels of every candidate on the selection points, the pairs, the true
    labels of those points, and for the default grid the 11 leading
    eigenvalues of each candidate's normalised affinity (``spectra``; enough
    to estimate K up to 10) and the number of connected components of its
    graph (other pairs: NaN / -1).
    """
    from scipy.sparse.csgraph import connected_components

    from geoforest.cluster import RPF_SCALES
    from geoforest.graph import spectral_eigs

    pairs = list(sweep)
    default = np.array([b2 in RPF_SCALES for _, b2 in pairs])
    n_sel = model.selection_kernel_.shape[0]
    n_eigs = min(11, n_sel)
    spectra = np.full((len(pairs), n_eigs), np.nan)
    components = np.full(len(pairs), -1)
    for i, pair in enumerate(pairs):
        if default[i]:
            A = sweep[pair].affinity
            spectra[i] = spectral_eigs(A, n_eigs, solver="dense")[0][:n_eigs]
            components[i] = connected_components(A, directed=False)[0]
    sub = model.selection_indices_
    np.savez_compressed(
        path,
        pairs=np.array(pairs),
        labels=np.array([sweep[p].labels for p in pairs]),
        eigenvalues=spectra[:, : K + 1],
        spectra=spectra,
        components=components,
        y=y if sub is None else y[sub],
        K=K,
        default_grid=default,
    )


def _oracle(model, y: np.ndarray, sweep) -> tuple[np.ndarray, dict[str, Any]]:
    """The best (beta_1, beta_2) *by accuracy against y* on a fitted rpfCluster's kernel.

    Every beta_1 of the paper's grid with every beta_2 of :data:`ORACLE_SCALES`
    clusters the model's kernel (restricted to its selection subset when it has
    one); the best pair by accuracy then clusters every point.
    """
    sub = model.selection_indices_
    y_sel = y if sub is None else y[sub]
    best, best_acc = None, -1.0
    for pair, cand in sweep.items():
        if pair[1] not in ORACLE_SCALES:
            continue
        acc = metrics.clustering_accuracy(y_sel, cand.labels)
        if acc > best_acc:
            best, best_acc = pair, acc
    labels = _full_labels(model, best, sweep[best].labels)
    return labels, {"threshold": best[0], "scale": best[1]}


def _consensus(model, sweep) -> tuple[np.ndarray, dict[str, Any]]:
    """What ``ForestSpectralClustering(selection="consensus", affinity="kernel")`` picks.

    On the same kernel.

    The consensus over the default ``RPF_THRESHOLDS`` x ``RPF_SCALES`` grid,
    scored and picked as the estimator does
    (:func:`geoforest.cluster.consensus_scores`,
    :func:`geoforest.cluster.select_best`) on the sweep's candidates (the
    same subset, forest and seed as the model, hence the same candidates).
    Reported beside the default rule so that both label-free rules are
    measured on every data set and seed from one forest.
    """
    from geoforest.cluster import RPF_SCALES, RPF_THRESHOLDS, consensus_scores, select_best

    pairs = [(b1, b2) for b1 in RPF_THRESHOLDS for b2 in RPF_SCALES]
    scores = consensus_scores([sweep[p].labels for p in pairs])
    best = select_best(scores, [b2 for _, b2 in pairs], [b1 for b1, _ in pairs])
    pair = pairs[best]
    labels = _full_labels(model, pair, sweep[pair].labels)
    return labels, {"threshold": pair[0], "scale": pair[1]}


def run(config: ExperimentConfig) -> ExperimentResult:
    """Both accuracies of every method on every data set and seed."""
    s = settings(config.quick)
    rows: list[dict[str, Any]] = []
    methods = s.get("methods", METHODS)
    bar = progress(len(s["datasets"]) * s["seeds"] * len(methods), "rpf-cluster", config)
    for name in s["datasets"]:
        X, y, K = prepare(name)
        for rep in range(s["seeds"]):
            seed = config.seed + rep
            cache: dict[str, Any] = {}
            for method in methods:
                bar.set_postfix_str(f"{name} #{rep} {method}")
                with Timer() as timer:
                    labels, info = _run_method(method, X, K, seed, s, config, cache, name)
                if method in ("rpfCluster (oracle)", "rpfCluster (consensus)"):
                    with Timer() as timer:
                        if "sweep" not in cache:
                            cache["sweep"] = _sweep(cache["rpfCluster"])
                            if s.get("sweep_dir"):
                                s["sweep_dir"].mkdir(parents=True, exist_ok=True)
                                path = s["sweep_dir"] / f"{name}_t{s['n_trees']}_s{seed}.npz"
                                _save_sweep(path, cache["rpfCluster"], cache["sweep"], y, K)
                        if method == "rpfCluster (oracle)":
                            labels, info = _oracle(cache["rpfCluster"], y, cache["sweep"])
                        else:
                            labels, info = _consensus(cache["rpfCluster"], cache["sweep"])
                row = {
                    "dataset": name,
                    "n_samples": X.shape[0],
                    "n_clusters": K,
                    "seed": seed,
                    "method": method,
                    "accuracy": np.nan,
                    "cocluster": np.nan,
                    "threshold": info.get("threshold", ""),
                    "scale": info.get("scale", ""),
                    "seconds": timer.seconds,
                    "note": info.get("skipped", ""),
                }
                if labels is not None:
                    row["accuracy"] = metrics.clustering_accuracy(y, labels)
                    row["cocluster"] = metrics.cocluster_accuracy(y, labels)
                rows.append(row)
                bar.update()
    bar.close()
    files = [write_csv(rows, config.out / "rpf_cluster.csv")]
    summary_rows = _summary(rows, s)
    files.append(write_csv(summary_rows, config.out / "rpf_cluster_summary.csv"))
    figure = config.out / "rpf_cluster.png"
    if _figure(summary_rows, figure):
        files.append(figure)
    return ExperimentResult("rpf-cluster", rows, _table(summary_rows), files)


def _figure(summary: list[dict[str, Any]], path) -> bool:
    """Mean accuracy (± sd over seeds) per data set and method, the paper's as black ticks."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - plots are an extra
        return False
    names = list(dict.fromkeys(e["dataset"] for e in summary))
    methods = list(dict.fromkeys(e["method"] for e in summary))
    width = 0.8 / max(len(methods), 1)
    fig, ax = plt.subplots(figsize=(1.5 + 1.1 * len(names), 3.6))
    for j, method in enumerate(methods):
        rows = [next((e for e in summary if e["dataset"] == n and e["method"] == method), None)
                for n in names]  # fmt: skip
        mean = [np.nan if r is None else r["accuracy_mean"] for r in rows]
        sd = [0.0 if r is None or not np.isfinite(r["accuracy_sd"]) else r["accuracy_sd"]
              for r in rows]  # fmt: skip
        x = np.arange(len(names)) + (j - (len(methods) - 1) / 2) * width
        ax.bar(x, mean, width, yerr=sd, label=method, capsize=2)
        paper = [np.nan if r is None or r["paper_accuracy"] == "" else float(r["paper_accuracy"])
                 for r in rows]  # fmt: skip
        ax.plot(x, paper, "k_", markersize=9, markeredgewidth=2)
    ax.set_xticks(np.arange(len(names)), names)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("clustering accuracy")
    ax.set_title("rpfCluster and baselines (bars: ours, mean ± sd; black ticks: paper)")
    ax.legend(fontsize=7, ncols=2, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def _summary(rows: list[dict[str, Any]], s: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name in s["datasets"]:
        for method in s.get("methods", METHODS):
            sel = select(rows, dataset=name, method=method)
            acc = np.array([r["accuracy"] for r in sel], dtype=float)
            co = np.array([r["cocluster"] for r in sel], dtype=float)
            # The paper's numbers sit beside our closest protocol: its tuned rpfCluster
            # beside the oracle, its iris Gaussian-kernel spectral clustering beside NJW.
            paper_method = {
                "rpfCluster (oracle)": "rpfCluster",
                "K-means": "K-means",
                "NJW (self-tuning)": GAUSSIAN_SPECTRAL
                if name == "iris"
                else "Spectral clustering (NJW)",
            }.get(method)
            paper = PAPER_RESULTS.get(name, {}).get(paper_method or "", (None, None))
            out.append(
                {
                    "dataset": name,
                    "method": method,
                    "accuracy_mean": float(np.nanmean(acc)) if np.isfinite(acc).any() else np.nan,
                    "accuracy_sd": float(np.nanstd(acc)) if np.isfinite(acc).any() else np.nan,
                    "cocluster_mean": float(np.nanmean(co)) if np.isfinite(co).any() else np.nan,
                    "cocluster_sd": float(np.nanstd(co)) if np.isfinite(co).any() else np.nan,
                    "seconds_mean": float(np.mean([r["seconds"] for r in sel])),
                    "paper_accuracy": "" if paper[0] is None else paper[0],
                    "paper_cocluster": "" if paper[1] is None else paper[1],
                    "n_seeds": len(sel),
                }
            )
    return out


def _table(summary: list[dict[str, Any]]) -> str:
    head = f"{'dataset':<9} {'method':<27} {'accuracy':>15} {'co-cluster':>15} {'paper':>13}"
    lines = [head]
    for r in summary:

        def pm(m, sd):
            return "n/a" if not np.isfinite(m) else f"{m:.3f} ± {sd:.3f}"

        paper = (
            f"{r['paper_accuracy']:.4f}/{r['paper_cocluster']:.4f}"
            if r["paper_accuracy"] != ""
            else ""
        )
        lines.append(
            f"{r['dataset']:<9} {r['method']:<27} {pm(r['accuracy_mean'], r['accuracy_sd']):>15} "
            f"{pm(r['cocluster_mean'], r['cocluster_sd']):>15} {paper:>13}"
        )
    return "\n".join(lines)
