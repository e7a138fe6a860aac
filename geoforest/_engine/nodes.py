"""The node loop's steps: what ``builder.build_tree`` does to one node.

Open a popped node (:func:`open_node`: its range, parent link and size), test
whether any cut can exist (:func:`all_rows_equal`, :func:`is_constant` for a
candidate's values), keep the best candidate (:func:`copy_projection`), record
a split's projection (:func:`store_projection`), partition its rows (:func:`partition`) and push
its children (:func:`push`, :func:`child_batches`); a large node's split is
chosen on a sample of its rows (:func:`draw_split_rows`).  The buffers they write are
made once per tree by :mod:`.buffers`.

Steps marked ``inline="always"`` are compiled into the loop instead of
called; what calls cost in the node loop is in ``docs/engine.md``.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .rng import next_u64

#: Columns of a row of the stack of pending nodes (:func:`push`, :func:`open_node`).
STACK_COLUMNS = 7
LO, HI, DEPTH, PARENT, IS_LEFT, BATCHES, N_CONST = range(STACK_COLUMNS)

#: scikit-learn's tolerance in its ``min_impurity_decrease`` test.
_EPS = float(np.finfo(np.float64).eps)


@njit(nogil=True, cache=True)
def _grow(a, size):
    out = np.empty(max(2 * a.shape[0], size), dtype=a.dtype)
    for i in range(a.shape[0]):  # loops, not slice copies, here and below (geoforest._jit)
        out[i] = a[i]
    return out


@njit(nogil=True, cache=True)
def all_rows_equal(X, samples, lo, hi):
    """True when every row ``samples[lo:hi]`` equals the first (no cut can exist).

    A column-major ``X`` is checked column by column (each column is read in
    row order and the first varying one ends the check); row by row, each
    comparison would jump a whole column ahead in memory.
    """
    first = samples[lo]
    if X.strides[0] == X.itemsize and X.shape[1] > 1:
        for f in range(X.shape[1]):
            v = X[first, f]
            for s in range(lo + 1, hi):
                if X[samples[s], f] != v:
                    return False
        return True
    for s in range(lo + 1, hi):
        row = samples[s]
        if row == first:
            continue
        for f in range(X.shape[1]):
            if X[row, f] != X[first, f]:
                return False
    return True


@njit(nogil=True, cache=True)
def partition(samples, z, lo, hi, threshold, buf):
    """Stable partition of ``samples[lo:hi]``: values ``<= threshold`` first.

    Stable, so a node's samples stay in increasing row order (the tree's
    sample is drawn sorted): projections then read the rows of ``X`` in
    memory order, which the hardware prefetches (a scrambled order costs
    several times more per value once ``X`` outgrows the L2 cache; see
    ``docs/engine.md``).
    ``buf`` holds at least ``hi - lo`` entries.  Branchless: each sample is
    written both to the next left slot (in place: ``k <= i``, so only samples
    already read are overwritten) and to the next right slot of ``buf``, and
    only the slot counters depend on the comparison, whose outcome is a coin
    flip near the cut (a branch on it mispredicts about half the time).
    """
    k = lo
    r = 0
    for i in range(lo, hi):
        s = samples[i]
        samples[k] = s
        buf[r] = s
        left = z[i - lo] <= threshold
        k += left
        r += 1 - left
    for j in range(r):
        samples[k + j] = buf[j]
    return k


#: Odd multiplier of the row hash (:func:`draw_split_rows`), and the mix that ends it.
_ROW_PRIME = np.uint64(0x100000001B3)
_MIX_A = np.uint64(0xBF58476D1CE4E5B9)
_MIX_B = np.uint64(0x94D049BB133111EB)
_SHIFT_A, _SHIFT_B, _SHIFT_C, _SHIFT_53 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


@njit(nogil=True, cache=True)
def draw_split_rows(X, samples, lo, hi, m, sub, keys, state):
    """Draw about ``m`` of the rows ``samples[lo:hi]`` into ``sub``; return how many.

    Each row is drawn with probability ``m / (hi - lo)``, decided by a hash of
    its values (the bits of its float32 features) salted per node from the
    tree's ``state``.  The draw depends on what the rows hold, never on where
    they stand, so a tree is the same for any order of the data's rows and for
    a Dask fit, whose tasks stack a tree's rows in another order; copies of
    a row are drawn together.  The drawn rows keep the node's increasing row
    order (projections read ``X`` in memory order, see :func:`partition`).
    ``keys`` is scratch of ``hi - lo`` entries; ``sub`` holds ``hi - lo``.
    """
    size = hi - lo
    salt = next_u64(state)
    bits = X.view(np.uint32)
    for i in range(size):
        keys[i] = salt
    # Column by column: rows in increasing order read each column in memory order.
    for f in range(X.shape[1]):
        for i in range(size):
            keys[i] = (keys[i] ^ np.uint64(bits[samples[lo + i], f])) * _ROW_PRIME
    cut = m / size
    k = 0
    for i in range(size):
        z = keys[i]
        z = (z ^ (z >> _SHIFT_A)) * _MIX_A
        z = (z ^ (z >> _SHIFT_B)) * _MIX_B
        z = z ^ (z >> _SHIFT_C)
        if float(z >> _SHIFT_53) * 2.0**-53 < cut:
            sub[k] = samples[lo + i]
            k += 1
    return k


@njit(nogil=True, cache=True)
def split_buffers(split_m, n, samples, workspace, unsorted):
    """``(split_m, sub, keys)`` of a tree on ``n`` samples: the node size above
    which its split is chosen on a sample (``n``, never, for a supervised
    tree (``workspace`` None), an unsorted cut or ``split_m <= 0``), and the
    draw's buffers (:func:`draw_split_rows`)."""
    sampling = workspace is not None and not unsorted
    split_m = split_m if sampling and split_m > 0 else n
    size = n if split_m < n else 0
    return split_m, np.empty(size, dtype=samples.dtype), np.empty(size, dtype=np.uint64)


