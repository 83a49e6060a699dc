"""`accord demo --reset` (issue #36): the data directory's SQLite databases go, so the next
start seeds the demo data again; the development secret and the service keys stay; refused
while a service of the mesh answers, and for a PostgreSQL store."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from accord.protocol.service import service_names
from accord.protocol.settings import service_url_env
from tests.support import forked
from tests.support.ports import free_port

DATABASES = ("commerce.db", "payments.db", "payments.db-wal", "orchestrator-workflows.db-shm")
KEPT = ("jwt-secret", "push-secrets-key", "keys/risk/keyring.json", "notes.txt")


def _data_dir(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    for name in (*DATABASES, *KEPT):
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        (data / name).write_text("x")
    return data


def _env(urls: dict[str, str]) -> dict[str, str]:
    """No service answers unless a test names one: every service URL is a closed port."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCORD_DATABASE")}
    for name in service_names():
        env[service_url_env(name)] = urls.get(name, f"http://127.0.0.1:{free_port()}")
    return env


@pytest.fixture
def answering() -> Iterator[str]:
    """An HTTP server that answers /healthz, as a running service does."""

    class Healthy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"status": "ok"}')

        def log_message(self, *_args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Healthy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_reset_removes_the_databases_and_keeps_the_secret_and_keys(tmp_path: Path) -> None:
    data = _data_dir(tmp_path)
    run = forked.run(["demo", "--reset", "--data-dir", str(data)], _env({}))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "demo data reset" in run.stdout
    assert f"{len(DATABASES)} database files removed" in run.stdout
    assert not [n for n in DATABASES if (data / n).exists()]
    assert all((data / n).is_file() for n in KEPT)


def test_reset_is_refused_while_the_mesh_runs(tmp_path: Path, answering: str) -> None:
    data = _data_dir(tmp_path)
    run = forked.run(["demo", "--reset", "--data-dir", str(data)], _env({"commerce": answering}))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "stop `accord up` first" in run.stderr
    assert "commerce" in run.stderr
    assert all((data / n).is_file() for n in DATABASES)


def test_reset_leaves_a_postgresql_store_alone(tmp_path: Path) -> None:
    data = _data_dir(tmp_path)
    env = {**_env({}), "ACCORD_DATABASE_URL": "postgresql+psycopg://u:p@127.0.0.1:1/accord"}
    run = forked.run(["demo", "--reset", "--data-dir", str(data)], env)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "PostgreSQL" in run.stderr
    assert all((data / n).is_file() for n in DATABASES)
