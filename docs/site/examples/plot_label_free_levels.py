"""
Choosing K without labels: the finest level the graph supports
===============================================================

Without ``n_clusters``, :class:`~geoforest.ForestSpectralClustering` scores
every level ``K`` of its neighbour graph and keeps the finest one that two
tests support (:func:`geoforest.graph.label_free_levels`):

* the relative spectral gap ``mu_(K+1) / mu_K`` of the normalised Laplacian
  reaches 1.3: the spectrum steps up after ``K``;
* the excess over Gaussian references, ``log(mu_K(reference) / mu_K)``,
  reaches 0.5: data drawn from one Gaussian with the same mean and covariance,
  run through the same forest and graph, show no such step.

Here one group sits far from three that touch. The largest gap (the rule
before) sees only the far group, ``K = 2``; the finest supported level is
``K = 4``, and the coarser supported levels are the hierarchy above it.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import adjusted_rand_score

import geoforest as gf

rng = np.random.RandomState(0)
centres = np.array([[0.0, 0.0], [3.0, 0.0], [1.5, 2.6], [14.0, 1.0]])
y = np.repeat(np.arange(4), 250)
X = centres[y] + rng.normal(scale=0.8, size=(y.size, 2))

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model = gf.ForestSpectralClustering(random_state=0).fit(X)
levels = model.levels_
supported = np.flatnonzero(levels.supported) + 1
largest_gap = int(np.nanargmax(levels.gaps)) + 1
print(f"K chosen: {model.n_clusters_} (ARI {adjusted_rand_score(y, model.labels_):.2f})")
print(f"supported levels: {supported.tolist()}; the largest gap is at K = {largest_gap}")
for w in caught:
    print("warning:", w.message)

# %%
# The evidence of every level
# ---------------------------
# ``n_clusters_scores_`` holds the relative gaps and ``reference_excess_`` the
# excess; a level is supported where both reach their bars (dashed) and its
# partition has no cluster under ``max(5, 2 % of n)`` points.
ks = np.arange(1, levels.gaps.size + 1)
fig, axes = plt.subplots(1, 2, figsize=(8, 3))
for ax, values, bar, title in [
    (axes[0], levels.gaps, gf.graph.LEVEL_MIN_GAP, "relative gap mu(K+1)/mu(K)"),
    (axes[1], levels.excess, gf.graph.MIN_EXCESS, "excess over Gaussian references"),
]:
    colours = np.where(levels.supported, "tab:blue", "tab:gray")
    ax.bar(ks, np.nan_to_num(values), color=colours)
    ax.axhline(bar, ls="--", color="k", lw=1)
    ax.set_xlabel("K")
    ax.set_title(title, fontsize=9)
axes[0].set_yscale("log")
fig.tight_layout()

# %%
# The hierarchy
# -------------
# ``levels_.labels`` holds the spectral partition of every point at every
# level. The supported levels, coarse to fine:
fig, axes = plt.subplots(1, len(supported), figsize=(3 * len(supported), 3))
for ax, k in zip(np.atleast_1d(axes), supported, strict=True):
    ax.scatter(X[:, 0], X[:, 1], c=levels.labels[k], s=4, cmap="tab10")
    ax.set_title(f"K = {k}" + (" (chosen)" if k == model.n_clusters_ else ""), fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
fig.tight_layout()
plt.show()
