"""The numba cache guard: stale machine code is dropped when a kernel module changes."""

import os
from pathlib import Path

from geoforest._jitcache import STAMP_NAME, fingerprint, invalidate_stale_caches


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "_engine" / "__pycache__").mkdir(parents=True)
    (root / "other" / "__pycache__").mkdir(parents=True)
    (root / "_engine" / "sorting.py").write_text("def f(): pass\n")
    (root / "_engine" / "builder.py").write_text("def g(): pass\n")
    (root / "proximity.py").write_text("def h(): pass\n")
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


def test_first_check_clears_and_records_then_nothing_until_a_kernel_changes(tmp_path):
    root = _package(tmp_path)
    files = _cache_files(root)
    (root / "_engine" / "__pycache__" / "sorting.cpython-311.pyc").write_bytes(b"keep")
    assert invalidate_stale_caches(root)  # no stamp yet: caches of unknown age go
    assert not any(f.exists() for f in files)
    assert (root / "_engine" / "__pycache__" / "sorting.cpython-311.pyc").exists()
    assert (root / "__pycache__" / STAMP_NAME).read_text() == fingerprint(root)

    files = _cache_files(root)
    assert not invalidate_stale_caches(root)  # unchanged sources: caches kept
    assert all(f.exists() for f in files)

    (root / "cli.py").write_text("print('edited, but no kernel here')\n")
    assert not invalidate_stale_caches(root)
    assert all(f.exists() for f in files)

    sorting = root / "_engine" / "sorting.py"
    sorting.write_text("def f(): return 1\n")
    st = sorting.stat()
    os.utime(sorting, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert invalidate_stale_caches(root)  # a callee changed: every kernel recompiles
    assert not any(f.exists() for f in files)
    assert not invalidate_stale_caches(root)


def test_read_only_package_is_left_alone(tmp_path, monkeypatch):
    """Without write access (numba then caches elsewhere) nothing is deleted or written."""
    import geoforest._jitcache as jitcache

    root = _package(tmp_path)
    files = _cache_files(root)
    # Permission bits do not bind root, so the check itself is made to say "read-only".
    monkeypatch.setattr(jitcache.os, "access", lambda path, mode: False)
    assert not invalidate_stale_caches(root)
    assert all(f.exists() for f in files)
    assert not (root / "__pycache__" / STAMP_NAME).exists()


def test_the_package_records_its_own_kernel_modules():
    import geoforest

    root = Path(geoforest.__file__).parent
    text = fingerprint(root)
    assert "_engine/builder.py" in text and "_engine/sorting.py" in text
    assert "llpd/_llpd.py" in text and "proximity.py" in text
    assert "cli.py" not in text
