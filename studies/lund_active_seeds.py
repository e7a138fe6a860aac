"""LUND active learning on more synthetic images: impact, F_t and random queries by seed.

The ``lund`` experiment's active-learning protocol
(:func:`geoforest_experiments.lund.active_curves`: queries in rounds of 2, random =
mean of 10 draws) on the 50 x 50 synthetic image (4 classes, 4 regions, noise 0.8,
K = 4 given) for any range of image seeds, with or without the spatial options.  Prints
the mean accuracy per rule and the number of seeds where the impact rule beats random.
Used in docs/results/lund.md::

    python studies/lund_active_seeds.py --first 5 --last 24            # spatial graph + vote
    python studies/lund_active_seeds.py --first 100 --last 104         # selection seeds
    python studies/lund_active_seeds.py --first 0 --last 4 --plain     # no spatial options
"""

from __future__ import annotations

import argparse

import numpy as np

from geoforest import datasets
from geoforest.diffusion import LUND
from geoforest_experiments.lund import IMAGE_VARIANTS, active_curves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", type=int, default=5, help="first image seed")
    parser.add_argument("--last", type=int, default=24, help="last image seed (included)")
    parser.add_argument("--plain", action="store_true", help="LUND without spatial options")
    parser.add_argument("--queries", type=int, nargs="+", default=[0, 10, 20])
    args = parser.parse_args()
    shape = (50, 50)
    extra = {} if args.plain else {"image_shape": shape,
                                   **IMAGE_VARIANTS["LUND + spatial graph + vote"]}  # fmt: skip
    curves: dict[str, list] = {}
    for seed in range(args.first, args.last + 1):
        X, y = datasets.make_hyperspectral_image(shape, n_regions=4, noise=0.8, random_state=seed)
        model = LUND(n_clusters=4, random_state=seed, **extra).fit(X)
        for name, accs in active_curves(model, y, args.queries, 10, seed).items():
            curves.setdefault(name, []).append(accs)
        print(seed, {k: np.round(v[-1], 3).tolist() for k, v in curves.items()}, flush=True)
    print("queries", args.queries)
    for name, accs in curves.items():
        print(f"{name:<7}", " ".join(f"{a:.3f}" for a in np.mean(accs, axis=0)))
    impact, random = np.array(curves["active"]), np.array(curves["random"])
    for j, q in enumerate(args.queries):
        if q:
            wins = int(np.sum(impact[:, j] > random[:, j]))
            losses = int(np.sum(impact[:, j] < random[:, j]))
            print(f"q = {q}: impact > random in {wins}, < in {losses} of {len(impact)} seeds")


if __name__ == "__main__":
    main()
