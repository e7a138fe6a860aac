"""Drop this checkout's numba cache when a kernel module changed (by hand, or from the tests).

numba's ``cache=True`` checks only the source file of the function it loads,
so a cached caller keeps an edited callee's old machine code.  ``import
geoforest`` now guards against that itself (``geoforest/_jitcache.py``, called
by ``geoforest/_jit.py``); this script is the same code for a checkout,
without importing the package: ``tests/conftest.py`` runs it once per test
session, and ``python dev/jitcache.py`` runs it by hand (say, before a
benchmark that imports a kernel module through another path).

The implementation is the library's, loaded from this checkout's
``geoforest/_jitcache.py`` by path, so that it acts on this checkout even when
another geoforest is installed; everything below is re-exported from it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

#: geoforest's own package folder (this file lives in the repository's dev/).
PACKAGE = Path(__file__).resolve().parents[1] / "geoforest"

_spec = importlib.util.spec_from_file_location(
    "geoforest_checkout_jitcache", PACKAGE / "_jitcache.py"
)
_impl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_impl)

STAMP_NAME = _impl.STAMP_NAME
cache_folder = _impl.cache_folder
fingerprint = _impl.fingerprint
invalidate_stale_caches = _impl.invalidate_stale_caches
kernel_modules = _impl.kernel_modules
sources_digest = _impl.sources_digest

if __name__ == "__main__":
    changed = invalidate_stale_caches(PACKAGE)
    print("kernel sources changed: numba cache cleared" if changed else "numba cache up to date")
    sys.exit(0)
