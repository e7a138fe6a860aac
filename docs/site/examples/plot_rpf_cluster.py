"""
rpfCluster: spectral clustering of a random projection forest kernel
====================================================================

A random projection forest (:class:`~geoforest.RandomProjectionForest`) cuts
the data at random thresholds of random directions; the fraction of trees in
which two points share a leaf is the *rpf-kernel*. It is high between points
that are close *through the data* and follows the data's shape.
:class:`~geoforest.ForestSpectralClustering` (rpfCluster) thresholds and
sharpens that kernel and clusters it spectrally; without ``n_clusters`` it
also estimates the number of clusters and shows the evidence.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_iris, make_circles, make_moons
from sklearn.metrics import adjusted_rand_score

import geoforest as gf

# %%
# The rpf-kernel
# --------------
# On iris, with the points sorted by species, the kernel is nearly block
# diagonal: the setosas share leaves only with each other, the two other
# species overlap a little. It is a sparse matrix: pairs that never share a
# leaf are not stored (on 150 points most pairs share one at least once; on
# large data sets a small fraction does).
iris = load_iris()
order = np.argsort(iris.target, kind="stable")
X_iris, y_iris = iris.data[order], iris.target[order]
rpf = gf.RandomProjectionForest(n_estimators=200, random_state=0).fit(X_iris)
K = rpf.proximity()
print(f"kernel: {K.shape}, {K.nnz / K.shape[0] ** 2:.0%} of the entries stored")

fig, ax = plt.subplots(figsize=(4, 3.6))
im = ax.imshow(K.toarray(), cmap="viridis")
ax.set_title("rpf-kernel of iris (sorted by species)", fontsize="medium")
fig.colorbar(im, ax=ax, shrink=0.8)
fig.tight_layout()

# %%
# Non-convex clusters, number of clusters given
# ---------------------------------------------
# Two moons and two circles: k-means splits each shape in halves, rpfCluster
# follows the shapes.
data = {
    "moons": make_moons(600, noise=0.06, random_state=0),
    "circles": make_circles(600, noise=0.04, factor=0.45, random_state=0),
}
fig, axes = plt.subplots(2, 2, figsize=(7, 6.4))
for row, (name, (X, y)) in zip(axes, data.items(), strict=True):
    rpf_labels = gf.ForestSpectralClustering(
        n_clusters=2, random_state=0, affinity="kernel"
    ).fit_predict(X)
    km_labels = KMeans(n_clusters=2, n_init=10, random_state=0).fit_predict(X)
    for ax, (method, labels) in zip(
        row, [("rpfCluster", rpf_labels), ("k-means", km_labels)], strict=True
    ):
        ax.scatter(X[:, 0], X[:, 1], c=labels, s=6, cmap="coolwarm")
        ax.set_title(
            f"{name}: {method}, ARI {adjusted_rand_score(y, labels):.2f}", fontsize="medium"
        )
        ax.set_xticks([])
        ax.set_yticks([])
fig.tight_layout()

# %%
# Without the number of clusters
# ------------------------------
# With ``n_clusters=None`` (the default) rpfCluster chooses the threshold,
# the scale and ``K`` together by the largest relative spectral gap, and
# ``n_clusters_scores_`` holds the best gap of every ``K`` (the entry of
# ``K = 1`` holds the bar a gap must reach, 2). A
# :class:`~geoforest.graph.LabelFreeChoiceWarning` says when the answer is
# ``K = 1`` or a close call. On iris the estimate is the three species; on
# the moons it splits each moon in two (``K = 4``): read the scores before
# trusting an estimate (see :doc:`/guide/choosing-k`).
fig, axes = plt.subplots(1, 2, figsize=(8, 3))
for ax, (name, X, y) in zip(
    axes, [("iris", X_iris, y_iris), ("moons", *data["moons"])], strict=True
):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", gf.graph.LabelFreeChoiceWarning)
        model = gf.ForestSpectralClustering(random_state=0, affinity="kernel").fit(X)
    acc = gf.metrics.clustering_accuracy(y, model.labels_)
    print(
        f"{name}: K = {model.n_clusters_} (true {len(np.unique(y))}), accuracy {acc:.3f}, "
        f"beta_1 = {model.threshold_}, beta_2 = {model.scale_}"
    )
    for w in caught:
        print("   warning:", w.message)
    scores = model.n_clusters_scores_
    ks = np.arange(1, len(scores) + 1)
    ax.bar(ks, np.nan_to_num(scores), color="tab:blue")
    ax.bar(model.n_clusters_, scores[model.n_clusters_ - 1], color="tab:red")
    ax.set_xticks(ks)
    ax.set_xlabel("K")
    ax.set_ylabel("relative gap")
    ax.set_title(f"{name}: K = {model.n_clusters_} chosen", fontsize="medium")
fig.tight_layout()
plt.show()
