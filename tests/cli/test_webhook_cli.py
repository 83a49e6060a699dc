"""`accord webhook` as a real process: prints each notification whose signature checks out,
refuses the others (401), and drops a repeated notification id."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from accord.contracts.keys import PUSH_ID_HEADER, PUSH_SIGNATURE_HEADER
from accord.protocol.push.signing import sign
from tests.support.processes import run_service

SECRET = "webhook-cli-token-0123456789"
BODY = json.dumps(
    {"task": {"id": "t-7", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}
).encode()


def _post(url: str, nid: str, body: bytes, signature: str) -> int:
    headers = {PUSH_ID_HEADER: nid, PUSH_SIGNATURE_HEADER: signature}
    return httpx.post(url + "/hook", content=body, headers=headers).status_code


def test_webhook_prints_verified_notifications(tmp_path: Path) -> None:
    args = ["webhook", "--secret", SECRET]
    with run_service("webhook", args, log_dir=tmp_path) as hook:
        assert _post(hook.url, "n-1", BODY, sign(SECRET, "n-1", BODY)) == 200
        assert _post(hook.url, "n-1", BODY, sign(SECRET, "n-1", BODY)) == 200  # a retry
        assert _post(hook.url, "n-2", BODY, sign("another-secret-0123456789", "n-2", BODY)) == 401
        assert _post(hook.url, "n-3", BODY + b" ", sign(SECRET, "n-3", BODY)) == 401
        hook.stop()
        lines = [json.loads(x) for x in hook.log().splitlines() if x.startswith("{")]
    assert [(x["id"], x["task"], x["state"]) for x in lines] == [
        ("n-1", "t-7", "TASK_STATE_COMPLETED")
    ]
