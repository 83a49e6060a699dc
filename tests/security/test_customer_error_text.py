"""A customer is told a plain sentence and the code of another service's error, never its words.

Found against `accord up` (issue #30): a refund that failed at a tool server showed the customer
what the orchestrator was told: the target of a redirect that payments answered with, and that
the orchestrator's own credential had been revoked. A tool's or a peer agent's error message is
for whoever runs the mesh. Now the customer's task (the answer to the send, and every later
read) says a plain sentence in the customer's language with the error's code and no details,
and the workflow log keeps the service's own words for the operator. Real processes: the five
services; in one test payments is reached through a redirecting stand-in (a misconfigured
proxy), in the other the orchestrator's service credential is revoked on the deny list.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Final

import pytest

from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.protocol.a2a.client import TaskView
from tests.mesh.support import Mesh, ask, get_task, running_mesh

pytestmark = pytest.mark.timeout(300)

HIDDEN_HOST: Final = "payments-internal.corp.example"
REDIRECT: Final = f"http://{HIDDEN_HOST}:9443/private/mcp"
PLAIN: Final = {"en": "problem on our side", "zh": "我们这边的问题"}


class _Redirecting(BaseHTTPRequestHandler):
    """Answers every request with a redirect to an internal address."""

    def _redirect(self) -> None:
        self.send_response(307)
        self.send_header("Location", REDIRECT)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._redirect()

    def do_POST(self) -> None:
        self._redirect()

    def log_message(self, format: str, *args: object) -> None:
        del format, args


@contextmanager
def _redirecting_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirecting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _told(view: TaskView) -> str:
    return json.dumps(view.to_dict(), ensure_ascii=False)


def _logged_error(mesh: Mesh, task_id: str) -> str:
    """The error of the workflow as its log keeps it (the operator's record)."""
    finished = mesh.workflow_events(task_id, "workflow_finished")
    assert finished, f"workflow {task_id} did not finish"
    return json.dumps(finished[-1][1].get("error"), ensure_ascii=False)


async def _check_told_plainly(
    mesh: Mesh, subject: str, view: TaskView, hidden: tuple[str, ...], language: str
) -> None:
    assert view.status is Status.FAILED, view
    assert view.error is not None
    for read in (view, await get_task(mesh, subject, view.task_id)):
        assert read.error is not None
        assert read.error.code is view.error.code
        assert read.error.details == {}, read.error.details
        assert PLAIN[language] in (read.error.message or ""), read.error.message
        for word in hidden:
            assert word not in _told(read), (word, _told(read))
    logged = _logged_error(mesh, view.task_id)
    assert any(word in logged for word in hidden), logged  # the operator's record keeps it


async def test_a_redirect_target_of_payments_is_not_shown_to_the_customer(
    tmp_path: Path,
) -> None:
    with (
        _redirecting_server() as payments,
        running_mesh(tmp_path, orchestrator_env={"ACCORD_PAYMENTS_URL": payments}) as mesh,
    ):
        view = await ask(mesh, "C-01", "please refund $10 of order O-1001, wrong size")
        await _check_told_plainly(mesh, "C-01", view, (HIDDEN_HOST, "Redirect", "9443"), "en")


async def test_the_orchestrators_revoked_credential_is_not_shown_to_the_customer(
    tmp_path: Path,
) -> None:
    with running_mesh(tmp_path) as mesh:
        # Every credential of svc:orchestrator issued before the next second: the one it
        # holds, and any it mints now (the deny list is read again on its next request).
        revoke_before = int(time.time()) + 1
        (mesh.data_dir / "revoked").write_text(f"subject accord/svc:orchestrator {revoke_before}\n")
        view = await ask(mesh, "C-01", "鞋码不合适，想退款，订单 O-1001")
        assert view.error is not None
        assert view.error.code is ErrorCode.UNAUTHENTICATED, view.error
        await _check_told_plainly(mesh, "C-01", view, ("revoked", "revocation"), "zh")
