"""The model layer: one interface, an offline default, an OpenAI-compatible provider, routing.

Typical use in a workflow node::

    router = build_router()                       # from MODEL_FAST / MODEL_DEEP, else offline
    model = router.bind(budget=UnitBudget.from_envelope(envelope),
                        scope=CacheScope.of(envelope))
    intake = await model.understand(text, context=IntakeContext(previous=last))
    model.records[-1]                             # route, units, calls, latency of that run
"""

from accord.agents.models.base import (
    CompletionRequest,
    CompletionResponse,
    DecisionFacts,
    Expecting,
    Intake,
    IntakeContext,
    Intent,
    Language,
    Message,
    Missing,
    Model,
    Outcome,
    OutputSchema,
    RequestedAmount,
    Role,
    Task,
    TokenUsage,
)
from accord.agents.models.budget import Costs, UnitBudget
from accord.agents.models.cache import AnswerCache, CacheScope, ScopeKind, Versions
from accord.agents.models.chat import ChatModel
from accord.agents.models.config import (
    ModelsConfig,
    TierConfig,
    build_model,
    build_router,
    load_config,
    parse_spec,
)
from accord.agents.models.metrics import Metrics, ModelRoute, RunRecord, nearest_rank
from accord.agents.models.offline import OfflineModel
from accord.agents.models.openai_compat import JsonMode, OpenAICompatModel
from accord.agents.models.routing import (
    Complexity,
    Routed,
    RoutedModel,
    Router,
    Tier,
    choose_route,
    estimate_complexity,
)

__all__ = [
    "AnswerCache",
    "CacheScope",
    "ChatModel",
    "CompletionRequest",
    "CompletionResponse",
    "Complexity",
    "Costs",
    "DecisionFacts",
    "Expecting",
    "Intake",
    "IntakeContext",
    "Intent",
    "JsonMode",
    "Language",
    "Message",
    "Metrics",
    "Missing",
    "Model",
    "ModelRoute",
    "ModelsConfig",
    "OfflineModel",
    "OpenAICompatModel",
    "Outcome",
    "OutputSchema",
    "RequestedAmount",
    "Role",
    "Routed",
    "RoutedModel",
    "Router",
    "RunRecord",
    "ScopeKind",
    "Task",
    "Tier",
    "TierConfig",
    "TokenUsage",
    "UnitBudget",
    "Versions",
    "build_model",
    "build_router",
    "choose_route",
    "estimate_complexity",
    "load_config",
    "nearest_rank",
    "parse_spec",
]
