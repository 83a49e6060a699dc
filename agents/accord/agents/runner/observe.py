"""The refund workflow's collaborators, observed: every call becomes a pair of events.

The Runner observes the process's one tool client (:func:`tool_call_events`, given to
``ToolClient.observe``) and hands the workflow's nodes these instead of the orchestrator's own
``Peers`` and router metrics; the nodes are unchanged. An MCP tool call is a ``function_call``
(author: the orchestrator) and a ``function_response`` (author: the tool, e.g.
``orders.lookup``); an A2A agent call likewise, with the agent's name (``policy-check``) and
its progress lines as ``partial`` events; a model run is an event with ``usage``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import httpx

from accord.agents.refund.peers import Peers, peer_token
from accord.agents.runner.events import Part, Usage, new_id
from accord.agents.runner.hub import ORCHESTRATOR, Hub
from accord.contracts.envelope import DelegationEnvelope
from accord.contracts.errors import AccordError
from accord.protocol.a2a.client import DEFAULT_TIMEOUT, A2AClient, ResolvedCard, TaskView
from accord.protocol.a2a.client.card import resolve_card
from accord.protocol.mcp.client import ToolCallEvent, ToolObserver
from accord.runtime.models import Metrics, RunRecord

Update = Callable[[TaskView], Awaitable[None] | None]
MAX_PROGRESS: Final = 500


def _error_response(error: AccordError) -> dict[str, Any]:
    return {"error": error.to_dict()}


# -- MCP tools ----------------------------------------------------------------------------
def tool_call_events(hub: Hub) -> ToolObserver:
    """An observer for the process's tool client (``ToolClient.observe``): each call a
    ``function_call`` by the orchestrator and a ``function_response`` by the tool."""

    def observe(event: ToolCallEvent) -> None:
        tool, call_id = event.tool, event.call_id
        if not event.ended:
            hub.emit(ORCHESTRATOR, [Part.call(tool, event.arguments, call_id)])
        elif event.error is not None:
            hub.emit(tool, [Part.response(tool, _error_response(event.error), call_id)])
        else:
            hub.emit(tool, [Part.response(tool, event.result or {}, call_id)])

    return observe


# -- A2A agents ---------------------------------------------------------------------------
class ObservedAgent(A2AClient):
    """An A2A client whose ``send`` is a function call named after the agent."""

    def __init__(
        self, hub: Hub, name: str, card: ResolvedCard, http: httpx.AsyncClient, token: str
    ):
        super().__init__(card, http, token=token)
        self._hub = hub
        self._name = name

    async def send(
        self,
        *,
        text: str | None = None,
        data: Mapping[str, Any] | None = None,
        task: TaskView | str | None = None,
        context_id: str | None = None,
        envelope: DelegationEnvelope | None = None,
        traceparent: str | None = None,
        skill: str | None = None,
        streaming: bool | None = None,
        deadline_s: float | None = None,
        on_update: Update | None = None,
    ) -> TaskView:
        call_id = new_id()
        args: dict[str, Any] = {"skill": skill, "data": dict(data) if data else None}
        if text is not None:
            args["text"] = text
        if task is not None:
            args["task_id"] = task.task_id if isinstance(task, TaskView) else task
        self._hub.emit(ORCHESTRATOR, [Part.call(self._name, args, call_id)])
        said = ""

        async def relay(view: TaskView) -> None:
            nonlocal said
            if view.status_text and view.status_text != said and not view.is_interrupted:
                said = view.status_text
                self._hub.emit(self._name, [Part.thought_of(said[:MAX_PROGRESS])], partial=True)
            if on_update is not None:
                result = on_update(view)
                if result is not None:
                    await result

        try:
            view = await super().send(
                text=text,
                data=data,
                task=task,
                context_id=context_id,
                envelope=envelope,
                traceparent=traceparent,
                skill=skill,
                streaming=streaming,
                deadline_s=deadline_s,
                on_update=relay,
            )
        except AccordError as error:
            self._hub.emit(self._name, [Part.response(self._name, _error_response(error), call_id)])
            raise
        self._hub.emit(self._name, [Part.response(self._name, view.to_dict(), call_id)])
        return view


class ObservedPeers(Peers):
    """policy-check and risk-check, reached at their URLs (or in this process: ``transport``)."""

    def __init__(
        self,
        hub: Hub,
        urls: dict[str, str],
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(urls)
        self._hub = hub
        self._agent_urls = urls
        self._agent_http = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT, transport=transport)
        self._resolved: dict[str, ResolvedCard] = {}

    async def client(self, name: str) -> A2AClient:
        card = self._resolved.get(name)
        if card is None:
            card = await resolve_card(self._agent_http, self._agent_urls[name])
            self._resolved[name] = card
        bearer = peer_token()  # kept or re-read there
        return ObservedAgent(self._hub, card.name, card, self._agent_http, bearer)

    async def aclose(self) -> None:
        await self._agent_http.aclose()
        await super().aclose()


# -- models -------------------------------------------------------------------------------
class ObservedMetrics(Metrics):
    """The router's metrics; each run is also a usage event of the workflow that made it."""

    def __init__(self, hub: Hub) -> None:
        super().__init__()
        self._hub = hub

    def add(self, record: RunRecord) -> None:
        super().add(record)
        error = f", {record.error.value}" if record.error is not None else ""
        note = (
            f"model {record.task}: {record.route.value} route, {record.status.value}{error}, "
            f"{record.units} units, {record.calls} calls"
        )
        self._hub.emit(
            self._hub.running_node(),
            [Part.thought_of(note)],
            usage=Usage(units=record.units, calls=record.calls, runs=1),
        )
