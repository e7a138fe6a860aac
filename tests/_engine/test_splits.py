"""Split rules against brute-force references."""

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from numba import njit
from sklearn.mixture import GaussianMixture

from geoforest._engine.rng import make_state
from geoforest._engine.splits import (
    FASTBIC,
    GMM,
    TWOMEANS,
    VAR_FLOOR,
    best_cut,
    default_params,
    make_workspace,
)

LOG2PI = np.log(2 * np.pi)


def _cut(rule, z, min_leaf=1):
    z = np.sort(np.asarray(z, dtype=np.float64))
    n = z.shape[0]
    return best_cut(
        rule, z, n, min_leaf, default_params(rule), make_workspace(rule, n), make_state(0)
    )


def _valid_cuts(z, min_leaf):
    n = len(z)
    return [s for s in range(max(1, min_leaf), n - min_leaf + 1) if z[s - 1] < z[s]]


def brute_fastbic(z, min_leaf=1):
    """Every cut evaluated from its two subsets with numpy (the URerF paper's formulas)."""
    z = np.sort(z)
    n = len(z)
    var_node = np.var(z)
    floor = VAR_FLOOR * var_node
    bic_one = n * np.log(2 * np.pi * var_node) + n + 2 * np.log(n)
    gains = {}
    for s in _valid_cuts(z, min_leaf):
        a, b = z[:s], z[s:]
        n1, n2 = len(a), len(b)
        v1 = max(np.var(a), floor)
        v2 = max(np.var(b), floor)
        vp = max((np.sum((a - a.mean()) ** 2) + np.sum((b - b.mean()) ** 2)) / n, floor)
        w = -2 * (n1 * np.log(n1 / n) + n2 * np.log(n2 / n))
        bic_diff = w + n1 * np.log(2 * np.pi * v1) + n2 * np.log(2 * np.pi * v2) + n + 5 * np.log(n)
        bic_same = w + n * np.log(2 * np.pi * vp) + n + 4 * np.log(n)
        gains[s] = bic_one - min(bic_diff, bic_same)
    best = max(gains, key=lambda s: (gains[s], -s))
    if gains[best] > 0:
        return best, gains[best], gains[best]
    # No structure: the two-means cut, scored by relative SSE reduction minus one.
    km_pos, km_sse = brute_twomeans(z, min_leaf)
    return km_pos, -km_sse / np.sum((z - z.mean()) ** 2), gains[best]


def brute_twomeans(z, min_leaf=1):
    z = np.sort(z)
    sse = {
        s: np.sum((z[:s] - z[:s].mean()) ** 2) + np.sum((z[s:] - z[s:].mean()) ** 2)
        for s in _valid_cuts(z, min_leaf)
    }
    best = min(sse, key=lambda s: (sse[s], s))
    return best, sse[best]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("min_leaf", [1, 3])
def test_fastbic_matches_brute_force(seed, min_leaf):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 80))
    z = rng.standard_normal(n) * rng.uniform(0.1, 50) + rng.uniform(-100, 100)
    if seed % 3 == 0:  # a mixture, so the best cut is a real gap
        z[: n // 3] += 8 * np.std(z)
    pos, score, gain = _cut(FASTBIC, z, min_leaf)
    ref_pos, ref_score, ref_gain = brute_fastbic(z, min_leaf)
    assert pos == ref_pos
    assert gain == pytest.approx(ref_gain, rel=1e-7, abs=1e-7)
    assert score == pytest.approx(ref_score, rel=1e-7, abs=1e-9)


def test_fastbic_fallback_on_structureless_values():
    """A Gaussian sample: no cut beats one Gaussian, so the two-means cut is offered."""
    z = np.random.default_rng(0).standard_normal(400)
    pos, score, gain = _cut(FASTBIC, z)
    assert gain <= 0
    assert -1 < score <= 0
    assert pos == brute_twomeans(z)[0]
    assert 100 < pos < 300  # balanced, not a single extreme point
    # A clear mixture has positive gain and a positive score.
    pos, score, gain = _cut(FASTBIC, np.r_[z, z + 20])
    assert pos == 400 and score == gain > 0


@pytest.mark.parametrize("seed", range(12))
def test_twomeans_matches_brute_force(seed):
    rng = np.random.default_rng(100 + seed)
    z = rng.exponential(size=int(rng.integers(4, 60))) * 10
    pos, score, gain = _cut(TWOMEANS, z)
    ref_pos, ref_sse = brute_twomeans(z)
    assert pos == ref_pos
    assert -score == pytest.approx(ref_sse, rel=1e-9)
    assert gain == pytest.approx(np.sum((z - z.mean()) ** 2) - ref_sse, rel=1e-9)


def test_ties_are_never_split():
    z = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 7.0, 7.0, 7.5])
    for rule in (FASTBIC, TWOMEANS, GMM):
        pos, _, _ = _cut(rule, z)
        zs = np.sort(z)
        assert 0 < pos < len(z) and zs[pos - 1] < zs[pos]
    # Fast-BIC brute force over the valid cuts only agrees.
    assert _cut(FASTBIC, z)[0] == brute_fastbic(z)[0]


