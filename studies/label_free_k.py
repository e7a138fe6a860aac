"""The study behind the label-free K defaults (issue 19): old rules against new, on the
clustering suite's *selection* half and its controls only.

    python studies/label_free_k.py [--seeds 5] [--n-jobs 2]

Prints, per data set, K^ per seed and the median ARI of

* rpfCluster with ``selection="unfragmented"`` (the rule before: eigengap per
  candidate, consensus over the scales) and ``selection="relgap"`` (the new
  default with K estimated: relative spectral gap over scales and K);
* LLPD-SC and LUND at their defaults (LLPD-SC's denoising now falls back to
  two log-populations; LUND unchanged), for the record;

and the medians of |K^ - K| and ARI over the selection half.  The report half is
never read here.  Uses only public API.  About 4 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from joblib import Parallel, delayed

import geoforest as gf
from geoforest_experiments.clustering_suite import CONTROLS, SELECTION, load_suite_data, score

VARIANTS = {
    "rpf/unfragmented": lambda s: gf.ForestSpectralClustering(
        selection="unfragmented", random_state=s, n_jobs=1, affinity="kernel"
    ),
    "rpf/relgap": lambda s: gf.ForestSpectralClustering(
        selection="relgap", random_state=s, n_jobs=1, affinity="kernel"
    ),
    "LLPD-SC": lambda s: gf.LLPDSpectralClustering(random_state=s),
    "LUND": lambda s: gf.LUND(random_state=s),
}


def one(name: str, variant: str, seed: int) -> dict:
    X, y, _ = load_suite_data(name, max_n=1000, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = VARIANTS[variant](seed).fit(X)
    return {"dataset": name, "variant": variant, "seed": seed,
            **score(y, np.asarray(model.labels_), int(model.n_clusters_))}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    names = SELECTION + CONTROLS
    jobs = [(d, v, s) for d in names for v in VARIANTS for s in range(args.seeds)]
    rows = Parallel(n_jobs=args.n_jobs)(delayed(one)(*job) for job in jobs)
    for variant in VARIANTS:
        print(f"\n{variant}")
        for name in names:
            mine = [r for r in rows if r["dataset"] == name and r["variant"] == variant]
            ks = [int(r["k_hat"]) for r in mine]
            print(f"  {name:16s} K^ {ks}  ARI {np.median([r['ari'] for r in mine]):.3f}")
        sel = [
            [r for r in rows if r["dataset"] == n and r["variant"] == variant] for n in SELECTION
        ]
        dk = np.median([np.median([r["abs_k_err"] for r in rr]) for rr in sel])
        ari = np.median([np.median([r["ari"] for r in rr]) for rr in sel])
        print(f"  selection half: median |K^ - K| {dk:.1f}, median ARI {ari:.3f}")


if __name__ == "__main__":
    main()
