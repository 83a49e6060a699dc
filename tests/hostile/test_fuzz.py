"""The fuzz suite: requests generated from the exported contracts and mutated, against real
processes of all five services (A2A JSON-RPC and REST, MCP). The short run here
(``ACCORD_FUZZ_CASES``, default 300 per service, within ``ACCORD_FUZZ_SECONDS``, default 60);
``make fuzz`` runs 10,000 per service. The seed is printed; ``ACCORD_FUZZ_SEED`` repeats a run.

Every answer: no 5xx, no traceback, SQL or validator text, every error a contract code (never
INTERNAL), the connection kept; a correct request on the same connection still succeeds every
hundred cases, and the service is healthy at the end.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from functools import partial

import pytest

from accord.protocol.auth import mint_token
from tests.hostile.fuzz import runner
from tests.hostile.fuzz.targets import TOOLS, a2a_seed, mcp_seed
from tests.mesh.support import SECRET, SERVICES, Mesh, running_mesh
from tests.support.service_keys import TEST_SERVICE, sign_as

pytestmark = pytest.mark.timeout(600)

ALL_TOOLS = sorted(t for tools in TOOLS.values() for t in tools)


@pytest.fixture(scope="module")
def fuzz_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    # One caller at full speed: the rate limit would answer most cases RATE_LIMITED.
    unlimited = {"ACCORD_RATE_LIMIT_PER_S": "0", "ACCORD_SERVICE_RATE_LIMIT_PER_S": "0"}
    with running_mesh(
        tmp_path_factory.mktemp("fuzz"), service_env={s: unlimited for s in SERVICES}
    ) as mesh:
        yield mesh


@pytest.mark.parametrize("service", ["orchestrator", "policy", "risk", "commerce", "payments"])
def test_fuzzed_requests_get_contract_answers(fuzz_mesh: Mesh, service: str) -> None:
    seed = int(os.environ.get("ACCORD_FUZZ_SEED") or random.randrange(2**32))
    print(f"fuzz {service}: ACCORD_FUZZ_SEED={seed}")
    if service in TOOLS:
        make = partial(mcp_seed, service)
        credential = sign_as(TEST_SERVICE, scopes=ALL_TOOLS)
    else:
        make = partial(a2a_seed, service)
        credential = mint_token("C-01", ["customer"], secret=SECRET)
    report = runner.run(fuzz_mesh.url(service), make, credential, seed)
    print(f"fuzz {service}: {report.sent} cases, statuses {sorted(report.by_status.items())}")
    assert report.sent >= 50, "the time box allowed too few cases to mean anything"
    assert not report.failures, (
        f"{len(report.failures)} of {report.sent} cases broke the contract (seed {seed}):\n"
        + "\n".join(report.failures[:15])
    )
