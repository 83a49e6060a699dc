"""Credential verification without a server: algorithms, keys, caching and revocation."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from typer.testing import CliRunner

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth import mint_token, service_token
from accord.protocol.auth import verify as auth_verify
from accord.protocol.auth.api_keys import ApiKeys
from accord.protocol.auth.revocation import RevocationList
from accord.protocol.auth.verify import Authenticator

SECRET = "unit-test-secret-" + "s" * 32


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def make(tmp_path: Path, public_key: str = "") -> Authenticator:
    return Authenticator(
        secret=SECRET,
        public_key=public_key,
        api_keys=ApiKeys(tmp_path / "keys.yaml"),
        revoked=RevocationList(tmp_path / "revoked"),
    )


def test_dev_secret_file_is_private_and_stable(data_dir: Path) -> None:
    token = mint_token("C-01", ["customer"])
    secret_file = data_dir / "jwt-secret"
    assert secret_file.stat().st_mode & 0o777 == 0o600
    principal = Authenticator().authenticate(bearer(token))
    assert principal.subject == "C-01"
    assert mint_token("C-01", ["customer"]) != token  # another jti, the same secret:
    assert Authenticator().authenticate(bearer(mint_token("C-02", ["customer"]))).subject == "C-02"


def test_a_service_token_is_signed_by_the_services_own_key(data_dir: Path) -> None:
    token = service_token("orchestrator")
    assert jwt.get_unverified_header(token)["alg"] == "ES256"
    principal = Authenticator().authenticate(bearer(token))
    assert principal.subject == "svc:orchestrator"
    assert principal.is_service
    assert principal.key_id == jwt.get_unverified_header(token)["kid"]


def test_es256_tokens_verify_with_the_public_key(tmp_path: Path) -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    token = jwt.encode(
        {
            "iss": "accord",
            "aud": "accord",
            "sub": "approver-1",
            "roles": ["approver"],
            "iat": int(time.time()),
            "exp": int(time.time()) + 60,
            "jti": "j1",
        },
        private,
        algorithm="ES256",
    )
    principal = make(tmp_path, pem).authenticate(bearer(token))
    assert principal.subject == "approver-1"
    assert principal.has_role("approver")
    assert principal.credential_id == "j1"
    # Without a configured public key, ES256 is not accepted at all.
    with pytest.raises(AccordError) as info:
        make(tmp_path).authenticate(bearer(token))
    assert info.value.code is ErrorCode.UNAUTHENTICATED


def test_public_key_cannot_be_used_as_an_hmac_secret(tmp_path: Path) -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )

    # The classic confusion attack: sign HS256 with the (public) PEM text as the secret.
    def b64(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps({"sub": "root", "roles": ["service"], "exp": 9999999999}).encode())
    mac = hmac.new(pem.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    forged = f"{head}.{body}.{b64(mac)}"
    with pytest.raises(AccordError):
        make(tmp_path, pem).authenticate(bearer(forged))


def test_cached_tokens_still_expire_and_still_get_revoked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = make(tmp_path)
    short = mint_token("C-01", ["customer"], ttl_s=60, secret=SECRET)
    assert auth.authenticate(bearer(short)).subject == "C-01"
    later = time.time() + 60 + auth_verify.LEEWAY_S + 1
    monkeypatch.setattr(auth_verify, "_now", lambda: later)
    with pytest.raises(AccordError, match="expired"):
        auth.authenticate(bearer(short))
    monkeypatch.undo()
    token = mint_token("C-02", ["customer"], secret=SECRET)
    principal = auth.authenticate(bearer(token))
    (tmp_path / "revoked").write_text(principal.credential_id + "\n")
    with pytest.raises(AccordError, match="revoked"):
        auth.authenticate(bearer(token))


def test_api_keys_reload_and_revoke_by_key_id(tmp_path: Path) -> None:
    auth = make(tmp_path)
    keys = tmp_path / "keys.yaml"
    keys.write_text("k-1:\n  subject: svc:batch\n  roles: [service]\n  id: batch\n")
    principal = auth.authenticate({"x-api-key": "k-1"})
    assert principal.subject == "svc:batch"
    assert principal.credential_id == "batch"
    keys.write_text("k-2:\n  subject: C-05\n  roles: [customer]\n  app: shop\n")
    with pytest.raises(AccordError):
        auth.authenticate({"x-api-key": "k-1"})
    second = auth.authenticate({"x-api-key": "k-2"})
    assert (second.app, second.credential_id[:4]) == ("shop", "key:")
    (tmp_path / "revoked").write_text(second.credential_id + "\n")
    with pytest.raises(AccordError, match="revoked"):
        auth.authenticate({"x-api-key": "k-2"})


@pytest.mark.parametrize("header", ["Basic abc", "Bearer", "Bearer  "])
def test_malformed_authorization_headers(tmp_path: Path, header: str) -> None:
    with pytest.raises(AccordError) as info:
        make(tmp_path).authenticate({"authorization": header})
    assert info.value.code is ErrorCode.UNAUTHENTICATED


def test_token_command_prints_a_verifiable_token_and_revokes(data_dir: Path) -> None:
    from accord.cli.main import app

    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "token",
            "--user",
            "C-03",
            "--role",
            "customer",
            "--role",
            "approver",
            "--app",
            "shop",
            "--ttl",
            "120",
        ],
    )
    assert result.exit_code == 0, result.output
    token = result.stdout.strip().splitlines()[-1]
    principal = Authenticator().authenticate(bearer(token))
    assert (principal.subject, principal.app) == ("C-03", "shop")
    assert principal.roles == frozenset({"customer", "approver"})
    revoked = runner.invoke(app, ["token", "--revoke", principal.credential_id])
    assert revoked.exit_code == 0
    with pytest.raises(AccordError, match="revoked"):
        Authenticator().authenticate(bearer(token))
