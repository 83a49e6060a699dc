"""A small A2A agent on a2a-sdk 1.3.0 alone, broken on purpose in one way per mode.

Run: ``python -m tests.kit.broken_agent MODE PORT``. It imports nothing of Accord but the
contract package, so the kit is tested against an implementation other helpers did not write.

    correct     follows the contract (the control)
    mapping     reports COMPLETED while its dev.accord/status says failed         (STATUS-005)
    illegal     jumps from SUBMITTED straight to INPUT_REQUIRED (queued->waiting) (STATUS-003)
    no-code     fails without the contract code (no metadata, no error DataPart)  (ERR-002, ENV-004)
    leak        one task store for every caller: another tenant reads the task    (AGENT-004)
    schemas     serves skill schemas other than the ones its card's digest names  (AGENT-002)
    fail-decline  ends a request it declines FAILED, not REJECTED                    (STATUS-008)
    no-spent    never reports what a task spent of its envelope                   (ENV-010)
    late-answer accepts a message to a task that has ended (answers with the task) (ENV-009)
    v0.2        not broken: writes status metadata as Accord 0.2 did (``rejected`` for a
                decline, ``waiting_reason`` beside ``waitingReason``), which 0.3 still reads

A first message whose DataPart says ``{"decline": true}`` is declined (the kit's decline probe):
REJECTED with POLICY_DENIED (status ``failed``; ``rejected`` in mode v0.2), or FAILED in mode
fail-decline.

Credentials: ``Authorization: Bearer tenant-<name>``; the tenant is the task owner.
"""

from __future__ import annotations

import hashlib
import json
import sys
import uuid
from datetime import UTC, datetime
from typing import Any

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    Message,
    Part,
    Role,
    SecurityRequirement,
    SecurityScheme,
    SendMessageRequest,
    StringList,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict
from starlette.applications import Starlette
from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    SimpleUser,
)
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from accord.contracts.envelope import parse_envelope
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import (
    CARD_SKILL_SCHEMAS_PARAM,
    CONTRACT_EXTENSION_URI,
    DELEGATION_EXTENSION_URI,
    ERROR_DATA_KIND,
    SKILL_SCHEMAS_PATH,
    SPENT_META_KEY,
    STATUS_META_KEY,
    TOOL_CALLS_SPENT_META_KEY,
)
from accord.contracts.status import Status, WaitingReason

MODES = (
    "correct",
    "mapping",
    "illegal",
    "no-code",
    "leak",
    "schemas",
    "fail-decline",
    "late-answer",
    "no-spent",
    "v0.2",
)
TS = TaskState
DECLARED = (
    ErrorCode.INVALID_INPUT,
    ErrorCode.BUDGET_EXHAUSTED,
    ErrorCode.RETRYABLE_TIMEOUT,
    ErrorCode.POLICY_DENIED,
)


# The skill schema document, written here by hand (not by Accord's card_schemas.py): the kit is
# checked against a second implementation of the same wire format.
SCHEMAS = json.dumps(
    {
        "agent": "broken-agent",
        "version": "0.0.1",
        "skills": {
            "refund.policy": {
                "input": {"type": "object"},
                "output": {"type": "object", "required": ["rule"]},
            }
        },
    }
).encode()


def card(url: str) -> AgentCard:
    return AgentCard(
        name="broken-agent",
        description="An agent broken on purpose for the contract test kit's own tests.",
        version="0.0.1",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            extensions=[
                AgentExtension(
                    uri=CONTRACT_EXTENSION_URI,
                    params={
                        "waiting_reasons": [WaitingReason.INPUT.value],
                        "errors": [c.value for c in DECLARED],
                        CARD_SKILL_SCHEMAS_PARAM: {
                            "url": url + SKILL_SCHEMAS_PATH,
                            "sha256": hashlib.sha256(SCHEMAS).hexdigest(),
                        },
                    },
                ),
                AgentExtension(uri=DELEGATION_EXTENSION_URI),
            ],
        ),
        security_schemes={
            "bearer": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer")
            )
        },
        security_requirements=[SecurityRequirement(schemes={"bearer": StringList(list=[])})],
        default_input_modes=["application/json"],
        default_output_modes=["application/json"],
        skills=[
            AgentSkill(id="refund.policy", name="policy", description="answers", tags=["test"])
        ],
    )


