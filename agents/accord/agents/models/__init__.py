"""The refund assistant's model layer: its two business calls (understand a customer message,
explain a decision), the offline rules that answer them, the prompts an LLM answers them with,
and the router and configuration that serve them.

The completion level, the router (cache, budget, route, fallback), the tiers' configuration,
budgets, the answer cache, run metrics, text cleaning and the OpenAI-compatible provider are the
framework's (``accord.runtime.models``). Typical use in a workflow node::

    router = build_router()                       # from MODEL_FAST / MODEL_DEEP, else offline
    model = router.bind(budget=UnitBudget.from_envelope(envelope),
                        scope=CacheScope.of(envelope))
    intake = await model.understand(text, context=IntakeContext(previous=last))
    model.records[-1]                             # route, units, calls, latency of that run
"""

from accord.agents.models.base import (
    DecisionFacts,
    Expecting,
    Intake,
    IntakeContext,
    Intent,
    Language,
    Missing,
    Model,
    Outcome,
    RequestedAmount,
    Task,
)
from accord.agents.models.chat import ChatModel, OpenAIChatModel
from accord.agents.models.config import build_model, build_router
from accord.agents.models.offline import OfflineModel
from accord.agents.models.routing import RoutedModel, Router, estimate_complexity

__all__ = [
    "ChatModel",
    "DecisionFacts",
    "Expecting",
    "Intake",
    "IntakeContext",
    "Intent",
    "Language",
    "Missing",
    "Model",
    "OfflineModel",
    "OpenAIChatModel",
    "Outcome",
    "RequestedAmount",
    "RoutedModel",
    "Router",
    "Task",
    "build_model",
    "build_router",
    "estimate_complexity",
]
