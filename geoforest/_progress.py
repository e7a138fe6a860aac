"""Progress bars for the steps that can take long (tqdm, only when asked)."""

from __future__ import annotations

from collections.abc import Iterable


def progress(iterable: Iterable, total: int | None, verbose: int, desc: str) -> Iterable:
    """``iterable`` wrapped in a tqdm bar when ``verbose`` is true, else unchanged."""
    if not verbose:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, leave=False)
