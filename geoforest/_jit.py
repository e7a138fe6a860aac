"""``numba.njit`` whose on-disk cache can never break a working install.

numba's ``cache=True`` stores compiled kernels next to their source (the
package's ``__pycache__``) or, when that is not writable, in the user's cache
folder.  Where neither is writable — a package installed read-only (system
packages, containers, HPC modules) used by someone whose ``HOME`` is not
writable — numba refuses to *decorate* the function ("cannot cache function
...: no locator available"), so the first fit would fail with a
``RuntimeError`` even though nothing is wrong with the kernels.  This wrapper
compiles such kernels without the on-disk cache instead and says so once: they
then compile on first use in every process, and ``NUMBA_CACHE_DIR`` pointed at
a writable folder brings the cache back.

Every kernel module imports :func:`njit` from here, never from numba.  That
makes importing this module the one moment before any kernel exists, when
:mod:`geoforest._jitcache` drops the on-disk cache if a kernel module changed
since it was written (numba checks only the file of the kernel it loads, not
those of the kernels it calls).

It also keeps numba from compiling a kernel once per *literal* argument.  A
kernel called from another kernel with a constant (``_leaf(a, 0, n)``,
``_push(stack, top, lo, hi, depth, node, 1, batches)``) is by default compiled
for ``Literal[int](0)`` beside the plain ``int64`` signature, one more
compilation of the same code per distinct constant, the largest sorting
network's among them (``dev/compile_profile.py``; figures in
``docs/benchmarks.md``).
Here such calls are typed with the arguments' plain types, so each kernel
compiles once per dtype and layout; nothing in the package asks numba for
literal specialisation (``numba.literally``).

One rule of the kernels' own code goes with it: no slice assignment from an
array (``a[:n] = b[:n]``) where a first fit + ``kneighbors`` compiles.  numba
checks the two shapes at run time, and its error message, formatted with
string operations, is a dozen more kernels to compile and is linked into
every caller; a loop copies as fast.  Filling a slice with a scalar
(``a[:n] = 0``) formats nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from numba import njit as _numba_njit
from numba.core import types

from . import _first_use, _jitcache  # the first compilation's line; the stale-cache check

# Before any kernel is defined or loaded from disk: numba's cache checks only a
# kernel's own file, so cached callers of an edited callee in another module (an
# editable install after ``git pull``) would run the old callee.  Where a kernel
# module changed since the cache was written, the package's cache is dropped.
_jitcache.check_at_import()


class KernelCacheWarning(UserWarning):
    """numba cannot cache geoforest's compiled kernels on disk in this environment."""


_warned = False


def _warn_once(reason: str) -> None:
    global _warned
    if _warned:
        return
    _warned = True
    _first_use.cache_unavailable()
    warnings.warn(
        "geoforest: numba cannot cache compiled kernels here (neither the package folder nor "
        "numba's user cache folder is writable), so kernels compile on first use in every "
        "process. Set the environment variable NUMBA_CACHE_DIR to a writable folder to keep "
        f"them between runs. ({reason})",
        KernelCacheWarning,
        stacklevel=4,
    )


def njit(func: Callable | None = None, **options: Any):
    """``numba.njit(**options)``, falling back to no on-disk cache where none can be written.

    Parameters
    ----------
    func : callable, optional
        The function to compile (decorator used without arguments).
    **options
        Passed to :func:`numba.njit`.  With ``cache=True``, a missing cache
        location turns caching off for this kernel and raises one
        :class:`KernelCacheWarning` per process.

    Returns
    -------
    numba dispatcher, or a decorator returning one
    """
    if func is None:
        return lambda f: njit(f, **options)
    if not options.get("cache", False):
        return _plain_calls(_numba_njit(**options)(func))
    try:
        return _plain_calls(_numba_njit(**options)(func))
    except RuntimeError as exc:
        if "no locator available" not in str(exc):
            raise
        _warn_once(str(exc))
        return _plain_calls(_numba_njit(**{**options, "cache": False})(func))


def _plain_calls(dispatcher):
    """``dispatcher`` typing calls from other kernels with the arguments' plain types.

    numba types a call from compiled code through the callee's
    ``get_call_template(args, kws)``, which compiles the callee for exactly the
    argument types it is given, literals included; the call then resolves to
    the plain signature (a literal converts to its plain type).
    """
    typed = dispatcher.get_call_template

    def get_call_template(args, kws):
        plain_kws = {k: types.unliteral(v) for k, v in kws.items()}
        return typed(tuple(types.unliteral(a) for a in args), plain_kws)

    dispatcher.get_call_template = get_call_template
    return dispatcher
