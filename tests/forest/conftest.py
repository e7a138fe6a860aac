"""One two-process ``LocalCluster`` for every Dask test of the forests.

Worker *processes* stand in for a real cluster: every task's arguments and
results cross a process boundary, as they would between machines.  Started
once per session (a cluster takes seconds to start) and only by the tests
that ask for ``client``.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c
