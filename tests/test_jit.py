"""Kernels work where numba cannot write a cache, and never run stale code where it can.

A package installed read-only, used by someone whose HOME is not writable,
leaves numba no cache location; numba then refuses to decorate a
``cache=True`` function.  geoforest must fit anyway (compiling without the
cache) and say so once.  Where numba does cache, a cached caller must not keep
an edited callee's old code (issue 53).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import geoforest as gf
from geoforest._jit import KernelCacheWarning, njit

PACKAGE = Path(gf.__file__).parent

_FIT = """
import warnings
import numpy as np
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import geoforest as gf
    from geoforest._jit import KernelCacheWarning
    X = np.random.default_rng(0).normal(size=(120, 4))
    y = (X[:, 0] > 0).astype(int)
    idx = gf.UnsupervisedForest(n_estimators=8, random_state=0).fit(X).kneighbors(
        n_neighbors=4, return_distance=False)
    acc = gf.ObliqueForestClassifier(n_estimators=8, random_state=0).fit(X, y).score(X, y)
    llpd = gf.LLPD().fit(X).kneighbors(n_neighbors=3, return_distance=False)
n_warn = sum(issubclass(w.category, KernelCacheWarning) for w in caught)
print(gf.__file__)
print(n_warn, int(idx.sum()), round(acc, 6), int(llpd.sum()))
"""


def test_njit_without_cache_location_compiles_uncached(monkeypatch):
    import numba.core.caching as caching

    import geoforest._jit as jit

    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", [])
    monkeypatch.setattr(jit, "_warned", False)

    def add(a, b):
        return a + b

    with pytest.warns(KernelCacheWarning, match="NUMBA_CACHE_DIR"):
        fast = njit(nogil=True, cache=True)(add)
    assert fast(2, 3) == 5
    assert fast._cache.__class__.__name__ == "NullCache"


def test_njit_reraises_other_errors(monkeypatch):
    import geoforest._jit as jit

    def broken(**options):
        raise RuntimeError("something else")

    monkeypatch.setattr(jit, "_numba_njit", broken)
    with pytest.raises(RuntimeError, match="something else"):
        njit(cache=True)(lambda a: a)


def test_fit_without_any_cache_location_matches_cached_results():
    """Every kernel decorated without a cache: same results, one warning."""
    reference = subprocess.run(
        [sys.executable, "-c", _FIT], capture_output=True, text=True, check=True
    ).stdout.split("\n")[1]
    no_locator = "import numba.core.caching as c; c.CacheImpl._locator_classes = []\n" + _FIT
    out = subprocess.run(
        [sys.executable, "-c", no_locator], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    n_warn, *results = out[1].split()
    assert int(n_warn) == 1
    assert results == reference.split()[1:]


def _unprivileged() -> list[str] | None:
    """A command prefix under which file permissions apply, or None if there is none."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []  # an ordinary user: chmod a-w already binds
    if shutil.which("setpriv") is None:
        return None
    # root without the capabilities that override file permissions: a read-only
    # folder is then read-only to it, as to any user
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner", "--"]


def _make_read_only(top: Path) -> None:
    for path in [top, *top.rglob("*")]:
        os.chmod(path, path.stat().st_mode & ~0o222)