def test_constant_values_have_no_cut():
    for rule in (FASTBIC, TWOMEANS, GMM):
        assert _cut(rule, np.full(10, 3.0))[0] == -1


def test_min_leaf_respected():
    z = np.r_[np.zeros(1), np.linspace(10, 11, 30)]  # best unconstrained: isolate the 0
    assert _cut(FASTBIC, z, 1)[0] == 1
    for rule in (FASTBIC, TWOMEANS):
        pos = _cut(rule, z, 5)[0]
        assert 5 <= pos <= len(z) - 5
    # GMM has one cut (where the densities cross); if it breaks min_leaf there is none.
    assert _cut(GMM, z, 1)[0] == 1
    assert _cut(GMM, z, 5)[0] == -1


@pytest.mark.parametrize("scale", [1e-2, 1.0, 1e2])
@pytest.mark.parametrize("sizes", [(300, 300), (200, 800)])
@pytest.mark.parametrize("rule", [FASTBIC, TWOMEANS, GMM])
def test_mixture_is_cut_inside_the_gap(scale, sizes, rule):
    rng = np.random.default_rng(7)
    a = rng.normal(0, 1, sizes[0])
    b = rng.normal(10, 1, sizes[1])
    z = np.sort(np.r_[a, b]) * scale
    pos, _, gain = _cut(rule, z)
    assert pos == sizes[0], "the cut must separate the two components"
    thr = 0.5 * (z[pos - 1] + z[pos])
    assert a.max() * scale < thr < b.min() * scale
    if rule != TWOMEANS:
        assert gain > 0


def test_fastbic_gain_is_scale_invariant():
    rng = np.random.default_rng(3)
    z = np.r_[rng.normal(0, 1, 50), rng.normal(4, 2, 70)]
    base = _cut(FASTBIC, z)
    for c in (1e-3, 7.0, 1e4):
        pos, _, gain = _cut(FASTBIC, z * c)
        assert pos == base[0]
        assert gain == pytest.approx(base[2], rel=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_gmm_bic_matches_sklearn(seed):
    """GMM gain = BIC(one Gaussian) - best BIC of the tied/full 2-component fits."""
    rng = np.random.default_rng(seed)
    z = np.r_[rng.normal(0, 1, 150), rng.normal(5, 1.5 + seed * 0.3, 250)]
    pos, _, gain = _cut(GMM, z)
    x = z.reshape(-1, 1)
    n = len(z)
    bic_one = n * (LOG2PI + np.log(np.var(z))) + n + 2 * np.log(n)
    bics = []
    for cov, k in (("full", 5), ("tied", 4)):
        gm = GaussianMixture(
            2,
            covariance_type=cov,
            tol=1e-12,
            max_iter=2000,
            reg_covar=0,
            means_init=[[0.0], [5.0]],
            random_state=0,
        ).fit(x)
        bics.append(-2 * gm.score(x) * n + k * np.log(n))
    assert gain == pytest.approx(bic_one - min(bics), rel=1e-4)
    # The cut is where the weighted densities cross: check against sklearn's posterior.
    gm = GaussianMixture(
        2,
        covariance_type="full",
        tol=1e-12,
        max_iter=2000,
        reg_covar=0,
        means_init=[[0.0], [5.0]],
        random_state=0,
    ).fit(x)
    zs = np.sort(z)
    post = gm.predict_proba(zs.reshape(-1, 1))[:, np.argmin(gm.means_.ravel())]
    assert np.all(post[: pos - 1] >= 0.5 - 1e-3) or pos < 3
    assert post[pos] <= 0.5 + 1e-3


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.integers(2, 60),
        elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=32),
    ),
    st.integers(1, 4),
)
def test_fastbic_property_matches_brute_force(z, min_leaf):
    """Any finite input (ties, repeated values, tiny spreads): same cut as brute force."""
    z = np.sort(z)
    valid = _valid_cuts(z, min_leaf)
    pos, score, gain = _cut(FASTBIC, z, min_leaf)
    if not valid or np.var(z) == 0:
        assert pos == -1
        return
    assert pos in valid
    ref_pos, ref_score, ref_gain = brute_fastbic(z, min_leaf)
    # Near-equal gains may be ordered differently by rounding; compare the values.
    assert gain == pytest.approx(ref_gain, rel=1e-6, abs=1e-6)
    assert score == pytest.approx(ref_score, rel=1e-6, abs=1e-6)


