"""The ``geoforest`` command line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path


def _demo(args: argparse.Namespace) -> int:
    """Noisy helix: URerF against Euclidean neighbours at growing noise."""
    from sklearn.neighbors import NearestNeighbors
    from tqdm.auto import tqdm

    from . import datasets, metrics
    from .forest import UnsupervisedForest

    noise_dims = [0, 10, 100] if args.quick else [0, 10, 100, 1000]
    n_samples = 300 if args.quick else 1000
    n_trees = 20 if args.quick else args.n_estimators
    k = min(50, n_samples // 10)
    X0, arc = datasets.make_helix(n_samples, random_state=args.seed)
    rows = []
    start = time.perf_counter()
    for d in tqdm(noise_dims, desc="noise levels", disable=args.no_progress):
        X = datasets.add_noise_dims(X0, d, random_state=args.seed + 1)
        t0 = time.perf_counter()
        forest = UnsupervisedForest(
            n_estimators=n_trees, n_jobs=args.n_jobs, random_state=args.seed
        ).fit(X)
        ind_f = forest.kneighbors(n_neighbors=k, return_distance=False)
        seconds = time.perf_counter() - t0
        ind_e = (
            NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X, return_distance=False)[:, 1:]
        )
        p_f = metrics.geodesic_precision_recall(ind_f, latent=arc, ks=[k]).precision[0]
        p_e = metrics.geodesic_precision_recall(ind_e, latent=arc, ks=[k]).precision[0]
        rows.append((d, p_f, p_e, seconds))
    total = time.perf_counter() - start
    chance = metrics.chance_precision(n_samples, k)

    print(f"\nNoisy helix, N={n_samples}, {n_trees} trees, noise N(0, 70) per extra dimension")
    print(f"geodesic precision@{k} (chance {chance:.3f})\n")
    print(f"{'noise dims':>10}  {'URerF':>7}  {'Euclidean':>9}  {'URerF time':>10}")
    for d, p_f, p_e, s in rows:
        print(f"{d:>10}  {p_f:>7.3f}  {p_e:>9.3f}  {s:>9.1f}s")
    print("(time = fit + kneighbors; the first row includes numba compilation on a cold cache)")
    print(f"\ntotal {total:.1f}s")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = out / "demo_helix.csv"
    with table.open("w") as fh:
        fh.write("noise_dims,method,precision_at_k,k,n_samples,n_estimators\n")
        for d, p_f, p_e, _ in rows:
            fh.write(f"{d},URerF,{p_f:.6f},{k},{n_samples},{n_trees}\n")
            fh.write(f"{d},Euclidean,{p_e:.6f},{k},{n_samples},{n_trees}\n")
    print(f"wrote {table}")
    try:
        from .plotting import plot_precision_vs_noise
    except ImportError:  # pragma: no cover - plotting is an extra
        return 0
    try:
        png = plot_precision_vs_noise(
            noise_dims,
            {"URerF": [r[1] for r in rows], "Euclidean": [r[2] for r in rows]},
            out / "demo_helix.png",
            k=k,
            chance=chance,
            title=f"Noisy helix (N={n_samples})",
        )
    except ImportError as exc:
        print(f"no figure: {exc}", file=sys.stderr)
        return 0
    print(f"wrote {png}")

    return 0


def _experiment(args: argparse.Namespace) -> int:
    """Run one experiment of the papers (CSV, PNG, JSON record, summary table)."""
    from .experiments import ExperimentConfig, run_experiment

    out = Path(args.out) if args.out else Path("geoforest-results") / args.name
    config = ExperimentConfig(
        out=out,
        quick=args.quick,
        n_jobs=args.n_jobs,
        seed=args.seed,
        show_progress=not args.no_progress,
    )
    run_experiment(args.name, config)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``geoforest`` command."""
    parser = argparse.ArgumentParser(
        prog="geoforest", description="Learned, data-dependent distances."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo",
        help="noisy helix: URerF vs Euclidean neighbours (table + figure)",
        description=(
            "Fit URerF on a helix (N=1000) with 0, 10, 100 and 1000 noise dimensions and "
            "compare its geodesic precision@50 with Euclidean neighbours."
        ),
    )
    demo.add_argument("--out", default="geoforest-demo", help="output folder (CSV and PNG)")
    demo.add_argument("--n-estimators", type=int, default=100, help="trees (default 100)")
    demo.add_argument("--n-jobs", type=int, default=-1, help="threads (default: all cores)")
    demo.add_argument("--seed", type=int, default=0, help="random seed")
    demo.add_argument("--quick", action="store_true", help="small sizes, for smoke tests")
    demo.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    demo.set_defaults(func=_demo)

    from .experiments import EXPERIMENTS

    exp = sub.add_parser(
        "experiment",
        help="reproduce one experiment of the papers (CSV + PNG)",
        description="Reproduce one experiment of the papers. Experiments:\n"
        + "\n".join(f"  {name:<16} {text}" for name, (_, text) in EXPERIMENTS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    exp.add_argument("name", choices=list(EXPERIMENTS), metavar="NAME", help="experiment name")
    exp.add_argument("--quick", action="store_true", help="small sizes, few trees (< 2 min)")
    exp.add_argument("--out", default=None, help="output folder (default: geoforest-results/NAME)")
    exp.add_argument("--n-jobs", type=int, default=-1, help="threads (default: all cores)")
    exp.add_argument("--seed", type=int, default=0, help="random seed")
    exp.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    exp.set_defaults(func=_experiment)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``geoforest`` command."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
