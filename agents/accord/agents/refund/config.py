"""The orchestrator's settings, taken from the process settings once at start-up."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from accord.protocol.settings import AccordSettings, current, data_dir

SERVICE_NAME: Final = "orchestrator"
GRAPH_NAME: Final = "refund"
GRAPH_VERSION: Final = "3"  # refunds keyed by request: refund:<order_id>:<workflow_id>
# Graphs 1 and 2 are kept for workflows in flight on them (compat.REFUND_GRAPH_V1_V2).
GRAPH_VERSION_2: Final = "2"  # intake routes: "answer" ends what is not a refund
GRAPH_VERSION_1: Final = "1"  # intake fans out to the checks
_DEFAULTS: Final = AccordSettings.model_fields


@dataclass(frozen=True)
class RefundSettings:
    approval_timeout_s: float = _DEFAULTS["approval_timeout_s"].default
    lease_ttl_s: float = _DEFAULTS["workflow_lease_ttl_s"].default
    workflow_log_url: str = ""
    policy_url: str = ""
    risk_url: str = ""

    @classmethod
    def from_env(cls, database_url: str | None, policy_url: str, risk_url: str) -> RefundSettings:
        """``ACCORD_APPROVAL_TIMEOUT_S``, ``ACCORD_WORKFLOW_LEASE_TTL_S``; the workflow log goes
        to the service's PostgreSQL database when there is one, else to its own SQLite file
        (separate from the task store's, so the two writers never wait for each other)."""
        settings = current()
        log_url = database_url or f"sqlite:///{data_dir() / 'orchestrator-workflows.db'}"
        return cls(
            approval_timeout_s=settings.approval_timeout_s,
            lease_ttl_s=settings.workflow_lease_ttl_s,
            workflow_log_url=log_url,
            policy_url=policy_url,
            risk_url=risk_url,
        )
