"""Shared test set-up.

Numba's on-disk cache does not notice an edited callee in another file, so a
test run after editing a kernel could run stale machine code. The guard in
``dev/jitcache.py`` clears geoforest's numba cache once per session when any
kernel module changed; a user's ``import geoforest`` never does this.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

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
