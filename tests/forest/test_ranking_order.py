"""The ranking's stable order (``_stable_order``) is numpy's stable argsort."""

from __future__ import annotations

import numpy as np
import pytest

from geoforest.forest._ranking import _stable_order


@pytest.mark.parametrize("seed", range(3))
def test_stable_order_is_the_stable_argsort(seed):
    # Few distinct keys and many infinities (candidates sharing no leaf): ties
    # everywhere, which a stable sort keeps in position order.
    rng = np.random.default_rng(seed)
    for m in [0, 1, 2, 3, 7, 8, 31, 64, 200]:
        key = rng.integers(0, 5, size=m + 4).astype(np.float64)
        key[rng.random(m + 4) < 0.3] = np.inf
        order = np.full(m + 4, -1, dtype=np.int64)
        _stable_order(key, m, order)
        np.testing.assert_array_equal(order[:m], np.argsort(key[:m], kind="stable"))
        assert (order[m:] == -1).all()  # nothing past m is written
