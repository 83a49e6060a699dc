"""Issue #12, "Claims are not validated": every claim rule, revocation by credential and by
subject, and identity-provider keys (JWKS file and URL, with rotation), in-process where the
rule is the verifier's alone and against real `accord serve` processes where a finding was."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import jwt
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth import Principal, mint_token, service_token
from accord.protocol.auth import jwks as auth_jwks
from accord.protocol.auth.api_keys import ApiKeys
from accord.protocol.auth.revocation import RevocationList, revoke_subject
from accord.protocol.auth.verify import Authenticator
from accord.protocol.settings import AccordSettings
from tests.security.tokens_support import (
    IdpKey,
    bearer,
    clean_env,
    jwks_json,
    list_tasks,
    refused_start,
    serve,
)
from tests.support.processes import Service
from tests.support.service_keys import TEST_SERVICE, sign_as, write_trust

SECRET = "tokens-test-secret-" + "0123456789abcdef" * 3
HOUR = 3600


def settings(**overrides: Any) -> AccordSettings:
    return AccordSettings(**overrides)


def authenticator(tmp_path: Path, **overrides: Any) -> Authenticator:
    return Authenticator(
        secret=SECRET,
        public_key="",
        jwks=overrides.get("jwks", ""),
        api_keys=ApiKeys(tmp_path / "keys.yaml"),
        revoked=RevocationList(tmp_path / "revoked"),
        settings=settings(**overrides),
    )


def signed(**claims: Any) -> str:
    """An HS256 token with the default claims of mint_token, then ``claims`` (None: dropped)."""
    now = int(time.time())
    body: dict[str, Any] = {
        "iss": "accord",
        "aud": "accord",
        "sub": "C-01",
        "app": "accord",
        "roles": ["customer"],
        "iat": now,
        "exp": now + 600,
        "jti": uuid.uuid4().hex,
    }
    body.update(claims)
    return jwt.encode({k: v for k, v in body.items() if v is not None}, SECRET, algorithm="HS256")


def lower(headers: dict[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def check(auth: Authenticator, token: str) -> AccordError:
    with pytest.raises(AccordError) as info:
        auth.authenticate(lower(bearer(token)))
    assert info.value.code is ErrorCode.UNAUTHENTICATED
    return info.value


# -- the claims -------------------------------------------------------------------------------
def test_minted_tokens_pass_every_rule_by_default(tmp_path: Path) -> None:
    auth = authenticator(tmp_path)
    person = auth.authenticate(lower(bearer(mint_token("C-01", ["customer"], secret=SECRET))))
    assert (person.owner, person.roles) == ("accord/C-01", frozenset({"customer"}))
    assert person.issued_at is not None
    assert person.credential_id


@pytest.mark.parametrize(
    ("app", "sub", "claim"),
    [("accord", "team/alice", "sub"), ("accord/team", "alice", "app")],
)
def test_a_slash_in_app_or_sub_is_refused_and_named(
    tmp_path: Path, app: str, sub: str, claim: str
) -> None:
    # Both would have had the owner scope "accord/team/alice".
    error = check(authenticator(tmp_path), signed(app=app, sub=sub))
    assert error.details["claim"] == claim
    assert f"'{claim}'" in error.message
    assert "'/'" in error.message


@pytest.mark.parametrize("sub", ["", " C-01", "C 01", "-C-01", "x" * 129, "C-01\n"])
def test_subjects_outside_the_charset_are_refused(tmp_path: Path, sub: str) -> None:
    assert check(authenticator(tmp_path), signed(sub=sub)).details["claim"] == "sub"


@pytest.mark.parametrize(
    "roles", [["customer", "beta"], ["admin"], [], "customer root", [1], {"r": 1}]
)
def test_roles_come_only_from_the_known_set(tmp_path: Path, roles: object) -> None:
    error = check(authenticator(tmp_path), signed(roles=roles))
    assert error.details["claim"] == "roles"


def test_space_separated_roles_of_known_names_are_read(tmp_path: Path) -> None:
    principal = authenticator(tmp_path).authenticate(
        lower(bearer(signed(roles="customer approver")))
    )
    assert principal.roles == frozenset({"customer", "approver"})


@pytest.mark.parametrize("claim", ["iss", "aud", "sub", "iat", "exp", "jti"])
def test_every_required_claim_is_required(tmp_path: Path, claim: str) -> None:
    error = check(authenticator(tmp_path), signed(**{claim: None}))
    assert error.details["claim"] == claim
    assert "required" in error.message


def test_issuer_and_audience_are_checked(tmp_path: Path) -> None:
    auth = authenticator(tmp_path)
    assert check(auth, signed(iss="https://evil.example")).details["claim"] == "iss"
    assert check(auth, signed(aud="another-mesh")).details["claim"] == "aud"
    # Configured: another issuer list and audience.
    idp = authenticator(tmp_path, jwt_issuers=("accord", "https://idp"), jwt_audience="shop")
    assert idp.authenticate(lower(bearer(signed(iss="https://idp", aud="shop")))).subject
    assert check(idp, signed()).details["claim"] == "aud"  # aud "accord" is not "shop"


def test_a_hundred_year_token_is_refused(tmp_path: Path) -> None:
    now = int(time.time())
    error = check(authenticator(tmp_path), signed(iat=now, exp=now + 100 * 365 * 86_400))
    assert error.details["claim"] == "exp"
    assert "longest lifetime" in error.message


@pytest.mark.parametrize(
    ("roles", "ttl_s", "accepted"),
    [
        (["customer"], 24 * HOUR, True),
        (["customer"], 24 * HOUR + 60, False),
        (["approver"], 25 * HOUR, False),
        (["service"], HOUR, True),
        (["service"], 2 * HOUR, False),
        (["service", "approver"], 2 * HOUR, False),  # a service role: the service limit
    ],
)
def test_lifetimes_have_a_maximum_per_kind_of_principal(
    tmp_path: Path, roles: list[str], ttl_s: int, accepted: bool
) -> None:
    now = int(time.time())
    token = (
        sign_as(TEST_SERVICE, roles=roles, issued_at=now, ttl_s=ttl_s)  # a service's own key
        if "service" in roles
        else signed(roles=roles, iat=now, exp=now + ttl_s)
    )
    auth = authenticator(tmp_path)
    if accepted:
        assert auth.authenticate(lower(bearer(token))).roles == frozenset(roles)
    else:
        assert check(auth, token).details["claim"] == "exp"


def test_the_lifetimes_are_configurable(tmp_path: Path) -> None:
    now = int(time.time())
    auth = authenticator(tmp_path, token_max_ttl_s=600, service_token_max_ttl_s=60)
    assert check(auth, signed(iat=now, exp=now + 601)).details["claim"] == "exp"
    service = sign_as(TEST_SERVICE, issued_at=now, ttl_s=61)
    assert check(auth, service).details["claim"] == "exp"


def test_a_token_issued_in_the_future_is_refused(tmp_path: Path) -> None:
    now = int(time.time())
    check(authenticator(tmp_path), signed(iat=now + 3600, exp=now + 3700))


# -- API keys: the same rules, when the file is read -----------------------------------------
@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ("subject: team/alice\n  roles: [customer]", "subject"),
        ("subject: alice\n  app: accord/team\n  roles: [customer]", "app"),
        ("subject: alice\n  roles: [customer, beta]", "roles"),
        ("subject: alice\n  roles: []", "roles"),
    ],
)
def test_a_bad_api_keys_file_is_an_error_naming_the_file(
    tmp_path: Path, entry: str, field: str
) -> None:
    keys = tmp_path / "keys.yaml"
    keys.write_text(f"k-good:\n  subject: svc:batch\n  roles: [service]\nk-bad:\n  {entry}\n")
    with pytest.raises(AccordError) as info:
        ApiKeys(keys).load()
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert str(keys) in info.value.message
    assert "entry 2" in info.value.message
    assert info.value.details["field"] == field
    assert "k-bad" not in info.value.message  # the key itself is never repeated
    # At request time the broken file fails closed: no key of it is accepted.
    with pytest.raises(AccordError):
        authenticator(tmp_path).authenticate({"x-api-key": "k-good"})


def test_a_service_refuses_to_start_with_a_bad_api_keys_file(tmp_path: Path) -> None:
    keys = tmp_path / "keys.yaml"
    keys.write_text("k-1:\n  subject: team/alice\n  roles: [customer]\n")
    status, stderr = refused_start("risk", clean_env(tmp_path / "data", ACCORD_API_KEYS=str(keys)))
    assert status == 2
    assert str(keys) in stderr
    assert "'subject'" in stderr
    assert len(stderr.strip().splitlines()) == 1


# -- revocation -------------------------------------------------------------------------------
def test_revoking_a_subject_refuses_older_tokens_and_admits_later_ones(tmp_path: Path) -> None:
    auth = authenticator(tmp_path)
    now = int(time.time())
    old = signed(sub="C-07", iat=now - 60)
    other = signed(sub="C-08", iat=now - 60)
    keys = tmp_path / "keys.yaml"
    keys.write_text("k-c07:\n  subject: C-07\n  roles: [customer]\n")
    assert auth.authenticate(lower(bearer(old))).subject == "C-07"  # cached: still re-checked
    _, cutoff = revoke_subject("accord", "C-07", path=tmp_path / "revoked")
    assert auth.authenticate(lower(bearer(other))).subject == "C-08"
    assert "subject" in check(auth, old).message
    with pytest.raises(AccordError):  # an API key has no issue time: refused too
        auth.authenticate({"x-api-key": "k-c07"})
    # Another app's C-07 is someone else.
    assert auth.authenticate(lower(bearer(signed(sub="C-07", app="shop", iat=now - 60))))
    later = signed(sub="C-07", iat=cutoff, exp=cutoff + 600)
    assert auth.authenticate(lower(bearer(later))).subject == "C-07"


def test_revoking_a_subject_rejects_names_no_credential_could_carry(tmp_path: Path) -> None:
    with pytest.raises(AccordError):
        revoke_subject("accord", "team/alice", path=tmp_path / "revoked")


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Path]]:
    """policy-check as a real process, development mode, its own data directory."""
    base = tmp_path_factory.mktemp("tokens")
    data = base / "data"
    env = clean_env(data, ACCORD_JWT_SECRET=SECRET)
    with serve("policy", env, base) as service:
        yield service, data


def cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "accord.cli.main", *args],
        env={**clean_env(data, ACCORD_JWT_SECRET=SECRET)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_real_service_refuses_colliding_owner_scopes_and_long_tokens(
    policy: tuple[Service, Path],
) -> None:
    service, _ = policy
    assert list_tasks(service.url, bearer(signed())).status_code == 200
    now = int(time.time())
    for token, claim in [
        (signed(app="accord", sub="team/alice"), "sub"),
        (signed(app="accord/team", sub="alice"), "app"),
        (signed(iat=now, exp=now + 100 * 365 * 86_400), "exp"),
        (signed(jti=None), "jti"),
        (signed(roles=["customer", "beta"]), "roles"),
        (signed(iss="someone-else"), "iss"),
    ]:
        answer = list_tasks(service.url, bearer(token))
        assert answer.status_code == 401, claim
        assert answer.json()["error"]["status"] == "UNAUTHENTICATED"
        assert f"'{claim}'" in answer.headers["www-authenticate"]


def test_accord_token_revoke_by_jti_and_by_subject_against_a_real_service(
    policy: tuple[Service, Path],
) -> None:
    service, data = policy
    now = int(time.time())
    one, two = signed(sub="C-31", iat=now - 5), signed(sub="C-31", iat=now - 5)
    assert list_tasks(service.url, bearer(one)).status_code == 200
    jti = jwt.decode(one, options={"verify_signature": False})["jti"]
    done = cli(data, "token", "revoke", "--jti", jti)
    assert done.returncode == 0, done.stderr
    assert list_tasks(service.url, bearer(one)).status_code == 401
    assert list_tasks(service.url, bearer(two)).status_code == 200
    done = cli(data, "token", "revoke", "--subject", "accord/C-31")
    assert done.returncode == 0, done.stderr
    refused = list_tasks(service.url, bearer(two))
    assert refused.status_code == 401
    assert "revocation" in refused.headers["www-authenticate"]
    assert "issued before" in done.stdout  # for people; the file holds the machine form
    line = (data / "revoked").read_text().splitlines()[-1].split()
    assert line[:2] == ["subject", "accord/C-31"]
    later = signed(sub="C-31", iat=int(line[2]), exp=int(line[2]) + 600)
    assert list_tasks(service.url, bearer(later)).status_code == 200
    # The older spelling still works, and bad input is a usage error.
    assert cli(data, "token", "--revoke", "some-key-id").returncode == 0
    assert cli(data, "token", "revoke", "--subject", "team/alice/x").returncode == 2
    assert cli(data, "token", "--user", "C-01", "--role", "beta").returncode == 2
    assert cli(data, "token", "--user", "C-01", "--ttl", str(100 * 365 * 86_400)).returncode == 2


# -- identity provider: JWKS ------------------------------------------------------------------
def test_a_production_service_verifies_jwks_tokens_and_follows_a_rotation(
    tmp_path: Path,
) -> None:
    first, second = IdpKey.new("ES256"), IdpKey.new("RS256")
    jwks = tmp_path / "jwks.json"
    jwks.write_text(jwks_json(first))
    token_file = tmp_path / "service-token"
    token_file.write_text(first.sign(sub="svc:policy", roles=["service"]))
    env = clean_env(
        tmp_path / "data",
        ACCORD_MODE="production",
        ACCORD_JWKS=str(jwks),
        ACCORD_JWT_ISSUERS="https://idp.example.test",
        ACCORD_SERVICE_TOKEN_FILE=str(token_file),
        ACCORD_SERVICE_TRUST=str(write_trust(tmp_path / "trust.yaml")),
        ACCORD_PUSH_SECRETS_KEY="q8Vd3kQ0o5mXyJc2n7bR4tL9wZs1fHa6uGe0pYiKxNM=",
    )
    with serve("policy", env, tmp_path) as service:
        assert list_tasks(service.url, bearer(first.sign())).status_code == 200
        # No secret anywhere: an HS256 token (whatever its secret) is not accepted.
        forged = mint_token("C-01", ["customer"], secret=SECRET)
        assert list_tasks(service.url, bearer(forged)).status_code == 401
        assert not (tmp_path / "data" / "jwt-secret").exists()
        assert list_tasks(service.url, bearer(second.sign())).status_code == 401
        jwks.write_text(jwks_json(second))  # rotated: the file is read again
        assert list_tasks(service.url, bearer(second.sign())).status_code == 200
        assert list_tasks(service.url, bearer(first.sign())).status_code == 401
        # The same claim rules apply to the provider's tokens.
        answer = list_tasks(service.url, bearer(second.sign(sub="team/alice")))
        assert answer.status_code == 401
        assert "'sub'" in answer.headers["www-authenticate"]


def test_a_jwks_key_of_another_algorithm_is_not_used(tmp_path: Path) -> None:
    key = IdpKey.new("ES256", kid="k1")
    liar = IdpKey.new("RS256", kid="k1")  # same kid, RSA: the set holds an EC key under it
    jwks = tmp_path / "jwks.json"
    jwks.write_text(jwks_json(key))
    auth = authenticator(tmp_path, jwks=str(jwks), jwt_issuers=("https://idp.example.test",))
    assert auth.authenticate(lower(bearer(key.sign()))).subject == "C-01"
    check(auth, liar.sign())


class _JwksServer:
    """An identity provider's jwks_uri on 127.0.0.1, counting fetches."""

    def __init__(self, body: str) -> None:
        self.body = body
        self.fetches = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.fetches += 1
                raw = outer.body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks.json"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_jwks_url_is_cached_and_fetched_again_for_an_unknown_kid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(auth_jwks, "REFETCH_COOLDOWN_S", 0.0)  # the rotation comes at once here
    first, second = IdpKey.new("ES256"), IdpKey.new("ES256")
    idp = _JwksServer(jwks_json(first))
    try:
        auth = authenticator(tmp_path, jwks=idp.url, jwt_issuers=("https://idp.example.test",))
        for _ in range(3):
            assert auth.authenticate(lower(bearer(first.sign()))).subject == "C-01"
        assert idp.fetches == 1  # cached
        idp.body = jwks_json(first, second)  # the provider rotates in a new key
        assert auth.authenticate(lower(bearer(second.sign(sub="C-02")))).subject == "C-02"
        assert idp.fetches == 2
        check(auth, IdpKey.new("ES256").sign())  # a kid nobody published
    finally:
        idp.close()


