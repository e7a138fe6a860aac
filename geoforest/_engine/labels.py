"""The supervised tasks' steps of the node loop: what a node's rows carry.

Classification trees (``n_classes > 0``) carry each row's int32 label,
regression trees its float64 targets (one row of ``targets`` per row of
``X``); both carry the row's weight and bootstrap multiplicity.  Per node,
:func:`node_value` records the node's value (weighted class counts, or
weighted mean targets) and says whether anything is left to explain;
:func:`gather_node` copies the node's labels or centred targets once.  Per
candidate projection, :func:`supervised_cut` argsorts the projected values,
carries labels or targets, weights and multiplicities into that order and
asks the task's split rule for the best cut (``splits.best_class_cut``,
``splits.best_regression_cut``), or, with random cuts (``splitter="random"``),
scores one threshold drawn in the node's range without sorting.  The builder
calls them only for supervised trees.  The per-node arrays travel as one
:class:`LabelBuffers` and the cut's settings as one :class:`SupervisedRule`,
both made once per tree and read by field name.

The builder's step for one candidate is :func:`supervised_candidate`: cut
from sums where a regressor's column facts allow it (``columns``), else
projected and cut by :func:`supervised_cut`, one call per such candidate.
Everything that calls (the sort, the split rules) and the per-node steps are
inlined by numba (``inline="always"``): a node holds a dozen rows on average,
and as calls with a dozen array arguments each they cost more than the work.
:func:`supervised_cut` itself stays a call: inlined into the builder it would
make the builder's compile, paid by every cold start, much longer for little
speed (``docs/engine.md`` has the figures).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit
from .columns import cut_from_sums, mark_known_with
from .nodes import is_constant
from .projections import AXIS, mark_constants, project_samples
from .sorting import sort_pairs
from .splits import (
    SQUARED_ERROR,
    best_class_cut,
    best_regression_cut,
    midpoint,
    random_class_cut,
    random_regression_cut,
)


@njit(nogil=True, cache=True, inline="always")
def _node_counts(y, sample_weight, samples, lo, hi, out):
    """Weighted class counts of ``samples[lo:hi]`` into ``out``; returns #classes present."""
    out[:] = 0.0
    for s in range(lo, hi):
        row = samples[s]
        out[y[row]] += sample_weight[row]
    present = 0
    for k in range(out.shape[0]):
        if out[k] > 0.0:
            present += 1
    return present


@njit(nogil=True, cache=True, inline="always")
def _node_labels(y, sample_weight, counts, samples, lo, hi, buf):
    """Labels, weights and multiplicities of ``samples[lo:hi]`` into ``buf``, once per node."""
    y_node, w_node, c_node = buf.y_node, buf.w_node, buf.c_node
    for i in range(hi - lo):
        row = samples[lo + i]
        y_node[i] = y[row]
        w_node[i] = sample_weight[row]
        c_node[i] = counts[row]


@njit(nogil=True, cache=True, inline="always")
def _node_means(targets, sample_weight, samples, lo, hi, out):
    """Weighted mean targets of ``samples[lo:hi]`` into ``out``; returns whether
    every sample has the same targets (nothing left to explain)."""
    n_out = out.shape[0]
    for k in range(n_out):
        out[k] = 0.0
    weight = 0.0
    first = samples[lo]
    same = True
    for s in range(lo, hi):
        row = samples[s]
        w = sample_weight[row]
        weight += w
        for k in range(n_out):
            out[k] += w * targets[row, k]
            same = same and targets[row, k] == targets[first, k]
    if weight > 0.0:
        for k in range(n_out):
            out[k] /= weight
    return same


@njit(nogil=True, cache=True, inline="always")
def _node_targets(targets, sample_weight, counts, samples, lo, hi, mean, buf):
    """Targets centred on the node's ``mean``, weights and multiplicities of
    ``samples[lo:hi]`` into ``buf``, gathered once per node."""
    t_node, w_node, c_node = buf.t_node, buf.w_node, buf.c_node
    for i in range(hi - lo):
        row = samples[lo + i]
        for k in range(mean.shape[0]):
            t_node[i, k] = targets[row, k] - mean[k]
        w_node[i] = sample_weight[row]
        c_node[i] = counts[row]


