"""The one label-free choice of the number of clusters: the finest level a graph supports.

Every clusterer of geoforest that estimates ``K`` on a graph calls
:func:`label_free_levels`; this module is the only place the rule lives.

**Why not the most separated level.**  The largest relative spectral gap
``mu_(K+1) / mu_K`` of the normalised Laplacian (:func:`choose_by_relative_gap`)
finds the level at which the graph is *most* clearly cut.  Where one class
stands far from touching others that is ``K = 2``, whatever the rest hold:
on the clustering suite it found ``K = 2`` on most real sets whose ``K`` is
larger (``docs/results/label-free-levels.md``).  Users ask for the finest
level the data support.

**The rule.**  A level ``K >= 2`` is *supported* when

* its ``K``-way spectral partition has no cluster under
  :func:`min_cluster_size` points (a few outliers cut off are not a level);
* its relative gap reaches :data:`LEVEL_MIN_GAP` (the spectrum steps up after
  ``K``: there is no ``(K+1)``-th group as tight as the first ``K``);
* its excess over Gaussian references of the data's mean and covariance
  (:func:`spectral_excess`) reaches :data:`MIN_EXCESS`: the first ``K``
  eigenvalues lie clearly below those of structureless data of the same size
  and spread, so the step is not one a single Gaussian blob would also show
  (one blob reaches relative gaps of 1.5 to 2.1); a *strong* step, a
  relative gap of :data:`STRONG_RELATIVE_GAP` (3) or more, needs only an
  excess of :data:`STRONG_STEP_EXCESS` (0).

**Why a strong step needs less excess.**  No structureless control reaches a
relative gap of 3 (they stop at 2.0-2.1; separated blobs start at 3.5), so
such a step is not a blob's, and the excess only has to say that the level
is more clustered than its null.  The full bar rejects clear steps between
groups that touch in few dimensions, where the Gaussian of their part is
elongated and its own graph nearly cut in two
(``studies/label_free_strong_steps.py``; ``docs/defaults.md``, "A strong
step needs only a positive excess").

**A null per part above the most separated level.**  Where one class stands
far from the others, one Gaussian of the whole set is elongated between
them and its own graph is nearly cut in two; the finer levels (the classes
that touch) then show little excess over it.  So the levels finer than the
most separated one (:func:`separated_level`, the largest unfragmented
relative gap, ``K_sep``) are judged against mixtures of one Gaussian per
part of the ``K_sep``-way partition (:func:`mixture_reference`), the levels
up to it against the whole set's Gaussian.  One more reference
(:data:`MIXTURE_REFERENCES`), when ``K_sep >= 2``.

**A second Gaussian reference only where the choice is close.**  Each
reference is a graph of the data's size through the data's own geometry
(a forest, its neighbours, its spectrum), as costly as the data's graph.
One reference alone is too noisy where a level's excess lies near its
bar (it read a Gaussian blob as two clusters), so the whole set's excess
is over the mean of :data:`N_REFERENCES` (2) of them; but where the first
leaves every level that could decide ``K`` more than
:data:`REFERENCE_MARGIN` from its bar, the second could change ``K`` only by
moving a deciding excess further than that, and it is not drawn
(:attr:`Levels.n_references`).  On the selection half, its controls and a
blob panel the rule left every ``K`` as two references give it and drew
the second on few fits (``studies/label_free_second_reference.py``).

**A second null for weak steps, not the default.**  ``uniform_null=True``
asks a level whose relative gap is under :data:`STRONG_RELATIVE_GAP` to
reach :data:`MIN_EXCESS` over uniform references too (a box on the data's
principal axes with their mean and covariance, :func:`uniform_reference`).
A Gaussian's tails are cut easily by a neighbour graph, so data flatter than
a Gaussian (a uniform cube) lie below their Gaussian reference's spectrum at
every ``K``, and a weak step in them passes the Gaussian test alone.  The
box, though, copies the data's elongation as the Gaussian does, and without
tails it is nearly cut in two wherever the data are long, so it also
removes real weak levels of touching groups; it stays an option
(``docs/defaults.md``, "A uniform null for weak steps").

``K`` is the largest supported level, at least the number of connected
components of the graph (components are clusters whatever the rule says),
and 1 when no level is supported.  The bars were chosen on the selection
half of the clustering suite, clean and with 100 noise columns, with a
leave-one-set-out check (``studies/label_free_gap_excess.py``,
``studies/label_free_mixture_null.py``, ``docs/results/label-free-levels.md``).

**Without a reference.**  A graph given as an affinity or as distances
(``metric="precomputed"``) has no coordinates to draw Gaussian references
from, and a gap bar of 1.3 alone splits one blob.  There the rule is the
largest relative gap reaching :data:`MIN_RELATIVE_GAP` (2), which a blob does
not reach; :attr:`Levels.rule` says which rule decided.

The evidence of every level is returned (:class:`Levels`), and
:func:`explain_levels` warns when no level is supported or the chosen one
is weak.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ._choice import (
    MIN_RELATIVE_GAP,
    STRONG_RELATIVE_GAP,
    LabelFreeChoiceWarning,
    choose_by_relative_gap,
    choose_finest_level,
    n_components,
    score_partitions,
    supported_levels,
)
from ._reference import (
    MIN_EXCESS,
    N_REFERENCES,
    _smallest_mu,
    reference_spectra,
    spectral_excess,
)
from ._spectral import spectral_partitions

__all__ = [
    "LEVEL_MIN_GAP",
    "MIXTURE_REFERENCES",
    "REFERENCE_MARGIN",
    "STRONG_EXCESS",
    "Levels",
    "explain_levels",
    "label_free_levels",
]

#: Smallest relative gap ``mu_(K+1) / mu_K`` at which a level can be supported
#: (with its excess at :data:`MIN_EXCESS`); below what one Gaussian blob
#: shows, which is why the excess must back it.
LEVEL_MIN_GAP = 1.3
#: A chosen level whose excess is under this and whose relative gap is under
#: :data:`STRONG_RELATIVE_GAP` is weak evidence (:func:`explain_levels` warns).
STRONG_EXCESS = 1.0
#: How far from its bar a level's excess over the first Gaussian reference
#: must lie for the fit to skip the others (:func:`label_free_levels`): the
#: smallest margin that left every K of the selection half, its controls and
#: a blob panel as two references give it, with room for the rare larger
#: moves (``studies/label_free_second_reference.py``, ``docs/defaults.md``).
REFERENCE_MARGIN = 0.5
#: Mixture references per fit (the null of the levels above the most separated
#: one): one scores as two did on the selection half, and each costs a graph.
MIXTURE_REFERENCES = 1


class Levels(NamedTuple):
    """The evidence of every level ``K`` of a graph, from 1 to ``max_clusters`` (entry ``K - 1``).

    Its fields:

    * ``n_clusters`` (int): the ``K`` chosen.
    * ``gaps`` (ndarray of shape (max_clusters,)): relative gaps
      ``mu_(K+1) / mu_K`` (NaN: not computed, or ``K`` at most the number of
      connected components).
    * ``excess`` (same shape): excess of each ``K`` over the Gaussian
      references (NaN at ``K = 1``, and everywhere without a reference); above
      the most separated level, over the mixture of its parts (module
      docstring).
    * ``fragmented`` (bool, same shape): ``K``-way partitions with a cluster
      under :func:`min_cluster_size` points.
    * ``supported`` (bool, same shape): the levels the rule accepts;
      ``n_clusters`` is the largest (or the number of components), and the
      coarser supported levels are the hierarchy above it.
    * ``labels`` (dict of int to ndarray): the ``K``-way spectral partition of
      every point for every ``K >= 2`` computed (above 5,000 points, k-means
      runs on 5,000 of them and the others join the nearest centre;
      :func:`spectral_partitions`).
    * ``rows`` (ndarray of int): the points ``labels`` partition: all of them
      here; a subset when a caller chose the level on one (as
      ``ForestSpectralClustering``'s ``max_selection_samples`` does).
    * ``eigenvalues`` (ndarray): leading eigenvalues of the normalised
      affinity, descending.
    * ``n_components`` (int): connected components of the graph.
    * ``rule`` (str): ``"finest-level"`` with references, ``"relative-gap"``
      without.
    * ``uniform_excess`` (ndarray, shape (max_clusters,)): with
      ``uniform_null=True``, the excess of each ``K`` over uniform references
      (module docstring); all NaN otherwise, when the choice did not need
      them (the finest level the Gaussian null supports has a strong step;
      weak levels coarser than it then keep the Gaussian test alone), or
      without references.
    * ``n_references`` (int): Gaussian references of the whole set that
      ``excess`` is over: 1, or :data:`~geoforest.graph.N_REFERENCES` when
      the first left the choice close (``reference_margin``); 0 without
      references.
    """

    n_clusters: int
    gaps: np.ndarray
    excess: np.ndarray
    fragmented: np.ndarray
    supported: np.ndarray
    labels: dict
    rows: np.ndarray
    eigenvalues: np.ndarray
    n_components: int
    rule: str
    uniform_excess: np.ndarray
    n_references: int


def label_free_levels(
    A,
    max_clusters: int,
    *,
    points: np.ndarray | None = None,
    reference_graph: Callable[[np.ndarray, int], sp.spmatrix] | None = None,
    min_gap: float = LEVEL_MIN_GAP,
    min_excess: float = MIN_EXCESS,
    uniform_null: bool = False,
    reference_margin: float | None = REFERENCE_MARGIN,
    solver: str = "auto",
    n_init: int = 4,
    random_state: int | np.random.RandomState | None = 0,
    tol: float = 0.0,
) -> Levels:
    """Score every level ``K`` of the graph ``A``, from 1 to ``max_clusters``, and choose ``K``.

    Parameters
    ----------
    A : sparse matrix or ndarray of shape (n, n)
        Symmetric non-negative affinity.
    max_clusters : int
        Largest ``K`` (at most ``n - 1``).
    points : ndarray of shape (n, p) or None
        The data ``A`` was built from, for the Gaussian references.
    reference_graph : callable ``(points, seed) -> affinity`` or None
        The same geometry and weights applied to reference points.  ``None``
        (or ``points=None``): no reference, the relative-gap rule.
    min_gap, min_excess : float
        The bars of a supported level (module docstring).
    uniform_null : bool, default=False
        Also ask a weak step (relative gap under :data:`STRONG_RELATIVE_GAP`)
        to reach ``min_excess`` over uniform references, when the finest
        level the Gaussian null supports is weak (module docstring).
    reference_margin : float >= 0 or None, default=REFERENCE_MARGIN
        Draw the second and later Gaussian references (of
        :data:`~geoforest.graph.N_REFERENCES`) only when the choice of ``K``
        could change were the first reference's excess of any level off by
        up to this much; ``None`` draws them all, always.  Each reference
        is a graph of the data's size through the same geometry, as costly
        as the data's own; where every level stands clear of its bar one is
        enough (module docstring).
    solver, n_init, tol
        Eigensolver, k-means restarts per ``K`` and solver tolerance
        (:func:`spectral_partitions`).
    random_state : int, RandomState instance or None, default=0
        Seeds the eigensolver, the partitions and the references.

    Returns
    -------
    Levels

    Raises
    ------
    ValueError
        More connected components than ``max_clusters``, ``max_clusters``
        under 1, ``points`` whose rows are not the graph's nodes, or
        non-finite points or affinities.
    TypeError
        ``max_clusters`` not an int.

    Examples
    --------
    Three groups: two that touch, and a third far away, its own component of
    the 10-NN graph.  The components give ``K = 2`` whatever the gaps say; the
    finest supported level splits the touching pair.

    >>> import numpy as np
    >>> from sklearn.neighbors import kneighbors_graph
    >>> from geoforest.graph import label_free_levels
    >>> def graph(P, seed):  # the geometry, applied alike to data and references
    ...     G = kneighbors_graph(P, 10)
    ...     return ((G + G.T) > 0).astype(float)
    >>> P = np.repeat([[0.0, 0.0], [0.5, 0.0], [9.0, 9.0]], 30, axis=0)
    >>> P += np.random.RandomState(0).normal(scale=0.1, size=P.shape)
    >>> levels = label_free_levels(graph(P, 0), 5, points=P, reference_graph=graph)
    >>> levels.n_clusters, levels.n_components, levels.rule
    (3, 2, 'finest-level')
    >>> np.round(levels.gaps[2], 1), np.round(levels.excess[2], 1)
    (np.float64(16.7), np.float64(0.6))
    """
    if not isinstance(uniform_null, (bool, np.bool_)):
        raise TypeError(f"uniform_null must be True or False, got {uniform_null!r}")
    if reference_margin is not None and (
        isinstance(reference_margin, bool | complex)
        or not isinstance(reference_margin, numbers.Real)
        or not np.isfinite(reference_margin)
        or reference_margin < 0
    ):
        raise ValueError(
            f"reference_margin must be a finite number >= 0 or None, got {reference_margin!r}"
        )
    if isinstance(max_clusters, bool) or not isinstance(max_clusters, numbers.Integral):
        raise TypeError(f"max_clusters must be an int, got {max_clusters!r}")
    if max_clusters < 1:
        raise ValueError(f"max_clusters must be at least 1, got {max_clusters}")
    max_k = int(max_clusters)
    if points is not None and np.shape(points)[0] != A.shape[0]:
        raise ValueError(
            f"points has {np.shape(points)[0]} rows but the affinity {A.shape[0]} nodes"
        )
    if isinstance(random_state, numbers.Integral):
        seed = int(random_state)
    else:  # the references need an int; drawn before the partitions use the generator
        seed = int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    part = spectral_partitions(
        A, max_k, solver=solver, random_state=random_state, tol=tol, n_init=n_init, extend=True
    )
    gaps, fragmented = score_partitions(part, max_k)
    base_k = n_components(part.eigenvalues)
    excess = np.full(max_k, np.nan)
    uniform = np.full(max_k, np.nan)
    supported = np.zeros(max_k, dtype=bool)
    n_refs = 0
    bars = {"min_gap": min_gap, "min_excess": min_excess}
    if points is None or reference_graph is None or max_k < 2:
        rule = "relative-gap"
        _, k, _ = choose_by_relative_gap(gaps[None], fragmented[None], base_k=base_k)
        with np.errstate(invalid="ignore"):
            supported[1:] = (gaps[1:] >= MIN_RELATIVE_GAP) & ~fragmented[1:]
    else:
        rule = "finest-level"
        if base_k > max_k:
            choose_by_relative_gap(gaps[None], fragmented[None], base_k=base_k)  # raises
        excess, n_refs = _gaussian_excess(
            part, gaps, fragmented, points, reference_graph, seed, tol, bars, reference_margin
        )
        supported = supported_levels(gaps, excess[1:], fragmented, **bars)
        weak = supported & ~(gaps >= max(STRONG_RELATIVE_GAP, min_gap))
        k = _finest(supported)
        if uniform_null and k >= 2 and weak[k - 1]:
            flat = spectral_excess(
                A,
                points,
                reference_graph,
                max_k,
                seed,
                eigenvalues=part.eigenvalues,
                tol=tol,
                null="uniform",
            )
            uniform[1 : flat.size + 1] = flat
            with np.errstate(invalid="ignore"):
                supported &= ~weak | (uniform >= min_excess)
            k = _finest(supported)
        k = max(base_k, k)
    return Levels(
        k,
        gaps,
        excess,
        fragmented,
        supported,
        part.labels,
        part.rows,
        part.eigenvalues,
        base_k,
        rule,
        uniform,
        n_refs,
    )


def _gaussian_excess(
    part, gaps, fragmented, points, reference_graph, seed: int, tol: float, bars: dict, margin
) -> tuple[np.ndarray, int]:
    """The excess of every level (entry ``K - 1``) and the number of Gaussian
    references of the whole set it took.

    The levels up to the most separated one are judged against the whole
    set's Gaussian, those finer against the mixture of its parts (module
    docstring).  The first Gaussian reference is drawn; the others of
    :data:`N_REFERENCES` only when ``margin`` is None or the choice is not one
    ``K`` for every excess within ``margin`` of the first reference's.
    Support grows with the excess and the finest level with the support, so
    comparing the choices at ``excess - margin`` and ``excess + margin``
    bounds every choice in between: the references skipped could change
    ``K`` only by moving some level's excess more than ``margin``.
    """
    max_k = gaps.size
    mu = _smallest_mu(part.eigenvalues, max_k)
    k_sep = separated_level(gaps, fragmented)
    finer = None
    if 2 <= k_sep < max_k:
        parts = reference_spectra(
            points,
            reference_graph,
            max_k,
            seed,
            range(MIXTURE_REFERENCES),
            labels=part.labels[k_sep],
            tol=tol,
        )
        finer = np.log(np.mean(parts, axis=0)[1:] / mu[1:])

    def over(spectra, shift: float = 0.0) -> np.ndarray:
        excess = np.full(max_k, np.nan)
        excess[1:] = np.log(np.mean(spectra, axis=0)[1:] / mu[1:]) + shift
        if finer is not None:
            excess[k_sep:] = finer[k_sep - 1 :]
        return excess

    def finest(excess: np.ndarray) -> int:
        return choose_finest_level(gaps, excess[1:], fragmented, **bars)

    spectra = reference_spectra(points, reference_graph, max_k, seed, range(1), tol=tol)
    if margin is None or finest(over(spectra, -margin)) != finest(over(spectra, margin)):
        spectra += reference_spectra(
            points, reference_graph, max_k, seed, range(1, N_REFERENCES), tol=tol
        )
    return over(spectra), len(spectra)


def _finest(supported: np.ndarray) -> int:
    """The largest supported ``K``, 1 when none is."""
    return int(np.flatnonzero(supported).max()) + 1 if supported.any() else 1


def separated_level(gaps: np.ndarray, fragmented: np.ndarray) -> int:
    """The most separated level: the ``K`` of the largest relative gap among
    unfragmented partitions (1 when none is scored)."""
    usable = np.isfinite(gaps) & ~np.asarray(fragmented, dtype=bool)
    usable[0] = False
    if not usable.any():
        return 1
    return int(np.argmax(np.where(usable, gaps, -np.inf))) + 1


def explain_levels(estimator: str, levels: Levels, *, stacklevel: int = 3) -> None:
    """Warn when a label-free ``K`` is 1 or rests on weak evidence.

    * ``K = 1``: no level is supported; the message names the level that came
      closest.
    * ``K >= 2`` by the finest-level rule, with a relative gap under
      :data:`STRONG_RELATIVE_GAP` and an excess under :data:`STRONG_EXCESS`:
      data without clusters come near such figures.
    * ``K >= 2`` by the relative-gap rule with a gap under
      :data:`STRONG_RELATIVE_GAP` (as :func:`explain_choice`).

    A ``K`` equal to the number of connected components is never weak.
    """
    k = int(levels.n_clusters)
    gaps, excess = levels.gaps, levels.excess
    finest = levels.rule == "finest-level"
    if k == 1:
        usable = np.isfinite(gaps) & ~levels.fragmented
        if usable.any():
            best = int(np.nanargmax(np.where(usable, gaps, np.nan))) + 1
            closest = f"; the largest relative gap is {gaps[best - 1]:.3g} at K = {best}"
            if finest and np.isfinite(excess[best - 1]):
                closest += f" (excess {excess[best - 1]:.2f}"
                flat = levels.uniform_excess[best - 1]
                if np.isfinite(flat):
                    closest += f", over uniform references {flat:.2f}"
                closest += ")"
        else:
            closest = ""
        bars = (
            f"a relative gap of {LEVEL_MIN_GAP} with an excess of {MIN_EXCESS} over "
            "Gaussian references"
            if finest
            else f"a relative gap of {MIN_RELATIVE_GAP}"
        )
        if finest and np.isfinite(levels.uniform_excess).any():
            bars += f", and over uniform ones below a gap of {STRONG_RELATIVE_GAP:g}"
        warnings.warn(
            f"{estimator} found no cluster structure: K = 1, every point in one cluster "
            f"(no K >= 2 reaches {bars}{closest}). Pass n_clusters if you expect clusters.",
            LabelFreeChoiceWarning,
            stacklevel=stacklevel,
        )
        return
    if k <= levels.n_components or k > gaps.size:
        return
    gap = gaps[k - 1]
    weak = np.isfinite(gap) and gap < STRONG_RELATIVE_GAP
    if finest:
        weak = weak and excess[k - 1] < STRONG_EXCESS
    if weak:
        what = f"relative gap {gap:.3g}" + (f", excess {excess[k - 1]:.2f}" if finest else "")
        warnings.warn(
            f"{estimator} chose K = {k} without labels from weak evidence ({what}): "
            "structureless data (one Gaussian or uniform cloud) come near such figures; "
            "pass n_clusters if you know K.",
            LabelFreeChoiceWarning,
            stacklevel=stacklevel,
        )