class BrokenExecutor(AgentExecutor):
    def __init__(self, mode: str) -> None:
        self.mode = mode

    def _meta(
        self,
        status: Status | str,
        reason: WaitingReason | None = None,
        error: AccordError | None = None,
    ) -> Any:
        meta = {
            "status": str(status),
            "waitingReason": reason.value if reason else None,
            "error": error.to_dict() if error else None,
            "node": None,
        }
        if self.mode == "v0.2":  # what a 0.2 agent wrote: contract 1.0's key too
            meta["waiting_reason"] = meta["waitingReason"]
        return {STATUS_META_KEY: meta}

    async def _emit(
        self,
        queue: EventQueue,
        ctx: RequestContext,
        context_id: str,
        state: Any,
        meta: Any = None,
        parts: list[Part] | None = None,
        spent: int | None = None,
    ) -> None:
        message = Message(
            message_id=uuid.uuid4().hex,
            role=Role.ROLE_AGENT,
            task_id=str(ctx.task_id),
            context_id=context_id,
            parts=parts or [],
        )
        if meta is not None:
            message.metadata.update(meta)
        status = TaskStatus(state=state, message=message)
        status.timestamp.FromDatetime(datetime.now(UTC))
        event = TaskStatusUpdateEvent(
            task_id=str(ctx.task_id), context_id=context_id, status=status
        )
        if spent is not None and self.mode != "no-spent":
            # A turn costs one unit and no tool call; the SDK merges this into the task.
            event.metadata.update({SPENT_META_KEY: spent, TOOL_CALLS_SPENT_META_KEY: 0})
        await queue.enqueue_event(event)

    async def _fail(
        self, queue: EventQueue, ctx: RequestContext, context_id: str, error: AccordError
    ) -> None:
        if self.mode == "no-code":
            await self._emit(
                queue, ctx, context_id, TS.TASK_STATE_FAILED, parts=[Part(text="it failed")]
            )
            return
        part = Part(
            data=ParseDict({"kind": ERROR_DATA_KIND, **error.to_dict()}, struct_pb2.Value())
        )
        state = TS.TASK_STATE_CANCELED if error.code is ErrorCode.CANCELED else TS.TASK_STATE_FAILED
        await self._emit(
            queue, ctx, context_id, state, self._meta(Status.FAILED, error=error), [part]
        )

    async def _decline(self, queue: EventQueue, ctx: RequestContext, context_id: str) -> None:
        error = AccordError(ErrorCode.POLICY_DENIED, "this agent does not do that")
        if self.mode == "fail-decline":
            await self._fail(queue, ctx, context_id, error)
            return
        part = Part(
            data=ParseDict({"kind": ERROR_DATA_KIND, **error.to_dict()}, struct_pb2.Value())
        )
        # Contract 1.2's sixth status, as a 0.2 agent wrote it; a decline is failed since 2.0.
        meta = self._meta("rejected" if self.mode == "v0.2" else Status.FAILED, error=error)
        await self._emit(queue, ctx, context_id, TS.TASK_STATE_REJECTED, meta, [part])

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        current = context.current_task
        context_id = current.context_id if current else str(context.context_id)
        if current is None:
            await event_queue.enqueue_event(
                Task(
                    id=str(context.task_id),
                    context_id=context_id,
                    status=TaskStatus(state=TS.TASK_STATE_SUBMITTED),
                    history=[context.message] if context.message else [],
                )
            )
            message = context.message
            raw = (
                MessageToDict(message.metadata) if message and message.HasField("metadata") else {}
            )
            try:
                envelope = parse_envelope(raw, required=False)
            except AccordError as error:
                await self._fail(event_queue, context, context_id, error)
                return
            if envelope is not None and envelope.budget.units == 0:
                await self._fail(
                    event_queue, context, context_id, AccordError(ErrorCode.BUDGET_EXHAUSTED)
                )
                return
            if envelope is not None and envelope.budget.expired():
                await self._fail(
                    event_queue, context, context_id, AccordError(ErrorCode.RETRYABLE_TIMEOUT)
                )
                return
            if self.mode != "illegal":
                await self._emit(
                    event_queue,
                    context,
                    context_id,
                    TS.TASK_STATE_WORKING,
                    self._meta(Status.RUNNING),
                    spent=1,
                )
            if _declines(message):
                await self._decline(event_queue, context, context_id)
                return
            await self._emit(
                event_queue,
                context,
                context_id,
                TS.TASK_STATE_INPUT_REQUIRED,
                self._meta(Status.WAITING, WaitingReason.INPUT),
                [Part(text="evidence, please")],
                spent=1,
            )
            return
        await self._emit(
            event_queue,
            context,
            context_id,
            TS.TASK_STATE_WORKING,
            self._meta(Status.RUNNING),
            spent=2,
        )
        final = (
            self._meta(Status.FAILED, error=AccordError(ErrorCode.INTERNAL))
            if (self.mode == "mapping")
            else self._meta(Status.COMPLETED)
        )
        await self._emit(
            event_queue,
            context,
            context_id,
            TS.TASK_STATE_COMPLETED,
            final,
            [Part(text="done")],
            spent=2,
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is not None:
            await self._fail(event_queue, context, task.context_id, AccordError(ErrorCode.CANCELED))


def _declines(message: Message | None) -> bool:
    for part in message.parts if message is not None else []:
        if part.HasField("data"):
            body = MessageToDict(part.data)
            return isinstance(body, dict) and body.get("decline") is True
    return False


class TenantAuth(AuthenticationBackend):
    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, SimpleUser] | None:
        if conn.url.path.startswith("/.well-known") or conn.url.path in (
            "/healthz",
            SKILL_SCHEMAS_PATH,
        ):
            return None
        header = conn.headers.get("authorization", "")
        if not header.startswith("Bearer tenant-"):
            raise AuthenticationError("missing or invalid credential")
        return AuthCredentials(["user"]), SimpleUser(header.removeprefix("Bearer "))