@pytest.mark.skipif(_unprivileged() is None, reason="root without setpriv: cannot drop rights")
def test_read_only_install_fits_and_runs_demo_without_writable_home(tmp_path):
    """The package laid out as ``pip install --target`` does, cache compiled, then chmod a-w."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "geoforest", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_"))}
    env["PYTHONPATH"] = str(site)
    try:
        # the installer compiles the kernels into the package's __pycache__ (cwd
        # outside the source tree: ``python -c`` puts the cwd first on sys.path)
        compiled = subprocess.run(
            [sys.executable, "-c", _FIT], env=env, cwd=tmp_path, check=True,
            capture_output=True, text=True,
        )  # fmt: skip
        assert compiled.stdout.startswith(str(site))
        assert any((site / "geoforest" / "_engine" / "__pycache__").glob("*.nbi"))
        _make_read_only(site)
        home = tmp_path / "home"
        home.mkdir()
        _make_read_only(home)
        env["HOME"] = str(home)
        work = tmp_path / "work"
        work.mkdir()
        prefix = _unprivileged()
        fit = subprocess.run(
            [*prefix, sys.executable, "-c", _FIT], env=env, cwd=work,
            capture_output=True, text=True,
        )  # fmt: skip
        assert fit.returncode == 0, fit.stderr
        lines = fit.stdout.split("\n")
        assert lines[0].startswith(str(site))
        assert lines[1].split() == ["1", *compiled.stdout.split("\n")[1].split()[1:]]
        demo = subprocess.run(
            [*prefix, sys.executable, "-m", "geoforest.cli", "demo", "--quick",
             "--no-progress", "--out", str(work / "out")],
            env=env, cwd=work, capture_output=True, text=True,
        )  # fmt: skip
        assert demo.returncode == 0, demo.stderr
        assert any((work / "out").glob("*.csv"))
    finally:
        for path in [tmp_path, *tmp_path.rglob("*")]:
            if not path.is_symlink():
                os.chmod(path, path.stat().st_mode | 0o200)


def test_kernel_called_with_constants_compiles_once():
    # A constant argument from another kernel must not compile the callee again
    # for its literal type (one more compilation of the same code per constant).
    import numpy as np

    @njit
    def window_sum(a, lo, hi):
        s = 0.0
        for i in range(lo, hi):
            s += a[i]
        return s

    @njit
    def caller(a, lo, flag):
        return window_sum(a, 0, 3) + window_sum(a, lo, 5) + window_sum(a, lo, a.shape[0]) * flag

    a = np.arange(8, dtype=np.float64)
    assert caller(a, 2, True) == (0 + 1 + 2) + (2 + 3 + 4) + sum(range(2, 8))
    assert caller(a, 1, False) == 3 + (1 + 2 + 3 + 4)
    assert [str(s) for s in window_sum.signatures] == [
        "(Array(float64, 1, 'C', False, aligned=True), int64, int64)"
    ]


# Issue 53: a kernel calling a kernel of another module, cached on disk.  The
# caller lives in another folder than the callee and the package's top level,
# so its cache sits in a folder of its own.
_CALLEE = "from .._jit import njit\n\n\n@njit(cache=True)\ndef shift(x):\n    return x + {}\n"
_CALLER = (
    "from .._chain_callee.shift import shift\nfrom .._jit import njit\n\n\n"
    "@njit(cache=True)\ndef twice_shifted(x):\n    return 2 * shift(x)\n"
)
_CHAIN = """
from geoforest import _first_use
from geoforest._chain_caller.twice import twice_shifted
print(twice_shifted(1), _first_use.compile_seconds() > 0)
"""


def _not_sources(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if not (n.endswith(".py") or os.path.isdir(os.path.join(folder, n)))]


def test_cached_caller_recompiles_when_its_callee_in_another_module_changed(tmp_path):
    """An editable install after ``git pull``: the callee's file changed, the caller's did not.

    numba checks only the caller's own file, so without geoforest's check the
    fresh process would run the caller's cached machine code with the old
    callee inside.  The package is copied (its sources only, the top-level
    ``__init__`` emptied so that only the tiny kernels compile) with its real
    ``_jit``, cached in its own ``__pycache__`` folders as an editable install
    is (``NUMBA_CACHE_DIR``: ``tests/dev/test_jitcache.py``); the last process
    shows that an unchanged tree compiles nothing.
    """
    site = tmp_path / "site"
    package = site / "geoforest"
    shutil.copytree(PACKAGE, package, ignore=_not_sources)
    (package / "__init__.py").write_text("")
    for sub, name, source in [
        ("_chain_callee", "shift.py", _CALLEE.format(1)),
        ("_chain_caller", "twice.py", _CALLER),
    ]:
        (package / sub).mkdir()
        (package / sub / "__init__.py").write_text("")
        (package / sub / name).write_text(source)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PYTHON"))}
    env.update(PYTHONPATH=str(site), GEOFOREST_COMPILE_NOTICE="0")

    def run() -> tuple[str, str]:
        out = subprocess.run(
            [sys.executable, "-c", _CHAIN], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        result, compiled = out.stdout.split()
        return result, compiled

    assert run() == ("4", "True")
    caller_cache = list((package / "_chain_caller" / "__pycache__").glob("*.nbi"))
    assert caller_cache  # the caller is cached, in a folder of its own
    callee = package / "_chain_callee" / "shift.py"
    callee.write_text(_CALLEE.format(10))
    mtime = callee.stat().st_mtime_ns + 2 * 10**9  # a pull seconds later, whatever the clock
    os.utime(callee, ns=(mtime, mtime))
    assert run() == ("22", "True")  # the caller recompiled with the new callee
    assert run() == ("22", "False")  # and nothing compiles again on the unchanged tree
    assert (package / "__pycache__" / "numba-sources.stamp").is_file()
