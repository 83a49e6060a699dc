"""build_agent_app: the Starlette app every Accord agent is served as.

    card (public)          GET  /.well-known/agent-card.json
    skill schemas (public) GET  /accord/skill-schemas.json (named by the card; card_schemas.py)
    JSON-RPC               POST /            (A2A 1.0 methods)
    HTTP+JSON (REST)       POST /message:send, /message:stream; GET /tasks, /tasks/{id}; ...
    health                 GET  /healthz (alive), /readyz (store and dependencies reachable)
    signing keys (public)  GET  /.well-known/jwks.json (the keys its own tokens are signed with)

In front of the A2A routes sits the :class:`~accord.protocol.a2a.server.gate.Gate` (credential, body
limit, A2A-Version, acting on behalf). Tasks live in :class:`AccordTaskStore` owned by the
principal's ``app/subject``; a gone process's unfinished tasks are recovered (replica-safe).
Every send is keyed by ``(principal, messageId)`` (:class:`SendKeys`, the gate's claim and the
:class:`IdempotentRequestHandler`): a copy of a message is answered with what the first made.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any, Final

from a2a.server.agent_execution import RequestContext, SimpleRequestContextBuilder
from a2a.server.context import ServerCallContext
from a2a.server.routes import (
    DefaultServerCallContextBuilder,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks.task_store import TaskStore
from a2a.types import SendMessageRequest, Task, TaskState
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from a2a.utils.errors import UnsupportedOperationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from accord.contracts.agents import AgentContract
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import HEALTH_PATH, READY_PATH, SERVICE_JWKS_PATH, SKILL_SCHEMAS_PATH
from accord.contracts.status import TERMINAL, from_a2a
from accord.protocol.a2a.server.card import build_agent_card
from accord.protocol.a2a.server.card_route import agent_card_route
from accord.protocol.a2a.server.card_schemas import encode_schema_document, skill_schemas_route
from accord.protocol.a2a.server.cors import browser_cors
from accord.protocol.a2a.server.derived_store import DerivedTaskStore
from accord.protocol.a2a.server.executor import ContractExecutor
from accord.protocol.a2a.server.gate import MAX_BODY_BYTES, Gate, PrincipalUser
from accord.protocol.a2a.server.send_claim import SEND_STATE_KEY, SendClaim
from accord.protocol.a2a.server.send_handler import IdempotentRequestHandler
from accord.protocol.a2a.server.send_keys import SendKeys, TaskExists
from accord.protocol.a2a.server.send_tables import send_schema, send_table, send_table_name
from accord.protocol.a2a.server.store import AccordTaskStore
from accord.protocol.a2a.server.store_tables import table_name, task_schema, task_table
from accord.protocol.a2a.server.turn import ENVELOPE_STATE_KEY, PRINCIPAL_STATE_KEY
from accord.protocol.auth.anonymous import AnonymousAuthenticator
from accord.protocol.auth.verify import Authenticator
from accord.protocol.breaker import degraded
from accord.protocol.jwks_route import jwks_route
from accord.protocol.push.delivery import PushNotifications
from accord.protocol.push.owners import reader_of
from accord.protocol.push.store import PushStore
from accord.protocol.push.tables import push_schema, push_table_name
from accord.protocol.request_body import reading_kept_body
from accord.protocol.settings import (
    ServeOptions,
    SettingsError,
    database_url,
    given_service_url,
    service_url,
)
from accord.protocol.storage.schema import StoreRef

logger = logging.getLogger(__name__)

RPC_PATH: Final = "/"
IDLE_RELEASE_S: Final = 1.0
"""A task that stopped to wait (for input, an approver, a credential) is dropped from memory
this long after its last request or subscriber is done with it: a waiting task lives in the
store alone, and the next message, subscription or cancel picks it up from there. Not 0: a
client's next message that is already on its way finds it live. It was 30 s, and then every
task that stopped to wait held the SDK's per-task objects (two asyncio tasks, queues, its copy
of the task) for those 30 s: ~100 KB each, most of what a waiting request cost (#35)."""
WILDCARD_HOSTS: Final = frozenset({"0.0.0.0", "::", ""})


class PrincipalContextBuilder(DefaultServerCallContextBuilder):
    """Hands the executor what the gate verified: the principal (the user is the owner scope)
    and the envelope of the request's message."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        user = request.scope.get("user")
        if isinstance(user, PrincipalUser):
            context.state[PRINCIPAL_STATE_KEY] = user.principal
        context.state[ENVELOPE_STATE_KEY] = request.scope.get(ENVELOPE_STATE_KEY)
        context.state[SEND_STATE_KEY] = request.scope.get(SEND_STATE_KEY)
        return context


class TaskContextBuilder(SimpleRequestContextBuilder):
    """A follow-up that names its task but not its context continues in the task's context,
    and one that names a terminal task is refused, both from the task as the store has it.

    The SDK would otherwise make up a fresh context id, and a task that is no longer live in
    this process (after a restart) then fails with "Context in event doesn't match". A new task
    gets the id its message's key assigned (send_claim.py), so every copy of the message, on
    any replica, names the same task. And the SDK judges "terminal" by its live copy of the
    task, outside its own cluster mode: a task waiting here that another replica ended
    (canceled) would run a turn from a terminal state (CONTRACT_VIOLATION, HTTP 500). The store
    is the one truth of a task's state.
    """

    def __init__(self, store: TaskStore) -> None:
        super().__init__(should_populate_referred_tasks=False, task_store=None)
        self._store = store

    async def build(
        self,
        context: ServerCallContext,
        params: SendMessageRequest | None = None,
        task_id: str | None = None,
        context_id: str | None = None,
        task: Task | None = None,
    ) -> RequestContext:
        claim = context.state.get(SEND_STATE_KEY)
        if not task_id and isinstance(claim, SendClaim):
            task_id = claim.task_id
        elif task_id:
            stored = await self._store.get(task_id, context)
            state = TaskState.Name(stored.status.state) if stored is not None else None
            if state is not None and from_a2a(state).status in TERMINAL:
                raise UnsupportedOperationError(f"Task {task_id} is in terminal state: {state}")
            if stored is not None and not context_id:
                context_id = stored.context_id
        return await super().build(context, params, task_id, context_id, task)


def public_url(options: ServeOptions, service_name: str) -> str:
    if options.public_url:
        # Behind a load balancer: clients refuse a card that points at another origin than
        # the one they were given (accord.protocol.a2a.origins), and must not be sent to a
        # replica past the balancer.
        return options.public_url
    if options.host in WILDCARD_HOSTS and given_service_url(service_name) is not None:
        # Bound to every interface (a container): the card names the URL the mesh is
        # configured with (ACCORD_POLICY_URL...), the origin its clients were given, since a
        # client refuses a card that points elsewhere (accord.protocol.a2a.origins).
        return service_url(service_name)
    if options.port:
        return f"http://{options.host}:{options.port}"
    try:
        return service_url(service_name)  # the port the service declares
    except SettingsError:
        return f"http://{options.host}"


def task_store_url(options: ServeOptions, service_name: str) -> str:
    """The database of the agent's task store: ``--database-url``, else the service default."""
    return options.database_url or database_url(service_name)


def task_store_ref(options: ServeOptions, service_name: str) -> StoreRef:
    """The agent's task table, for `accord db` (``ServiceSpec.stores``)."""
    schema = task_schema(task_table(table_name(service_name)))
    return StoreRef(schema, task_store_url(options, service_name))


def _authenticator(options: ServeOptions) -> Authenticator:
    """The environment's, or (``accord serve --auth none``, checked by the CLI) one that
    admits callers without a credential (accord.protocol.auth.anonymous)."""
    if options.auth_none:
        return AnonymousAuthenticator()
    return Authenticator()


def send_keys_ref(options: ServeOptions, service_name: str) -> StoreRef:
    """The agent's sent-message keys (idempotent send), for `accord db`."""
    schema = send_schema(send_table(send_table_name(service_name)))
    return StoreRef(schema, task_store_url(options, service_name))


def task_exists(store: TaskStore) -> TaskExists:
    """Whether ``store`` still holds a task of an owner (send keys and push configs live as
    long as it does)."""
    if isinstance(store, AccordTaskStore):
        return store.has
    if isinstance(store, DerivedTaskStore):
        return store.has

    async def unknown(owner: str, task_id: str) -> bool:
        del owner, task_id
        return False  # a store that cannot say: its keys and configs go after the retention

    return unknown


def push_store_ref(options: ServeOptions, service_name: str) -> StoreRef:
    """The agent's push notification tables, for `accord db`."""
    return StoreRef(
        push_schema(push_table_name(service_name)), task_store_url(options, service_name)
    )


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def build_agent_app(
    contract: AgentContract,
    executor: ContractExecutor,
    options: ServeOptions,
    *,
    service_name: str,
    readiness: Callable[[], Awaitable[bool]] | None = None,
    lifespan_hooks: Sequence[Callable[[], AbstractAsyncContextManager[None]]] = (),
    task_store: TaskStore | None = None,
    authenticator: Authenticator | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    browser_origins: Sequence[str] = (),
    push_from_handler: bool = True,
) -> Starlette:
    """The agent's ASGI app; see the module docstring.

    ``task_store`` replaces the durable store (benchmarks, tests); ``authenticator`` replaces
    the one built from the environment; ``browser_origins`` are the web pages allowed to call
    the agent from a browser (CORS, :mod:`accord.protocol.a2a.server.cors`; none by default). Push
    notifications (``app.state.push``) are sent for every event the request handler sees; an
    agent whose tasks change elsewhere (a workflow log) passes ``push_from_handler=False`` and
    calls ``app.state.push.task_changed(id)``.
    """
    card = build_agent_card(contract, public_url(options, service_name))
    store = task_store or AccordTaskStore(
        task_store_url(options, service_name), table=table_name(service_name)
    )
    push_store = PushStore(
        task_store_url(options, service_name), table=push_table_name(service_name)
    )
    # Configs go with their task: purged once the task store no longer holds it.
    push = PushNotifications(push_store, reader_of(store), task_exists=task_exists(store))
    sends = SendKeys(task_store_url(options, service_name), table=send_table_name(service_name))
    handler = IdempotentRequestHandler(
        agent_executor=executor,
        task_store=store,
        agent_card=card,
        request_context_builder=TaskContextBuilder(store),
        interrupted_task_timeout=IDLE_RELEASE_S,
        push_config_store=push_store,
        push_sender=push if push_from_handler else None,
    )
    context_builder = PrincipalContextBuilder()

    async def healthz(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "service": service_name})

    async def readyz(_: Request) -> JSONResponse:
        ok = True
        try:
            if isinstance(store, AccordTaskStore):
                await store.open()
                await store.db.ping()
            # The task store's database (the send keys live there whatever the task store):
            # while it is away nothing can be sent here, so the balancer takes this replica out.
            if sends.db.is_open:
                await sends.db.ping()
            if readiness is not None:
                ok = await readiness()
        except AccordError as error:  # a dependency is away: said once per probe, no traceback
            logger.warning("not ready: %s", error.message)
            ok = False
        except Exception:
            logger.exception("readiness check failed")
            ok = False
        if ok:
            # Ready, and which dependencies it is waiting out (their breakers are open): a
            # degraded dependency delays work here, so the pod stays in the load balancer.
            body: dict[str, Any] = {"status": "ready", "service": service_name}
            if slow := degraded():
                body["degraded"] = slow
            return JSONResponse(body)
        status, body = AccordError(ErrorCode.UNAVAILABLE, "not ready").to_http()
        return JSONResponse(body, status_code=status)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if isinstance(store, AccordTaskStore):
                await store.open()
                stack.push_async_callback(store.close)
                await store.heartbeat()
                await store.recover()  # what a gone process left running can never finish
                keeper = asyncio.create_task(store.keep_alive(), name="task-store-heartbeat")
                stack.push_async_callback(_stop, keeper)
            await push_store.open()
            stack.push_async_callback(push_store.close)
            # Closed after the hooks and the handler: a clean stop lets this process's
            # claims lapse once its requests are over, so a live replica takes them over.
            await sends.open()
            stack.push_async_callback(sends.close)
            renewer = asyncio.create_task(sends.keep_alive(task_exists(store)), name="send-keys")
            stack.push_async_callback(_stop, renewer)
            pusher = asyncio.create_task(push.run(), name="push-delivery")
            stack.push_async_callback(_stop, pusher)
            for hook in lifespan_hooks:
                await stack.enter_async_context(hook())
            stack.push_async_callback(handler.aclose)
            yield

    routes: list[BaseRoute] = [
        Route(HEALTH_PATH, healthz, methods=["GET"]),
        Route(READY_PATH, readyz, methods=["GET"]),
        jwks_route(service_name),
        agent_card_route(card),
        skill_schemas_route(encode_schema_document(contract)),
        # The SDK's routes read the body the gate kept (parsed once: request_body.py).
        *reading_kept_body(
            [
                *create_jsonrpc_routes(handler, rpc_url=RPC_PATH, context_builder=context_builder),
                *create_rest_routes(handler, context_builder=context_builder),
            ]
        ),
    ]
    gate_options: dict[str, Any] = {
        "authenticator": authenticator or _authenticator(options),
        "rpc_paths": [RPC_PATH],
        "public_paths": [
            AGENT_CARD_WELL_KNOWN_PATH,
            SKILL_SCHEMAS_PATH,
            HEALTH_PATH,
            READY_PATH,
            SERVICE_JWKS_PATH,
        ],
        "max_body_bytes": max_body_bytes,
        "sends": sends,
        "served": executor.served,
        # Only an agent with refusals of its own pays for the hook (most have none).
        "admission": executor.admit_task
        if type(executor).admit_task is not ContractExecutor.admit_task
        else None,
    }
    middleware = [Middleware(Gate, **gate_options)]
    if browser_origins:  # outside the gate: a preflight carries no credential
        middleware.insert(0, browser_cors(browser_origins))
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    app.state.agent_card = card
    app.state.task_store = store
    app.state.push = push
    app.state.sends = sends
    app.state.request_handler = handler
    return app
