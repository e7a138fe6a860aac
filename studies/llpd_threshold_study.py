"""The automatic denoising threshold of LLPD against the truth on LDLN data.

For ``make_ldln`` data sets (n, ambient dimension D, noise fraction, intrinsic
dimension), the LLPD to every point's 10th LLPD neighbour is thresholded by
:func:`geoforest.llpd.auto_noise_threshold` with a window of 1 step (the plain
largest jump) and with the default window (0.5 % of the points); the table
shows the fraction of cluster points kept and of noise points removed.
Run from the repository root (the 10^6 rows take a minute each)::

    python studies/llpd_threshold_study.py
"""

from __future__ import annotations

import numpy as np

from geoforest.datasets import make_ldln
from geoforest.llpd import LLPD, auto_noise_threshold

SETTINGS = [(2000, 10), (20000, 10), (2000, 5), (20000, 5), (100000, 5), (1000000, 5)]


def main() -> None:
    print(
        f"{'n':>8} {'D':>3} {'noise':>5} {'dim':>6}   window=1 kept/removed   default kept/removed"
    )
    for n, D in SETTINGS:
        noises = [0.0, 0.1, 0.2, 0.5, 0.8] if n <= 20000 else [0.0, 0.2]
        dims = ["mixed", 1, 2] if n <= 20000 else ["mixed"]
        for noise in noises:
            for dim in dims:
                X, y = make_ldln(n, ambient_dim=D, noise_fraction=noise, intrinsic_dim=dim,
                                 random_state=0)  # fmt: skip
                v = LLPD().fit(X).knn_distance(10)
                cells = []
                for window in (0.0, None):
                    kw = {} if window is None else {"window": window}
                    theta = auto_noise_threshold(v, **kw)
                    kept = np.mean(v[y >= 0] <= theta)
                    removed = np.mean(v[y < 0] > theta) if noise > 0 else float("nan")
                    cells.append(f"{kept:.4f}/{removed:.4f}")
                print(f"{n:>8} {D:>3} {noise:>5} {dim!s:>6}   {cells[0]:>20}   {cells[1]:>20}",
                      flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
