"""The numba cache guard (geoforest/_jitcache.py, dev/jitcache.py): stale code goes with a change.

The end-to-end case — a cached caller recompiled in a fresh process after its
callee's module changed — is ``tests/test_jit.py``; these tests check the
decisions on fake packages (fake cache files, no compilation).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import numba.core.caching as caching
import numba.core.config as numba_config
import pytest

import geoforest
import geoforest._jitcache as library

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("dev_jitcache", REPO / "dev" / "jitcache.py")
jitcache = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jitcache)


@pytest.fixture(autouse=True)
def _in_tree(monkeypatch):
    """numba caches next to the sources unless a test sets a cache folder."""
    monkeypatch.setattr(numba_config, "CACHE_DIR", "")


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "_engine").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "__init__.py").write_text("")
    (root / "_engine" / "sorting.py").write_text("from .._jit import njit\n\ndef f(): pass\n")
    (root / "_engine" / "builder.py").write_text("import numba\n\ndef g(): pass\n")
    (root / "proximity.py").write_text("from numba import prange\n\ndef h(): pass\n")
    (root / "cli.py").write_text("print('not a kernel module')\n")
    (root / "other" / "__init__.py").write_text("")
    (root / "other" / "walk.py").write_text("from geoforest._jit import njit\n")
    (root / "plain").mkdir()
    (root / "plain" / "__init__.py").write_text("X = 1\n")  # no kernel in this folder
    return root


def _cache_files(root: Path, *, newer: bool = False) -> list[Path]:
    """numba index and data files where numba puts them for each folder of ``root``.

    Older than every source unless ``newer``: a cache of unknown age, or one
    compiled from these very sources.
    """
    files = []
    sources = [p.stat().st_mtime_ns for p in root.rglob("*.py")]
    when = max(sources) + 10**9 if newer else min(sources) - 10 * 10**9
    for sub in ("", "_engine", "other"):
        folder = library.cache_folder(next((root / sub).glob("*.py")))
        for name in ("k-3.py311.nbi", "k-3.py311.1.nbc"):
            path = folder / f"{sub or 'top'}.{name}"
            path.write_bytes(b"x")
            os.utime(path, ns=(when, when))
            files.append(path)
    return files


def _edit(path: Path, text: str) -> None:
    """Write ``text`` with a modification time later than any before (coarse clocks too)."""
    mtime = path.stat().st_mtime_ns + 2 * 10**9
    path.write_text(text)
    os.utime(path, ns=(mtime, mtime))


def test_nothing_cached_writes_nothing_and_a_cache_newer_than_its_sources_is_kept(tmp_path):
    root = _package(tmp_path)
    before = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert not library.invalidate_stale_caches(root)  # a fresh install: no stamp written
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == before
    files = _cache_files(root, newer=True)  # compiled by the processes before any stamp
    assert not library.invalidate_stale_caches(root)
    assert all(f.exists() for f in files)
    assert (root / "__pycache__" / library.STAMP_NAME).exists()
    sorting = root / "_engine" / "sorting.py"
    _edit(sorting, "from .._jit import njit\n\ndef f(): return 2\n")
    assert library.invalidate_stale_caches(root)
    assert not any(f.exists() for f in files)


def test_the_checkout_script_is_the_library():
    assert jitcache.invalidate_stale_caches.__code__.co_filename == str(
        REPO / "geoforest" / "_jitcache.py"
    )
    assert jitcache.PACKAGE == REPO / "geoforest"
    assert jitcache.kernel_modules() == library.kernel_modules(REPO / "geoforest")


def test_kernel_modules_are_the_ones_importing_numba(tmp_path):
    root = _package(tmp_path)
    names = [p.relative_to(root).as_posix() for p in jitcache.kernel_modules(root)]
    assert names == ["_engine/builder.py", "_engine/sorting.py", "other/walk.py", "proximity.py"]


def test_first_check_clears_and_records_then_nothing_until_a_kernel_changes(tmp_path):
    root = _package(tmp_path)
    files = _cache_files(root)
    keep = [
        root / "_engine" / "__pycache__" / "sorting.cpython-311.pyc",
        root / "_engine" / "__pycache__" / "sorting.f-3.py311.nbi.tmp.0123abcd",  # being written
    ]
    for path in keep:
        path.write_bytes(b"keep")
    assert library.invalidate_stale_caches(root)  # no stamp yet: caches of unknown age go
    assert not any(f.exists() for f in files)
    assert all(path.exists() for path in keep)
    stamp = root / "__pycache__" / library.STAMP_NAME
    assert stamp.read_text().splitlines()[2] == f"sources {library.sources_digest(root)}"
    assert [p.name for p in stamp.parent.iterdir() if "stamp" in p.name] == [stamp.name]
    assert not (root / "plain" / "__pycache__").exists()  # no cache folder made where none is

    files = _cache_files(root)
    assert not library.invalidate_stale_caches(root)  # unchanged sources: caches kept

    _edit(root / "cli.py", "print('edited, but no kernel here')\n")
    assert not library.invalidate_stale_caches(root)
    sorting = root / "_engine" / "sorting.py"
    _edit(sorting, sorting.read_text())  # touched, same contents (a checkout, say)
    assert not library.invalidate_stale_caches(root)
    assert all(f.exists() for f in files)

    _edit(sorting, "from .._jit import njit\n\ndef f(): return 1\n")
    assert library.invalidate_stale_caches(root)  # a callee changed: every kernel recompiles
    assert not any(f.exists() for f in files)
    assert not library.invalidate_stale_caches(root)

    files = _cache_files(root)
    _edit(root / "cli.py", "from numba import njit\n")  # a module starts to define kernels
    assert library.invalidate_stale_caches(root)
    assert not any(f.exists() for f in files)


def test_numba_cache_dir_is_followed(tmp_path, monkeypatch):
    """Under ``NUMBA_CACHE_DIR`` numba caches a folder per source folder; so does the check."""
    root = _package(tmp_path)
    in_tree = root / "_engine" / "__pycache__" / "sorting.f-3.py311.nbi"
    in_tree.parent.mkdir()
    in_tree.write_bytes(b"not numba's any more")
    monkeypatch.setattr(numba_config, "CACHE_DIR", str(tmp_path / "cache"))
    files = _cache_files(root)
    assert all(f.is_relative_to(tmp_path / "cache") for f in files)
    assert len({f.parent for f in files}) == 3
    assert library.invalidate_stale_caches(root)
    assert not any(f.exists() for f in files)
    assert in_tree.exists()
    assert (library.cache_folder(root / "__init__.py") / library.STAMP_NAME).is_file()
    assert not (root / "__pycache__" / library.STAMP_NAME).exists()
    files = _cache_files(root)
    assert not library.invalidate_stale_caches(root)
    assert all(f.exists() for f in files)


def test_no_cache_location_is_left_alone(tmp_path, monkeypatch):
    """Where numba can cache nowhere (``_jit`` compiles uncached) nothing is written."""
    root = _package(tmp_path)
    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", [])
    assert library.cache_folder(root / "__init__.py") is None
    assert not library.invalidate_stale_caches(root)
    assert not list(root.rglob("__pycache__"))


def test_a_file_that_cannot_be_deleted_leaves_no_stamp(tmp_path, monkeypatch):
    """The next process must try again rather than trust a cache that was not cleared."""
    root = _package(tmp_path)
    files = _cache_files(root)
    unlink = os.unlink

    def refuse_data(path):
        if str(path).endswith(".nbc"):
            raise PermissionError(path)
        unlink(path)

    monkeypatch.setattr(library.os, "unlink", refuse_data)
    library.invalidate_stale_caches(root)
    assert not (root / "__pycache__" / library.STAMP_NAME).exists()
    monkeypatch.setattr(library.os, "unlink", unlink)
    assert library.invalidate_stale_caches(root)
    assert not any(f.exists() for f in files)
    assert (root / "__pycache__" / library.STAMP_NAME).is_file()


def test_unreadable_or_foreign_stamp_counts_as_changed(tmp_path):
    root = _package(tmp_path)
    stamp = root / "__pycache__" / library.STAMP_NAME
    stamp.parent.mkdir()
    stamp.write_bytes(b"\xff\xfe half a stamp")
    files = _cache_files(root)
    assert library.invalidate_stale_caches(root)
    assert not any(f.exists() for f in files)


def test_the_import_check_never_raises(monkeypatch):
    def broken(root):
        raise RuntimeError("numba moved its cache classes")

    monkeypatch.setattr(library, "invalidate_stale_caches", broken)
    library.check_at_import()


_RACE = """
import importlib.util, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("jc", sys.argv[1])
jc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(jc)
root, me = Path(sys.argv[2]), sys.argv[3]
import numba.core.caching, time  # imported before the start line, so that the loops overlap
(root.parent / f"ready-{me}").touch()
deadline = time.monotonic() + 60
while len(list(root.parent.glob("ready-*"))) < 3 and time.monotonic() < deadline:
    time.sleep(0.001)
kernel = root / "_engine" / "sorting.py"
for i in range(60):
    if i % 6 == 0:
        kernel.write_text(f"from .._jit import njit\\n# {me} {i}\\n")
    for folder in {jc.cache_folder(p) for p in root.rglob("*.py")}:
        (folder / f"x.f-1.py311.{me}.nbc").write_bytes(b"x")
    jc.invalidate_stale_caches(root)
print("ok")
"""


def test_concurrent_processes_never_crash_nor_leave_half_a_stamp(tmp_path):
    """Processes checking (and editing) one package at once: all finish, the stamp is whole."""
    root = _package(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _RACE, library.__file__, str(root), f"w{i}"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        assert out.strip() == "ok"
    folder = root / "__pycache__"
    lines = (folder / library.STAMP_NAME).read_text().splitlines()
    assert lines[0] == library._FORMAT and len(lines) == 3
    assert [p.name for p in folder.iterdir() if "stamp" in p.name] == [library.STAMP_NAME]
    library.invalidate_stale_caches(root)  # the last word: then the stamp holds
    files = _cache_files(root)
    assert not library.invalidate_stale_caches(root)
    assert all(f.exists() for f in files)


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