def _unauthenticated(_: HTTPConnection, exc: Exception) -> Response:
    error = AccordError(ErrorCode.UNAUTHENTICATED, str(exc))
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": error.to_jsonrpc_error()},
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer realm="broken"'},
    )


class LateAnswerHandler(DefaultRequestHandler):
    """Answers a message to an ended task with that task instead of refusing it."""

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        task_id = params.message.task_id
        task = await self.task_store.get(task_id, context) if task_id else None
        if task is not None and task.status.state in _ENDED:
            return task
        return await super().on_message_send(params, context)


_ENDED = (TS.TASK_STATE_CANCELED, TS.TASK_STATE_COMPLETED, TS.TASK_STATE_FAILED)


def build_app(mode: str, port: int) -> Starlette:
    url = f"http://127.0.0.1:{port}"
    store = (
        InMemoryTaskStore(owner_resolver=lambda _ctx: "everyone")
        if mode == "leak"
        else InMemoryTaskStore()
    )
    handler_type = LateAnswerHandler if mode == "late-answer" else DefaultRequestHandler
    handler = handler_type(
        agent_executor=BrokenExecutor(mode), task_store=store, agent_card=card(url)
    )

    async def healthz(_: Any) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    served = SCHEMAS + b" " if mode == "schemas" else SCHEMAS  # other bytes than the digest's
    tag = '"' + hashlib.sha256(served).hexdigest() + '"'

    async def schemas(request: Any) -> Response:
        headers = {"ETag": tag, "Cache-Control": "max-age=60"}
        if request.headers.get("if-none-match") == tag:
            return Response(status_code=304, headers=headers)
        return Response(served, media_type="application/json", headers=headers)

    routes = [
        Route("/healthz", healthz),
        Route(SKILL_SCHEMAS_PATH, schemas),
        *create_agent_card_routes(card(url)),
        *create_jsonrpc_routes(handler, rpc_url="/"),
    ]
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(AuthenticationMiddleware, backend=TenantAuth(), on_error=_unauthenticated)
        ],
    )


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    assert mode in MODES, mode
    uvicorn.run(build_app(mode, port), host="127.0.0.1", port=port, log_level="warning")
