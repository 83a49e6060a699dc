"""An agent serving two major versions side by side: the card lists both, a task speaks the
version its first turn names (the A2A client names the served version of its caller's major),
and the answer is given in that version. Against a real uvicorn process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import CONTRACT_VERSION_META_KEY
from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient
from tests.protocol.a2a.conftest import run_agent
from tests.protocol.a2a.wire_client import AgentClient, auth, message
from tests.support.processes import Service

MIGRATING = "tests.protocol.a2a.agent_app:create_migrating_app"


@pytest.fixture(scope="module")
def migrating(shared_dirs: tuple[Path, Path]) -> Iterator[Service]:
    data, logs = shared_dirs
    with run_agent(data, logs, factory=MIGRATING) as service:
        yield service


async def test_the_card_lists_both_and_each_caller_gets_its_version(
    migrating: Service, token_for: Callable[..., str]
) -> None:
    token = token_for("C-01")
    async with await A2AClient.connect(migrating.url, token=token) as plain:
        assert plain.card.contract_versions == ["2.0.0", "1.2.3"]
        newest = await plain.send(data={"mode": "complete", "n": 1})
        newest_meta = (await plain.get(newest.task_id)).metadata
    # A caller naming no version gets the newest.
    assert newest.data == {"echo": 1, "user": "C-01", "kind": "echo"}
    # The task's metadata says which version it was answered in.
    assert newest_meta[CONTRACT_VERSION_META_KEY] == "2.0.0"

    async with await A2AClient.connect(migrating.url, token=token, expects="1.0.0") as old:
        assert old.contract_version == "1.2.3"  # the served version of the caller's major
        view = await old.send(data={"mode": "complete", "n": 2})
        assert view.status is Status.COMPLETED, view.error
        assert view.data == {"echo": 2, "user": "C-01"}  # a 1.x answer: no kind
        assert (await old.get(view.task_id)).metadata[CONTRACT_VERSION_META_KEY] == "1.2.3"
        # A continuation keeps the version its task started in.
        asked = await old.send(data={"mode": "ask"})
        assert asked.status is Status.WAITING
        answered = await old.send(text="42", task=asked)
        assert answered.data == {"echo": "42", "user": "C-01"}

    async with await A2AClient.connect(migrating.url, token=token, expects="2.0.0") as new:
        view = await new.send(data={"mode": "complete", "n": 3})
        assert view.data == {"echo": 3, "user": "C-01", "kind": "echo"}


async def test_a_client_of_another_major_is_refused_before_sending(
    migrating: Service, token_for: Callable[..., str]
) -> None:
    with pytest.raises(AccordError) as caught:
        await A2AClient.connect(migrating.url, token=token_for("C-01"), expects="3.1.0")
    assert caught.value.code is ErrorCode.VERSION_UNSUPPORTED
    assert caught.value.details == {
        "peer": "test-agent",
        "expected": "3.1.0",
        "served": ["2.0.0", "1.2.3"],
    }


@pytest.mark.parametrize("transport", ["jsonrpc", "rest"])
def test_a_task_naming_an_unserved_major_fails_naming_both(
    migrating: Service, token_for: Callable[..., str], transport: str
) -> None:
    with AgentClient(migrating.url, transport) as wire:
        answer = wire.send(
            auth(token_for("C-01")),
            message({"mode": "complete"}, metadata={CONTRACT_VERSION_META_KEY: "3.0.0"}),
        )
        task = answer.task
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    text = str(task["status"])
    for version in ("3.0.0", "2.0.0", "1.2.3"):
        assert version in text
    assert ErrorCode.VERSION_UNSUPPORTED.value in text
