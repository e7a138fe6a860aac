"""LLPD spectral clustering on LDLN data across noise levels (Little, Maggioni & Murphy).

Data: :func:`geoforest.datasets.make_ldln` — ``K = 4`` clusters on segments,
squares, circles and spheres (intrinsic dimension 1-2) in ``R^5`` and
``R^10`` with uniform background noise, at several noise fractions, over
several seeds.
Every method estimates the number of clusters itself.

``LLPD spectral``
    :class:`geoforest.LLPDSpectralClustering` with its defaults (``k_nse = 10``,
    automatic threshold, scale grid from the merge heights, eigengap).
``Euclidean spectral``
    NJW spectral clustering of a self-tuning Gaussian kernel (Zelnik-Manor &
    Perona: ``exp(-d^2 / (s_i s_j))`` on the 15-NN graph, ``s_i`` the 7th-NN
    distance), ``K`` by the same eigengap rule (up to 10;
    ``selection="eigengap"``); no noise label.
``HDBSCAN``
    ``sklearn.cluster.HDBSCAN(min_cluster_size=25)``; its noise label is ``-1``.
``DBSCAN``
    ``sklearn.cluster.DBSCAN(eps, min_samples=10)`` with ``eps`` chosen like
    our threshold: the largest jump of the sorted Euclidean distances to the
    10th neighbour (:func:`geoforest.llpd.auto_noise_threshold`).

Scores per run: ``k_hat`` (clusters found, noise label excluded),
``accuracy_kept`` (clustering accuracy on the true cluster points the method
did not call noise), ``kept_cluster`` (fraction of true cluster points kept),
``noise_removed`` (fraction of background points labelled noise).

Figures: ``llpd_balls.png`` (a Euclidean ball and an LLPD ball of the same
radius on 2-D data), ``llpd_eigenvalues.png`` (Laplacian eigenvalues over
the scale grid, the chosen scale and its gap), ``llpd_noise.png`` (accuracy
and mean ``K_hat`` against the noise fraction, one column per ambient
dimension).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geoforest import datasets, metrics

from ._runner import ExperimentConfig, ExperimentResult, Timer, grid, progress, select, write_csv

METHODS = ("LLPD spectral", "Euclidean spectral", "HDBSCAN", "DBSCAN")
N_CLUSTERS = 4
#: What the slides claim (Murphy, "Data dependent distances for unsupervised learning").
SLIDES_CLAIMS = {
    "eigengap": "under the LDLN model the largest eigengap of the LLPD Laplacian is "
    "lambda_(K+1) - lambda_K (K estimated correctly)",
    "accuracy": "spectral clustering with K eigenvectors is perfectly accurate on the "
    "denoised data",
    "scale": "approximate LLPD spectral clustering: n = 10^8 in a few minutes",
    "COIL": "COIL-16: 99+% accuracy and 16 classes found (data not available offline)",
}


def settings(quick: bool) -> dict[str, Any]:
    """Sizes, noise fractions and seeds of the full and the quick run."""
    if quick:
        return {"n_samples": 800, "noise": (0.2, 0.5), "seeds": 2, "ambient_dims": (10,)}
    return {
        "n_samples": 2000,
        "noise": (0.1, 0.2, 0.35, 0.5, 0.65, 0.8),
        "seeds": 10,
        "ambient_dims": (5, 10),
    }


def _labels(method: str, X: np.ndarray, seed: int) -> tuple[np.ndarray, dict[str, Any]]:
    from sklearn.cluster import DBSCAN, HDBSCAN
    from sklearn.neighbors import NearestNeighbors

    from geoforest.cluster import KernelSpectralClustering
    from geoforest.llpd import LLPDSpectralClustering, auto_noise_threshold

    from .rpf_cluster import self_tuning_affinity

    if method == "LLPD spectral":
        model = LLPDSpectralClustering(random_state=seed).fit(X)
        return model.labels_, {"sigma": model.sigma_, "threshold": model.noise_threshold_}
    if method == "Euclidean spectral":
        model = KernelSpectralClustering(
            eigen_solver="arpack", selection="eigengap", random_state=seed
        )
        model.fit(self_tuning_affinity(X))
        return model.labels_, {}
    if method == "HDBSCAN":
        return HDBSCAN(min_cluster_size=25, copy=True).fit_predict(X), {}
    dist, _ = NearestNeighbors(n_neighbors=11).fit(X).kneighbors(X)
    eps = auto_noise_threshold(dist[:, 10])
    return DBSCAN(eps=eps, min_samples=10).fit_predict(X), {"threshold": eps}


def score(y: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """``k_hat``, ``accuracy_kept``, ``kept_cluster``, ``noise_removed`` of one labelling."""
    core = (y >= 0) & (labels >= 0)
    noise = y < 0
    return {
        "k_hat": int(np.unique(labels[labels >= 0]).size),
        "accuracy_kept": metrics.clustering_accuracy(y[core], labels[core]) if core.any() else 0.0,
        "kept_cluster": float(core.sum() / max(1, (y >= 0).sum())),
        "noise_removed": float(np.mean(labels[noise] < 0)) if noise.any() else float("nan"),
    }


def run(config: ExperimentConfig) -> ExperimentResult:
    """Every method on every noise level and seed; three figures."""
    s = settings(config.quick)
    rows: list[dict[str, Any]] = []
    total = len(s["ambient_dims"]) * len(s["noise"]) * s["seeds"] * len(METHODS)
    bar = progress(total, "llpd", config)
    for dim, noise, rep in grid(s["ambient_dims"], s["noise"], range(s["seeds"])):
        seed = config.seed + rep
        X, y = datasets.make_ldln(
            s["n_samples"],
            n_clusters=N_CLUSTERS,
            ambient_dim=dim,
            noise_fraction=noise,
            random_state=seed,
        )
        for method in METHODS:
            bar.set_postfix_str(f"D {dim} noise {noise} #{rep} {method}")
            with Timer() as timer:
                labels, info = _labels(method, X, seed)
            rows.append(
                {
                    "ambient_dim": dim,
                    "noise_fraction": noise,
                    "seed": seed,
                    "method": method,
                    **score(y, labels),
                    "sigma": info.get("sigma", ""),
                    "threshold": info.get("threshold", ""),
                    "seconds": timer.seconds,
                    "n_samples": s["n_samples"],
                }
            )
            bar.update()
    bar.close()
    files = [write_csv(rows, config.out / "llpd.csv")]
    summary = _summary(rows, s)
    files.append(write_csv(summary, config.out / "llpd_summary.csv"))
    try:
        files += _figures(rows, summary, s, config)
    except ImportError:  # pragma: no cover - plotting is an extra
        pass
    return ExperimentResult("llpd", rows, _table(summary), files)


def _summary(rows: list[dict[str, Any]], s: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for dim, noise, method in grid(s["ambient_dims"], s["noise"], METHODS):
        sel = select(rows, ambient_dim=dim, noise_fraction=noise, method=method)
        k = np.array([r["k_hat"] for r in sel])
        out.append(
            {
                "ambient_dim": dim,
                "noise_fraction": noise,
                "method": method,
                "k_correct": float(np.mean(k == N_CLUSTERS)),
                "k_hat_mean": float(k.mean()),
                "accuracy_kept_mean": float(np.mean([r["accuracy_kept"] for r in sel])),
                "accuracy_kept_min": float(np.min([r["accuracy_kept"] for r in sel])),
                "kept_cluster_mean": float(np.mean([r["kept_cluster"] for r in sel])),
                "noise_removed_mean": float(np.mean([r["noise_removed"] for r in sel])),
                "seconds_mean": float(np.mean([r["seconds"] for r in sel])),
                "n_seeds": len(sel),
            }
        )
    return out


def _table(summary: list[dict[str, Any]]) -> str:
    head = (
        f"{'D':>3} {'noise':>5} {'method':<19} {'K=4':>5} {'mean K':>6} {'acc kept':>8} "
        f"{'min acc':>7} {'kept':>6} {'noise rm':>8} {'s':>6}"
    )
    lines = [f"LDLN, K = {N_CLUSTERS}, fraction of runs with K_hat = 4 and scores", head]
    for r in summary:
        lines.append(
            f"{r['ambient_dim']:>3} {r['noise_fraction']:>5.2f} {r['method']:<19} "
            f"{r['k_correct']:>5.2f} {r['k_hat_mean']:>6.2f} {r['accuracy_kept_mean']:>8.4f} "
            f"{r['accuracy_kept_min']:>7.4f} {r['kept_cluster_mean']:>6.3f} "
            f"{r['noise_removed_mean']:>8.3f} {r['seconds_mean']:>6.2f}"
        )
    lines.append("slides: " + "; ".join(SLIDES_CLAIMS.values()))
    return "\n".join(lines)


# --------------------------------------------------------------------- figures
def _figures(rows, summary, s, config: ExperimentConfig) -> list:
    from geoforest.plotting import plot_panels, pyplot

    plt = pyplot()
    files = [_balls_figure(plt, config), _eigen_figure(plt, config)]
    acc: dict[str, list] = {}
    khat: dict[str, list] = {}
    for dim in s["ambient_dims"]:
        for method in METHODS:
            sel = [r for r in summary if r["method"] == method and r["ambient_dim"] == dim]
            x = [r["noise_fraction"] for r in sel]
            acc.setdefault(f"accuracy (kept points), D = {dim}", []).append(
                {
                    "x": x,
                    "y": [r["accuracy_kept_mean"] for r in sel],
                    "label": method,
                    "marker": "o",
                }
            )
            khat.setdefault(f"mean K_hat (true 4), D = {dim}", []).append(
                {"x": x, "y": [r["k_hat_mean"] for r in sel], "label": method, "marker": "o"}
            )
    files.append(
        plot_panels(
            {**acc, **khat},
            config.out / "llpd_noise.png",
            xlabel="background noise fraction",
            ylabel="",
            ncols=len(s["ambient_dims"]),
            ylim=None,
            suptitle=f"LDLN, K = 4, n = {s['n_samples']}",
        )
    )
    return files


def _balls_figure(plt, config: ExperimentConfig):
    """Euclidean and LLPD balls of one radius around one point (2-D data).

    The LLPD is computed on the points kept by denoising (background points
    removed, drawn as grey crosses): with the noise kept, in two dimensions
    the background bridges every cluster at a small LLPD.
    """
    from geoforest.llpd import LLPD

    X, y = datasets.make_ldln(
        1500, n_clusters=3, ambient_dim=2, intrinsic_dim=1, noise_fraction=0.1,
        separation=0.5, random_state=config.seed,
    )  # fmt: skip
    kept = LLPD().fit(X).denoise(10)
    Xk, yk = X[kept], y[kept]
    centre = int(np.flatnonzero(yk == 0)[0])
    radius = 0.3
    euclid = np.linalg.norm(Xk - Xk[centre], axis=1) <= radius
    path = LLPD().fit(Xk).pairwise()[centre] <= radius
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.4), layout="constrained")
    for ax, inside, title in (
        (axes[0], euclid, f"Euclidean ball, r = {radius}"),
        (axes[1], path, f"LLPD ball (denoised data), r = {radius}"),
    ):
        ax.scatter(X[~kept, 0], X[~kept, 1], s=8, c="lightgrey", marker="x")
        ax.scatter(Xk[:, 0], Xk[:, 1], s=4, c="grey")
        ax.scatter(Xk[inside, 0], Xk[inside, 1], s=6, c="tab:red")
        ax.scatter(*Xk[centre], s=80, marker="*", c="black")
        ax.set_title(title)
        ax.set_aspect("equal")
    path_out = config.out / "llpd_balls.png"
    fig.savefig(path_out, dpi=110)
    plt.close(fig)
    return path_out


def _eigen_figure(plt, config: ExperimentConfig):
    """Normalised Laplacian eigenvalues ``1 - lambda(M)`` at every scale of the grid."""
    from geoforest.graph import spectral_eigs
    from geoforest.llpd import LLPDSpectralClustering

    X, _ = datasets.make_ldln(
        2000, n_clusters=N_CLUSTERS, ambient_dim=10, noise_fraction=0.2, random_state=config.seed
    )
    model = LLPDSpectralClustering(random_state=config.seed).fit(X)
    fig, ax = plt.subplots(figsize=(6, 4.2), layout="constrained")
    for sigma in model.sigmas_:
        values, _ = spectral_eigs(
            model.llpd_.affinity_operator(float(sigma)), 11, random_state=0, tol=1e-8
        )
        chosen = sigma == model.sigma_
        ax.plot(
            np.arange(1, 12), 1 - values, marker="o" if chosen else ".",
            color="tab:red" if chosen else "grey", alpha=1.0 if chosen else 0.5,
            label=f"sigma = {sigma:.3g} (chosen)" if chosen else None,
        )  # fmt: skip
    k = model.n_clusters_
    ax.axvspan(k + 0.1, k + 0.9, color="tab:red", alpha=0.1, label=f"largest gap: K = {k}")
    ax.set_xlabel("index k")
    ax.set_ylabel("eigenvalue of I - D^-1/2 W D^-1/2")
    ax.set_title("LLPD Laplacian spectra over the scale grid (D = 10, 20 % noise)")
    ax.legend(frameon=False)
    path = config.out / "llpd_eigenvalues.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
