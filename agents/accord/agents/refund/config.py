"""The orchestrator's names, and what one assembly of it is given (:class:`RefundSettings`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from accord.protocol.settings import app_settings, current, data_dir
from accord.refund_contracts.settings import AssistantSettings

SERVICE_NAME: Final = "orchestrator"
GRAPH_NAME: Final = "refund"
GRAPH_VERSION: Final = "3"  # refunds keyed by request: refund:<order_id>:<workflow_id>
# Graphs 1 and 2 are kept for workflows in flight on them (compat.REFUND_GRAPH_V1_V2).
GRAPH_VERSION_2: Final = "2"  # intake routes: "answer" ends what is not a refund
GRAPH_VERSION_1: Final = "1"  # intake fans out to the checks
# The refund assistant's tool servers (ACCORD_TOOLS_CONFIG replaces it): the application's file.
TOOLS_FILE: Final = Path(__file__).resolve().parent / "tools.yaml"
# Its trust table (ACCORD_SERVICE_TRUST replaces it), named by its app file (accord.yaml).
TRUST_FILE: Final = Path(__file__).resolve().parent / "trust.yaml"


@dataclass(frozen=True)
class RefundSettings:
    """Where one orchestrator keeps its log and finds its peers (the served agent's from its
    serve options, the Runner's from its arguments), and a typed view of the ``ACCORD_*``
    settings it uses. Those are read from :func:`~accord.protocol.settings.current` when used,
    never copied here: the process settings stay the one truth (issue 31)."""

    workflow_log_url: str = ""
    policy_url: str = ""
    risk_url: str = ""
    # The Runner's ``approval_timeout_s`` argument; None: ``ACCORD_APPROVAL_TIMEOUT_S``.
    approval_timeout_override_s: float | None = None

    @property
    def approval_timeout_s(self) -> float:
        """How long a refund waits for an approver (``ACCORD_APPROVAL_TIMEOUT_S``)."""
        if self.approval_timeout_override_s is not None:
            return self.approval_timeout_override_s
        return app_settings(AssistantSettings).approval_timeout_s

    @property
    def workflow_lease_ttl_s(self) -> float:
        """The lease of this process on its running workflows (``ACCORD_WORKFLOW_LEASE_TTL_S``)."""
        return current().workflow_lease_ttl_s

    @classmethod
    def served(cls, database_url: str | None, policy_url: str, risk_url: str) -> RefundSettings:
        """The served orchestrator's: the workflow log goes to the service's PostgreSQL
        database when there is one, else to its own SQLite file (separate from the task
        store's, so the two writers never wait for each other)."""
        log_url = database_url or f"sqlite:///{data_dir() / 'orchestrator-workflows.db'}"
        return cls(workflow_log_url=log_url, policy_url=policy_url, risk_url=risk_url)
