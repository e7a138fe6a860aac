"""The engine's sorts against numpy."""

import numpy as np
import pytest

from geoforest._engine.sorting import (
    RADIX_MIN,
    radix_sort_inplace,
    sort_inplace,
    sort_values,
)


def _inputs():
    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 3, 15, 16, 17, 100, RADIX_MIN - 1, RADIX_MIN, 5000):
        yield rng.normal(size=n)
        yield rng.integers(-3, 4, size=n).astype(float)  # heavy ties, negatives, zeros
        yield np.sort(rng.normal(size=n))[::-1].copy()  # reversed
        yield np.r_[rng.normal(size=n // 2) * 1e-300, rng.normal(size=n - n // 2) * 1e300]
        yield np.full(n, 2.5)


@pytest.mark.parametrize("which", ["introsort", "radix", "dispatch"])
def test_sorts_match_numpy(which):
    for z in _inputs():
        n = z.shape[0]
        a = np.r_[z, np.full(4, 9.0)]  # sentinel tail must stay untouched
        keys = np.empty(max(n, 1), dtype=np.uint64)
        tmp = np.empty(max(n, 1), dtype=np.uint64)
        if which == "introsort":
            sort_inplace(a, n)
        elif which == "radix":
            if n == 0:
                continue
            radix_sort_inplace(a, n, keys, tmp)
        else:
            sort_values(a, n, keys, tmp)
        np.testing.assert_array_equal(a[:n], np.sort(z))
        np.testing.assert_array_equal(a[n:], 9.0)


def test_radix_orders_signed_zero_as_ties():
    a = np.array([0.0, -0.0, -1.0, 1.0, -0.0])
    radix_sort_inplace(a, 5, np.empty(5, np.uint64), np.empty(5, np.uint64))
    assert a[0] == -1.0 and a[-1] == 1.0 and np.all(a[1:4] == 0.0)
