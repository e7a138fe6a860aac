"""What a regression tree knows of ``X``'s columns before it grows, and the
cuts of single columns read from it rather than projected.

Tabular columns are often indicators (0/1) or hold few distinct values
(ages, counts, years, a handful of sizes).  :func:`column_facts` finds them
once per fit: the indicators set in each row (a CSR of the ones, read by
:mod:`.indicators`), and for every other column of at most
:data:`MAX_CODED_LEVELS` distinct values those values in increasing order and
each row's level among them (a ``uint16`` code).  A sparse candidate of one
coded column is then cut from per-level sums over the node's rows
(:func:`level_cut`): one read of a code and three additions per row, no
projection, no sort.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.core import types
from numba.extending import overload

from .._jit import njit
from .cuts import midpoint
from .indicators import indicator_cut, node_ones_lists, node_ones_sums, pair_cut
from .projections import known_constant, mark_known

#: Most distinct values of a column given level codes (``uint16``); a node
#: uses them only when it has at least as many rows as the column has levels.
MAX_CODED_LEVELS = 1024


#: A column is coded only if it has at most one value per ``LEVEL_SHARE`` rows:
#: its levels are then few enough to cut nodes four levels below the root;
#: a column of nearly distinct values would only ever be cut so at the root.
LEVEL_SHARE = 16

#: Rows whose values :func:`column_facts` counts before sorting a whole column.
_PROBE = 4 * MAX_CODED_LEVELS


class ColumnFacts(NamedTuple):
    """A fit's facts about the columns of its ``X`` (:func:`column_facts`)."""

    is_ind: np.ndarray  # uint8 (p): the column holds only 0 and 1
    ones_ptr: np.ndarray  # int64 (n + 1): row r's indicators set are ones_idx[ptr[r]:ptr[r + 1]]
    ones_idx: np.ndarray  # int32, increasing within a row
    n_levels: np.ndarray  # int32 (p): distinct values of a coded column, 0 if not coded
    code_row: np.ndarray  # int64 (p): the column's row of ``codes`` (-1: not coded)
    level_ptr: np.ndarray  # int64 (p + 1): its values are level_values[ptr[f]:ptr[f + 1]]
    level_values: np.ndarray  # float64, increasing within a column
    codes: np.ndarray  # uint16 (coded columns, n): each row's level


