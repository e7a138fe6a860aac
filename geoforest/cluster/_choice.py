"""What a label-free choice of the number of clusters rests on, told to the user.

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

__all__ = ["CLOSE_FRACTION", "LabelFreeChoiceWarning", "eigengap_scores", "explain_choice"]

#: A runner-up scoring at least this fraction of the winner's score is a close call.
CLOSE_FRACTION = 0.9


class LabelFreeChoiceWarning(UserWarning):
    """A label-free choice of ``K`` found no structure or was a close call.

    Filter it like any warning (``warnings.simplefilter("ignore",
    LabelFreeChoiceWarning)``) once the choice has been checked; passing
    ``n_clusters`` avoids the choice altogether.
    """


def eigengap_scores(eigenvalues, max_clusters: int) -> np.ndarray:
    """Eigengaps ``lambda_K - lambda_(K+1)`` for ``K = 1 .. max_clusters``.

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
    """Warn when an estimated ``K`` is 1 or has a close runner-up; return the runner-up.

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
        tail = ""
        if runner is not None:
            tail = f"; the runner-up is K = {runner} ({criterion} {s[runner - 1]:.3g})"
        warnings.warn(
            f"{estimator} found no cluster structure: K = 1, every point in one cluster "
            f"({criterion} {chosen:.3g}{tail}). Pass n_clusters if you expect clusters.",
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
