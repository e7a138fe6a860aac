"""Drop numba's cached kernels when a kernel module changed, before any kernel loads.

numba's ``cache=True`` checks only the source file of the function it loads.
``build_tree`` (``_engine/builder.py``) is compiled with ``sort_values``
(``_engine/sorting.py``) linked in; when ``sorting.py`` changes and
``builder.py`` does not, the cached ``build_tree`` keeps running the sort it was
compiled with.
A fresh install has no cache yet, but an editable install (``pip install -e
.``, the README's) keeps its ``__pycache__`` across ``git pull``, and so does a
``NUMBA_CACHE_DIR`` or numba's user-wide cache folder across an upgrade: stale
machine code would run, silently.

So ``geoforest._jit``, which every kernel module imports before it defines a
kernel, calls :func:`check_at_import` once per process.  It records, next to
numba's cache files of the package (in the folder numba itself picks for them:
``NUMBA_CACHE_DIR``, else the package's ``__pycache__``, else numba's user-wide
folder), a stamp of the package's sources:

* a key made of the path, size and modification time of every ``.py`` file
  (one ``stat`` each: on an unchanged tree this and the stamp are all the
  check reads, about a millisecond for geoforest's hundred-odd files);
* when that key differs, a hash of the contents of the *kernel modules* — the
  modules that import numba or ``_jit``, derived from the sources rather than
  listed, so a new kernel module cannot be forgotten.  Only when that hash
  differs too (an edit, a ``git pull``; not a mere ``touch``, a checkout that
  restores the same text or an edit of the CLI) are the package's ``*.nbi`` /
  ``*.nbc`` files deleted, in numba's folder for every folder holding a kernel
  module, so that every kernel recompiles with its callees' current code.

It never stands in the way of an import: where numba has no writable cache
folder (``_jit`` then compiles without the cache) it does nothing; a failure to
read or write is ignored (numba's own behaviour, as before, is the fallback);
the stamp is written to a temporary file and renamed over the old one, so a
concurrent process reads either stamp whole; and the stamp is written only
after every cache file went and only if no source changed while it was read,
so a check cut short is repeated by the next process.  Two processes
starting together can both clear: the cost is a recompilation, never stale
code.  What it cannot see: a process that imported the old sources and writes
its cache after the check (a long-running process during a ``git pull``); an
edit that keeps a file's size and modification time; and a constant that a
kernel reads from a module without kernels (numba freezes such globals into
the machine code; keep them in kernel modules).

``dev/jitcache.py`` is the same code for a checkout, by hand or from the
tests' ``conftest.py``.

The module imports nothing from the package (``dev/jitcache.py`` loads it from
its path) and numba only when it needs numba's cache folder.
"""

from __future__ import annotations

import hashlib
import os
import re
import types
import uuid
from pathlib import Path

__all__ = [
    "STAMP_NAME",
    "cache_folder",
    "check_at_import",
    "fingerprint",
    "invalidate_stale_caches",
    "kernel_modules",
    "sources_digest",
]

#: The stamp's file name, in numba's cache folder of the package's top level.
STAMP_NAME = "numba-sources.stamp"
#: The package this file belongs to (geoforest, or a copy of it).
PACKAGE = Path(__file__).resolve().parent
#: A module defines numba kernels when it imports numba or the package's ``_jit``.
_KERNEL_IMPORT = re.compile(
    rb"^\s*(import numba\b|from numba\b|from \.+_jit import|from geoforest\._jit import)",
    re.MULTILINE,
)
#: numba's index and data files (its temporary ``*.tmp.<uid>`` files are left alone).
_CACHE_SUFFIXES = (".nbi", ".nbc")
#: First line of a stamp: a stamp of another format is a changed stamp.
_FORMAT = "geoforest numba-sources 1"


