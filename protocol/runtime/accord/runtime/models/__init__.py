"""accord.runtime.models: the framework's model layer, under any application's own calls.

``completion``: the completion level every model speaks (``CompletionModel.complete``: messages
in, text and JSON out) and its request and response; ``openai_compat``: a provider for any
OpenAI-compatible endpoint; ``budget``: call budgets in units, from the delegation envelope;
``cache``: answers reused only within one tenant's scope and versions; ``metrics``: one record
per run and honest aggregates; ``routing``: one run per call (cache, budget, route, fallback);
``text``: the cleaning every rule, key and estimate reads; ``config``: the tiers from
``MODEL_FAST``/``MODEL_DEEP`` and ``ACCORD_MODELS_CONFIG``. An application builds its business
calls on ``complete`` and routes them through :meth:`CompletionRouter.run`.
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
from accord.runtime.models.config import (
    CacheConfig,
    ModelsConfig,
    Provider,
    TierConfig,
    answer_cache,
    load_config,
    openai_model,
    parse_spec,
)
from accord.runtime.models.metrics import Metrics, ModelRoute, RunRecord, nearest_rank
from accord.runtime.models.openai_compat import JsonMode, OpenAICompatModel
from accord.runtime.models.routing import (
    CompletionRouter,
    Complexity,
    Routed,
    RoutedCompletionModel,
    Tier,
    choose_route,
    text_complexity,
)
from accord.runtime.models.text import MAX_TEXT_CHARS, clean_text, normalize_question

__all__ = [
    "MAX_TEXT_CHARS",
    "AnswerCache",
    "CacheConfig",
    "CacheScope",
    "CompletionModel",
    "CompletionRequest",
    "CompletionResponse",
    "CompletionRouter",
    "Complexity",
    "Costs",
    "JsonMode",
    "Message",
    "Metrics",
    "ModelRoute",
    "ModelsConfig",
    "OpenAICompatModel",
    "OutputSchema",
    "Provider",
    "Role",
    "Routed",
    "RoutedCompletionModel",
    "RunRecord",
    "ScopeKind",
    "Tier",
    "TierConfig",
    "TokenUsage",
    "UnitBudget",
    "Versions",
    "answer_cache",
    "cache_key",
    "choose_route",
    "clean_text",
    "load_config",
    "nearest_rank",
    "normalize_question",
    "openai_model",
    "parse_spec",
    "text_complexity",
]
