"""Where a cold start's time goes: numba compile seconds per kernel and type signature.

Runs one first call (below) in this process with an empty numba cache of its
own (``NUMBA_CACHE_DIR`` pointed at a fresh temporary folder before numba is
imported) and listens to numba's ``numba:compile`` events.  Compilations nest
(typing ``build_tree`` compiles the kernels it calls first), so each kernel is
charged its *exclusive* time: its own compile minus the compiles nested in it.
Kernels inlined by numba (``inline="always"``) are not compiled on their own;
their cost is part of every caller's.

Printed: the first call's wall time, the summed compile time, and the kernels
by exclusive seconds with their number of signatures (several signatures of one
kernel mean several compilations of the same code: one dtype or layout where
the data are cast anyway would compile it once), then the slice assignments
from arrays in the kernels compiled (``geoforest/_jit.py`` says why there
should be none).

How to run (a quiet machine: compilation is single-threaded and any other job
inflates it)::

    python dev/compile_profile.py urerf        # UnsupervisedForest fit + kneighbors, 1,000 x 10
    python dev/compile_profile.py classifier   # ObliqueForestClassifier fit + predict
    python dev/compile_profile.py regressor    # ObliqueForestRegressor fit + predict
    python dev/compile_profile.py urerf --top 40 --signatures
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

FIRST_CALLS = ("urerf", "classifier", "regressor")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("call", choices=FIRST_CALLS)
    parser.add_argument("--top", type=int, default=25, help="kernels to list")
    parser.add_argument("--signatures", action="store_true", help="list each kernel's signatures")
    args = parser.parse_args(argv)
    cache = tempfile.mkdtemp(prefix="geoforest-compile-profile-")
    os.environ["NUMBA_CACHE_DIR"] = cache  # before numba is imported: an empty cache

    import numba.core.event as ev

    stack: list[list] = []  # [name, signature, start, seconds of nested compiles]
    charged: dict[str, list] = {}  # name -> [exclusive seconds, signatures]

    class _Listener(ev.Listener):
        def on_start(self, event):
            f = event.data["dispatcher"].py_func
            name = f"{f.__module__}.{f.__qualname__}"
            stack.append([name, str(event.data["args"]), time.perf_counter(), 0.0])

        def on_end(self, event):
            name, sig, start, nested = stack.pop()
            seconds = time.perf_counter() - start
            if stack:
                stack[-1][3] += seconds
            entry = charged.setdefault(name, [0.0, []])
            entry[0] += seconds - nested
            entry[1].append(sig)

    ev.register("numba:compile", _Listener())
    t0 = time.perf_counter()
    import numpy as np

    import geoforest as gf

    t_import = time.perf_counter() - t0
    X = np.random.default_rng(0).normal(size=(1000, 10))
    t1 = time.perf_counter()
    if args.call == "urerf":
        gf.UnsupervisedForest(n_estimators=20, random_state=0).fit(X).kneighbors(n_neighbors=10)
    elif args.call == "classifier":
        gf.ObliqueForestClassifier(n_estimators=20, random_state=0).fit(X, X[:, 0] > 0).predict(X)
    else:
        gf.ObliqueForestRegressor(n_estimators=20, random_state=0).fit(X, X[:, 0]).predict(X)
    t_call = time.perf_counter() - t1
    total = sum(seconds for seconds, _ in charged.values())
    print(f"numba {__import__('numba').__version__}, geoforest {gf.__version__}, cache {cache}")
    print(
        f"import geoforest {t_import:.1f} s; first {args.call} call {t_call:.1f} s, of which "
        f"compiling {total:.1f} s in {len(charged)} kernels"
    )
    ranked = sorted(charged.items(), key=lambda kv: -kv[1][0])
    for name, (seconds, sigs) in ranked[: args.top]:
        print(f"{seconds:8.2f} s  {len(sigs)} sig  {name}")
        if args.signatures:
            for sig in sigs:
                print(f"{'':20}{sig}")
    copies = slice_copies()
    if copies:
        print("slice copies from arrays (each compiles numba's shape-error message, _jit.py):")
        for where in copies:
            print(f"    {where}")
    return 0


def slice_copies() -> list[str]:
    """``kernel: file:line`` of every slice assignment from an array in the
    geoforest kernels compiled so far (inlined kernels' lines included)."""
    from numba.core import ir, types
    from numba.core.registry import CPUDispatcher

    found = set()
    kernels = {
        id(obj): obj
        for name, module in list(sys.modules.items())
        if name.startswith("geoforest")
        for obj in vars(module).values()
        if isinstance(obj, CPUDispatcher)
    }
    for kernel in kernels.values():
        for compiled in kernel.overloads.values():
            typed = compiled.type_annotation
            if typed is None:  # loaded from a cache: nothing was compiled here
                continue
            for block in typed.blocks.values():
                for stmt in block.body:
                    if not isinstance(stmt, ir.SetItem | ir.StaticSetItem):
                        continue
                    target = typed.typemap.get(stmt.target.name)
                    value = typed.typemap.get(stmt.value.name)
                    if isinstance(target, types.Array) and isinstance(value, types.Array):
                        place = f"{os.path.relpath(stmt.loc.filename)}:{stmt.loc.line}"
                        found.add(f"{kernel.py_func.__qualname__}: {place}")
    return sorted(found)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
