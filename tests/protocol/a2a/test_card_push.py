"""Push notifications from an agent whose tasks live in the SDK's request handler (the path
policy-check and risk-check take): the card says so, a config given with the message or
created later gets every state change, over both bindings."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from accord.protocol.auth import mint_token
from tests.protocol.a2a.conftest import run_agent
from tests.protocol.a2a.wire_client import VERSION, message
from tests.support.processes import Service, free_port
from tests.support.push_receiver import TOKEN, running_receiver

COMPLETED = "TASK_STATE_COMPLETED"


@pytest.fixture(scope="module")
def dev_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    base = tmp_path_factory.mktemp("push-agent")
    (base / "logs").mkdir()
    with run_agent(base, base / "logs", env={"ACCORD_DEV": "1"}) as service:
        yield service


def _headers(agent: Service) -> dict[str, str]:
    # run_agent(data_dir, data_dir / "logs"): the agent's development secret is in data_dir.
    secret = (agent.log_path.parent.parent / "jwt-secret").read_text().strip()
    return {
        "Authorization": f"Bearer {mint_token('C-01', ('customer',), secret=secret)}",
        **VERSION,
    }


async def _rpc(agent: Service, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    async with httpx.AsyncClient(timeout=30) as http:
        answer: dict[str, Any] = (
            await http.post(agent.url + "/", json=body, headers=_headers(agent))
        ).json()
    return answer


async def test_the_card_says_push_notifications(dev_agent: Service) -> None:
    async with httpx.AsyncClient() as http:
        card = (await http.get(dev_agent.url + "/.well-known/agent-card.json")).json()
    assert card["capabilities"]["pushNotifications"] is True


async def test_a_config_given_with_the_message_gets_each_state_change(dev_agent: Service) -> None:
    async with running_receiver(free_port()) as receiver:
        msg = message({"mode": "progress"})
        config = {"url": receiver.url, "token": TOKEN, "id": "with-the-message"}
        params = {"message": msg, "configuration": {"taskPushNotificationConfig": config}}
        answer = await _rpc(dev_agent, "SendMessage", params)
        task_id = answer["result"]["task"]["id"]
        await receiver.wait_for(task_id, COMPLETED, deadline_s=30)
        assert receiver.states(task_id).count(COMPLETED) == 1
        assert "TASK_STATE_WORKING" in receiver.states(task_id)


async def test_a_config_created_later_over_rest_gets_the_rest(dev_agent: Service) -> None:
    async with running_receiver(free_port()) as receiver:
        asked = await _rpc(dev_agent, "SendMessage", {"message": message({"mode": "ask"})})
        task = asked["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", asked
        async with httpx.AsyncClient(timeout=30) as http:
            created = await http.post(
                f"{dev_agent.url}/tasks/{task['id']}/pushNotificationConfigs",
                json={"url": receiver.url, "token": TOKEN},
                headers=_headers(dev_agent),
            )
        assert created.status_code == 200, created.text
        assert created.json()["id"]
        follow = message(text=f"the answer {uuid.uuid4().hex[:6]}", task_id=task["id"])
        follow["contextId"] = task["contextId"]
        await _rpc(dev_agent, "SendMessage", {"message": follow})
        await receiver.wait_for(task["id"], COMPLETED, deadline_s=30)


async def test_deleting_a_config_twice_is_the_same_as_once(dev_agent: Service) -> None:
    """A2A 1.0 3.1.10: delete is idempotent, and the config is gone from the listing."""
    asked = await _rpc(dev_agent, "SendMessage", {"message": message({"mode": "ask"})})
    task_id = asked["result"]["task"]["id"]
    configs = f"{dev_agent.url}/tasks/{task_id}/pushNotificationConfigs"
    async with httpx.AsyncClient(timeout=30) as http:
        created = await http.post(
            configs,
            json={"url": "https://127.0.0.1:9/hook", "token": TOKEN},
            headers=_headers(dev_agent),
        )
        assert created.status_code == 200, created.text
        config_id = created.json()["id"]
        first = await http.delete(f"{configs}/{config_id}", headers=_headers(dev_agent))
        second = await http.delete(f"{configs}/{config_id}", headers=_headers(dev_agent))
        listed = await http.get(configs, headers=_headers(dev_agent))
    assert (first.status_code, second.status_code) == (200, 200), (first.text, second.text)
    assert config_id not in listed.text
