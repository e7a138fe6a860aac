"""Drop geoforest's numba cache when a kernel module changed (for developers, not users).

Numba's ``cache=True`` checks only the source file of the function it loads:
when ``build_tree`` (``_engine/builder.py``) was compiled with ``sort_values``
(``_engine/sorting.py``) inlined and ``sorting.py`` changes, the cached
``build_tree`` still runs the old machine code.  An install rewrites every file,
so users are safe; a development checkout is not, and timings or tests would
then measure code that no longer exists.

So this runs where kernels are edited and tested: ``tests/conftest.py`` calls
:func:`invalidate_stale_caches` once per test session, and
``python dev/jitcache.py`` does it by hand (before a benchmark, after an edit).
It fingerprints the kernel modules — derived, not listed: every module of the
package that imports numba or geoforest's ``_jit`` — by path, size and
modification time, and when the fingerprint differs from the one recorded at the
last check, deletes every numba cache file (``*.nbi``, ``*.nbc``) under the
package's ``__pycache__`` folders, so all kernels recompile together.  Where the
package folder is read-only it does nothing.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

#: The fingerprint of the kernel modules at the last check (in the package's __pycache__).
STAMP_NAME = "numba-sources.stamp"
#: geoforest's own package folder (this file lives in the repository's dev/).
PACKAGE = Path(__file__).resolve().parents[1] / "geoforest"
#: A module defines numba kernels when it imports numba or the package's ``_jit``.
_KERNEL_IMPORT = re.compile(
    r"^\s*(import numba\b|from numba\b|from \.+_jit import|from geoforest\._jit import)",
    re.MULTILINE,
)


def kernel_modules(root: Path = PACKAGE) -> list[Path]:
    """Every ``.py`` file under ``root`` that can define numba kernels, sorted."""
    return sorted(
        path
        for path in Path(root).rglob("*.py")
        if "__pycache__" not in path.parts and _KERNEL_IMPORT.search(path.read_text())
    )


def fingerprint(root: Path = PACKAGE) -> str:
    """Path, size and modification time (ns) of every kernel module, one line each."""
    root = Path(root)
    lines = []
    for path in kernel_modules(root):
        st = path.stat()
        lines.append(f"{path.relative_to(root).as_posix()} {st.st_size} {st.st_mtime_ns}")
    return "\n".join(lines) + "\n"


def invalidate_stale_caches(root: Path = PACKAGE) -> bool:
    """Delete the package's numba cache files if a kernel module changed since the last check.

    Parameters
    ----------
    root : Path
        The package folder (default: geoforest's own, in this checkout).

    Returns
    -------
    bool
        True when cache files were deleted (the sources changed), else False.
    """
    root = Path(root)
    stamp = root / "__pycache__" / STAMP_NAME
    try:
        current = fingerprint(root)
        if stamp.is_file() and stamp.read_text() == current:
            return False
        if not os.access(root, os.W_OK):
            return False
        removed = False
        for pattern in ("*.nbi", "*.nbc"):
            for path in root.rglob(f"__pycache__/{pattern}"):
                try:
                    path.unlink()
                    removed = True
                except FileNotFoundError:  # another process removed it first
                    pass
        stamp.parent.mkdir(exist_ok=True)
        tmp = stamp.with_name(f"{STAMP_NAME}.{os.getpid()}")
        tmp.write_text(current)
        tmp.replace(stamp)
        return removed
    except OSError:  # a read-only or vanishing folder: leave numba's cache as it is
        return False


if __name__ == "__main__":
    changed = invalidate_stale_caches()
    print("kernel sources changed: numba cache cleared" if changed else "numba cache up to date")
    sys.exit(0)
