"""The orchestrator's MCP tool client, connected on first use and kept open.

ToolClient keeps its sessions in a task group that must be entered and left by one task, so a
keeper task owns it for the life of the process. Connecting lazily lets the orchestrator start
(and recover its workflows' state) before the tool servers are up; a failed connection is
tried again on the next call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from accord.protocol.mcp.client import ToolClient


class Tools:
    def __init__(self) -> None:
        self._client: ToolClient | None = None
        self._connecting: asyncio.Future[ToolClient] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        traceparent: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        client = await self._connected()
        return await client.call(
            tool, arguments, traceparent=traceparent, idempotency_key=idempotency_key
        )

    async def _connected(self) -> ToolClient:
        if self._client is not None:
            return self._client
        if self._connecting is None or self._connecting.done():
            self._connecting = asyncio.get_running_loop().create_future()
            self._keeper = asyncio.create_task(self._keep(self._connecting), name="mcp-tools")
        return await asyncio.shield(self._connecting)

    async def _keep(self, ready: asyncio.Future[ToolClient]) -> None:
        try:
            async with ToolClient.from_config() as client:
                self._client = client
                ready.set_result(client)
                await self._stop.wait()
        except Exception as error:
            if not ready.done():
                ready.set_exception(error)
                ready.exception()  # retrieved: a failed connect is reported to the caller only
        finally:
            self._client = None

    async def aclose(self) -> None:
        self._stop.set()
        if self._keeper is not None:
            await asyncio.gather(self._keeper, return_exceptions=True)
