"""Fixtures of the forests' tests (the Dask ``client`` is in ``tests/conftest.py``)."""

from __future__ import annotations

import pytest

#: How the neighbour search keeps its counts: (SEARCH_BLOCK, SCAN_BLOCK, SCAN_RATIO,
#: COLEAF_SCAN_RATIO); SEARCH_BLOCK is that of the searches with tree masks and of
#: proximity(), COLEAF_SCAN_RATIO how proximity() orders a row (0: sorted, 10**9:
#: a pass over all points' counters).
_SEARCH_MODES = {
    "default": None,
    "listed-blocks-of-7": (7, 1 << 15, 0, 0),
    "scan-blocks-of-8": (1 << 18, 8, 10**9, 10**9),
    "scan-blocks-of-24": (1 << 18, 24, 10**9, 0),
    "counter-pass-blocks-of-5": (5, 1 << 15, 0, 10**9),
}


@pytest.fixture(params=list(_SEARCH_MODES))
def search_block(request, monkeypatch):
    """How the neighbour search keeps its counts: as the data decide, or forced to
    listed counters (in blocks of 7 references where tree masks count), or
    scanned in blocks of 8 or 24, so the tests' small data cross many block
    boundaries, and proximity() rows ordered by a sort or by a pass over all
    points' counters (with blocks of 5 or 7 references and without); the
    answers must not change (``geoforest/_counted_search.py``,
    ``geoforest/proximity.py``)."""
    mode = _SEARCH_MODES[request.param]
    if mode is not None:
        import geoforest._counted_search
        import geoforest.proximity

        monkeypatch.setattr(geoforest.proximity, "SEARCH_BLOCK", mode[0])
        monkeypatch.setattr(geoforest._counted_search, "SCAN_BLOCK", mode[1])
        monkeypatch.setattr(geoforest._counted_search, "SCAN_RATIO", mode[2])
        monkeypatch.setattr(geoforest._counted_search, "SCAN_MIN_REFS", 0)
        monkeypatch.setattr(geoforest.proximity, "COLEAF_SCAN_RATIO", mode[3])
    return request.param
