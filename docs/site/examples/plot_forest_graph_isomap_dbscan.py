"""
Forest graphs in scikit-learn: Isomap and DBSCAN
================================================

Any scikit-learn estimator that accepts ``metric="precomputed"`` with a
sparse neighbours graph can work in the forest's learned distance instead of
the Euclidean one: pass it ``forest.kneighbors_graph(mode="distance")``, a
sparse matrix of each point's forest neighbours at the forest's distance
(its highest-proximity points ranked by the metric it learned). Here,
Isomap on a helix and DBSCAN on two moons, both buried in noise dimensions.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import spearmanr
from sklearn.cluster import DBSCAN
from sklearn.datasets import make_moons
from sklearn.manifold import Isomap
from sklearn.metrics import adjusted_rand_score
from sklearn.neighbors import NearestNeighbors

import geoforest as gf

# %%
# Isomap
# ------
# The helix with 100 noise dimensions of variance 70. Isomap unrolls the
# curve into one coordinate. Its Euclidean neighbours are mostly chosen by the
# noise (geodesic precision@50 about 0.10 against a chance level of 0.05, see
# :ref:`sphx_glr_auto_examples_plot_forest_neighbors_noise.py`); its forest
# neighbours follow the curve. The rank correlation of the coordinate with
# the true arc length measures the unrolling.
#
# scikit-learn counts each point as its own neighbour in a precomputed graph
# and, when fitting on it, drops one entry per row. The forest's graph does
# not hold the points themselves, so ask it for one neighbour more than
# Isomap uses.
X, arc_length = gf.datasets.make_helix(1000, random_state=0)
X_noisy = gf.datasets.add_noise_dims(X, 100, random_state=0)

forest = gf.UnsupervisedForest(n_estimators=100, random_state=0).fit(X_noisy)
graph = forest.kneighbors_graph(n_neighbors=16, mode="distance")
coord_forest = Isomap(n_neighbors=15, n_components=1, metric="precomputed").fit_transform(graph)
coord_euclid = Isomap(n_neighbors=15, n_components=1).fit_transform(X_noisy)

fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharey=True)
for ax, (name, coord) in zip(
    axes, [("forest graph", coord_forest), ("Euclidean", coord_euclid)], strict=True
):
    rho = abs(spearmanr(coord[:, 0], arc_length)[0])
    print(f"Isomap, {name}: |Spearman| with arc length {rho:.3f}")
    ax.scatter(arc_length, coord[:, 0], s=3)
    ax.set_xlabel("true arc length")
    ax.set_title(f"Isomap, {name} (|rho| = {rho:.2f})", fontsize="medium")
axes[0].set_ylabel("Isomap coordinate")
fig.tight_layout()

# %%
# DBSCAN
# ------
# Two moons (1,000 points) with 20 noise dimensions of variance 0.1. DBSCAN
# needs a radius ``eps``; the same rule is used for both distances: the 95th
# percentile of the points' distance to their 10th neighbour (so that most
# points are core points), with ``min_samples=10``. The forest graph holds
# each point's 20 nearest forest neighbours; pairs not in it count as farther
# than ``eps``.
X2, y2 = make_moons(1000, noise=0.05, random_state=0)
X2_noisy = gf.datasets.add_noise_dims(X2, 20, variance=0.1, random_state=0)

forest2 = gf.UnsupervisedForest(n_estimators=100, random_state=0).fit(X2_noisy)
graph2 = forest2.kneighbors_graph(n_neighbors=20, mode="distance")
d10_forest = forest2.kneighbors(n_neighbors=10)[0][:, -1]
labels_forest = DBSCAN(
    eps=np.quantile(d10_forest, 0.95), min_samples=10, metric="precomputed"
).fit_predict(graph2)

d10_euclid = NearestNeighbors(n_neighbors=10).fit(X2_noisy).kneighbors()[0][:, -1]
labels_euclid = DBSCAN(eps=np.quantile(d10_euclid, 0.95), min_samples=10).fit_predict(X2_noisy)

fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
for ax, (name, labels) in zip(
    axes, [("forest graph", labels_forest), ("Euclidean", labels_euclid)], strict=True
):
    n_clusters = len(set(labels) - {-1})
    ari = adjusted_rand_score(y2, labels)
    print(
        f"DBSCAN, {name}: {n_clusters} clusters, {np.mean(labels == -1):.1%} noise, ARI {ari:.3f}"
    )
    ax.scatter(X2[:, 0], X2[:, 1], c=labels, s=4, cmap="tab10", vmin=-1, vmax=8)
    ax.set_title(f"DBSCAN, {name}: {n_clusters} cluster(s), ARI {ari:.2f}", fontsize="medium")
    ax.set_xticks([])
    ax.set_yticks([])
fig.tight_layout()

# %%
# The first two (signal) coordinates are shown; DBSCAN saw all 22. Its result
# depends on ``eps`` in either distance; the same sweep over the percentile
# for both:
for q in [0.8, 0.9, 0.95, 0.99]:
    lf = DBSCAN(eps=np.quantile(d10_forest, q), min_samples=10, metric="precomputed").fit_predict(
        graph2
    )
    le = DBSCAN(eps=np.quantile(d10_euclid, q), min_samples=10).fit_predict(X2_noisy)
    print(
        f"percentile {q:.0%}: forest {len(set(lf) - {-1})} clusters, "
        f"ARI {adjusted_rand_score(y2, lf):.3f}; Euclidean {len(set(le) - {-1})} clusters, "
        f"ARI {adjusted_rand_score(y2, le):.3f}"
    )
plt.show()