class LabelBuffers(NamedTuple):
    """A supervised tree's per-node rows and argsort scratch, made once per tree.

    The ``*_node`` fields hold the node's rows in the node's order
    (:func:`gather_node`), the ``*_sorted`` ones the same rows in the order of
    a candidate's sorted values (:func:`sort_carrying`).  The steps read them
    by name: several share a dtype and length, and swapped positions would
    run without a sound.  Arrays a task does not read have length 0 (labels
    of a regression tree, targets of a classification tree; all of them for
    an unsupervised tree).
    """

    y_node: np.ndarray  # int32 labels
    t_node: np.ndarray  # float64 (m, n_outputs) targets, centred on the node's mean
    w_node: np.ndarray  # float64 weights
    c_node: np.ndarray  # int32 bootstrap multiplicities
    order: np.ndarray  # int64 argsort of the candidate's values
    y_sorted: np.ndarray
    t_sorted: np.ndarray
    w_sorted: np.ndarray
    c_sorted: np.ndarray
    scratch: np.ndarray  # float64, 2 * max(n_classes, n_outputs): the split rules' sums
    levels: np.ndarray  # float64 (4 MAX_LEVELS): a few-level candidate's values, counts, sums


#: Most distinct values a candidate may have for the counting sort
#: (:func:`_few_levels`): a binary one-hot column has 2, a sparse projection
#: of three of them at most 7.
MAX_LEVELS = 8
#: Fewest values the counting sort takes: smaller nodes go to the argsort's
#: sorting networks, which are as fast there and leave small nodes' trees as
#: they were.
COUNT_MIN = 32


@njit(nogil=True, cache=True, inline="always")
def _level_index(levels, k, v):
    """Where value ``v`` is among the distinct values ``levels[:k]`` (``k``: not yet)."""
    lev = 0
    while lev < k and levels[lev] != v:
        lev += 1
    return lev


@njit(nogil=True, cache=True, inline="always")
def _few_levels(z_cur, m, row_level, buf):
    """Find ``z_cur[:m]``'s distinct values if there are at most :data:`MAX_LEVELS`.

    Returns their number ``k``, or 0 as soon as one value too many shows up
    (a candidate of many values costs a few dozen reads).  Then
    ``row_level[i]`` holds row ``i``'s level (its value's index in
    ``buf.levels[:k]``, in order of first appearance) and
    ``buf.levels[MAX_LEVELS + lev]`` where level ``lev``'s first row goes in
    sorted order (floats: one scratch array, one argument less per call).
    """
    levels = buf.levels
    nxt, cnt = MAX_LEVELS, 2 * MAX_LEVELS  # starts, counts
    k = 0
    for i in range(m):
        v = z_cur[i]
        lev = _level_index(levels, k, v)
        if lev == k:
            if k == MAX_LEVELS:
                return 0
            levels[k] = v
            levels[cnt + k] = 0.0
            k += 1
        levels[cnt + lev] += 1.0
        row_level[i] = lev
    for a in range(k):  # a level starts after every smaller level's rows
        start = 0.0
        for b in range(k):
            if levels[b] < levels[a]:
                start += levels[cnt + b]
        levels[nxt + a] = start
    return k


