"""Shared by the A2A client, policy-check, risk-check and interop tests: secrets, tokens, inputs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.protocol.auth import mint_token
from tests.support.processes import Service, run_service
from tests.support.service_keys import sign_as
from tests.support.tool_auth import SKILL_GRANTS

SECRET: Final = "test-secret-for-a2a-client-tests-0123456789abcdef"
TRANSPORTS: Final = ("jsonrpc", "rest")


def service_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """Environment of a service under test: its own data dir, the shared JWT secret."""
    data_dir.mkdir(parents=True, exist_ok=True)
    return {
        "ACCORD_DATA_DIR": str(data_dir),
        "ACCORD_JWT_SECRET": SECRET,
        "ACCORD_DATABASE_URL": "",
        **extra,
    }


def token(subject: str = "C-01", *roles: str) -> str:
    return mint_token(subject, roles or ("customer",), secret=SECRET)


def service_token(name: str = "orchestrator", grants: tuple[str, ...] = SKILL_GRANTS) -> str:
    """``svc:NAME``'s token, signed by its own key (the session's keys, tests/conftest.py),
    asking for (by default) every shipped skill, as the orchestrator's token is granted
    policy-check's and risk-check's (AGENT-009)."""
    return sign_as(name, scopes=grants)


def envelope(
    user: str = "C-01", *, units: int = 20, tool_calls: int = 10, goal: str = "refund check"
) -> DelegationEnvelope:
    return DelegationEnvelope(
        goal=goal,
        budget=Budget(
            units=units, tool_calls=tool_calls, deadline=datetime.now(UTC) + timedelta(minutes=5)
        ),
        tenant=Tenant(app="accord", user=user, session="s-test"),
    )


def order(**overrides: Any) -> dict[str, Any]:
    """Order facts as orders.lookup reports O-1001 (delivered 5 days ago, 59.99)."""
    facts: dict[str, Any] = {
        "order_id": "O-1001",
        "total_cents": 5999,
        "refunded_cents": 0,
        "refundable_cents": 5999,
        "final_sale": False,
        "days_since_delivery": 5,
        "status": "delivered",
    }
    facts.update(overrides)
    return facts


def policy_input(reason: str = "wrong_size", **kw: Any) -> dict[str, Any]:
    return {"order": kw.pop("order", order()), "reason": reason, **kw}


@contextmanager
def policy_service(data_dir: Path, log_dir: Path, **env: str) -> Iterator[Service]:
    with run_service(
        "policy",
        ["serve", "policy"],
        env=service_env(data_dir, **env),
        log_dir=log_dir,
        deadline_s=90,
    ) as svc:
        yield svc
