"""Borrowed views (no reference counting) and the kernels that use them.

A view is the array's data under numba's rules minus the ``MemInfo``; what
must hold is that it reads and writes the same memory, passes tuples'
scalars through, refuses what it cannot make safe, and that no view escapes
``build_tree``: every array it returns must own its memory (a view, boxed,
has no base and would dangle once the kernel's arrays are freed).
"""

from typing import NamedTuple

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from geoforest._engine.borrow import borrowed, keep_alive
from geoforest._engine.builder import Tree
from geoforest._engine.splits import FASTBIC, GINI, SQUARED_ERROR

from .test_builder import _grow


@njit
def _write_through(a, t):
    v = borrowed(a)
    v[1, 0] = -1.0
    w, k, none = borrowed(t)
    w[0] = k
    return v.shape, v.strides, none is None


@njit
def _escaped(a):
    owner = a.copy()
    view = borrowed(owner)
    keep_alive(owner)
    return owner, view


def test_views_share_data_shape_and_strides():
    a = np.arange(12.0).reshape(4, 3)[::2]  # not contiguous
    b = np.zeros(2, dtype=np.int32)
    shape, strides, none = _write_through(a, (b, 7, None))
    assert shape == a.shape and strides == a.strides and none
    assert a[1, 0] == -1.0 and b[0] == 7


def test_a_boxed_view_has_no_owner():
    owner, view = _escaped(np.arange(4.0))
    assert owner.base is not None  # numba's MemInfo keeps it alive
    assert view.base is None and not view.flags.owndata


class _Pair(NamedTuple):
    first: np.ndarray
    second: np.ndarray


@njit
def _write_named(pair):
    v = borrowed(pair)
    v.second[0] = 5.0  # by name: the bundle keeps its fields
    return v.first.shape[0], v.second.shape[0]


def test_named_bundles_keep_their_fields():
    """The node loop's bundles (``buffers.Candidates``, ``labels.LabelBuffers``) are
    named tuples: their views must keep the type, so fields read by name."""
    pair = _Pair(np.zeros(3), np.zeros(2))
    assert _write_named(pair) == (3, 2)
    assert pair.second[0] == 5.0 and pair.first[0] == 0.0


def test_refuses_what_is_counted_otherwise():
    with pytest.raises(TypingError):
        njit(lambda x: borrowed(x))([1.0, 2.0])
    with pytest.raises(TypingError):
        njit(lambda x: borrowed(x))((np.zeros(2), [1.0]))


@pytest.mark.parametrize("task", ["unsupervised", "classification", "regression"])
def test_build_tree_returns_only_arrays_it_owns(task):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y, code = {
        "unsupervised": (None, FASTBIC),
        "classification": (rng.integers(0, 3, 60), GINI),
        "regression": (rng.normal(size=(60, 2)), SQUARED_ERROR),
    }[task]
    tree, rows, leaf = _grow(X, code, y)
    for name, arr in [*zip(Tree._fields, tree, strict=True), ("rows", rows), ("leaf", leaf)]:
        assert arr.base is not None, f"{name} is a borrowed view"
    assert tree[0].shape[0] > 1
    np.testing.assert_array_equal(np.sort(rows), np.arange(60))
