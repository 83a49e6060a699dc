"""A2A 1.0 section 3 (operations) MUSTs that no other test pinned, checked on the wire of a real
agent process over both bindings (docs/conformance.md names each test here)."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx

from accord.contracts.errors import ErrorCode
from tests.protocol.a2a.wire_client import AgentClient, auth, message
from tests.support.processes import Service


def test_list_tasks_always_says_the_next_page_and_omits_artifacts(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    """3.1.4: ``nextPageToken`` is always present ("" on the last page); without
    ``includeArtifacts`` the artifacts field is omitted entirely."""
    headers = auth(token_for(f"C-list-{client.transport}"))
    done = client.send(headers, message({"mode": "complete", "n": 1}))
    assert done.task["artifacts"]  # it has some, so the listing must leave them out
    listed = client.list(headers)
    assert listed.error is None
    assert listed.body["nextPageToken"] == ""
    tasks = listed.body["tasks"]
    assert [t["id"] for t in tasks] == [done.task["id"]]
    assert "artifacts" not in tasks[0]


def test_a_page_size_in_camel_case_pages_the_listing(
    agent: Service, token_for: Callable[..., str]
) -> None:
    """3.1.4 cursor pagination, newest first; 11.5: query parameters are camelCase."""
    with AgentClient(agent.url, "rest") as client:
        headers = auth(token_for("C-pages"))
        ids = [
            client.send(headers, message({"mode": "complete", "n": n})).task["id"] for n in (1, 2)
        ]
        first = client.rest("GET", "/tasks", headers, params={"pageSize": 1})
        assert [t["id"] for t in first.body["tasks"]] == [ids[1]]
        token = first.body["nextPageToken"]
        assert token
        second = client.rest("GET", "/tasks", headers, params={"pageSize": 1, "pageToken": token})
        assert [t["id"] for t in second.body["tasks"]] == [ids[0]]
        assert second.body["nextPageToken"] == ""


def test_a_context_id_is_generated_or_kept(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    """3.4.1: a message without ``contextId`` gets a new one in the answer; a client-provided
    one is kept."""
    headers = auth(token_for("C-ctx"))
    fresh = client.send(headers, message({"mode": "complete", "n": 1}))
    other = client.send(headers, message({"mode": "complete", "n": 2}))
    assert fresh.task["contextId"]
    assert fresh.task["contextId"] != other.task["contextId"]
    mine = {**message({"mode": "complete", "n": 3}), "contextId": "ctx-of-the-client"}
    assert client.send(headers, mine).task["contextId"] == "ctx-of-the-client"


def test_a_task_id_alone_continues_in_the_tasks_context_and_a_mismatch_is_refused(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    """3.4.2: the context is inferred from the task when only ``taskId`` is given; a message
    whose ``contextId`` is not its task's is rejected."""
    headers = auth(token_for("C-ctx2"))
    asked = client.send(headers, message({"mode": "ask"})).task
    wrong = {**message(text="1", task_id=asked["id"]), "contextId": "another-context"}
    refused = client.send(headers, wrong)
    assert refused.error is not None
    assert client.get(headers, asked["id"]).state == "TASK_STATE_INPUT_REQUIRED"
    answered = client.send(headers, message(text="42", task_id=asked["id"])).task
    assert (answered["id"], answered["contextId"]) == (asked["id"], asked["contextId"])


def test_a_subscription_starts_with_the_task_and_a_finished_task_refuses_one(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    """3.1.6: the first event is the Task as it is now; a task in a terminal state answers
    UnsupportedOperationError."""
    headers = auth(token_for("C-sub"))
    waiting = client.send(headers, message({"mode": "ask"})).task
    first = client.subscribe(headers, waiting["id"])
    assert first.error is None
    assert first.task["id"] == waiting["id"]
    assert first.task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    done = client.send(headers, message({"mode": "complete", "n": 1})).task
    refused = client.subscribe(headers, done["id"])
    assert refused.error is not None
    assert refused.error.code is ErrorCode.UNSUPPORTED_OPERATION


def test_an_undeclared_extended_card_is_unsupported(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    """3.3.4 and 3.1.11: the card does not declare ``extendedAgentCard``, so asking for it is
    UnsupportedOperationError."""
    card = httpx.get(client.url + "/.well-known/agent-card.json").json()
    assert not card["capabilities"].get("extendedAgentCard")
    headers = auth(token_for("C-card"))
    if client.transport == "jsonrpc":
        answer = client.rpc("GetExtendedAgentCard", {}, headers)
    else:
        answer = client.rest("GET", "/extendedAgentCard", headers)
    assert answer.error is not None
    assert answer.error.code is ErrorCode.UNSUPPORTED_OPERATION


def test_a_streamed_task_is_sse_beginning_with_the_task_and_closing_when_it_waits(
    agent: Service, token_for: Callable[..., str]
) -> None:
    """3.1.2 (task lifecycle stream), 9.4.2 and 11.7: ``text/event-stream``, the Task first,
    then updates, and the stream closes at an interrupted or terminal state."""
    headers = auth(token_for("C-stream"))
    body = {"message": message({"mode": "ask"})}
    for path, payload in (
        ("/", {"jsonrpc": "2.0", "id": 3, "method": "SendStreamingMessage", "params": body}),
        ("/message:stream", body),
    ):
        with httpx.stream(
            "POST", agent.url + path, json=payload, headers=headers, timeout=30.0
        ) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            events = [
                json.loads(line[5:]) for line in response.iter_lines() if line.startswith("data:")
            ]
        results = [e.get("result", e) for e in events]
        assert "task" in results[0], results[0]
        last = results[-1]
        state = (last.get("statusUpdate") or last.get("task") or {}).get("status", {}).get("state")
        assert state == "TASK_STATE_INPUT_REQUIRED"


def test_a_patch_version_is_not_considered(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    """3.6: patch numbers MUST NOT be considered in version negotiation: 1.0.7 is 1.0."""
    headers = {**auth(token_for("C-patch")), "A2A-Version": "1.0.7"}
    assert client.send(headers, message({"mode": "complete", "n": 1})).state == (
        "TASK_STATE_COMPLETED"
    )
