"""The refund conversation, approval included, from Java: tests/interop/java/refund-client, A2A 1.0
JSON-RPC on java.net.http and Jackson with the Java contract package (dev.accord:accord-contract),
against the orchestrator of a running mesh. The interop matrix's (Java, Python) cell
(docs/interop.md, which says why no A2A Java SDK).

The client is built once for the module (`mvn package` of tests/interop/java, the contract package
and the client in one reactor; ~/.m2 caches the downloads) and run as a process; the conversation
is judged as every client's is (tests/mesh/client_conversation.py). Skipped locally when java or
mvn is absent; on CI it must run.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Final

import pytest
from tests.mesh import interop_matrix
from tests.mesh.client_conversation import assert_conversation, run_client
from tests.mesh.mesh_support import ROOT, Mesh, declared, mesh_for_module
from tests.support.maven import maven_package

__all__ = ["mesh_for_module"]

pytestmark = pytest.mark.timeout(420)

REACTOR: Final = ROOT / "tests" / "interop" / "java"
CLIENT: Final = REACTOR / "refund-client"
JACKSON: Final = "jackson-databind"
APPROVER: Final = "approver-java"


def _client_version() -> str:
    pom = (CLIENT / "pom.xml").read_text()
    found = re.search(rf"<artifactId>{JACKSON}</artifactId>\s*<version>([^<]+)</version>", pom)
    assert found is not None, f"{JACKSON} is not a dependency of {CLIENT / 'pom.xml'}"
    return f"java.net.http + {JACKSON} {found.group(1)}"


@pytest.fixture(scope="module")
def jar() -> Path:
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{' and '.join(missing)} must be installed on CI")
        pytest.skip(f"{' and '.join(missing)} not installed: the Java client needs them")
    built = maven_package(REACTOR, timeout_s=360)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return CLIENT / "target" / "refund-client.jar"


def test_java_client_holds_the_refund_conversation(jar: Path, mesh_for_module: Mesh) -> None:
    said = declared(mesh_for_module, "orchestrator")
    with interop_matrix.cell(
        "Java",
        "Python",
        client_version=_client_version(),
        service_contract=said.service_contract,
        note="ask, refused self-approval (typed PERMISSION_DENIED), approve, receipt; O-1005 "
        "evidence answered in the same task",
    ):
        out = run_client(["java", "-jar", str(jar)], mesh_for_module, APPROVER, timeout=150)
        assert_conversation(out, APPROVER)
