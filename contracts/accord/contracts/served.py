"""The agent contracts one agent serves side by side: one per major version, the newest first.

An agent migrating from contract 1.x to 2.0 serves both for a while. Its card states every
version (``agent_contract_versions``); a caller names the one it speaks in each first turn's
message metadata (``dev.accord/contractVersion``) and the agent reads the input, and answers,
in that version. Which versions a process serves is configuration, not code:
``ACCORD_CONTRACTS_DIR`` is a folder of agent contract files; every file of the agent's
name in it is served, one per major (docs/contract-evolution.md). Without it, the shipped
contract alone.

The files agree with each other: the newest one's ``also_serves`` lists exactly the versions
of the others, so the card, the diff (``served.*`` rules) and what is answered are one truth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accord.contracts.agents import AgentContract, agent_contract, load_agent_contract
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import CONTRACT_VERSION_META_KEY
from accord.contracts.loading import read_yaml
from accord.contracts.versions import major, require_served, semver


@dataclass(frozen=True)
class ServedContracts:
    primary: AgentContract
    """The newest version: its card is the agent's card; a request naming no version gets it."""
    by_major: Mapping[int, AgentContract]

    @classmethod
    def single(cls, contract: AgentContract) -> ServedContracts:
        return cls(contract, {major(contract.version): contract})

    @classmethod
    def of(cls, contracts: Sequence[AgentContract]) -> ServedContracts:
        """The set of ``contracts`` (one agent, one per major); ValueError when they disagree."""
        if not contracts:
            raise ValueError("no contract to serve")
        ordered = sorted(contracts, key=lambda c: semver(c.version), reverse=True)
        primary = ordered[0]
        if {c.name for c in ordered} != {primary.name}:
            raise ValueError("contracts served side by side must be of one agent")
        by_major = {major(c.version): c for c in ordered}
        if len(by_major) != len(ordered):
            raise ValueError(f"{primary.name}: one contract per major version")
        others = sorted(c.version for c in ordered[1:])
        if sorted(primary.also_serves) != others:
            raise ValueError(
                f"{primary.name} {primary.version}: also_serves {primary.also_serves} must list "
                f"the versions of the other files served ({others})"
            )
        return cls(primary, by_major)

    @property
    def versions(self) -> list[str]:
        return self.primary.served_versions

    def speaking(self, named: str | None) -> AgentContract:
        """The contract of the version a caller names (none: the primary), or
        VERSION_UNSUPPORTED naming both, by the clients' rule (accord.contracts.versions)."""
        if named is None:
            return self.primary
        try:
            semver(named)
        except ValueError:
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                f"the contract version asked for is no semantic version: {named[:40]!r}",
                {"field": f"metadata.{CONTRACT_VERSION_META_KEY}"},
            ) from None
        chosen = require_served(self.primary.name, named, self.versions)
        return self.by_major[major(chosen)]


def served_agent_contracts(name: str, folder: Path | None) -> ServedContracts:
    """The contracts agent ``name`` serves: the files of that name in ``folder``, else the
    shipped one. A folder without a file of the agent's name serves the shipped one too."""
    if folder is None:
        return ServedContracts.single(agent_contract(name))
    found = []
    for path in sorted(folder.glob("*.yaml")):
        doc = read_yaml(path)
        # A shared folder may hold other agents' and tools' contracts: only ours are read (and
        # a broken one of ours is an error, never skipped).
        if isinstance(doc, dict) and doc.get("name") == name and "skills" in doc:
            found.append(load_agent_contract(path))
    if not found:
        return ServedContracts.single(agent_contract(name))
    return ServedContracts.of(found)


def answer_in(schema: Mapping[str, Any], data: Any) -> Any:
    """``data`` as an answer of ``schema``'s version: fields a closed object of that version
    does not know are left out (a 1.0 caller never sees 2.0's additions), recursively.

    What remains is then checked against the schema; an answer that needs more than leaving
    out (a renamed field) does not fit, and is the server's CONTRACT_VIOLATION.
    """
    if not isinstance(data, dict) or schema.get("type") not in ("object", None):
        return data
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return data
    closed = schema.get("additionalProperties") is False
    out: dict[str, Any] = {}
    for key, value in data.items():
        sub = properties.get(key)
        if sub is None:
            if not closed:
                out[key] = value
            continue
        out[key] = answer_in(sub, value) if isinstance(sub, Mapping) else value
    return out
