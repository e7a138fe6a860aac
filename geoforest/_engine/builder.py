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
from .buffers import finish_tree, tree_buffers
from .columns import sums_scratch
from .labels import SupervisedRule, gather_node, node_value, supervised_candidate
from .nodes import (
    child_batches,
    copy_projection,
    is_leaf,
    node_gain,
    open_node,
    partition,
    push,
    sampled_rows,
    split_buffers,
    store_projection,
    task_outputs,
    weight_bounds,
)
from .projections import (
    SLOT_GROWN_REDRAWS,
    draw_candidates,
    project_samples,
)
from .rule_cuts import rule_cut_of, tie_growth
from .splits import UNIFORM


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
    split_samples: int = 0

    def typed(self) -> EngineConfig:
        """Python ints and bool, float64 parameter arrays: one numba signature."""
        return EngineConfig(
            int(self.projection),
            np.ascontiguousarray(self.projection_params, np.float64),
            int(self.max_nonzeros),
            int(self.criterion),
            np.ascontiguousarray(self.criterion_params, np.float64),
            int(self.n_projections),
            int(self.n_batches),
            bool(self.decay_batches),
            bool(self.random_cuts),
            int(self.split_samples),
        )


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
def build_tree(
    X, samples, cfg, limits, state, y, targets, sample_weight, counts, n_classes, workspace, facts
):
    """Grow one tree on rows ``samples`` of float32 ``X``.

    Returns ``(tree, rows, leaf)``: the :class:`Tree` arrays, the samples in
    their final order and the leaf (node id) each of them reached, so the
    training rows' leaves need no second walk down the tree.

    ``cfg`` is an :class:`EngineConfig` (made by :meth:`EngineConfig.typed`),
    ``limits`` a :class:`TreeLimits`: read by name once, here, so the node loop
    reads plain scalars and arrays.  The loop's buffers come from
    :func:`~.buffers.tree_buffers` as named bundles (:class:`~.buffers.Candidates`,
    :class:`~.buffers.ValueScratch`, :class:`~.labels.LabelBuffers`), read by
    name and passed whole to the steps that use them, through borrowed views
    (no reference counting, :mod:`.borrow`).

    Each node tries ``n_proj`` candidate projections, and up to ``n_batches``
    batches of them while no candidate has a positive gain (the best over all
    batches is kept); with ``decay_batches`` the children of a node whose
    batches all failed get fewer (:func:`~.nodes.child_batches`).  The node's
    steps are helpers (:mod:`.nodes`: stop checks, storing the projection,
    the partition, the pushes); the candidate loop stays written out here
    (see the comment above the loop).
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
    proj_kind, proj_params, max_nnz = cfg.projection, cfg.projection_params, cfg.max_nonzeros
    rule, rule_params, n_proj = cfg.criterion, cfg.criterion_params, cfg.n_projections
    n_batches, decay_batches, random_cuts = cfg.n_batches, cfg.decay_batches, cfg.random_cuts
    min_split, min_leaf = limits.min_samples_split, limits.min_samples_leaf
    max_depth = limits.max_depth
    # Every branch on ``supervised`` (or ``y is None``) is resolved at compile
    # time (see above): keep it a single assignment from ``y``, tested directly.
    supervised = y is not None
    if y is None and workspace is None:  # no task's branch would run: refuse, not a stump
        raise ValueError("an unsupervised tree needs its rule's workspace, got None")
    n_outputs = task_outputs(y, targets, n_classes)
    n = samples.shape[0]
    rows = samples.copy()  # partitioned node by node; returned
    # The node loop uses every array through a borrowed view (no reference
    # counting: .borrow); ``owned`` holds the arrays until keep_alive below.
    # A binary tree on n samples has at most 2 n - 1 nodes.
    owned = tree_buffers(X, rows, 2 * n + 1, n_proj, max_nnz, n_classes, n_outputs, n_batches)
    X, samples, state, proj_params, rule_params, sample_weight, counts = borrowed(
        (X, rows, state, proj_params, rule_params, sample_weight, counts)
    )
    tree_v, cand, value_v, labels, pending_v = borrowed(owned)
    left, right, threshold, proj_ptr, _, _, n_node, gain, value = tree_v
    proj_idx, proj_w = owned[0][4], owned[0][5]  # owned: replaced when they grow
    # Read by name once, here: the loop uses plain arrays.
    cand_ptr, cand_idx, cand_w, g_idx, g_w = cand.ptr, cand.idx, cand.w, cand.g_idx, cand.g_w
    z_cur, z_best, vals = value_v
    stack, top, node_lo, node_hi = pending_v
    n_nodes = nnz = gw = 0
    # Sparse candidates grow while ties dominate (.ties): no pool where none can tie.
    grow, pool = tie_growth(workspace, X, samples, proj_kind, proj_params, vals)
    pool_v = borrowed(pool)  # ``pool`` kept alive below
    min_gain, min_weight = weight_bounds(limits, sample_weight, samples)
    task = SupervisedRule(rule, random_cuts, n_classes, min_leaf, min_weight)
    # Where the gain decides nothing (one candidate, one batch, no gain bound) and no
    # candidate grows, the uniform cut skips the sort (rule_cuts.rule_cut_of).
    unsorted = rule == UNIFORM and n_proj == n_batches == 1 and min_gain == -np.inf and not grow
    # What the candidate steps read of the tree (.labels, .rule_cuts), packed once.
    sup = (X, samples, cand, labels, task, state, vals, proj_kind)
    rule_task = (rule, rule_params, min_leaf, proj_params, grow, unsorted)
    unsup = (rule_task, X, samples, cand, pool_v, state, vals)
    # A sorted unsupervised rule chooses a large node's split on ``split_m`` of
    # its rows (``sub``) and then sends all of them down the cut.
    split_m, sub_owned, keys = split_buffers(cfg.split_samples, n, rows, workspace, unsorted)
    unsup_sub = (rule_task, X, borrowed(sub_owned), cand, pool_v, state, vals)
    if facts is not None:  # a regressor's X: some candidates are cut from sums (.columns)
        sums_owned = sums_scratch(facts, X.shape[1])
        facts_v, sums = borrowed((facts, sums_owned))
    else:  # kernels without facts hold none of it
        facts_v = sums = sums_owned = None
    # The candidate loop stays written out here: as a function of its own
    # (called, or inlined by numba) it slows small-node trees (docs/engine.md).
    while top > 0:
        top -= 1
        node, n_nodes = n_nodes, n_nodes + 1
        # n_const: features known constant in the node: axis candidates never draw them
        # (cand.perm[:n_const]); with facts, sparse ones made of them are skipped (cand.known)
        lo, hi, depth, node_batches, size, n_const = open_node(
            stack[top], node, left, right, node_lo, node_hi, n_node, proj_ptr, nnz, counts, samples
        )
        by, bt, out = borrowed(y), borrowed(targets), value[node]
        if supervised and node_value(by, bt, sample_weight, samples, lo, hi, n_classes, out):
            continue  # pure node, or every target equal
        if is_leaf(X, samples, lo, hi, size, min_split, min_leaf, max_depth, depth):
            continue  # too small or deep, or copies of one point (drawn by the bootstrap)
        if supervised:
            gather_node(by, bt, sample_weight, counts, samples, lo, hi, n_classes, out, labels)
        best_j, best_score, best_gain, best_thr, width, grown = -1, -np.inf, -np.inf, 0.0, 0, False
        project_best = False  # the best was cut from sums: its values are not in z_best
        # A node larger than split_m chooses its split on the n_drawn rows in sub_owned.
        n_drawn = sampled_rows(X, samples, lo, hi, split_m, sub_owned, keys, min_leaf, state)
        ev, ev_lo, ev_hi = (unsup_sub, 0, n_drawn) if n_drawn > 0 else (unsup, lo, hi)
        for _batch in range(node_batches):
            # Redraw candidates while no projection has shown structure (gain > 0).
            k = draw_candidates(proj_kind, proj_params, n_proj, cand, n_const, state)
            for j in range(k):
                # The candidate in ``g_idx/g_w[:gw]``, where it may grow.
                start, end = cand_ptr[j], cand_ptr[j + 1]
                gw = copy_projection(cand_idx, cand_w, start, end, g_idx, g_w)
                projected = True  # its values are in z_cur (not so if cut from sums)
                if supervised:
                    thr, score, g, projected, n_const = supervised_candidate(
                        facts_v, sums, sup, lo, hi, node, j, n_const, z_cur
                    )
                elif workspace is not None:
                    project_samples(X, ev[2], ev_lo, ev_hi, cand_idx, cand_w, start, end, z_cur)
                    drawn = gw
                    thr, score, g, gw = rule_cut_of(
                        ev, ev_lo, ev_hi, z_cur, gw, borrowed(workspace)
                    )
                    grown = grown or gw != drawn
                if score > best_score:  # an invalid cut scores -inf
                    best_score, best_gain, best_j, best_thr = score, g, j, thr
                    if projected:  # swap the buffers: the winner's values are never copied
                        z_best, z_cur = z_cur, z_best
                    project_best = not projected  # cut from sums: projected once it has won
                    # Keep the winner where the next batch cannot overwrite it.
                    width = copy_projection(g_idx, g_w, 0, gw, cand.win_idx, cand.win_w)
            if best_gain > 0.0 or (grown and _batch >= proj_params[SLOT_GROWN_REDRAWS]):
                break  # structure found, or grown candidates redrawn enough
        # Chosen on a sample: its gain scaled to the node, the winner projected on all rows.
        best_gain, project_best = node_gain(best_gain, project_best, hi - lo, n_drawn)
        if best_j < 0 or best_gain <= min_gain:
            continue
        if project_best:
            project_samples(X, samples, lo, hi, cand.win_idx, cand.win_w, 0, width, z_best)
        proj_idx, proj_w, nnz = store_projection(
            proj_ptr, proj_idx, proj_w, node, nnz, cand.win_idx, cand.win_w, width
        )
        threshold[node], gain[node] = best_thr, best_gain
        batches = child_batches(n_batches, node_batches, best_gain, decay_batches)
        mid = partition(samples, z_best, lo, hi, best_thr, vals.part_buf)
        # Push right first so the left subtree is built (and numbered) first.
        top = push(stack, top, mid, hi, depth + 1, node, 0, batches, n_const)
        top = push(stack, top, lo, mid, depth + 1, node, 1, batches, n_const)
    tree_arrays = (left, right, threshold, proj_ptr, proj_idx, proj_w, n_node, gain, value)
    tree, sample_leaf = finish_tree(tree_arrays, n_nodes, nnz, node_lo, node_hi, n)
    keep_alive((owned, pool, sums_owned, sub_owned, keys))
    return tree, rows, sample_leaf
