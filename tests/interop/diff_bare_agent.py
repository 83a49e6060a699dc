"""The bare side of the differential test (tests/interop/test_a2a_differential.py): an echo
agent built with a2a-sdk alone, served by a real uvicorn process:

    python -m uvicorn --factory tests.interop.diff_bare_agent:create_app --port N

with ACCORD_TEST_PORT the port (the card's URL), as tests/protocol/a2a/conftest.py's
``run_agent`` starts it.

``reply`` answers with a Message (no task); ``ask`` waits for input, and the answer completes
the task with ``echo: <answer>``; any other text completes at once with ``echo: <text>``.
tests/interop/diff_accord_agent.py is the same agent on Accord's agent API.
"""

from __future__ import annotations

import os

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
    Part,
    Role,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

ASK_TEXT = "say more"
ARTIFACT_NAME = "echo"


class BareEchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        task = context.current_task
        if task is None and text == "reply":
            assert context.message is not None
            await event_queue.enqueue_event(
                new_text_message(
                    f"echo: {text}", context_id=context.message.context_id, role=Role.ROLE_AGENT
                )
            )
            return
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if context.current_task is None and text == "ask":
            asking = new_text_message(
                ASK_TEXT, context_id=task.context_id, task_id=task.id, role=Role.ROLE_AGENT
            )
            await updater.requires_input(asking)
            return
        await updater.add_artifact([Part(text=f"echo: {text}")], name=ARTIFACT_NAME)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is not None:
            await TaskUpdater(event_queue, task.id, task.context_id).cancel()


def card(port: int) -> AgentCard:
    url = f"http://127.0.0.1:{port}"
    return AgentCard(
        name="echo",
        description="Echoes what it is told.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text.", tags=["test"])],
    )


def create_app() -> Starlette:
    return bare_app(BareEchoExecutor(), int(os.environ["ACCORD_TEST_PORT"]))


def bare_app(executor: AgentExecutor, port: int) -> Starlette:
    """``executor`` served by the SDK alone: its request handler, an in-memory store, both
    bindings and a /healthz (also bench/echo_overhead.py's bare agent)."""
    served = card(port)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=served
    )

    async def healthz(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    routes = [
        Route("/healthz", healthz),
        *create_agent_card_routes(served),
        *create_jsonrpc_routes(handler, rpc_url="/"),
        *create_rest_routes(handler),
    ]
    return Starlette(routes=routes)
