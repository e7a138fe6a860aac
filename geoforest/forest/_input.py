"""The forests' input: float32 rows the engine reads, converted without losing points.

The engine works in float32 (half the memory and bandwidth of float64).  A
plain cast keeps about 7 significant digits, so a column whose values sit far
from zero compared with their spread loses its resolution: 2,000 points with
an offset of 1e7 keep 421 distinct rows (1e8: 4), and their neighbours are
mostly wrong.  Splits and projections do not depend on where the origin is
(every projection of a shifted point is shifted by the same amount), so such
columns are shifted to their midpoint in float64 *before* the cast; the same
shift is applied to every later query.  Columns that are already well placed
are left as they are, so ordinary data give bit-identical float32 values and
identical trees.  When rows still merge, a warning says how many.

A fitted forest keeps its own copy of the training rows: a caller that edits
its array afterwards must not change the model.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = [
    "F32_MAX",
    "PrecisionWarning",
    "centring_offset",
    "check_float32_range",
    "input_dtype",
    "offset_from_range",
    "to_float32",
]

#: A column is shifted to its midpoint before the float32 cast when the midpoint's
#: magnitude exceeds this many times the column's range: the cast would then leave
#: fewer than 2**16 distinct levels across the range (float32 has 24 bits).
CENTRE_RATIO = 256.0

#: float32's largest value (about 3.4e38).
F32_MAX = float(np.finfo(np.float32).max)


class PrecisionWarning(UserWarning):
    """Distinct training rows became identical when converted to float32."""


def input_dtype(X) -> type:
    """The dtype to validate ``X`` to: float32 when that cast is exact, else float64."""
    dtype = getattr(X, "dtype", None)
    if isinstance(dtype, np.dtype) and (
        dtype in (np.float32, np.float16, np.bool_)
        or (np.issubdtype(dtype, np.integer) and dtype.itemsize <= 2)
    ):
        return np.float32
    return np.float64


def centring_offset(X: np.ndarray) -> np.ndarray | None:
    """Per-column shift applied before the float32 cast, or None when none is needed.

    Only columns whose midpoint is more than :data:`CENTRE_RATIO` times their
    range away from zero are shifted (to their midpoint, an order-free
    statistic, so any row order gives the same shift).  Constant columns carry
    no resolution to lose and are left alone.
    """
    if X.dtype != np.float64 or X.shape[0] == 0 or X.shape[1] == 0:
        return None
    return offset_from_range(X.min(axis=0), X.max(axis=0))


def offset_from_range(lo: np.ndarray, hi: np.ndarray) -> np.ndarray | None:
    """:func:`centring_offset` from the float64 column minima and maxima alone.

    A distributed fit reduces the chunks of ``X`` to these two vectors and
    gets the same shift as the in-memory fit.
    """
    mid = (lo + hi) / 2.0
    spread = hi - lo
    shift = (spread > 0) & (np.abs(mid) > CENTRE_RATIO * spread)
    if not shift.any():
        return None
    return np.where(shift, mid, 0.0)


def to_float32(X: np.ndarray, offset: np.ndarray | None) -> np.ndarray:
    """``X - offset`` (computed in float64) as C-ordered float32; ``X`` itself when already so.

    Raises
    ------
    ValueError
        A value is infinite in float32: beyond float32's largest value (about
        3.4e38) after the shift, where the cast would silently give ``inf``.
        scikit-learn's validation, which ``fit`` and every query run first,
        checks finiteness in float64 only.
    """
    step = max(1, 2**20 // max(X.shape[1], 1))  # bounded temporaries
    with np.errstate(over="ignore"):  # an overflow is refused below, in words
        if offset is None:
            out = np.ascontiguousarray(X, dtype=np.float32)
        else:
            out = np.empty(X.shape, dtype=np.float32)
            for lo in range(0, X.shape[0], step):
                np.subtract(X[lo : lo + step], offset, out=out[lo : lo + step], casting="unsafe")
    if out is not X and (X.dtype.itemsize > 4 or offset is not None):  # else nothing overflows
        check_finite32(out, step)
    return out


def check_float32_range(values: np.ndarray, name: str) -> None:
    """Refuse targets or sample weights that are not finite or exceed float32's range.

    The supervised forests keep them in float32 beside the rows (the canonical
    row order hashes them) and sum weighted squared targets in float64: beyond
    about 3.4e38 the cast gives ``inf`` and the squares overflow, and the trees
    silently stop at their root.  One clear line instead.  NaN is refused
    here too: scikit-learn's validation converts an object ``y`` holding
    ``None`` to NaN without checking it, and every prediction would be NaN.
    """
    if not np.isfinite(values).all():
        raise ValueError(f"Input {name} contains NaN or infinity (None in an object array is NaN).")
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    if largest > F32_MAX:
        raise ValueError(
            f"{name} holds values too large for the forests (largest magnitude "
            f"{largest:.3g}, float32's limit is about {F32_MAX:.1e}): divide {name} "
            "by a common factor to bring it within range."
        )


def check_finite32(X32: np.ndarray, step: int) -> None:
    """Refuse infinite values in the float32 rows ``X32``, checked ``step`` rows at a time."""
    for lo in range(0, X32.shape[0], step):
        if not np.isfinite(X32[lo : lo + step]).all():
            raise ValueError(
                "Input X contains infinity or a value too large for dtype('float32'): "
                f"the forests compute in float32, whose largest value is about "
                f"{float(np.finfo(np.float32).max):.1e}. Rescale the columns (for example "
                "divide by a common factor) to bring them within range."
            )


def _row_hashes(X: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's bit pattern (collisions: about n^2 / 2^65)."""
    bits = X.view(np.uint64 if X.dtype.itemsize == 8 else np.uint32)
    h = np.full(X.shape[0], 0xCBF29CE484222325, dtype=np.uint64)
    mult = np.uint64(0x100000001B3)
    with np.errstate(over="ignore"):
        for j in range(X.shape[1]):
            col = bits[:, j].astype(np.uint64)
            # +0.0 and -0.0 are the same point
            col[col == (np.uint64(1) << np.uint64(8 * X.dtype.itemsize - 1))] = 0
            h = (h ^ col) * mult
            h ^= h >> np.uint64(29)
    return h


