"""Agent contracts: the skills an agent offers, what it may wait for, how it may fail.

One YAML file per agent. The A2A Agent Card is generated from it (accord.protocol).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from accord.contracts.errors import ErrorCode
from accord.contracts.loading import ContractFileError, load_model
from accord.contracts.skill_access import SkillAccess
from accord.contracts.skill_envelope import EnvelopeUse
from accord.contracts.spec_folders import contract_files
from accord.contracts.status import WaitingReason
from accord.contracts.tools import check_also_serves, check_json_schema
from accord.contracts.versions import SEMVER, major

AGENT_NAME = r"^[a-z][a-z0-9-]{0,62}$"


class ReplyKind(StrEnum):
    """How a skill answers (contract 1.2): A2A lets an agent answer a message with a task, or
    directly with a message of its own and no task (A2A 1.0 section 3.1)."""

    TASK = "task"  # a task the caller follows (statuses, artifacts); the default
    MESSAGE = "message"  # one agent Message, no task, for quick stateless answers


class Skill(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z][a-z0-9_.-]{0,62}$")
    name: str = Field(min_length=1, max_length=120)
    description: str = Field(min_length=1, max_length=2000)
    tags: list[str] = Field(default_factory=list, max_length=16)
    examples: list[str] = Field(default_factory=list, max_length=16)
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    # Absent in contract files before 1.2: they keep loading and answer with tasks.
    reply: ReplyKind = ReplyKind.TASK
    # Contract 1.3: who may ask for the skill (absent in older files: any verified principal,
    # as before) and which envelope constraints and refs it honours (absent: none).
    access: SkillAccess | None = None
    envelope: EnvelopeUse = Field(default_factory=EnvelopeUse)

    @field_validator("input_schema", "output_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        check_json_schema(value)
        return value


class AgentContract(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=AGENT_NAME)
    version: str = Field(pattern=SEMVER)
    description: str = Field(min_length=1, max_length=2000)
    default_port: int = Field(ge=1, le=65535)
    streaming: bool = True
    input_modes: list[str] = Field(default_factory=lambda: ["text/plain", "application/json"])
    output_modes: list[str] = Field(default_factory=lambda: ["text/plain", "application/json"])
    skills: list[Skill] = Field(min_length=1)
    waiting_reasons: list[WaitingReason] = Field(default_factory=list)
    errors: list[ErrorCode] = Field(default_factory=list)
    # Other major versions this agent honours side by side during a migration (docs/
    # contract-evolution.md): a client built against any of them may call it.
    also_serves: list[str] = Field(default_factory=list, max_length=4)

    @field_validator("also_serves")
    @classmethod
    def _served(cls, value: list[str]) -> list[str]:
        return check_also_serves(value)

    @property
    def served_versions(self) -> list[str]:
        """Every contract version this agent serves, its own first (the card states them)."""
        return [self.version, *self.also_serves]

    @model_validator(mode="after")
    def _unique(self) -> AgentContract:
        if major(self.version) in {major(v) for v in self.also_serves}:
            raise ValueError("also_serves names other major versions than version's")
        ids = [s.id for s in self.skills]
        if len(set(ids)) != len(ids):
            raise ValueError("skill ids must be unique")
        if len(set(self.errors)) != len(self.errors):
            raise ValueError("errors must not repeat a code")
        return self

    def skill(self, skill_id: str) -> Skill:
        for s in self.skills:
            if s.id == skill_id:
                return s
        raise KeyError(skill_id)


def load_agent_contract(path: Path | str) -> AgentContract:
    return load_model(AgentContract, Path(path))


def shipped_agent_contracts() -> dict[str, AgentContract]:
    """The agent contracts of every registered spec folder, by agent name."""
    out: dict[str, AgentContract] = {}
    for path in contract_files("agents"):
        contract = load_agent_contract(path)
        if contract.name in out:
            raise ContractFileError(path, "name", f"agent {contract.name!r} is defined twice")
        out[contract.name] = contract
    return out


def agent_contract(name: str) -> AgentContract:
    return shipped_agent_contracts()[name]