def test_approx_log_error_bound():
    from geoforest._engine.fastlog import APPROX_LOG_ERR, approx_log

    rng = np.random.default_rng(0)
    x = np.r_[10.0 ** rng.uniform(-299, 300, 20000), 1.0, 2.0, 0.5, np.nextafter(1.0, 2.0)]
    fbuf = np.empty(1)
    ibuf = fbuf.view(np.int64)
    approx = np.array([approx_log(v, fbuf, ibuf) for v in x])
    assert np.max(np.abs(approx - np.log(x))) <= APPROX_LOG_ERR
    assert approx_log(0.0, fbuf, ibuf) == -np.inf
    assert approx_log(1e-310, fbuf, ibuf) == pytest.approx(np.log(1e-310))


def vectorised_fastbic_gains(z, min_leaf=1):
    """Exact Fast-BIC gain of every valid cut of sorted ``z`` (numpy, all at once)."""
    n = len(z)
    c = z - z.mean()
    s1 = np.cumsum(c)[:-1]
    s2 = np.cumsum(c * c)[:-1]
    tot1, tot2 = c.sum(), (c * c).sum()
    n1 = np.arange(1, n, dtype=float)
    n2 = n - n1
    sse1 = np.maximum(s2 - s1 * s1 / n1, 0)
    sse2 = np.maximum((tot2 - s2) - (tot1 - s1) ** 2 / n2, 0)
    var_node = (tot2 - tot1 * tot1 / n) / n
    floor = VAR_FLOOR * var_node
    v1 = np.maximum(sse1 / n1, floor)
    v2 = np.maximum(sse2 / n2, floor)
    vp = np.maximum((sse1 + sse2) / n, floor)
    w = -2 * (n1 * np.log(n1 / n) + n2 * np.log(n2 / n))
    bic_one = n * (LOG2PI + np.log(var_node)) + n + 2 * np.log(n)
    bic_diff = w + n1 * (LOG2PI + np.log(v1)) + n2 * (LOG2PI + np.log(v2)) + n + 5 * np.log(n)
    bic_same = w + n * (LOG2PI + np.log(vp)) + n + 4 * np.log(n)
    gain = bic_one - np.minimum(bic_diff, bic_same)
    valid = np.zeros(n - 1, bool)
    valid[np.array(_valid_cuts(z, min_leaf), dtype=int) - 1] = True
    return np.where(valid, gain, -np.inf)


