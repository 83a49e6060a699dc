"""ToolClient against the real commerce and payments servers (`accord serve`), default config."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from accord.agents.refund.config import TOOLS_FILE
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.mcp.client import ToolClient
from accord.protocol.mcp.config import load_config
from accord.protocol.mcp.contract_check import check_server
from accord.protocol.mcp.credentials import ServiceCredential
from tests.support.tool_auth import SECRET, acting_for, secret_env
from tests.support.tool_servers import run_commerce

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"


@pytest.fixture(scope="module")
def mesh_tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    data = tmp_path_factory.mktemp("tools-data")
    logs = tmp_path_factory.mktemp("tools-logs")
    env = {"ACCORD_DATA_DIR": str(data), **secret_env()}
    with run_commerce(env, logs) as (commerce, payments):
        yield {"ACCORD_COMMERCE_URL": commerce.url, "ACCORD_PAYMENTS_URL": payments.url}


@pytest.fixture
def configured(mesh_tools: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped default configuration, pointed at this test's servers by environment."""
    monkeypatch.delenv("ACCORD_TOOLS_CONFIG", raising=False)
    monkeypatch.setenv("ACCORD_JWT_SECRET", SECRET)  # the servers' secret: our service tokens
    for key, value in mesh_tools.items():
        monkeypatch.setenv(key, value)


@pytest.mark.usefixtures("configured")
async def test_real_servers_keep_their_contracts() -> None:
    for spec in load_config(default=TOOLS_FILE).servers:
        report = await check_server(spec, credential=ServiceCredential("tests", []))
        assert report.ok, report.findings
        assert sorted(report.checked) == sorted(c.name for c in spec.contracts)


@pytest.mark.usefixtures("configured")
async def test_reads_return_typed_outputs() -> None:
    c01 = acting_for("C-01")
    async with ToolClient.from_config(default=TOOLS_FILE, service="tests") as tools:
        order = await tools.call(
            "orders.lookup",
            {"order_id": "O-1001", "customer_id": "C-01"},
            traceparent=TRACEPARENT,
            acting_for=c01,
        )
        history = await tools.call("customers.history", {"customer_id": "C-01"}, acting_for=c01)
        with pytest.raises(AccordError) as info:
            await tools.call(
                "orders.lookup", {"order_id": "O-9999", "customer_id": "C-01"}, acting_for=c01
            )
    assert order["order_id"] == "O-1001"
    assert isinstance(order["refundable_cents"], int)
    assert isinstance(order["final_sale"], bool)
    assert history["customer_id"] == "C-01"
    assert info.value.code is ErrorCode.NOT_FOUND


@pytest.mark.usefixtures("configured")
async def test_write_without_key_is_refused_and_nothing_is_written() -> None:
    key = "refund:O-1001"
    lookup = {"idempotency_key": key, "customer_id": "C-01"}
    args = {"order_id": "O-1001", "customer_id": "C-01", "amount_cents": 100, "reason": "late"}
    c01 = acting_for("C-01")
    async with ToolClient.from_config(default=TOOLS_FILE, service="tests") as tools:
        with pytest.raises(AccordError) as info:
            await tools.call("refunds.issue", args, acting_for=c01)
        assert info.value.code is ErrorCode.INVALID_INPUT
        assert await tools.call("refunds.get", lookup, acting_for=c01) == {
            "found": False,
            "receipt": None,
        }

        issued = await tools.call("refunds.issue", args, idempotency_key=key, acting_for=c01)
        replay = await tools.call("refunds.issue", args, idempotency_key=key, acting_for=c01)
        found = await tools.call("refunds.get", lookup, acting_for=c01)
    assert issued["replayed"] is False
    assert replay["replayed"] is True
    assert replay["receipt"] == issued["receipt"]
    assert found == {"found": True, "receipt": issued["receipt"]}


def test_cli_check_passes_against_the_real_server(mesh_tools: dict[str, str]) -> None:
    url = mesh_tools["ACCORD_COMMERCE_URL"] + "/mcp"
    done = subprocess.run(
        [sys.executable, "-m", "accord.cli.main", "tools", "check", url],
        env={**os.environ, **secret_env()},  # the CLI mints a development token with it
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "orders.lookup" in done.stdout
