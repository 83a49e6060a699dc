"""The completion level every model speaks: messages in, text (and JSON for a schema'd output)
out, and the interface a provider implements.

    CompletionModel.complete(CompletionRequest) -> CompletionResponse

An application builds its own calls on ``complete`` (a structured reading of a message, an
explanation of a decision) and names them with ``CompletionRequest.task``, which routing,
caching and metrics carry as given. Every failure is an AccordError with a contract code.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import StrEnum
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field

CHAT: Final = "chat"  # the task of a plain chat completion


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Role
    content: str


class OutputSchema(BaseModel):
    """Ask for a JSON answer that validates against ``json_schema``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
    json_schema: dict[str, Any]


class CompletionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # What the completion is for, named by the application (an offline provider dispatches on
    # it, an LLM reads the messages); routing, the cache and the metrics record it.
    task: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_.-]{0,63}$")] = CHAT
    messages: list[Message] = Field(min_length=1)
    output: OutputSchema | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, ge=1, le=32_000)
    # The same input as the messages, as data: an offline provider reads it instead of prose.
    payload: dict[str, Any] | None = None


class TokenUsage(BaseModel):
    """Provider-reported tokens (informational; budgets count call units, not tokens)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_tokens: int | None = None
    output_tokens: int | None = None


class CompletionResponse(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    data: dict[str, Any] | None = None  # the parsed JSON when the request had an output schema
    model: str
    usage: TokenUsage = Field(default_factory=TokenUsage)


class CompletionModel(ABC):
    """One model at the completion level: a provider implements ``name`` and ``complete``."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Stable identity (provider and model); part of cache keys and metrics."""

    @abstractmethod
    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Answer one request, or raise AccordError with a contract code."""

    async def aclose(self) -> None:
        """Release connections; the default holds none."""
        return None
