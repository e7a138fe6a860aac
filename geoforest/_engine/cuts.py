"""Cut kernels of the unsupervised split rules, on one node's sorted values.

Each kernel takes the sorted values ``z[:n]`` and the smallest leaf and returns
``(pos, score, gain)`` as described in :mod:`.splits`, which holds the rule
table (codes, names, parameters, workspaces) and the dispatch over codes.
These kernels know no rule codes: a rule's real-valued settings arrive as
arguments (unpacked from its ``params`` array by the dispatch).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .fastlog import APPROX_LOG_ERR, POLY_LOG_ERR, approx_log, float_bits, poly_log
from .rng import uniform
from .sorting import _heapsort

_LOG_2PI = np.log(2.0 * np.pi)


@njit(nogil=True, cache=True)
def _centered_totals(z, n):
    mean = 0.0
    for i in range(n):
        mean += z[i]
    mean /= n
    s1 = 0.0
    s2 = 0.0
    for i in range(n):
        d = z[i] - mean
        s1 += d
        s2 += d * d
    return mean, s1, s2


#: Arrays (of ``n_max + 1``) of the Fast-BIC workspace after its ``k log k``
#: table: the ``1 / k`` table and four per-cut arrays.
_FASTBIC_ARRAYS = 5


@njit(nogil=True, cache=True)
def fastbic_workspace(n_max):
    """Fast-BIC's scratch memory for nodes of up to ``n_max`` values.

    Tables of ``k log k`` and ``1 / k`` for ``k = 0..n_max``, so its weight
    term costs no logarithm and its approximate variances no division per
    cut, followed by four arrays for its scan (see :func:`_fastbic`).
    """
    w = n_max + 1
    ws = np.zeros((_FASTBIC_ARRAYS + 1) * w)
    for k in range(2, n_max + 1):
        ws[k] = k * np.log(k)
    for k in range(1, n_max + 1):
        ws[w + k] = 1.0 / k
    return ws


@njit(nogil=True, cache=True, inline="always")
def _sides_sse(s1, s2, n1, n2, tot1, tot2):
    """SSE of the ``n1`` values left of a cut and the ``n2`` right of it.

    ``s1``, ``s2``: running sums of the centred values and their squares left
    of the cut; ``tot1``, ``tot2``: the node's.  Every scan computes them
    here, by the same operations, so their results agree bit for bit.
    """
    sse1 = max(s2 - s1 * s1 / n1, 0.0)
    sse2 = max((tot2 - s2) - (tot1 - s1) * (tot1 - s1) / n2, 0.0)
    return sse1, sse2


@njit(nogil=True, cache=True, inline="always")
def _exact_gain(sse1, sse2, n1, n, floor, xlogx, log_n, bic_one):
    """Exact Fast-BIC gain of one cut: ``BIC_1 - min(BIC_diff, BIC_same)``."""
    n2 = n - n1
    var1 = max(sse1 / n1, floor)
    var2 = max(sse2 / n2, floor)
    var_pooled = max((sse1 + sse2) / n, floor)
    # -2 (n1 log(n1/n) + n2 log(n2/n)), from the k log k table.
    weights = -2.0 * (xlogx[n1] + xlogx[n2] - xlogx[n])
    bic_diff = (
        weights + n1 * (_LOG_2PI + np.log(var1)) + n2 * (_LOG_2PI + np.log(var2)) + n + 5.0 * log_n
    )
    bic_same = weights + n * (_LOG_2PI + np.log(var_pooled)) + n + 4.0 * log_n
    return bic_one - min(bic_diff, bic_same)


@njit(nogil=True, cache=True)
def _fastbic_scalar(z, n, min_leaf, var_floor_rel, ws):
    """Fast-BIC gain of every cut of sorted ``z[:n]``; the best cut (one cut at a time).

    The reference for :func:`_fastbic`, which gives the same result (the
    tests compare them, fallback nodes included).  Two passes, with exactly
    the result of one exact pass.  The first runs the sums, tracks the
    two-means cut and scores every cut with a table logarithm (error at
    most ``APPROX_LOG_ERR`` per log, so at most ``n * APPROX_LOG_ERR`` per
    score); the second computes the exact score,
    in the same order and by the same arithmetic as a single pass would, only
    at cuts whose approximate score is within twice that bound of the best
    approximate score.  Every other cut is provably worse than the best, so
    the chosen cut and its gain are the same, at one exact logarithm triple
    per near-best cut instead of per cut (the logarithms dominate the scan).
    The approximate logarithms and their bounds are in :mod:`.fastlog`.
    """
    n_max = ws.shape[0] // (_FASTBIC_ARRAYS + 1) - 1
    w = n_max + 1
    xlogx = ws[:w]
    cut_score = ws[2 * w : 3 * w]  # after the 1 / k table, which stays intact
    cut_sse1 = ws[3 * w : 4 * w]
    cut_sse2 = ws[4 * w : 5 * w]
    cut_at = ws[5 * w : 6 * w]  # the cut's position (exact in float64)
    mean, tot1, tot2 = _centered_totals(z, n)
    sse_node = tot2 - tot1 * tot1 / n
    if not sse_node > 0.0:
        return -1, -np.inf, -np.inf
    var_node = sse_node / n
    floor = var_floor_rel * var_node
    log_n = np.log(n)
    bic_one = n * (_LOG_2PI + np.log(var_node)) + n + 2.0 * log_n
    fbuf = np.empty(1)
    ibuf = fbuf.view(np.int64)
    km_pos = -1
    km_sse = np.inf
    s1 = 0.0
    s2 = 0.0
    n_cuts = 0
    approx_best = np.inf
    for pos in range(1, n):
        d = z[pos - 1] - mean
        s1 += d
        s2 += d * d
        if pos < min_leaf:
            continue
        if n - pos < min_leaf:
            break
        if not z[pos - 1] < z[pos]:
            continue
        n1 = pos
        n2 = n - pos
        sse1, sse2 = _sides_sse(s1, s2, n1, n2, tot1, tot2)
        if sse1 + sse2 < km_sse:
            km_sse = sse1 + sse2
            km_pos = pos
        var1 = max(sse1 / n1, floor)
        var2 = max(sse2 / n2, floor)
        var_pooled = max((sse1 + sse2) / n, floor)
        weights = -2.0 * (xlogx[n1] + xlogx[n2] - xlogx[n])
        f_diff = (
            weights + n1 * approx_log(var1, fbuf, ibuf) + n2 * approx_log(var2, fbuf, ibuf) + log_n
        )
        f_same = weights + n * approx_log(var_pooled, fbuf, ibuf)
        f = min(f_diff, f_same)  # the score less the terms every cut shares
        cut_score[n_cuts] = f
        cut_at[n_cuts] = pos
        cut_sse1[n_cuts] = sse1
        cut_sse2[n_cuts] = sse2
        n_cuts += 1
        if f < approx_best:
            approx_best = f
    # Any cut whose exact score can beat (or tie) the best is within 2 bounds.
    limit = approx_best + 2.0 * n * APPROX_LOG_ERR + 1e-9 * abs(approx_best)
    best_pos = -1
    best_gain = -np.inf
    for c in range(n_cuts):
        if cut_score[c] > limit:
            continue
        pos = int(cut_at[c])
        gain = _exact_gain(cut_sse1[c], cut_sse2[c], pos, n, floor, xlogx, log_n, bic_one)
        if gain > best_gain:
            best_gain = gain
            best_pos = pos
    if best_gain > 0.0 or best_pos < 0:
        return best_pos, best_gain, best_gain
    # No cut beats one Gaussian: fall back to the two-means cut, scored by its
    # relative SSE reduction minus one, in (-1, 0] (below any positive gain).
    return km_pos, -km_sse / sse_node, best_gain


@njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract"})
def _approx_scores(xlogx, inv, a_s1, a_s2, z, a_f, a_sse, first, last, n, tot1, tot2, floor):
    """Approximate Fast-BIC score and two-means SSE of every cut ``first..last``.

    ``a_f[pos]`` is the score less the terms every cut shares, from
    :func:`poly_log`; ``a_sse[pos]`` is ``SSE_left + SSE_right``; both are
    ``inf`` at ties (``z[pos - 1] == z[pos]``, no cut).  One loop with no
    branch and no call, which the compiler vectorises: the ``numpy`` error
    model drops numba's division-by-zero checks (``n1, n2 >= 1`` here) and
    unsigned indices its negative-index wraparound.  The SSEs are computed
    by the same operations as in :func:`_fastbic_scalar`, so they are equal
    (``contract`` may fuse a multiply into an add, and no SSE operation is a
    multiply feeding an add).  The variances behind the approximate scores
    multiply by the ``1 / k`` table ``inv`` instead of dividing: within an ulp,
    far inside the logarithm's error bound.
    """
    xlogx_n = xlogx[n]
    inv_n = 1.0 / n
    log_n = np.log(n)
    for pos in range(first, last + 1):
        i = np.uint64(pos)
        s1 = a_s1[i]
        s2 = a_s2[i]
        n1 = pos
        n2 = n - pos
        sse1, sse2 = _sides_sse(s1, s2, n1, n2, tot1, tot2)
        var1 = max(sse1 * inv[i], floor)
        var2 = max(sse2 * inv[np.uint64(n2)], floor)
        var_pooled = max((sse1 + sse2) * inv_n, floor)
        weights = -2.0 * (xlogx[i] + xlogx[np.uint64(n2)] - xlogx_n)
        f_diff = weights + n1 * poly_log(float_bits(var1)) + n2 * poly_log(float_bits(var2)) + log_n
        f_same = weights + n * poly_log(float_bits(var_pooled))
        cut = z[i - np.uint64(1)] < z[i]
        a_f[i] = min(f_diff, f_same) if cut else np.inf
        a_sse[i] = sse1 + sse2 if cut else np.inf


@njit(nogil=True, cache=True)
def _fastbic(z, n, min_leaf, var_floor_rel, ws):
    """Fast-BIC gain of every cut of sorted ``z[:n]``; the best cut.

    The same result as :func:`_fastbic_scalar` (same cut, score and gain, bit
    for bit), with its first pass in SIMD code: the running sums (which also
    give the node's totals), then every cut's approximate score and
    two-means SSE in one vectorised loop (:func:`_approx_scores`), then the
    smallest of each.  The exact second pass visits only the cuts within
    ``2 n POLY_LOG_ERR`` of the best approximate score.  Nodes whose
    variance floor is subnormal or whose sums could overflow are scored
    exactly at every cut: an exact pass, which the two-pass scans reproduce,
    without a second scan compiled into every first fit for these rare
    nodes (the scalar scan stays as the tests' reference).
    """
    n_max = ws.shape[0] // (_FASTBIC_ARRAYS + 1) - 1
    w = n_max + 1
    xlogx = ws[:w]
    inv = ws[w : 2 * w]
    a_s1 = ws[2 * w : 3 * w]
    a_s2 = ws[3 * w : 4 * w]
    a_f = ws[4 * w : 5 * w]
    a_sse = ws[5 * w : 6 * w]
    mean = 0.0
    for i in range(n):
        mean += z[i]
    mean /= n
    # Running sums of the centred values left of every cut; at n, the totals
    # (the same additions in the same order as ``_centered_totals``).
    s1 = 0.0
    s2 = 0.0
    for pos in range(1, n + 1):
        d = z[pos - 1] - mean
        s1 += d
        s2 += d * d
        a_s1[pos] = s1
        a_s2[pos] = s2
    tot1 = s1
    tot2 = s2
    sse_node = tot2 - tot1 * tot1 / n
    if not sse_node > 0.0:
        return -1, -np.inf, -np.inf
    var_node = sse_node / n
    floor = var_floor_rel * var_node
    first = max(min_leaf, 1)
    last = min(n - 1, n - min_leaf)  # cuts pos = first..last (left side size)
    if last < first:
        return -1, -np.inf, -np.inf
    if floor > 1e-300 and tot2 < 1e300:
        _approx_scores(xlogx, inv, a_s1, a_s2, z, a_f, a_sse, first, last, n, tot1, tot2, floor)
    else:  # beyond poly_log's exponent arithmetic (rare): score every cut exactly
        for pos in range(first, last + 1):
            sse1, sse2 = _sides_sse(a_s1[pos], a_s2[pos], pos, n - pos, tot1, tot2)
            cut = z[pos - 1] < z[pos]
            a_f[pos] = 0.0 if cut else np.inf  # within the limit below
            a_sse[pos] = sse1 + sse2 if cut else np.inf
    # The best approximate score, and the two-means cut (the first smallest
    # SSE, as in one pass); ties carry inf in both.
    approx_best = np.inf
    km_pos = -1
    km_sse = np.inf
    for pos in range(first, last + 1):
        i = np.uint64(pos)
        if a_f[i] < approx_best:
            approx_best = a_f[i]
        if a_sse[i] < km_sse:
            km_sse = a_sse[i]
            km_pos = pos
    if km_pos < 0:
        return -1, -np.inf, -np.inf
    # Exact scores where the approximate one is within two error bounds.
    limit = approx_best + 2.0 * n * POLY_LOG_ERR + 1e-9 * abs(approx_best)
    log_n = np.log(n)
    bic_one = n * (_LOG_2PI + np.log(var_node)) + n + 2.0 * log_n
    best_pos = -1
    best_gain = -np.inf
    for pos in range(first, last + 1):
        if not a_f[np.uint64(pos)] <= limit:
            continue
        sse1, sse2 = _sides_sse(a_s1[pos], a_s2[pos], pos, n - pos, tot1, tot2)
        gain = _exact_gain(sse1, sse2, pos, n, floor, xlogx, log_n, bic_one)
        if gain > best_gain:
            best_gain = gain
            best_pos = pos
    if best_gain > 0.0 or best_pos < 0:
        return best_pos, best_gain, best_gain
    return km_pos, -km_sse / sse_node, best_gain


@njit(nogil=True, cache=True)
def twomeans(z, n, min_leaf):
    mean, tot1, tot2 = _centered_totals(z, n)
    sse_node = max(tot2 - tot1 * tot1 / n, 0.0)
    best_pos = -1
    best_sse = np.inf
    s1 = 0.0
    s2 = 0.0
    for pos in range(1, n):
        d = z[pos - 1] - mean
        s1 += d
        s2 += d * d
        if pos < min_leaf:
            continue
        if n - pos < min_leaf:
            break
        if not z[pos - 1] < z[pos]:
            continue
        sse1, sse2 = _sides_sse(s1, s2, pos, n - pos, tot1, tot2)
        sse = sse1 + sse2
        if sse < best_sse:
            best_sse = sse
            best_pos = pos
    if best_pos < 0:
        return -1, -np.inf, -np.inf
    return best_pos, -best_sse, sse_node - best_sse


@njit(nogil=True, cache=True)
def _mean_var(z, lo, hi):
    m = 0.0
    for i in range(lo, hi):
        m += z[i]
    m /= hi - lo
    v = 0.0
    for i in range(lo, hi):
        v += (z[i] - m) * (z[i] - m)
    return m, v / (hi - lo)


@njit(nogil=True, cache=True)
def em_two_gaussians(z, n, init_pos, equal_var, floor, max_iter, tol):
    """EM for a 1-D two-component mixture; returns (loglik, w1, m1, v1, m2, v2).

    Sums are taken of values centred on the node mean to avoid cancellation.
    """
    c, _, _ = _centered_totals(z, n)
    m1, v1 = _mean_var(z, 0, init_pos)
    m2, v2 = _mean_var(z, init_pos, n)
    w1 = init_pos / n
    if equal_var:
        v1 = (init_pos * v1 + (n - init_pos) * v2) / n
        v2 = v1
    v1 = max(v1, floor)
    v2 = max(v2, floor)
    loglik_old = -np.inf
    loglik = -np.inf
    for _ in range(max_iter):
        # E-step (log-sum-exp), accumulating the M-step's weighted moments.
        lw1 = np.log(w1) - 0.5 * (_LOG_2PI + np.log(v1))
        lw2 = np.log(1.0 - w1) - 0.5 * (_LOG_2PI + np.log(v2))
        loglik = 0.0
        r1 = 0.0
        rz1 = 0.0
        rzz1 = 0.0
        rz2 = 0.0
        rzz2 = 0.0
        for i in range(n):
            a = lw1 - 0.5 * (z[i] - m1) ** 2 / v1
            b = lw2 - 0.5 * (z[i] - m2) ** 2 / v2
            top = max(a, b)
            lse = top + np.log(np.exp(a - top) + np.exp(b - top))
            loglik += lse
            r = np.exp(a - lse)
            d = z[i] - c
            r1 += r
            rz1 += r * d
            rzz1 += r * d * d
            rz2 += (1.0 - r) * d
            rzz2 += (1.0 - r) * d * d
        if loglik - loglik_old <= tol * abs(loglik):
            break
        loglik_old = loglik
        # M-step.
        r1 = min(max(r1, 1e-12), n - 1e-12)
        r2 = n - r1
        w1 = r1 / n
        d1 = rz1 / r1
        d2 = rz2 / r2
        m1 = c + d1
        m2 = c + d2
        q1 = max(rzz1 - r1 * d1 * d1, 0.0)
        q2 = max(rzz2 - r2 * d2 * d2, 0.0)
        if equal_var:
            v1 = max((q1 + q2) / n, floor)
            v2 = v1
        else:
            v1 = max(q1 / r1, floor)
            v2 = max(q2 / r2, floor)
    return loglik, w1, m1, v1, m2, v2


@njit(nogil=True, cache=True)
def _log_ratio(t, w1, m1, v1, m2, v2):
    """log(w1 N(t; m1, v1)) - log(w2 N(t; m2, v2))."""
    a = np.log(w1) - 0.5 * np.log(v1) - 0.5 * (t - m1) ** 2 / v1
    b = np.log(1.0 - w1) - 0.5 * np.log(v2) - 0.5 * (t - m2) ** 2 / v2
    return a - b


@njit(nogil=True, cache=True)
def equal_density_point(w1, m1, v1, m2, v2):
    """Point between the means where the weighted densities cross (bisection)."""
    lo = min(m1, m2)
    hi = max(m1, m2)
    f_lo = _log_ratio(lo, w1, m1, v1, m2, v2)
    f_hi = _log_ratio(hi, w1, m1, v1, m2, v2)
    if f_lo == 0.0:
        return lo
    if not (f_lo * f_hi < 0.0):
        return np.nan
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        f_mid = _log_ratio(mid, w1, m1, v1, m2, v2)
        if f_mid * f_lo > 0.0:
            lo = mid
            f_lo = f_mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@njit(nogil=True, cache=True)
def _gmm(z, n, min_leaf, var_floor_rel, max_iter, tol):
    init_pos, _, _ = twomeans(z, n, 1)
    if init_pos < 0:
        return -1, -np.inf, -np.inf
    _, _, tot2 = _centered_totals(z, n)
    var_node = tot2 / n
    floor = var_floor_rel * var_node
    log_n = np.log(n)
    bic_one = n * (_LOG_2PI + np.log(var_node)) + n + 2.0 * log_n
    ll_v, w1v, m1v, v1v, m2v, v2v = em_two_gaussians(z, n, init_pos, False, floor, max_iter, tol)
    ll_e, w1e, m1e, v1e, m2e, v2e = em_two_gaussians(z, n, init_pos, True, floor, max_iter, tol)
    bic_v = -2.0 * ll_v + 5.0 * log_n
    bic_e = -2.0 * ll_e + 4.0 * log_n
    if bic_v < bic_e:
        gain = bic_one - bic_v
        t = equal_density_point(w1v, m1v, v1v, m2v, v2v)
    else:
        gain = bic_one - bic_e
        t = equal_density_point(w1e, m1e, v1e, m2e, v2e)
    if np.isnan(t):
        # One component dominates everywhere between the means: fall back to
        # the two-means cut the EM started from.
        pos = init_pos
    else:
        pos = np.searchsorted(z[:n], t, side="right")
    if pos < min_leaf or n - pos < min_leaf or pos <= 0 or pos >= n:
        return -1, -np.inf, -np.inf
    return pos, gain, gain


@njit(nogil=True, cache=True)
def _valid_position(z, n, pos, min_leaf):
    """The valid cut position nearest to ``pos`` (``-1`` if there is none).

    Valid: ``min_leaf <= pos <= n - min_leaf`` and ``z[pos - 1] < z[pos]``.
    Ties in distance go to the smaller position.
    """
    lo = min_leaf
    hi = n - min_leaf
    if lo > hi:
        return -1
    if pos < lo:
        pos = lo
    elif pos > hi:
        pos = hi
    for step in range(n):
        down = pos - step
        if down >= lo and z[down - 1] < z[down]:
            return down
        up = pos + step
        if step > 0 and up <= hi and z[up - 1] < z[up]:
            return up
        if down < lo and up > hi:
            break
    return -1


@njit(nogil=True, cache=True)
def _sse_reduction(z, n, pos):
    """``SSE_node - SSE_left - SSE_right`` of cutting sorted ``z[:n]`` at ``pos``."""
    s_left = 0.0
    for i in range(pos):
        s_left += z[i]
    s_right = 0.0
    for i in range(pos, n):
        s_right += z[i]
    diff = s_left / pos - s_right / (n - pos)
    return pos * (n - pos) / n * diff * diff


@njit(nogil=True, cache=True)
def _uniform_cut(z, n, min_leaf, state):
    if not z[0] < z[n - 1]:
        return -1, -np.inf, -np.inf
    t = z[0] + uniform(state) * (z[n - 1] - z[0])
    pos = np.searchsorted(z[:n], t, side="right")
    pos = _valid_position(z, n, pos, min_leaf)
    if pos < 0:
        return -1, -np.inf, -np.inf
    g = _sse_reduction(z, n, pos)
    return pos, g, g


@njit(nogil=True, cache=True, inline="always")
def midpoint(a, b):
    """The threshold between sorted values ``a < b``: the midpoint, or ``a`` if that rounds up."""
    thr = a + 0.5 * (b - a)
    return thr if thr < b else a


@njit(nogil=True, cache=True, inline="always")
def value_range(z, n):
    """``(min, max)`` of the unsorted ``z[:n]`` (``n >= 1``)."""
    lo = z[0]
    hi = z[0]
    for i in range(1, n):
        lo = min(lo, z[i])
        hi = max(hi, z[i])
    return lo, hi


@njit(nogil=True, cache=True)
def uniform_cut_unsorted(z, n, min_leaf, state, z_sorted):
    """The rpTree's uniform cut of *unsorted* ``z[:n]``: ``(threshold, score, gain)``.

    The threshold of :func:`_uniform_cut` on the sorted values followed by
    :func:`midpoint` (the same draw from ``state``, cut position and values
    on either side of it), from two passes over ``z`` and no sort: the range,
    then the count below the draw, the largest value below it, the smallest
    above it and the two sides' sums.  Only the gain, the SSE reduction, can
    differ in its last bits, as the sides are summed in ``z``'s order: the
    node loop takes this path only where the gain decides nothing (one
    candidate, one batch, no gain threshold: the random projection forest).
    When a side of the draw holds fewer than ``min_leaf`` values (the cut
    moves to the nearest valid position), the values are sorted into
    ``z_sorted`` (by heapsort) and the cut continues as :func:`_uniform_cut`
    does, with the same draw.
    """
    lo, hi = value_range(z, n)
    if not lo < hi:
        return np.nan, -np.inf, -np.inf
    t = lo + uniform(state) * (hi - lo)
    count = 0
    below = -np.inf
    above = np.inf
    s_left = 0.0
    s_right = 0.0
    for i in range(n):
        v = z[i]
        left = v <= t
        count += left
        below = max(below, v if left else -np.inf)
        above = min(above, np.inf if left else v)
        s_left += v if left else 0.0
        s_right += 0.0 if left else v
    if min_leaf <= count <= n - min_leaf:  # z_sorted[count - 1] = below < above = z_sorted[count]
        diff = s_left / count - s_right / (n - count)
        g = count * (n - count) / n * diff * diff
        return midpoint(below, above), g, g
    z_sorted[:n] = z[:n]
    _heapsort(z_sorted, 0, n)  # small code: this path is rare and compiles with every tree
    pos = _valid_position(z_sorted, n, count, min_leaf)  # count: searchsorted(t, "right")
    if pos < 0:
        return np.nan, -np.inf, -np.inf
    g = _sse_reduction(z_sorted, n, pos)
    return midpoint(z_sorted[pos - 1], z_sorted[pos]), g, g


@njit(nogil=True, cache=True)
def _median_cut(z, n, min_leaf):
    pos = _valid_position(z, n, n // 2, min_leaf)
    if pos < 0:
        return -1, -np.inf, -np.inf
    g = _sse_reduction(z, n, pos)
    return pos, g, g
