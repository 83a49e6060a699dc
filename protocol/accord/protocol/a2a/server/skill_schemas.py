"""The input and output JSON Schemas of an agent's skills, compiled once per executor.

Each turn is checked as tool calls are (:mod:`accord.protocol.schema_check`): jsonschema-rs
decides, the ``jsonschema`` validator only finds the field to name when a value fails.
"""

from __future__ import annotations

from typing import Any

from jsonschema.exceptions import ValidationError

from accord.contracts.agents import AgentContract, Skill
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.validation import schema_path
from accord.protocol.schema_check import CompiledSchema


class SkillSchemas:
    def __init__(self, contract: AgentContract) -> None:
        self._input = {s.id: CompiledSchema(s.input_schema) for s in contract.skills}
        self._output = {s.id: CompiledSchema(s.output_schema) for s in contract.skills}

    def check_input(self, skill: Skill, value: Any) -> None:
        """INVALID_INPUT naming the first field that breaks the skill's input schema."""
        _check(self._input[skill.id], value, ErrorCode.INVALID_INPUT, "input")

    def check_output(self, skill: Skill, value: Any) -> None:
        """CONTRACT_VIOLATION naming the first field that breaks the skill's output schema."""
        _check(self._output[skill.id], value, ErrorCode.CONTRACT_VIOLATION, "output")


def _check(schema: CompiledSchema, value: Any, code: ErrorCode, what: str) -> None:
    if schema.is_valid(value):
        return
    error: ValidationError | None = next(schema.iter_errors(value), None)
    if error is None:
        return
    path = schema_path(error)
    raise AccordError(
        code,
        f"{what} at {path!r} breaks the skill schema: {error.validator} {error.validator_value!r}"
        if error.validator not in ("additionalProperties", "required")
        else f"{what} at {path!r}: {error.message}",
        {"field": path, "rule": str(error.validator)},
    )
