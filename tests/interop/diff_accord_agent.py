"""The Accord side of the differential test (tests/interop/test_a2a_differential.py): the echo
agent of tests/interop/diff_bare_agent.py written on Accord's agent API, served without
authentication (`accord serve --auth none`) by a real uvicorn process:

    python -m uvicorn --factory tests.interop.diff_accord_agent:create_app --port N

with ACCORD_DATA_DIR, ACCORD_TEST_PORT (the card's URL) and ACCORD_TEST_DB (the task store).
"""

from __future__ import annotations

import os

from starlette.applications import Starlette
from tests.interop.diff_bare_agent import ARTIFACT_NAME, ASK_TEXT

from accord.contracts.agents import AgentContract
from accord.protocol.a2a import Completed, ContractExecutor, NeedsInput, Progress, Reply, Turn
from accord.protocol.a2a.server import build_agent_app
from accord.protocol.a2a.server.parts import artifact, text_part
from accord.protocol.settings import ServeOptions

CONTRACT = AgentContract.model_validate(
    {
        "name": "echo",
        "version": "1.0.0",
        "description": "Echoes what it is told.",
        "default_port": 8797,
        "waiting_reasons": ["input"],
        "errors": ["INVALID_INPUT", "INTERNAL"],
        "skills": [
            {
                "id": "echo",
                "name": "Echo",
                "description": "Echoes text.",
                "tags": ["test"],
                "input_schema": {"type": "object"},
                "output_schema": {"type": "object"},
            }
        ],
    }
)


class AccordEchoExecutor(ContractExecutor):
    may_reply = True  # "reply" is answered with a Message, as the bare agent does

    async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput | Reply:
        text = turn.text.strip()
        if not turn.is_continuation and text == "reply":
            return Reply(text=f"echo: {text}")
        if not turn.is_continuation and text == "ask":
            return NeedsInput(ASK_TEXT)
        return Completed(artifacts=[artifact(ARTIFACT_NAME, text_part(f"echo: {text}"))])


def create_app() -> Starlette:
    port = int(os.environ["ACCORD_TEST_PORT"])
    options = ServeOptions(port=port, database_url=os.environ["ACCORD_TEST_DB"], auth_none=True)
    return build_agent_app(CONTRACT, AccordEchoExecutor(CONTRACT), options, service_name="echo")
