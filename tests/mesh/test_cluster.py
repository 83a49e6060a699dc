"""The production topology under fire (issue #35, docs/replicas.md "A cluster on one machine").

`accord cluster` runs HAProxy in front of two replicas of each of the five services, all on one
PostgreSQL database; clients talk only to the balancer. For a short run, customers ask for
refunds, approvers approve them and customers cancel them (tests/mesh/cluster_support.py),
while a replica is killed with SIGKILL or rolled with SIGTERM about every 3 s (never both of a
service at once) and started again by the cluster. Then:

- no customer's request failed (the clients retry idempotent sends, as they do), and no
  response with a 5xx reached a client;
- no refund was paid twice (one ledger row per key, no order paid beyond its total);
- every task ended, and both orchestrator replicas, asked directly, read each alike.

The seed is printed; ``ACCORD_CHAOS_SEED=N`` replays a run. The long run is ``make
cluster-chaos`` (bench/cluster.py).
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mesh.cluster_support import Cluster, running_cluster, under_fire
from tests.support import postgres

pytestmark = pytest.mark.timeout(420)

DURATION_S = 30.0
EVERY_S = 3.0


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, postgres_server_url: str
) -> Iterator[Cluster]:
    if shutil.which("haproxy") is None:
        if os.environ.get("CI"):
            pytest.fail("haproxy must be installed on CI (.ci/run installs it)")
        pytest.skip("haproxy not installed (apt-get install -y haproxy)")
    base: Path = tmp_path_factory.mktemp("cluster")
    with running_cluster(base, postgres.fresh_database(postgres_server_url)) as started:
        yield started


async def test_refunds_approvals_and_cancels_through_the_balancer_survive_kills_and_rolls(
    cluster: Cluster,
) -> None:
    seed = int(os.environ.get("ACCORD_CHAOS_SEED") or random.randrange(1_000_000))
    report = await under_fire(cluster, seed=seed, duration_s=DURATION_S, every_s=EVERY_S)
    print(report.figures())
    assert sum(report.kills.values()) >= 4, report.figures()
    assert report.restarts >= sum(report.kills.values()) - 2, report.figures()  # hits landed
    assert len(report.outcomes) >= 6, report.figures()
    assert await report.problems(cluster) == [], report.figures()
