"""`accord serve NAME --auth none`: standard tooling without credentials can probe an agent on
loopback in development mode; anywhere else, in production, or for a tool server, it is refused
before a port is bound."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest

from accord.protocol.auth import mint_token
from accord.protocol.service_keys import ensure_ring, keys_dir
from tests.support import forked
from tests.support.processes import run_service

SECRET = "q8Zr2mVx7LkP4tNw9sYb3cHd6fJg1aUe5oRi0"  # random-looking: production accepts it
V1 = {"A2A-Version": "1.0"}
PUSH_KEY = "q8Vd3kQ0o5mXyJc2n7bR4tL9wZs1fHa6uGe0pYiKxNM="  # 32 bytes, base64


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"ACCORD_DATA_DIR": str(tmp_path / "data"), "ACCORD_JWT_SECRET": SECRET, **extra}


def _serve(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return forked.run(["serve", *args, "--port", "1"], {**os.environ, **_env(tmp_path, **env)})


def test_an_agent_without_authentication_answers_standard_tooling(tmp_path: Path) -> None:
    args = ["serve", "risk", "--auth", "none"]
    with run_service("risk", args, env=_env(tmp_path), log_dir=tmp_path) as risk:
        anonymous = httpx.get(risk.url + "/tasks", headers=V1)
        assert anonymous.status_code == 200, anonymous.text
        # A credential, when one is sent, is still verified.
        wrong = mint_token("C-01", ("customer",), secret="Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm")
        bad = httpx.get(risk.url + "/tasks", headers={**V1, "Authorization": f"Bearer {wrong}"})
        assert bad.status_code == 401
        assert "authentication is OFF" in risk.log()


def test_the_default_still_requires_a_credential(tmp_path: Path) -> None:
    with run_service("risk", ["serve", "risk"], env=_env(tmp_path), log_dir=tmp_path) as risk:
        assert httpx.get(risk.url + "/tasks", headers=V1).status_code == 401


@pytest.mark.parametrize(
    ("args", "env", "why"),
    [
        (["risk", "--auth", "none", "--host", "0.0.0.0"], {}, "bind to loopback"),
        (["risk", "--auth", "none", "--host", "192.168.1.7"], {}, "bind to loopback"),
        (
            ["risk", "--auth", "none"],
            # Everything else production asks of an agent is there (its key ring is made
            # below): --auth none is what it refuses.
            {"ACCORD_MODE": "production", "ACCORD_PUSH_SECRETS_KEY": PUSH_KEY},
            "refused in production mode",
        ),
        (["commerce", "--auth", "none"], {}, "A2A agents only"),
        (["risk", "--auth", "nobody"], {}, "--auth"),
    ],
)
def test_auth_none_is_refused(
    tmp_path: Path, args: list[str], env: dict[str, str], why: str
) -> None:
    if env.get("ACCORD_MODE") == "production":
        # Production refuses an agent without a key ring of its own first: give it one, so
        # that --auth none is what is left to refuse (whatever ran before this test).
        ensure_ring(args[0], keys_dir())
    run = _serve(tmp_path, *args, **env)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert why in run.stderr


def test_the_anonymous_caller_has_the_service_rate_and_a_person_their_own(
    tmp_path: Path,
) -> None:
    # Every client of an agent without authentication is the one anonymous principal: a
    # person's bucket (burst 10 here) would refuse the second conformance run against it.
    env = _env(tmp_path, ACCORD_RATE_LIMIT_PER_S="1", ACCORD_RATE_LIMIT_BURST="10")
    args = ["serve", "risk", "--auth", "none"]
    with run_service("risk", args, env=env, log_dir=tmp_path) as risk, httpx.Client() as client:
        anonymous = [client.get(risk.url + "/tasks", headers=V1).status_code for _ in range(60)]
        assert set(anonymous) == {200}
        person = mint_token("C-01", ("customer",), secret=SECRET)
        bearer = {**V1, "Authorization": f"Bearer {person}"}
        theirs = [client.get(risk.url + "/tasks", headers=bearer).status_code for _ in range(30)]
        assert theirs[:5] == [200] * 5
        assert 429 in theirs
