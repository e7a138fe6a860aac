"""geoforest against treeple's ``UnsupervisedObliqueRandomForest`` (and rerf), side by side.

Two parts (``--part fit``, ``--part proximity`` or both, the default);
``--part full`` times treeple's unmodified ``fit`` (trees, similarity and its
``AgglomerativeClustering``) once per ``--prox-sizes`` N, with peak memory.

What is measured: tree building (``--part fit``)
-------------------------------------------------
Wall-clock time of growing the trees of

* ``gf.UnsupervisedForest(projection="sparse", criterion=C)``, and
* ``treeple.ensemble.UnsupervisedObliqueRandomForest(criterion=C)``

on the same data: the URerF paper's simulations from ``geoforest.datasets``
(``make_helix``, ``make_sphere``, ``make_linear``) with ``--noise-dims`` (10)
columns of N(0, 70) noise appended by ``add_noise_dims``, saved as float32
``.npy`` and read by both sides.  Equal settings: ``n_estimators``, an int
``max_features`` (candidate projections per node), ``feature_combinations=1.5``
(mean nonzeros per projection, ``+-1`` weights on both sides), an int
``min_samples_split``, ``min_samples_leaf=1``, no depth limit, every tree
grown on all N rows without bootstrap (treeple's default;
geoforest ``max_samples=None, bootstrap=False``), the same ``n_jobs`` (both
grow trees in threads) and the same split criterion (treeple's default
``"twomeans"``, or ``"fastbic"``; ``--criteria``, both by default).  geoforest
runs with ``max_redraws=0``: treeple tries one batch of candidates per node, so
geoforest does too.  It also runs with ``distance="proximity"``: the default
(``"auto"``) estimates the learned metric at the end of ``fit``, which is not
tree building and which treeple does not compute (``docs/benchmarks.md``); the
neighbours of ``--part proximity`` then rank by proximity, as treeple's
similarity does.

rerf 2.0.5's ``rerf.urerf.UnsupervisedRandomForest(projection_matrix="RerF")``
(whose C++ split is two-means) runs in the two-means rows, ``--rerf-repeats``
times (1; it is slow), from ``--rerf-python`` (default
``/work/venv-rerf/bin/python``; skipped if missing).  Its ``fit`` adds every
tree's co-leaf pairs to a map in the same loop that grows the trees, so its
time includes that; its trees' leaves are not exposed to Python.

Check the leaves and depth columns before reading a ratio.  With its default
``min_impurity_decrease=0`` treeple's two-means trees stop after a few splits
(2 to 50 leaves at N = 10,000 with ``min_samples_split=45``): a node becomes a
leaf when its improvement is negative, and the impurity it starts from is
(as far as we can tell from its source) the variance along the *parent's*
chosen projection, so a child whose best new projection has more variance
looks like a loss.  ``--treeple-min-impurity-decrease=-inf`` lets those trees
grow to ``min_samples_split`` like geoforest's, which is the equal-work
comparison for ``"twomeans"``.  treeple's Fast-BIC trees are balanced (every
tree about N/31 to N/37 leaves at depth log2 of that); geoforest's are deeper
and have about 1.7x as many leaves.

treeple's ``fit`` also computes the dense n x n similarity matrix and clusters it
(``AgglomerativeClustering``) after growing the trees.  To time tree building
only, the treeple child fits a subclass whose ``compute_similarity_matrix`` and
``_assign_labels`` return ``None``: the rest of treeple's own ``fit`` (input
validation and its joblib loop over ``_parallel_build_trees``) runs unchanged,
so the timed code is exactly the tree building that treeple's ``fit`` does.
The similarity matrix is timed on its own in ``--part proximity``.

treeple needs scikit-learn 1.6.1, so it runs in a separate interpreter
(``--treeple-python``, default ``/work/venv-treeple/bin/python``) as a child
process of this script: the child loads the ``.npy``, fits, and reports the fit
time (measured inside the child, import excluded) and each tree's leaves and
depth.  geoforest fits in this process after an untimed tiny fit compiles
numba.  For each configuration the two libraries alternate ``--repeats`` times
(the order rotates every repeat) and the table reports medians, so the noise of a
shared machine hits both.  Leaves per tree and depth are printed on both sides
as a check that the trees are comparable.

What is measured: similarity / neighbours (``--part proximity``)
----------------------------------------------------------------
For each N (helix + noise; default 10,000 and 20,000) every workload runs in its
own fresh child process, which reports its own peak resident memory
(``VmHWM``, as ``benchmarks/_memory.py``):

* ``treeple trees``: fit the trees as above (baseline of the next row);
* ``treeple similarity``: the same, then ``compute_similarity_matrix(X)`` (what
  treeple's ``fit`` computes: n x n, float64), timed;
* ``geoforest trees``: fit the forest with the same settings (baseline);
* ``geoforest proximity``: the same, then ``forest.proximity()`` (CSR), timed;
* ``geoforest kneighbors``: the same, then ``forest.kneighbors(n_neighbors=K)``.

The largest N that fits in ``--memory-budget-gib`` (16) is then *extrapolated*
from the measured peaks: ``a + b n^2`` through the two largest measured N for
treeple's similarity, ``a + b n`` for geoforest's proximity and kneighbors
(memory O(n x trees)).

How to run
----------
From the repository root, with geoforest importable::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python3 -u benchmarks/bench_treeple.py
    python3 benchmarks/bench_treeple.py --part fit --sizes 2000 10000 --repeats 3
    python3 benchmarks/bench_treeple.py --part fit --criteria twomeans \\
        --treeple-min-impurity-decrease=-inf --rerf-repeats 0
    python3 benchmarks/bench_treeple.py --part proximity --prox-sizes 10000 20000
    python3 benchmarks/bench_treeple.py --quick          # smoke run

treeple's and rerf's venvs (rerf is an sdist that needs Eigen and pybind11)::

    python3 -m venv /work/venv-treeple
    /work/venv-treeple/bin/pip install treeple==0.10.3 scikit-learn==1.6.1
    apt-get install -y libeigen3-dev
    python3 -m venv /work/venv-rerf
    /work/venv-rerf/bin/pip install pybind11 numpy scikit-learn wheel setuptools
    /work/venv-rerf/bin/pip download --no-deps rerf==2.0.5 && tar xzf rerf-2.0.5.tar.gz
    /work/venv-rerf/bin/pip install --no-build-isolation ./rerf-2.0.5

See ``python3 benchmarks/bench_treeple.py --help`` for all flags.  The script
skips treeple with a message if ``--treeple-python`` does not exist.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _child import report, spawn_child  # noqa: E402  (this folder, also in the venv children)
from _memory import peak_rss_bytes  # noqa: E402

SEED = 0
DATASETS = ("helix", "sphere", "linear")
DEFAULT_TREEPLE_PYTHON = "/work/venv-treeple/bin/python"
DEFAULT_RERF_PYTHON = "/work/venv-rerf/bin/python"
CHILD_KINDS = (
    "treeple-fit",
    "rerf-fit",
    "treeple-trees",
    "treeple-similarity",
    "treeple-full",
    "gf-trees",
    "gf-proximity",
    "gf-kneighbors",
)


@dataclass
class Settings:
    """Forest settings shared by both libraries."""

    n_estimators: int
    max_features: int
    feature_combinations: float
    min_samples_split: int
    criterion: str
    n_jobs: int
    treeple_min_impurity_decrease: float = 0.0


@dataclass
class FitResult:
    """Timings and tree shapes collected for one data set and ``N``."""

    criterion: str
    dataset: str
    n_samples: int
    n_features: int
    gf_times: list[float] = field(default_factory=list)
    tp_times: list[float] = field(default_factory=list)
    gf_leaves: list[int] = field(default_factory=list)
    tp_leaves: list[int] = field(default_factory=list)
    gf_depth: list[int] = field(default_factory=list)
    tp_depth: list[int] = field(default_factory=list)
    rf_times: list[float] = field(default_factory=list)


# ------------------------------------------------------------------ helpers
def make_data(dataset: str, n_samples: int, noise_dims: int) -> np.ndarray:
    """A URerF simulation with ``noise_dims`` N(0, 70) noise columns, as float32."""
    from geoforest import datasets

    makers = {
        "helix": datasets.make_helix,
        "sphere": datasets.make_sphere,
        "linear": datasets.make_linear,
    }
    X, _ = makers[dataset](n_samples, random_state=SEED)
    X = datasets.add_noise_dims(X, noise_dims, random_state=SEED)
    return np.ascontiguousarray(X, dtype=np.float32)


def tree_depths(trees: list[Any]) -> list[int]:
    """Depth of each geoforest tree (root at depth 0; nodes are in pre-order)."""
    out = []
    for tree in trees:
        depth = np.zeros(tree.n_nodes, dtype=np.int64)
        for node in range(tree.n_nodes):
            if tree.left[node] >= 0:
                depth[tree.left[node]] = depth[node] + 1
                depth[tree.right[node]] = depth[node] + 1
        out.append(int(depth.max()))
    return out


def make_geoforest(s: Settings) -> Any:
    import geoforest as gf

    return gf.UnsupervisedForest(
        n_estimators=s.n_estimators,
        projection="sparse",
        criterion=s.criterion,
        max_features=s.max_features,
        feature_combinations=s.feature_combinations,
        min_samples_split=s.min_samples_split,
        min_samples_leaf=1,
        max_depth=None,
        max_samples=None,
        bootstrap=False,
        max_redraws=0,
        distance="proximity",
        n_jobs=s.n_jobs,
        random_state=SEED,
    )


def gf_warm_up(s: Settings, n_features: int) -> None:
    """Compile / load geoforest's numba kernels (not timed)."""
    X = np.random.default_rng(SEED + 1).standard_normal((300, n_features), dtype=np.float32)
    tiny = Settings(2, s.max_features, s.feature_combinations, 10, s.criterion, s.n_jobs)
    forest = make_geoforest(tiny).fit(X)
    forest.proximity()
    forest.kneighbors(n_neighbors=5)


