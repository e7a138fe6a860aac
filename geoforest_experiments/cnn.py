"""The manifold forests paper's CNN baseline (optional: needs PyTorch).

The paper (Perry et al., Section 4.1) compares against "a Convolutional
Neural Network (CNN) built using PyTorch with two convolution layers, ReLU
activations, and maxpooling, followed by dropout and two densely connected
layers", with training "stopped early if the loss plateaued".  It gives no
widths, kernel sizes or optimiser; ours are stated in :class:`CNNClassifier`.

Install the CPU build of PyTorch that this machine carries with
``pip install -e ".[cnn]"`` (it pins ``torch==2.13.0``: an unpinned ``torch``
would download a multi-gigabyte CUDA build).  Without PyTorch the
``morf-simulations`` experiment simply leaves the CNN out.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["CNNClassifier", "torch_available"]


def torch_available() -> bool:
    """True when PyTorch can be imported (the ``cnn`` extra is installed)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _network(torch: Any, image_shape: tuple[int, ...], n_classes: int, width: int, dropout: float):
    """conv-ReLU-maxpool twice, dropout, dense-ReLU, dense (1-D or 2-D)."""
    nn = torch.nn
    if len(image_shape) == 1:
        conv, pool, size = nn.Conv1d, nn.MaxPool1d, image_shape[0]
        flat = 2 * width * (size // 4)
    else:
        conv, pool = nn.Conv2d, nn.MaxPool2d
        flat = 2 * width * (image_shape[0] // 4) * (image_shape[1] // 4)
    return nn.Sequential(
        conv(1, width, 3, padding=1),
        nn.ReLU(),
        pool(2),
        conv(width, 2 * width, 3, padding=1),
        nn.ReLU(),
        pool(2),
        nn.Flatten(),
        nn.Dropout(dropout),
        nn.Linear(flat, 64),
        nn.ReLU(),
        nn.Linear(64, n_classes),
    )


class CNNClassifier(ClassifierMixin, BaseEstimator):
    """A small CNN for 1-D signals or 2-D images, as in the paper's baseline.

    Two 3-wide convolutions (``width`` and ``2 * width`` channels, zero
    padding) with ReLU and 2-max-pooling, dropout, a 64-unit dense ReLU layer
    and a linear output; cross-entropy, Adam (learning rate ``lr``), mini-
    batches of ``batch_size``; training stops when the epoch loss has not
    improved by ``tol`` (relative) for ``patience`` epochs, or after
    ``max_epochs``.  One thread and ``random_state`` make it reproducible.

    Parameters
    ----------
    image_shape : tuple of int
        ``(L,)`` or ``(H, W)``; rows of ``X`` are these, flattened row-major.
    width : int, default=16
        Channels of the first convolution.
    dropout : float, default=0.25
    lr : float, default=1e-3
    batch_size : int, default=32
    max_epochs : int, default=100
    patience : int, default=10
    tol : float, default=1e-3
    random_state : int, default=0

    Attributes
    ----------
    classes_ : ndarray
    n_epochs_ : int
        Epochs run before stopping.
    """

    def __init__(
        self,
        image_shape: tuple[int, ...],
        *,
        width: int = 16,
        dropout: float = 0.25,
        lr: float = 1e-3,
        batch_size: int = 32,
        max_epochs: int = 100,
        patience: int = 10,
        tol: float = 1e-3,
        random_state: int = 0,
    ):
        self.image_shape = image_shape
        self.width = width
        self.dropout = dropout
        self.lr = lr
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.patience = patience
        self.tol = tol
        self.random_state = random_state

    def _tensor(self, torch: Any, X: np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32)).reshape(
            (X.shape[0], 1, *self.image_shape)
        )

    def fit(self, X, y):
        """Train on images ``X`` (flattened) with labels ``y``."""
        import torch

        X, y = validate_data(self, X, y, dtype=np.float32)
        if int(np.prod(self.image_shape)) != X.shape[1]:
            raise ValueError(f"image_shape {self.image_shape} does not match {X.shape[1]} features")
        self.classes_, codes = np.unique(y, return_inverse=True)
        torch.set_num_threads(1)
        gen = torch.Generator().manual_seed(int(self.random_state))
        torch.manual_seed(int(self.random_state))
        net = _network(torch, tuple(self.image_shape), len(self.classes_), self.width, self.dropout)
        opt = torch.optim.Adam(net.parameters(), lr=self.lr)
        loss_fn = torch.nn.CrossEntropyLoss()
        xt, yt = self._tensor(torch, X), torch.from_numpy(codes.astype(np.int64))
        best, stale, n = np.inf, 0, X.shape[0]
        net.train()
        self.n_epochs_ = 0
        for _ in range(self.max_epochs):
            self.n_epochs_ += 1
            perm = torch.randperm(n, generator=gen)
            total = 0.0
            for lo in range(0, n, self.batch_size):
                idx = perm[lo : lo + self.batch_size]
                opt.zero_grad()
                loss = loss_fn(net(xt[idx]), yt[idx])
                loss.backward()
                opt.step()
                total += loss.item() * idx.shape[0]
            total /= n
            if total < best * (1 - self.tol):
                best, stale = total, 0
            else:
                stale += 1
                if stale >= self.patience:
                    break
        net.eval()
        self.net_ = net
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Softmax class probabilities, columns in the order of ``classes_``."""
        import torch

        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float32, reset=False)
        out = []
        with torch.no_grad():
            for lo in range(0, X.shape[0], 4096):
                logits = self.net_(self._tensor(torch, X[lo : lo + 4096]))
                out.append(torch.softmax(logits, dim=1).numpy())
        return np.concatenate(out).astype(np.float64)

    def predict(self, X) -> np.ndarray:
        """The most probable class."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
