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
from tests.security.tokens_support import (
    IdpKey,
    bearer,
    clean_env,
    jwks_json,
    list_tasks,
    refused_start,
    serve,
)

ROOT: Final = Path(__file__).resolve().parents[2]
GOOD_SECRET: Final = "9f2c4e7a1b3d5f608172a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"


def shipped_placeholder() -> str:
    doc = yaml.safe_load((ROOT / "deploy" / "k8s" / "secret.yaml").read_text())
    value = doc["stringData"]["ACCORD_JWT_SECRET"]
    assert isinstance(value, str)
    return value


def production(data: Path, **settings: str) -> dict[str, str]:
    return clean_env(data, ACCORD_MODE="production", **settings)


@pytest.mark.parametrize(
    ("service", "settings", "named"),
    [
        ("policy", {"ACCORD_JWT_SECRET": "a"}, "shorter than 32 bytes"),
        ("payments", {"ACCORD_JWT_SECRET": shipped_placeholder()}, "placeholder"),
        ("risk", {"ACCORD_JWT_SECRET": "REPLACE_ME" + "x1y2z3w4" * 4}, "placeholder"),
        ("risk", {"ACCORD_JWT_SECRET": "ab" * 32}, "distinct characters"),
        ("commerce", {}, "no way to verify tokens"),
        ("policy", {"ACCORD_JWKS": "/etc/idp/jwks.json"}, "ACCORD_SERVICE_TOKEN_FILE"),
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

    env = production(tmp_path / "data", ACCORD_JWT_SECRET=GOOD_SECRET)
    with serve("risk", env, tmp_path) as service:
        token = mint_token("C-01", ["customer"], secret=GOOD_SECRET)
        assert list_tasks(service.url, bearer(token)).status_code == 200
        log = service.log()
    assert "development mode" not in log
    assert not (tmp_path / "data" / "jwt-secret").exists()


def test_production_starts_with_an_identity_provider_and_no_secret(tmp_path: Path) -> None:
    key = IdpKey.new("ES256")
    jwks = tmp_path / "jwks.json"
    jwks.write_text(jwks_json(key))
    env = production(
        tmp_path / "data", ACCORD_JWKS=str(jwks), ACCORD_JWT_ISSUERS="https://idp.example.test"
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
