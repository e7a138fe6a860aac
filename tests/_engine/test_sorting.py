"""The engine's sorts against numpy."""

import numpy as np
import pytest

from geoforest._engine.sorting import (
    BUCKET_MIN,
    _distribute,
    bucket_sort,
    quicksort_scratch,
    sort_values,
)


def _inputs():
    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 3, 15, 16, 17, 100, BUCKET_MIN - 1, BUCKET_MIN, 5000):
        yield rng.normal(size=n)
        yield rng.integers(-3, 4, size=n).astype(float)  # heavy ties, negatives, zeros
        yield np.sort(rng.normal(size=n))[::-1].copy()  # reversed
        yield np.r_[rng.normal(size=n // 2) * 1e-300, rng.normal(size=n - n // 2) * 1e300]
        yield np.full(n, 2.5)


@pytest.mark.parametrize("which", ["quicksort", "bucket", "dispatch"])
def test_sorts_match_numpy(which):
    for z in _inputs():
        n = z.shape[0]
        a = np.r_[z, np.full(4, 9.0)]  # sentinel tail must stay untouched
        keys = np.empty(max(n, 1), dtype=np.int64)
        tmp = np.empty(max(n, 1))
        if which == "quicksort":
            quicksort_scratch(a, n, tmp, keys)
        elif which == "bucket":
            bucket_sort(a, n, tmp, keys)
        else:
            sort_values(a, n, keys, tmp)
        np.testing.assert_array_equal(a[:n], np.sort(z))
        np.testing.assert_array_equal(a[n:], 9.0)


def test_bucket_sort_orders_signed_zero_as_ties():
    a = np.array([0.0, -0.0, -1.0, 1.0, -0.0])
    bucket_sort(a, 5, np.empty(5), np.empty(5, np.int64))
    assert a[0] == -1.0 and a[-1] == 1.0 and np.all(a[1:4] == 0.0)


@pytest.mark.parametrize(
    "kind", ["normal", "cauchy", "outlier", "two scales", "ties", "huge range", "one value"]
)
@pytest.mark.parametrize("n", [2, 33, 600, 5000, 40000])
def test_bucket_sort_matches_numpy_and_keeps_every_bit(kind, n):
    """Skewed data takes the crowded-bucket and fallback paths; bits are only moved."""
    rng = np.random.default_rng(n)
    z = {
        "normal": rng.normal(size=n),
        "cauchy": rng.standard_cauchy(n),
        "outlier": np.r_[rng.normal(size=n - 1), 1e12],
        "two scales": np.r_[rng.normal(size=n // 2) * 1e-9, rng.normal(size=n - n // 2)],
        "ties": np.round(rng.normal(size=n), 1),
        "huge range": np.r_[rng.normal(size=n - 2), -1.7e308, 1.7e308],  # hi - lo overflows
        "one value": np.full(n, 3.0),
    }[kind]
    a = np.r_[z, np.full(3, 7.0)]
    bucket_sort(a, n, np.empty(n), np.empty(n, np.int64))
    np.testing.assert_array_equal(a[:n], np.sort(z))
    np.testing.assert_array_equal(np.sort(a[:n].view(np.int64)), np.sort(z.view(np.int64)))
    np.testing.assert_array_equal(a[n:], 7.0)


def test_distribute_makes_ordered_buckets():
    """Every value of a bucket is <= every value of the next, sizes add up."""
    rng = np.random.default_rng(3)
    for z in (rng.normal(size=3000), rng.standard_cauchy(3000), np.round(rng.normal(size=3000))):
        a = z.copy()
        start = _distribute(a, a.shape[0], np.empty(a.shape[0]))
        assert start[0] == 0 and start[-1] == a.shape[0] and np.all(np.diff(start) >= 0)
        assert start.shape[0] - 1 == a.shape[0] // 8
        np.testing.assert_array_equal(np.sort(a), np.sort(z))
        bounds = [
            (a[s:e].min(), a[s:e].max())
            for s, e in zip(start[:-1], start[1:], strict=True)
            if e > s
        ]
        assert all(hi <= lo for (_, hi), (lo, _) in zip(bounds[:-1], bounds[1:], strict=True))
    assert _distribute(np.full(50, 1.0), 50, np.empty(50)).shape[0] == 0


def _hard_inputs(rng, n):
    yield "normal", rng.normal(size=n)
    yield "ties", np.round(rng.normal(size=n), 1)
    yield "few levels", rng.integers(0, 3, size=n).astype(float)
    yield "sorted", np.sort(rng.normal(size=n))
    yield "reverse", np.sort(rng.normal(size=n))[::-1].copy()
    yield "all equal", np.full(n, -1.25)
    yield "signed zeros", rng.choice([0.0, -0.0, 1.0, -1.0], size=n)
    mag = 10.0 ** rng.uniform(-300, 300, size=n)
    yield "magnitudes", np.where(rng.random(n) < 0.5, -mag, mag)
    yield "organ pipe", np.r_[np.arange(n // 2), np.arange(n - n // 2)[::-1]].astype(float)
    yield "sawtooth", (np.arange(n) % 17).astype(float)


def test_sort_values_matches_numpy_on_random_sizes():
    rng = np.random.default_rng(1)
    sizes = np.r_[np.arange(0, 70), rng.integers(70, 6001, size=40), 6000]
    for n in sizes:
        for kind, z in _hard_inputs(rng, int(n)):
            a = np.r_[z, np.full(3, 7.0)]
            keys = np.empty(n, dtype=np.int64)  # exactly n: the scratch bound
            tmp = np.empty(n)
            sort_values(a, n, keys, tmp)
            np.testing.assert_array_equal(a[:n], np.sort(z), err_msg=f"{kind}, n={n}")
            # Same bit patterns (no -0.0 turned into 0.0), only reordered.
            np.testing.assert_array_equal(
                np.sort(a[:n].view(np.uint64)), np.sort(z.view(np.uint64)), err_msg=kind
            )
            np.testing.assert_array_equal(a[n:], 7.0)


def test_leaf_networks_every_size():
    from geoforest._engine.sorting import _leaf
    from geoforest._engine.sorting_networks import network16

    rng = np.random.default_rng(2)
    for m in range(2, 33):
        for z in (rng.normal(size=m), rng.integers(0, 3, size=m).astype(float)):
            a = np.r_[-5.0, z, 5.0]
            _leaf(a, 1, m)
            np.testing.assert_array_equal(a, np.r_[-5.0, np.sort(z), 5.0])
    # 0-1 principle: the 16-input network sorts every 0/1 sequence.
    bits = (np.arange(1 << 16)[:, None] >> np.arange(16)) & 1
    for row in bits[::7]:
        a = row.astype(float)
        network16(a, 0, 16)
        assert np.all(np.diff(a) >= 0)


def test_heapsort_fallback():
    from geoforest._engine.sorting import _heapsort

    rng = np.random.default_rng(3)
    for n in (2, 3, 31, 1000):
        z = np.round(rng.normal(size=n), 1)
        a = np.r_[9.0, z, -9.0]
        _heapsort(a, 1, n + 1)
        np.testing.assert_array_equal(a, np.r_[9.0, np.sort(z), -9.0])


def _pair_inputs(rng, n):
    yield from _hard_inputs(rng, n)
    yield "binary", rng.integers(0, 2, size=n).astype(float)
    yield "20 levels", rng.integers(0, 20, size=n) * 0.37
    # Values equal above the bits that carry the positions: the insertion pass sorts them.
    yield "one ulp apart", 1.0 + rng.integers(0, max(n, 1), size=n) * 2.0**-52
    yield (
        "near ties, both signs",
        rng.choice([-1.0, 1.0], size=n) * (1.0 + rng.integers(0, 50, size=n) * 2.0**-52),
    )
    yield "distinct in the low bits only", 1.0 + np.arange(n)[::-1] * 2.0**-52
    yield "subnormals", rng.choice([0.0, -0.0, 5e-324, -5e-324, 1e-310, -1e-310], size=n)


def _check_pairs(kind, n, z, seed):
    from geoforest._engine.sorting import sort_pairs

    rng = np.random.default_rng(seed)
    labels = rng.permutation(3 * n + 7)[:n].astype(np.int64) - n  # arbitrary, negatives too
    a = np.r_[z, np.full(3, 7.0)]  # the tails must stay untouched
    idx = np.r_[labels, np.full(3, -9)].astype(np.int64)
    sort_pairs(a, idx, n)
    msg = f"{kind}, n={n}"
    expect = z[np.argsort(z, kind="stable")]
    np.testing.assert_array_equal(a[:n], expect, err_msg=msg)
    # idx is the same permutation as the values: every value went with its label.
    where = {int(lab): i for i, lab in enumerate(labels)}
    src = np.array([where[int(lab)] for lab in idx[:n]], dtype=np.int64)
    np.testing.assert_array_equal(np.sort(src), np.arange(n), err_msg=msg)
    np.testing.assert_array_equal(a[:n].view(np.uint64), z[src].view(np.uint64), err_msg=msg)
    np.testing.assert_array_equal(a[n:], 7.0)
    np.testing.assert_array_equal(idx[n:], -9)


def test_sort_pairs_matches_stable_argsort_on_random_sizes():
    rng = np.random.default_rng(4)
    sizes = np.r_[np.arange(0, 80), rng.integers(80, 5001, size=30), 2048, 4095, 4096]
    for n in sizes:
        for kind, z in _pair_inputs(rng, int(n)):
            _check_pairs(kind, int(n), z, int(n))


def test_sort_pairs_worst_cases():
    from geoforest._engine.sorting import _finish_pairs, _heapsort_pairs

    rng = np.random.default_rng(5)
    # Every value in one group of keys, reversed: the insertion pass gives up
    # after 8 n moves and the heapsort finishes.
    n = 4000
    z = 1.0 + np.arange(n)[::-1] * 2.0**-52
    _check_pairs("one group, reversed", n, z, 0)
    for n in (2, 3, 33, 500):
        z = np.round(rng.normal(size=n), 1)
        a = z.copy()
        idx = np.arange(n, dtype=np.int64)
        _heapsort_pairs(a, idx, 0, n)
        np.testing.assert_array_equal(a, np.sort(z))
        np.testing.assert_array_equal(z[idx], a)
        a = z.copy()
        idx = np.arange(n, dtype=np.int64)
        _finish_pairs(a, idx, n)
        np.testing.assert_array_equal(a, np.sort(z))
        np.testing.assert_array_equal(z[idx], a)
    # Many levels, each repeated: group after group is split off.
    for n in (1000, 20000):
        _check_pairs("sawtooth", n, (np.arange(n) % 300).astype(float), 1)
