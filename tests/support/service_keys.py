"""Service tokens for tests: signed by a named service's own key, as every service signs them.

Services refuse a service token the shared HS256 secret signed (issue #30, finding 8), so a test
that calls a service as a service signs with that service's key from a keys directory the
service under test reads too:

- :func:`sign_as` signs for any service of the trust table, from ``ACCORD_KEYS_DIR`` (the test
  session's, see tests/conftest.py) or the ``root`` given (a mesh's data directory's keys);
- the session's trust table (:func:`write_session_trust`) is the shipped one plus the service
  :data:`TEST_SERVICE`, granted every tool and skill, for tests that call servers directly.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import jwt
import yaml

from accord.agents.refund.config import TRUST_FILE
from accord.protocol.auth import ROLE_SERVICE, token_claims
from accord.protocol.service_keys import ALGORITHM, ensure_ring, keys_dir

TEST_SERVICE: Final = "tests"
TEST_GRANTS: Final = (
    "orders.lookup",
    "customers.history",
    "orders.customer_history",
    "refunds.issue",
    "refunds.get",
    "refunds.list",
    "refund.request",
    "refund.policy",
    "refund.risk",
)


def sign_as(
    service: str,
    *,
    scopes: Iterable[str] = (),
    ttl_s: int = 3600,
    issued_at: int | None = None,
    root: Path | None = None,
    **extra_claims: object,
) -> str:
    """A token of ``svc:SERVICE`` signed by that service's current key (made if it has none)
    in ``root`` (default: ``ACCORD_KEYS_DIR``); ``scopes`` ask for fewer grants than the
    verifier's table gives (none: all of them)."""
    ring, _made = ensure_ring(service, root or keys_dir())
    key = ring.signer()
    claims = token_claims(
        f"svc:{service}", [ROLE_SERVICE], ttl_s=ttl_s, scopes=scopes, issued_at=issued_at
    )
    claims.update(extra_claims)
    return jwt.encode(claims, key.private_key(), algorithm=ALGORITHM, headers={"kid": key.kid})


def trust_document(extra: dict[str, dict[str, object]] | None = None) -> dict[str, object]:
    """The shipped trust table plus :data:`TEST_SERVICE` (and ``extra`` entries)."""
    shipped = yaml.safe_load(TRUST_FILE.read_text())
    services = dict(shipped["services"])
    services[TEST_SERVICE] = {"grants": list(TEST_GRANTS), "tenants": ["*"]}
    services.update(extra or {})
    return {"services": services}


def write_trust(path: Path, extra: dict[str, dict[str, object]] | None = None) -> Path:
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(yaml.safe_dump(trust_document(extra)))
    partial.replace(path)
    return path


def write_session_trust(base: Path) -> dict[str, str]:
    """The environment a test session runs services in: its keys and its trust table."""
    keys = base / "keys"
    keys.mkdir(mode=0o700, parents=True, exist_ok=True)
    return {
        "ACCORD_KEYS_DIR": str(keys),
        "ACCORD_SERVICE_TRUST": str(write_trust(base / "trust.yaml")),
    }


def service_subject_token(subject: str, **options: Any) -> str:
    """For helpers that took any ``svc:NAME``: that service's own token if the session's table
    trusts NAME, else :data:`TEST_SERVICE`'s (an HS256 service token is refused everywhere)."""
    name = subject.removeprefix("svc:")
    if name not in trust_document()["services"]:  # type: ignore[operator]
        name = TEST_SERVICE
    return sign_as(name, **options)
