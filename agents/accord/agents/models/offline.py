"""The default model: deterministic rules, no network, no credentials, Chinese and English."""

from __future__ import annotations

import json
from typing import Final

from pydantic import ValidationError

from accord.agents.models.base import DecisionFacts, Intake, IntakeContext, Model, Task
from accord.agents.models.explanations import explain_facts
from accord.agents.models.intake import read_intake
from accord.contracts.errors import AccordError, ErrorCode
from accord.runtime.models.completion import CompletionRequest, CompletionResponse

OFFLINE_NAME: Final = "offline:rules-v1"


class OfflineModel(Model):
    """Rules and patterns (intake.py) and templates (explanations.py).

    ``complete`` serves the two structured tasks from the request's ``payload``, so code written
    against the completion level also runs offline; free chat is not something rules can do.
    """

    @property
    def name(self) -> str:
        return OFFLINE_NAME

    async def understand(self, text: str, *, context: IntakeContext | None = None) -> Intake:
        return read_intake(text, context)

    async def explain(self, facts: DecisionFacts) -> str:
        return explain_facts(facts)

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        payload = request.payload or {}
        try:
            if request.task == Task.INTAKE:
                context = IntakeContext.model_validate(payload.get("context") or {})
                text = payload.get("text")
                if not isinstance(text, str):
                    raise _bad("an intake request needs payload.text")
                data = read_intake(text, context).model_dump(mode="json")
            elif request.task == Task.EXPLAIN:
                data = {"text": explain_facts(DecisionFacts.model_validate(payload))}
            else:
                raise AccordError(
                    ErrorCode.UNSUPPORTED_OPERATION,
                    "the offline model answers only intake and explain requests",
                    {"task": request.task},
                )
        except ValidationError:
            raise _bad(f"the {request.task} payload does not match its schema") from None
        return CompletionResponse(
            text=json.dumps(data, ensure_ascii=False), data=data, model=OFFLINE_NAME
        )


def _bad(message: str) -> AccordError:
    return AccordError(ErrorCode.INVALID_INPUT, message, {"field": "payload"})
