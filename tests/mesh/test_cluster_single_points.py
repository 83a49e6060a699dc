"""The single points fail too: PostgreSQL and HAProxy restarted under load (issue #35).

`accord cluster` (two replicas of each of the five services behind HAProxy) runs on a
PostgreSQL server of this module's own, so that it can be stopped and started again on the
same port and data without touching the session's. Customers ask for refunds, approve and
cancel them and resume their streams through the balancer while PostgreSQL is stopped (``-m
fast``, then ``-m immediate``) for a few seconds and HAProxy is killed (SIGKILL, SIGTERM), in
turn (tests/mesh/single_points_support.py). Then: every request completed or ended with a
retryable contract error, every 5xx a client saw was the contract's typed retryable error, no
refund was paid twice, every task ended, and the cluster served again by itself each time.

The seed is printed; ``ACCORD_CHAOS_SEED=N`` replays a run. The long run is ``bench/cluster.py
single-points``.
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mesh.cluster_support import Cluster, running_cluster
from tests.mesh.single_points_support import HITS, single_points
from tests.support import postgres

pytestmark = pytest.mark.timeout(300)

DURATION_S = 20.0
EVERY_S = 3.0
OUTAGE_S = 3.0


def _required(what: str, present: bool, install: str) -> None:
    if present:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} must be installed on CI (.ci/run installs it)")
    pytest.skip(f"{what} not installed ({install})")


@pytest.fixture(scope="module")
def server() -> Iterator[postgres.Server]:
    _required("PostgreSQL", postgres.available(), "apt-get install -y postgresql")
    with postgres.private_server(synchronous_commit=True) as started:
        yield started


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, server: postgres.Server) -> Iterator[Cluster]:
    _required("haproxy", shutil.which("haproxy") is not None, "apt-get install -y haproxy")
    base: Path = tmp_path_factory.mktemp("single-points")
    with running_cluster(base, postgres.fresh_database(server.url)) as started:
        yield started


async def test_postgres_and_balancer_restarted_under_load_lose_nothing(
    cluster: Cluster, server: postgres.Server
) -> None:
    seed = int(os.environ.get("ACCORD_CHAOS_SEED") or random.randrange(1_000_000))
    report = await single_points(
        cluster, server, seed=seed, duration_s=DURATION_S, every_s=EVERY_S, outage_s=OUTAGE_S
    )
    print(report.figures())
    hit = {what for what, _ in report.recoveries}
    assert hit == set(HITS), report.figures()  # each single point failed at least once
    assert len(report.outcomes) >= 6, report.figures()
    problems = await report.problems(cluster)
    assert problems == [], "\n".join([report.figures(), *problems])
