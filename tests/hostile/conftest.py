"""Real A2A services (policy-check: an SDK task store; the orchestrator: tasks derived from its
workflow log) for the hostile-input tests, each in its own data directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from accord.protocol.auth import mint_token
from tests.support.processes import Service, run_service
from tests.support.service_keys import service_subject_token

SECRET: Final = "hostile-test-secret-0123456789abcdef0123456789"
A2A_SERVICES: Final = ("policy", "orchestrator")


def token(subject: str = "C-01", *roles: str) -> str:
    if "service" in roles:  # a service signs with its own key (issue #30)
        return service_subject_token(subject, roles=list(roles))
    return mint_token(subject, roles or ("customer",), secret=SECRET)


@pytest.fixture(scope="module", params=A2A_SERVICES)
def a2a_service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    name = str(request.param)
    base: Path = tmp_path_factory.mktemp(f"hostile-{name}")
    env = {"ACCORD_DATA_DIR": str(base / "data"), "ACCORD_JWT_SECRET": SECRET}
    with run_service(name, ["serve", name], env=env, log_dir=base, deadline_s=90.0) as service:
        yield service
