"""Cache every rpfCluster candidate of the paper's data sets, to compare label-free rules.

For each data set and seed: the rpf-kernel of ``ForestSpectralClustering``'s
default forest (``--trees`` trees), then every (beta_1, beta_2) of the paper's
beta_1 grid times the union of the model's beta_2 grid and the oracle's fine
grid, each clustered by the model's own candidate procedure
(``ForestSpectralClustering.cluster_candidate``: sharpen, spectral clustering
with the true K, cut-off points attached through the kernel).  Candidates are
computed on the model's selection subset when n > 1000, as ``fit`` does.

Writes one ``.npz`` per data set and seed (labels of every candidate, the
eigenvalues, the beta pairs, the true labels of the subset) into OUTDIR;
``studies/rpf_rule_eval.py`` then scores the rules.  ::

    python studies/rpf_rule_cache.py iris,wine,wdbc,heart /tmp/rules --seeds 10
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state

from geoforest import ForestSpectralClustering, RandomProjectionForest
from geoforest.cluster import RPF_SCALES, RPF_THRESHOLDS, sharpen_kernel
from geoforest.graph import spectral_eigs
from geoforest_experiments.rpf_cluster import ORACLE_SCALES, prepare

MAX_K = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets")
    parser.add_argument("out", type=Path)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trees", type=int, default=200)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    scales = sorted(set(RPF_SCALES) | set(ORACLE_SCALES))
    for name in args.datasets.split(","):
        X, y, K = prepare(name)
        for seed in range(args.seeds):
            path = args.out / f"{name}_t{args.trees}_s{seed}.npz"
            if path.exists():
                continue
            t0 = time.perf_counter()
            model = ForestSpectralClustering(
                K,
                forest=RandomProjectionForest(args.trees),
                random_state=seed,
                n_jobs=1,
                affinity="kernel",
            )
            # fits the forest and kernel (one candidate)
            model.set_params(threshold=0.0, scale=1.0, selection="eigengap").fit(X)
            S = model.kernel_
            n = S.shape[0]
            if n > model.max_selection_samples:
                m = model.max_selection_samples
                sub = np.sort(check_random_state(seed).choice(n, size=m, replace=False))
                S = S[sub][:, sub]
            else:
                sub = np.arange(n)
            pairs, labels, eigenvalues, spectra = [], [], [], []
            for b1 in RPF_THRESHOLDS:
                for b2 in scales:
                    # K + 1 eigenvalues: the eigengap after K
                    res = model.cluster_candidate(b1, b2, kernel=S, n_eigenvalues=K + 1)
                    pairs.append((b1, b2))
                    labels.append(res.labels)
                    ev = np.full(K + 1, np.nan)
                    ev[: min(K + 1, res.eigenvalues.shape[0])] = res.eigenvalues[: K + 1]
                    eigenvalues.append(ev)
                    A = sharpen_kernel(S, b1, b2)
                    spectra.append(spectral_eigs(A, min(MAX_K + 1, A.shape[0]), solver="dense")[0])
            np.savez_compressed(
                path,
                pairs=np.array(pairs),
                labels=np.array(labels),
                eigenvalues=np.array(eigenvalues),
                spectra=np.array(spectra),
                y=y[sub],
                K=K,
                default_grid=np.array([b2 in RPF_SCALES for _, b2 in pairs]),
            )
            print(f"{name} seed {seed}: {len(pairs)} candidates, {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
