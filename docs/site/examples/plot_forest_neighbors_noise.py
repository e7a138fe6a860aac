"""
Forest neighbours under noise dimensions
========================================

A helix is a one-dimensional curve in three dimensions: the true distance
between two of its points is their difference in arc length. Appending
dimensions of pure noise hides it from Euclidean distance, whose neighbours
then fall to chance, while the neighbours of an unsupervised randomer forest
(:class:`~geoforest.UnsupervisedForest`, URerF) stay on the curve.

Geodesic precision@k (:func:`geoforest.metrics.geodesic_precision_recall`) is
the fraction of a point's ``k`` retrieved neighbours that are among its ``k``
nearest points by arc length, averaged over the points.
"""

# %%
# The data: 1,000 points on the helix, plus 0, 10 or 100 noise dimensions of
# variance 70 (the URerF paper's setting).
import matplotlib.pyplot as plt
import numpy as np
from sklearn.neighbors import NearestNeighbors

import geoforest as gf

X, arc_length = gf.datasets.make_helix(1000, random_state=0)
ks = np.arange(1, 51)
noise_dims = [0, 10, 100]

# %%
# For each noise level, fit a 100-tree forest and take every point's 50 forest
# neighbours (highest-proximity points ranked by the metric the forest
# learned, never an ``n x n`` matrix), beside
# the 50 Euclidean neighbours of the same points.
precision = {}
for d in noise_dims:
    Xn = gf.datasets.add_noise_dims(X, d, random_state=0)
    forest = gf.UnsupervisedForest(n_estimators=100, random_state=0).fit(Xn)
    _, ind_forest = forest.kneighbors(n_neighbors=50)
    ind_euclid = NearestNeighbors(n_neighbors=50).fit(Xn).kneighbors(return_distance=False)
    for name, ind in [("URerF", ind_forest), ("Euclidean", ind_euclid)]:
        res = gf.metrics.geodesic_precision_recall(ind, latent=arc_length, ks=ks)
        precision[name, d] = res.precision

chance = gf.metrics.chance_precision(len(X), 50)
print(f"{'noise dims':>10} {'URerF':>8} {'Euclidean':>10}   (precision@50; chance {chance:.3f})")
for d in noise_dims:
    print(f"{d:>10} {precision['URerF', d][-1]:>8.3f} {precision['Euclidean', d][-1]:>10.3f}")

# %%
# Precision against the number of neighbours retrieved: the forest's curves
# stay high as noise dimensions are added, the Euclidean ones collapse.
fig, ax = plt.subplots(figsize=(6, 4))
colors = dict(zip(noise_dims, ["tab:blue", "tab:orange", "tab:green"], strict=True))
for d in noise_dims:
    ax.plot(ks, precision["URerF", d], color=colors[d], label=f"URerF, {d} noise dims")
    ax.plot(
        ks,
        precision["Euclidean", d],
        color=colors[d],
        linestyle="--",
        label=f"Euclidean, {d} noise dims",
    )
ax.axhline(chance, color="grey", linewidth=0.8)
ax.set_xlabel("neighbours retrieved (k)")
ax.set_ylabel("geodesic precision@k")
ax.set_ylim(0, 1)
ax.legend(fontsize="small", ncol=2, loc="lower center")
fig.tight_layout()

# %%
# The forest's neighbours of one point, in the first three (signal)
# coordinates, with the last forest (100 noise dimensions): they follow the
# curve.  A point of the training data is its own nearest neighbour.
query = int(np.argmin(np.abs(arc_length - np.median(arc_length))))
_, ind = forest.kneighbors(Xn[[query]], n_neighbors=30)

fig = plt.figure(figsize=(5, 4))
ax = fig.add_subplot(projection="3d")
ax.scatter(*X.T, s=2, color="lightgrey")
ax.scatter(*X[ind[0]].T, s=12, color="tab:blue", label="30 forest neighbours")
ax.scatter(*X[query], s=60, color="tab:red", marker="*", label="query")
ax.legend(loc="upper left", fontsize="small")
ax.set_axis_off()
fig.tight_layout()
plt.show()
