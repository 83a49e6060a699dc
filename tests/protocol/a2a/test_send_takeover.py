"""A recorded send key never points at work nobody does: a process that claimed a message and
died before its task existed leaves a key that the next copy of the message takes over, running
the message under the task id the key names (real agent process, SQLite)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from accord.protocol.a2a.server.send_claim import send_key
from accord.protocol.a2a.server.send_keys import SendKeys
from accord.protocol.a2a.server.send_tables import send_table_name
from accord.protocol.auth import mint_token
from tests.protocol.a2a.conftest import run_agent
from tests.protocol.a2a.wire_client import AgentClient, auth, message

TASK_ID = "task-of-a-process-that-died"


async def _claimed_by_a_dead_process(url: str, owner: str, sent: dict[str, object]) -> None:
    """What a process leaves that claimed the message and was killed before its task existed."""
    key = send_key(sent)
    assert key is not None
    keys = SendKeys(url, table=send_table_name("test"), lease_s=3600.0)
    await keys.open()
    new, _ = await keys.claim(owner, key.message_id, key.fingerprint, TASK_ID)
    assert new
    keys.let_go(owner, key.message_id)  # killed: its claim is neither settled nor released
    await keys.db.close()


def test_a_copy_takes_over_a_key_whose_process_died(data_dir: Path, log_dir: Path) -> None:
    url = f"sqlite:///{data_dir / 'takeover.db'}"
    sent = message({"mode": "complete", "n": 7})
    asyncio.run(_claimed_by_a_dead_process(url, "accord/C-71", sent))
    with run_agent(data_dir, log_dir, db_url=url) as agent, AgentClient(agent.url, "rest") as c:
        headers = auth(mint_token("C-71", ["customer"]))
        answer = c.send(headers, sent).task
        assert answer["id"] == TASK_ID
        assert answer["status"]["state"] == "TASK_STATE_COMPLETED"
        again = c.send(headers, sent).task  # and from then on, it is that task
        assert again["id"] == TASK_ID
