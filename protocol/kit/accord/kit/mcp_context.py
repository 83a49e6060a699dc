"""What the MCP checks share for one tool server: an initialized session (the mcp SDK client,
protocol 2025-11-25 over streamable HTTP), the listed tools, the contracts that apply, and every
tool result observed so far, as wire JSON.

Calls of tools whose contract names a customer field carry a delegation in ``_meta`` naming the
customer of the arguments (accord.contracts.tool_access): the kit acts like a service for that
customer, or like the customer itself when its credential is one (the server decides which).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import MCP_ERROR_META_KEY, TOOL_DELEGATION_META_KEY
from accord.contracts.tools import ToolContract, shipped_tool_contracts
from accord.kit.grants import lacks_grant
from accord.kit.model import Skipped
from accord.kit.options import Credential, KitOptions
from accord.kit.probes import ToolProbe, fill

T = TypeVar("T")
KIT_APP = "accord"  # the tenant app a kit delegation names when the token does not say


@dataclass
class Call:
    """One tools/call as the kit saw it: the arguments and the result (or protocol error)."""

    label: str
    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any] | None  # CallToolResult as wire JSON
    protocol_error: str | None = None

    @property
    def sent(self) -> dict[str, Any]:
        return {"method": "tools/call", "name": self.tool, "arguments": self.arguments}

    @property
    def received(self) -> Any:
        return self.result if self.result is not None else {"error": self.protocol_error}

    @property
    def is_error(self) -> bool:
        return self.result is None or bool(self.result.get("isError"))

    @property
    def code(self) -> str | None:
        """The contract error code of a tool error (``_meta[MCP_ERROR_META_KEY].code``)."""
        meta = (self.result or {}).get("_meta")
        payload = meta.get(MCP_ERROR_META_KEY) if isinstance(meta, Mapping) else None
        code = payload.get("code") if isinstance(payload, Mapping) else None
        return code if isinstance(code, str) else None


@dataclass
class MCPContext:
    target: str
    options: KitOptions
    session: ClientSession
    run: str
    listed: dict[str, dict[str, Any]]  # tools/list entries as wire JSON, by name
    contracts: dict[str, ToolContract]
    explicit: bool  # contracts came from --contract: all of them must be listed
    calls: list[Call] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # tool -> why the kit was refused
    _memo: dict[str, Any] = field(default_factory=dict)
    endpoint: str = ""  # the MCP endpoint the session was opened on

    def delegation(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """The ``_meta`` delegation for a call of ``tool``: the arguments' customer, or None."""
        contract = self.contracts.get(tool)
        access = contract.access if contract is not None else None
        customer = (
            arguments.get(access.customer_field) if access and access.customer_field else None
        )
        if not isinstance(customer, str):
            return None
        app = self.options.credential.claims().get("app")
        tenant = {
            "app": app if isinstance(app, str) and app else KIT_APP,
            "user": customer,
            "session": f"kit-{self.run}",
        }
        return {TOOL_DELEGATION_META_KEY: {"tenant": tenant}}

    async def call(
        self,
        label: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        meta: dict[str, Any] | None = None,
        session: ClientSession | None = None,
    ) -> Call:
        """tools/call without the SDK's own output validation: the kit judges the raw result.
        ``meta`` replaces the kit's own delegation; ``session`` another credential's session.

        A PERMISSION_DENIED answer to the kit's own call (its credential and delegation) is
        :class:`Skipped`, naming the grant the tool's contract admits (accord.kit.grants)."""
        sent_meta = self.delegation(tool, arguments) if meta is None else meta
        request = types.CallToolRequest(
            params=types.CallToolRequestParams(
                name=tool,
                arguments=arguments,
                _meta=cast(types.RequestParamsMeta, sent_meta) if sent_meta else None,
            )
        )
        try:
            result = await (session or self.session).send_request(
                request, types.CallToolResult, request_read_timeout_seconds=self.options.timeout_s
            )
            wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            call = Call(label, tool, arguments, wire)
        except MCPError as exc:
            call = Call(label, tool, arguments, None, f"JSON-RPC error {exc.code}: {exc}")
        self.calls.append(call)
        if session is None and meta is None and call.code == ErrorCode.PERMISSION_DENIED:
            contract = self.contracts.get(tool)
            grants = contract.access.grants if contract and contract.access else []
            skipped = lacks_grant(self.options.credential, f"tool {tool}", grants)
            self.refused[tool] = skipped.reason
            raise skipped
        return call

    def nothing_probed(self, tools: Iterable[str], default: str) -> Skipped:
        """The skip of a check that probed none of ``tools``: why the kit's credential was
        refused for them (the grant to mint), else ``default``."""
        reasons = [self.refused[t] for t in tools if t in self.refused]
        return Skipped("; ".join(reasons) if reasons else default)

    async def memo(self, key: str, make: Callable[[], Awaitable[T]]) -> T:
        if key not in self._memo:
            self._memo[key] = await make()
        return self._memo[key]  # type: ignore[no-any-return]

    def checked(self) -> dict[str, ToolContract]:
        """The contracts of listed tools (an explicit contract that is not listed is TOOL-005's)."""
        found = {n: c for n, c in self.contracts.items() if n in self.listed}
        if not found:
            raise Skipped(
                "the server lists no contracted tool (pass --contract FILE for "
                f"third-party tools); listed: {sorted(self.listed)}"
            )
        return found

    def probe(self, tool: str) -> ToolProbe:
        return self.options.probes.tools.get(tool) or ToolProbe()

    def args(self, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return fill(value, self.run) if value is not None else None

    async def valid_call(self, tool: str) -> Call | None:
        """The probe's successful call of ``tool`` (made once per run), None without a probe."""
        args = self.args(self.probe(tool).valid)
        if args is None:
            return None
        return await self.memo(f"valid:{tool}", lambda: self.call("valid input", tool, args))


@dataclass(frozen=True)
class Challenge:
    """How an MCP endpoint answers a request without a credential (TOOL-010)."""

    status: int
    www_authenticate: str
    metadata_url: str | None
    metadata: dict[str, Any] | None
    sent: dict[str, Any]


async def unauthenticated(endpoint: str, timeout_s: float) -> Challenge:
    """POST an ``initialize`` without a credential; follow the challenge to its metadata."""
    sent = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "accord-kit", "version": "1"},
        },
    }
    headers = {"accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(timeout=timeout_s) as http:
        answer = await http.post(endpoint, json=sent, headers=headers)
        challenge = answer.headers.get("www-authenticate", "")
        found = re.search(r'resource_metadata="([^"]+)"', challenge)
        where = found.group(1) if found else None
        document: dict[str, Any] | None = None
        if where is not None:
            try:
                fetched = await http.get(where)
                body = fetched.json() if fetched.status_code == 200 else None
            except (httpx2.HTTPError, ValueError):
                body = None
            document = body if isinstance(body, dict) else None
    return Challenge(answer.status_code, challenge, where, document, sent)


@asynccontextmanager
async def mcp_session(
    url: str, options: KitOptions, credential: Credential | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized ClientSession on ``url`` (with the kit's credential, or ``credential``);
    raises when nothing speaks MCP there."""
    async with AsyncExitStack() as stack:
        http = httpx2.AsyncClient(
            headers=(credential or options.credential).headers(),
            timeout=httpx2.Timeout(options.timeout_s),
        )
        await stack.enter_async_context(http)
        read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
        session = await stack.enter_async_context(ClientSession(read, write))
        await asyncio.wait_for(session.initialize(), options.timeout_s)
        yield session


async def list_tools(session: ClientSession) -> dict[str, dict[str, Any]]:
    listed: dict[str, dict[str, Any]] = {}
    cursor: str | None = None
    for _ in range(100):  # a bound on pages: a server that pages forever is not our problem
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        for tool in page.tools:
            listed[tool.name] = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
        cursor = page.next_cursor
        if not cursor:
            break
    return listed


def contracts_for(options: KitOptions) -> tuple[dict[str, ToolContract], bool]:
    if options.contracts:
        return {c.name: c for c in options.contracts}, True
    return shipped_tool_contracts(), False
