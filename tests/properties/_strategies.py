"""Hypothesis strategies for the data a user may hand any estimator.

A data matrix is drawn as a recipe (shape, kind of values, seed, defects) and
built with NumPy, not element by element: hypothesis then shrinks a failure
to a small recipe (fewest rows and columns, the simplest kind, no defect) in
a few steps, and a 300 x 50 matrix costs no more to draw than a 3 x 2 one.

Kinds of values, each a way real data breaks numerical code:

* ``"normal"``: the baseline, standard normal features;
* ``"integer"``: a few distinct integer levels (counts, grids): ties in every
  projection and duplicated rows;
* ``"huge"`` / ``"tiny"``: scales of ``1e30`` and ``1e-30``, whose squares
  overflow and underflow float32;
* ``"offset"``: a small spread far from zero (``1e8 + N(0, 1)``), which a
  float32 copy collapses unless it is centred first;
* ``"overflow32"``: values beyond float32's largest (``1e39``), finite in
  float64 only;
* ``"subnormal"``: scales of ``1e-310``, subnormal in float64.

Defects laid over any kind: duplicated rows, constant columns, a NaN or an
inf.  :func:`has_nonfinite` says whether a matrix holds a NaN or an inf in
float64, or a value that float32 cannot hold, where the forests compute.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

KINDS = ("normal", "integer", "huge", "tiny", "offset", "overflow32", "subnormal")
FINITE_KINDS = ("normal", "integer", "huge", "tiny", "offset", "subnormal")
_SCALE = {"normal": 1.0, "huge": 1e30, "tiny": 1e-30, "overflow32": 1e39, "subnormal": 1e-310}
FLOAT32_MAX = float(np.finfo(np.float32).max)
# One matrix in four holds a NaN or an inf: most cases then reach a result.
_DEFECTS = (None, None, None, None, None, None, "nan", "inf", "-inf")

#: The name of the profile ``conftest.py`` registers for these tests; the
#: environment variable ``GEOFOREST_PROPERTIES_PROFILE`` picks another
#: registered one (``"properties-long"`` for a longer local search).
PROFILE_ENV = "GEOFOREST_PROPERTIES_PROFILE"


def profile() -> settings:
    """The hypothesis settings of the property tests (registered in ``conftest.py``)."""
    return settings(
        settings.get_profile(os.environ.get(PROFILE_ENV, "properties")),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


class Recipe(NamedTuple):
    """How a data matrix is built (hypothesis shows this in a falsifying example)."""

    n: int
    p: int
    kind: str
    seed: int
    duplicates: bool
    constant_columns: bool
    nonfinite: str | None  # None, "nan", "inf" or "-inf"

    def build(self) -> np.ndarray:
        """The float64 matrix of this recipe (the same for the same recipe)."""
        rng = np.random.default_rng(self.seed)
        if self.kind == "integer":
            X = rng.integers(0, 3, size=(self.n, self.p)).astype(np.float64)
        elif self.kind == "offset":
            X = 1e8 + rng.normal(size=(self.n, self.p))
        else:
            X = rng.normal(size=(self.n, self.p)) * _SCALE[self.kind]
        if self.duplicates and self.n > 1:
            half = max(1, self.n // 2)
            X[half:] = X[rng.integers(0, half, size=self.n - half)]
        if self.constant_columns:
            X[:, rng.random(self.p) < 0.5] = 7.0
        if self.nonfinite is not None:
            X[rng.integers(self.n), rng.integers(self.p)] = float(self.nonfinite)
        return X


@st.composite
def recipes(
    draw,
    *,
    min_rows: int = 1,
    max_rows: int = 300,
    min_cols: int = 1,
    max_cols: int = 50,
    kinds: tuple[str, ...] = KINDS,
    nonfinite: bool = True,
) -> Recipe:
    """Recipes of data matrices: mostly small, sometimes up to ``max_rows``."""
    small = min(max_rows, max(min_rows, 40))
    n = draw(st.one_of(st.integers(min_rows, small), st.integers(min_rows, max_rows)))
    few = max(min_cols, min(max_cols, 5))
    p = draw(st.one_of(st.integers(min_cols, few), st.integers(min_cols, max_cols)))
    return Recipe(
        n=n,
        p=p,
        kind=draw(st.sampled_from(kinds)),
        seed=draw(st.integers(0, 2**16)),
        duplicates=draw(st.booleans()),
        constant_columns=draw(st.booleans()),
        nonfinite=draw(st.sampled_from(_DEFECTS)) if nonfinite else None,
    )


def has_nonfinite(X: np.ndarray, float32: bool = True) -> bool:
    """Whether ``X`` holds a NaN or an inf, or (``float32``: where the
    estimator computes in float32, as the forests do) a value float32 cannot hold."""
    X = np.asarray(X, dtype=np.float64)
    if not np.isfinite(X).all():
        return True
    return float32 and bool(np.abs(X).max(initial=0.0) > FLOAT32_MAX)


def as_user_input(draw, X: np.ndarray):
    """``X`` as a user may pass it: float64, float32, int64 (if integral) or a list."""
    forms = ["float64", "float32", "list"]
    if np.isfinite(X).all() and np.array_equal(X, np.round(X)) and np.abs(X).max(initial=0) < 1e9:
        forms.append("int64")
    form = draw(st.sampled_from(forms))
    if form == "list":
        return X.tolist()
    with np.errstate(over="ignore"):
        return X.astype(form)


# ------------------------------------------------------------------ the graph seam (issue 53)
#: The seam's property tests: each example fits a clusterer, so a small budget.
SEAM_SETTINGS = settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def seam_blobs(seed: int, n: int, d: int) -> np.ndarray:
    """Three unit Gaussian blobs of ``n`` points in ``d`` dimensions, centres in [-6, 6]."""
    rng = np.random.RandomState(seed)
    centres = rng.uniform(-6, 6, (3, d))
    return centres[rng.randint(3, size=n)] + rng.randn(n, d)


def repeated_values(sizes, shift: float, scale: float, seed: int):
    """``(X, y)``: a few distinct values in 3 dimensions, far apart, value ``j``
    repeated ``sizes[j]`` times (tied rows, as coded or rounded data have),
    in units of ``scale`` around ``shift``; ``y`` names each row's value."""
    rng = np.random.RandomState(seed)
    centres = rng.normal(size=(len(sizes), 3)) * 10 + np.arange(len(sizes))[:, None] * 30
    return np.repeat(centres, sizes, axis=0) * scale + shift, np.repeat(
        np.arange(len(sizes)), sizes
    )


#: Offsets and units of :func:`repeated_values`, from near zero to far, tiny to large.
repeated_shifts = st.sampled_from([0.0, 1e6, -1e8])
repeated_scales = st.sampled_from([1e-3, 1.0, 1e4])


#: A shift of each of 3 columns, up to 1e6 either way.
shifts = st.lists(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), min_size=3, max_size=3
)
#: Shifts far from zero for a forest: beyond 256x the columns' range, where it centres
#: them.  Nearer, its own trees depend on the rounded coordinates (its row sample is
#: drawn in a hash order of the float32 rows), which is the forest's to answer for.
far_shifts = st.lists(
    st.tuples(st.sampled_from([-1.0, 1.0]), st.floats(1e4, 1e6)).map(lambda t: t[0] * t[1]),
    min_size=3,
    max_size=3,
)
