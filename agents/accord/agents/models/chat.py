"""Base class for LLM providers: the business calls built on ``complete`` with checked output,
and the OpenAI-compatible provider (the framework's, accord.runtime.models) with them."""

from __future__ import annotations

from accord.agents.models import prompts
from accord.agents.models.base import DecisionFacts, Intake, IntakeContext, Model
from accord.runtime.models.openai_compat import OpenAICompatModel


class ChatModel(Model):
    """Implement ``name`` and ``complete``; understanding and explaining come from prompts."""

    async def understand(self, text: str, *, context: IntakeContext | None = None) -> Intake:
        request = prompts.intake_request(text, context)
        return prompts.read_intake(await self.complete(request), text, context)

    async def explain(self, facts: DecisionFacts) -> str:
        return prompts.read_explanation(await self.complete(prompts.explain_request(facts)))


class OpenAIChatModel(ChatModel, OpenAICompatModel):
    """A model behind an OpenAI-compatible endpoint (``complete`` from the framework's
    provider) that also understands and explains."""
