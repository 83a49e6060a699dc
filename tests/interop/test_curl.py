"""The language-neutral client: the curl command documented in docs/curl.md, run as written.

docs/curl.md shows docs/curl-refund.sh verbatim (checked here), and the test runs that script
against a real policy-check process, so the documentation cannot drift from what works.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.protocol.a2a_client.support import policy_service, token

from accord.contracts.status import A2AState

DOCS = Path(__file__).resolve().parents[2] / "docs"
SCRIPT = DOCS / "curl-refund.sh"


def test_the_doc_shows_the_script_verbatim() -> None:
    doc = (DOCS / "curl.md").read_text()
    assert SCRIPT.read_text().strip() in doc


def test_the_documented_curl_command_works(tmp_path: Path, log_dir: Path) -> None:
    if shutil.which("curl") is None:
        if os.environ.get("CI"):
            pytest.fail("curl must be installed on CI")
        pytest.skip("curl is not installed")
    with policy_service(tmp_path / "data", log_dir) as policy:
        env = {**os.environ, "ACCORD_URL": policy.url, "ACCORD_TOKEN": token("C-01")}
        run = subprocess.run(
            ["sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False
        )
    assert run.returncode == 0, run.stderr
    task = json.loads(run.stdout)["result"]["task"]
    assert task["status"]["state"] == A2AState.COMPLETED.value
    answer = task["artifacts"][0]["parts"][0]["data"]
    assert answer["rule"] == "within_window"
    assert answer["eligible"] is True
    assert answer["max_refund_cents"] == 5999
