"""Small builders shared by the server tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError
from accord.contracts.status import ContractState
from accord.protocol.a2a.wire import read_contract_state


def envelope(
    user: str = "C-01",
    *,
    app: str = "accord",
    units: int = 10,
    tool_calls: int = 5,
    deadline_s: float = 60.0,
) -> dict[str, Any]:
    return DelegationEnvelope(
        goal="test",
        budget=Budget(
            units=units,
            tool_calls=tool_calls,
            deadline=datetime.now(UTC) + timedelta(seconds=deadline_s),
        ),
        tenant=Tenant(app=app, user=user, session="s-1"),
    ).to_metadata()


def contract_state(task: dict[str, Any]) -> tuple[ContractState, AccordError | None]:
    return read_contract_state(task["status"])
