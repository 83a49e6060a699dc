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

And a stream the balancer's replica dropped (killed with SIGKILL while it streamed a refund)
is resumed by the client through the balancer (``SubscribeToTask`` with ``Last-Event-ID``) on
the other replica: the client sees every event of the task after its last one, in order, none
twice, and the refund is paid once.

The seed is printed; ``ACCORD_CHAOS_SEED=N`` replays a run. The long run is ``make
cluster-chaos`` (bench/cluster.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from accord.contracts.keys import RESULT_ARTIFACT_NAME
from accord.contracts.status import A2AState, Status, WaitingReason
from accord.protocol.a2a.client import TaskView
from tests.mesh.cluster_support import Cluster, Report, client_for, running_cluster, under_fire
from tests.mesh.mesh_support import JS, ROOT, node_env
from tests.mesh.support import PAUSE_MARKER, token
from tests.support import postgres

pytestmark = pytest.mark.timeout(420)

EXAMPLE = ROOT / "docs" / "examples" / "refund_client.mjs"
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


def _paused_replica(cluster: Cluster, seen_before: dict[str, int]) -> dict[str, object]:
    """The orchestrator replica whose log gained a pause marker (it runs the refund now)."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        for replica in cluster.replicas("orchestrator"):
            text = Path(str(replica["log"])).read_text(errors="replace")
            if text.count(PAUSE_MARKER) > seen_before.get(str(replica["name"]), 0):
                return replica
        time.sleep(0.05)  # polling the logs, bounded by the deadline
    raise TimeoutError("no orchestrator replica reached the pause point")


async def _event_ids(cluster: Cluster, task_id: str) -> list[str]:
    """The task's agent messages (its history's, then its status's), as GetTask gives them."""
    headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {token('C-01')}"}
    async with httpx.AsyncClient(base_url=cluster.url("orchestrator")) as http:
        answer = await http.get(f"/tasks/{task_id}", headers=headers)
    answer.raise_for_status()
    task = answer.json()
    history = [m["messageId"] for m in task.get("history", []) if m["role"] == "ROLE_AGENT"]
    status = task["status"].get("message", {}).get("messageId")
    return history + ([status] if status and status not in history else [])


def _markers(cluster: Cluster) -> dict[str, int]:
    return {
        str(r["name"]): Path(str(r["log"])).read_text(errors="replace").count(PAUSE_MARKER)
        for r in cluster.replicas("orchestrator")
    }


async def test_a_stream_broken_by_a_dying_replica_resumes_on_the_other_in_order(
    cluster: Cluster,
) -> None:
    report = Report(seed=0)
    async with client_for(cluster, report, "C-01") as client:
        asked = await client.send(
            text="my mug arrived broken, order O-1005", skill="refund.request", deadline_s=90
        )
        assert asked.waiting_reason is WaitingReason.INPUT, asked.error
        before = _markers(cluster)
        views: list[TaskView] = []
        answering = asyncio.create_task(
            client.send(
                text="the handle snapped off, photo IMG_1.jpg",
                task=asked,
                on_update=views.append,
                deadline_s=120,
            )
        )
        replica = await asyncio.to_thread(_paused_replica, cluster, before)
        # The notes it streamed before its pause reach the client (the pause lasts 4 s).
        end = time.monotonic() + 3
        while not any(v.status_text.startswith("refund:") for v in views):
            assert time.monotonic() < end, views
            await asyncio.sleep(0.02)
        seen_live = len(views)
        os.killpg(int(str(replica["pid"])), signal.SIGKILL)  # mid-stream, before the payment
        final = await answering
        assert final.status is Status.COMPLETED, final.error
        assert (final.data or {}).get("decision") == "refunded", final.data
        task = await client.get(asked.task_id)

    assert seen_live >= 1  # the stream had started on the replica that died
    assert len(views) > seen_live  # and went on after it died
    # A view per event: a status update shows its message's id; an artifact update (the result
    # and the receipt, before the final status) shows the same status with one more artifact.
    keys = [(v.event_id, len(v.artifacts)) for v in views if v.event_id]
    assert len(keys) == len(set(keys)), f"an event twice: {keys}"
    ids = list(dict.fromkeys(i for i, _ in keys))
    # Every event after the answer, in the task's order: its progress notes (the log's sequence
    # numbers), then the final status.
    order = [int(i.rsplit("-", 1)[1]) for i in ids if i.rsplit("-", 1)[1].isdigit()]
    assert order == sorted(order), ids
    assert views[-1].status is Status.COMPLETED
    assert task.event_id == ids[-1]
    # None missed: from the first the client saw, the task's events are exactly those it saw.
    events = await _event_ids(cluster, asked.task_id)
    assert events[events.index(ids[0]) :] == ids
    conn = await asyncpg.connect(cluster.database_url)
    try:
        paid = await conn.fetchval(
            "SELECT count(*) FROM payments_refunds WHERE order_id = 'O-1005'"
        )
    finally:
        await conn.close()
    assert paid == 1


@pytest.mark.node
def test_the_javascript_client_refunds_through_the_balancer(
    cluster: Cluster, tmp_path: Path
) -> None:
    """docs/examples/refund_client.mjs (the official @a2a-js/sdk) as shipped, pointed at the
    balancer as a JavaScript team's client would be: it asks, the refund waits for an
    approver, the approver's token approves it, all through HAProxy to either replica."""
    node = node_env()
    shutil.copyfile(EXAMPLE, tmp_path / EXAMPLE.name)
    (tmp_path / "node_modules").symlink_to(JS / "node_modules")
    done = subprocess.run(
        ["node", EXAMPLE.name],
        cwd=tmp_path,
        env={
            **node,
            "ACCORD_URL": cluster.url("orchestrator"),
            "ACCORD_TOKEN": token("C-04"),
            "ACCORD_APPROVER_TOKEN": token("ann", "approver"),
            # C-04's five recent refunds send any amount to an approver (O-1006, the cancel
            # flow's order, is never paid by it: a small part leaves the rest to others).
            "ACCORD_REQUEST": "please refund $1 of order O-1006, I changed my mind",
        },
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    final = lines[-1]
    assert final["state"] == A2AState.COMPLETED.value, final
    result = final[RESULT_ARTIFACT_NAME]
    assert (result["decision"], result["approved_by"]) == ("refunded", "ann")
    assert result["receipt"]["idempotency_key"] == f"refund:O-1006:{final['task']}"
