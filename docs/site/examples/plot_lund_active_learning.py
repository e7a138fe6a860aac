"""
LUND: clusters from diffusion modes, and active learning
========================================================

:class:`~geoforest.LUND` (learning by unsupervised nonlinear diffusion)
finds the modes of the data: points that are dense and far, in diffusion
distance, from any denser point. The number of clusters comes from the gap
in the sorted mode scores; every other point, in decreasing density, takes
the label of its nearest denser point. When a few labels can be asked for,
:meth:`~geoforest.LUND.query` picks the points whose answer can change the
most labels, and :meth:`~geoforest.LUND.relabel` propagates the answers
without refitting.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

import geoforest as gf

# %%
# Clusters of different densities
# --------------------------------
# Three curved clusters, the first four times as dense as the last, with 10 %
# uniform background (:func:`geoforest.datasets.make_multidensity_clusters`).
# LUND estimates ``K`` and says when the call was close.
X, y = gf.datasets.make_multidensity_clusters(1000, n_clusters=3, random_state=0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", gf.graph.LabelFreeChoiceWarning)
    lund = gf.LUND(random_state=0).fit(X)
for w in caught:
    print("warning:", w.message)
core = y >= 0
acc = gf.metrics.clustering_accuracy(y[core], lund.labels_[core])
print(
    f"K = {lund.n_clusters_} (true 3), diffusion time t = {lund.t_:g}, "
    f"accuracy on the cluster points {acc:.3f}"
)

fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
axes[0].scatter(X[:, 0], X[:, 1], c=lund.labels_, s=4, cmap="tab10", vmin=0, vmax=9)
axes[0].scatter(*X[lund.modes_].T, marker="*", s=150, color="black", label="modes")
axes[0].legend(loc="lower right", fontsize="small")
axes[0].set_title("LUND clusters", fontsize="medium")
axes[0].set_aspect("equal")
ks = np.arange(1, len(lund.n_clusters_scores_) + 1)
axes[1].bar(ks, lund.n_clusters_scores_)
axes[1].set_xticks(ks)
axes[1].set_xlabel("K")
axes[1].set_ylabel("mode score ratio $S_K / S_{K+1}$")
axes[1].set_title("evidence behind K", fontsize="medium")
fig.tight_layout()

# %%
# Active learning on a synthetic hyperspectral image
# --------------------------------------------------
# Four classes of 50 x 50 pixels, 30 noisy spectral bands
# (:func:`geoforest.datasets.make_hyperspectral_image`). LUND with the
# spatial options (neighbours searched within 5 pixels, then a 5 x 5 majority
# vote) and ``K = 4`` given. Then labels are asked two at a time: the points
# :meth:`~geoforest.LUND.query` picks (``strategy="impact"``, the default)
# against as many points drawn at random (mean of 10 draws), on five images.
queries = np.arange(0, 21, 2)


def impact_curve(model, y):
    y_known = np.full(y.size, -1)
    accuracy = [gf.metrics.clustering_accuracy(y, model.labels_)]
    for _ in queries[1:]:
        picked = model.query(2, y=y_known)
        y_known[picked] = y[picked]
        accuracy.append(gf.metrics.clustering_accuracy(y, model.relabel(y_known)))
    return np.array(accuracy), y_known


def random_curve(model, y, rng, draws=10):
    accuracy = []
    for q in queries:
        runs = []
        for _ in range(draws):
            y_known = np.full(y.size, -1)
            picked = rng.choice(y.size, q, replace=False)
            y_known[picked] = y[picked]
            runs.append(gf.metrics.clustering_accuracy(y, model.relabel(y_known)))
        accuracy.append(np.mean(runs))
    return np.array(accuracy)


curves = {"impact queries": [], "random queries": []}
for seed in range(5):
    X_img, y_img = gf.datasets.make_hyperspectral_image(
        (50, 50), n_regions=4, noise=0.8, random_state=seed
    )
    model = gf.LUND(
        n_clusters=4,
        image_shape=(50, 50),
        spatial_radius=5,
        spatial_vote_radius=2,
        random_state=seed,
    ).fit(X_img)
    unsupervised = model.labels_.copy()
    impact, y_known = impact_curve(model, y_img)
    curves["impact queries"].append(impact)
    curves["random queries"].append(random_curve(model, y_img, np.random.RandomState(seed)))
    if seed == 1:  # keep one image for the maps below
        shown = (y_img, unsupervised, model.labels_.copy(), y_known)

for name, runs in curves.items():
    print(f"{name:>15}: " + " ".join(f"{a:.3f}" for a in np.mean(runs, axis=0)))

fig, ax = plt.subplots(figsize=(5.5, 3.5))
for name, runs in curves.items():
    ax.plot(queries, np.mean(runs, axis=0), marker="o", label=name)
ax.set_xlabel("labels asked")
ax.set_ylabel("accuracy (mean of 5 images)")
ax.legend()
fig.tight_layout()

# %%
# One of the images: the true classes, LUND without labels, and LUND after 20
# labels asked by :meth:`~geoforest.LUND.query` (white crosses).
y_img, unsupervised, after, y_known = shown
fig, axes = plt.subplots(1, 3, figsize=(9, 3.2))
titles = [
    "classes",
    f"LUND, no labels ({gf.metrics.clustering_accuracy(y_img, unsupervised):.3f})",
    f"after 20 queries ({gf.metrics.clustering_accuracy(y_img, after):.3f})",
]
for ax, labels, title in zip(axes, [y_img, unsupervised, after], titles, strict=True):
    ax.imshow(labels.reshape(50, 50), cmap="tab10", vmin=0, vmax=9)
    ax.set_title(title, fontsize="medium")
    ax.set_axis_off()
rows, cols = np.unravel_index(np.flatnonzero(y_known >= 0), (50, 50))
axes[2].scatter(cols, rows, marker="x", color="white", s=25)
fig.tight_layout()
plt.show()
