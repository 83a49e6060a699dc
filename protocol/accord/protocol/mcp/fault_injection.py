"""Fault injection in a tool server (``ACCORD_FAULTS``): its handlers, wrapped when it is built.

:class:`~accord.protocol.mcp.server.ToolServer` passes its tools through
:func:`development_tools` once, in its constructor. Outside development mode, or with no plan,
that returns the very same tools: the server's call path has no fault branch, and a production
server runs no fault code at all. With ``ACCORD_DEV=1`` and ``ACCORD_FAULTS`` set, each planned
tool's handler is replaced by one that waits, answers the planned error instead of running, or
runs and then answers it (the grammar: accord.protocol.dev.faults).

A fault sits where the handler sits: after the caller's access, the arguments and the
delegation were checked, so a call the server refuses is refused as without the plan. Tests
in-process wrap tools themselves: ``ToolServer(name, version, with_faults(tools, plan))``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from accord.contracts.errors import AccordError
from accord.protocol.dev.faults import ToolFaults, planned_faults
from accord.protocol.settings import current

if TYPE_CHECKING:  # server.py imports this module: the types only, to keep one direction
    from accord.protocol.mcp.server import CallContext, ContractTool, ToolHandler


def development_tools(tools: Sequence[ContractTool]) -> Sequence[ContractTool]:
    """``tools`` as this process serves them: the same objects unless development mode plans
    faults for some of them (a code a tool does not declare is a ValueError naming it)."""
    settings = current()
    if not (settings.dev and settings.faults):
        return tools
    plan = planned_faults({t.contract.name: t.declared for t in tools}, settings.faults)
    return with_faults(tools, plan)


def with_faults(
    tools: Sequence[ContractTool], plan: Mapping[str, ToolFaults]
) -> list[ContractTool]:
    """Each tool of ``plan`` with its handler wrapped by its faults; the others as given."""
    return [
        dataclasses.replace(t, handler=FaultyHandler(t.handler, plan[t.contract.name]))
        if t.contract.name in plan
        else t
        for t in tools
    ]


@dataclass(frozen=True)
class FaultyHandler:
    """A tool's handler behind its planned faults (the plan's counter is per process)."""

    handler: ToolHandler
    faults: ToolFaults

    async def __call__(self, arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
        faults = self.faults
        if faults.latency_ms:
            await asyncio.sleep(faults.latency_ms / 1000)
        injected = faults.next_error()
        if injected is not None and not faults.after:
            raise AccordError(injected, f"injected fault in {context.tool}")
        output = await self.handler(arguments, context)
        if injected is not None:
            raise AccordError(injected, f"injected fault in {context.tool} (after it ran)")
        return output
