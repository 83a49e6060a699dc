"""An agent that says everything the agent API lets it say, for tests/protocol/a2a/
test_agent_api.py: artifacts of text, file (bytes and URL) and data parts, a streamed
artifact, a decline (REJECTED), a direct message reply, and what it saw of the message.

Behaviour by the ``mode`` of the input DataPart (skill ``say``) or of skill ``quick`` (replies
with a message, or with a task when asked to decline). Skill ``chat`` (its output may be empty)
is the one :class:`DecidingExecutor` answers per turn: a Message, a text-only task, a task with
data, a decline.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.json_format import MessageToDict

from accord.contracts.agents import AgentContract
from accord.contracts.errors import ErrorCode
from accord.protocol.a2a import (
    Completed,
    ContractExecutor,
    NeedsInput,
    Progress,
    Rejected,
    Reply,
    Turn,
)
from accord.protocol.a2a.server.parts import (
    artifact,
    data_part,
    file_bytes_part,
    file_url_part,
    text_part,
)

_OUTPUT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["ok"],
    "properties": {
        "ok": {"type": "boolean"},
        "message_id": {"type": ["string", "null"]},
        "parts": {"type": "array"},
    },
}

CONTRACT = AgentContract.model_validate(
    {
        "name": "rich-agent",
        "version": "1.0.0",
        "description": "Says everything the agent API allows, for tests.",
        "default_port": 8798,
        "errors": ["INVALID_INPUT", "POLICY_DENIED", "UNSUPPORTED_OPERATION", "INTERNAL"],
        "skills": [
            {
                "id": "say",
                "name": "Say",
                "tags": ["test"],
                "description": "Answers with what its mode names.",
                "input_schema": {
                    "type": "object",
                    "required": ["mode"],
                    "properties": {
                        "mode": {
                            "enum": [
                                "artifacts",
                                "stream",
                                "decline",
                                "decline_retryable",
                                "parts",
                                "reply_from_task",
                            ]
                        }
                    },
                },
                "output_schema": _OUTPUT,
            },
            {
                "id": "quick",
                "name": "Quick",
                "tags": ["test"],
                "description": "Answers at once with a message, no task.",
                "reply": "message",
                "input_schema": {
                    "type": "object",
                    "properties": {"mode": {"enum": ["reply", "decline"]}},
                },
                "output_schema": _OUTPUT,
            },
            {
                "id": "chat",
                "name": "Chat",
                "tags": ["test"],
                "description": "Answers with a message or a task, as the turn calls for.",
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "mode": {
                            "enum": [
                                "reply",
                                "text",
                                "data",
                                "decline",
                                "progress_then_reply",
                                "stream",
                            ]
                        }
                    },
                },
                "output_schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            },
        ],
    }
)

PNG = b"\x89PNG\r\n\x1a\n-not-really-an-image"
RECEIPT_URL = "https://files.example.com/receipts/R-1.pdf"


class RichExecutor(ContractExecutor):
    async def run(
        self, turn: Turn, progress: Progress
    ) -> Completed | NeedsInput | Rejected | Reply:
        mode = (turn.data or {}).get("mode", "reply")
        if turn.skill.id == "chat":
            return await _chat(mode, turn, progress)
        if turn.skill.id == "quick":
            if mode == "decline":
                return Rejected("quick answers only polite questions", ErrorCode.POLICY_DENIED)
            return Reply(text="at once", data={"ok": True}, parts=[text_part("P.S.")])
        if mode == "artifacts":
            return Completed(
                {"ok": True},
                text="done",
                artifacts=[
                    artifact("receipt", text_part("Receipt R-1: 12.00 EUR")),
                    artifact(
                        "files",
                        file_bytes_part(PNG, media_type="image/png", filename="photo.png"),
                        file_url_part(RECEIPT_URL, media_type="application/pdf"),
                    ),
                    artifact("more-data", data_part({"n": 3})),
                ],
            )
        if mode == "stream":
            stream = progress.artifact("story", artifact_id="story-1")
            await stream.write(text_part("once "))
            await stream.write(text_part("upon "))
            await stream.close(text_part("a time"))
            return Completed({"ok": True})
        if mode == "decline":
            return Rejected(
                "this agent does not do that", ErrorCode.UNSUPPORTED_OPERATION, {"asked": mode}
            )
        if mode == "decline_retryable":
            return Rejected("try later", ErrorCode.UNAVAILABLE)
        if mode == "reply_from_task":
            return Reply(text="a task skill cannot reply with a message")
        seen: list[Any] = [MessageToDict(p) for p in turn.parts]
        return Completed({"ok": True, "message_id": turn.message_id, "parts": seen})


async def _chat(mode: str, turn: Turn, progress: Progress) -> Completed | Rejected | Reply:
    """Skill ``chat``: how this turn answers is the agent's choice, by ``mode``."""
    if mode == "text":  # text only: no structured data, so no `result` artifact
        return Completed(artifacts=[artifact("answer", text_part("plain words"))])
    if mode == "data":
        return Completed({"ok": True}, artifacts=[artifact("answer", text_part("and words"))])
    if mode == "decline":
        return Rejected("not this one", ErrorCode.POLICY_DENIED)
    if mode == "stream":  # a streamed chunk opens the task too
        await progress.artifact("story").close(text_part("told in one go"))
        return Completed()
    if mode == "progress_then_reply":  # the task is open once progress reported on it
        await progress.update("thinking")
    return Reply(text=f"hello {turn.principal.subject}", data={"ok": True})


class DecidingExecutor(RichExecutor):
    """The same agent, allowed to answer any first turn with a message."""

    may_reply = True
