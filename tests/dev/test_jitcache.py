"""The developers' numba cache guard (dev/jitcache.py): stale code goes when a kernel changes."""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
from pathlib import Path

import geoforest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("dev_jitcache", REPO / "dev" / "jitcache.py")
jitcache = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jitcache)


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "_engine" / "__pycache__").mkdir(parents=True)
    (root / "other" / "__pycache__").mkdir(parents=True)
    (root / "_engine" / "sorting.py").write_text("from .._jit import njit\n\ndef f(): pass\n")
    (root / "_engine" / "builder.py").write_text("import numba\n\ndef g(): pass\n")
    (root / "proximity.py").write_text("from numba import prange\n\ndef h(): pass\n")
    (root / "cli.py").write_text("print('not a kernel module')\n")
    return root


def _cache_files(root: Path) -> list[Path]:
    files = []
    for sub in ("_engine", "other"):
        for name in ("k.nbi", "k.nbc"):
            path = root / sub / "__pycache__" / f"{sub}.{name}"
            path.write_bytes(b"x")
            files.append(path)
    return files


def test_kernel_modules_are_the_ones_importing_numba(tmp_path):
    root = _package(tmp_path)
    names = [p.relative_to(root).as_posix() for p in jitcache.kernel_modules(root)]
    assert names == ["_engine/builder.py", "_engine/sorting.py", "proximity.py"]


def test_first_check_clears_and_records_then_nothing_until_a_kernel_changes(tmp_path):
    root = _package(tmp_path)
    files = _cache_files(root)
    (root / "_engine" / "__pycache__" / "sorting.cpython-311.pyc").write_bytes(b"keep")
    assert jitcache.invalidate_stale_caches(root)  # no stamp yet: caches of unknown age go
    assert not any(f.exists() for f in files)
    assert (root / "_engine" / "__pycache__" / "sorting.cpython-311.pyc").exists()
    stamp = root / "__pycache__" / jitcache.STAMP_NAME
    assert stamp.read_text() == jitcache.fingerprint(root)

    files = _cache_files(root)
    assert not jitcache.invalidate_stale_caches(root)  # unchanged sources: caches kept
    assert all(f.exists() for f in files)

    (root / "cli.py").write_text("print('edited, but no kernel here')\n")
    assert not jitcache.invalidate_stale_caches(root)
    assert all(f.exists() for f in files)

    sorting = root / "_engine" / "sorting.py"
    sorting.write_text("from .._jit import njit\n\ndef f(): return 1\n")
    st = sorting.stat()
    os.utime(sorting, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert jitcache.invalidate_stale_caches(root)  # a callee changed: every kernel recompiles
    assert not any(f.exists() for f in files)
    assert not jitcache.invalidate_stale_caches(root)


def test_read_only_package_is_left_alone(tmp_path, monkeypatch):
    """Without write access (numba then caches elsewhere) nothing is deleted or written."""
    root = _package(tmp_path)
    files = _cache_files(root)
    # Permission bits do not bind root, so the check itself is made to say "read-only".
    monkeypatch.setattr(jitcache.os, "access", lambda path, mode: False)
    assert not jitcache.invalidate_stale_caches(root)
    assert all(f.exists() for f in files)
    assert not (root / "__pycache__" / jitcache.STAMP_NAME).exists()


def test_the_derived_list_holds_every_module_that_defines_a_kernel():
    """Import every module of geoforest; each one defining a numba function is fingerprinted."""
    from numba.core.registry import CPUDispatcher

    root = Path(geoforest.__file__).parent
    listed = {p.resolve() for p in jitcache.kernel_modules(root)}
    defining = set()
    for info in pkgutil.walk_packages(geoforest.__path__, "geoforest."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == info.name:
                defining.add(Path(module.__file__).resolve())
    assert defining  # the engine, proximity, LLPD, ... define kernels
    assert defining <= listed, sorted(str(p) for p in defining - listed)
