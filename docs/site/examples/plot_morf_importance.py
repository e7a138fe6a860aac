"""
Feature importance maps of manifold forests (MORF) on MNIST 3 vs 5
==================================================================

A manifold forest (:class:`~geoforest.ManifoldForestClassifier`, MORF)
splits images on sums of contiguous pixel patches instead of on single pixels
or on scattered pixel combinations (:class:`~geoforest.ObliqueForestClassifier`,
SPORF). Its ``feature_importances_`` count how often each pixel takes part in
a chosen split (``importance="count"``, the manifold forests paper's
measure), so the map shows *where* in the image the forest looks.

The data are 100 threes and 100 fives of the MNIST digits shipped with
geoforest (:func:`geoforest.datasets.load_mnist35`).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

import geoforest as gf

X, y = gf.datasets.load_mnist35(n_per_class=100, random_state=0, return_X_y=True)
print(X.shape, np.bincount(y)[[3, 5]])

# %%
# Fit both classifiers with 200 trees. MORF needs the image shape; its patches
# are 1 to 4 pixels on each side by default.
morf = gf.ManifoldForestClassifier(image_shape=(28, 28), n_estimators=200, random_state=0)
sporf = gf.ObliqueForestClassifier(n_estimators=200, random_state=0)
morf.fit(X, y)
sporf.fit(X, y)

# %%
# Held-out accuracy on 400 other images of the shipped set.
Xall, yall = gf.datasets.load_mnist35(return_X_y=True)
train_rows = {row.tobytes() for row in X}
test = np.array([row.tobytes() not in train_rows for row in Xall])
rng = np.random.RandomState(1)
test_idx = rng.choice(np.flatnonzero(test), 400, replace=False)
for name, clf in [("MORF", morf), ("SPORF", sporf)]:
    print(f"{name}: test accuracy {clf.score(Xall[test_idx], yall[test_idx]):.3f}")

# %%
# Where do the forests look? The share of each map on background pixels
# (zero in at least 99 % of the 1,000 shipped images):
background = (Xall == 0).mean(axis=0) >= 0.99
for name, clf in [("MORF", morf), ("SPORF", sporf)]:
    share = clf.feature_importances_[background].sum() / clf.feature_importances_.sum()
    print(f"{name}: {share:.3f} of the importance on {background.sum()} background pixels")

# %%
# The importance maps beside the mean difference between the two digits.
# MORF's map is smooth and peaks where the mean images differ most (the
# 5's left stroke, the 3's middle cusp); SPORF's is grainier and spreads
# over the background, since each of its projections mixes scattered pixels.
diff = X[y == 5].mean(axis=0) - X[y == 3].mean(axis=0)
panels = [
    ("mean 5 minus mean 3", diff, "RdBu_r"),
    ("MORF importance", morf.feature_importances_, "viridis"),
    ("SPORF importance", sporf.feature_importances_, "viridis"),
]
fig, axes = plt.subplots(1, 3, figsize=(9, 3.3))
for ax, (title, values, cmap) in zip(axes, panels, strict=True):
    image = values.reshape(28, 28)
    if cmap == "RdBu_r":
        lim = np.abs(image).max()
        ax.imshow(image, cmap=cmap, vmin=-lim, vmax=lim)
    else:
        ax.imshow(image, cmap=cmap)
    ax.set_title(title, fontsize="medium")
    ax.set_axis_off()
fig.tight_layout()
plt.show()
