"""An A2A 1.0 agent that knows nothing of Accord, built with a2a-sdk alone, for client tests.

    python -m tests.protocol.a2a_client.foreign_agent --port N

It answers by the message text: ``hello`` completes with a text and a data artifact, ``fail``
fails, ``reject`` rejects, ``ask`` waits for input (then completes with the answer), ``auth``
waits for auth, ``slow`` keeps working until canceled. Its statuses carry no Accord metadata,
so the client must fall back on the contract's defaults. No authentication, in-memory tasks.
"""

from __future__ import annotations

import argparse
import asyncio

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.server.tasks.task_updater import TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
)
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def _text(updater: TaskUpdater, text: str) -> Message:
    return new_text_message(
        text, context_id=updater.context_id, task_id=updater.task_id, role=Role.ROLE_AGENT
    )


class ForeignExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = context.get_user_input().strip()
        if context.current_task is not None:  # an answer to "ask"
            await updater.add_artifact([Part(text=f"you said {text}")])
            await updater.complete()
            return
        await updater.start_work()
        if text == "hello":
            data = Part(data=ParseDict({"greeting": "hi", "n": 3}, struct_pb2.Value()))
            await updater.add_artifact([Part(text="hi there"), data], name="answer")
            await updater.complete()
        elif text == "fail":
            await updater.failed(_text(updater, "the printer is on fire"))
        elif text == "reject":
            await updater.reject(_text(updater, "not doing that"))
        elif text == "ask":
            await updater.requires_input(_text(updater, "which colour?"))
        elif text == "auth":
            await updater.requires_auth(_text(updater, "sign in first"))
        elif text == "slow":
            await asyncio.sleep(60)
            await updater.complete()
        else:
            await updater.failed(_text(updater, f"unknown command {text!r}"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is not None:
            await TaskUpdater(event_queue, task.id, task.context_id).cancel()


def create_app(port: int) -> Starlette:
    url = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="foreign",
        description="An A2A agent that is not Accord.",
        version="0.0.1",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="cmd", name="Commands", description="Does what the text says.", tags=["test"]
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=ForeignExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )

    async def healthz(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    routes = [
        Route("/healthz", healthz),
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/"),
        *create_rest_routes(handler),
    ]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    uvicorn.run(create_app(port), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
