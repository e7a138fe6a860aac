"""MNIST 3 vs 5 importance maps of MORF, SPORF and RF (manifold forests paper, Fig. 3).

Each forest (500 trees, as the paper's real-data runs) is trained on 100
threes and 100 fives drawn from :func:`geoforest.datasets.load_mnist35`, and
its projection-count importance (for each pixel, the number of split nodes
whose projection uses it, normalised to sum 1) is drawn as a 28 x 28 map.
RF is Breiman's forest on the same engine (``ObliqueForestClassifier(
projection="axis")``), so all three maps are the same statistic.

The paper's claim is qualitative ("MF visibly results in a smoother pixel
importance"; SPORF shows "scattered importance of unimportant background
pixels").  Two numbers back it, averaged over ``reps`` training subsets:

``total_variation``
    ``sum |m[i+1, j] - m[i, j]| + sum |m[i, j+1] - m[i, j]|`` of the map
    normalised to sum 1 (smaller is smoother).
``background_mass``
    the importance on background pixels, those that are zero in at least 99 %
    of all 1,000 images (mostly the border).

Test error on the images not used for training is reported too.
Outputs: ``morf_importance.csv``, ``morf_importance_maps.npz`` and
``morf_importance.png`` (class means and their difference above, the three
maps below).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from geoforest import datasets

from ._runner import ExperimentConfig, ExperimentResult, progress, select, write_csv

METHODS = ("MORF", "SPORF", "RF")
PAPER_CLAIMS = {
    "smooth": "MF visibly results in a smoother pixel importance (than SPORF and RF)",
    "background": "SPORF yields scattered importance of unimportant background pixels, "
    "RF does not; MF shows little or no importance of background pixels",
}


def settings(quick: bool) -> dict[str, Any]:
    """Trees and training subsets of the full and the quick run."""
    return {"n_trees": 100 if quick else 500, "reps": 1 if quick else 5, "n_per_class": 100}


def total_variation(importance: np.ndarray, shape=(28, 28)) -> float:
    """Anisotropic total variation of a map normalised to sum 1."""
    m = np.asarray(importance, dtype=np.float64).reshape(shape)
    s = m.sum()
    if s > 0:
        m = m / s
    return float(np.abs(np.diff(m, axis=0)).sum() + np.abs(np.diff(m, axis=1)).sum())


def make_forest(method: str, n_trees: int, seed: int, n_jobs):
    """The three forests, 28 candidate projections per node (sqrt(784))."""
    from geoforest.forest import ManifoldForestClassifier, ObliqueForestClassifier

    if method == "MORF":
        return ManifoldForestClassifier(
            image_shape=(28, 28), n_estimators=n_trees, random_state=seed, n_jobs=n_jobs
        )
    projection = "sparse" if method == "SPORF" else "axis"
    return ObliqueForestClassifier(
        n_estimators=n_trees, projection=projection, random_state=seed, n_jobs=n_jobs
    )


def run(config: ExperimentConfig) -> ExperimentResult:
    """Importance maps over training subsets; one figure."""
    s = settings(config.quick)
    data = datasets.load_mnist35()
    X_all, y_all = data.data, data.target
    background = np.mean(X_all == 0, axis=0) >= 0.99
    rows: list[dict[str, Any]] = []
    maps: dict[str, list[np.ndarray]] = {m: [] for m in METHODS}
    bar = progress(s["reps"] * len(METHODS), "morf-importance", config)
    first_train = None
    for rep in range(s["reps"]):
        seed = config.seed + rep
        rng = np.random.RandomState(seed)
        train = np.sort(
            np.concatenate(
                [rng.choice(np.flatnonzero(y_all == d), s["n_per_class"], replace=False)
                 for d in (3, 5)]
            )
        )  # fmt: skip
        if first_train is None:
            first_train = train
        test = np.setdiff1d(np.arange(len(y_all)), train)
        for method in METHODS:
            bar.set_postfix_str(f"#{rep} {method}")
            forest = make_forest(method, s["n_trees"], seed, config.n_jobs)
            t0 = time.perf_counter()
            forest.fit(X_all[train], y_all[train])
            fit_s = time.perf_counter() - t0
            imp = forest.feature_importances_
            maps[method].append(imp)
            rows.append(
                {
                    "seed": seed,
                    "method": method,
                    "total_variation": total_variation(imp),
                    "background_mass": float(imp[background].sum()),
                    "pixels_used": int(np.count_nonzero(imp)),
                    "test_error": float(np.mean(forest.predict(X_all[test]) != y_all[test])),
                    "fit_seconds": fit_s,
                    "n_trees": s["n_trees"],
                    "n_background_pixels": int(background.sum()),
                }
            )
            bar.update()
    bar.close()
    files = [write_csv(rows, config.out / "morf_importance.csv")]
    npz = config.out / "morf_importance_maps.npz"
    np.savez_compressed(npz, **{m.lower(): np.array(v) for m, v in maps.items()})
    files.append(npz)
    try:
        files.append(_figure(X_all[first_train], y_all[first_train], maps, rows, config))
    except ImportError:  # pragma: no cover - plotting is an extra
        pass
    return ExperimentResult("morf-importance", rows, _table(rows, s), files)


def summarize(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean and sd over subsets of each method's numbers."""
    out = {}
    for method in METHODS:
        sel = select(rows, method=method)
        out[method] = {}
        for key in ("total_variation", "background_mass", "test_error", "fit_seconds"):
            v = np.array([r[key] for r in sel])
            out[method][key] = float(v.mean())
            out[method][key + "_sd"] = float(v.std(ddof=1)) if v.size > 1 else 0.0
    return out


