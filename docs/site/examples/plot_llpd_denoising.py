"""
LLPD: denoising and spectral clustering with an estimated K
===========================================================

The longest-leg path distance (LLPD) between two points is the smallest
possible longest hop of a path between them through the data. Inside a
cluster every hop is short, so points of one cluster are close however long
the cluster is; a background point far from everything keeps a large LLPD to
its neighbours. :class:`~geoforest.LLPD` computes it exactly from the
Euclidean minimum spanning tree, :meth:`~geoforest.LLPD.denoise` removes the
background, and :class:`~geoforest.LLPDSpectralClustering` clusters what is
left and estimates the number of clusters.

The data (:func:`geoforest.datasets.make_ldln`): a segment, a square, a
circle and a sphere in random orientations in three dimensions, plus 20 %
uniform background noise.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.neighbors import NearestNeighbors

import geoforest as gf

X, y = gf.datasets.make_ldln(2000, n_clusters=4, ambient_dim=3, noise_fraction=0.2, random_state=0)
print(X.shape, "background points:", int((y == -1).sum()))

# %%
# Denoising
# ---------
# Each point's LLPD to its 10th LLPD neighbour (``knn_distance``, ``O(n)`` on
# the dendrogram), sorted, beside the Euclidean distance to the 10th
# neighbour. The sorted LLPD values rise steeply from the cluster points to
# the background points: over a window of 0.5 % of the points they grow by
# more than 2x, and the automatic threshold
# (:func:`geoforest.llpd.auto_noise_threshold`) sits at the largest step in
# that window. The Euclidean curve has no such step.
llpd = gf.LLPD().fit(X)
rho_10 = llpd.knn_distance(10)
kept, threshold = llpd.denoise(k_nse=10, return_threshold=True)
euclid_10 = NearestNeighbors(n_neighbors=10).fit(X).kneighbors()[0][:, -1]

removed_noise = np.mean(~kept[y == -1])
removed_cluster = np.mean(~kept[y >= 0])
print(
    f"threshold {threshold:.3f}: {removed_noise:.1%} of the background removed, "
    f"{removed_cluster:.1%} of the cluster points"
)

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(np.sort(rho_10), label="LLPD to the 10th neighbour")
ax.plot(np.sort(euclid_10), label="Euclidean distance to the 10th neighbour")
ax.axhline(threshold, color="tab:red", linestyle=":", label="automatic threshold")
ax.set_yscale("log")
ax.set_xlabel("points, sorted")
ax.legend(fontsize="small")
fig.tight_layout()

# %%
# LLPD spectral clustering
# ------------------------
# :class:`~geoforest.LLPDSpectralClustering` runs the same denoising, refits
# LLPD on the kept points, scans kernel scales ``sigma`` taken from the
# dendrogram and picks the ``(sigma, K)`` with the largest eigengap of the
# LLPD kernel ``exp(-rho^2 / sigma^2)``; removed points get the label -1.
model = gf.LLPDSpectralClustering(random_state=0).fit(X)
core = (y >= 0) & model.kept_
print(
    f"K = {model.n_clusters_}, sigma = {model.sigma_:.3f}, accuracy on the kept cluster "
    f"points {gf.metrics.clustering_accuracy(y[core], model.labels_[core]):.3f}"
)
print("eigenvalues at that scale:", np.round(model.eigenvalues_[:6], 3))

fig = plt.figure(figsize=(9, 4))
ax = fig.add_subplot(1, 2, 1, projection="3d")
noise = model.labels_ == -1
ax.scatter(*X[noise].T, s=2, color="lightgrey", label="removed")
ax.scatter(*X[~noise].T, s=3, c=model.labels_[~noise], cmap="tab10", vmin=0, vmax=9)
ax.set_title("clusters (grey: removed as noise)", fontsize="medium")
ax.set_axis_off()

ax = fig.add_subplot(1, 2, 2)
ks = np.arange(1, len(model.n_clusters_scores_) + 1)
ax.bar(ks, np.nan_to_num(model.n_clusters_scores_))
ax.set_xticks(ks)
ax.set_xlabel("K")
ax.set_ylabel("largest eigengap over the scales")
ax.set_title(f"K = {model.n_clusters_} chosen", fontsize="medium")
fig.tight_layout()
plt.show()
