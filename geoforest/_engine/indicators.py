"""Cuts of sparse candidates of one or two 0/1 columns from per-node sums: no projection.

On one-hot tabular data most candidates of a sparse regression forest are one
indicator column or two.  Such a candidate's cut is fixed by the node's rows
where its columns are 1: their weight, weighted target sum and multiplicity,
against the node's totals.  A node's rows hold few ones (a one-hot variable
sets one column per row), so one pass over the node's rows, each adding
itself to the sums of its own ones (:func:`node_ones_sums`), gives every
indicator's sums at once: ``m x (ones per row)`` additions instead of a
projection, a test for constant values and a pass of the few-level cut of
:mod:`.labels` (``m`` reads each) per candidate.  One indicator is then
scored in constant time (:func:`indicator_cut`); two from the rows where
both are 1, found by walking the shorter of their lists of rows
(:func:`node_ones_lists`, :func:`pair_cut`).

The ones are listed row by row once per fit (``columns.ColumnFacts``).  The
node's scratch ``ones`` is ``(sums, starts, at)``: ``sums`` ``(4, p)``
float64 (per indicator: weight, weighted target sum, multiplicity and rows
where it is 1), ``starts`` ``(p + 1)`` and ``at`` (one entry per one) int64,
the lists.  ``node_rows`` is ``(t_node, w_node, c_node)`` of the tree's
``labels.LabelBuffers``, ``side_limits`` ``(min_leaf, min_weight)``.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .cuts import midpoint


@njit(nogil=True, cache=True)
def node_ones_sums(facts, samples, lo, hi, node_rows, ones):
    """Per indicator, the weight, weighted (centred) target and multiplicity of
    the node's rows ``samples[lo:hi]`` where it is 1, and the number of such
    rows, into ``ones[0]``; returns the node's totals ``(weight, target sum,
    multiplicity)``.

    Each indicator's sums add its rows in node order, as the few-level cut
    adds a value's rows (``labels._few_level_squared_error_cut``).
    """
    sums = ones[0]
    t_node, w_node, c_node = node_rows
    ptr, idx = facts.ones_ptr, facts.ones_idx
    p = sums.shape[1]
    for a in range(4):
        for f in range(p):
            sums[a, f] = 0.0
    weight = total = size = 0.0
    for i in range(hi - lo):
        r = samples[lo + i]
        w = w_node[i]
        wt = w * t_node[i, 0]
        c = c_node[i]
        weight += w
        total += wt
        size += c
        for q in range(ptr[r], ptr[r + 1]):
            f = idx[q]
            sums[0, f] += w
            sums[1, f] += wt
            sums[2, f] += c
            sums[3, f] += 1.0
    return weight, total, size


@njit(nogil=True, cache=True)
def node_ones_lists(facts, samples, lo, hi, ones):
    """Each indicator's rows of the node where it is 1, as positions in node
    order: ``at[starts[f]:starts[f + 1]]`` (``_, starts, at = ones``), from
    the counts of :func:`node_ones_sums`."""
    sums, starts, at = ones
    ptr, idx = facts.ones_ptr, facts.ones_idx
    p = sums.shape[1]
    acc = 0
    for f in range(p):
        starts[f] = acc
        acc += np.int64(sums[3, f])
    starts[p] = acc
    for i in range(hi - lo):  # each list in node order
        r = samples[lo + i]
        for q in range(ptr[r], ptr[r + 1]):
            f = idx[q]
            at[starts[f]] = i
            starts[f] += 1
    for f in range(p - 1, 0, -1):  # each entry moved past its list: back to its start
        starts[f] = starts[f - 1]
    starts[0] = 0


@njit(nogil=True, cache=True, inline="always")
def _score(s_left, w_left, s_right, w_right, parent):
    return s_left * s_left / w_left + s_right * s_right / w_right - parent


@njit(nogil=True, cache=True, inline="always")
def indicator_cut(ones, f, sign, m, totals, side_limits):
    """``(constant, threshold, gain)`` of the candidate ``sign * X[:, f]``
    (``f`` an indicator) at a node of ``m`` rows whose ``totals`` are those
    of :func:`node_ones_sums`.

    ``constant``: the column holds one value over the node's rows (no cut);
    ``gain == -inf``: the one cut breaks ``min_leaf`` or ``min_weight``.  The
    gain is the squared-error cut's of :mod:`.labels` (its formula, with the
    side of the zeros summed as the totals less the ones).
    """
    sums = ones[0]
    weight, total, size = totals
    min_leaf, min_weight = side_limits
    n_ones = sums[3, f]
    if n_ones == 0.0 or n_ones == m:
        return True, np.nan, -np.inf
    w1, s1, c1 = sums[0, f], sums[1, f], sums[2, f]
    w0, s0, c0 = weight - w1, total - s1, size - c1
    if c0 < min_leaf or c1 < min_leaf:
        return False, np.nan, -np.inf
    if not (w0 > 0.0 and w1 > 0.0 and min(w0, w1) >= min_weight):
        return False, np.nan, -np.inf
    parent = total * total / weight
    one = np.float64(np.float32(sign))  # the ones' projected value, 0.0 + w * 1
    if one > 0.0:
        return False, midpoint(0.0, one), _score(s0, w0, s1, w1, parent)
    return False, midpoint(one, 0.0), _score(s1, w1, s0, w0, parent)


@njit(nogil=True, cache=True)
def pair_cut(X, samples, lo, m, idx, w, start, ones, node_rows, totals, tab, side_limits):
    """``(constant, threshold, gain)`` of the candidate ``idx/w[start:start + 2]``
    (two indicators ``a``, ``b`` with signs ``sa``, ``sb``) from the node's
    sums and the rows where both are 1, found in the shorter of the two lists
    of :func:`node_ones_lists` by reading the other column there.

    Its values are at most four: 0, ``sa``, ``sb`` and ``sa + sb``; each one's
    weight, target sum and multiplicity follow from the sums of ``a``'s ones,
    ``b``'s ones and both's.  The cuts between consecutive values are scored
    as the few-level cut of :mod:`.labels` scores its levels.  ``tab`` is a
    scratch of 16 floats.
    """
    sums, starts, at = ones
    t_node, w_node, c_node = node_rows
    weight, total, size = totals
    min_leaf, min_weight = side_limits
    a, b = idx[start], idx[start + 1]
    short, other = (a, b) if sums[3, a] <= sums[3, b] else (b, a)
    bw = bs = bc = bn = 0.0
    for q in range(starts[short], starts[short + 1]):
        i = at[q]
        if X[samples[lo + i], other] == 1.0:
            wi = w_node[i]
            bw += wi
            bs += wi * t_node[i, 0]
            bc += c_node[i]
            bn += 1.0
    va = np.float64(w[start])
    vb = np.float64(w[start + 1])
    # Each cell's weight, target sum, multiplicity and rows: a only, b only, neither.
    aw, as_, ac, an = sums[0, a] - bw, sums[1, a] - bs, sums[2, a] - bc, sums[3, a] - bn
    ow, os_, oc, on = sums[0, b] - bw, sums[1, b] - bs, sums[2, b] - bc, sums[3, b] - bn
    nw, ns, nc = weight - aw - ow - bw, total - as_ - os_ - bs, size - ac - oc - bc
    nn = m - an - on - bn
    k = 0
    for v, cw, cs, cc, cn in (
        (0.0, nw, ns, nc, nn),
        (va, aw, as_, ac, an),
        (vb, ow, os_, oc, on),
        (va + vb, bw, bs, bc, bn),
    ):
        if cn == 0.0:
            continue
        lev = k
        for e in range(k):  # a value met before (``sa == sb``): one level
            if tab[e] == v:
                lev = e
        if lev == k:
            tab[k], tab[4 + k], tab[8 + k], tab[12 + k] = v, 0.0, 0.0, 0.0
            k += 1
        tab[4 + lev] += cw
        tab[8 + lev] += cs
        tab[12 + lev] += cc
    if k < 2:
        return True, np.nan, -np.inf
    for e in range(1, k):  # levels in increasing value
        g = e
        while g > 0 and tab[g - 1] > tab[g]:
            for col in (0, 4, 8, 12):
                tab[col + g - 1], tab[col + g] = tab[col + g], tab[col + g - 1]
            g -= 1
    parent = total * total / weight
    w_left = s_left = n_left = 0.0
    best, best_gain = -1, -np.inf
    for e in range(k - 1):
        w_left += tab[4 + e]
        s_left += tab[8 + e]
        n_left += tab[12 + e]
        w_right = weight - w_left
        if n_left < min_leaf or size - n_left < min_leaf:
            continue
        if not (w_left > 0.0 and w_right > 0.0 and min(w_left, w_right) >= min_weight):
            continue
        gain = _score(s_left, w_left, total - s_left, w_right, parent)
        if gain > best_gain:
            best, best_gain = e, gain
    if best < 0:
        return False, np.nan, -np.inf
    return False, midpoint(tab[best], tab[best + 1]), best_gain
