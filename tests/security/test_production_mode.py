"""Issue #12, "Secrets": `ACCORD_JWT_SECRET=a` and the shipped placeholder were accepted, and
with no secret each replica made up its own. In production mode (`ACCORD_MODE=production`) a
real `accord serve` refuses to start with each of them (exit 2, one line naming the problem);
development mode starts and says, in one WARNING line, which secret it generated and where."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest
import yaml

from accord.protocol.production import placeholder_reason
from accord.protocol.service_keys import rotate
from tests.security.tokens_support import (
    IdpKey,
    bearer,
    clean_env,
    jwks_json,
    list_tasks,
    refused_start,
    serve,
)
from tests.support.service_keys import write_trust

ROOT: Final = Path(__file__).resolve().parents[2]
GOOD_SECRET: Final = "9f2c4e7a1b3d5f608172a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"
PUSH_KEY: Final = "q8Vd3kQ0o5mXyJc2n7bR4tL9wZs1fHa6uGe0pYiKxNM="  # 32 bytes, base64


def shipped_placeholder(name: str = "ACCORD_JWT_SECRET") -> str:
    doc = yaml.safe_load((ROOT / "deploy" / "k8s" / "secret.yaml").read_text())
    value = doc["stringData"][name]
    assert isinstance(value, str)
    return value


def production(data: Path, **settings: str) -> dict[str, str]:
    """A production environment; with a good push key unless the test gives one ("": none)."""
    return clean_env(
        data, ACCORD_MODE="production", **{"ACCORD_PUSH_SECRETS_KEY": PUSH_KEY, **settings}
    )


def provisioned(base: Path, service: str) -> dict[str, str]:
    """A service's own key ring (as `accord keys rotate SERVICE` makes it) and a trust table."""
    keys = base / "provisioned-keys"
    rotate(service, 0, root=keys)
    return {
        "ACCORD_KEYS_DIR": str(keys),
        "ACCORD_SERVICE_TRUST": str(write_trust(base / "trust.yaml")),
    }


@pytest.mark.parametrize(
    ("service", "settings", "named"),
    [
        ("policy", {"ACCORD_JWT_SECRET": "a"}, "shorter than 32 bytes"),
        ("payments", {"ACCORD_JWT_SECRET": shipped_placeholder()}, "placeholder"),
        ("risk", {"ACCORD_JWT_SECRET": "REPLACE_ME" + "x1y2z3w4" * 4}, "placeholder"),
        ("risk", {"ACCORD_JWT_SECRET": "ab" * 32}, "distinct characters"),
        ("commerce", {}, "no way to verify"),
        ("policy", {"ACCORD_JWKS": "/etc/idp/jwks.json"}, "no signing key of its own"),
        # Issue #30: a shared secret never signs a service token, and a guessable one is refused.
        ("orchestrator", {"ACCORD_JWT_SECRET": GOOD_SECRET}, "never signs service tokens"),
        ("risk", {"ACCORD_JWT_SECRET": "correct-horse-battery-staple-2026"}, "guessable"),
        ("risk", {"ACCORD_JWT_SECRET": "Tr0ub4dor&3Tr0ub4dor&3Tr0ub4dor&3"}, "guessable"),
        ("payments", {"ACCORD_JWT_SECRET": GOOD_SECRET}, "no ACCORD_SERVICE_TRUST"),
        (
            "commerce",
            {"ACCORD_JWT_SECRET": GOOD_SECRET, "ACCORD_DEV": "1", "ACCORD_FAULTS": "x=latency:5"},
            "ACCORD_DEV, ACCORD_FAULTS",
        ),
        (
            "orchestrator",
            {"ACCORD_JWT_SECRET": GOOD_SECRET, "ACCORD_DEV": "1", "ACCORD_TEST_PAUSE": "issue"},
            "ACCORD_TEST_PAUSE",
        ),
        ("commerce", {"ACCORD_JWKS": "http://idp.example.test/jwks"}, "https://"),
        # Issue #32: an agent encrypts its callers' push credentials with a key of the mesh's.
        (
            "policy",
            {"ACCORD_JWT_SECRET": GOOD_SECRET, "ACCORD_PUSH_SECRETS_KEY": ""},
            "no ACCORD_PUSH_SECRETS_KEY",
        ),
        (
            "risk",
            {"ACCORD_PUSH_SECRETS_KEY": shipped_placeholder("ACCORD_PUSH_SECRETS_KEY")},
            "ACCORD_PUSH_SECRETS_KEY is the manifest's placeholder",
        ),
        ("orchestrator", {"ACCORD_PUSH_SECRETS_KEY": "c2hvcnQ="}, "32 random bytes"),
        (
            "payments",
            {
                "ACCORD_JWT_SECRET": GOOD_SECRET,
                "ACCORD_DATABASE_URL": "postgresql://accord:REPLACE_ME_PASSWORD@db/accord",
            },
            "placeholder password",
        ),
    ],
)
def test_production_refuses_to_start(
    tmp_path: Path, service: str, settings: dict[str, str], named: str
) -> None:
    status, stderr = refused_start(service, production(tmp_path / "data", **settings))
    assert status == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "production mode refuses to start" in lines[0]
    assert named in lines[0]
    secret = settings.get("ACCORD_JWT_SECRET")
    if secret and len(secret) > 1:
        assert secret not in stderr  # the refusal names the problem, never the value
    # Nothing was made up on the way: no secret file in the data directory.
    assert not (tmp_path / "data" / "jwt-secret").exists()


