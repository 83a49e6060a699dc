"""Contract versions: which served version a client can use, and what a contract may serve."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from accord.contracts.agents import AgentContract, agent_contract
from accord.contracts.errors import AccordError, ErrorCode, RetryClass
from accord.contracts.loading import ContractFileError
from accord.contracts.tools import ToolContract, tool_contract
from accord.contracts.versions import compatible_served, require_served, semver


def test_same_major_is_served_and_the_newest_is_chosen() -> None:
    assert require_served("policy-check", "1.0.0", ["1.1.0"]) == "1.1.0"
    assert require_served("policy-check", "1.0.0", ["2.0.0", "1.0.0"]) == "1.0.0"
    assert compatible_served("1.2.0", ["1.0.0", "1.10.1", "1.9.0"]) == "1.10.1"
    # An older minor of the same major is served too: the client's additions are optional.
    assert compatible_served("1.2.0", ["1.0.0"]) == "1.0.0"


def test_another_major_only_is_version_unsupported_naming_both() -> None:
    with pytest.raises(AccordError) as caught:
        require_served("policy-check", "1.0.0", ["2.0.0"])
    error = caught.value
    assert error.code is ErrorCode.VERSION_UNSUPPORTED
    assert error.retry_class is RetryClass.STOP
    assert "2.0.0" in error.message
    assert "1.0.0" in error.message
    assert error.details == {"peer": "policy-check", "expected": "1.0.0", "served": ["2.0.0"]}
    with pytest.raises(AccordError, match="no version"):
        require_served("risk-check", "1.0.0", [])
    # A malformed claim is no version served.
    assert compatible_served("1.0.0", ["one", "1.x", "1.0.3"]) == "1.0.3"


def test_semver_reads_prereleases_and_refuses_the_rest() -> None:
    assert semver("2.10.3-rc.1") == (2, 10, 3)
    with pytest.raises(ValueError, match="semantic"):
        semver("v1.0")


def _agent(**changes: Any) -> AgentContract:
    doc = copy.deepcopy(agent_contract("policy-check").model_dump(mode="json"))
    doc.update(changes)
    return AgentContract.model_validate(doc)


def test_contracts_serve_their_version_and_other_majors() -> None:
    assert agent_contract("policy-check").served_versions == ["1.2.0"]
    assert tool_contract("refunds.issue").served_versions == ["1.2.0"]
    migrating = _agent(version="2.0.0", also_serves=["1.1.0"])
    assert migrating.served_versions == ["2.0.0", "1.1.0"]
    for bad in (["2.1.0"], ["1.0.0", "1.1.0"], ["one"]):
        with pytest.raises(ValueError, match=r"also_serves|semantic"):
            _agent(version="2.0.0", also_serves=bad)
    doc = tool_contract("refunds.get").model_dump(mode="json")
    with pytest.raises(ValueError, match="also_serves"):
        ToolContract.model_validate({**doc, "also_serves": ["1.0.0"]})
    assert issubclass(ContractFileError, AccordError)
