"""Saying so while numba compiles geoforest's kernels for their first use.

On an empty numba cache (a fresh install, a new CI job, a fresh Dask worker)
the first ``fit`` compiles the tree engine and the searches before any work is
done, and a user would otherwise watch a silent prompt, or a progress bar at
0, while it lasts (:data:`NOTICE` says roughly how long).  numba announces
every compilation that its on-disk cache could not serve as a
``"numba:compile"`` event; the listener here prints
one line to stderr at the first such compilation of a geoforest kernel in the
process, and adds up the time spent compiling, so that progress bars can keep
it out of their rates (:func:`compile_seconds`) and the demo can say whether
its first row paid it.

``GEOFOREST_COMPILE_NOTICE=0`` in the environment silences the line.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from numba.core import event

__all__ = ["cache_unavailable", "compile_seconds", "notice"]

#: What the line says: what happens, roughly how long, and that it happens once.  The
#: time is the compiling in a cold ``geoforest demo`` (``docs/scale.md``, "Start-up"),
#: the figure the README and the install page give too.
NOTICE = (
    "geoforest: compiling its numba kernels for their first use{where} (about 20 s "
    "on 2 cores; {after})"
)

_lock = threading.Lock()
_state = {"depth": 0, "start": 0.0, "seconds": 0.0, "said": False, "no_cache": False}


def cache_unavailable() -> None:
    """Record that some kernel compiles without the disk cache (``_jit`` found none writable)."""
    _state["no_cache"] = True


def compile_seconds() -> float:
    """Seconds this process has spent compiling geoforest kernels (outermost compilations)."""
    with _lock:
        extra = time.perf_counter() - _state["start"] if _state["depth"] else 0.0
        return _state["seconds"] + extra


def notice(cached: bool = True) -> str:
    """The line printed at the first compilation (``cached``: numba can keep the result)."""
    if cached:
        return NOTICE.format(where="", after="later runs load them from numba's disk cache")
    return NOTICE.format(
        where=" in this process",
        after="no cache can be written here: set NUMBA_CACHE_DIR to keep them",
    )


def _ours(ev: event.Event) -> bool:
    dispatcher = (ev.data or {}).get("dispatcher")
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return module.split(".")[0] == "geoforest"


class _FirstUse(event.Listener):
    """Times geoforest's compilations; prints :func:`notice` at the first one."""

    def on_start(self, ev: event.Event) -> None:
        if not _ours(ev):
            return
        with _lock:
            _state["depth"] += 1
            if _state["depth"] > 1:  # a callee compiled within its caller: counted there
                return
            _state["start"] = time.perf_counter()
            say = not _state["said"]
            _state["said"] = True
        if say and os.environ.get("GEOFOREST_COMPILE_NOTICE", "1") != "0":
            print(notice(cached=not _state["no_cache"]), file=sys.stderr, flush=True)

    def on_end(self, ev: event.Event) -> None:
        if not _ours(ev):
            return
        with _lock:
            _state["depth"] = max(_state["depth"] - 1, 0)
            if _state["depth"] == 0:
                _state["seconds"] += time.perf_counter() - _state["start"]


event.register("numba:compile", _FirstUse())
