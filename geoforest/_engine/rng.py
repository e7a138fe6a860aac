"""Explicit, per-unit-of-work random numbers for numba kernels.

Every tree owns one ``uint64[1]`` state array seeded from a single integer drawn
before any parallel work, so results never depend on threads, processes or the
order in which trees are scheduled.  The generator is SplitMix64 (Steele, Lea and
Flood, 2014): one 64-bit add and a mixing function per draw, full period 2**64,
and it passes BigCrush, which is plenty for sampling projections and rows.

All integer constants are ``np.uint64`` so numba never promotes the arithmetic to
float64 (mixing ``uint64`` with ``int64`` does that).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


def make_state(seed: int) -> np.ndarray:
    """Return a fresh generator state for a non-negative integer seed."""
    state = np.empty(1, dtype=np.uint64)
    state[0] = np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)
    # Warm up so that nearby seeds give unrelated streams.
    next_u64(state)
    return state


@njit(nogil=True, cache=True)
def next_u64(state):
    """Advance the state and return 64 random bits."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(nogil=True, cache=True)
def uniform(state):
    """Uniform float64 in [0, 1)."""
    return float(next_u64(state) >> _S11) * _INV53


@njit(nogil=True, cache=True)
def randint(state, n):
    """Uniform integer in [0, n) for 1 <= n < 2**53."""
    k = np.int64(uniform(state) * n)
    if k >= n:  # guard against rounding at the top end
        k = n - 1
    return k


@njit(nogil=True, cache=True)
def normal(state):
    """Standard normal float64 (Box-Muller; one pair of uniforms per draw)."""
    u1 = uniform(state)
    u2 = uniform(state)
    return np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2.0 * np.pi * u2)


@njit(nogil=True, cache=True)
def poisson(state, lam):
    """Poisson(lam) draw by inversion; fine for the small rates used here."""
    if lam <= 0.0:
        return 0
    if lam > 30.0:
        # Normal approximation for large rates (never hot).
        u1 = uniform(state)
        u2 = uniform(state)
        g = np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2.0 * np.pi * u2)
        k = np.int64(np.floor(lam + np.sqrt(lam) * g + 0.5))
        return max(k, 0)
    limit = np.exp(-lam)
    k = 0
    prod = uniform(state)
    while prod > limit:
        k += 1
        prod *= uniform(state)
    return k