# -------------------------------------------------------------- child side
def make_treeple(s: Settings, trees_only: bool) -> Any:
    """treeple's forest; with ``trees_only`` its ``fit`` stops after the trees."""
    from treeple.ensemble import UnsupervisedObliqueRandomForest

    class TreesOnly(UnsupervisedObliqueRandomForest):
        """``fit`` without the n x n similarity matrix and its clustering."""

        def compute_similarity_matrix(self, X: np.ndarray) -> None:
            return None

        def _assign_labels(self, similarity_matrix: Any) -> None:
            return None

    cls = TreesOnly if trees_only else UnsupervisedObliqueRandomForest
    return cls(
        n_estimators=s.n_estimators,
        criterion=s.criterion,
        max_features=s.max_features,
        feature_combinations=s.feature_combinations,
        min_samples_split=s.min_samples_split,
        min_samples_leaf=1,
        max_depth=None,
        bootstrap=False,
        min_impurity_decrease=s.treeple_min_impurity_decrease,
        n_jobs=s.n_jobs,
        random_state=SEED,
    )


def run_child(kind: str, data: str, s: Settings, n_neighbors: int) -> dict[str, Any]:
    """Run one workload in this (child) process and return its measurements."""
    out: dict[str, Any] = {"kind": kind}
    if kind == "rerf-fit":
        from rerf.urerf import UnsupervisedRandomForest

        X = np.load(data).astype(np.float64)  # rerf's C++ reads float64
        forest = UnsupervisedRandomForest(
            projection_matrix="RerF",
            n_estimators=s.n_estimators,
            min_samples_split=s.min_samples_split,
            max_features=s.max_features,
            feature_combinations=s.feature_combinations,
            n_jobs=s.n_jobs,
            random_state=SEED + 1,  # rerf treats 0 as "no seed"
        )
        t0 = time.perf_counter()
        forest.fit(X)
        out["fit_s"] = time.perf_counter() - t0
    elif kind == "treeple-full":
        X = np.load(data)
        forest = make_treeple(s, trees_only=False)
        t0 = time.perf_counter()
        forest.fit(X)  # trees, dense similarity, AgglomerativeClustering
        out["fit_s"] = time.perf_counter() - t0
    elif kind.startswith("treeple"):
        import sklearn
        import treeple

        out["versions"] = {"treeple": treeple.__version__, "scikit-learn": sklearn.__version__}
        X = np.load(data)
        forest = make_treeple(s, trees_only=True)
        t0 = time.perf_counter()
        forest.fit(X)
        out["fit_s"] = time.perf_counter() - t0
        out["leaves"] = [int(e.tree_.n_leaves()) for e in forest.estimators_]
        out["depth"] = [int(e.tree_.max_depth) for e in forest.estimators_]
        if kind == "treeple-similarity":
            t0 = time.perf_counter()
            from treeple.ensemble import UnsupervisedObliqueRandomForest

            sim = UnsupervisedObliqueRandomForest.compute_similarity_matrix(forest, X)
            out["kernel_s"] = time.perf_counter() - t0
            out["kernel_shape"] = list(sim.shape)
            out["kernel_dtype"] = str(sim.dtype)
            del sim
    else:
        X = np.load(data)
        gf_warm_up(s, X.shape[1])
        forest = make_geoforest(s)
        t0 = time.perf_counter()
        forest.fit(X)
        out["fit_s"] = time.perf_counter() - t0
        out["leaves"] = [int(t.n_leaves) for t in forest.trees_]
        if kind == "gf-proximity":
            t0 = time.perf_counter()
            prox = forest.proximity()
            out["kernel_s"] = time.perf_counter() - t0
            out["kernel_nnz"] = int(prox.nnz)
            del prox
        elif kind == "gf-kneighbors":
            t0 = time.perf_counter()
            dist, ind = forest.kneighbors(n_neighbors=n_neighbors)
            out["kernel_s"] = time.perf_counter() - t0
            out["kernel_shape"] = list(ind.shape)
            del dist, ind
    out["peak_rss_bytes"] = peak_rss_bytes()
    return out


