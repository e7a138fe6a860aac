"""The ``geoforest`` command line."""

from __future__ import annotations

import argparse
import os
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


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def n_jobs_arg(text: str) -> int:
    """An argparse type: threads, a positive integer or negative (-1: all cores), not 0."""
    value = _int(text)
    if value == 0:
        raise argparse.ArgumentTypeError(
            "must be a positive number of threads or negative (-1: all cores), got 0"
        )
    return value


def seed_arg(text: str) -> int:
    """An argparse type: a random seed in [0, MAX_SEED]."""
    value = _int(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, {MAX_SEED}], got {value}")
    return value


def fail(args: argparse.Namespace, message: str, code: int = 2, *, kind: str = "error") -> int:
    """Print a one-line message for the user (no usage, no traceback); the exit code."""
    print(f"geoforest {args.command}: {kind}: {message}", file=sys.stderr)
    return code


class OutputError(ValueError):
    """An output folder that cannot take a run's files (a one-line message for the user)."""


def check_output_folder(out: str | Path) -> Path:
    """Raise :class:`OutputError` unless ``out`` is, or can be made, a writable folder.

    ``out`` must be a writable directory, or missing below a writable directory
    (it is created later, by the caller). Nothing is created or changed, so a
    command can refuse a bad ``--out`` before any computation.

    Returns
    -------
    Path
        ``out`` as a path.
    """
    out = Path(out)
    if out.exists():
        if not out.is_dir():
            raise OutputError(f"output folder {out} is not a directory")
        if not os.access(out, os.W_OK | os.X_OK):
            raise OutputError(f"output folder {out} is not writable")
        return out
    parent = out.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"cannot create output folder {out}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"cannot create output folder {out}: {parent} is not writable")
    return out


#: The files ``geoforest demo`` writes into its ``--out`` folder.
DEMO_FILES = ("demo_helix.csv", "demo_helix.png")


def _demo(args: argparse.Namespace) -> int:
    """Noisy helix: URerF against Euclidean neighbours at growing noise."""
    try:  # before any computation
        out = check_output_folder(args.out)
    except OutputError as exc:
        return fail(args, str(exc))
    earlier = [out / name for name in DEMO_FILES if (out / name).exists()]
    if earlier and not args.overwrite:  # as `geoforest experiment` refuses
        return fail(
            args,
            f"{earlier[0]} holds an earlier demo run: replace it with --overwrite "
            "or choose another --out",
        )

    from sklearn.neighbors import NearestNeighbors

    from . import datasets, metrics
    from ._first_use import compile_seconds
    from ._progress import progress
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
    start, compiled = time.perf_counter(), compile_seconds()
    for d in progress(noise_dims, len(noise_dims), not args.no_progress, "noise levels"):
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
    compiled = compile_seconds() - compiled
    if compiled > 0:  # a cold numba cache: said, with what it cost
        print(f"(time = fit + kneighbors; the first row includes {compiled:.1f}s of numba")
        print(" compiling the kernels for their first use; later runs load them from disk)")
    else:
        print("(time = fit + kneighbors)")
    print(f"\ntotal {total:.1f}s")

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return fail(args, f"cannot create output folder {out}: {exc.strerror or exc}")
    table = out / DEMO_FILES[0]
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
            out / DEMO_FILES[1],
            k=k,
            chance=chance,
            title=f"Noisy helix (N={n_samples})",
        )
    except ImportError as exc:
        print(f"no figure: {exc}", file=sys.stderr)
        return 0
    print(f"wrote {png}")

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
    demo.add_argument(
        "--n-estimators",
        type=positive_int,
        default=None,
        help="trees (default 100; 20 with --quick)",
    )
    demo.add_argument(
        "--n-jobs", type=n_jobs_arg, default=-1, help="threads (default -1: all cores)"
    )
    demo.add_argument("--seed", type=seed_arg, default=0, help=f"random seed, 0 to {MAX_SEED}")
    demo.add_argument("--quick", action="store_true", help="small sizes, for smoke tests")
    demo.add_argument(
        "--overwrite", action="store_true", help="replace an earlier demo run in --out"
    )
    demo.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    demo.set_defaults(func=_demo)

    _add_plugin_commands(sub)
    return parser


#: The entry-point group of the subcommands other packages add to ``geoforest``. An
#: entry names a function ``add(subparsers)`` that adds one subcommand, with
#: ``set_defaults(func=...)``; the experiments package adds ``experiment`` this way.
COMMANDS_GROUP = "geoforest.commands"

#: Subcommands of packages installed apart from the library: name -> (help, install hint).
#: When one is not installed, the command prints the hint in one line and exits with 2.
OPTIONAL_COMMANDS: dict[str, tuple[str, str]] = {
    "experiment": (
        "reproduce one experiment of the papers",
        'the experiments are not installed: pip install "geoforest[experiments]"',
    ),
}


def command_plugins() -> list:
    """The entry points of :data:`COMMANDS_GROUP`, by name."""
    from importlib.metadata import entry_points

    return sorted(entry_points(group=COMMANDS_GROUP), key=lambda ep: ep.name)


def _add_plugin_commands(sub) -> None:
    """Add the subcommands of installed plug-ins; a one-line stand-in for missing ones.

    The library imports no plug-in by name: each comes from its entry point. An
    entry whose package cannot be imported counts as not installed; a name seen
    twice (two installs of one package) is added once.
    """
    added = {"demo"}
    for ep in command_plugins():
        if ep.name in added:
            continue
        try:
            add = ep.load()
        except ImportError:
            continue
        add(sub)
        added.add(ep.name)
    for name, (text, hint) in OPTIONAL_COMMANDS.items():
        if name not in added:
            stand_in = sub.add_parser(name, help=f"{text} (not installed)", add_help=False)
            stand_in.set_defaults(func=_not_installed(hint), any_arguments=True)


def _not_installed(hint: str):
    def not_installed(args: argparse.Namespace) -> int:
        return fail(args, hint)

    return not_installed


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``geoforest`` command."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and not getattr(args, "any_arguments", False):
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
