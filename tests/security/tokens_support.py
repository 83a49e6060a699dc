"""Shared by the token, production-mode, log and file-mode tests: a clean environment for a
real service process, and an identity provider's keys (ES256/RS256 JWKs) to sign with."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from accord.protocol.settings import AccordSettings, env_name
from tests.support import forked
from tests.support.processes import Service, free_port, run_service

# Every setting blank (= unset) unless a test gives it: the runner's own ACCORD_* must not leak
# into a process whose refusals or logs are under test.
BLANK: Final = {env_name(name): "" for name in AccordSettings.model_fields}
VERSION: Final = {"A2A-Version": "1.0"}


def clean_env(data_dir: Path, **settings: str) -> dict[str, str]:
    return {**BLANK, "ACCORD_DATA_DIR": str(data_dir), **settings}


@contextmanager
def serve(name: str, env: Mapping[str, str], log_dir: Path) -> Iterator[Service]:
    """``accord serve NAME`` as a real process, healthy when the block starts."""
    with run_service(name, ["serve", name], env=env, log_dir=log_dir, deadline_s=90.0) as svc:
        yield svc


def refused_start(name: str, env: Mapping[str, str], timeout_s: float = 60.0) -> tuple[int, str]:
    """Run ``accord serve NAME`` expecting it to refuse: (exit status, stderr)."""
    done = forked.run(
        ["serve", name, "--port", str(free_port())], {**os.environ, **env}, timeout=timeout_s
    )
    return done.returncode, done.stderr


def list_tasks(url: str, headers: Mapping[str, str]) -> httpx.Response:
    """GET /tasks (REST): 200 for any verified principal, 401 otherwise."""
    return httpx.get(url + "/tasks", headers={**VERSION, **headers}, timeout=10.0)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class IdpKey:
    """One signing key of a pretend identity provider."""

    kid: str
    alg: str
    private: Any

    @classmethod
    def new(cls, alg: str = "ES256", kid: str | None = None) -> IdpKey:
        private: Any = (
            ec.generate_private_key(ec.SECP256R1())
            if alg == "ES256"
            else rsa.generate_private_key(public_exponent=65537, key_size=2048)
        )
        return cls(kid or f"{alg.lower()}-{uuid.uuid4().hex[:8]}", alg, private)

    def jwk(self) -> dict[str, Any]:
        algorithm = ECAlgorithm if self.alg == "ES256" else RSAAlgorithm
        jwk: dict[str, Any] = json.loads(algorithm.to_jwk(self.private.public_key()))
        jwk.update({"kid": self.kid, "alg": self.alg, "use": "sig"})
        return jwk

    def sign(self, **overrides: Any) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": "https://idp.example.test",
            "aud": "accord",
            "sub": "C-01",
            "app": "accord",
            "roles": ["customer"],
            "iat": now,
            "exp": now + 600,
            "jti": uuid.uuid4().hex,
        }
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode(claims, self.private, algorithm=self.alg, headers={"kid": self.kid})


def jwks_json(*keys: IdpKey) -> str:
    return json.dumps({"keys": [k.jwk() for k in keys]})
