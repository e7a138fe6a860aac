"""One size limit for every dense ``n x m`` result the library builds on request.

A dense proximity or LLPD matrix grows with the square of the number of
points: 30,000 points are 7.2 GB of float64.  Asked for by accident (a
``dense=True`` left in from a small test), that fills the machine's memory
before anything fails.  Every such method checks its result's size *in bytes
before allocating* against :data:`DENSE_MAX_BYTES`, and a ``max_bytes``
argument raises the limit for the one call that really wants it.
"""

from __future__ import annotations

import numbers

import numpy as np

#: Default limit on a dense result, in bytes (4 GiB: a float64 matrix of 23,170 x 23,170).
DENSE_MAX_BYTES = 4 * 2**30


def check_dense_size(
    shape: tuple[int, int], dtype, *, what: str, max_bytes: int | float | None, hint: str
) -> None:
    """Raise ``MemoryError``-like ``ValueError`` when a dense result would exceed the limit.

    Parameters
    ----------
    shape : tuple of int
        Shape of the dense result.
    dtype : numpy dtype
        Its element type.
    what : str
        The call, for the message (``"proximity(dense=True)"``).
    max_bytes : int, float or None
        The limit in bytes; ``None`` means :data:`DENSE_MAX_BYTES`.
    hint : str
        What to use instead (a sentence).

    Raises
    ------
    ValueError
        The result would need more than ``max_bytes`` bytes.
    """
    limit = DENSE_MAX_BYTES if max_bytes is None else max_bytes
    if (
        isinstance(limit, bool)
        or not isinstance(limit, numbers.Real)
        or np.isnan(limit)
        or limit <= 0
    ):
        raise ValueError(f"max_bytes must be a positive number of bytes or None, got {max_bytes!r}")
    size = int(np.prod(shape, dtype=np.float64)) * np.dtype(dtype).itemsize
    if size > limit:
        raise ValueError(
            f"{what} would build a dense {shape[0]:,} x {shape[1]:,} matrix of "
            f"{size / 2**30:.1f} GiB, above the limit of {limit / 2**30:.1f} GiB. {hint} "
            "To build it anyway, pass max_bytes (in bytes) above its size."
        )