def warn_if_rows_merged(X: np.ndarray, X32: np.ndarray, *, stacklevel: int = 3) -> None:
    """Warn when distinct rows of ``X`` are identical in its float32 version ``X32``."""
    if X.dtype == np.float32 or X.shape[0] < 2 or X.shape[1] == 0:
        return
    before = np.unique(row_hashes64(X)).size
    after = np.unique(_row_hashes(X32)).size
    warn_rows_merged(before, after, stacklevel=stacklevel + 1)


def row_hashes64(X: np.ndarray) -> np.ndarray:
    """The hashes :func:`warn_if_rows_merged` counts distinct rows of ``X`` by (as float64)."""
    return _row_hashes(np.ascontiguousarray(X, dtype=np.float64))


def warn_rows_merged(before: int, after: int, *, stacklevel: int) -> None:
    """Warn that ``before`` distinct rows became ``after`` distinct float32 rows."""
    if after < before:
        warnings.warn(
            f"{before - after} of the {before} distinct training rows became identical "
            "when converted to float32 (the forests compute in float32): the data vary "
            "below float32's resolution of about 7 significant digits. Rescale the "
            "columns (for example subtract a large common offset per column, or "
            "standardise) to keep them apart.",
            PrecisionWarning,
            stacklevel=stacklevel,
        )


def warn_if_constant(X: np.ndarray) -> None:
    """Warn when every row of ``X`` is the same point: no tree can split it."""
    if np.all(X.min(axis=0) == X.max(axis=0)):
        warnings.warn(
            "every feature of X is constant: the trees cannot split and all "
            "points will be equally close",
            UserWarning,
            stacklevel=3,
        )
