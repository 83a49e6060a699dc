"""The orchestrator's settings, read from the environment once at start-up."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.settings import data_dir

SERVICE_NAME: Final = "orchestrator"
GRAPH_NAME: Final = "refund"
GRAPH_VERSION: Final = "1"
DEFAULT_APPROVAL_TIMEOUT_S: Final = 86_400.0
DEFAULT_LEASE_TTL_S: Final = 15.0


@dataclass(frozen=True)
class RefundSettings:
    approval_timeout_s: float = DEFAULT_APPROVAL_TIMEOUT_S
    lease_ttl_s: float = DEFAULT_LEASE_TTL_S
    workflow_log_url: str = ""
    policy_url: str = ""
    risk_url: str = ""

    @classmethod
    def from_env(cls, database_url: str | None, policy_url: str, risk_url: str) -> RefundSettings:
        """``ACCORD_APPROVAL_TIMEOUT_S``, ``ACCORD_WORKFLOW_LEASE_TTL_S``; the workflow log goes
        to the service's PostgreSQL database when there is one, else to its own SQLite file
        (separate from the task store's, so the two writers never wait for each other)."""
        log_url = database_url or f"sqlite:///{data_dir() / 'orchestrator-workflows.db'}"
        return cls(
            approval_timeout_s=_positive("ACCORD_APPROVAL_TIMEOUT_S", DEFAULT_APPROVAL_TIMEOUT_S),
            lease_ttl_s=_positive("ACCORD_WORKFLOW_LEASE_TTL_S", DEFAULT_LEASE_TTL_S),
            workflow_log_url=log_url,
            policy_url=policy_url,
            risk_url=risk_url,
        )


def _positive(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise AccordError(
            ErrorCode.INVALID_INPUT, f"{name} must be a positive number of seconds", {"field": name}
        )
    return value