def test_the_placeholder_checks_know_the_shipped_manifest() -> None:
    assert placeholder_reason(shipped_placeholder()) is not None
    assert placeholder_reason(GOOD_SECRET) is None


def test_production_starts_with_a_real_secret_and_tokens_work(tmp_path: Path) -> None:
    from accord.protocol.auth import mint_token

    env = production(
        tmp_path / "data",
        ACCORD_JWT_SECRET=GOOD_SECRET,
        **provisioned(tmp_path, "risk"),
    )
    with serve("risk", env, tmp_path) as service:
        token = mint_token("C-01", ["customer"], secret=GOOD_SECRET)
        assert list_tasks(service.url, bearer(token)).status_code == 200
        log = service.log()
    assert "development mode" not in log
    assert not (tmp_path / "data" / "jwt-secret").exists()
    assert not (tmp_path / "data" / "push-secrets-key").exists()  # production makes none up
    assert PUSH_KEY not in log


def test_production_starts_with_an_identity_provider_and_no_secret(tmp_path: Path) -> None:
    key = IdpKey.new("ES256")
    jwks = tmp_path / "jwks.json"
    jwks.write_text(jwks_json(key))
    env = production(
        tmp_path / "data",
        ACCORD_JWKS=str(jwks),
        ACCORD_JWT_ISSUERS="https://idp.example.test",
        **provisioned(tmp_path, "commerce"),
    )
    with serve("commerce", env, tmp_path) as service:  # a tool server calls no one
        assert service.process.poll() is None
    assert not (tmp_path / "data" / "jwt-secret").exists()


def test_development_says_loudly_which_secret_it_generated(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with serve("risk", clean_env(data), tmp_path) as service:
        first = service.log()
    warnings = [line for line in first.splitlines() if " WARNING " in line]
    assert len(warnings) == 1, first
    assert "development mode" in warnings[0]
    assert f"{data / 'jwt-secret'} (generated now)" in warnings[0]
    secret = (data / "jwt-secret").read_text().strip()
    assert secret not in first
    # A second process on the same data directory uses the same secret, and says so.
    with serve("policy", clean_env(data), tmp_path) as service:
        again = service.log()
    assert "(generated earlier)" in again
    assert (data / "jwt-secret").read_text().strip() == secret


# -- issue #30: API key files ---------------------------------------------------------------
STRONG_KEY: Final = "k-7Hq2vX9mLp4RtZ8wNc3bYf6sJd1gKa5e"


def _key_file(tmp_path: Path, key: str, mode: int) -> Path:
    path = tmp_path / "api-keys.yaml"
    path.write_text(f"{key}:\n  subject: batch\n  roles: [customer]\n  id: batch-key\n")
    path.chmod(mode)
    return path


@pytest.mark.parametrize(
    ("key", "mode", "named"),
    [
        ("k", 0o600, "entry 1 (id batch-key) is shorter than 32 bytes"),
        ("batch-key-batch-key-batch-key-2026", 0o600, "guessable"),
        (STRONG_KEY, 0o644, "may be read by group or others (mode 0644)"),
    ],
)
def test_production_refuses_a_weak_or_readable_api_key_file(
    tmp_path: Path, key: str, mode: int, named: str
) -> None:
    env = production(
        tmp_path / "data",
        ACCORD_JWT_SECRET=GOOD_SECRET,
        ACCORD_API_KEYS=str(_key_file(tmp_path, key, mode)),
        **provisioned(tmp_path, "payments"),
    )
    status, stderr = refused_start("payments", env)
    assert status == 2, stderr
    assert named in stderr
    assert f"{key}:" not in stderr  # never the key itself


def test_production_starts_with_a_strong_private_api_key(tmp_path: Path) -> None:
    env = production(
        tmp_path / "data",
        ACCORD_JWT_SECRET=GOOD_SECRET,
        ACCORD_API_KEYS=str(_key_file(tmp_path, STRONG_KEY, 0o600)),
        **provisioned(tmp_path, "risk"),
    )
    with serve("risk", env, tmp_path) as service:
        assert list_tasks(service.url, {"X-API-Key": STRONG_KEY}).status_code == 200
