"""Issue #30, finding 8: with a shared HS256 secret every service held the signing key, so any
compromised service could mint ``svc:orchestrator`` with ``refunds.issue`` and name any approver.

Now each service signs with its own ES256 key (made on first start in development, as here:
the environment `accord up` gives a service) and publishes it at ``/.well-known/jwks.json``; a
verifier accepts a service token only under the keys of the service it names, with the grants
of its own trust table. Real processes: an agent (policy-check) and a tool server (payments).
"""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import httpx
import jwt
import pytest
from typer.testing import CliRunner

from accord.cli.main import app
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import SERVICE_JWKS_PATH
from accord.protocol.auth import mint_token
from accord.protocol.auth.trust import TrustTable, parse_trust
from accord.protocol.auth.verify import Authenticator
from tests.security.tokens_support import bearer, clean_env, list_tasks, serve
from tests.security.tool_servers import call, code
from tests.support.processes import Service
from tests.support.service_keys import sign_as
from tests.support.tool_auth import delegation_meta

pytestmark = pytest.mark.timeout(240)

MCP_HEADERS: Final = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
}
INITIALIZE: Final = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "service-keys-test", "version": "1"},
    },
}


@dataclass
class Pair:
    policy: Service
    payments: Service
    data: Path

    @property
    def keys(self) -> Path:
        return self.data / "keys"

    def token(self, service: str, **options: Any) -> str:
        """A token of ``svc:SERVICE`` signed by that service's key in this mesh's keys."""
        return sign_as(service, root=self.keys, **options)

    def mcp_status(self, token: str) -> int:
        response = httpx.post(
            self.payments.url + "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(token)}
        )
        return response.status_code

    def refunds(self) -> int:
        with sqlite3.connect(self.data / "payments.db") as conn:
            return int(conn.execute("SELECT count(*) FROM payments_refunds").fetchone()[0])


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    base = tmp_path_factory.mktemp("service-keys")
    data = base / "data"
    env = clean_env(data)  # development, as `accord up`: shipped trust table, keys made here
    with serve("payments", env, base) as payments, serve("policy", env, base) as policy:
        yield Pair(policy, payments, data)


def test_each_service_makes_its_own_key_private_and_publishes_it(pair: Pair) -> None:
    for name, service in (("policy", pair.policy), ("payments", pair.payments)):
        folder = pair.keys / name
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE((folder / "keyring.json").stat().st_mode) == 0o600
        published = httpx.get(service.url + SERVICE_JWKS_PATH).json()  # public: no credential
        (key,) = published["keys"]
        assert key["alg"] == "ES256"
        assert key["kid"]
        assert "d" not in key  # the public half only
    assert (pair.data / "jwt-secret").exists()  # people's development tokens: unchanged


def test_a_token_signed_by_risk_claiming_to_be_the_orchestrator_is_refused(pair: Pair) -> None:
    forged = pair.token("risk", sub="svc:orchestrator", scope="refunds.issue")
    assert jwt.decode(forged, options={"verify_signature": False})["sub"] == "svc:orchestrator"
    assert pair.mcp_status(forged) == 401
    assert list_tasks(pair.policy.url, bearer(forged)).status_code == 401
    # The real one passes both gates.
    genuine = pair.token("orchestrator")
    assert pair.mcp_status(genuine) == 200
    assert list_tasks(pair.policy.url, bearer(genuine)).status_code == 200


def test_the_shared_secret_no_longer_mints_a_service(pair: Pair) -> None:
    secret = (pair.data / "jwt-secret").read_text().strip()  # what every local process can read
    minted = mint_token("svc:orchestrator", ["service"], secret=secret, scopes=["refunds.issue"])
    assert pair.mcp_status(minted) == 401
    assert list_tasks(pair.policy.url, bearer(minted)).status_code == 401
    customer = mint_token("C-01", ["customer"], secret=secret)  # people's tokens: as before
    assert list_tasks(pair.policy.url, bearer(customer)).status_code == 200


def test_a_service_the_trust_table_does_not_name_is_refused(pair: Pair) -> None:
    assert pair.mcp_status(pair.token("intruder")) == 401


async def test_self_claimed_grants_give_only_the_configured_ones(pair: Pair) -> None:
    before = pair.refunds()
    greedy = pair.token("risk", scopes=["refunds.issue", "orders.lookup"])
    issued = await call(
        pair.payments.url + "/mcp",
        "refunds.issue",
        {
            "order_id": "O-1001",
            "customer_id": "C-01",
            "amount_cents": 700,
            "idempotency_key": "service-keys:greedy",
        },
        token=greedy,
        meta=delegation_meta("C-01"),
    )
    assert code(issued) is ErrorCode.PERMISSION_DENIED
    # A token may ask for less than its table grants: then it has less.
    narrowed = pair.token("orchestrator", scopes=["refunds.get"])
    issued = await call(
        pair.payments.url + "/mcp",
        "refunds.issue",
        {
            "order_id": "O-1001",
            "customer_id": "C-01",
            "amount_cents": 700,
            "idempotency_key": "service-keys:narrowed",
        },
        token=narrowed,
        meta=delegation_meta("C-01"),
    )
    assert code(issued) is ErrorCode.PERMISSION_DENIED
    assert pair.refunds() == before


