"""Small helpers over the MCP SDK's own client (not Accord's client: it is tested elsewhere)."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp import Client

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import MCP_ERROR_META_KEY
from tests.support.tool_auth import delegation_meta, transport


def error_of(result: types.CallToolResult) -> AccordError:
    """The contract error in an isError result; fails the test when it is not one."""
    assert result.is_error, f"expected an error, got {result.structured_content}"
    assert result.structured_content is None, "errors never go to structuredContent"
    assert result.meta is not None
    assert MCP_ERROR_META_KEY in result.meta
    return AccordError.from_mcp_result(result.model_dump(by_alias=True, mode="json"))


def code_of(result: types.CallToolResult) -> ErrorCode:
    return error_of(result).code


def output_of(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, f"unexpected error: {result.meta}"
    assert isinstance(result.structured_content, dict)
    return result.structured_content


class ServiceClient:
    """``mcp.Client`` as a service granted every tool: each call names, in ``_meta``, the
    customer (and approver) of its own arguments, as a service's runtime would from verified
    facts. Tool servers refuse calls without a credential; the refusals have their own tests
    (tests/security)."""

    def __init__(self, url: str, token: str | None = None) -> None:
        self._client = Client(transport(url, token))

    async def __aenter__(self) -> ServiceClient:
        await self._client.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._client.__aexit__(*exc_info)

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, **options: Any
    ) -> types.CallToolResult:
        args = arguments or {}
        customer, approver = args.get("customer_id"), args.get("approved_by")
        if "meta" not in options and isinstance(customer, str):
            approved = approver if isinstance(approver, str) else None
            options["meta"] = delegation_meta(customer, approved)
        return await self._client.call_tool(name, arguments, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)
