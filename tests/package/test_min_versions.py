"""The declared dependency minimums (pyproject.toml) and the APIs that set them.

``.ci/min-versions`` installs exactly those minimums and runs these tests with
``GEOFOREST_EXPECT_MIN_VERSIONS=1``, which asserts that the environment really
holds them; in any other environment the installed versions must merely be at
least the minimums.  Why each minimum is what it is: docs/min-versions.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
from packaging.version import Version

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def declared_minimums() -> dict[str, str]:
    deps = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    out = {}
    for dep in deps:
        m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*>=\s*([^,;\s]+)", dep)
        assert m, f"every dependency declares a minimum with >=; got {dep!r}"
        out[m.group(1)] = m.group(2)
    return out


def test_every_core_dependency_declares_its_minimum():
    assert set(declared_minimums()) == {
        "numpy",
        "scipy",
        "scikit-learn",
        "numba",
        "joblib",
        "threadpoolctl",
        "tqdm",
        "quitefastmst",
    }


@pytest.mark.parametrize("name", sorted(declared_minimums()))
def test_installed_version_meets_the_declared_minimum(name):
    minimum = Version(declared_minimums()[name])
    installed = Version(version(name))
    if os.environ.get("GEOFOREST_EXPECT_MIN_VERSIONS") == "1":
        assert installed == minimum, f"{name}: {installed} installed, {minimum} declared"
    else:
        assert installed >= minimum, f"{name}: {installed} installed, {minimum} declared"


def test_scikit_learn_tags_and_validate_data():
    # scikit-learn >= 1.6: validate_data, __sklearn_tags__ and TransformerTags.
    from geoforest import KernelSpectralClustering, ObliqueForestClassifier

    tags = ObliqueForestClassifier().__sklearn_tags__()
    assert tags.transformer_tags.preserves_dtype == []
    tags = KernelSpectralClustering().__sklearn_tags__()
    assert tags.input_tags.pairwise and tags.input_tags.sparse


def test_progress_bar_and_truncated_kernel(capsys):
    # tqdm's progress bar over joblib's return_as="generator" (joblib >= 1.3),
    # and scipy.sparse.eye_array (scipy >= 1.12) in the truncated kernel.
    from geoforest import UnsupervisedForest
    from geoforest.cluster import truncated_kernel

    X = np.random.default_rng(0).normal(size=(60, 3))
    forest = UnsupervisedForest(n_estimators=4, n_jobs=2, verbose=1, random_state=0).fit(X)
    assert "trees" in capsys.readouterr().err
    S = truncated_kernel(forest, 5)
    assert S.shape == (60, 60)
    np.testing.assert_array_equal(S.diagonal(), 1.0)
    np.testing.assert_array_equal(S.toarray(), S.toarray().T)


def test_quitefastmst_on_numpy_arrays():
    # quitefastmst calls np.asarray(..., copy=...): numpy >= 2.0.
    from geoforest.graph import euclidean_mst

    X = np.random.default_rng(1).normal(size=(40, 2))
    for method in ("brute", "kdtree"):
        weights, edges = euclidean_mst(X, method=method)
        assert weights.shape == (39,) and edges.shape == (39, 2)


def test_quitefastmst_on_many_copies_of_a_point():
    # quitefastmst 0.9.0 and 0.9.1 end the process (segfault) here: >= 0.9.2.  A
    # child process, so a crash fails this test instead of ending the run.
    code = (
        "import numpy as np\n"
        "from geoforest.graph import euclidean_mst\n"
        "X = np.repeat(np.random.default_rng(0).normal(size=(2, 3)) * 10, 40, axis=0)\n"
        "weights, edges = euclidean_mst(X, method='kdtree')\n"
        "assert weights.shape == (79,) and (weights == 0).sum() == 78\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
