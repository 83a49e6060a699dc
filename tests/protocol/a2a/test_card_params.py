"""Card params are lowerCamelCase (A2A's JSON) and carry contract 1.0's snake_case names too,
while the contract's major is 1; readers take either (issue 17)."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from accord.contracts.agents import agent_contract
from accord.contracts.card_params import card_param
from accord.contracts.keys import (
    CARD_CONTRACT_VERSION_PARAM,
    CARD_CONTRACT_VERSIONS_PARAM,
    CARD_WAITING_REASONS_PARAM,
    CONTRACT_EXTENSION_URI,
    DELEGATION_EXTENSION_URI,
    DEPRECATED_CARD_PARAMS,
)
from accord.protocol.a2a.client.card import ResolvedCard
from accord.protocol.a2a.server.card import build_agent_card


def _extensions(contract_name: str) -> dict[str, dict[str, Any]]:
    card = json_format.MessageToDict(
        build_agent_card(agent_contract(contract_name), "http://127.0.0.1:9")
    )
    return {e["uri"]: e.get("params", {}) for e in card["capabilities"]["extensions"]}


def test_the_card_writes_each_param_camelcase_and_by_its_old_name() -> None:
    params = _extensions("policy-check")
    contract, delegation = params[CONTRACT_EXTENSION_URI], params[DELEGATION_EXTENSION_URI]
    assert contract[CARD_CONTRACT_VERSION_PARAM] == agent_contract("policy-check").version
    assert contract[CARD_WAITING_REASONS_PARAM] == ["input"]
    for name, old in DEPRECATED_CARD_PARAMS.items():
        written = contract if name in contract else delegation
        assert name in written, name
        assert written[old] == written[name], (name, old)
    assert all("_" not in key for key in contract if key not in DEPRECATED_CARD_PARAMS.values())


def test_readers_take_the_new_name_else_the_old_one() -> None:
    assert (
        card_param(
            {"agentContractVersion": "2.0.0", "agent_contract_version": "1.0.0"},
            CARD_CONTRACT_VERSION_PARAM,
        )
        == "2.0.0"
    )
    assert card_param({"agent_contract_version": "1.0.0"}, CARD_CONTRACT_VERSION_PARAM) == "1.0.0"
    assert card_param({}, CARD_CONTRACT_VERSION_PARAM) is None


def test_a_contract_1_0_card_is_read_by_the_client() -> None:
    """A card an Accord 0.1 agent serves (snake_case only) still names its versions."""
    card = build_agent_card(agent_contract("policy-check"), "http://127.0.0.1:9")
    for extension in card.capabilities.extensions:
        if extension.uri == CONTRACT_EXTENSION_URI:
            for name in DEPRECATED_CARD_PARAMS:
                if name in extension.params.fields:
                    del extension.params.fields[name]
            del extension.params.fields[DEPRECATED_CARD_PARAMS[CARD_CONTRACT_VERSIONS_PARAM]]
    resolved = ResolvedCard(url="http://127.0.0.1:9", raw={}, card=card)
    assert resolved.contract_versions == [agent_contract("policy-check").version]