@njit(nogil=True, cache=True, inline="always")
def _few_level_squared_error_cut(z_cur, m, buf, min_leaf, min_weight):
    """The squared-error cut of a one-output candidate with at most
    :data:`MAX_LEVELS` distinct values, from per-value sums: no sort.

    One pass adds each row's weight, weighted (centred) target and
    multiplicity to its value's entry (giving up, ``found = False``, at one
    value too many); the cuts between consecutive values are then scored
    from the entries' running sums, as :func:`~.splits.best_regression_cut`
    scores them from the sorted rows' (the same formula; sums in another
    order, so a gain can differ in its last bits).  Returns ``(found,
    threshold, score, gain)``.
    """
    t_node, w_node, c_node = buf.t_node, buf.w_node, buf.c_node
    tab = buf.levels  # values, weights, weighted sums, multiplicities
    vals, lw, ls, lc = 0, MAX_LEVELS, 2 * MAX_LEVELS, 3 * MAX_LEVELS
    k = 0
    for i in range(m):
        v = z_cur[i]
        lev = _level_index(tab, k, v)  # the values are the table's first column
        if lev == k:
            if k == MAX_LEVELS:
                return False, np.nan, -np.inf, -np.inf
            tab[vals + k], tab[lw + k], tab[ls + k], tab[lc + k] = v, 0.0, 0.0, 0.0
            k += 1
        w = w_node[i]
        tab[lw + lev] += w
        tab[ls + lev] += w * t_node[i, 0]
        tab[lc + lev] += c_node[i]
    # Entries in increasing value order (insertion sort of at most 8), then
    # the scan of the sorted rule over them.
    for a in range(1, k):
        b = a
        while b > 0 and tab[vals + b - 1] > tab[vals + b]:
            for col in (vals, lw, ls, lc):
                tab[col + b - 1], tab[col + b] = tab[col + b], tab[col + b - 1]
            b -= 1
    weight = total = size = 0.0
    for a in range(k):
        weight += tab[lw + a]
        total += tab[ls + a]
        size += tab[lc + a]
    parent = total * total / weight if weight > 0.0 else 0.0
    w_left = s_left = n_left = 0.0
    best, best_gain = -1, -np.inf
    for a in range(k - 1):
        w_left += tab[lw + a]
        s_left += tab[ls + a]
        n_left += tab[lc + a]
        w_right = weight - w_left
        if n_left < min_leaf or size - n_left < min_leaf:
            continue
        if not (w_left > 0.0 and w_right > 0.0 and min(w_left, w_right) >= min_weight):
            continue
        s_right = total - s_left
        gain = s_left * s_left / w_left + s_right * s_right / w_right - parent
        if gain > best_gain:
            best, best_gain = a, gain
    if best < 0:
        return True, np.nan, -np.inf, -np.inf
    return True, midpoint(tab[vals + best], tab[vals + best + 1]), best_gain, best_gain


@njit(nogil=True, cache=True, inline="always")
def _sorted_order(z_cur, m, z_sorted, buf):
    """``z_sorted[:m]``: ``z_cur[:m]`` sorted; ``buf.order[:m]``: where each came from.

    A candidate of more than :data:`COUNT_MIN` values and at most
    :data:`MAX_LEVELS` distinct ones (one-hot columns and their sparse sums)
    is ordered by counting: rows of equal values keep their order, as under a
    stable sort, in two streaming passes.  Others go to the argsort.
    """
    order = buf.order
    if m > COUNT_MIN and _few_levels(z_cur, m, z_sorted, buf) > 0:
        lv = buf.levels
        for i in range(m):  # z_sorted holds each row's level (_few_levels)
            at = MAX_LEVELS + np.int64(z_sorted[i])
            p = np.int64(lv[at])
            lv[at] = p + 1.0
            order[p] = i
        for p in range(m):
            z_sorted[p] = z_cur[order[p]]
        return
    for i in range(m):
        z_sorted[i] = z_cur[i]
        order[i] = i
    sort_pairs(z_sorted, order, m)


@njit(nogil=True, cache=True, inline="always")
def _sort_with_labels(z_cur, m, z_sorted, buf):
    """Sorted values with each sample's label, weight and multiplicity carried along."""
    order, y_node, w_node, c_node = buf.order, buf.y_node, buf.w_node, buf.c_node
    y_sorted, w_sorted, c_sorted = buf.y_sorted, buf.w_sorted, buf.c_sorted
    _sorted_order(z_cur, m, z_sorted, buf)
    for i in range(m):
        j = order[i]
        y_sorted[i] = y_node[j]
        w_sorted[i] = w_node[j]
        c_sorted[i] = c_node[j]


@njit(nogil=True, cache=True, inline="always")
def _sort_with_targets(z_cur, m, z_sorted, buf):
    """Sorted values with each sample's targets, weight and multiplicity carried along."""
    order, t_node, w_node, c_node = buf.order, buf.t_node, buf.w_node, buf.c_node
    t_sorted, w_sorted, c_sorted = buf.t_sorted, buf.w_sorted, buf.c_sorted
    _sorted_order(z_cur, m, z_sorted, buf)
    for i in range(m):
        j = order[i]
        for k in range(t_node.shape[1]):
            t_sorted[i, k] = t_node[j, k]
        w_sorted[i] = w_node[j]
        c_sorted[i] = c_node[j]


