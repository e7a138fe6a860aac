"""Keep numba's on-disk cache of geoforest's kernels consistent with their sources.

Numba's ``cache=True`` checks only the source file of the function it loads:
when ``build_tree`` (``builder.py``) was compiled with ``sort_values``
(``sorting.py``) inlined and ``sorting.py`` changes, the cached
``build_tree`` still runs the old sort.  A regular install rewrites every
file, so it is safe; an editable (development) install is not: an edit to
one kernel module silently leaves stale machine code in its callers, and
timings or tests then measure code that no longer exists.

:func:`invalidate_stale_caches` runs once when ``geoforest`` is imported
(before any kernel is compiled or loaded: numba reads its cache at a
kernel's first call).  It fingerprints the kernel modules (path, size and
modification time of every ``.py`` file under the package that uses numba)
and, when the fingerprint differs from the one recorded at the last check,
deletes every numba cache file (``*.nbi``, ``*.nbc``) under the package's
``__pycache__`` folders, so all kernels recompile together.  It costs one
``stat`` per module.  Where the package folder is read-only (numba then caches
elsewhere, and a read-only install does not change), it does nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The package's modules that define or call numba kernels, relative to the package.
KERNEL_MODULES = (
    "_engine",
    "llpd",
    "proximity.py",
)
#: The fingerprint of the kernel modules at the last check.
STAMP_NAME = "numba-sources.stamp"


def _sources(root: Path, modules: tuple[str, ...]) -> list[Path]:
    files: list[Path] = []
    for name in modules:
        path = root / name
        if path.is_dir():
            files.extend(sorted(path.glob("*.py")))
        elif path.is_file():
            files.append(path)
    return files


def fingerprint(root: Path, modules: tuple[str, ...] = KERNEL_MODULES) -> str:
    """Path, size and modification time (ns) of every kernel module, one line each."""
    lines = []
    for path in _sources(root, modules):
        st = path.stat()
        lines.append(f"{path.relative_to(root).as_posix()} {st.st_size} {st.st_mtime_ns}")
    return "\n".join(lines) + "\n"


def invalidate_stale_caches(
    root: Path | None = None, modules: tuple[str, ...] = KERNEL_MODULES
) -> bool:
    """Delete the package's numba cache files if a kernel module changed since the last check.

    Parameters
    ----------
    root : Path, optional
        The package folder (default: geoforest's own).
    modules : tuple of str
        Kernel modules or subpackages under ``root``.

    Returns
    -------
    bool
        True when cache files were deleted (the sources changed), else False.
    """
    root = Path(__file__).parent if root is None else Path(root)
    stamp = root / "__pycache__" / STAMP_NAME
    try:
        current = fingerprint(root, modules)
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
