"""The demo flows leave no ERROR line and no traceback in any service's log, graceful stop
included, and so does a graceful stop in the middle of a refund.

Found against `accord up` (issue #30): ordinary requests made the orchestrator log ERROR lines
("Task ... already exists. Ignoring task replacement", "Task was destroyed but it is
pending!"), and a graceful stop logged an UNAVAILABLE traceback. An operator who alerts on ERROR
would be paged by the happy path, and learn to ignore the real thing. Real processes: the five
services run the demo's scenes (refunded, approved, explained, asked for evidence) plus a
cancel and the reads a client makes, are stopped with SIGTERM, and then every log is read. The
stop in the middle of a refund (commerce slowed down, so the order lookup is in flight) logged
"Task exception was never retrieved" with an UNAVAILABLE traceback (the lookup shared by the
three checks failed when the tool client closed, with nobody left to read it) and uvicorn's
"ASGI callable returned without completing response" (the customer's event stream, cut short).
"""

from __future__ import annotations

import asyncio
import re
import signal
import time
from pathlib import Path
from typing import Final

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import TaskView
from tests.mesh.support import SERVICES, Mesh, answer, approve, ask, customer, running_mesh
from tests.support.processes import Service

pytestmark = pytest.mark.timeout(300)

# A line a logger wrote at ERROR or CRITICAL (the text format: "<date> <time> LEVEL logger").
LOOKUP_LATENCY_MS: Final = 8_000
TERMINAL_MESSAGES: Final = 20
SEVERE: Final = re.compile(r"^\S+ \S+ (ERROR|CRITICAL) ", re.MULTILINE)
TRACEBACK: Final = "Traceback (most recent call last)"


async def _demo_flows(mesh: Mesh) -> None:
    """The scenes of `accord demo`, a cancel, and the reads around them."""
    refunded = await ask(mesh, "C-01", "鞋码不合适，想退款，订单 O-1001")
    assert (refunded.data or {}).get("decision") == "refunded", refunded.error
    # A customer who writes again to a finished task is told it has ended. (Each such message
    # used to leave two of the SDK's queue tasks pending: "Task was destroyed but it is
    # pending!" once the collector ran, which the flows below make it do.)
    for n in range(TERMINAL_MESSAGES):
        with pytest.raises(AccordError) as ended:
            await answer(mesh, "C-01", refunded, f"thank you! ({n})")
        assert ended.value.code is ErrorCode.UNSUPPORTED_OPERATION

    laptop = await ask(mesh, "C-03", "I changed my mind about the laptop, refund order O-1004")
    assert laptop.waiting_reason is WaitingReason.APPROVAL, laptop.error
    decided = await approve(mesh, "approver-1", ("approver",), laptop.task_id, note="by phone")
    assert decided.status is Status.COMPLETED, decided.error

    late = await ask(mesh, "C-01", "The running shoes from order O-1002 are too small, refund")
    assert (late.data or {}).get("decision") == "not_eligible", late.error

    mug = await ask(mesh, "C-01", "my mug arrived broken, order O-1005")
    assert mug.waiting_reason is WaitingReason.INPUT, mug.error
    paid = await answer(mesh, "C-01", mug, "the handle snapped off in the box, photo IMG_2291.jpg")
    assert (paid.data or {}).get("decision") == "refunded", paid.error

    asked = await ask(mesh, "C-02", "my jacket from order O-1003 arrived torn")
    async with await customer(mesh, "C-02") as client:
        canceled = await client.cancel(asked.task_id)
        assert canceled.error is not None
        assert canceled.error.code is ErrorCode.CANCELED
        await client.get(asked.task_id)
        await client.list_tasks(page_size=10)
    async with await customer(mesh, "C-01") as client:  # blocking, not streamed
        blocking = await client.send(
            text="I changed my mind, refund $5 of order O-1001", streaming=False
        )
        assert blocking.status in (Status.COMPLETED, Status.WAITING), blocking.error
    # Left waiting when the services stop: a question, and an approval.
    waits = await ask(mesh, "C-02", "my jacket from order O-1003 arrived torn")
    assert waits.waiting_reason is WaitingReason.INPUT, waits.error
    pending = await ask(mesh, "C-04", "please refund order O-1006, I changed my mind")
    assert pending.waiting_reason is WaitingReason.APPROVAL, pending.error


def _problems(log: str) -> list[str]:
    lines = [m.group(0) + log[m.end() :].split("\n", 1)[0] for m in SEVERE.finditer(log)]
    if TRACEBACK in log:
        at = log.index(TRACEBACK)
        lines.append(log[max(0, at - 300) : at + 1500])
    return lines


def _check_logs(services: dict[str, Service]) -> None:
    """Every service stopped on SIGTERM, and its log holds no ERROR line and no traceback."""
    assert set(services) == set(SERVICES)
    found: dict[str, list[str]] = {}
    for name, service in services.items():
        # uvicorn re-raises the signal once it has shut down: -SIGTERM is a graceful stop too.
        code = service.process.poll()
        assert code in (0, -signal.SIGTERM), f"{name} did not stop on SIGTERM ({code})"
        if problems := _problems(service.log()):
            found[name] = problems
    assert not found, "\n".join(f"{n}:\n  " + "\n  ".join(p) for n, p in found.items())


async def test_the_demo_flows_and_a_graceful_stop_log_no_error(tmp_path: Path) -> None:
    with running_mesh(tmp_path) as mesh:
        await _demo_flows(mesh)
        services = dict(mesh.services)
    # The block's end stopped every service with SIGTERM and waited for it to exit.
    _check_logs(services)


async def test_a_graceful_stop_during_a_refund_logs_no_error(tmp_path: Path) -> None:
    slow = {"ACCORD_FAULTS": f"orders.lookup=latency:{LOOKUP_LATENCY_MS}", "ACCORD_DEV": "1"}
    with running_mesh(tmp_path, service_env={"commerce": slow}) as mesh:
        updates: list[TaskView] = []
        call = asyncio.create_task(
            ask(mesh, "C-01", "please refund $10 of order O-1001, wrong size", updates)
        )
        end = time.monotonic() + 60
        while not any(v.node == "intake" and "done" in v.status_text for v in updates):
            assert time.monotonic() < end, "intake did not finish"
            assert not call.done(), call
            await asyncio.sleep(0.05)  # polling the stream's updates, bounded by the deadline
        # The three checks now wait on the slow lookup: stop the orchestrator under them.
        await asyncio.to_thread(mesh.services["orchestrator"].stop)
        await asyncio.gather(call, return_exceptions=True)  # its stream ended with the stop
        services = dict(mesh.services)
    _check_logs(services)
