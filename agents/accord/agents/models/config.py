"""The refund assistant's models from the configuration (accord.runtime.models.config: the
tiers from ``MODEL_FAST``/``MODEL_DEEP`` and ``ACCORD_MODELS_CONFIG``): its offline rules for an
``offline`` tier, :class:`OpenAIChatModel` for an OpenAI-compatible one, and its router over
them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from accord.agents.models.base import Model
from accord.agents.models.chat import OpenAIChatModel
from accord.agents.models.offline import OfflineModel
from accord.agents.models.routing import Router
from accord.runtime.models.config import (
    ModelsConfig,
    Provider,
    TierConfig,
    answer_cache,
    load_config,
    openai_model,
)
from accord.runtime.models.metrics import Metrics
from accord.runtime.models.routing import Tier


def build_model(tier: TierConfig, env: Mapping[str, str] | None = None) -> Model:
    if tier.provider is Provider.OFFLINE:
        return OfflineModel()
    return openai_model(tier, env, OpenAIChatModel)


def build_router(
    config: ModelsConfig | None = None,
    *,
    env: Mapping[str, str] | None = None,
    metrics: Metrics | None = None,
    cache_clock: Callable[[], float] | None = None,
) -> Router:
    """The router the configuration describes (the default: offline on both tiers)."""
    config = config or load_config(env)
    fast = build_model(config.fast, env)
    deep = fast if config.deep == config.fast else build_model(config.deep, env)
    return Router(
        Tier(fast, config.fast.timeout_s),
        Tier(deep, config.deep.timeout_s),
        costs=config.costs,
        cache=answer_cache(config, cache_clock),
        metrics=metrics,
        reserve_fallback=config.reserve_fallback,
    )