# ------------------------------------------------------------- parent side
def spawn(kind: str, data: str, s: Settings, python: str, n_neighbors: int = 20) -> dict[str, Any]:
    """Run this script with ``--child KIND`` under ``python`` and parse its result."""
    env = dict(os.environ)
    if kind.startswith(("treeple", "rerf")):
        env.pop("PYTHONPATH", None)  # the venv must not see geoforest's environment
    flags = {
        "child": kind,
        "data": data,
        "settings": json.dumps(s.__dict__),
        "n-neighbors": n_neighbors,
    }
    return spawn_child(__file__, flags, python=python, env=env, what=f"child {kind!r}")


def time_geoforest(s: Settings, X: np.ndarray) -> tuple[float, list[int], list[int]]:
    """Seconds for one geoforest fit, and the leaves and depth of each tree."""
    import gc

    forest = make_geoforest(s)
    gc.collect()
    t0 = time.perf_counter()
    forest.fit(X)
    elapsed = time.perf_counter() - t0
    return elapsed, [int(t.n_leaves) for t in forest.trees_], tree_depths(forest.trees_)


def run_fit(
    s: Settings,
    dataset: str,
    n_samples: int,
    noise_dims: int,
    repeats: int,
    tmpdir: str,
    treeple_python: str | None,
    rerf_python: str | None,
    rerf_repeats: int,
) -> FitResult:
    """Alternate the libraries ``repeats`` times on one data set (rerf: two-means rows only)."""
    X = make_data(dataset, n_samples, noise_dims)
    path = os.path.join(tmpdir, f"{dataset}_{n_samples}.npy")
    np.save(path, X)
    res = FitResult(s.criterion, dataset, n_samples, X.shape[1])
    for r in range(repeats):
        libs = ["gf", "tp"]
        if rerf_python is not None and s.criterion == "twomeans" and r < rerf_repeats:
            libs.append("rf")
        order = libs[r % len(libs) :] + libs[: r % len(libs)]  # rotate who goes first
        line = []
        for lib in order:
            if lib == "gf":
                t, leaves, depth = time_geoforest(s, X)
                res.gf_times.append(t)
                res.gf_leaves, res.gf_depth = leaves, depth
                line.append(f"geoforest {t:8.3f} s")
            elif lib == "tp" and treeple_python is not None:
                out = spawn("treeple-fit", path, s, treeple_python)
                res.tp_times.append(out["fit_s"])
                res.tp_leaves, res.tp_depth = out["leaves"], out["depth"]
                line.append(f"treeple {out['fit_s']:8.3f} s")
            elif lib == "rf":
                assert rerf_python is not None
                out = spawn("rerf-fit", path, s, rerf_python)
                res.rf_times.append(out["fit_s"])
                line.append(f"rerf {out['fit_s']:8.3f} s")
        print(
            f"  {s.criterion:<8} {dataset:<7} N={n_samples:>7,}  repeat {r + 1}/{repeats}: "
            + "   ".join(line),
            flush=True,
        )
    return res


