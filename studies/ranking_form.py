"""Choose how ``UnsupervisedForest`` ranks its proximity candidates (issue 42).

The learned ranking of ``distance="auto"`` orders each query's ``6k``
highest-proximity points by a weighted Euclidean distance whose weights come
from the feature relevance ``rho_j`` (how much tighter a point's nearest
forest neighbours are along feature ``j`` than its pool of 180).  The first
form, ``rho_j^3 / s_j`` (``s_j`` the pool's spread), shrinks a genuine
in-plane direction of a clean sheet the trees cut less often: the cube of
its lower relevance and its larger pool spread both shrink it.

Every form is computed here from public calls only: a 100-tree forest ranked
by proximity gives the candidates (``kneighbors``) and the pools of at most
2,000 evenly spread points (``kneighbors`` of those points), from which
``rho``, the pool spread ``s`` and the variance ``v`` are computed as the
library does (only neighbours sharing a leaf count).  The forms:

* ``cube``: ``rho^3 / s`` (the form before this study);
* ``sat<t>``: ``min(1, rho / (t max rho))^3 / s``: the cube, saturated: a
  feature within a factor ``t`` of the most relevant one counts fully;
* ``hard<t>``: ``[rho >= t max rho] / s``;
* ``euclid``: every feature, raw units, on the same candidates;
* ``library``: ``UnsupervisedForest()`` at its defaults, its own ``kneighbors``.

Cells: ``geoforest_experiments.neighbours.cells_of`` of the selection half
(real data clean and with 10 / 100 noise columns, the sheets, the rotated
sets) and the paper's simulations.  The report half is never read here
(``--half report`` exists only to report the chosen form once).

Run::

    python studies/ranking_form.py --out ranking_form.csv   # about 20 minutes on 2 cores
    python studies/ranking_form.py --half report --forms cube sat0.5 --out report.csv
"""

from __future__ import annotations

import argparse
import csv
import sys

import numpy as np
from sklearn.neighbors import NearestNeighbors

import geoforest as gf
from geoforest_experiments.neighbours import cells_of, zscore

POOL, NEAR, ROWS, PER_NEIGHBOR = 180, 30, 2000, 6


