"""Is there a density valley at the finest supported level?  A check on the cut, not the null.

    python studies/label_free_valleys.py [--seeds 3] [--n-jobs 2] [--cache DIR]

The label-free levels (``gf.graph.label_free_levels``) support a level ``K``
when its graph is more clustered than Gaussian references.  Three kinds of
data defeat that null, because a Gaussian of the same spread is *rounder*
than they are (``docs/results/label-free-levels.md``, rounds 5-7):

* long, thin or curved parts (the multidensity control's bands: 9, 9, 7
  for 4; the README's three-density example, 1,500 points: 9 for 3), whose
  graph a cut across the band splits as cheaply as a path;
* flat parts (uniform cubes: K = 2-3 for 1);
* a touching pair whose Gaussian is elongated and nearly cut itself.

What those false cuts share is that they pass through points as dense as
the parts they separate, where a real boundary passes through a density
*valley*.  The kNN radius ``r_i`` (distance to the ``k``-th distinct
neighbour in the clusterer's own geometry, ``geometry_.distinct_neighbors``)
measures density without any null.  For the ``K``-way partition of the
levels and each pair ``(a, b)`` of its parts:

* the *boundary* ``B``: points of ``a`` or ``b`` with a listed neighbour in
  the other (fewer than 3: the pair does not touch and is skipped);
* the *interior* ``I``: the other points of ``a`` and ``b`` (all of them
  when fewer than 3 remain);
* the *depth* ``median(log r over B) - median(log r over I)``: positive when
  the boundary is sparser than the parts.

The level's *valley* ``V_K`` is the smallest depth over touching pairs
(``+inf`` when no pair touches).  The candidate rules take the finest
supported level whose valley reaches a bar ``v``; ``v = -inf`` is today's
default.  ``v`` is judged on the selection half by leaving one set out, and
the controls (with uniform cubes and the README's three-density example)
are printed.  Every fit is ``ForestSpectralClustering()`` at its defaults,
once per data set and seed, cached.  The report half is never read here.
Public API only.
"""

from __future__ import annotations

import argparse
import importlib.util
import warnings
from pathlib import Path

import joblib
import numpy as np
from joblib import Parallel, delayed
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest_experiments.clustering_suite import NOISE_DIMS, SELECTION

_spec = importlib.util.spec_from_file_location(
    "label_free_strong_steps", Path(__file__).with_name("label_free_strong_steps.py")
)
strong = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(strong)

#: Data sets where a Gaussian null is too round: flat cubes, curved bands.
EXTRA = ("cube:3", "cube:5", "three-density")
BARS = (-np.inf, 0.0, 0.05, 0.1, 0.15, 0.2)


def data(name: str, seed: int):
    """The study's rows: the strong-steps panel and :data:`EXTRA`."""
    if name.startswith("cube"):
        d = int(name.split(":")[1])
        X = np.random.RandomState(seed).uniform(size=(600, d)) * 50.0 + 1e4
        return X, np.zeros(600, dtype=int)
    if name == "three-density":  # the README's LUND example (seed 0), and seeds 1-3
        return gf.datasets.make_multidensity_clusters(1500, n_clusters=3, random_state=seed)
    return strong.panel_data(name, seed)


def valley(labels: np.ndarray, ind: np.ndarray, log_r: np.ndarray) -> float:
    """The smallest boundary-minus-interior median ``log r`` over touching pairs of parts."""
    parts = np.unique(labels)
    listed = labels[ind]
    depths = []
    for i, a in enumerate(parts):
        for b in parts[i + 1 :]:
            pair = (labels == a) | (labels == b)
            across = np.where((labels == a)[:, None], listed == b, listed == a).any(axis=1)
            boundary = across & pair
            if boundary.sum() < 3:
                continue
            interior = pair & ~boundary
            if interior.sum() < 3:
                interior = pair
            depths.append(np.median(log_r[boundary]) - np.median(log_r[interior]))
    return float(min(depths)) if depths else np.inf


