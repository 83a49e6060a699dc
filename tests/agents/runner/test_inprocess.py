"""The in-process mesh: the real services' apps at their configured URLs, with no socket."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from tests.support.tool_auth import acting_for

from accord.agents.refund.config import TOOLS_FILE
from accord.agents.runner import InProcessMesh
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.client.card import resolve_card
from accord.protocol.in_process import origin_of
from accord.protocol.mcp.client import ToolClient
from accord.protocol.settings import service_url

pytestmark = pytest.mark.timeout(120)


async def test_configured_clients_reach_the_in_process_services(data_dir: Path) -> None:
    async with InProcessMesh() as mesh:
        # MCP: the shipped config (service_url placeholders) reaches the in-process servers,
        # contract check at connect and contract errors included.
        # A service's own token (the process's secret, as the in-process servers verify it),
        # acting for the customer each call is about.
        async with ToolClient.from_config(
            default=TOOLS_FILE, service="tests", in_process=mesh.servers
        ) as tools:
            order = await tools.call(
                "orders.lookup",
                {"order_id": "O-1003", "customer_id": "C-02"},
                acting_for=acting_for("C-02"),
            )
            with pytest.raises(AccordError) as theirs:
                await tools.call(
                    "orders.lookup",
                    {"order_id": "O-1003", "customer_id": "C-01"},
                    acting_for=acting_for("C-01"),
                )
        assert order["final_sale"] is True
        assert theirs.value.code is ErrorCode.NOT_FOUND
        # A2A: the cards come from the in-process agents, at their configured URLs.
        async with httpx.AsyncClient(transport=mesh.transport()) as http:
            policy = await resolve_card(http, service_url("policy"))
            risk = await resolve_card(http, service_url("risk"))
        assert (policy.name, risk.name) == ("policy-check", "risk-check")
    # Closed: nothing in this process serves those URLs any more.
    assert mesh.servers.transport(service_url("commerce") + "/mcp") is None


def test_origins_spell_out_default_ports() -> None:
    assert origin_of("http://127.0.0.1:8710/mcp") == "http://127.0.0.1:8710"
    assert origin_of("http://tools.internal/mcp") == "http://tools.internal:80"
    assert origin_of("https://tools.internal/x") == "https://tools.internal:443"