def _table(rows, s) -> str:
    summ = summarize(rows)
    lines = [
        f"MNIST 3 vs 5, {s['n_per_class']} per class, {s['n_trees']} trees, "
        f"{s['reps']} subsets (mean +- sd)",
        f"{'method':<6} {'total variation':>18} {'background mass':>18} {'test error':>16}",
    ]
    for m in METHODS:
        r = summ[m]
        lines.append(
            f"{m:<6} {r['total_variation']:>10.4f} +- {r['total_variation_sd']:.4f} "
            f"{r['background_mass']:>10.4f} +- {r['background_mass_sd']:.4f} "
            f"{r['test_error']:>8.4f} +- {r['test_error_sd']:.4f}"
        )
    lines.append("paper: " + "; ".join(PAPER_CLAIMS.values()))
    return "\n".join(lines)


def _figure(X, y, maps, rows, config: ExperimentConfig):
    from geoforest.plotting import pyplot

    plt = pyplot()
    summ = summarize(rows)
    mean3 = X[y == 3].mean(axis=0).reshape(28, 28)
    mean5 = X[y == 5].mean(axis=0).reshape(28, 28)
    fig, axes = plt.subplots(2, 3, figsize=(9.6, 6.8), layout="constrained")
    top = (("mean of the 3s", mean3, "gray"), ("mean of the 5s", mean5, "gray"),
           ("difference (3 - 5)", mean3 - mean5, "RdBu_r"))  # fmt: skip
    for ax, (title, img, cmap) in zip(axes[0], top, strict=True):
        lim = np.abs(img).max()
        kw = {"vmin": -lim, "vmax": lim} if cmap == "RdBu_r" else {}
        ax.imshow(img, cmap=cmap, **kw)
        ax.set_title(title)
    for ax, method in zip(axes[1], METHODS, strict=True):
        ax.imshow(maps[method][0].reshape(28, 28), cmap="hot")
        tv = summ[method]["total_variation"]
        bg = summ[method]["background_mass"]
        ax.set_title(f"{method} importance\nTV {tv:.3f}, background {bg:.3f}")
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle("Manifold forests paper, Fig. 3: MNIST 3 vs 5, 100 per class")
    path = config.out / "morf_importance.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
