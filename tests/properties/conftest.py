"""Hypothesis profiles of the property tests (issue 44).

``"properties"``: the budget CI runs, a fixed number of examples drawn from a
fixed seed (``derandomize``), so every run tries the same cases and a red
run is reproducible; no deadline, because a first call may compile numba
kernels.  ``"properties-long"``: the same with ten times the examples, for a
local search (``GEOFOREST_PROPERTIES_PROFILE=properties-long``).  Tests take
them through ``_strategies.profile()``; loading a profile here would change
every other hypothesis test in the session.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile(
    "properties", max_examples=40, deadline=None, derandomize=True, print_blob=True
)
settings.register_profile(
    "properties-long", max_examples=200, deadline=None, derandomize=True, print_blob=True
)