def summary(values: list[int]) -> str:
    if not values:
        return "-"
    return f"{statistics.fmean(values):,.0f} ({min(values):,}-{max(values):,})"


def print_fit_table(results: list[FitResult]) -> None:
    print(
        "| criterion | data | N | p | geoforest s | treeple s | treeple / geoforest | "
        "rerf s | rerf / geoforest | "
        "leaves/tree gf (min-max) | leaves/tree treeple | depth gf | depth treeple |"
    )
    print("| --- | --- |" + " ---: |" * 11)
    for res in results:
        gf_med = statistics.median(res.gf_times)
        if res.tp_times:
            tp_med = statistics.median(res.tp_times)
            tp_s, ratio = f"{tp_med:.2f}", f"**{tp_med / gf_med:.1f}x**"
        else:
            tp_s, ratio = "-", "-"
        if res.rf_times:
            rf_med = statistics.median(res.rf_times)
            rf_s, rf_ratio = f"{rf_med:.2f}", f"{rf_med / gf_med:.1f}x"
        else:
            rf_s, rf_ratio = "-", "-"
        print(
            f"| {res.criterion} | {res.dataset} | {res.n_samples:,} | {res.n_features} | "
            f"{gf_med:.2f} | {tp_s} | "
            f"{ratio} | {rf_s} | {rf_ratio} | "
            f"{summary(res.gf_leaves)} | {summary(res.tp_leaves)} | "
            f"{summary(res.gf_depth)} | {summary(res.tp_depth)} |"
        )