def _python_files(root: Path) -> list[tuple[str, str, int, int]]:
    """``(relative posix path, path, size, mtime_ns)`` of every ``.py`` file under ``root``, sorted.

    ``os.scandir`` and plain strings: this runs at every import of the package.
    """
    found = []
    folders = [("", os.fspath(root))]
    while folders:
        rel, folder = folders.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if name.endswith(".py") and entry.is_file():
                    st = entry.stat()
                    found.append((rel + name, entry.path, st.st_size, st.st_mtime_ns))
                elif (
                    name != "__pycache__"
                    and name[0] != "."
                    and entry.is_dir(follow_symlinks=False)  # a link cycle must not hang
                ):
                    folders.append((f"{rel}{name}/", entry.path))
    found.sort()
    return found


def fingerprint(root: Path = PACKAGE) -> str:
    """Path, size and modification time (ns) of every ``.py`` file under ``root``, one line each.

    Every file, not only the kernel modules: telling them apart means reading
    them, and a module that starts to define kernels must count.  One ``stat``
    per file is the whole cost of the check on an unchanged tree.
    """
    return _lines(_python_files(root))


def _lines(files: list[tuple[str, str, int, int]]) -> str:
    return "".join(f"{rel} {size} {mtime}\n" for rel, _, size, mtime in files)


def _kernel_sources(root: Path) -> list[tuple[str, str, bytes]]:
    """``(relative path, path, contents)`` of every kernel module under ``root``, sorted."""
    found = []
    for rel, path, _, _ in _python_files(root):
        source = Path(path).read_bytes()
        if _KERNEL_IMPORT.search(source):
            found.append((rel, path, source))
    return found


def kernel_modules(root: Path = PACKAGE) -> list[Path]:
    """Every ``.py`` file under ``root`` that can define numba kernels, sorted.

    Derived from the sources (an import of numba or of the package's ``_jit``)
    so that a new kernel module is covered without being listed anywhere.
    """
    return [Path(path) for _, path, _ in _kernel_sources(root)]


def _digest(kernels: list[tuple[str, str, bytes]]) -> str:
    digest = hashlib.sha256()
    for rel, _, source in kernels:
        digest.update(f"{rel}\0{len(source)}\0".encode())
        digest.update(source)
    return digest.hexdigest()


def sources_digest(root: Path = PACKAGE) -> str:
    """SHA-256 of the kernel modules' paths and contents.

    Contents rather than times: a checkout, ``touch`` or an edit that is undone
    changes the times but not the machine code, and must not cost a
    recompilation of every kernel.
    """
    return _digest(_kernel_sources(root))


def _probe() -> None:
    """A function whose code is re-labelled with a module's file name for numba's locators."""


def cache_folder(py_file: Path) -> Path | None:
    """The folder where numba caches the kernels of ``py_file``, or None if it has none.

    Asked of numba itself (the cache object a ``cache=True`` dispatcher of that
    file would get) so that ``NUMBA_CACHE_DIR``, a read-only package folder
    (numba then uses its user-wide folder) and numba's own choices between
    versions are followed exactly.  numba checks that the folder is writable.
    """
    from numba.core.caching import FunctionCache

    code = _probe.__code__.replace(co_filename=str(py_file))
    try:
        return Path(FunctionCache(types.FunctionType(code, {}, "_probe")).cache_path)
    except RuntimeError:  # "no locator available": numba cannot cache this file anywhere
        return None


def _read_stamp(stamp: Path) -> dict[str, str]:
    try:
        lines = stamp.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    if not lines or lines[0] != _FORMAT:
        return {}
    return dict(line.split(" ", 1) for line in lines[1:] if " " in line)