# -- the credential a service sends -----------------------------------------------------------
def test_service_token_reads_the_configured_file_and_follows_its_rotation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACCORD_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ACCORD_KEYS_DIR", str(tmp_path / "keys"))
    monkeypatch.setenv("ACCORD_JWT_SECRET", SECRET)
    minted = service_token("orchestrator")
    jwks = json.loads((tmp_path / "keys" / "orchestrator" / "jwks.json").read_text())
    key = jwt.PyJWKSet.from_dict(jwks)[jwt.get_unverified_header(minted)["kid"]]
    claims = jwt.decode(minted, key, algorithms=["ES256"], audience="accord")  # never the secret
    assert (claims["sub"], claims["roles"]) == ("svc:orchestrator", ["service"])
    assert service_token("orchestrator") == minted  # kept, not minted per request
    path = tmp_path / "token"
    path.write_text("first-token\n")
    monkeypatch.setenv("ACCORD_SERVICE_TOKEN_FILE", str(path))
    assert service_token("orchestrator") == "first-token"
    path.write_text("second-token-rotated\n")
    assert service_token("orchestrator") == "second-token-rotated"
    path.write_text("")
    with pytest.raises(AccordError) as info:
        service_token("orchestrator")
    assert info.value.code is ErrorCode.UNAVAILABLE


def test_the_deny_list_file_keeps_reading_old_lines(tmp_path: Path) -> None:
    path = tmp_path / "revoked"
    path.write_text("# comment\njti-1\nsubject accord/C-01 100\nsubject broken\nkey a b\n")
    revoked = RevocationList(path)
    assert revoked.is_revoked("jti-1")
    assert not revoked.is_revoked("key")
    assert not revoked.is_revoked("broken")
    old = Principal(subject="C-01", roles=frozenset({"customer"}), issued_at=99.0)
    assert revoked.refuses(old) is not None
    signed_by_b = Principal(subject="svc:a", roles=frozenset({"service"}), key_id="b")
    assert revoked.refuses(signed_by_b) is not None  # "key a b": service a's key b
    assert revoked.refuses(replace(old, issued_at=100.0)) is None
