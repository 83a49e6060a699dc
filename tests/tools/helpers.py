"""Small helpers over the MCP SDK's own client (not Accord's client: it is tested elsewhere)."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import MCP_ERROR_META_KEY


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
