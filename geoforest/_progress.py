"""Progress bars for the steps that can take long (tqdm, only when asked).

An item counts as done when the loop over the bar asks for the next one, so the
bar reaches its end when the work on the last item is over, not when that work
starts.

A first call on an empty numba cache compiles kernels while the first item is
made; counted in the bar's rate, that compilation makes the time left absurd
(minutes for a fit of seconds).  After any item during which geoforest compiled
(:func:`~geoforest._first_use.compile_seconds`), the bar's clock is moved on by
the time spent compiling, so its rate and time left (and the elapsed time it
shows) count only the work.  The count itself only ever goes up: a log of the
bar never shows it going back.
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
    """Yield the items, advancing ``bar`` as each is done; compilation kept off its clock."""
    compiled = compile_seconds()
    try:
        for item in iterable:
            yield item  # the caller's work on the item happens here
            now = compile_seconds()
            if now > compiled:  # kernels compiled during this item: time only the rest
                _off_the_clock(bar, now - compiled)
                compiled = now
            bar.update()
    finally:
        bar.close()


def _off_the_clock(bar, seconds: float) -> None:
    """Move ``bar``'s clock on by ``seconds`` spent since it last printed, as tqdm's unpause.

    Both the start (the average rate, the elapsed time) and the last print (the
    smoothed rate of the next update) move, and nothing is redrawn.
    """
    if getattr(bar, "disable", False):
        return
    now = bar._time()
    bar.start_t = min(bar.start_t + seconds, now)
    bar.last_print_t = min(bar.last_print_t + seconds, now)


class StageProgress:
    """A bar over the named stages of one fit (tqdm, only when ``verbose``).

    Calling the object with a stage's name marks the stage under way done
    and shows the new one; leaving the ``with`` block marks the last one
    done.  Long stages with bars of their own (a forest's trees, its
    neighbours) show them beneath this one.  As in :func:`progress`, time
    spent compiling kernels is kept off the bar's clock.

    Examples
    --------
    >>> with StageProgress(2, verbose=0, desc="fit") as stage:
    ...     stage("graph")
    ...     stage("eigenvectors")
    """

    def __init__(self, total: int, verbose: int, desc: str):
        self._bar = None
        self._started = False
        self._compiled = compile_seconds()
        if verbose:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=desc, leave=False)

    def __enter__(self) -> StageProgress:
        return self

    def __call__(self, name: str) -> None:
        if self._bar is None:
            return
        self._finish_stage()
        self._started = True
        self._bar.set_postfix_str(name)

    def _finish_stage(self) -> None:
        if not self._started:
            return
        now = compile_seconds()
        if now > self._compiled:
            _off_the_clock(self._bar, now - self._compiled)
            self._compiled = now
        self._bar.update()
        self._bar.refresh()  # a few long stages: show each step, whatever the interval

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            if exc[0] is None:
                self._finish_stage()
            self._bar.close()
