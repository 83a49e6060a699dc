"""Crash recovery with real processes: kill -9 a workflow process, start another, recover.

Every workflow must finish; nodes that finished before the kill ran exactly once; the node
that had started and not finished ran again (so its side effect needs an idempotency key:
the `effects` table shows each business write happened once).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime.workflow.harness import IDS, Harness


@pytest.fixture
def harness(log_url: str, tmp_path: Path) -> Iterator[Harness]:
    h = Harness(log_url, tmp_path)
    yield h
    h.close()


def assert_effects_once(h: Harness) -> None:
    keys = [row[0] for row in h.query("SELECT key FROM effects")]
    assert len(keys) == len(set(keys))


def test_kill_after_first_node(harness: Harness) -> None:
    proc = harness.spawn("start", "--block", "b,c,d")
    # b, c and d run only after a's output is durable: wait until all three have started.
    harness.wait_for(lambda: all(harness.runs()[w][n] == 1 for w in IDS for n in "bcd"), proc)
    harness.kill(proc)
    result = harness.finish("recover")
    for workflow_id in IDS:
        assert result[workflow_id]["status"] == "completed"
        assert result[workflow_id]["result"] == {"done": {"node": "done"}}
        assert harness.runs()[workflow_id] == Counter(a=1, b=2, c=2, d=2, e=1, done=1)
    assert_effects_once(harness)


def test_kill_in_the_middle_of_the_parallel_nodes(harness: Harness) -> None:
    proc = harness.spawn("start", "--block", "b")
    # c and d finished (durably: the observer runs after the append), b is still running.
    harness.wait_for(
        lambda: (
            harness.observed("node_output", "c") == len(IDS)
            and harness.observed("node_output", "d") == len(IDS)
        ),
        proc,
    )
    harness.kill(proc)
    result = harness.finish("recover")
    for workflow_id in IDS:
        assert result[workflow_id]["status"] == "completed"
        assert harness.runs()[workflow_id] == Counter(a=1, b=2, c=1, d=1, e=1, done=1)
        events = result[workflow_id]["events"]
        assert events.count("node_output") == 6, " ".join(events)
        assert events[-1] == "workflow_finished"
    assert_effects_once(harness)


def test_kill_while_waiting_for_an_interrupt(harness: Harness) -> None:
    proc = harness.spawn("start", "--approval")
    harness.wait_for(lambda: harness.observed("interrupted", "e") == len(IDS), proc)
    harness.kill(proc)
    result = harness.finish("resume")
    for workflow_id in IDS:
        assert result[workflow_id]["status"] == "completed"
        assert result[workflow_id]["result"] == {"done": {"node": "done"}}
        # e asked, was answered after the restart, and ran again with the answer.
        assert harness.runs()[workflow_id] == Counter(a=1, b=1, c=1, d=1, e=2, done=1)
        assert result[workflow_id]["events"].count("resumed") == 1
    assert_effects_once(harness)


def test_durable_timer_fires_once_after_restart(harness: Harness) -> None:
    proc = harness.spawn("start", "--approval", "--timeout", "1.0")
    harness.wait_for(lambda: harness.observed("timer_set", "e") == len(IDS), proc)
    killed_at = time.time()
    harness.kill(proc)
    # Restart only once the timers are due: nothing in memory survived the kill.
    deadline = time.monotonic() + 10
    while time.time() < killed_at + 1.2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    result = harness.finish("recover")
    for workflow_id in IDS:
        assert result[workflow_id]["status"] == "completed"
        assert result[workflow_id]["result"] == {"expired": {"node": "expired"}}
        events = result[workflow_id]["events"]
        assert events.count("timer_set") == 1
        assert events.count("timer_fired") == 1
        assert harness.runs()[workflow_id] == Counter(a=1, b=1, c=1, d=1, e=2, expired=1)