def _write_stamp(stamp: Path, stats: str, sources: str) -> None:
    """Write the stamp through a temporary file renamed over it: readers see it whole or not.

    The temporary name is unique to the process (a cache folder can be shared
    between machines), and the file's mode follows the umask, as numba's own
    cache files do, so that others sharing the folder can read it.
    """
    tmp = stamp.with_name(f".{STAMP_NAME}.{os.getpid()}.{uuid.uuid4().hex[:12]}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(f"{_FORMAT}\nstats {stats}\nsources {sources}\n")
        os.replace(tmp, stamp)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _cache_entries(folders: set[Path]):
    """numba's cache files (``os.DirEntry``) in ``folders``; a folder that is gone has none."""
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue
        yield from (e for e in entries if e.name.endswith(_CACHE_SUFFIXES))


def _clear(folders: set[Path]) -> tuple[bool, bool]:
    """Delete numba's cache files in ``folders``: (any deleted, all deleted)."""
    removed, complete = False, True
    for entry in _cache_entries(folders):
        try:
            os.unlink(entry.path)
            removed = True
        except FileNotFoundError:  # another process removed it first
            pass
        except OSError:
            complete = False
    return removed, complete


def _stats_key(files: list[tuple[str, str, int, int]]) -> str:
    return hashlib.sha256(_lines(files).encode()).hexdigest()


def invalidate_stale_caches(root: Path = PACKAGE) -> bool:
    """Delete the package's numba cache files if a kernel module changed since the last check.

    Parameters
    ----------
    root : Path
        The package folder (default: the one this module belongs to).

    Returns
    -------
    bool
        True when cache files were deleted (the kernel modules changed, or no
        stamp told when the cache was written and a source is newer than it),
        else False.  With nothing cached nothing is written: importing a
        fresh install writes and deletes nothing.

    Raises
    ------
    OSError
        When the sources cannot be read; :func:`check_at_import` ignores it.
    """
    files = _python_files(root)
    if not files:
        return False
    top = next((path for rel, path, _, _ in files if "/" not in rel), files[0][1])
    folder = cache_folder(top)
    if folder is None:  # numba caches nothing on disk: nothing can be stale
        return False
    stamp = folder / STAMP_NAME
    recorded = _read_stamp(stamp)
    stats = _stats_key(files)
    if recorded.get("stats") == stats:
        return False
    kernels = _kernel_sources(root)
    sources = _digest(kernels)
    stable = _stats_key(_python_files(root)) == stats  # no file changed while being read
    # numba's cache folder depends on the source's folder: ask once per folder
    # holding kernels (elsewhere, cache files belong to no kernel numba can load)
    representatives = {os.path.dirname(path): path for _, path, _ in kernels}
    folders = {f for f in (cache_folder(path) for path in representatives.values()) if f}
    cached = _cache_times(folders)
    if not cached:
        # Nothing cached, nothing stale: an import of a fresh install writes nothing;
        # the first import that finds cached kernels stamps them.
        return False
    removed = False
    if recorded.get("sources") != sources and not (not recorded and _written_after(cached, files)):
        removed, complete = _clear(folders)
        if not complete:  # a stale file stayed: no stamp, so the next process tries again
            return removed
    if stable:
        _write_stamp(stamp, stats, sources)
    return removed


def _cache_times(folders: set[Path]) -> list[int]:
    """Modification times (ns) of numba's cache files in ``folders``."""
    times = []
    for entry in _cache_entries(folders):
        try:
            times.append(entry.stat().st_mtime_ns)
        except FileNotFoundError:  # another process removed it first
            pass
    return times


def _written_after(cached: list[int], files: list[tuple[str, str, int, int]]) -> bool:
    """Whether every cache file is newer than every source: a cache with no stamp yet
    (written by the processes before the first stamp) compiled from these sources."""
    return min(cached) > max(mtime for _, _, _, mtime in files)


def check_at_import() -> None:
    """:func:`invalidate_stale_caches` for this package, never raising.

    Called by ``_jit`` on import.  Any failure leaves numba's cache as it is —
    the behaviour before this check existed — rather than fail ``import
    geoforest``; the tests exercise :func:`invalidate_stale_caches` directly.
    """
    try:
        invalidate_stale_caches(PACKAGE)
    except Exception:  # an import must not fail over a cache check
        pass