def relevance_stats(X: np.ndarray, forest) -> tuple[np.ndarray, np.ndarray]:
    """``(rho, s)`` from the forest's proximity pools of at most 2,000 points."""
    n = X.shape[0]
    pool = min(POOL, n - 1)
    rows = np.unique(np.linspace(0, n - 1, min(ROWS, n)).astype(np.int64))
    dist, ind = forest.kneighbors(X[rows], n_neighbors=pool + 1)
    near_sq = np.zeros(X.shape[1])
    pool_sq = np.zeros(X.shape[1])
    n_near = n_pool = 0
    for r, d_row, i_row in zip(rows, dist, ind, strict=True):
        keep = i_row != r
        i_row, d_row = i_row[keep][:pool], d_row[keep][:pool]
        m = int(np.count_nonzero(d_row < 1.0))  # those sharing a leaf come first
        h = -(-m * NEAR // pool)
        if h >= m:
            continue
        sq = (X[i_row[:m]].astype(np.float64) - X[r]) ** 2
        near_sq += sq[:h].sum(axis=0)
        pool_sq += sq.sum(axis=0)
        n_near += h
        n_pool += m
    near_sq /= max(n_near, 1)
    pool_sq /= max(n_pool, 1)
    spread = np.where(pool_sq > 0, pool_sq, np.inf)
    return np.clip(1.0 - near_sq / spread, 0.0, 1.0), spread


def forms(rho: np.ndarray, s: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    """Every candidate form's feature weights (``s``: pool spread, ``v``: variance)."""
    top = max(float(rho.max()), 1e-12)
    out = {"cube": rho**3 / s, "euclid": np.ones_like(rho)}
    units = {"pool": s, "raw": np.ones_like(s), "var": v, "pool.5": np.sqrt(s),
             "var.5": np.sqrt(v)}  # fmt: skip
    for t in (0.3, 0.5):
        sat = np.minimum(1.0, rho / (t * top)) ** 3
        for name, u in units.items():
            out[f"sat{t}-{name}"] = sat / u
        out[f"hard{t}-raw"] = (rho >= t * top).astype(float)
    out["cube-raw"] = rho**3
    for c in (0.1, 0.2):  # the saturated cube, and nothing below c of the best
        out[f"satcut{c}-raw"] = np.where(rho >= c * top, out["sat0.5-raw"], 0.0)
    out["sat0.2-raw"] = np.minimum(1.0, rho / (0.2 * top)) ** 3
    out["lin0.5-raw"] = np.minimum(1.0, rho / (0.5 * top))
    # A noise floor: most features far below the best (appended noise columns);
    # without one (rotated noise), every feature carries some signal: power 1.
    floor = np.mean(rho < 0.2 * top) >= 0.5
    out["adapt-raw"] = np.minimum(1.0, rho / (0.5 * top)) ** (3 if floor else 1)
    strong = (rho >= 0.5 * top) & np.isfinite(v)
    sd = np.sqrt(v[strong])
    mixed = sd.size > 1 and sd.max() > 100 * sd.min()
    out["mixed"] = out["sat0.5-pool"] if mixed else out["sat0.5-raw"]
    out["adapt-mixed"] = out["adapt-raw"] / (s if mixed else 1.0)
    return out


def rerank(X, cand, shared, w, k):
    """The library's rule: candidates sharing a leaf first, nearest first,
    completed by the nearest others; ``w = 0`` everywhere ranks by proximity."""
    a = w > 0
    Xa = X[:, a] * np.sqrt(w[a])
    out = np.empty((X.shape[0], k), dtype=np.int64)
    for lo in range(0, X.shape[0], 2000):
        c = cand[lo : lo + 2000]
        d = ((Xa[c] - Xa[lo : lo + 2000, None, :]) ** 2).sum(axis=2)
        order = np.lexsort((np.arange(c.shape[1])[None].repeat(c.shape[0], 0), d,
                            ~shared[lo : lo + 2000]), axis=1)[:, :k]  # fmt: skip
        out[lo : lo + 2000] = np.take_along_axis(c, order, axis=1)
    return out


def euclid(X: np.ndarray, k: int) -> np.ndarray:
    return NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(return_distance=False)[:, 1:]


def run_cell(cell, names, trees: int, n_jobs: int, per_neighbors=(PER_NEIGHBOR,)):
    X, k, score = cell["X"].astype(np.float32).astype(np.float64), cell["k"], cell["score"]
    ref = max(score(euclid(X, k)), score(euclid(zscore(X), k)))
    forest = gf.UnsupervisedForest(
        n_estimators=trees, distance="proximity", random_state=0, n_jobs=n_jobs
    ).fit(X)
    rho, s = relevance_stats(X, forest)
    n_eff = float(rho.sum() ** 2 / max((rho**2).sum(), 1e-300))
    base = {key: cell[key] for key in ("family", "half", "dataset", "noise", "chance")}
    base.update(euclid=ref, rho_max=float(rho.max()), rho_median=float(np.median(rho)),
                n_eff=n_eff, p=X.shape[1])  # fmt: skip
    rows = []
    if "library" in names:  # the library's own ranking at its defaults
        lib = gf.UnsupervisedForest(n_estimators=trees, random_state=0, n_jobs=n_jobs).fit(X)
        value = score(lib.kneighbors(n_neighbors=k, return_distance=False))
        rows.append({**base, "form": "library", "value": value})
        if names == ["library"]:
            return rows
    for per in per_neighbors:
        n_cand = min(per * (k + 1) - 1, X.shape[0] - 1)
        dist, cand = forest.kneighbors(n_neighbors=n_cand)
        shared = dist < 1.0
        rows.append({**base, "form": f"proximity/{per}", "value": score(cand[:, :k])})
        v = X.var(axis=0)
        for name, w in forms(rho, s, np.where(v > 0, v, np.inf)).items():
            if names and name not in names:
                continue
            value = score(rerank(X, cand, shared, w, k))
            rows.append({**base, "form": f"{name}/{per}", "value": value})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", default="selection", choices=["selection", "report"])
    parser.add_argument("--families", nargs="+", default=["sheet", "rotated", "real", "simulation"])
    parser.add_argument("--forms", nargs="*", default=[])
    parser.add_argument("--per-neighbor", nargs="+", type=int, default=[PER_NEIGHBOR])
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--out", default="ranking_form.csv")
    args = parser.parse_args()
    rows = []
    for family in args.families:
        half = "simulation" if family == "simulation" else args.half
        for cell in cells_of(family, half):
            got = run_cell(cell, args.forms, args.trees, args.n_jobs, args.per_neighbor)
            rows += got
            line = " ".join(f"{r['form']} {r['value'] / r['euclid']:.3f}" for r in got)
            print(f"{family:<10} {cell['dataset']:<14} {cell['noise']:<5} euclid "
                  f"{got[0]['euclid']:.3f} rho max {got[0]['rho_max']:.2f} med "
                  f"{got[0]['rho_median']:.2f} | {line}", flush=True)  # fmt: skip
            with open(args.out, "w", newline="") as fh:
                writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