@njit(nogil=True, cache=True)
def sampled_rows(X, samples, lo, hi, split_m, sub, keys, min_leaf, state):
    """How many rows of a node larger than ``split_m`` were drawn into ``sub``
    to choose its split (:func:`draw_split_rows`); 0 to choose on all rows:
    the node is not that large, or the draw is too small to cut or holds
    copies of one row only (the node's other rows missed)."""
    if hi - lo <= split_m:
        return 0
    k = draw_split_rows(X, samples, lo, hi, split_m, sub, keys, state)
    if k < max(2 * min_leaf, 2) or all_rows_equal(X, sub, 0, k):
        return 0
    return k


@njit(nogil=True, cache=True)
def is_leaf(X, samples, lo, hi, size, min_split, min_leaf, max_depth, depth):
    """True when the node of rows ``samples[lo:hi]`` (``size`` samples with
    multiplicity) stays a leaf before any candidate is drawn: too small to
    split or to keep ``min_leaf`` on each side, at ``max_depth`` (``< 0``:
    unlimited), or all its rows equal (no projection can cut them)."""
    if size < min_split or size < 2 * min_leaf or 0 <= max_depth <= depth:
        return True
    return all_rows_equal(X, samples, lo, hi)


@njit(nogil=True, cache=True)
def node_gain(gain, project_best, size, n_drawn):
    """The gain of a node's best cut and whether its winner must be projected
    again: chosen on ``n_drawn > 0`` sampled rows (:func:`sampled_rows`), the
    sample's gain is scaled to the node's ``size`` rows, as the gains of
    unsampled nodes count every row, and the winner's values are the sample's."""
    if n_drawn > 0:
        return gain * size / n_drawn, True
    return gain, project_best


@njit(nogil=True, cache=True)
def task_outputs(y, targets, n_classes):
    """Columns of a regression tree's ``targets`` (0 for other tasks)."""
    n_outputs = 0  # one return of one type: every branch on None is pruned
    if y is not None and n_classes == 0:
        n_outputs = targets.shape[1]
    return n_outputs


@njit(nogil=True, cache=True)
def _node_size(counts, samples, lo, hi):
    """Samples at a node with multiplicity (``counts`` empty: each row once)."""
    if counts.shape[0] == 0:
        return hi - lo
    m = 0
    for s in range(lo, hi):
        m += counts[samples[s]]
    return m


@njit(nogil=True, cache=True)
def is_constant(z, m):
    """True when ``z[:m]`` holds a single value (a projection that cannot cut)."""
    first = z[0]
    for i in range(1, m):
        if z[i] != first:
            return False
    return True