def one(name: str, seed: int, cache: Path) -> dict:
    path = cache / f"{name.replace(':', '_')}_{seed}.joblib"
    if path.exists():
        return joblib.load(path)
    warnings.simplefilter("ignore")
    X, y = data(name, seed)
    model = gf.ForestSpectralClustering(random_state=seed, n_jobs=1).fit(X)
    levels = model.levels_
    dist, ind = model.geometry_.distinct_neighbors(model.n_neighbors)
    radius = dist[:, -1]
    floor = radius[radius > 0].min() if np.any(radius > 0) else 1.0
    log_r = np.log(np.maximum(radius, floor))
    row = {
        "name": name,
        "seed": seed,
        "K": int(np.unique(y[y >= 0]).size),
        "n_clusters": int(levels.n_clusters),
        "n_components": int(levels.n_components),
        "supported": np.asarray(levels.supported, dtype=bool),
        "valley": {int(k): valley(lab, ind, log_r) for k, lab in levels.labels.items()},
        "ari": {
            1: 0.0,
            **{int(k): float(adjusted_rand_score(y, lab)) for k, lab in levels.labels.items()},
        },
    }
    joblib.dump(row, path)
    return row


def choose(row: dict, bar: float) -> int:
    """The finest supported level whose valley reaches ``bar`` (at least the components)."""
    ok = [
        k
        for k, v in row["valley"].items()
        if row["supported"][k - 1] and (v >= bar or bar == -np.inf)
    ]
    return max([1, row["n_components"], *ok])


def score(rows: list[dict], names, bar: float) -> tuple[float, float]:
    return strong.score_picks(rows, names, lambda r: choose(r, bar))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path("label_free_valleys_cache"))
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    noisy = tuple(f"{s}+{NOISE_DIMS}" for s in SELECTION)
    jobs = strong.panel_jobs(args.seeds) + [(n, s) for n in EXTRA for s in range(4)]
    rows = Parallel(n_jobs=args.n_jobs, verbose=5)(delayed(one)(n, s, args.cache) for n, s in jobs)
    same = all(choose(r, -np.inf) == r["n_clusters"] for r in rows)
    print(f"today's rule reproduces every fit: {same}")
    print(f"\n{'bar':>6s}  clean ARI |dK|   +100 ARI |dK|   blobs: K right (2-D / 5-D of 32)")
    for bar in BARS:
        c, n = score(rows, SELECTION, bar), score(rows, noisy, bar)
        panel = [r for r in rows if r["name"].startswith("blobs")]
        right = {
            d: sum(choose(r, bar) == r["K"] for r in panel if r["name"].split(":")[2] == str(d))
            for d in (2, 5)
        }
        cells = f"{c[0]:.3f} {c[1]:4.1f}    {n[0]:.3f} {n[1]:4.1f}"
        print(f"{bar:6.2f}  {cells}    {right[2]} / {right[5]}")
    print("\ncontrols, K^ per seed (bar: K^)")
    for name in (*strong.CONTROLS, *EXTRA):
        mine = sorted((r for r in rows if r["name"] == name), key=lambda r: r["seed"])
        cells = "  ".join(f"{bar:g}: {[choose(r, bar) for r in mine]}" for bar in BARS)
        print(f"  {name:19s} K={mine[0]['K']}  {cells}")
    print("\nper set whose K^ moves (K^ per seed at each bar; median ARI at each bar)")
    for name in (*SELECTION, *noisy):
        mine = sorted((r for r in rows if r["name"] == name), key=lambda r: r["seed"])
        ks = [[choose(r, bar) for r in mine] for bar in BARS]
        if any(k != ks[0] for k in ks[1:]):
            aris = [score(rows, [name], bar)[0] for bar in BARS]
            print(f"  {name:20s} K={mine[0]['K']:2d}  K^ {ks}  ARI {np.round(aris, 3).tolist()}")
    print("\nleave one set out: the bar chosen on the others (the smaller of clean, +100)")
    strong.leave_one_set_out(rows, BARS, score)


if __name__ == "__main__":
    main()
