"""verbose > 0 shows a progress bar over the long loops and changes no result."""

from __future__ import annotations

import numpy as np
import pytest

import geoforest as gf


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0], [5, 5], [0, 5]])
    y = np.repeat(np.arange(3), 40)
    return centres[y] + rng.normal(size=(120, 2)) * 0.5


CASES = {
    "LUND": (lambda v: gf.LUND(verbose=v, random_state=0), "LUND times"),
    "LLPDSpectralClustering": (
        lambda v: gf.LLPDSpectralClustering(verbose=v, random_state=0),
        "LLPD scales",
    ),
    "ForestSpectralClustering": (
        lambda v: gf.ForestSpectralClustering(
            forest=gf.RandomProjectionForest(n_estimators=20),
            verbose=v,
            random_state=0,
            affinity="kernel",
        ),
        "rpfCluster scales",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_verbose_shows_progress_and_changes_nothing(blobs, name, capsys):
    make, desc = CASES[name]
    quiet = make(0).fit(blobs).labels_
    assert desc not in capsys.readouterr().err
    loud = make(1).fit(blobs).labels_
    assert desc in capsys.readouterr().err
    np.testing.assert_array_equal(quiet, loud)
