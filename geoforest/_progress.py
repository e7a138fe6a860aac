"""Progress bars for the steps that can take long (tqdm, only when asked).

A first call on an empty numba cache compiles kernels while the first item is
made; counted in the bar's rate, that compilation makes the time left absurd
(minutes for a fit of seconds).  The bar restarts its clock after any item
during which geoforest compiled (:func:`~geoforest._first_use.compile_seconds`),
so its rate and time left count only the work.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ._first_use import compile_seconds


def progress(iterable: Iterable, total: int | None, verbose: int, desc: str) -> Iterable:
    """``iterable`` wrapped in a tqdm bar when ``verbose`` is true, else unchanged."""
    if not verbose:
        return iterable
    from tqdm.auto import tqdm

    return _counted(iterable, tqdm(total=total, desc=desc, leave=False))


def _counted(iterable: Iterable, bar) -> Iterator:
    """Yield the items, advancing ``bar``; its clock restarts after a compilation."""
    compiled = compile_seconds()
    try:
        for item in iterable:
            bar.update()
            now = compile_seconds()
            if now > compiled:  # kernels compiled during this item: time only what follows
                compiled, done = now, bar.n
                bar.reset(total=bar.total)
                bar.initial = bar.n = bar.last_print_n = done  # rate: (n - initial) / time
                bar.refresh()
            yield item
    finally:
        bar.close()
