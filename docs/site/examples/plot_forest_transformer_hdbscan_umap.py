"""
Forest neighbours in a pipeline: HDBSCAN and UMAP
=================================================

:class:`~geoforest.ForestNeighborsTransformer` follows the contract of
scikit-learn's ``KNeighborsTransformer`` with the forest's distance (its
highest-proximity points ranked by the metric it learned):
``fit_transform(X)`` returns a sparse, symmetric graph of each point's
forest neighbours (the point itself included at distance 0),
which estimators taking ``metric="precomputed"`` accept as it is, inside a
:class:`~sklearn.pipeline.Pipeline`. Here HDBSCAN and UMAP on two moons
buried in noise dimensions.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.cluster import HDBSCAN
from sklearn.datasets import make_moons
from sklearn.metrics import adjusted_rand_score
from sklearn.pipeline import make_pipeline

import geoforest as gf

X, y = make_moons(1000, noise=0.05, random_state=0)
X_noisy = gf.datasets.add_noise_dims(X, 20, variance=0.1, random_state=0)

# %%
# HDBSCAN
# -------
# The same HDBSCAN settings on the forest graph (a pipeline) and on the
# Euclidean distances of the 22 coordinates. ``min_samples`` must not exceed
# the neighbours the graph holds per point.
pipe = make_pipeline(
    gf.ForestNeighborsTransformer(n_neighbors=15, random_state=0),
    HDBSCAN(min_cluster_size=25, min_samples=10, metric="precomputed", copy=True),
)
labels_forest = pipe.fit_predict(X_noisy)
labels_euclid = HDBSCAN(min_cluster_size=25, min_samples=10, copy=True).fit_predict(X_noisy)

fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
for ax, (name, labels) in zip(
    axes, [("forest graph", labels_forest), ("Euclidean", labels_euclid)], strict=True
):
    n_clusters = len(set(labels) - {-1})
    ari = adjusted_rand_score(y, labels)
    print(
        f"HDBSCAN, {name}: {n_clusters} clusters, {np.mean(labels == -1):.1%} noise, ARI {ari:.3f}"
    )
    ax.scatter(X[:, 0], X[:, 1], c=labels, s=4, cmap="tab10", vmin=-1, vmax=8)
    ax.set_title(f"HDBSCAN, {name}: ARI {ari:.2f}", fontsize="medium")
    ax.set_xticks([])
    ax.set_yticks([])
fig.tight_layout()

# %%
# UMAP
# ----
# umap-learn takes the same graph with ``metric="precomputed"``: for each row it
# keeps the ``n_neighbors`` smallest stored distances (the point itself
# among them) as the point's neighbours, so the graph must hold at least that
# many per row; the transformer stores ``n_neighbors + 1``. In the embedding
# the two moons never share a piece, though each falls into several pieces.
import warnings  # noqa: E402

import umap  # noqa: E402  (umap-learn, from the "docs" or "experiments" extra)

# umap-learn says that inverse_transform needs features; not used here.
warnings.filterwarnings("ignore", message="using precomputed metric", category=UserWarning)
graph = gf.ForestNeighborsTransformer(n_neighbors=30, random_state=0).fit_transform(X_noisy)
reducer = umap.UMAP(n_neighbors=30, metric="precomputed", random_state=0, n_jobs=1)
embedding = reducer.fit_transform(graph)

fig, ax = plt.subplots(figsize=(4.5, 3.5))
ax.scatter(embedding[:, 0], embedding[:, 1], c=y, s=4, cmap="coolwarm")
ax.set_title("UMAP of the forest graph (colour: moon)", fontsize="medium")
ax.set_xticks([])
ax.set_yticks([])
fig.tight_layout()
plt.show()