def gib(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:.2f}"


def largest_n(sizes: list[int], peaks: list[int], power: int, budget: float) -> int | None:
    """Largest N with ``a + b N**power <= budget``, through the two largest measured N."""
    if len(sizes) < 2:
        return None
    (n1, m1), (n2, m2) = sorted(zip(sizes, peaks, strict=True))[-2:]
    b = (m2 - m1) / (n2**power - n1**power)
    if b <= 0:
        return None
    a = m2 - b * n2**power
    return int(((budget - a) / b) ** (1.0 / power))


def run_proximity(
    s: Settings,
    sizes: list[int],
    noise_dims: int,
    n_neighbors: int,
    tmpdir: str,
    treeple_python: str | None,
    budget_gib: float,
) -> None:
    kinds = ["gf-trees", "gf-proximity", "gf-kneighbors"]
    if treeple_python is not None:
        kinds = ["treeple-trees", "treeple-similarity", *kinds]
    rows: dict[tuple[int, str], dict[str, Any]] = {}
    for n in sizes:
        X = make_data("helix", n, noise_dims)
        path = os.path.join(tmpdir, f"helix_{n}.npy")
        np.save(path, X)
        for kind in kinds:
            python = treeple_python if kind.startswith("treeple") else sys.executable
            assert python is not None
            print(f"  N={n:>7,}  child {kind!r} ...", end=" ", flush=True)
            out = spawn(kind, path, s, python, n_neighbors)
            rows[(n, kind)] = out
            print(
                f"fit {out['fit_s']:.2f} s, kernel {out.get('kernel_s', float('nan')):.2f} s, "
                f"peak {gib(out['peak_rss_bytes'])} GiB",
                flush=True,
            )
    labels = {
        "treeple-trees": "treeple: trees only",
        "treeple-similarity": "treeple: trees + compute_similarity_matrix (dense n x n)",
        "gf-trees": "geoforest: trees only",
        "gf-proximity": "geoforest: trees + proximity() (CSR)",
        "gf-kneighbors": f"geoforest: trees + kneighbors(n_neighbors={n_neighbors})",
    }
    print()
    print("| N | workload | fit s | kernel s | peak GiB | peak - trees-only GiB | output |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | --- |")
    for n in sizes:
        for kind in kinds:
            out = rows[(n, kind)]
            base_kind = "treeple-trees" if kind.startswith("treeple") else "gf-trees"
            base = rows[(n, base_kind)]["peak_rss_bytes"]
            kernel = out.get("kernel_s")
            delta = "-" if kind == base_kind else gib(out["peak_rss_bytes"] - base)
            if "kernel_nnz" in out:
                what = f"nnz {out['kernel_nnz'] / 1e6:.1f} M ({out['kernel_nnz'] / n:,.0f}/row)"
            elif "kernel_shape" in out:
                what = f"{tuple(out['kernel_shape'])} {out.get('kernel_dtype', 'int')}"
            else:
                what = "-"
            print(
                f"| {n:,} | {labels[kind]} | {out['fit_s']:.2f} | "
                f"{'-' if kernel is None else f'{kernel:.2f}'} | {gib(out['peak_rss_bytes'])} | "
                f"{delta} | {what} |"
            )
    budget = budget_gib * 2**30
    print(f"\nlargest N within {budget_gib:g} GiB of peak RSS, EXTRAPOLATED from the N above:")
    for kind, power in (("treeple-similarity", 2), ("gf-proximity", 1), ("gf-kneighbors", 1)):
        if kind not in kinds:
            continue
        peaks = [rows[(n, kind)]["peak_rss_bytes"] for n in sizes]
        n_max = largest_n(sizes, peaks, power, budget)
        shape = "a + b n^2" if power == 2 else "a + b n"
        text = "needs two sizes" if n_max is None else f"~{n_max:,}"
        print(f"  {labels[kind]:<60} ({shape}): {text}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="geoforest UnsupervisedForest vs treeple UnsupervisedObliqueRandomForest: "
        "tree building, similarity / neighbours time and peak memory."
    )
    parser.add_argument(
        "--part",
        choices=("fit", "proximity", "both", "full"),
        default="both",
        help="'full': treeple's unmodified fit (trees + similarity + clustering) once per "
        "--prox-sizes N, time and peak memory",
    )
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 10_000], help="fit: N")
    parser.add_argument(
        "--prox-sizes", type=int, nargs="+", default=[10_000, 20_000], help="proximity: N"
    )
    parser.add_argument("--noise-dims", type=int, default=10)
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument(
        "--max-features", type=int, default=None, help="projections per node (default: sqrt(p))"
    )
    parser.add_argument("--feature-combinations", type=float, default=1.5)
    parser.add_argument("--min-samples-split", type=int, default=45)
    parser.add_argument(
        "--criteria",
        nargs="+",
        choices=("fastbic", "twomeans"),
        default=["fastbic", "twomeans"],
        help="split criteria; the proximity part uses the first",
    )
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--n-neighbors", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory-budget-gib", type=float, default=16.0)
    parser.add_argument(
        "--treeple-min-impurity-decrease",
        type=float,
        default=0.0,
        help="treeple's min_impurity_decrease; -inf lets its two-means trees grow to "
        "min_samples_split (with 0, its default, they stop after a few splits)",
    )
    parser.add_argument("--treeple-python", default=DEFAULT_TREEPLE_PYTHON)
    parser.add_argument("--rerf-python", default=DEFAULT_RERF_PYTHON)
    parser.add_argument(
        "--rerf-repeats", type=int, default=1, help="rerf fits per configuration (slow)"
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: N=1,000, 10 trees")
    parser.add_argument("--child", choices=CHILD_KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--settings", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.prox_sizes = [1_000], [1_000, 2_000]
        args.n_estimators, args.repeats = 10, 1
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child is not None:
        s = Settings(**json.loads(args.settings))
        result = run_child(args.child, args.data, s, args.n_neighbors)
        report(result)
        return 0

    import numba

    import geoforest as gf

    treeple_python: str | None = args.treeple_python
    if not os.path.exists(args.treeple_python):
        print(
            f"treeple SKIPPED: {args.treeple_python} does not exist (make the venv: "
            "python3 -m venv /work/venv-treeple && /work/venv-treeple/bin/pip install "
            "treeple==0.10.3 scikit-learn==1.6.1, or pass --treeple-python)"
        )
        treeple_python = None
    rerf_python: str | None = args.rerf_python
    if not os.path.exists(args.rerf_python):
        print(f"rerf SKIPPED: {args.rerf_python} does not exist (see the docstring)")
        rerf_python = None
    n_features = 3 + args.noise_dims
    max_features = args.max_features or max(1, int(np.sqrt(n_features)))
    s = Settings(
        args.n_estimators,
        max_features,
        args.feature_combinations,
        args.min_samples_split,
        args.criteria[0],
        args.n_jobs,
        args.treeple_min_impurity_decrease,
    )
    print(
        f"python {platform.python_version()}  geoforest {gf.__version__}  numpy {np.__version__}  "
        f"numba {numba.__version__}  cpus {os.cpu_count()}  "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '-')}  "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')}"
    )
    if treeple_python is not None:
        ver = subprocess.run(
            [
                treeple_python,
                "-c",
                "import platform, sklearn, treeple, numpy; print('treeple python', "
                "platform.python_version(), ' treeple', treeple.__version__, "
                "' scikit-learn', sklearn.__version__, ' numpy', numpy.__version__)",
            ],
            stdout=subprocess.PIPE,
            text=True,
            check=False,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
        print(ver.stdout.strip())
    print(
        f"p = 3 + {args.noise_dims} noise  n_estimators={s.n_estimators}  "
        f"max_features={s.max_features}  feature_combinations={s.feature_combinations}  "
        f"min_samples_split={s.min_samples_split}  min_samples_leaf=1  all rows per tree, "
        f"no bootstrap  criteria={'/'.join(args.criteria)}  n_jobs={s.n_jobs}  "
        f"repeats={args.repeats}  "
        f"(geoforest max_redraws=0; treeple min_impurity_decrease="
        f"{s.treeple_min_impurity_decrease})",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench_treeple_") as tmpdir:
        if args.part in ("fit", "both"):
            t0 = time.perf_counter()
            gf_warm_up(s, n_features)
            print(f"numba warm-up (not timed): {time.perf_counter() - t0:.1f} s", flush=True)
            results = [
                run_fit(
                    replace(s, criterion=c),
                    d,
                    n,
                    args.noise_dims,
                    args.repeats,
                    tmpdir,
                    treeple_python,
                    rerf_python,
                    args.rerf_repeats,
                )
                for c in args.criteria
                for n in args.sizes
                for d in args.datasets
            ]
            print("\nmedian tree-building time; treeple / geoforest > 1 means geoforest is faster")
            print_fit_table(results)
            print()
        if args.part in ("proximity", "both"):
            # refresh numba's on-disk cache before any measured child
            spawn("gf-trees", _tiny_data(tmpdir, n_features), s, sys.executable)
            run_proximity(
                s,
                args.prox_sizes,
                args.noise_dims,
                args.n_neighbors,
                tmpdir,
                treeple_python,
                args.memory_budget_gib,
            )
        if args.part == "full" and treeple_python is not None:
            for n in args.prox_sizes:
                path = os.path.join(tmpdir, f"helix_{n}.npy")
                np.save(path, make_data("helix", n, args.noise_dims))
                out = spawn("treeple-full", path, s, treeple_python)
                print(
                    f"treeple full fit (trees + similarity + AgglomerativeClustering), "
                    f"N={n:,}: {out['fit_s']:.1f} s, peak {gib(out['peak_rss_bytes'])} GiB",
                    flush=True,
                )
    return 0


def _tiny_data(tmpdir: str, n_features: int) -> str:
    path = os.path.join(tmpdir, "tiny.npy")
    X = np.random.default_rng(SEED).standard_normal((200, n_features), dtype=np.float32)
    np.save(path, X)
    return path


if __name__ == "__main__":
    sys.exit(main())
