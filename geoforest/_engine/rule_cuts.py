"""The unsupervised split rules' workspaces and their cuts behind one signature.

Each unsupervised rule of :data:`.splits.RULES` has a workspace class of its
own (a ``NamedTuple``), so the rule is part of the numba type of
every kernel its workspace is passed to: :func:`.splits.best_cut` and the tree
builder compile the cut of that rule only, and each other rule compiles on
its first use (``docs/engine.md``, the split-rule table).  ``arrays`` holds
the rule's scratch (:func:`.cuts.fastbic_workspace`), an empty array for
rules without one; ``tag`` an empty array of the class's own dtype
(:data:`WORKSPACE_TAGS`).  ``ties`` is ``None`` where the caller knows that no
feature of the data holds a value three times, so no candidate can grow
(:mod:`.ties`): the builder then compiles without the tie growth
(:func:`tie_growth`, :func:`grow_ties`).  Otherwise it is an empty int32
array (the growth decides per tree, as before).

The cuts below give every rule :func:`.splits.best_cut`'s signature,
``(z, n, min_leaf, params, arrays, state)``, reading the rule's settings from
its float64 ``params`` by slot; they are the table's ``cut`` entries.
:func:`rule_cut` and :func:`unsorted_cut` are the dispatch: ``numba``
overloads, resolved while numba types their caller, so a kernel holds the
code of its workspace's rule only.  (Declared ``inline="always"`` they
corrupted the builder's trees: numba's IR inlining of an overload with an
unused argument freed arrays early.  As plain calls LLVM inlines them.)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba.core import types
from numba.extending import overload

from .._jit import njit
from .cuts import (
    _fastbic,
    _gmm,
    _median_cut,
    _uniform_cut,
    midpoint,
    twomeans,
    uniform_cut_unsorted,
)
from .sorting import sort_values
from .ties import grow_until_resolved, growth_pool

#: Slots of an unsupervised rule's ``params`` (``[var_floor]``, GMM's ``[var_floor,
#: max_iter, tol]``): the kernels read them by name.
SLOT_VAR_FLOOR, SLOT_MAX_ITER, SLOT_TOL = 0, 1, 2


#: Each workspace class's ``tag``: an empty array of a dtype of its own, so the
#: classes differ in their fields' types too.  numba 0.60 (the declared
#: minimum) tells namedtuples apart in its dispatcher by their fields' types
#: only, so a kernel called with one rule's workspace would run the
#: specialization compiled for another rule whose fields match (the kernels'
#: check of the rule code raises).
WORKSPACE_TAGS: dict[str, type] = {
    "FastBICWorkspace": np.int8,
    "TwoMeansWorkspace": np.int16,
    "GMMWorkspace": np.uint8,
    "UniformWorkspace": np.uint16,
    "MedianWorkspace": np.uint32,
}


class FastBICWorkspace(NamedTuple):
    """Fast-BIC's workspace (:func:`.cuts.fastbic_workspace`)."""

    arrays: np.ndarray
    ties: Any
    tag: np.ndarray


class TwoMeansWorkspace(NamedTuple):
    """Two-means' workspace (no scratch)."""

    arrays: np.ndarray
    ties: Any
    tag: np.ndarray


class GMMWorkspace(NamedTuple):
    """The Gaussian mixture's workspace (no scratch)."""

    arrays: np.ndarray
    ties: Any
    tag: np.ndarray


class UniformWorkspace(NamedTuple):
    """The uniform random cut's workspace (no scratch)."""

    arrays: np.ndarray
    ties: Any
    tag: np.ndarray


class MedianWorkspace(NamedTuple):
    """The median cut's workspace (no scratch)."""

    arrays: np.ndarray
    ties: Any
    tag: np.ndarray


@njit(nogil=True, cache=True, inline="always")
def fastbic_cut(z, n, min_leaf, params, arrays, state):
    """Fast-BIC (:func:`.cuts._fastbic`), its tables and scan arrays in ``arrays``."""
    return _fastbic(z, n, min_leaf, params[SLOT_VAR_FLOOR], arrays)


@njit(nogil=True, cache=True, inline="always")
def twomeans_cut(z, n, min_leaf, params, arrays, state):
    """Two-means (:func:`.cuts.twomeans`)."""
    return twomeans(z, n, min_leaf)


@njit(nogil=True, cache=True, inline="always")
def gmm_cut(z, n, min_leaf, params, arrays, state):
    """The two-Gaussian mixture (:func:`.cuts._gmm`)."""
    max_iter = np.int64(params[SLOT_MAX_ITER])
    return _gmm(z, n, min_leaf, params[SLOT_VAR_FLOOR], max_iter, params[SLOT_TOL])


@njit(nogil=True, cache=True, inline="always")
def uniform_cut(z, n, min_leaf, params, arrays, state):
    """The random projection tree's uniform cut (:func:`.cuts._uniform_cut`)."""
    return _uniform_cut(z, n, min_leaf, state)


@njit(nogil=True, cache=True, inline="always")
def median_cut(z, n, min_leaf, params, arrays, state):
    """The median cut (:func:`.cuts._median_cut`)."""
    return _median_cut(z, n, min_leaf)


