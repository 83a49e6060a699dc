"""tools/list is derived from the contracts: names, schemas, annotations, nothing retyped."""

from __future__ import annotations

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from accord.contracts.tools import tool_contract
from tests.support.processes import Service
from tests.support.tool_auth import bearer, customer_token
from tests.tools.conftest import mcp_url
from tests.tools.helpers import ServiceClient

EXPECTED = {
    "commerce": ["orders.lookup", "customers.history", "orders.customer_history"],
    "payments": ["refunds.issue", "refunds.get", "refunds.list"],
}


def assert_listing_matches_contracts(tools: list[dict[str, object]], names: list[str]) -> None:
    assert [t["name"] for t in tools] == names
    for listed in tools:
        contract = tool_contract(str(listed["name"]))
        assert listed["title"] == contract.title
        assert listed["description"] == contract.description
        assert listed["inputSchema"] == contract.input_schema
        assert listed["outputSchema"] == contract.output_schema
        assert listed["annotations"] == contract.mcp_annotations()


async def test_tools_list_is_the_contract(commerce: Service, payments: Service) -> None:
    for which, service in (("commerce", commerce), ("payments", payments)):
        async with ServiceClient(mcp_url(service)) as client:
            listing = await client.list_tools()
        tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listing.tools]
        assert_listing_matches_contracts(tools, EXPECTED[which])


async def test_tools_list_over_the_2025_11_25_session_handshake(commerce: Service) -> None:
    async with (
        httpx2.AsyncClient(headers=bearer(customer_token())) as http,
        streamable_http_client(mcp_url(commerce), http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert init.capabilities.tools is not None
        listing = await session.list_tools()
    tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listing.tools]
    assert_listing_matches_contracts(tools, EXPECTED["commerce"])


def test_destructive_write_is_annotated_as_such() -> None:
    hints = tool_contract("refunds.issue").mcp_annotations()
    assert hints["destructiveHint"] is True
    assert hints["readOnlyHint"] is False
    assert hints["idempotentHint"] is True