@njit(nogil=True, cache=True)
def label_buffers(n, n_classes, n_outputs):
    """The :class:`LabelBuffers` of a tree with ``n`` samples: labels for
    classification (``n_classes > 0``), targets for regression (``n_outputs >
    0``), all empty for an unsupervised tree."""
    m = n if n_classes > 0 or n_outputs > 0 else 0
    mc = n if n_classes > 0 else 0
    mr = n if n_outputs > 0 else 0
    return LabelBuffers(
        y_node=np.empty(mc, dtype=np.int32),
        t_node=np.empty((mr, n_outputs)),
        w_node=np.empty(m),
        c_node=np.empty(m, dtype=np.int32),
        order=np.empty(m, dtype=np.int64),
        y_sorted=np.empty(mc, dtype=np.int32),
        t_sorted=np.empty((mr, n_outputs)),
        w_sorted=np.empty(m),
        c_sorted=np.empty(m, dtype=np.int32),
        scratch=np.empty(2 * max(n_classes, n_outputs, 0)),
        levels=np.empty(4 * MAX_LEVELS),
    )


@njit(nogil=True, cache=True, inline="always")
def node_value(y, targets, sample_weight, samples, lo, hi, n_classes, out):
    """The node's value into ``out`` (weighted class counts, or weighted mean
    targets when ``n_classes == 0``); returns whether nothing is left to explain
    (a single class present, or every target row equal)."""
    if n_classes > 0:
        return _node_counts(y, sample_weight, samples, lo, hi, out) <= 1
    return _node_means(targets, sample_weight, samples, lo, hi, out)


@njit(nogil=True, cache=True, inline="always")
def gather_node(y, targets, sample_weight, counts, samples, lo, hi, n_classes, mean, buf):
    """Labels (or targets centred on the node's ``mean``), weights and
    multiplicities of the node's rows into the :class:`LabelBuffers` ``buf``,
    gathered once per node."""
    if n_classes > 0:
        _node_labels(y, sample_weight, counts, samples, lo, hi, buf)
    else:
        _node_targets(targets, sample_weight, counts, samples, lo, hi, mean, buf)


@njit(nogil=True, cache=True, inline="always")
def sort_carrying(z_cur, m, n_classes, z_sorted, buf):
    """Sorted values with each row's labels (or targets), weight and multiplicity
    carried along, from ``buf``'s ``*_node`` fields to its ``*_sorted`` ones."""
    if n_classes > 0:
        _sort_with_labels(z_cur, m, z_sorted, buf)
    else:
        _sort_with_targets(z_cur, m, z_sorted, buf)


class SupervisedRule(NamedTuple):
    """How a supervised tree cuts: its settings for :func:`supervised_cut`, made once per tree.

    Scalars only: passed per candidate, a tuple of plain values costs no
    reference counting.
    """

    rule: int  # the split rule's code (``splits.RULES``)
    random_cuts: bool  # one random threshold per candidate (extra trees), no sort
    n_classes: int  # > 0: classification; 0: regression
    min_leaf: int  # fewest samples (with multiplicity) on either side
    min_weight: float  # least weight on either side


@njit(nogil=True, cache=True)
def supervised_cut(task, z_cur, m, z_sorted, buf, state):
    """``(threshold, score, gain)`` of one candidate projection's cut, its values
    ``z_cur[:m]`` in the node's row order; ``score == -inf``: no valid cut.

    The best cut of the task's rule over the sorted values, or with
    ``task.random_cuts`` the cut at one threshold drawn uniformly in the node's range
    (extra trees), which needs no sort.  Thresholds lie midway between the two
    training values around the cut.  ``task`` is the tree's
    :class:`SupervisedRule`, ``buf`` its :class:`LabelBuffers`, their
    ``*_node`` fields gathered for the node.
    """
    rule, n_classes, min_leaf, min_weight = (
        task.rule,
        task.n_classes,
        task.min_leaf,
        task.min_weight,
    )
    scratch = buf.scratch
    if task.random_cuts:  # the node's rows in their own order
        y, t, w, c = buf.y_node, buf.t_node, buf.w_node, buf.c_node
        if n_classes > 0:
            return random_class_cut(
                rule, z_cur, y, w, c, m, n_classes, min_leaf, min_weight, scratch, state
            )
        return random_regression_cut(rule, z_cur, t, w, c, m, min_leaf, min_weight, scratch, state)
    if n_classes == 0:
        return sorted_regression_cut(task, z_cur, m, z_sorted, buf)
    sort_carrying(z_cur, m, n_classes, z_sorted, buf)  # the labels' sort
    y, w, c = buf.y_sorted, buf.w_sorted, buf.c_sorted
    pos, score, gain = best_class_cut(
        rule, z_sorted, y, w, c, m, n_classes, min_leaf, min_weight, scratch
    )
    if pos < 0:
        return np.nan, -np.inf, -np.inf
    return midpoint(z_sorted[pos - 1], z_sorted[pos]), score, gain


