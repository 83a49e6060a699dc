"""What `Runner.run_async` yields: events with an author and content parts (after Google ADK).

    Event(author="intake", content=Content(parts=[Part.thought_of("intake: reading ...")]))
    Event(author="orchestrator", content=Content(parts=[Part.call("orders.lookup", {...})]))
    Event(author="orders.lookup", content=Content(parts=[Part.response("orders.lookup", {...})]))
    Event(author="orchestrator", content=..., status=Status.COMPLETED)   # is_final_response()

A part is one of five kinds: ``text`` (for the user), ``thought`` (progress, reasoning: ``text``
holds it and ``thought`` is True, as in ADK), ``function_call`` (an MCP tool call or an A2A
agent call: name, args, id), ``function_response`` (its answer, the same id), ``data`` (a JSON
object: a node's output, the final result).
"""

from __future__ import annotations

import time
import uuid
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from accord.contracts.status import Status


class PartKind(StrEnum):
    TEXT = "text"
    THOUGHT = "thought"
    FUNCTION_CALL = "function_call"
    FUNCTION_RESPONSE = "function_response"
    DATA = "data"


class FunctionCall(BaseModel):
    """A call to a tool (MCP) or an agent (A2A, ``name`` is the agent's)."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class FunctionResponse(BaseModel):
    """The answer to the call with the same ``id`` (an error answer has ``response.error``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    response: dict[str, Any] = Field(default_factory=dict)


class Part(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: PartKind
    text: str | None = None
    thought: bool = False
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    data: dict[str, Any] | None = None

    @classmethod
    def text_of(cls, text: str) -> Part:
        return cls(kind=PartKind.TEXT, text=text)

    @classmethod
    def thought_of(cls, text: str) -> Part:
        return cls(kind=PartKind.THOUGHT, text=text, thought=True)

    @classmethod
    def data_of(cls, data: dict[str, Any]) -> Part:
        return cls(kind=PartKind.DATA, data=data)

    @classmethod
    def call(cls, name: str, args: dict[str, Any], call_id: str) -> Part:
        return cls(
            kind=PartKind.FUNCTION_CALL,
            function_call=FunctionCall(id=call_id, name=name, args=args),
        )

    @classmethod
    def response(cls, name: str, response: dict[str, Any], call_id: str) -> Part:
        return cls(
            kind=PartKind.FUNCTION_RESPONSE,
            function_response=FunctionResponse(id=call_id, name=name, response=response),
        )


class Content(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: str = "model"
    parts: list[Part] = Field(default_factory=list)


class Usage(BaseModel):
    """Model usage: budget units charged and provider calls made (failed calls count too)."""

    model_config = ConfigDict(frozen=True)

    units: int = 0
    calls: int = 0
    runs: int = 0  # routed model requests (a cache hit is a run with no call)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            units=self.units + other.units,
            calls=self.calls + other.calls,
            runs=self.runs + other.runs,
        )


def new_id() -> str:
    return uuid.uuid4().hex


class Event(BaseModel):
    """One thing that happened during an invocation (one ``run_async`` call)."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(default_factory=new_id)
    invocation_id: str
    author: str
    content: Content | None = None
    partial: bool = False
    usage: Usage | None = None
    timestamp: float = Field(default_factory=time.time)
    # Only on the final event: where the session's workflow stands, and its error if it failed.
    status: Status | None = None
    error: dict[str, Any] | None = None
    workflow_id: str | None = None

    def is_final_response(self) -> bool:
        """The answer of this invocation: the decision, the question asked, or the failure."""
        return self.status is not None and not self.partial

    def get_function_calls(self) -> list[FunctionCall]:
        return [p.function_call for p in self._parts() if p.function_call is not None]

    def get_function_responses(self) -> list[FunctionResponse]:
        return [p.function_response for p in self._parts() if p.function_response is not None]

    @property
    def text(self) -> str:
        """The user-facing text of this event (thoughts excluded)."""
        return "".join(p.text or "" for p in self._parts() if p.kind is PartKind.TEXT)

    @property
    def data(self) -> dict[str, Any] | None:
        """The first data part, if any."""
        return next((p.data for p in self._parts() if p.data is not None), None)

    def _parts(self) -> list[Part]:
        return self.content.parts if self.content is not None else []
