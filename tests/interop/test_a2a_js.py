"""Cross-language: the JavaScript A2A SDK (@a2a-js/sdk 1.3.0) against policy-check, both bindings.

Runs tests/interop/js/a2a_policy.mjs with Node against a real `accord serve policy` process; the
script checks the answers with ajv against the schemas the card names.
Skipped locally when the npm packages are not installed; on CI (CI set) it must run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.protocol.a2a_client.support import policy_service, token
from tests.support.processes import Service

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import SKILL_SCHEMAS_PATH
from accord.contracts.status import A2AState

JS = Path(__file__).parent / "js"

pytestmark = pytest.mark.node


def _node() -> str:
    if not (JS / "node_modules" / "@a2a-js" / "sdk").is_dir():
        if os.environ.get("CI"):
            pytest.fail("tests/interop/js/node_modules is missing on CI (run `make npm`)")
        pytest.skip("npm packages not installed (`make npm` installs them)")
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH")
    return node


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    _node()
    root = tmp_path_factory.mktemp("js-policy")
    (root / "logs").mkdir()
    with policy_service(root / "data", root / "logs") as svc:
        yield svc


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_js_client_sends_streams_continues_gets_and_cancels(policy: Service, binding: str) -> None:
    run = subprocess.run(
        [_node(), "a2a_policy.mjs", policy.url, token("C-01"), binding],
        cwd=JS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert (out["binding"], out["version"]) == (binding, "1.0")
    assert out["send"]["state"] == A2AState.COMPLETED.value
    assert out["send"]["answer"]["rule"] == "within_window"
    assert out["send"]["answer"]["max_refund_cents"] == 5999
    assert out["ask"]["states"][-1] == A2AState.INPUT_REQUIRED.value
    assert out["ask"]["meta"]["waitingReason"] == "input"
    assert "photo" in out["ask"]["question"]
    assert out["answer"]["sameTask"] is True
    assert out["answer"]["states"][-1] == A2AState.COMPLETED.value
    assert out["answer"]["answer"]["rule"] == "damage_with_evidence"
    assert out["get"] == {"state": A2AState.COMPLETED.value, "answer": out["answer"]["answer"]}
    assert out["cancel"]["before"] == A2AState.INPUT_REQUIRED.value
    assert out["cancel"]["state"] == A2AState.CANCELED.value
    assert out["cancel"]["meta"]["error"]["code"] == ErrorCode.CANCELED.value
    assert out["unknown"].endswith("TaskNotFoundError")
    # The schemas came from the card (card_schemas.mjs), and every answer followed them.
    assert out["schemas"]["url"] == policy.url.rstrip("/") + SKILL_SCHEMAS_PATH
    assert out["schemas"]["revalidated"] == 304
    assert out["schemas"]["skills"] == ["refund.policy"]
    assert out["schemas"]["errors"] == []
