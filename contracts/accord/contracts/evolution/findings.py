"""A finding: one change of one contract, judged by one rule of the table (rules.py)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from accord.contracts.evolution.rules import Compatibility, rule


class Finding(BaseModel):
    model_config = ConfigDict(frozen=True)

    contract: str  # "agent:triage", "tool:tickets.close", "registry"
    rule: str
    path: str  # a JSON pointer into the contract document, skills and values named by id
    old: Any = None
    new: Any = None

    @property
    def compatibility(self) -> Compatibility:
        return rule(self.rule).compatibility

    @property
    def breaking(self) -> bool:
        return self.compatibility is Compatibility.BREAKING

    def to_dict(self) -> dict[str, Any]:
        return {
            "contract": self.contract,
            "rule": self.rule,
            "compatibility": self.compatibility.value,
            "path": self.path,
            "old": self.old,
            "new": self.new,
            "description": rule(self.rule).description,
        }


def pointer(*tokens: object) -> str:
    """A JSON pointer (RFC 6901 escaping) from path tokens."""
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)
