"""The tree builder: one node loop shared by every forest in geoforest.

A tree is a :class:`Tree` of flat arrays indexed by node id (depth-first
pre-order, root 0).  Node ``i`` is a leaf when ``left[i] == -1``; otherwise its
projection is ``proj_idx/proj_weight[proj_ptr[i]:proj_ptr[i + 1]]`` and a sample
goes left when its projected value is ``<= threshold[i]``.

The loop (:func:`build_tree`) is: pop a node; stop if it is too small or too
deep; otherwise draw the node's candidate projections (``projections``), project
and sort the node's samples under each, ask the split rule (``splits``) for the
best cut, keep the best projection, partition the samples, push the children.
Projection distributions and split rules are integer codes, so new ones plug in
without touching this loop.  All randomness comes from the tree's own
``state``; the kernel releases the GIL so trees build in parallel threads.

The task is the third plug-in.  Unsupervised trees sort the projected values
only.  Classification trees (``n_classes >= 2``) argsort them instead, so the
rule (Gini, entropy) sees each sample's label and weight in sorted order; they
also record each node's weighted class counts (``Tree.value``) and stop at
pure nodes.  Regression trees (``targets`` with ``n_outputs >= 1`` columns)
argsort too, carrying each sample's targets, record each node's weighted mean
targets and stop at nodes whose targets are all equal.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit
from .borrow import borrowed, keep_alive
from .cuts import uniform_cut_unsorted
from .labels import gather_node, label_buffers, node_value, supervised_cut
from .projections import draw_node_projections, project_samples
from .sorting import sort_values
from .splits import UNIFORM, best_cut, midpoint
from .ties import grow_until_resolved, growth_pool

#: scikit-learn's tolerance in its ``min_impurity_decrease`` test.
_EPS = float(np.finfo(np.float64).eps)


class Tree(NamedTuple):
    """Flat arrays of one fitted tree (see the module docstring)."""

    left: np.ndarray  # int32, -1 for leaves
    right: np.ndarray  # int32, -1 for leaves
    threshold: np.ndarray  # float64, nan for leaves
    proj_ptr: np.ndarray  # int64, n_nodes + 1
    proj_idx: np.ndarray  # int32 feature indices
    proj_weight: np.ndarray  # float32 weights
    n_node_samples: np.ndarray  # int32 samples (with multiplicity) at each node
    gain: np.ndarray  # float64 split gain (nan for leaves)
    value: np.ndarray  # float64 weighted class counts (n_nodes, n_classes) or mean targets
    #   (n_nodes, n_outputs); (n_nodes, 0) unsupervised

    @property
    def n_nodes(self) -> int:
        return int(self.left.shape[0])

    @property
    def n_leaves(self) -> int:
        return int(np.count_nonzero(self.left == -1))


@njit(nogil=True, cache=True)
def _grow(a, size):
    out = np.empty(max(2 * a.shape[0], size), dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(nogil=True, cache=True)
def _all_rows_equal(X, samples, lo, hi):
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
def _partition(samples, z, lo, hi, threshold, buf):
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
def _constant(z, m):
    """True when ``z[:m]`` holds a single value (a projection that cannot cut)."""
    first = z[0]
    for i in range(1, m):
        if z[i] != first:
            return False
    return True


@njit(nogil=True, cache=True)
def _store_split(
    threshold, gain, proj_ptr, proj_idx, proj_w, node, nnz, win_idx, win_w, width, thr, g
):
    """Record a split node: its projection (appended, growing the arrays), threshold, gain.

    ``win_idx/win_w[:width]`` is the winning projection.  Returns the
    projection arrays (new ones when they grew) and the new number of stored
    nonzeros.
    """
    if nnz + width > proj_idx.shape[0]:
        proj_idx = _grow(proj_idx, nnz + width)
        proj_w = _grow(proj_w, nnz + width)
    proj_idx[nnz : nnz + width] = win_idx[:width]
    proj_w[nnz : nnz + width] = win_w[:width]
    proj_ptr[node + 1] = nnz + width
    threshold[node] = thr
    gain[node] = g
    return proj_idx, proj_w, nnz + width


@njit(nogil=True, cache=True)
def _push(stack, top, lo, hi, depth, parent, is_left, batches):
    """Push a pending node (a row of ``stack``); returns the new top."""
    stack[top, 0] = lo
    stack[top, 1] = hi
    stack[top, 2] = depth
    stack[top, 3] = parent
    stack[top, 4] = is_left
    stack[top, 5] = batches
    return top + 1


@njit(nogil=True, cache=True, inline="always")
def _child_batches(n_batches, node_batches, gain, decay_batches):
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


@njit(nogil=True, cache=True)
def _new_tree(cap, width):
    """Empty :class:`Tree` arrays for up to ``cap`` nodes (every node a leaf until split);
    ``width`` columns of ``value`` (classes, outputs, or 0)."""
    return (
        np.full(cap, -1, dtype=np.int32),
        np.full(cap, -1, dtype=np.int32),
        np.full(cap, np.nan),
        np.zeros(cap + 1, dtype=np.int64),
        np.empty(cap, dtype=np.int32),
        np.empty(cap, dtype=np.float32),
        np.zeros(cap, dtype=np.int32),
        np.full(cap, np.nan),
        np.zeros((cap, width)),
    )


@njit(nogil=True, cache=True)
def _finish(tree_arrays, n_nodes, nnz, node_lo, node_hi, n):
    """The fitted arrays cut to size, and the leaf of every sample.

    Partitions are final, so each leaf's range of ``samples`` holds exactly
    the samples that reach it.
    """
    left, right, threshold, proj_ptr, proj_idx, proj_w, n_node, gain, value = tree_arrays
    sample_leaf = np.empty(n, dtype=np.int32)
    for node in range(n_nodes):
        if left[node] == -1:
            sample_leaf[node_lo[node] : node_hi[node]] = node
    tree = (
        left[:n_nodes].copy(),
        right[:n_nodes].copy(),
        threshold[:n_nodes].copy(),
        proj_ptr[: n_nodes + 1].copy(),
        proj_idx[:nnz].copy(),
        proj_w[:nnz].copy(),
        n_node[:n_nodes].copy(),
        gain[:n_nodes].copy(),
        value[:n_nodes].copy(),
    )
    return tree, sample_leaf


@njit(nogil=True, cache=True)
def _candidate_buffers(X, n_proj, max_nnz):
    """Scratch for a node's candidates and the winner.

    ``(perm, cand_ptr, cand_idx, cand_w, win_idx, win_w, g_idx, g_w)``: the
    feature permutation the samplers shuffle, the candidates in CSR form, and
    room for the winning projection and for the candidate being tried (where
    it may grow).
    """
    return (
        np.arange(X.shape[1]).astype(np.int32),
        np.zeros(n_proj + 1, dtype=np.int64),
        np.empty(n_proj * max_nnz, dtype=np.int32),
        np.empty(n_proj * max_nnz, dtype=np.float32),
        np.empty(max_nnz, dtype=np.int32),
        np.empty(max_nnz, dtype=np.float32),
        np.empty(max_nnz, dtype=np.int32),
        np.empty(max_nnz, dtype=np.float32),
    )


@njit(nogil=True, cache=True, inline="always")
def _tree_buffers(X, samples, cap, n_proj, max_nnz, n_classes, n_outputs, n_batches):
    """Every array a tree's node loop writes: ``(tree, candidates, values, labels, pending)``.

    The :class:`Tree` arrays for ``cap`` nodes (:func:`_new_tree`), the
    candidates' (:func:`_candidate_buffers`), values' (:func:`_value_buffers`)
    and labels' (:func:`~.labels.label_buffers`) scratch, and the stack of
    pending nodes holding the root (:func:`_pending_root`).
    """
    return (
        _new_tree(cap, n_classes if n_classes > 0 else n_outputs),
        _candidate_buffers(X, n_proj, max_nnz),
        _value_buffers(samples),
        label_buffers(samples.shape[0], n_classes, n_outputs),
        _pending_root(cap, samples.shape[0], n_batches),
    )


@njit(nogil=True, cache=True, inline="always")
def _open_node(row, node, left, right, node_lo, node_hi, n_node, proj_ptr, nnz, counts, samples):
    """Record a popped stack ``row`` as node ``node``: its range, parent link, size, no projection.

    Returns ``(lo, hi, depth, batches, size)``.
    """
    lo, hi, depth, parent, is_left, batches = row[0], row[1], row[2], row[3], row[4], row[5]
    node_lo[node], node_hi[node] = lo, hi
    if parent >= 0:
        if is_left:
            left[parent] = node
        else:
            right[parent] = node
    size = _node_size(counts, samples, lo, hi)
    n_node[node] = size
    proj_ptr[node + 1] = nnz
    return lo, hi, depth, batches, size


@njit(nogil=True, cache=True, inline="always")
def _value_buffers(samples):
    """Per-value scratch of a tree on ``samples``: ``(z_cur, z_best, z_sorted,
    sort_keys, sort_tmp, part_buf)`` (projected values, sort keys, partition)."""
    n = samples.shape[0]
    z_cur, z_best, z_sorted = np.empty(n), np.empty(n), np.empty(n)
    sort_keys, sort_tmp = np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64)
    return z_cur, z_best, z_sorted, sort_keys, sort_tmp, np.empty(n, dtype=samples.dtype)


@njit(nogil=True, cache=True, inline="always")
def _pending_root(cap, n, n_batches):
    """The stack of pending nodes holding the root, and each node's range of samples.

    ``(stack, top, node_lo, node_hi)``; a stack row is ``(lo, hi, depth,
    parent, is_left, batches)`` (:func:`_push`).
    """
    stack = np.empty((cap, 6), dtype=np.int64)
    node_lo, node_hi = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
    return stack, _push(stack, 0, 0, n, 0, -1, 1, n_batches), node_lo, node_hi


@njit(nogil=True, cache=True, inline="always")
def _weight_bounds(min_gain, min_decrease, min_weight_fraction, sample_weight, samples):
    """A supervised tree's bounds in its own units: ``(min_gain, min_weight)``.

    scikit-learn makes a leaf when ``gain / W + eps < min_impurity_decrease``
    and refuses a cut leaving a side less than ``min_weight_fraction_leaf *
    W`` (``W`` the tree's total weight, its sample's weights with
    multiplicity): the same bounds, times ``W``.  Unsupervised trees (no
    weights) and bounds left at 0 change nothing.
    """
    if sample_weight.shape[0] == 0 or not (min_decrease > 0.0 or min_weight_fraction > 0.0):
        return min_gain, 0.0
    w_total = 0.0
    for s in range(samples.shape[0]):
        w_total += sample_weight[samples[s]]
    if min_decrease > 0.0:
        min_gain = max(min_gain, (min_decrease - _EPS) * w_total)
    return min_gain, min_weight_fraction * w_total


@njit(nogil=True, cache=True, inline="always")
def _copy_projection(idx, w, start, end, out_idx, out_w):
    """Copy the projection ``idx/w[start:end]`` to the front of ``out_idx/out_w``; its width."""
    width = end - start
    out_idx[:width] = idx[start:end]
    out_w[:width] = w[start:end]
    return width


class EngineConfig(NamedTuple):
    """A forest's plug-ins, as :func:`build_tree` takes them (one argument).

    Each forest class says which projection distribution and split rule its
    trees use (``BaseForest._engine_config``); :meth:`typed` gives the one
    numba type every caller shares, so the kernel compiles once.
    """

    projection: int
    projection_params: np.ndarray
    max_nonzeros: int
    criterion: int
    criterion_params: np.ndarray
    n_projections: int
    n_batches: int = 1
    decay_batches: bool = False
    random_cuts: bool = False

    def typed(self) -> EngineConfig:
        """Python ints and bool, float64 parameter arrays: one numba signature."""
        return EngineConfig(
            int(self.projection), np.ascontiguousarray(self.projection_params, np.float64),
            int(self.max_nonzeros), int(self.criterion),
            np.ascontiguousarray(self.criterion_params, np.float64), int(self.n_projections),
            int(self.n_batches), bool(self.decay_batches), bool(self.random_cuts),
        )  # fmt: skip


class TreeLimits(NamedTuple):
    """When a node stops splitting (``max_depth=-1``: no limit; ``min_gain=-inf``: none).

    The last three act on supervised trees only, with scikit-learn's meaning:
    ``max_leaf_nodes`` (``-1``: no limit) is applied to the grown tree by the
    caller (:mod:`.best_first`); a node splits only if its gain, over the
    tree's total sample weight, is at least ``min_impurity_decrease``, and
    only where each side keeps ``min_weight_fraction_leaf`` of that weight.
    """

    min_samples_split: int
    min_samples_leaf: int
    max_depth: int
    min_gain: float
    max_leaf_nodes: int = -1
    min_impurity_decrease: float = 0.0
    min_weight_fraction_leaf: float = 0.0


@njit(nogil=True, cache=True)
def build_tree(X, samples, cfg, limits, state, y, targets, sample_weight, counts, n_classes,
               workspace):  # fmt: skip
    """Grow one tree on rows ``samples`` of float32 ``X``.

    Returns ``(tree, rows, leaf)``: the :class:`Tree` arrays, the samples in
    their final order and the leaf (node id) each of them reached, so the
    training rows' leaves need no second walk down the tree.

    ``cfg`` is an :class:`EngineConfig` (made by :meth:`EngineConfig.typed`),
    ``limits`` a :class:`TreeLimits`: unpacked once, here, so the node loop
    reads plain scalars and arrays (a tuple's arrays passed down per node would
    cost reference counting, docs/engine.md).

    Each node tries ``n_proj`` candidate projections, and up to ``n_batches``
    batches of them while no candidate has a positive gain (the best over all
    batches is kept); with ``decay_batches`` the children of a node whose
    batches all failed get fewer (:func:`_child_batches`).  The node's steps
    are helpers (stop checks, :func:`_store_split`, :func:`_partition`,
    :func:`_push`); the candidate loop stays written out here (see the
    comment above the loop).
    ``max_depth < 0`` means unlimited; nodes whose best gain is
    ``<= min_gain`` become leaves (pass ``-inf`` to disable).
    The task: ``n_classes > 0`` grows a classification tree (``y`` holds
    int32 labels ``0..n_classes - 1``, ``rule`` is a classification rule of
    ``splits.best_class_cut``); ``targets`` with ``n_outputs > 0`` columns (float64,
    one row per row of ``X``) a regression tree (``rule`` of
    ``splits.best_regression_cut``); ``y = targets = None`` an unsupervised
    tree.  Supervised trees pass an empty array for what their task does not
    read (``targets`` of shape ``(0, 0)``, or ``y`` of length 0).
    ``sample_weight`` holds float64 weights, one per row of ``X``, for both
    supervised tasks.  ``workspace`` is the unsupervised rule's scratch
    (``splits.make_workspace(rule, n)``), ``None`` for supervised trees.

    The ``None`` arguments make the task part of the kernel's type: numba
    resolves ``arg is None`` at compile time for an argument typed ``None`` and
    prunes the branch not taken, so the unsupervised kernel (``y is None``)
    holds none of the supervised steps and the supervised kernel (``workspace
    is None``) none of the unsupervised rules; a first call compiles only its
    task's code (``docs/benchmarks.md``, "Where a cold start's compile time
    goes").  Hence the shape of the task branches below: ``if supervised:``
    (``y is not None``, false in the unsupervised kernel) then ``elif
    workspace is not None:`` (false in the supervised one), each tested
    directly on the argument; the random projection forest's uniform cut,
    which needs no sort, is an ``elif workspace is not None and unsorted:``
    before the sorted rules, so the supervised kernel holds none of it.

    Supervised trees take each drawn row once: ``samples`` holds distinct
    rows and ``counts`` (int32, one per row of ``X``) how often the bootstrap
    drew each, folded into ``sample_weight`` by the caller.  Node sizes,
    ``min_samples_split`` and ``min_samples_leaf`` count with multiplicity, so
    the tree is the one grown on the sample with its repeats, with fewer
    values to project and sort (about 63 % of a bootstrap of ``n`` rows).
    Unsupervised trees pass an empty ``counts`` and repeated rows in ``samples``.
    """
    (proj_kind, proj_params, max_nnz, rule, rule_params, n_proj, n_batches, decay_batches,
     random_cuts) = cfg  # fmt: skip
    min_samples_split, min_samples_leaf, max_depth, min_gain, _, decrease, weight_frac = limits
    # Every branch on ``supervised`` (or ``y is None``) is resolved at compile
    # time (see above): keep it a single assignment from ``y``, tested directly.
    supervised = y is not None
    if y is None and workspace is None:  # no task's branch would run: refuse, not a stump
        raise ValueError("an unsupervised tree needs its rule's workspace, got None")
    n_outputs = 0
    if supervised and n_classes == 0:
        n_outputs = targets.shape[1]
    n = samples.shape[0]
    rows = samples.copy()  # partitioned node by node; returned
    cap = 2 * n + 1  # a binary tree on n samples has at most 2 n - 1 nodes
    # The node loop uses every array through a borrowed view (no reference
    # counting: .borrow); ``owned`` holds the arrays until keep_alive below.
    owned = _tree_buffers(X, rows, cap, n_proj, max_nnz, n_classes, n_outputs, n_batches)
    X, samples, state, proj_params, rule_params, sample_weight, counts = borrowed(
        (X, rows, state, proj_params, rule_params, sample_weight, counts))  # fmt: skip
    tree_v, cand_v, value_v, label_v, pending_v = borrowed(owned)
    left, right, threshold, proj_ptr, _, _, n_node, gain, value = tree_v
    proj_idx, proj_w = owned[0][4], owned[0][5]  # owned: replaced when they grow
    # Sparse candidates of unsupervised trees grow while ties dominate
    # (``proj_params = [mean_nnz, max_tied_fraction, cap, grown_redraws]``);
    # the grown candidate lives in ``g_idx/g_w[:gw]``.
    perm, cand_ptr, cand_idx, cand_w, win_idx, win_w, g_idx, g_w = cand_v
    z_cur, z_best, z_sorted, sort_keys, sort_tmp, part_buf = value_v
    y_node, t_node, w_node, c_node, order, y_sorted, t_sorted, w_sorted, c_sorted, scratch = label_v
    stack, top, node_lo, node_hi = pending_v
    n_nodes = nnz = gw = 0
    grow, pool = False, np.empty(0, dtype=np.int32)
    if workspace is not None:
        grow, pool = growth_pool(X, samples, proj_kind, proj_params, z_sorted, sort_keys, sort_tmp)
    min_gain, min_weight = _weight_bounds(min_gain, decrease, weight_frac, sample_weight, samples)
    # Where the gain decides nothing (one candidate, one batch, no gain bound) and no
    # candidate grows, the uniform cut skips the sort (cuts.uniform_cut_unsorted).
    unsorted = rule == UNIFORM and n_proj == n_batches == 1 and min_gain == -np.inf and not grow
    # The candidate loop stays written out here: as a function of its own
    # (called, or inlined by numba) it slows small-node trees (docs/engine.md).
    while top > 0:
        top -= 1
        node, n_nodes = n_nodes, n_nodes + 1
        lo, hi, depth, node_batches, size = _open_node(
            stack[top], node, left, right, node_lo, node_hi, n_node, proj_ptr, nnz, counts, samples
        )
        if supervised and node_value(borrowed(y), borrowed(targets), sample_weight, samples, lo,
                                     hi, n_classes, value[node]):  # fmt: skip
            continue  # pure node, or every target equal
        if size < min_samples_split or size < 2 * min_samples_leaf or 0 <= max_depth <= depth:
            continue
        if _all_rows_equal(X, samples, lo, hi):
            continue  # e.g. copies of one point drawn by the bootstrap
        if supervised:
            gather_node(borrowed(y), borrowed(targets), sample_weight, counts, samples, lo, hi,
                        n_classes, value[node], y_node, t_node, w_node, c_node)  # fmt: skip
        m = hi - lo
        best_j, best_score, best_gain, best_thr, width = -1, -np.inf, -np.inf, 0.0, 0
        grown = False
        for _batch in range(node_batches):
            # Redraw candidates while no projection has shown structure (gain > 0).
            k = draw_node_projections(
                proj_kind, proj_params, n_proj, perm, state, cand_ptr, cand_idx, cand_w
            )
            for j in range(k):
                # The candidate in ``g_idx/g_w[:gw]``, where it may grow.
                gw = _copy_projection(cand_idx, cand_w, cand_ptr[j], cand_ptr[j + 1], g_idx, g_w)
                project_samples(X, samples, lo, hi, cand_idx, cand_w, cand_ptr[j], cand_ptr[j + 1],
                                z_cur)  # fmt: skip
                if supervised:
                    if _constant(z_cur, m):
                        continue  # no cut between distinct values: skip the sort
                    thr, score, g = supervised_cut(random_cuts, rule, z_cur, m, n_classes, y_node,
                        t_node, w_node, c_node, z_sorted, order, y_sorted, t_sorted, w_sorted,
                        c_sorted, min_samples_leaf, min_weight, scratch, state)  # fmt: skip
                elif workspace is not None and unsorted:  # the rpTree's cut needs no sort
                    thr, score, g = uniform_cut_unsorted(z_cur, m, min_samples_leaf, state,
                                                         z_sorted)  # fmt: skip
                elif workspace is not None:
                    z_sorted[:m] = z_cur[:m]
                    sort_values(z_sorted, m, sort_keys, sort_tmp)
                    if grow:
                        drawn = gw
                        gw = grow_until_resolved(
                            X, samples, lo, hi, z_cur, z_sorted, m, g_idx, g_w, gw, proj_params,
                            borrowed(pool), state, sort_keys, sort_tmp)  # fmt: skip
                        grown = grown or gw != drawn
                    pos, score, g = best_cut(rule, z_sorted, m, min_samples_leaf, rule_params,
                                             borrowed(workspace), state)  # fmt: skip
                    thr = midpoint(z_sorted[pos - 1], z_sorted[pos]) if pos > 0 else np.nan
                if score > best_score:  # an invalid cut scores -inf
                    best_score, best_gain, best_j, best_thr = score, g, j, thr
                    # Swap the buffers: the winner's values are never copied.
                    z_tmp = z_best
                    z_best = z_cur
                    z_cur = z_tmp
                    # Keep the winner where the next batch cannot overwrite it.
                    width = _copy_projection(g_idx, g_w, 0, gw, win_idx, win_w)
            if best_gain > 0.0 or (grown and _batch >= proj_params[3]):
                break  # structure found, or grown candidates redrawn enough
        if best_j < 0 or best_gain <= min_gain:
            continue
        proj_idx, proj_w, nnz = _store_split(
            threshold, gain, proj_ptr, proj_idx, proj_w, node, nnz, win_idx, win_w, width,
            best_thr, best_gain,
        )  # fmt: skip
        batches = _child_batches(n_batches, node_batches, best_gain, decay_batches)
        mid = _partition(samples, z_best, lo, hi, best_thr, part_buf)
        # Push right first so the left subtree is built (and numbered) first.
        top = _push(stack, top, mid, hi, depth + 1, node, 0, batches)
        top = _push(stack, top, lo, mid, depth + 1, node, 1, batches)
    tree_arrays = (left, right, threshold, proj_ptr, proj_idx, proj_w, n_node, gain, value)
    tree, sample_leaf = _finish(tree_arrays, n_nodes, nnz, node_lo, node_hi, n)
    keep_alive(owned)
    return tree, rows, sample_leaf
