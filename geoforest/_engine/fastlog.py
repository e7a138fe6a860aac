"""Fast logarithms for the Fast-BIC scan, each with a proven error bound.

The Fast-BIC rule (:mod:`.splits`) scores every cut of a node with three
logarithms.  It first scores every cut with one of these approximations and
then computes the exact score only where an approximate score is within
twice the bound of the best one: every other cut is provably worse, so the
chosen cut and its gain are those of the exact scan.

:func:`approx_log` reads a table of ``log`` at 1,024 mantissa bins (the scalar
scan); :func:`poly_log` evaluates a polynomial in the mantissa with integer
and floating-point arithmetic only, so a loop of it vectorises (the SIMD
scan).  :func:`float_bits` hands :func:`poly_log` the bits of a float64
without a trip through memory.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import intrinsic

from .._jit import njit

_LN2 = np.log(2.0)

#: ``log(m)`` at the midpoints of 1,024 bins of the mantissa range [1, 2).
_LOG_MANTISSA = np.log(1.0 + (np.arange(1024) + 0.5) / 1024.0)
#: Bound on ``|approx_log(x) - log(x)|``: half a bin (1/2048) times the
#: largest slope of ``log`` on [1, 2) (1), with room for rounding.
APPROX_LOG_ERR = 5e-4


@njit(nogil=True, cache=True, inline="always")
def approx_log(x, fbuf, ibuf):
    """``log(x)`` from the float's exponent and a table of its top 10 mantissa bits.

    ``fbuf`` (float64[1]) and ``ibuf`` (its int64 view) reinterpret the bits.
    """
    if not x > 1e-300:  # zero or subnormal: the exact log
        return np.log(x) if x > 0.0 else -np.inf
    fbuf[0] = x
    bits = ibuf[0]
    return ((bits >> 52) - 1023) * _LN2 + _LOG_MANTISSA[(bits >> 42) & 1023]


#: ``log(1 + t)`` on ``[0, 1]``: degree-5 polynomial (Chebyshev interpolation),
#: coefficients of ``t^0 .. t^5``.
_LOG1P_0 = 1.1447097560755306e-05
_LOG1P_1 = 0.9991664010110692
_LOG1P_2 = -0.4896990903208394
_LOG1P_3 = 0.2838231830653184
_LOG1P_4 = -0.12995719765823327
_LOG1P_5 = 0.029808765243435193
#: Bound on ``|poly_log(x) - log(x)|`` for normal positive ``x``: the
#: polynomial's largest error on [0, 1] is 1.14e-5 (4,000,001 points; tested on
#: every top-20-bit mantissa in ``tests/test_splits.py``), with room for rounding.
POLY_LOG_ERR = 2.5e-5
_MANTISSA = np.int64((1 << 52) - 1)
_TWO_M52 = 2.0**-52


@njit(nogil=True, cache=True, inline="always")
def poly_log(bits):
    """``log(x)`` from the int64 bit pattern of a positive normal float64 ``x``.

    Exponent times log 2 plus a polynomial in the mantissa: integer and
    floating-point arithmetic only, no table, so a loop of it vectorises.
    """
    e = (bits >> 52) - 1023
    t = (bits & _MANTISSA) * _TWO_M52
    p = _LOG1P_5
    p = p * t + _LOG1P_4
    p = p * t + _LOG1P_3
    p = p * t + _LOG1P_2
    p = p * t + _LOG1P_1
    p = p * t + _LOG1P_0
    return e * _LN2 + p


@intrinsic
def float_bits(typingctx, x):
    """The bit pattern of a float64 as an int64 (a register bitcast, no memory)."""
    if not (isinstance(x, types.Float) and x.bitwidth == 64):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return types.int64(x), codegen
