"""``geoforest experiment NAME``: the subcommand that runs one experiment of the papers.

The ``geoforest`` command (:mod:`geoforest.cli`) adds it through the
``geoforest.commands`` entry point of ``pyproject.toml``: this package uses the
library, never the other way round: it takes the command line's argument types
and one-line failures from ``geoforest.cli`` (which loads plug-ins only through
their entry points, so the imports stay one-way), and answers mistakes as the
``demo`` subcommand does (argparse errors for bad numbers, one line and exit 2
for the rest).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from geoforest.cli import MAX_SEED, OutputError, fail, n_jobs_arg, seed_arg

from . import EXPERIMENTS, ExperimentConfig
from ._runner import MissingExtraError, Terminated, run_staged

_EXPERIMENT_OUTPUT_HELP = """
Output: the run writes its files into a hidden folder OUT/.NAME.partial-* and
moves them into OUT only when it has finished, the JSON record STEM.json last
(STEM: NAME with _ for -, as in every file name of the run, e.g. noise_sweep.json
beside noise_sweep.csv; STEM.json present = a complete run, describing the files
beside it). An interrupted (Ctrl-C, SIGTERM) or failed run leaves OUT as it was.
A complete run of NAME already in OUT is refused unless --overwrite is given;
then all files of the old run are removed before the new ones are moved in. A
bad --out (not a directory, not writable) is an error before anything is computed.
"""


def run_command(args: argparse.Namespace) -> int:
    """Run one experiment of the papers (CSV, PNG, JSON record, summary table).

    The files appear in ``--out`` only when the run is complete (see
    :func:`geoforest_experiments._runner.run_staged`); a bad ``--out``, an
    existing run without ``--overwrite`` or a missing optional package
    (:class:`~geoforest_experiments._runner.MissingExtraError`) is a one-line
    error before computing.
    """
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
    except (OutputError, MissingExtraError) as exc:
        return fail(args, str(exc))
    except Terminated as exc:  # SIGTERM, handled as Ctrl-C
        return fail(args, f"no partial run left in {out}", code=128 + exc.signum, kind="terminated")
    except KeyboardInterrupt:
        return fail(args, f"no partial run left in {out}", code=130, kind="interrupted")
    return 0


def add_experiment_command(sub) -> None:
    """Add the ``experiment`` subcommand to the ``geoforest`` command's subparsers.

    The entry point of the ``geoforest.commands`` group (``pyproject.toml``).
    """
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
    exp.add_argument(
        "--n-jobs", type=n_jobs_arg, default=-1, help="threads (default -1: all cores)"
    )
    exp.add_argument("--seed", type=seed_arg, default=0, help=f"random seed, 0 to {MAX_SEED}")
    exp.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    exp.set_defaults(func=run_command)