@pytest.mark.parametrize("kind", ["gauss", "mixture", "heavy", "ties", "uniform"])
@pytest.mark.parametrize("n", [3000, 40000])
def test_fastbic_two_pass_scan_finds_the_best_cut_of_large_nodes(kind, n):
    """Where the first pass's filter skips most cuts, the chosen cut is still the best."""
    rng = np.random.default_rng(n)
    z = {
        "gauss": rng.standard_normal(n),
        "mixture": np.r_[rng.standard_normal(n // 3) - 3, rng.standard_normal(n - n // 3) + 2],
        "heavy": rng.standard_cauchy(n),
        "ties": rng.integers(0, 40, n).astype(float),
        "uniform": rng.uniform(0, 1, n),
    }[kind]
    z = np.sort(z)
    pos, score, gain = _cut(FASTBIC, z, 3)
    gains = vectorised_fastbic_gains(z, 3)
    assert gain == pytest.approx(gains.max(), rel=1e-9, abs=1e-6)
    if gain > 0:
        assert gains[pos - 1] == pytest.approx(gains.max(), rel=1e-9, abs=1e-6)
        assert score == gain
    else:  # no structure: the two-means cut
        c = np.cumsum(z - z.mean())
        k = np.arange(1, len(z))
        sse = -(c[:-1] ** 2) / k - (c[-1] - c[:-1]) ** 2 / (len(z) - k)  # up to a constant
        sse[~np.isfinite(gains)] = np.inf
        assert sse[pos - 1] == pytest.approx(sse.min(), rel=1e-9, abs=1e-9)
    assert kind == "gauss" or gain > 0  # every other sample has two-cluster structure


def test_poly_log_error_is_within_its_bound():
    """The vectorised scan's logarithm, on every top-20-bit mantissa and on random floats."""
    from geoforest._engine.fastlog import POLY_LOG_ERR, poly_log

    @njit
    def poly_logs(x):
        bits = x.view(np.int64)
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = poly_log(bits[i])
        return out

    mantissas = 1.0 + np.arange(2**20) / 2**20
    rng = np.random.default_rng(5)
    x = np.r_[
        mantissas,
        mantissas * 2.0**-700,
        mantissas * 2.0**900,
        10.0 ** rng.uniform(-300, 300, 10**5),
    ]
    x = np.r_[x, np.nextafter(2.0, 1.0), np.nextafter(1.0, 2.0)]
    err = np.abs(poly_logs(x) - np.log(x))
    assert err.max() <= POLY_LOG_ERR
    assert err.max() > POLY_LOG_ERR / 10  # the bound is not loose by orders of magnitude


@pytest.mark.parametrize("seed", range(4))
def test_vectorised_fastbic_equals_the_scalar_scan_bit_for_bit(seed):
    """Same cut, score and gain as the one-cut-at-a-time reference, fallback cases included."""
    from geoforest._engine.cuts import _fastbic, _fastbic_scalar

    rng = np.random.default_rng(seed)
    for trial in range(400):
        n = int(rng.integers(1, 700))
        kind = trial % 6
        if kind == 0:
            z = rng.normal(size=n)
        elif kind == 1:
            z = np.r_[rng.normal(0, 1, n // 2), rng.normal(6, 0.3, n - n // 2)]
        elif kind == 2:
            z = np.round(rng.normal(size=n), 1)  # ties
        elif kind == 3:
            z = rng.exponential(size=n) * 10.0 ** rng.integers(-150, 150)
        elif kind == 4:
            z = rng.normal(size=n) * 1e-160  # subnormal variance floor: scalar path
        else:
            z = rng.normal(size=n) * 1e160  # sums overflow: scalar path
        z = np.sort(z)
        min_leaf = int(rng.integers(1, 6))
        ws = make_workspace(FASTBIC, n + int(rng.integers(0, 4))).arrays
        got = _fastbic(z, n, min_leaf, VAR_FLOOR, ws)
        want = _fastbic_scalar(z, n, min_leaf, VAR_FLOOR, ws.copy())
        assert got[0] == want[0]
        np.testing.assert_array_equal(np.array(got[1:]), np.array(want[1:]))


def test_each_rule_workspace_differs_in_its_field_types():
    # numba 0.60 (the declared minimum) dispatches namedtuples by their fields' types alone: two
    # rules' workspaces with equal field types shared one compiled kernel, and
    # the second rule ran the first's cut (caught by the rule check, as a
    # ValueError).  Each workspace's fields must differ, not only its class.
    import numba

    from geoforest._engine.splits import RULES, make_workspace

    for ties in (True, False):
        kinds = [
            numba.typeof(make_workspace(r.code, 16, ties)).types
            for r in RULES
            if r.workspace_type is not None
        ]
        assert len(kinds) >= 5
        assert len(set(kinds)) == len(kinds)
