"""The ``geoforest`` command line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

#: Largest ``--seed``: NumPy seeds are below 2**32, and experiments add offsets to the seed.
MAX_SEED = 2**31 - 1


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None


def _positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _n_jobs(text: str) -> int:
    """An argparse type: threads, a positive integer or negative (-1: all cores), not 0."""
    value = _int(text)
    if value == 0:
        raise argparse.ArgumentTypeError(
            "must be a positive number of threads or negative (-1: all cores), got 0"
        )
    return value


def _seed(text: str) -> int:
    """An argparse type: a random seed in [0, MAX_SEED]."""
    value = _int(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, {MAX_SEED}], got {value}")
    return value


def _fail(args: argparse.Namespace, message: str, code: int = 2, *, kind: str = "error") -> int:
    """Print a one-line message for the user (no usage, no traceback); the exit code."""
    print(f"geoforest {args.command}: {kind}: {message}", file=sys.stderr)
    return code


def _demo(args: argparse.Namespace) -> int:
    """Noisy helix: URerF against Euclidean neighbours at growing noise."""
    from .experiments._runner import OutputError, check_output

    out = Path(args.out)
    try:  # before any computation
        check_output(out, "demo_helix", overwrite=True)
    except OutputError as exc:
        return _fail(args, str(exc))

    from sklearn.neighbors import NearestNeighbors
    from tqdm.auto import tqdm

    from . import datasets, metrics
    from .forest import UnsupervisedForest

    noise_dims = [0, 10, 100] if args.quick else [0, 10, 100, 1000]
    n_samples = 300 if args.quick else 1000
    if args.n_estimators is not None:
        n_trees = args.n_estimators
    else:
        n_trees = 20 if args.quick else 100
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

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _fail(args, f"cannot create output folder {out}: {exc.strerror or exc}")
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
    """Run one experiment of the papers (CSV, PNG, JSON record, summary table).

    The files appear in ``--out`` only when the run is complete (see
    ``geoforest.experiments._runner.run_staged``); a bad ``--out`` or an
    existing run without ``--overwrite`` is a one-line error before computing.
    """
    from .experiments import ExperimentConfig
    from .experiments._runner import OutputError, run_staged

    out = Path(args.out) if args.out else Path("geoforest-results") / args.name
    config = ExperimentConfig(
        out=out,
        quick=args.quick,
        n_jobs=args.n_jobs,
        seed=args.seed,
        show_progress=not args.no_progress,
    )
    try:
        run_staged(args.name, config, overwrite=args.overwrite)
    except OutputError as exc:
        return _fail(args, str(exc))
    except KeyboardInterrupt:
        return _fail(args, f"no partial run left in {out}", code=130, kind="interrupted")
    return 0


_EXPERIMENT_OUTPUT_HELP = """
Output: the run writes its files into a hidden folder OUT/.NAME.partial-* and
moves them into OUT only when it has finished, the JSON record NAME.json last
(NAME.json present = a complete run, describing the files beside it). An
interrupted or failed run leaves OUT as it was. A complete run of NAME already
in OUT is refused unless --overwrite is given; then all files of the old run
are removed before the new ones are moved in. A bad --out (not a directory,
not writable) is an error before anything is computed.
"""


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
    demo.add_argument(
        "--n-estimators",
        type=_positive_int,
        default=None,
        help="trees (default 100; 20 with --quick)",
    )
    demo.add_argument("--n-jobs", type=_n_jobs, default=-1, help="threads (default -1: all cores)")
    demo.add_argument("--seed", type=_seed, default=0, help=f"random seed, 0 to {MAX_SEED}")
    demo.add_argument("--quick", action="store_true", help="small sizes, for smoke tests")
    demo.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    demo.set_defaults(func=_demo)

    from .experiments import EXPERIMENTS

    exp = sub.add_parser(
        "experiment",
        help="reproduce one experiment of the papers (CSV + PNG)",
        description="Reproduce one experiment of the papers. Experiments:\n"
        + "\n".join(f"  {name:<16} {text}" for name, (_, text) in EXPERIMENTS.items()),
        epilog=_EXPERIMENT_OUTPUT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    exp.add_argument("name", choices=list(EXPERIMENTS), metavar="NAME", help="experiment name")
    exp.add_argument("--quick", action="store_true", help="small sizes, few trees (< 2 min)")
    exp.add_argument(
        "--out",
        default=None,
        help="output folder (default: geoforest-results/NAME); files appear there only "
        "when the run is complete",
    )
    exp.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a complete earlier run of NAME in --out (all its files)",
    )
    exp.add_argument("--n-jobs", type=_n_jobs, default=-1, help="threads (default -1: all cores)")
    exp.add_argument("--seed", type=_seed, default=0, help=f"random seed, 0 to {MAX_SEED}")
    exp.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    exp.set_defaults(func=_experiment)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``geoforest`` command."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
