"""Fixtures: the test agent as a real uvicorn process, tokens, and a two-transport client."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from accord.protocol.auth import mint_token
from tests.protocol.a2a.wire_client import AgentClient
from tests.support.processes import Service, free_port, wait_healthy
from tests.support.service_keys import service_subject_token

AGENT_FACTORY = "tests.protocol.a2a.agent_app:create_app"


@contextmanager
def run_agent(
    data_dir: Path,
    log_dir: Path,
    *,
    db_url: str | None = None,
    port: int | None = None,
    env: dict[str, str] | None = None,
    factory: str = AGENT_FACTORY,
) -> Iterator[Service]:
    port = port or free_port()
    log_path = log_dir / f"agent-{port}.log"
    full_env = {
        **os.environ,
        "ACCORD_DATA_DIR": str(data_dir),
        "ACCORD_TEST_PORT": str(port),
        "ACCORD_TEST_DB": db_url or f"sqlite:///{data_dir / 'test.db'}",
        **(env or {}),
    }
    cmd = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        factory,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, env=full_env, start_new_session=True
        )
    service = Service(name="test-agent", port=port, process=proc, log_path=log_path)
    try:
        wait_healthy(service.url, proc, 60.0)
    except Exception:
        service.stop()
        raise RuntimeError(f"agent did not start; log:\n{service.log()[-4000:]}") from None
    try:
        yield service
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                service.kill()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    # Tokens minted in the test must use the same secret file as the agent process.
    monkeypatch.setenv("ACCORD_DATA_DIR", str(d))
    monkeypatch.delenv("ACCORD_JWT_SECRET", raising=False)
    monkeypatch.delenv("ACCORD_DATABASE_URL", raising=False)
    return d


@pytest.fixture(scope="module")
def shared_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("agent")
    (base / "data").mkdir()
    (base / "logs").mkdir()
    return base / "data", base / "logs"


@pytest.fixture(scope="module")
def agent(shared_dirs: tuple[Path, Path]) -> Iterator[Service]:
    """One agent process (SQLite) shared by the tests of a module."""
    data, logs = shared_dirs
    (data / "keys.yaml").write_text(
        "k-test-service:\n  subject: svc:batch\n  roles: [service]\n  id: batch-key\n"
        "k-test-customer:\n  subject: C-09\n  roles: [customer]\n"
    )
    with run_agent(data, logs, env={"ACCORD_API_KEYS": str(data / "keys.yaml")}) as service:
        yield service


@pytest.fixture(scope="module")
def token_for(shared_dirs: tuple[Path, Path]) -> Callable[..., str]:
    data, _ = shared_dirs
    secret_file = data / "jwt-secret"

    def make(subject: str, *roles: str, app: str = "accord", ttl_s: int = 600) -> str:
        if "service" in roles:  # a service signs with its own key (issue #30)
            return service_subject_token(subject, ttl_s=ttl_s, roles=list(roles))
        return mint_token(
            subject,
            roles or ("customer",),
            app=app,
            ttl_s=ttl_s,
            secret=secret_file.read_text().strip(),
        )

    return make


@pytest.fixture(params=["jsonrpc", "rest"])
def client(request: pytest.FixtureRequest, agent: Service) -> Iterator[AgentClient]:
    with AgentClient(agent.url, str(request.param)) as c:
        yield c
