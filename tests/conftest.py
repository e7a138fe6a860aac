"""Shared test set-up.

Numba's on-disk cache does not notice an edited callee in another file, so a
test run after editing a kernel could run stale machine code. ``import
geoforest`` clears geoforest's numba cache when a kernel module changed
(``geoforest/_jitcache.py``); ``dev/jitcache.py``, the same code loaded from
this checkout's path, runs it once more here, before any test module imports
a geoforest, so that the check covers this checkout even where another
geoforest is installed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]

# Every hypothesis test draws the same examples in every run (derandomised): a red
# CI run is then reproducible, and a green one does not turn red by chance.
settings.register_profile("geoforest", derandomize=True)
settings.load_profile("geoforest")


def pytest_configure(config):
    spec = importlib.util.spec_from_file_location("dev_jitcache", REPO / "dev" / "jitcache.py")
    jitcache = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jitcache)
    jitcache.invalidate_stale_caches()


@pytest.fixture(scope="session")
def client():
    """One two-process ``LocalCluster`` for every Dask test that asks for it.

    Worker *processes* stand in for a real cluster: every task's arguments and
    results cross a process boundary, as they would between machines.  Started
    once per session (a cluster takes seconds to start) and only by the tests
    that ask for ``client``.
    """
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c
