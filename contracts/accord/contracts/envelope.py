"""The delegation envelope: what a caller hands an agent along with the work.

It travels in A2A message metadata under :data:`DELEGATION_EXTENSION_URI`. The tenant it names
is a claim for the receiving service to check against the verified credential: the principal
always comes from the credential, never from this envelope or from message text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Final

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import DELEGATION_EXTENSION_URI
from accord.contracts.validation import first_broken

MAX_ENVELOPE_BYTES: Final = 16 * 1024
TRACEPARENT_PATTERN: Final = r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$"
_ID = r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$"

Identifier = Annotated[str, Field(pattern=_ID, max_length=128)]


class Tenant(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    app: Identifier
    user: Identifier
    session: Identifier


class Budget(BaseModel):
    """What the callee may spend. Units are abstract call units, not money or tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    units: int = Field(ge=0, le=1_000_000)
    tool_calls: int = Field(ge=0, le=10_000)
    deadline: AwareDatetime

    def expired(self, now: datetime | None = None) -> bool:
        return (now or datetime.now(UTC)) >= self.deadline


class DelegationEnvelope(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    goal: str = Field(min_length=1, max_length=2000)
    constraints: dict[str, str | int | bool] = Field(default_factory=dict, max_length=32)
    budget: Budget
    context_refs: list[Annotated[str, Field(max_length=512)]] = Field(
        default_factory=list, max_length=32
    )
    tenant: Tenant
    parent_task: Identifier | None = None
    traceparent: Annotated[str, Field(pattern=TRACEPARENT_PATTERN)] | None = None

    def to_metadata(self) -> dict[str, Any]:
        """Message metadata entry: {extension URI: envelope JSON}."""
        return {DELEGATION_EXTENSION_URI: self.model_dump(mode="json", exclude_none=True)}


def parse_envelope(
    metadata: Mapping[str, Any] | None, *, required: bool = True
) -> DelegationEnvelope | None:
    """Read and validate the envelope from A2A message metadata.

    Raises INVALID_INPUT (missing when required, malformed, oversized); the message names
    the field and the rule, never Python internals.
    """
    raw = (metadata or {}).get(DELEGATION_EXTENSION_URI)
    if raw is None:
        if required:
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                f"delegation envelope missing from message metadata[{DELEGATION_EXTENSION_URI!r}]",
                {"field": "metadata", "requirement": "ENV-001"},
            )
        return None
    try:
        size = len(json.dumps(raw, ensure_ascii=False).encode())
    except (TypeError, ValueError) as exc:
        raise AccordError(
            ErrorCode.INVALID_INPUT, "delegation envelope is not JSON", {"requirement": "ENV-002"}
        ) from exc
    if size > MAX_ENVELOPE_BYTES:
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"delegation envelope is {size} bytes; the limit is {MAX_ENVELOPE_BYTES}",
            {"field": "envelope", "limit": MAX_ENVELOPE_BYTES, "requirement": "ENV-003"},
        )
    try:
        return DelegationEnvelope.model_validate(raw)
    except ValidationError as exc:
        broken = first_broken(exc, root="envelope")
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"delegation envelope field {broken.field!r}: {broken.message}",
            {"field": broken.field, "rule": broken.rule, "requirement": "ENV-002"},
        ) from None
