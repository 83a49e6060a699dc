"""Credentials for tests that call tool servers directly (tool servers need a verified principal).

Servers started by a test get :func:`secret_env` (the secret people's tokens are signed with);
the test mints them with the same secret, so nothing depends on a data directory's generated
one. Service tokens are signed by the service's own key (tests/support/service_keys.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Final

import httpx2
from mcp.client.streamable_http import streamable_http_client

from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.envelope import Tenant
from accord.contracts.tool_access import ToolDelegation
from accord.protocol.auth import ROLE_CUSTOMER, mint_token
from accord.protocol.mcp.credentials import StaticCredential
from tests.support.service_keys import TEST_SERVICE, sign_as

SECRET: Final = "tool-tests-shared-secret-0123456789abcdef"
ALL_TOOLS: Final = (
    "orders.lookup",
    "customers.history",
    "orders.customer_history",
    "refunds.issue",
    "refunds.get",
    "refunds.list",
)

SKILL_GRANTS: Final = tuple(
    sorted(
        {
            grant
            for contract in shipped_agent_contracts().values()
            for skill in contract.skills
            if skill.access is not None
            for grant in skill.access.grants
        }
    )
)
"""Every grant the shipped agents' skills name for a service (AGENT-009)."""


def secret_env() -> dict[str, str]:
    """People's secret, and the session's service keys and trust table (tests/conftest.py), for
    a process started without this one's environment (a stdio server)."""
    keys = {
        k: os.environ[k] for k in ("ACCORD_KEYS_DIR", "ACCORD_SERVICE_TRUST") if k in os.environ
    }
    return {"ACCORD_JWT_SECRET": SECRET, **keys}


def service_token(grants: Iterable[str] = ALL_TOOLS, name: str = TEST_SERVICE) -> str:
    """``svc:NAME`` asking for ``grants``, signed by that service's own key (the session's)."""
    return sign_as(name, scopes=grants)


def customer_token(customer: str = "C-01") -> str:
    return mint_token(customer, [ROLE_CUSTOMER], secret=SECRET)


def token_for(subject: str, roles: Iterable[str], grants: Iterable[str] = ()) -> str:
    return mint_token(subject, roles, secret=SECRET, scopes=grants)


def service_credential(grants: Iterable[str] = ALL_TOOLS) -> StaticCredential:
    return StaticCredential(token=service_token(grants))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def acting_for(customer: str = "C-01", approved_by: str | None = None) -> ToolDelegation:
    tenant = Tenant(app="accord", user=customer, session="tests")
    return ToolDelegation(tenant=tenant, approved_by=approved_by)


def delegation_meta(customer: str = "C-01", approved_by: str | None = None) -> dict[str, object]:
    """``_meta`` of an SDK call_tool made by a service acting for ``customer``."""
    return acting_for(customer, approved_by).to_meta()


def transport(url: str, token: str | None = None) -> Any:
    """An SDK transport to ``url`` sending ``token`` (default: a service token of every tool):
    ``mcp.Client(transport(url))``."""
    http = httpx2.AsyncClient(headers=bearer(token or service_token()))
    return streamable_http_client(url, http_client=http)