def _keys(pair: Pair, *args: str) -> str:
    env = {"ACCORD_DATA_DIR": str(pair.data), "ACCORD_KEYS_DIR": str(pair.keys)}
    result = CliRunner().invoke(app, ["keys", *args], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def test_rotation_keeps_the_old_key_verifiable_for_its_grace(pair: Pair) -> None:
    old = pair.token("commerce")
    assert pair.mcp_status(old) == 200
    _keys(pair, "rotate", "commerce", "--grace", "600")
    new = pair.token("commerce")
    assert jwt.get_unverified_header(new)["kid"] != jwt.get_unverified_header(old)["kid"]
    assert pair.mcp_status(old) == 200  # still published: its tokens live out their life
    assert pair.mcp_status(new) == 200
    listed = _keys(pair, "list", "commerce")
    assert "signing" in listed
    assert "retiring" in listed


def test_a_revoked_key_fails_at_once_and_the_service_signs_with_a_new_one(pair: Pair) -> None:
    token = pair.token("risk")
    assert pair.mcp_status(token) == 200  # verified, and cached by the verifier
    assert list_tasks(pair.policy.url, bearer(token)).status_code == 200
    kid = jwt.get_unverified_header(token)["kid"]
    said = _keys(pair, "revoke", "risk", kid)
    assert "signs from now" in said
    assert pair.mcp_status(token) == 401  # the next request, cached or not
    assert list_tasks(pair.policy.url, bearer(token)).status_code == 401
    assert f"key risk {kid}" in (pair.data / "revoked").read_text()
    fresh = pair.token("risk")
    assert jwt.get_unverified_header(fresh)["kid"] != kid
    assert pair.mcp_status(fresh) == 200


def _upgrade_table(tmp_path: Path, until: datetime) -> TrustTable:
    """A table whose orchestrator entry opens the 0.2 upgrade window until ``until``."""
    raw = {
        "services": {
            "orchestrator": {
                "grants": ["refunds.issue", "orders.lookup"],
                "shared_secret_until": until.isoformat(),
            },
            "risk": {"grants": ["orders.lookup"]},
        }
    }
    return parse_trust(raw, keys_root=tmp_path)


def _shared(subject: str, *scopes: str) -> dict[str, str]:
    token = mint_token(subject, ["service"], secret=UPGRADE_SECRET, scopes=scopes)
    return {"authorization": f"Bearer {token}"}  # as an ASGI scope gives them: lower case


UPGRADE_SECRET: Final = "upgrade-window-secret-0123456789abcdef0123456789"


def test_an_upgrade_window_accepts_a_releases_shared_secret_service_token(tmp_path: Path) -> None:
    """A 0.2 replica signs with the shared secret: during its entry's window its token passes,
    with the table's grants and tenants only, and every other service's stays refused."""
    table = _upgrade_table(tmp_path, datetime.now(UTC) + timedelta(minutes=30))
    verifier = Authenticator(secret=UPGRADE_SECRET, trust=table)
    principal = verifier.authenticate(_shared("svc:orchestrator", "refunds.issue", "refund.risk"))
    assert principal.subject == "svc:orchestrator"
    assert principal.scopes == frozenset({"refunds.issue"})  # asked for more: table's only
    assert principal.tenants == frozenset({"accord"})
    with pytest.raises(AccordError) as refused:
        verifier.authenticate(_shared("svc:risk"))
    assert refused.value.code is ErrorCode.UNAUTHENTICATED


def test_a_closed_upgrade_window_refuses_the_shared_secret(tmp_path: Path) -> None:
    table = _upgrade_table(tmp_path, datetime.now(UTC) - timedelta(seconds=1))
    with pytest.raises(AccordError) as refused:
        Authenticator(secret=UPGRADE_SECRET, trust=table).authenticate(_shared("svc:orchestrator"))
    assert refused.value.code is ErrorCode.UNAUTHENTICATED


def test_an_upgrade_window_is_at_most_a_week(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at most 7 days"):
        _upgrade_table(tmp_path, datetime.now(UTC) + timedelta(days=8))
    with pytest.raises(ValueError, match="time zone"):
        parse_trust(
            {"services": {"orchestrator": {"shared_secret_until": "2030-01-01T00:00:00"}}},
            keys_root=tmp_path,
        )