@njit(nogil=True, cache=True, inline="always")
def sorted_regression_cut(task, z_cur, m, z_sorted, buf):
    """:func:`supervised_cut` of a regression tree at its best threshold (no
    random cuts): from per-value sums where the candidate has at most
    :data:`MAX_LEVELS` values and one output is cut by squared error, else
    over the values sorted with their targets, weights and multiplicities."""
    rule, min_leaf, min_weight = task.rule, task.min_leaf, task.min_weight
    if rule == SQUARED_ERROR and buf.t_node.shape[1] == 1:
        found, thr, score, gain = _few_level_squared_error_cut(z_cur, m, buf, min_leaf, min_weight)
        if found:  # one-hot columns and their sparse combinations
            return thr, score, gain
    _sort_with_targets(z_cur, m, z_sorted, buf)
    t, w, c = buf.t_sorted, buf.w_sorted, buf.c_sorted
    pos, score, gain = best_regression_cut(
        rule, z_sorted, t, w, c, m, min_leaf, min_weight, buf.scratch
    )
    if pos < 0:
        return np.nan, -np.inf, -np.inf
    return midpoint(z_sorted[pos - 1], z_sorted[pos]), score, gain


@njit(nogil=True, cache=True, inline="always")
def supervised_candidate(facts, sums, tree, lo, hi, node, j, n_const, z_cur):
    """``(threshold, score, gain, projected, n_const)`` of supervised candidate
    ``j`` at node ``node`` (rows ``samples[lo:hi]``).

    ``tree`` is ``(X, samples, cand, buf, task, state, vals, proj_kind)``: the
    tree's rows, ``buffers.Candidates``, :class:`LabelBuffers`,
    :class:`SupervisedRule`, random state, ``buffers.ValueScratch`` and
    projection kind.  Cut from sums where ``facts`` (a regressor's
    ``columns.ColumnFacts``, ``sums`` its ``columns.SumsScratch``) allow it
    (``columns.cut_from_sums``; ``projected`` false: its values are not in
    ``z_cur``); otherwise projected into ``z_cur`` and cut by
    :func:`supervised_cut`, unless its values are all equal: then ``score ==
    -inf`` and its constant features are marked, not drawn below in an axis
    forest (``projections.mark_constants``), not projected below where
    ``facts`` are (``projections.mark_known``); ``n_const`` counts them.
    """
    X, samples, cand, buf, task, state, vals, proj_kind = tree
    found, n_const, thr, gain = cut_from_sums(
        facts, X, samples, lo, hi, node, cand, j, n_const, sums, buf, task
    )
    if found:
        return thr, gain, gain, False, n_const
    m = hi - lo
    project_samples(X, samples, lo, hi, cand.idx, cand.w, cand.ptr[j], cand.ptr[j + 1], z_cur)
    if is_constant(z_cur, m):  # no cut between distinct values: no sort
        if proj_kind == AXIS:
            n_const = mark_constants(X, samples, lo, hi, cand, j, n_const)
        else:
            n_const = mark_known_with(facts, X, samples, lo, hi, cand, j, n_const)
        return np.nan, -np.inf, -np.inf, True, n_const
    if task.n_classes == 0 and not task.random_cuts and task.rule == SQUARED_ERROR:
        if buf.t_node.shape[1] == 1:  # few values: cut from per-value sums, compiled in
            found, thr, score, gain = _few_level_squared_error_cut(
                z_cur, m, buf, task.min_leaf, task.min_weight
            )
            if found:
                return thr, score, gain, True, n_const
    thr, score, gain = supervised_cut(task, z_cur, m, vals.z_sorted, buf, state)
    return thr, score, gain, True, n_const
