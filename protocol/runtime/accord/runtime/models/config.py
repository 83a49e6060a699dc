"""Which model serves each tier, from the environment or a YAML file.

    MODEL_FAST / MODEL_DEEP    "offline" | "openai:<model>" | "openai:<model>@<base URL>"
    MODEL_API_KEY / OPENAI_API_KEY   the key for OpenAI-compatible tiers (first one set wins)
    OPENAI_BASE_URL            base URL when a spec names none (default https://api.openai.com/v1)
    ACCORD_MODELS_CONFIG       path of a YAML file (tiers, costs, cache); MODEL_FAST/MODEL_DEEP
                               override its tiers (accord.protocol.settings reads it)

Nothing set: both tiers are offline, the application's own model without a network (its
``build_router``), so everything runs without credentials. Keys are
read from the environment only (a file names the variable, ``api_key_env``), never stored here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, Final, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.validation import first_broken
from accord.protocol.settings import AccordSettings, current
from accord.runtime.models.budget import Costs
from accord.runtime.models.cache import DEFAULT_CAPACITY, DEFAULT_TTL_S, AnswerCache
from accord.runtime.models.openai_compat import JsonMode, OpenAICompatModel

M = TypeVar("M", bound=OpenAICompatModel)

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
KEY_VARIABLES: Final = ("MODEL_API_KEY", "OPENAI_API_KEY")
_SPEC: Final = re.compile(
    r"^(?P<provider>[a-z][a-z0-9_-]*)(?::(?P<model>[^@\s]+))?(?:@(?P<base>https?://\S+))?$"
)


class Provider(StrEnum):
    OFFLINE = "offline"
    OPENAI = "openai"  # any OpenAI-compatible /chat/completions endpoint


class TierConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Provider = Provider.OFFLINE
    model: str | None = Field(default=None, min_length=1, max_length=200)
    base_url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    timeout_s: float = Field(default=30.0, gt=0, le=600)
    json_mode: JsonMode = JsonMode.SCHEMA

    @field_validator("model")
    @classmethod
    def _no_blank(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None


class CacheConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    ttl_s: float = Field(default=DEFAULT_TTL_S, ge=0)
    capacity: int = Field(default=DEFAULT_CAPACITY, ge=0, le=1_000_000)


class ModelsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    fast: TierConfig = Field(default_factory=TierConfig)
    deep: TierConfig = Field(default_factory=TierConfig)
    costs: Costs = Field(default_factory=Costs)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    reserve_fallback: bool = True

    @field_validator("fast", "deep", mode="before")
    @classmethod
    def _spec_string(cls, value: object) -> object:
        return (
            parse_spec(value, source="config file").model_dump()
            if isinstance(value, str)
            else value
        )


def parse_spec(spec: str, *, source: str = "MODEL_FAST") -> TierConfig:
    """``offline``, ``openai:<model>`` or ``openai:<model>@<base URL>``."""
    m = _SPEC.match(spec.strip())
    if m is None or m["provider"] not in {p.value for p in Provider}:
        raise _bad(source, "expected 'offline' or 'openai:<model>[@<base URL>]'")
    provider = Provider(m["provider"])
    if provider is Provider.OFFLINE:
        if m["model"] or m["base"]:
            raise _bad(source, "'offline' takes no model or URL")
        return TierConfig()
    if not m["model"]:
        raise _bad(source, "an openai tier needs a model: 'openai:<model>[@<base URL>]'")
    return TierConfig(provider=provider, model=m["model"], base_url=m["base"])


def load_config(
    env: Mapping[str, str] | None = None, settings: AccordSettings | None = None
) -> ModelsConfig:
    """``settings.models_config`` (the file), then ``MODEL_FAST``/``MODEL_DEEP`` from ``env``."""
    # Not ACCORD_* names (documented in docs/models.md); the ACCORD_* one is read via settings.
    env = os.environ if env is None else env
    path = (current() if settings is None else settings).models_config
    config = ModelsConfig() if path is None else _read_file(path)
    updates = {
        tier: parse_spec(env[var], source=var)
        for tier, var in (("fast", "MODEL_FAST"), ("deep", "MODEL_DEEP"))
        if env.get(var, "").strip()
    }
    return config.model_copy(update=updates) if updates else config


def openai_model(
    tier: TierConfig,
    env: Mapping[str, str] | None,
    factory: Callable[..., M],
) -> M:
    """The OpenAI-compatible model ``tier`` names, made by ``factory`` (an application's
    subclass of :class:`OpenAICompatModel`, with its own calls on ``complete``)."""
    # The provider's key and base URL under their usual names (or the name a file gives):
    # secrets read where used, never kept in the settings.
    env = os.environ if env is None else env
    names = (tier.api_key_env,) if tier.api_key_env else KEY_VARIABLES
    api_key = next((env[n] for n in names if env.get(n)), None)
    return factory(
        tier.model or "",
        tier.base_url or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
        api_key=api_key,
        timeout_s=tier.timeout_s,
        json_mode=tier.json_mode,
        provider=tier.provider.value,
    )


def answer_cache(config: ModelsConfig, clock: Callable[[], float] | None = None) -> AnswerCache:
    """The answer cache ``config`` describes (``clock``: the cache's, for tests)."""
    cache_args: dict[str, Any] = {"ttl_s": config.cache.ttl_s, "capacity": config.cache.capacity}
    if clock is not None:
        cache_args["clock"] = clock
    return AnswerCache(**cache_args)


def _read_file(path: Path) -> ModelsConfig:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError:
        raise _bad("ACCORD_MODELS_CONFIG", f"cannot read {path}") from None
    except yaml.YAMLError:
        raise _bad("ACCORD_MODELS_CONFIG", f"{path} is not valid YAML") from None
    try:
        return ModelsConfig.model_validate(raw or {})
    except ValidationError as exc:
        broken = first_broken(exc, root="(top)")
        raise _bad("ACCORD_MODELS_CONFIG", f"{path}: {broken.field}: {broken.message}") from None


def _bad(source: str, message: str) -> AccordError:
    return AccordError(ErrorCode.INVALID_INPUT, f"{source}: {message}", {"field": source})
