"""A scripted model for routing tests: the offline rules, plus failures on chosen texts."""

from __future__ import annotations

import asyncio

from accord.agents.models import DecisionFacts, Intake, IntakeContext, Model
from accord.agents.models.explanations import explain_facts
from accord.agents.models.intake import read_intake
from accord.contracts.errors import AccordError, ErrorCode
from accord.runtime.models import CompletionRequest, CompletionResponse


class Scripted(Model):
    def __init__(
        self,
        name: str,
        *,
        fail: dict[str, ErrorCode] | None = None,
        hang: set[str] | None = None,
        crash: set[str] | None = None,
    ) -> None:
        self._name = name
        self.fail = fail or {}
        self.hang = hang or set()
        self.crash = crash or set()
        self.calls: list[str] = []

    @property
    def name(self) -> str:
        return f"scripted:{self._name}"

    async def understand(self, text: str, *, context: IntakeContext | None = None) -> Intake:
        self.calls.append(text)
        if text in self.hang:
            await asyncio.sleep(30)
        if text in self.crash:
            raise RuntimeError("secret stack detail")
        if text in self.fail:
            raise AccordError(self.fail[text], "scripted failure")
        return read_intake(text, context)

    async def explain(self, facts: DecisionFacts) -> str:
        self.calls.append(facts.outcome.value)
        return explain_facts(facts)

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        raise AccordError(ErrorCode.UNSUPPORTED_OPERATION)
