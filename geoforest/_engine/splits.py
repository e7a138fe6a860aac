"""Split rules: where to cut one node's sorted projected values.

Every rule sees the projected values of a node's samples sorted ascending,
``z[0] <= ... <= z[n - 1]``, and returns ``(pos, score, gain)``:

``pos``
    number of samples sent left, i.e. the cut lies between ``z[pos - 1]`` and
    ``z[pos]``.  Always ``min_leaf <= pos <= n - min_leaf`` and
    ``z[pos - 1] < z[pos]`` (ties are never split); ``-1`` when no cut is valid.
``score``
    what the builder maximises across the node's candidate projections.
``gain``
    the improvement over not splitting (used for the optional ``min_gain``
    stopping rule and for importances).

The builder turns ``pos`` into the threshold ``(z[pos - 1] + z[pos]) / 2``.

Every rule is one :class:`Rule` entry of :data:`RULES`: its integer code, its
name, whether it needs labels, its workspace, its default parameters
(real-valued settings travel in a float64 ``params`` array) and its cut kernel
(in :mod:`.cuts`, or the impurity scan below).  The name maps (``CRITERIA``,
``RANDOM_CUTS``, ``CLASS_CRITERIA``) and :func:`default_params` are read from
the table.  The unsupervised rules are dispatched by *type*: each has its own
workspace class (:func:`make_workspace` gives an instance), and
:func:`best_cut` calls the cut of its workspace's rule, chosen while numba
compiles it, so a process compiles the rules it uses and no others (a first
URerF fit compiled every rule before; ``docs/benchmarks.md``, "Where a cold
start's compile time goes").  The supervised dispatch (:func:`best_class_cut`,
:func:`best_regression_cut`) is an ``if`` chain over the codes, one branch per
entry in table order, checked against the table by
``tests/_engine/test_builder.py``, ending in a ``ValueError`` for any other
code.  ``docs/engine.md`` says how to add a rule.

``FASTBIC`` (0)
    Fast-BIC, the rule of the URerF paper (Madhyastha et al., *Geodesic
    Learning via Unsupervised Decision Forests*), in *gain* form: for every
    cut the two-Gaussian BIC with unequal and with equal variances is compared
    with the one-Gaussian BIC of the node,
    ``gain = BIC_1 - min(BIC_diff, BIC_same)``.
    Within one projection the best cut is the paper's minimum-BIC cut; across
    projections the gain is invariant to each projection's scale.  Variances
    are floored at ``params[0]`` times the node variance so singletons and ties
    cannot produce ``log 0``.

    Departure from the paper, for projections where no cut has a positive gain
    (one Gaussian explains the values better than any two): the paper's
    minimum-BIC cut is then almost always a single extreme point, so on data
    without two-cluster structure (pure noise, or any small enough region of
    real data) trees become chains of depth ~n and fitting costs O(n^2).  Such
    a projection instead offers its two-means cut, scored by
    ``-(SSE_left + SSE_right) / SSE_node`` in ``(-1, 0]``: any projection with
    real structure (positive gain) still wins, and among structureless ones
    the most clearly divisible (uniform-like rather than Gaussian) is cut.
    The reported gain stays the BIC gain (``<= 0``), so the builder can redraw
    candidates first (see ``build_tree``'s ``n_batches``).
``TWOMEANS`` (1)
    The paper's Algorithm 2: minimise ``SSE_left + SSE_right``; the score is
    ``-(SSE_left + SSE_right)`` (raw, as in the paper, so it depends on the
    scale of each projection), the gain ``SSE_node - SSE_left - SSE_right``.
``GMM`` (2)
    A two-component 1-D Gaussian mixture fitted by EM (initialised from the
    best two-means cut), with equal and with unequal variances; the better
    model by BIC is kept (the paper's Mclust-BIC).  Score and gain are
    ``BIC_1 - BIC_2``; the cut is where the two weighted densities are equal
    between the means.  ``params = [var_floor, max_iter, tol]``.
``UNIFORM`` (3)
    The random projection tree's cut (Dasgupta & Freund 2008): a threshold
    drawn uniformly in ``[min, max]`` of the node's values.  Score and gain are
    the sum-of-squares reduction of the cut (reported, never chosen on).
``MEDIAN`` (4)
    The cut at the median value (``pos = n // 2``, moved to the nearest
    boundary between distinct values).  Score and gain as for ``UNIFORM``.

Classification rules (the supervised task) are dispatched in
:func:`best_class_cut`, which also receives the node's labels and sample
weights in the sorted order of the values:

``GINI`` (5), ``ENTROPY`` (6)
    Weighted class counts ``c_k`` of each side (bootstrap multiplicity times
    sample weight), impurity ``W * I`` with ``W = sum_k c_k`` and
    ``I = 1 - sum_k (c_k / W)^2`` (Gini) or ``-sum_k (c_k / W) log2(c_k / W)``
    (entropy).  The cut maximises ``gain = W I - W_L I_L - W_R I_R`` (the
    weighted impurity decrease), which is also the score: the node's own
    impurity is the same for every candidate projection.  The scan moves one
    sample at a time into the left side's class counts and scores only the
    boundaries between distinct values, from the counts (O(n_classes) each):
    O(n + boundaries x n_classes) after the sort, and binary pixels or patch
    sums have few boundaries.

The regression rule is dispatched in :func:`best_regression_cut`, which
receives the node's targets (centred on the node's weighted mean) and weights
in the sorted order of the values:

``SQUARED_ERROR`` (7)
    The weighted sum of squared errors over all outputs, ``sum_i w_i
    |t_i - mean|^2`` per side; the cut maximises its decrease (score = gain),
    scikit-learn's ``"squared_error"`` up to a constant factor (which does not
    change the cut).  One ``O(n_outputs)`` update per sample after the sort.

For ``UNIFORM`` and ``MEDIAN`` the node's training points are split exactly as
the drawn threshold splits them; the stored threshold is the midpoint between
the two training values around it (as for every rule), which is where a new
point lying between them goes left or right.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._jit import njit
from .cuts import (
    _valid_position,  # noqa: F401 (tests import it from here)
    fastbic_workspace,
    midpoint,
    value_range,
)
from .rng import uniform
from .rule_cuts import (
    RULE_OF_WORKSPACE,
    WORKSPACE_TAGS,
    FastBICWorkspace,
    GMMWorkspace,
    MedianWorkspace,
    TwoMeansWorkspace,
    UniformWorkspace,
    fastbic_cut,
    gmm_cut,
    median_cut,
    rule_cut,
    twomeans_cut,
    uniform_cut,
)

FASTBIC = 0
TWOMEANS = 1
GMM = 2
UNIFORM = 3
MEDIAN = 4
GINI = 5
ENTROPY = 6
SQUARED_ERROR = 7

#: Relative variance floor: a cluster's variance is at least this fraction of
#: its node's variance.
VAR_FLOOR = 1e-6


@njit(nogil=True, cache=True)
def _xlogx(x):
    return x * np.log(x) if x > 0.0 else 0.0


@njit(nogil=True, cache=True)
def _side_impurity(rule, weight, acc):
    """``W * I`` of one side from its total weight and running sum ``acc``.

    ``acc`` is ``sum_k c_k^2`` (Gini) or ``sum_k c_k log c_k`` (entropy).
    """
    if rule == GINI:
        return max(weight - acc / weight, 0.0) if weight > 0.0 else 0.0
    if rule == ENTROPY:
        return max(weight * np.log(weight) - acc, 0.0) / np.log(2.0) if weight > 0.0 else 0.0
    raise ValueError("unknown split rule code")


@njit(nogil=True, cache=True, inline="always")
def _children_impurity(rule, total, left, n_classes, w_left, w_right):
    """``W_L I_L + W_R I_R`` of a cut from the class weights ``left`` of its left side
    and ``total`` of the node (the right side is their difference)."""
    acc_left = 0.0
    acc_right = 0.0
    if rule == GINI:
        for k in range(n_classes):
            cl = left[k]
            cr = total[k] - cl
            acc_left += cl * cl
            acc_right += cr * cr
    else:
        for k in range(n_classes):
            cl = left[k]
            acc_left += _xlogx(cl)
            acc_right += _xlogx(max(total[k] - cl, 0.0))
    return _side_impurity(rule, w_left, acc_left) + _side_impurity(rule, w_right, acc_right)


@njit(nogil=True, cache=True, inline="always")
def _weights_valid(w_left, w_right, min_weight):
    """Whether both sides of a cut carry weight, at least ``min_weight`` each
    (``min_weight_fraction_leaf`` times the tree's total weight; 0: off)."""
    return w_left > 0.0 and w_right > 0.0 and w_left >= min_weight and w_right >= min_weight


@njit(nogil=True, cache=True, inline="always")
def _impurity_cut(rule, z, ys, ws, cs, n, n_classes, min_leaf, min_weight, counts):
    """The Gini or entropy cut (``rule``) of sorted ``z[:n]``; see :func:`best_class_cut`.

    Every impurity goes through :func:`_side_impurity`, which raises for any
    other code, so an unknown code fails before the first cut is scored.
    """
    total = counts[:n_classes]
    left = counts[n_classes : 2 * n_classes]
    total[:] = 0.0
    left[:] = 0.0
    weight = 0.0
    size = 0
    for i in range(n):
        total[ys[i]] += ws[i]
        weight += ws[i]
        size += cs[i]
    acc = 0.0
    for k in range(n_classes):
        acc += total[k] * total[k] if rule == GINI else _xlogx(total[k])
    parent = _side_impurity(rule, weight, acc)
    w_left = 0.0
    n_left = 0
    best_pos = -1
    best_gain = -np.inf
    for pos in range(1, n):
        # Move sample pos - 1 to the left side; score only between distinct values.
        i = pos - 1
        wi = ws[i]
        left[ys[i]] += wi
        w_left += wi
        n_left += cs[i]
        if not z[i] < z[pos]:
            continue
        if n_left < min_leaf:
            continue
        if size - n_left < min_leaf:
            break
        w_right = weight - w_left
        if not _weights_valid(w_left, w_right, min_weight):
            continue
        gain = parent - _children_impurity(rule, total, left, n_classes, w_left, w_right)
        if gain > best_gain:
            best_gain = gain
            best_pos = pos
    if best_pos < 0:
        return -1, -np.inf, -np.inf
    return best_pos, best_gain, best_gain


@njit(nogil=True, cache=True, inline="always")
def _squared_error_cut(z, ts, ws, cs, n, min_leaf, min_weight, sums):
    """The squared-error cut of sorted ``z[:n]``; see :func:`best_regression_cut`.

    With ``S`` the weighted target sums and ``W`` the weight of a side, the
    weighted sum of squared errors of the side is ``Q - |S|^2 / W`` (``Q`` the
    weighted sum of squared targets), so the decrease from the node's to its
    children's is ``|S_L|^2 / W_L + |S_R|^2 / W_R - |S|^2 / W``: one
    ``O(n_outputs)`` update and score per boundary.  The targets come centred
    on the node's mean, which keeps the sums small (no cancellation of large
    ``|S|^2 / W`` terms when the targets sit far from zero).  One output, the
    common case, runs on scalars; ``sums`` (totals, then left sums) serves
    several.
    """
    n_out = ts.shape[1]
    weight = 0.0
    size = 0
    total = 0.0
    if n_out == 1:
        for i in range(n):
            total += ws[i] * ts[i, 0]
            weight += ws[i]
            size += cs[i]
    else:
        for k in range(2 * n_out):
            sums[k] = 0.0
        for i in range(n):
            for k in range(n_out):
                sums[k] += ws[i] * ts[i, k]
            weight += ws[i]
            size += cs[i]
    parent = 0.0
    if weight > 0.0:
        if n_out == 1:
            parent = total * total / weight
        else:
            for k in range(n_out):
                parent += sums[k] * sums[k] / weight
    w_left = 0.0
    s_left = 0.0
    n_left = 0
    best_pos = -1
    best_gain = -np.inf
    for pos in range(1, n):
        i = pos - 1
        wi = ws[i]
        if n_out == 1:
            s_left += wi * ts[i, 0]
        else:
            for k in range(n_out):
                sums[n_out + k] += wi * ts[i, k]
        w_left += wi
        n_left += cs[i]
        if not z[i] < z[pos]:
            continue
        if n_left < min_leaf:
            continue
        if size - n_left < min_leaf:
            break
        w_right = weight - w_left
        if not _weights_valid(w_left, w_right, min_weight):
            continue
        if n_out == 1:
            s_right = total - s_left
            children = s_left * s_left / w_left + s_right * s_right / w_right
        else:
            children = 0.0
            for k in range(n_out):
                sl = sums[n_out + k]
                sr = sums[k] - sl
                children += sl * sl / w_left + sr * sr / w_right
        gain = children - parent
        if gain > best_gain:
            best_gain = gain
            best_pos = pos
    if best_pos < 0:
        return -1, -np.inf, -np.inf
    return best_pos, best_gain, best_gain


class Rule(NamedTuple):
    """One split rule: everything the engine and the estimators need to know about it."""

    code: int  # the integer the kernels dispatch on
    name: str  # the estimator's ``criterion`` / ``split`` value
    family: str  # "criterion" (URerF), "random" (rpTrees), "class" or "regression"
    supervised: bool  # needs labels or targets (best_class_cut / best_regression_cut)
    workspace: Any  # kernel ``f(n_max)`` giving the rule's scratch, or None (no scratch)
    params: tuple  # default ``params`` (float64 array passed to the cut)
    cut: Any  # the cut kernel the dispatch calls for this code
    workspace_type: Any = None  # unsupervised: the class whose instances select this rule


#: The split rules, one entry each, in code order.
RULES = (
    Rule(
        FASTBIC,
        "fastbic",
        "criterion",
        False,
        fastbic_workspace,
        (VAR_FLOOR,),
        fastbic_cut,
        FastBICWorkspace,
    ),
    Rule(
        TWOMEANS,
        "twomeans",
        "criterion",
        False,
        None,
        (VAR_FLOOR,),
        twomeans_cut,
        TwoMeansWorkspace,
    ),
    Rule(GMM, "gmm", "criterion", False, None, (VAR_FLOOR, 100.0, 1e-7), gmm_cut, GMMWorkspace),
    Rule(UNIFORM, "uniform", "random", False, None, (VAR_FLOOR,), uniform_cut, UniformWorkspace),
    Rule(MEDIAN, "median", "random", False, None, (VAR_FLOOR,), median_cut, MedianWorkspace),
    Rule(GINI, "gini", "class", True, None, (), _impurity_cut),
    Rule(ENTROPY, "entropy", "class", True, None, (), _impurity_cut),
    Rule(SQUARED_ERROR, "squared_error", "regression", True, None, (), _squared_error_cut),
)


class _RuleNames(dict):
    """Rule codes by name; an unknown name raises a ``ValueError`` naming the known ones."""

    def __missing__(self, key):
        raise ValueError(f"unknown split rule {key!r}; known: {', '.join(sorted(self))}")


def _names(family: str) -> _RuleNames:
    return _RuleNames((r.name, r.code) for r in RULES if r.family == family)


#: The split criteria of unsupervised (URerF) trees.
CRITERIA = _names("criterion")
#: The data-independent cuts of random projection trees.
RANDOM_CUTS = _names("random")
#: The impurity criteria of classification trees.
CLASS_CRITERIA = _names("class")
#: The criteria of regression trees.
REGRESSION_CRITERIA = _names("regression")


def lookup_rule(code: Any, supervised: bool | None = None) -> Rule:
    """The table entry of ``code``; a ``ValueError`` for an unknown code.

    With ``supervised`` given, the rule must also be of that kind (a
    classification tree needs a rule that reads labels, and the other way
    round).  Run before any kernel, so a wrong code fails here in Python
    rather than inside a tree.
    """
    for r in RULES:
        if isinstance(code, int | np.integer) and r.code == code:
            if supervised is not None and r.supervised != supervised:
                kind = "a supervised" if supervised else "an unsupervised"
                raise ValueError(f"split rule {r.name!r} (code {code}) is not {kind} rule")
            return r
    known = ", ".join(f"{r.code} ({r.name})" for r in RULES)
    raise ValueError(f"unknown split rule code {code!r}; known: {known}")


def default_params(code: int) -> np.ndarray:
    """The float64 parameter array of a rule (validates the code)."""
    return np.array(lookup_rule(code).params, dtype=np.float64)


def make_workspace(rule: int, n_max: int, ties: bool = True) -> NamedTuple:
    """What an unsupervised rule reuses across the nodes of one tree (``n_max``: the largest node).

    An instance of the rule's ``workspace_type`` holding the table's
    ``workspace`` scratch (an empty array for rules without one).  Its class
    makes the rule part of the numba type of every kernel it is passed to, so
    :func:`best_cut` (and the tree builder) compile for the rules a process
    uses and no others.  Unknown codes and supervised rules raise a
    ``ValueError``: no unsupervised tree can grow with them.  ``ties=False``
    says that no feature of the data holds a value three times (see
    :func:`~geoforest.forest._growth.may_tie`): the tree's kernel then
    compiles without the growth of tied candidates, which could not run.
    """
    r = lookup_rule(rule)
    if r.workspace_type is None:
        raise ValueError(f"unknown split rule code {rule!r} for an unsupervised tree ({r.name})")
    arrays = np.zeros(0) if r.workspace is None else r.workspace(n_max)
    tag = np.empty(0, dtype=WORKSPACE_TAGS[r.workspace_type.__name__])
    return r.workspace_type(arrays, np.empty(0, dtype=np.int32) if ties else None, tag)


#: The dispatch of :func:`best_cut`: each workspace class's rule code and cut.
RULE_OF_WORKSPACE.update((r.workspace_type, (r.code, r.cut)) for r in RULES if r.workspace_type)


@njit(nogil=True, cache=True)
def best_cut(rule, z, n, min_leaf, params, workspace, state):
    """Best cut of the sorted values ``z[:n]`` under ``rule``: ``(pos, score, gain)``.

    ``workspace`` comes from :func:`make_workspace`, and its type selects the
    rule's ``cut`` in :data:`RULES` when numba compiles this kernel: each rule
    compiles on its first use only (a default URerF compiles no Gaussian
    mixture, random cut or two-means).  ``rule`` must be the workspace's
    rule (a ``ValueError`` otherwise).  ``state`` is the tree's random state,
    for rules that draw their cut.
    """
    return rule_cut(rule, z, n, min_leaf, params, workspace, state)


@njit(nogil=True, cache=True, inline="always")
def best_class_cut(rule, z, ys, ws, cs, n, n_classes, min_leaf, min_weight, counts):
    """Best impurity cut of sorted ``z[:n]`` with labels ``ys`` and weights ``ws``.

    One branch per supervised entry of :data:`RULES`.  ``ys``/``ws``/``cs``
    (labels, weights, int multiplicities) are in the order of ``z``;
    ``min_leaf`` counts samples with multiplicity.  ``counts`` is float64
    scratch of at least ``2 * n_classes``.  Returns ``(pos, score, gain)`` as
    :func:`best_cut` does (score = gain; see the module docstring).
    """
    if rule == GINI or rule == ENTROPY:
        return _impurity_cut(rule, z, ys, ws, cs, n, n_classes, min_leaf, min_weight, counts)
    raise ValueError("unknown split rule code")


@njit(nogil=True, cache=True, inline="always")
def best_regression_cut(rule, z, ts, ws, cs, n, min_leaf, min_weight, sums):
    """Best cut of sorted ``z[:n]`` for the targets ``ts`` (rows in the order of ``z``).

    One branch per regression entry of :data:`RULES`.  ``ts`` is float64
    ``(n, n_outputs)``, centred on the node's weighted mean; ``ws``/``cs``
    weights and int multiplicities as for :func:`best_class_cut`.  ``sums``
    is float64 scratch of at least ``2 * n_outputs``.  Returns
    ``(pos, score, gain)``, score = gain = the decrease of the weighted sum of
    squared errors over all outputs.
    """
    if rule == SQUARED_ERROR:
        return _squared_error_cut(z, ts, ws, cs, n, min_leaf, min_weight, sums)
    raise ValueError("unknown split rule code")


@njit(nogil=True, cache=True, inline="always")
def _drawn_threshold(z, n, state):
    """A threshold drawn uniformly in ``[min z, max z)`` of the unsorted ``z[:n]``
    (``nan`` when every value is equal)."""
    lo, hi = value_range(z, n)
    if not lo < hi:
        return np.nan
    t = lo + uniform(state) * (hi - lo)
    return t if t < hi else lo


@njit(nogil=True, cache=True, inline="always")
def random_class_cut(rule, z, ys, ws, cs, n, n_classes, min_leaf, min_weight, counts, state):
    """Extremely randomised cut of the unsorted ``z[:n]`` for a classification rule.

    One threshold drawn uniformly between the node's smallest and largest value
    (Geurts et al.'s extra trees), scored by the weighted impurity decrease of
    ``rule`` as :func:`best_class_cut` scores a cut.  No sort: one pass finds
    the range, one counts the sides.  Returns ``(threshold, score, gain)``; the
    threshold is the midpoint between the two training values around the drawn
    one (where the training rows split), and the score ``-inf`` when a side
    holds fewer than ``min_leaf`` samples (with multiplicity) or weight 0.
    """
    t = _drawn_threshold(z, n, state)
    if np.isnan(t):
        return np.nan, -np.inf, -np.inf
    total = counts[:n_classes]
    left = counts[n_classes : 2 * n_classes]
    total[:] = 0.0
    left[:] = 0.0
    weight = w_left = 0.0
    size = n_left = 0
    below, above = -np.inf, np.inf
    for i in range(n):
        total[ys[i]] += ws[i]
        weight += ws[i]
        size += cs[i]
        if z[i] <= t:
            left[ys[i]] += ws[i]
            w_left += ws[i]
            n_left += cs[i]
            below = max(below, z[i])
        else:
            above = min(above, z[i])
    w_right = weight - w_left
    if n_left < min_leaf or size - n_left < min_leaf:
        return np.nan, -np.inf, -np.inf
    if not _weights_valid(w_left, w_right, min_weight):
        return np.nan, -np.inf, -np.inf
    acc = 0.0
    for k in range(n_classes):
        acc += total[k] * total[k] if rule == GINI else _xlogx(total[k])
    gain = _side_impurity(rule, weight, acc) - _children_impurity(
        rule, total, left, n_classes, w_left, w_right
    )
    return midpoint(below, above), gain, gain


@njit(nogil=True, cache=True, inline="always")
def random_regression_cut(rule, z, ts, ws, cs, n, min_leaf, min_weight, sums, state):
    """Extremely randomised cut of the unsorted ``z[:n]`` for a regression rule;
    see :func:`random_class_cut`.  Scored by the squared-error decrease, as
    :func:`best_regression_cut` scores a cut (``ts`` centred on the node's mean)."""
    if rule != SQUARED_ERROR:
        raise ValueError("unknown split rule code")
    t = _drawn_threshold(z, n, state)
    if np.isnan(t):
        return np.nan, -np.inf, -np.inf
    n_out = ts.shape[1]
    for k in range(2 * n_out):
        sums[k] = 0.0
    weight = w_left = 0.0
    size = n_left = 0
    below, above = -np.inf, np.inf
    for i in range(n):
        weight += ws[i]
        size += cs[i]
        go_left = z[i] <= t
        for k in range(n_out):
            sums[k] += ws[i] * ts[i, k]
            if go_left:
                sums[n_out + k] += ws[i] * ts[i, k]
        if go_left:
            w_left += ws[i]
            n_left += cs[i]
            below = max(below, z[i])
        else:
            above = min(above, z[i])
    w_right = weight - w_left
    if n_left < min_leaf or size - n_left < min_leaf:
        return np.nan, -np.inf, -np.inf
    if not _weights_valid(w_left, w_right, min_weight):
        return np.nan, -np.inf, -np.inf
    gain = 0.0
    for k in range(n_out):
        sl, st = sums[n_out + k], sums[k]
        sr = st - sl
        gain += sl * sl / w_left + sr * sr / w_right - st * st / weight
    return midpoint(below, above), gain, gain