def column_facts(X: np.ndarray) -> ColumnFacts:
    """The :class:`ColumnFacts` of float ``X`` (``n x p``, finite).

    Indicators are the columns whose values are all 0 or 1 (a column of one
    of them included); other columns of 2 to :data:`MAX_CODED_LEVELS`
    distinct values, and at most one per :data:`LEVEL_SHARE` rows, get level
    codes.
    """
    n, p = X.shape
    is_ind = np.zeros(p, dtype=np.uint8)
    n_levels = np.zeros(p, dtype=np.int32)
    code_row = np.full(p, -1, dtype=np.int64)
    values, codes = [], []
    for f in range(p):
        col = X[:, f]
        if np.unique(col[:_PROBE]).size > MAX_CODED_LEVELS:
            continue  # too many values already in the first rows: no full sort
        u, inv = np.unique(col, return_inverse=True)
        if np.all((u == 0) | (u == 1)):
            is_ind[f] = 1
        elif 2 <= u.size <= min(MAX_CODED_LEVELS, n // LEVEL_SHARE):
            n_levels[f] = u.size
            code_row[f] = len(codes)
            values.append(u.astype(np.float64))
            codes.append(inv.reshape(-1).astype(np.uint16))
    ones = X[:, is_ind.astype(bool)] == 1
    ind_cols = np.flatnonzero(is_ind).astype(np.int32)
    ones_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(ones.sum(axis=1), out=ones_ptr[1:])
    rows, cols = np.nonzero(ones)  # row-major: each row's columns increasing
    level_ptr = np.zeros(p + 1, dtype=np.int64)
    np.cumsum(n_levels, out=level_ptr[1:])
    return ColumnFacts(
        is_ind=is_ind,
        ones_ptr=ones_ptr,
        ones_idx=ind_cols[cols] if rows.size else np.zeros(0, dtype=np.int32),
        n_levels=n_levels,
        code_row=code_row,
        level_ptr=level_ptr,
        level_values=np.concatenate(values) if values else np.zeros(0),
        codes=np.stack(codes) if codes else np.zeros((0, n), dtype=np.uint16),
    )


@njit(nogil=True, cache=True)
def level_cut(facts, f, sign, samples, lo, m, node_rows, tab, side_limits):
    """``(constant, threshold, gain)`` of the candidate ``sign * X[:, f]`` (``f``
    a coded column of ``facts``, a :class:`ColumnFacts`) at a node of ``m``
    rows ``samples[lo:lo + m]``, from per-level sums; ``node_rows`` is
    ``(t_node, w_node, c_node)`` of the tree's ``labels.LabelBuffers``,
    ``side_limits`` ``(min_leaf, min_weight)``.

    One pass adds each row's weight, weighted (centred) target and
    multiplicity to its level's entry of ``tab`` (float64, at least
    ``4 x MAX_CODED_LEVELS``); the cuts between consecutive non-empty levels,
    in the order of the projected values (``sign < 0``: decreasing levels),
    are then scored as the few-level cut of :mod:`.labels` scores its table
    (the same sums in the same order: for at most 8 levels the same bits).
    ``constant``: one level holds every row.  ``gain == -inf``: no cut keeps
    ``min_leaf`` rows and ``min_weight`` on both sides.
    """
    t_node, w_node, c_node = node_rows
    min_leaf, min_weight = side_limits
    n_lev = facts.n_levels[f]
    codes = facts.codes[facts.code_row[f]]
    first = facts.level_ptr[f]
    lw, ls, lc = 0, MAX_CODED_LEVELS, 2 * MAX_CODED_LEVELS
    for e in range(n_lev):
        tab[lw + e] = 0.0
        tab[ls + e] = 0.0
        tab[lc + e] = 0.0
    for i in range(m):
        e = np.int64(codes[samples[lo + i]])
        w = w_node[i]
        tab[lw + e] += w
        tab[ls + e] += w * t_node[i, 0]
        tab[lc + e] += c_node[i]
    step = 1 if sign > 0.0 else -1
    start = 0 if sign > 0.0 else n_lev - 1
    weight = total = size = 0.0
    filled = 0
    for a in range(n_lev):
        e = start + step * a
        if tab[lc + e] > 0.0:
            weight += tab[lw + e]
            total += tab[ls + e]
            size += tab[lc + e]
            filled += 1
    if filled < 2:
        return True, np.nan, -np.inf
    parent = total * total / weight if weight > 0.0 else 0.0
    w_left = s_left = n_left = 0.0
    best, best_next, best_gain = -1, -1, -np.inf
    prev = -1
    for a in range(n_lev):
        e = start + step * a
        if tab[lc + e] == 0.0:
            continue
        if prev >= 0:  # the cut between level ``prev`` (and all before it) and ``e``
            w_right = weight - w_left
            if n_left >= min_leaf and size - n_left >= min_leaf:
                if w_left > 0.0 and w_right > 0.0 and min(w_left, w_right) >= min_weight:
                    s_right = total - s_left
                    gain = s_left * s_left / w_left + s_right * s_right / w_right - parent
                    if gain > best_gain:
                        best, best_next, best_gain = prev, e, gain
        w_left += tab[lw + e]
        s_left += tab[ls + e]
        n_left += tab[lc + e]
        prev = e
    if best < 0:
        return False, np.nan, -np.inf
    s = np.float64(np.float32(sign))
    a_val = s * facts.level_values[first + best]
    b_val = s * facts.level_values[first + best_next]
    return False, midpoint(a_val, b_val), best_gain


class SumsScratch(NamedTuple):
    """A tree's scratch for the cuts from sums (:func:`sums_scratch`)."""

    ones: tuple  # (sums, starts, at) of a node's ones (.indicators)
    pair_tab: np.ndarray  # float64 (16): a pair's cells
    level_tab: np.ndarray  # float64 (3 MAX_CODED_LEVELS): a column's per-level sums
    node: np.ndarray  # float64 (5): the node whose ones are summed, listed; its totals


@njit(nogil=True, cache=True)
def sums_scratch(facts, p):
    """The :class:`SumsScratch` of a tree on ``p`` features and ``facts``."""
    n_ones = facts.ones_idx.shape[0]
    ones = (np.empty((4, p)), np.empty(p + 1, np.int64), np.empty(n_ones, np.int64))
    node = np.full(5, -1.0)
    return SumsScratch(ones, np.empty(16), np.empty(3 * MAX_CODED_LEVELS), node)


@njit(nogil=True, cache=True, inline="always")
def _ones_cut(facts, X, samples, lo, hi, node, cand, start, nnz, scratch, rows, limits):
    """The cut of one or two indicators (:func:`cut_from_sums`), from the node's
    sums of its ones and, for two, the lists of their rows, made at the
    node's first candidate that needs them (``scratch.node`` says for which
    node)."""
    m = hi - lo
    ones, at = scratch.ones, scratch.node
    if at[0] != node:
        at[2], at[3], at[4] = node_ones_sums(facts, samples, lo, hi, rows, ones)
        at[0] = node
    totals = (at[2], at[3], at[4])
    if nnz == 1:
        return indicator_cut(ones, cand.idx[start], cand.w[start], m, totals, limits)
    if at[1] != node:
        node_ones_lists(facts, samples, lo, hi, ones)
        at[1] = node
    return pair_cut(
        X, samples, lo, m, cand.idx, cand.w, start, ones, rows, totals, scratch.pair_tab, limits
    )


@njit(nogil=True, cache=True, inline="always")
def _cut_from_sums(facts, X, samples, lo, hi, node, cand, j, n_const, scratch, buf, task):
    """``(found, n_const, threshold, gain)`` of sparse candidate ``j`` of
    ``cand`` (the tree's ``buffers.Candidates``) at node ``node`` (rows
    ``samples[lo:hi]``) where it can be cut without projecting it.

    ``found``: the candidate is one of those (its every feature known constant
    in the node, ``projections.known_constant``; one or two indicators,
    :mod:`.indicators`; one column of at most ``m`` coded values,
    :func:`level_cut`); the threshold and gain are then its cut, as
    ``labels.supervised_cut`` would give it (gain ``-inf``: none).  A
    candidate found constant has its constant features marked
    (``projections.mark_known``), and ``n_const`` counts them.  ``buf`` is
    the tree's ``labels.LabelBuffers``, ``task`` its ``labels.SupervisedRule``.
    """
    start, end = cand.ptr[j], cand.ptr[j + 1]
    if known_constant(cand, j, n_const):
        return True, n_const, np.nan, -np.inf
    m = hi - lo
    f0, nnz = cand.idx[start], end - start
    rows, limits = (buf.t_node, buf.w_node, buf.c_node), (task.min_leaf, task.min_weight)
    if nnz == 1 and 0 < facts.n_levels[f0] <= m:  # one column of few values
        constant, thr, gain = level_cut(
            facts, f0, cand.w[start], samples, lo, m, rows, scratch.level_tab, limits
        )
    elif nnz > 2 or facts.is_ind[f0] == 0 or (nnz == 2 and facts.is_ind[cand.idx[start + 1]] == 0):
        return False, n_const, np.nan, -np.inf
    else:
        constant, thr, gain = _ones_cut(
            facts, X, samples, lo, hi, node, cand, start, nnz, scratch, rows, limits
        )
    if constant:  # its features are not projected below
        n_const = mark_known(X, samples, lo, hi, cand, j, n_const)
    return True, n_const, thr, gain


def cut_from_sums(facts, X, samples, lo, hi, node, cand, j, n_const, scratch, buf, task):
    """:func:`_cut_from_sums` where ``facts`` are, else ``(False, n_const,
    nan, -inf)`` (kernels only).

    Chosen by the type of ``facts`` when numba compiles the caller: a kernel
    without facts (``None``) holds none of the cuts from sums.  A type
    dispatch rather than an ``is None`` test inside an inlined function,
    which numba 0.60, the declared minimum, does not prune (it types the
    branch).
    """
    raise NotImplementedError("cut_from_sums is called from numba kernels only")


@overload(cut_from_sums, inline="always", jit_options={"nogil": True})
def _cut_from_sums_typed(facts, X, samples, lo, hi, node, cand, j, n_const, scratch, buf, task):
    if isinstance(facts, types.NoneType):

        def no_facts(facts, X, samples, lo, hi, node, cand, j, n_const, scratch, buf, task):
            return False, n_const, np.nan, -np.inf

        return no_facts

    def with_facts(facts, X, samples, lo, hi, node, cand, j, n_const, scratch, buf, task):
        return _cut_from_sums(facts, X, samples, lo, hi, node, cand, j, n_const, scratch, buf, task)

    return with_facts


def mark_known_with(facts, X, samples, lo, hi, cand, j, n_const):
    """``projections.mark_known`` where ``facts`` are (their sparse candidates
    skip known constants), else ``n_const`` as it is (kernels only; chosen by
    the type of ``facts``, as :func:`cut_from_sums`)."""
    raise NotImplementedError("mark_known_with is called from numba kernels only")


@overload(mark_known_with, inline="always", jit_options={"nogil": True})
def _mark_known_with_typed(facts, X, samples, lo, hi, cand, j, n_const):
    if isinstance(facts, types.NoneType):

        def no_facts(facts, X, samples, lo, hi, cand, j, n_const):
            return n_const

        return no_facts

    def with_facts(facts, X, samples, lo, hi, cand, j, n_const):
        return mark_known(X, samples, lo, hi, cand, j, n_const)

    return with_facts
