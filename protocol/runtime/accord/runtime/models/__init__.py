"""accord.runtime.models: the framework's model layer, under any application's own calls.

``completion``: the completion level every model speaks (``CompletionModel.complete``: messages
in, text and JSON out) and its request and response; ``openai_compat``: a provider for any
OpenAI-compatible endpoint; ``budget``: call budgets in units, from the delegation envelope;
``cache``: answers reused only within one tenant's scope and versions; ``metrics``: one record
per run and honest aggregates. An application builds its business calls on ``complete``.
"""

from accord.runtime.models.budget import Costs, UnitBudget
from accord.runtime.models.cache import AnswerCache, CacheScope, ScopeKind, Versions, cache_key
from accord.runtime.models.completion import (
    CompletionModel,
    CompletionRequest,
    CompletionResponse,
    Message,
    OutputSchema,
    Role,
    TokenUsage,
)
from accord.runtime.models.metrics import Metrics, ModelRoute, RunRecord, nearest_rank
from accord.runtime.models.openai_compat import JsonMode, OpenAICompatModel

__all__ = [
    "AnswerCache",
    "CacheScope",
    "CompletionModel",
    "CompletionRequest",
    "CompletionResponse",
    "Costs",
    "JsonMode",
    "Message",
    "Metrics",
    "ModelRoute",
    "OpenAICompatModel",
    "OutputSchema",
    "Role",
    "RunRecord",
    "ScopeKind",
    "TokenUsage",
    "UnitBudget",
    "Versions",
    "cache_key",
    "nearest_rank",
]