@njit(nogil=True, cache=True)
def store_projection(proj_ptr, proj_idx, proj_w, node, nnz, win_idx, win_w, width):
    """Append split node ``node``'s projection ``win_idx/win_w[:width]`` after the
    ``nnz`` nonzeros stored so far, growing the arrays when full.

    Returns the projection arrays (new ones when they grew) and the new number
    of stored nonzeros.
    """
    if nnz + width > proj_idx.shape[0]:
        proj_idx = _grow(proj_idx, nnz + width)
        proj_w = _grow(proj_w, nnz + width)
    for q in range(width):
        proj_idx[nnz + q] = win_idx[q]
        proj_w[nnz + q] = win_w[q]
    proj_ptr[node + 1] = nnz + width
    return proj_idx, proj_w, nnz + width


@njit(nogil=True, cache=True)
def push(stack, top, lo, hi, depth, parent, is_left, batches, n_const):
    """Push a pending node (a row of ``stack``); returns the new top.

    ``n_const`` counts the features known to be constant in the node's rows
    (``perm[:n_const]`` of the tree's :class:`~.buffers.Candidates`, found
    by its ancestors: :func:`~.projections.mark_constants`).
    """
    stack[top, LO] = lo
    stack[top, HI] = hi
    stack[top, DEPTH] = depth
    stack[top, PARENT] = parent
    stack[top, IS_LEFT] = is_left
    stack[top, BATCHES] = batches
    stack[top, N_CONST] = n_const
    return top + 1


@njit(nogil=True, cache=True, inline="always")
def child_batches(n_batches, node_batches, gain, decay_batches):
    """Redraw batches for a node's children.

    Without ``decay_batches`` every node gets ``n_batches``.  With it, a node
    whose batches all failed (``gain <= 0``) passes half its redraws on and a
    node that found structure passes its own number on (the budget never
    grows again down a branch).
    """
    if not decay_batches:
        return n_batches
    if gain <= 0.0:
        return 1 + (node_batches - 1) // 2
    return node_batches


@njit(nogil=True, cache=True, inline="always")
def open_node(row, node, left, right, node_lo, node_hi, n_node, proj_ptr, nnz, counts, samples):
    """Record a popped stack ``row`` as node ``node``: its range, parent link, size, no projection.

    Returns ``(lo, hi, depth, batches, size, n_const)``, ``n_const`` the
    features known to be constant in the node (:func:`push`).
    """
    lo, hi, depth, batches = row[LO], row[HI], row[DEPTH], row[BATCHES]
    parent, is_left = row[PARENT], row[IS_LEFT]
    node_lo[node], node_hi[node] = lo, hi
    if parent >= 0:
        if is_left:
            left[parent] = node
        else:
            right[parent] = node
    size = _node_size(counts, samples, lo, hi)
    n_node[node] = size
    proj_ptr[node + 1] = nnz
    return lo, hi, depth, batches, size, row[N_CONST]


@njit(nogil=True, cache=True, inline="always")
def weight_bounds(limits, sample_weight, samples):
    """A supervised tree's bounds in its own units: ``(min_gain, min_weight)``.

    ``limits`` is the tree's ``builder.TreeLimits``.
    scikit-learn makes a leaf when ``gain / W + eps < min_impurity_decrease``
    and refuses a cut leaving a side less than ``min_weight_fraction_leaf *
    W`` (``W`` the tree's total weight, its sample's weights with
    multiplicity): the same bounds, times ``W``.  Unsupervised trees (no
    weights) and bounds left at 0 change nothing.
    """
    min_gain, min_decrease = limits.min_gain, limits.min_impurity_decrease
    min_weight_fraction = limits.min_weight_fraction_leaf
    if sample_weight.shape[0] == 0 or not (min_decrease > 0.0 or min_weight_fraction > 0.0):
        return min_gain, 0.0
    w_total = 0.0
    for s in range(samples.shape[0]):
        w_total += sample_weight[samples[s]]
    if min_decrease > 0.0:
        min_gain = max(min_gain, (min_decrease - _EPS) * w_total)
    return min_gain, min_weight_fraction * w_total


@njit(nogil=True, cache=True, inline="always")
def copy_projection(idx, w, start, end, out_idx, out_w):
    """Copy the projection ``idx/w[start:end]`` to the front of ``out_idx/out_w``; its width."""
    width = end - start
    for q in range(width):
        out_idx[q] = idx[start + q]
        out_w[q] = w[start + q]
    return width
