"""Configuration: MODEL_FAST / MODEL_DEEP specs, keys, the YAML file; budgets from envelopes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from accord.agents.models import OfflineModel, OpenAIChatModel, build_router
from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.settings import AccordSettings
from accord.runtime.models import Costs, JsonMode, Provider, UnitBudget, load_config, parse_spec


def test_nothing_set_means_offline_everywhere() -> None:
    router = build_router(env={})
    assert isinstance(router.fast.model, OfflineModel)
    assert isinstance(router.deep.model, OfflineModel)
    assert router.costs == Costs(fast=1, deep=3)


@pytest.mark.parametrize(
    ("spec", "provider", "model", "base"),
    [
        ("offline", Provider.OFFLINE, None, None),
        ("openai:gpt-4o-mini", Provider.OPENAI, "gpt-4o-mini", None),
        ("openai:gpt-4o-mini@https://host/v1", Provider.OPENAI, "gpt-4o-mini", "https://host/v1"),
        (
            "openai:qwen2.5:7b@http://127.0.0.1:8000/v1",
            Provider.OPENAI,
            "qwen2.5:7b",
            "http://127.0.0.1:8000/v1",
        ),
        ("  offline  ", Provider.OFFLINE, None, None),
    ],
)
def test_parse_spec(spec: str, provider: Provider, model: str | None, base: str | None) -> None:
    tier = parse_spec(spec)
    assert (tier.provider, tier.model, tier.base_url) == (provider, model, base)


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "gpt-4o",
        "openai",
        "openai:",
        "anthropic:claude",
        "offline:x",
        "openai:m@ftp://x",
        "openai:m@",
    ],
)
def test_bad_specs_are_invalid_input_naming_the_variable(spec: str) -> None:
    with pytest.raises(AccordError) as err:
        load_config({"MODEL_DEEP": spec} if spec else {"MODEL_DEEP": "bad spec"})
    assert err.value.code is ErrorCode.INVALID_INPUT
    assert "MODEL_DEEP" in err.value.message


def test_env_builds_openai_tiers_with_the_key_from_the_environment() -> None:
    env = {
        "MODEL_FAST": "offline",
        "MODEL_DEEP": "openai:gpt-4o-mini@https://host/v1",
        "OPENAI_API_KEY": "sk-openai",
        "MODEL_API_KEY": "sk-model",
    }
    router = build_router(env=env)
    deep = router.deep.model
    assert isinstance(router.fast.model, OfflineModel)
    assert isinstance(deep, OpenAIChatModel)
    assert (deep.model, deep.base_url, deep.name) == (
        "gpt-4o-mini",
        "https://host/v1",
        "openai:gpt-4o-mini",
    )
    # MODEL_API_KEY wins over OPENAI_API_KEY
    assert deep.auth_headers() == {"Authorization": "Bearer sk-model"}
    assert "sk-" not in repr(deep)
    fallback_key = build_router(env={**env, "MODEL_API_KEY": ""}).deep.model
    assert isinstance(fallback_key, OpenAIChatModel)
    assert fallback_key.auth_headers() == {"Authorization": "Bearer sk-openai"}


def test_default_base_url() -> None:
    router = build_router(env={"MODEL_FAST": "openai:m"})
    assert isinstance(router.fast.model, OpenAIChatModel)
    assert router.fast.model.base_url == "https://api.openai.com/v1"
    other = build_router(env={"MODEL_FAST": "openai:m", "OPENAI_BASE_URL": "http://x/v1/"})
    assert isinstance(other.fast.model, OpenAIChatModel)
    assert other.fast.model.base_url == "http://x/v1"


def test_yaml_file_with_env_override(tmp_path: Path) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(
        """
fast: offline
deep:
  provider: openai
  model: big-model
  base_url: http://127.0.0.1:9999/v1
  api_key_env: MY_KEY
  timeout_s: 12
  json_mode: json_object
costs: {fast: 2, deep: 5}
cache: {ttl_s: 30, capacity: 10}
reserve_fallback: false
""",
        encoding="utf-8",
    )
    env = {"MY_KEY": "k-1"}
    settings = AccordSettings(models_config=path)
    config = load_config(env, settings)
    assert config.costs == Costs(fast=2, deep=5)
    assert config.reserve_fallback is False
    router = build_router(config, env=env)
    deep = router.deep.model
    assert isinstance(deep, OpenAIChatModel)
    assert (deep.model, deep.timeout_s, deep.json_mode, deep.auth_headers()) == (
        "big-model",
        12,
        JsonMode.OBJECT,
        {"Authorization": "Bearer k-1"},
    )
    assert (router.cache.ttl_s, router.cache.capacity, router.deep.timeout_s) == (30, 10, 12)
    overridden = load_config({**env, "MODEL_DEEP": "offline"}, settings)
    assert overridden.deep.provider is Provider.OFFLINE
    assert overridden.costs.deep == 5


@pytest.mark.parametrize(
    "content",
    [
        "fast: [1, 2",
        "costs: {fast: -1}",
        "deep: {provider: nope}",
        "surprise: 1",
        "fast: 'openai:'",
    ],
)
def test_bad_files_are_invalid_input(tmp_path: Path, content: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(AccordError) as err:
        load_config({}, AccordSettings(models_config=path))
    assert err.value.code is ErrorCode.INVALID_INPUT


def test_missing_file_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(AccordError) as err:
        load_config({}, AccordSettings(models_config=tmp_path / "nope.yaml"))
    assert err.value.code is ErrorCode.INVALID_INPUT


def test_budget_from_a_delegation_envelope() -> None:
    deadline = datetime.now(UTC) + timedelta(minutes=5)
    env = DelegationEnvelope(
        goal="refund O-1001",
        budget=Budget(units=4, tool_calls=3, deadline=deadline),
        tenant=Tenant(app="shop", user="alice", session="s1"),
    )
    budget = UnitBudget.from_envelope(env)
    assert (budget.units, budget.remaining, budget.deadline) == (4, 4, deadline)
    resumed = UnitBudget.from_envelope(env.budget, spent=3)
    assert resumed.remaining == 1
    resumed.charge(1, route="fast")
    with pytest.raises(AccordError) as err:
        resumed.charge(1, route="fast")
    assert err.value.code is ErrorCode.BUDGET_EXHAUSTED
    assert resumed.spent == 4
    assert resumed.snapshot() == {"units": 4, "spent": 4, "remaining": 0}
