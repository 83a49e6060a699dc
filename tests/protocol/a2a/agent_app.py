"""A tiny agent for the server tests, served by a real uvicorn process:

    python -m uvicorn --factory tests.protocol.a2a.agent_app:create_app --port N

Behaviour by the ``mode`` of the input DataPart: complete, ask (waits for input, then completes
with the answer), sleep (``seconds``), raise (an unexpected exception), deny (a contract error),
bad_output (breaks its output schema), progress (reports two steps, then completes).
Configured by environment: ACCORD_TEST_DB (task store URL), ACCORD_TEST_PORT (card URL).

``create_migrating_app`` serves the same agent at contract 2.0.0 and 1.2.3 side by side: 2.0
answers carry a required ``kind`` that 1.x's closed output does not know.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from starlette.applications import Starlette

from accord.contracts.agents import AgentContract
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.served import ServedContracts
from accord.protocol.a2a import Completed, ContractExecutor, NeedsInput, Progress, Turn
from accord.protocol.a2a.server import build_agent_app
from accord.protocol.settings import ServeOptions

CONTRACT = AgentContract.model_validate(
    {
        "name": "test-agent",
        "version": "1.2.3",
        "description": "An agent that does what its input says, for tests.",
        "default_port": 8799,
        "waiting_reasons": ["input", "approval"],
        "errors": ["INVALID_INPUT", "POLICY_DENIED", "INTERNAL"],
        "skills": [
            {
                "id": "echo",
                "name": "Echo",
                "description": "Echo a number, or misbehave on request.",
                "tags": ["test"],
                "examples": ['{"mode": "complete", "n": 1}'],
                "input_schema": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["mode"],
                    "properties": {
                        "mode": {
                            "enum": [
                                "complete",
                                "ask",
                                "sleep",
                                "raise",
                                "deny",
                                "bad_output",
                                "progress",
                            ]
                        },
                        "n": {"type": "integer"},
                        "seconds": {"type": "number", "minimum": 0, "maximum": 60},
                    },
                },
                "output_schema": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["echo"],
                    "properties": {
                        "echo": {"type": ["integer", "string"]},
                        "user": {"type": "string"},
                    },
                },
            }
        ],
    }
)


class TestExecutor(ContractExecutor):
    async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
        if turn.is_continuation:
            return Completed(
                {"echo": turn.text, "user": turn.principal.subject}, text=f"answer was {turn.text}"
            )
        data: dict[str, Any] = turn.data or {}
        mode = data["mode"]
        if mode == "ask":
            turn.state["asked"] = True
            return NeedsInput("what is the answer?", data={"question": "answer"})
        if mode == "sleep":
            await asyncio.sleep(float(data.get("seconds", 30)))
        if mode == "raise":
            raise RuntimeError("internal detail that must not leak")
        if mode == "deny":
            raise AccordError(ErrorCode.POLICY_DENIED, "not allowed by the test policy")
        if mode == "bad_output":
            return Completed({"wrong": True})
        if mode == "progress":
            await progress.update("step one", node="one")
            await progress.update("step two", node="two", data={"k": 1})
        return Completed({"echo": data.get("n", 0), "user": turn.principal.subject}, text="done")


def create_app() -> Starlette:
    port = int(os.environ.get("ACCORD_TEST_PORT", "0"))
    options = ServeOptions(port=port, database_url=os.environ.get("ACCORD_TEST_DB") or None)
    return build_agent_app(CONTRACT, TestExecutor(CONTRACT), options, service_name="test")


def _contract_2_0() -> AgentContract:
    doc = CONTRACT.model_dump(mode="json")
    doc.update(version="2.0.0", also_serves=[CONTRACT.version])
    output = doc["skills"][0]["output_schema"]
    output["properties"]["kind"] = {"const": "echo"}
    output["required"] = [*output["required"], "kind"]
    return AgentContract.model_validate(doc)


CONTRACT_2_0 = _contract_2_0()


class MigratingExecutor(TestExecutor):
    """The 2.0 code: always says ``kind``; a 1.x task's answer leaves it out (answer_in)."""

    async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
        outcome = await super().run(turn, progress)
        if isinstance(outcome, Completed) and "echo" in outcome.data:
            outcome.data = {**outcome.data, "kind": "echo"}
        return outcome


def create_migrating_app() -> Starlette:
    port = int(os.environ.get("ACCORD_TEST_PORT", "0"))
    options = ServeOptions(port=port, database_url=os.environ.get("ACCORD_TEST_DB") or None)
    served = ServedContracts.of([CONTRACT, CONTRACT_2_0])
    executor = MigratingExecutor(CONTRACT_2_0, served=served)
    return build_agent_app(CONTRACT_2_0, executor, options, service_name="test")