#: ``{workspace class: (rule code, cut)}``, filled by :mod:`.splits` from its table.
RULE_OF_WORKSPACE: dict[type, tuple[int, Any]] = {}


def rule_cut(rule, z, n, min_leaf, params, workspace, state):
    """The cut of ``workspace``'s rule (kernels only; see :func:`.splits.best_cut`)."""
    raise NotImplementedError("rule_cut is called from numba kernels only")


@overload(rule_cut, jit_options={"nogil": True})
def _rule_cut_typed(rule, z, n, min_leaf, params, workspace, state):
    entry = RULE_OF_WORKSPACE.get(getattr(workspace, "instance_class", None))
    if entry is None:
        return None  # not a workspace of make_workspace: a typing error
    code, cut = entry

    def impl(rule, z, n, min_leaf, params, workspace, state):
        if rule != code:
            raise ValueError("split rule code does not match its workspace's rule")
        return cut(z, n, min_leaf, params, workspace.arrays, state)

    return impl


def unsorted_cut(z, n, min_leaf, state, z_sorted, workspace):
    """The uniform cut of the unsorted ``z[:n]`` (kernels only).

    :func:`.cuts.uniform_cut_unsorted` for the uniform rule's workspace; for
    every other rule, which the builder never asks for an unsorted cut, no cut
    at all, so their trees do not compile it.
    """
    raise NotImplementedError("unsorted_cut is called from numba kernels only")


@overload(unsorted_cut, jit_options={"nogil": True})
def _unsorted_cut_typed(z, n, min_leaf, state, z_sorted, workspace):
    if getattr(workspace, "instance_class", None) is UniformWorkspace:

        def impl(z, n, min_leaf, state, z_sorted, workspace):
            return uniform_cut_unsorted(z, n, min_leaf, state, z_sorted)

        return impl

    def no_cut(z, n, min_leaf, state, z_sorted, workspace):
        return np.nan, -np.inf, -np.inf

    return no_cut


def tie_growth(workspace, X, samples, proj_kind, proj_params, vals):
    """``(grow, pool)`` of an unsupervised tree (:func:`.ties.growth_pool`); ``(False,
    None)`` for a supervised tree (``workspace`` None) or where no feature can tie
    (kernels only)."""
    raise NotImplementedError("tie_growth is called from numba kernels only")


@overload(tie_growth, jit_options={"nogil": True})
def _tie_growth_typed(workspace, X, samples, proj_kind, proj_params, vals):
    if isinstance(workspace, types.NoneType) or isinstance(workspace.types[1], types.NoneType):

        def no_pool(workspace, X, samples, proj_kind, proj_params, vals):
            return False, None

        return no_pool

    def impl(workspace, X, samples, proj_kind, proj_params, vals):
        return growth_pool(X, samples, proj_kind, proj_params, vals)

    return impl


@njit(nogil=True, cache=True)
def grow_ties(X, samples, lo, hi, z_cur, m, cand, width, proj_params, pool, state, vals):
    """:func:`.ties.grow_until_resolved` with the pool of :func:`tie_growth`; with no
    pool (``None``: no feature can tie) the candidate as drawn, its width, and
    numba compiles none of the growth (the ``pool is None`` branch is resolved
    when the kernel is compiled)."""
    if pool is None:
        return width
    else:
        return grow_until_resolved(
            X, samples, lo, hi, z_cur, m, cand, width, proj_params, pool, state, vals
        )


@njit(nogil=True, cache=True, inline="always")
def rule_cut_of(tree, lo, hi, z_cur, width, workspace):
    """``(threshold, score, gain, width)`` of an unsupervised candidate whose
    values are ``z_cur[:hi - lo]``, cut by the tree's rule (its scratch
    ``workspace``) midway between the two values around the cut.

    The values are sorted (into ``vals.z_sorted``), the candidate grown while
    they tie too often (:func:`grow_ties`, which returns its new width) and
    cut by :func:`rule_cut`; with ``unsorted`` (the uniform rule where its
    gain decides nothing) they are cut unsorted (:func:`unsorted_cut`,
    compiled for the uniform rule's workspace only).  ``tree`` is ``((rule,
    rule_params, min_leaf, proj_params, grow, unsorted), X, samples, cand,
    pool, state, vals)``, what ``builder.build_tree`` knows of the tree.
    Compiled into the node loop.
    """
    (
        (rule, rule_params, min_leaf, proj_params, grow, unsorted),
        X,
        samples,
        cand,
        pool,
        state,
        vals,
    ) = tree
    m = hi - lo
    z_sorted = vals.z_sorted
    if unsorted:  # the rpTree's cut needs no sort
        threshold, score, gain = unsorted_cut(z_cur, m, min_leaf, state, z_sorted, workspace)
        return threshold, score, gain, width
    for q in range(m):  # no slice copy (see _jit.py)
        z_sorted[q] = z_cur[q]
    sort_values(z_sorted, m, vals.sort_keys, vals.sort_tmp)
    if grow:
        width = grow_ties(X, samples, lo, hi, z_cur, m, cand, width, proj_params, pool, state, vals)
    pos, score, gain = rule_cut(rule, z_sorted, m, min_leaf, rule_params, workspace, state)
    threshold = midpoint(z_sorted[pos - 1], z_sorted[pos]) if pos > 0 else np.nan
    return threshold, score, gain, width
