"""The label-free choice of the number of clusters, and what it rests on, told to the user.

**The rule** (:func:`choose_by_relative_gap`), shared by the spectral
clusterers: among candidate affinities (kernel scales) and ``K = 2 ..
K_max``, take the pair with the largest *relative* spectral gap
``mu_(K+1) / mu_K`` of the normalised Laplacian (``mu = 1 - lambda``),
counting only pairs whose ``K``-way spectral partition has no cluster under
:func:`min_cluster_size` points; below :data:`MIN_RELATIVE_GAP` there is no
cluster structure and ``K = 1``.  By the higher-order Cheeger inequalities a
small ``mu_K`` means ``K`` nearly separate groups and a large
``mu_(K+1)`` means no ``(K+1)``-th; their ratio is free of the kernel's scale,
so scales and ``K`` compete on one footing, which the absolute eigengap
``lambda_K - lambda_(K+1)`` is not (sharper kernels have larger gaps, and
``K = 1`` always wins at the smoothest scale).  The size floor keeps a few
outliers cut off by a sharp kernel from counting as clusters.  Chosen on the
selection half of the clustering suite (``docs/results/clustering-suite.md``).

Every geoforest clusterer that estimates ``K`` scores each candidate ``K``
(an eigengap, a ratio of mode scores, ...) and keeps the best.  Real data
often leave two candidates nearly tied, or show no cluster structure at all;
a user who asked for clusters must not get either answer silently.  The
clusterers expose the scores as ``n_clusters_scores_`` and call
:func:`explain_choice`, which warns when ``K = 1`` was chosen and when the
runner-up scores within :data:`CLOSE_FRACTION` of the winner.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = [
    "CLOSE_FRACTION",
    "MIN_RELATIVE_GAP",
    "STRONG_RELATIVE_GAP",
    "STRONG_STEP_EXCESS",
    "LabelFreeChoiceWarning",
    "choose_by_relative_gap",
    "choose_finest_level",
    "eigengap_scores",
    "explain_choice",
    "min_cluster_size",
    "n_components",
    "relative_gaps",
    "score_partitions",
    "supported_levels",
]

#: A runner-up scoring at least this fraction of the winner's score is a close call.
CLOSE_FRACTION = 0.9
#: Smallest relative gap ``mu_(K+1) / mu_K`` taken as ``K``-cluster structure; above
#: what one Gaussian blob gives (docs/defaults.md).
MIN_RELATIVE_GAP = 2.0
#: A label-free ``K >= 2`` whose relative gap is below this is weak evidence, and
#: :func:`explain_choice` says so: structureless controls (uniform squares,
#: Gaussian clouds) reach 1.5-2.1 at their chosen K, separated blobs 3.5 and
#: more, at no cost beyond the gaps already computed (``docs/defaults.md``,
#: "Weak label-free evidence").
STRONG_RELATIVE_GAP = 3.0
#: The excess a strong step (a relative gap of at least :data:`STRONG_RELATIVE_GAP`)
#: must reach in :func:`choose_finest_level`: more clustered than its null, nothing
#: more.  No structureless control reaches such a gap, so the step is not a blob's
#: (``docs/defaults.md``, "A strong step needs only a positive excess").
STRONG_STEP_EXCESS = 0.0
#: Laplacian eigenvalues below this count as 0 (connected components) in the ratios.
_MU_FLOOR = 1e-6


def min_cluster_size(n: int) -> int:
    """Smallest cluster a label-free choice accepts: ``max(5, 2 % of n)``, at most ``n // 2``.

    Examples
    --------
    >>> min_cluster_size(100), min_cluster_size(1000), min_cluster_size(6)
    (5, 20, 3)
    """
    return int(max(1, min(max(5, np.ceil(0.02 * n)), n // 2)))


def relative_gaps(eigenvalues, max_clusters: int) -> np.ndarray:
    """Relative spectral gaps ``mu_(K+1) / mu_K`` for ``K`` from 1 to ``max_clusters``.

    ``mu_k = 1 - lambda_k`` are the normalised Laplacian's eigenvalues from the
    affinity's ``lambda`` (descending), floored at 1e-6 (components).

    Returns
    -------
    ndarray of shape (max_clusters,)
        Entry ``K - 1`` for ``K`` above the number of connected components
        ``c`` (:func:`n_components`); NaN for ``K <= c`` (``mu_K = 0``) and
        where ``lambda_(K+1)`` was not computed.

    Examples
    --------
    >>> relative_gaps([1.0, 0.99, 0.9, 0.2], 3)
    array([nan, 10.,  8.])
    """
    values = np.sort(np.asarray(eigenvalues, dtype=np.float64).reshape(-1))[::-1]
    mu = np.maximum(1.0 - values, _MU_FLOOR)
    out = np.full(int(max_clusters), np.nan)
    for k in range(max(2, n_components(values) + 1), min(int(max_clusters), values.size - 1) + 1):
        out[k - 1] = mu[k] / mu[k - 1]
    return out


def n_components(eigenvalues) -> int:
    """Connected components seen in a spectrum: eigenvalues within 1e-6 of 1 (at least 1).

    Components of the affinity are clusters whatever the rule says; the
    relative gaps judge only further splits (a detached component would
    otherwise give ``mu_(c+1) / mu_c`` near infinity and hide all finer
    structure).

    Examples
    --------
    >>> n_components([1.0, 1.0 - 1e-9, 0.98, 0.5])
    2
    """
    values = np.asarray(eigenvalues, dtype=np.float64).reshape(-1)
    return max(1, int(np.sum(1.0 - values <= _MU_FLOOR)))


def score_partitions(partitions, max_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """Relative gaps and fragmentation flags of :func:`spectral_partitions` output.

    Parameters
    ----------
    partitions : Bunch
        ``eigenvalues``, ``rows`` and ``labels`` (dict ``K ->`` labels), as
        returned by :func:`~geoforest.graph.spectral_partitions`.
    max_clusters : int

    Returns
    -------
    gaps : ndarray of shape (max_clusters,)
        :func:`relative_gaps` of the eigenvalues.
    fragmented : ndarray of bool, shape (max_clusters,)
        True where the ``K``-way partition has a cluster under
        :func:`min_cluster_size` points of ``rows`` (and where none was computed).
    """
    gaps = relative_gaps(partitions.eigenvalues, max_clusters)
    fragmented = np.ones(int(max_clusters), dtype=bool)
    floor = min_cluster_size(partitions.rows.size)
    for k, labels in partitions.labels.items():
        if k <= max_clusters:
            fragmented[k - 1] = np.bincount(labels, minlength=k).min() < floor
    return gaps, fragmented


def choose_by_relative_gap(
    gaps, fragmented, *, min_ratio: float = MIN_RELATIVE_GAP, base_k: int = 1
):
    """The (candidate, ``K``) with the largest relative gap among unfragmented partitions.

    Parameters
    ----------
    gaps : array-like of shape (n_candidates, max_clusters)
        :func:`relative_gaps` of each candidate affinity.
    fragmented : array-like of bool, same shape
        True where the candidate's ``K``-way partition has a cluster under
        :func:`min_cluster_size` points (never chosen).
    min_ratio : float, default=2.0
        Below this everywhere, ``K = base_k``.
    base_k : int, default=1
        The answer without further structure: 1, or the number of connected
        components of the affinity (each a cluster); at most ``max_clusters``
        (``ValueError`` above: no allowed ``K`` keeps the components apart).

    Returns
    -------
    candidate : int
        Row of the winner (0 when ``K = base_k``).  Ties go to the first row,
        then the smaller ``K``.
    k : int
    scores : ndarray of shape (max_clusters,)
        Best unfragmented gap per ``K`` over the candidates (NaN where none);
        entry ``base_k - 1`` is ``min_ratio``: the bar the others must reach.

    Examples
    --------
    >>> gaps = np.array([[np.nan, 1.2, 9.0], [np.nan, 3.0, 1.1]])
    >>> frag = np.array([[False, False, True], [False, False, False]])
    >>> candidate, k, scores = choose_by_relative_gap(gaps, frag)
    >>> candidate, k, scores
    (1, 2, array([2. , 3. , 1.1]))
    """
    g = np.array(gaps, dtype=np.float64, ndmin=2)
    if int(base_k) > g.shape[1]:
        # Components are clusters whatever the rule says, and K may not exceed max_clusters.
        raise ValueError(
            f"the affinity has {int(base_k)} or more connected components, more than the "
            f"{g.shape[1]} clusters allowed (max_clusters, at most n_samples - 1); every "
            "component is a cluster: raise max_clusters or pass n_clusters"
        )
    g[np.asarray(fragmented, dtype=bool).reshape(g.shape) | ~np.isfinite(g)] = -np.inf
    scores = np.max(g, axis=0) if g.shape[0] else np.full(g.shape[1], -np.inf)
    scores = np.where(np.isfinite(scores), scores, np.nan)
    scores[int(base_k) - 1] = min_ratio
    if not np.any(np.isfinite(g)) or np.max(g) < min_ratio:
        return 0, int(base_k), scores
    flat = int(np.argmax(g))  # row-major: first candidate, then smaller K, on ties
    candidate, k = np.unravel_index(flat, g.shape)
    return int(candidate), int(k) + 1, scores


def choose_finest_level(
    gaps,
    excess,
    fragmented,
    *,
    min_gap: float,
    min_excess: float,
    strong_excess: float | None = STRONG_STEP_EXCESS,
) -> int:
    """The finest supported ``K``: the largest whose gap and excess both reach their bars.

    :func:`choose_by_relative_gap` takes the *largest* relative gap, the most
    separated level; where one class stands far from the others that is
    ``K = 2`` however many touching classes the rest hold.  Here each
    ``K`` is judged on its own: its relative gap ``mu_(K+1) / mu_K`` must
    reach ``min_gap`` (the level ends in a step) and its excess over Gaussian
    references (:func:`~geoforest.graph.spectral_excess`) must reach
    ``min_excess`` (a step one Gaussian blob would not show), and the
    largest such unfragmented ``K`` wins.  A *strong* step, a relative gap of
    :data:`STRONG_RELATIVE_GAP` or more, needs only ``strong_excess``: no
    structureless control reaches such a gap, and in two dimensions the
    Gaussian null of touching groups is nearly cut itself, so their clear
    step shows little excess.  The rule of
    :func:`~geoforest.graph.label_free_levels`, which holds the default bars
    (``LEVEL_MIN_GAP``, ``MIN_EXCESS``) and the evidence around it.

    Parameters
    ----------
    gaps : array-like of shape (max_clusters,)
        :func:`relative_gaps`: entry ``K - 1`` for ``K`` (NaN: not scored).
    excess : array-like of shape (max_clusters - 1,)
        :func:`~geoforest.graph.spectral_excess`: entry ``K - 2`` for ``K``.
    fragmented : array-like of bool, shape (max_clusters,)
        True where the ``K``-way partition has a cluster under
        :func:`min_cluster_size` points (never chosen).
    min_gap, min_excess : float
        The bars (finite; NaN would silently reject every ``K``).
    strong_excess : float or None, default=STRONG_STEP_EXCESS
        The excess bar of a strong step; ``None``: ``min_excess`` for every
        step, strong or not.

    Returns
    -------
    int
        The largest qualifying ``K``, or 1 when none qualifies.

    Raises
    ------
    ValueError
        Lengths that do not describe the same ``K``, or a bar that is not a
        finite real number.

    Examples
    --------
    >>> gaps = [np.nan, 40.0, 1.6, 1.1]    # K = 2 far apart; a step after K = 3
    >>> excess = [3.0, 0.9, 0.2]           # K = 2, 3, 4 against the Gaussian null
    >>> frag = [False, False, False, False]
    >>> choose_by_relative_gap([gaps], [frag])[1], choose_finest_level(
    ...     gaps, excess, frag, min_gap=1.3, min_excess=0.5)
    (2, 3)

    A strong step with little excess (two touching groups in the plane):

    >>> choose_finest_level([np.nan, 40.0, 8.0, 1.1], [3.0, 0.3, 0.2], frag,
    ...                     min_gap=1.3, min_excess=0.5), choose_finest_level(
    ...     [np.nan, 40.0, 8.0, 1.1], [3.0, 0.3, 0.2], frag, min_gap=1.3,
    ...     min_excess=0.5, strong_excess=None)
    (3, 2)
    """
    bars = {"min_gap": min_gap, "min_excess": min_excess, "strong_excess": strong_excess}
    chosen = np.flatnonzero(supported_levels(gaps, excess, fragmented, **bars))
    return int(chosen[-1]) + 1 if chosen.size else 1


def supported_levels(
    gaps,
    excess,
    fragmented,
    *,
    min_gap: float,
    min_excess: float,
    strong_excess: float | None = STRONG_STEP_EXCESS,
) -> np.ndarray:
    """The levels :func:`choose_finest_level` accepts (bool, entry ``K - 1`` for
    ``K``; never ``K = 1``); its parameters, checks and errors."""
    bars = (("min_gap", min_gap), ("min_excess", min_excess))
    if strong_excess is not None:
        bars += (("strong_excess", strong_excess),)
    for bar_name, bar in bars:
        if isinstance(bar, bool | complex) or not np.isfinite(np.real(bar)):
            raise ValueError(f"{bar_name} must be a finite real number, got {bar!r}")
    g = np.asarray(gaps, dtype=np.float64).reshape(-1)
    e = np.asarray(excess, dtype=np.float64).reshape(-1)
    frag = np.asarray(fragmented, dtype=bool).reshape(-1)
    if frag.size != g.size or e.size != g.size - 1:
        raise ValueError(
            f"gaps ({g.size}), fragmented ({frag.size}) and excess ({e.size}) must describe "
            "the same K: excess has one entry fewer (it starts at K = 2)"
        )
    ok = np.zeros(g.size, dtype=bool)
    with np.errstate(invalid="ignore"):  # NaN: not scored, never chosen
        enough = e >= min_excess
        if strong_excess is not None:
            enough |= (g[1:] >= max(STRONG_RELATIVE_GAP, min_gap)) & (e >= strong_excess)
        ok[1:] = (g[1:] >= min_gap) & enough & ~frag[1:]
    return ok


class LabelFreeChoiceWarning(UserWarning):
    """A label-free choice of ``K`` found no structure or was a close call.

    Filter it like any warning (``warnings.simplefilter("ignore",
    LabelFreeChoiceWarning)``) once the choice has been checked; passing
    ``n_clusters`` avoids the choice altogether.
    """


def eigengap_scores(eigenvalues, max_clusters: int) -> np.ndarray:
    """Eigengaps ``lambda_K - lambda_(K+1)`` for ``K`` from 1 to ``max_clusters``.

    Parameters
    ----------
    eigenvalues : array-like
        Leading eigenvalues of the normalised affinity (any order).
    max_clusters : int

    Returns
    -------
    ndarray of shape (max_clusters,)
        Entry ``K - 1`` is the gap after ``K``; NaN where ``lambda_(K+1)`` was
        not computed.

    Examples
    --------
    >>> eigengap_scores([1.0, 0.9, 0.4], 3)
    array([0.1, 0.5, nan])
    """
    values = np.sort(np.asarray(eigenvalues, dtype=np.float64).reshape(-1))[::-1]
    out = np.full(int(max_clusters), np.nan)
    m = min(int(max_clusters), max(values.size - 1, 0))
    out[:m] = values[:m] - values[1 : m + 1]
    return out


def explain_choice(
    estimator: str,
    k: int,
    scores,
    *,
    criterion: str,
    close: float = CLOSE_FRACTION,
    stacklevel: int = 3,
) -> int | None:
    """Warn when an estimated ``K`` is 1, weak or has a close runner-up; return the runner-up.

    Weak: a ``K >= 2`` chosen by a relative gap below
    :data:`STRONG_RELATIVE_GAP`, which structureless data reach.

    Parameters
    ----------
    estimator : str
        Name used in the message.
    k : int
        The ``K`` chosen.
    scores : array-like of shape (max_clusters,)
        Score of every candidate ``K`` at index ``K - 1`` (larger is better;
        NaN for candidates not scored).
    criterion : str
        What the scores are, for the message (``"eigengap"``, ...).
    close : float, default=0.9
        A runner-up scoring at least ``close`` times the winner is a close call.
    stacklevel : int, default=3
        Passed to :func:`warnings.warn` (3 points at the caller of ``fit``).

    Returns
    -------
    int or None
        The runner-up ``K`` (``None`` when no other candidate was scored).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     explain_choice("demo", 3, [0.1, 0.5, 0.48, 0.2], criterion="eigengap")
    2
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    demo chose K = 3 without labels (eigengap 0.48), but K = 2 is a close runner-up
    (0.5); pass n_clusters to choose.
    """
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    others = [(s[j], j + 1) for j in range(s.size) if j + 1 != k and np.isfinite(s[j])]
    runner = max(others)[1] if others else None
    chosen = s[k - 1] if 1 <= k <= s.size else np.nan
    if k == 1:
        if "relative" in criterion:
            # K = 1's score is the bar the others missed.
            why = f"no K >= 2 reaches the {criterion} of {chosen:.3g}"
            if runner is not None:
                why += f"; the best is K = {runner} at {s[runner - 1]:.3g}"
        else:
            why = f"{criterion} {chosen:.3g}"
            if runner is not None:
                why += f"; the runner-up is K = {runner} ({criterion} {s[runner - 1]:.3g})"
        warnings.warn(
            f"{estimator} found no cluster structure: K = 1, every point in one cluster "
            f"({why}). Pass n_clusters if you expect clusters.",
            LabelFreeChoiceWarning,
            stacklevel=stacklevel,
        )
    elif (
        "relative" in criterion
        and np.isfinite(chosen)
        and chosen < STRONG_RELATIVE_GAP
        and np.isfinite(s[: k - 1]).any()
    ):
        # The bar was reached, barely: structureless data do as much.  (With every
        # smaller K unscored, K is the affinity's number of components: those are
        # clusters whatever the gaps say.)
        warnings.warn(
            f"{estimator} chose K = {k} without labels from weak evidence ({criterion} "
            f"{chosen:.3g}, below {STRONG_RELATIVE_GAP}): data with no cluster structure "
            "(a uniform or Gaussian cloud) reach such gaps; pass n_clusters if you know K.",
            LabelFreeChoiceWarning,
            stacklevel=stacklevel,
        )
    elif runner is not None and np.isfinite(chosen) and s[runner - 1] >= close * chosen:
        # ``>=`` with a tie means the runner-up scored as well as the winner.
        warnings.warn(
            f"{estimator} chose K = {k} without labels ({criterion} {chosen:.3g}), but "
            f"K = {runner} is a close runner-up ({s[runner - 1]:.3g}); pass n_clusters "
            "to choose.",
            LabelFreeChoiceWarning,
            stacklevel=stacklevel,
        )
    return runner
