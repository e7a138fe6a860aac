"""K by BIC of a Gaussian mixture in the rpf-kernel's spectral embedding (refused).

    python studies/forest_embedding_gmm.py [--data iris,wdbc,...] [--dims 5,10]

The candidate: embed the points with the leading eigenvectors of the
normalised forest kernel (200-tree random projection forest, no sharpening)
and let a full-covariance Gaussian mixture choose K = 1..15 by BIC, the way
UMAP + HDBSCAN chooses K in an embedding.  Run on the clustering suite's
selection half and controls only, seeds 0 and 1; each line gives K^ and ARI
for the raw embedding (first, constant eigenvector dropped) and for its
row-normalised form.  Public API only.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.manifold import spectral_embedding
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture

import geoforest as gf
from geoforest_experiments.clustering_suite import CONTROLS, SELECTION, load_suite_data


def gmm_bic(Z: np.ndarray, seed: int, max_k: int = 15) -> tuple[int, np.ndarray]:
    """K with the smallest BIC, and its labels."""
    best = None
    for k in range(1, max_k + 1):
        gmm = GaussianMixture(k, n_init=2, random_state=seed, reg_covar=1e-6).fit(Z)
        bic = gmm.bic(Z)
        if best is None or bic < best[0]:
            best = (bic, k, gmm.predict(Z))
    return best[1], best[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=",".join(SELECTION + CONTROLS))
    parser.add_argument("--dims", default="5,10")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    for name in args.data.split(","):
        X, y = load_suite_data(name)[:2]
        k_true = len(np.unique(y[y >= 0]))
        for seed in (0, 1):
            forest = gf.RandomProjectionForest(n_estimators=200, random_state=seed).fit(X)
            S = forest.proximity()
            S = ((S + S.T) / 2).toarray()  # dense: n <= 1000 here
            cells = []
            for d in (int(v) for v in args.dims.split(",")):
                E = spectral_embedding(S, n_components=d, drop_first=False, random_state=seed)
                for tag, Z in (("", E[:, 1:]), ("n", E / np.linalg.norm(E, axis=1, keepdims=True))):
                    k, labels = gmm_bic(Z, seed)
                    cells.append(f"d={d}{tag}: K={k} ari={adjusted_rand_score(y, labels):.2f}")
            print(name, k_true, seed, " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
