"""The gate in front of every A2A route: authentication, body limit, protocol version, the
acting-on-behalf check, and who may ask for the skill with what envelope
(:mod:`accord.protocol.a2a.server.skill_gate`), answered in the shape of the transport the
caller used.

A pure ASGI middleware (no per-request task or copy): the public card and the health endpoints
pass through; everything else needs a verified credential. The request body is read once, up to
the limit, and kept for the SDK's route (:mod:`accord.protocol.request_body`), so an oversized
body is refused before any work, whether it declared its length or streamed it. What the gate
verified is handed on in the request scope: the principal as Starlette's ``user``, the envelope
of a sent message under ``ENVELOPE_STATE_KEY`` (the executor does not parse it again).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final

from a2a.utils.constants import PROTOCOL_VERSION_1_0, VERSION_HEADER
from packaging.version import InvalidVersion, Version
from starlette.authentication import AuthCredentials, BaseUser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from accord.contracts.agents import Skill
from accord.contracts.envelope import DelegationEnvelope, parse_envelope
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.served import ServedContracts
from accord.protocol.a2a.server.delegation import check_on_behalf
from accord.protocol.a2a.server.errors import contract_error_filter
from accord.protocol.a2a.server.media_types import ACCEPTED, accepted, answer_type
from accord.protocol.a2a.server.send_claim import SEND_STATE_KEY, SendClaim, claim_send
from accord.protocol.a2a.server.send_keys import SendKeys
from accord.protocol.a2a.server.skill_gate import admit, skill_asked
from accord.protocol.a2a.server.turn import ENVELOPE_STATE_KEY
from accord.protocol.auth import Principal
from accord.protocol.auth.verify import Authenticator
from accord.protocol.limits import CallerLimits
from accord.protocol.request_body import RequestBody, read_body

logger = logging.getLogger(__name__)


MAX_BODY_BYTES: Final = 1024 * 1024
MAX_VERSION_HEADER: Final = 16
# The A2A versions served, as (major, minor): A2A 1.0 section 3.6.2 names versions Major.Minor
# (a patch is ignored) and a version the agent does not serve is VersionNotSupportedError, so a
# 1.0 agent refuses 1.1 rather than answering it with 1.0's semantics.
SUPPORTED: Final = frozenset({(1, 0)})
JSONRPC_PARSE_ERROR: Final = -32700
JSONRPC_INVALID_REQUEST: Final = -32600
SEND_METHODS: Final = frozenset({"SendMessage", "SendStreamingMessage"})
STREAM_METHODS: Final = frozenset({"SendStreamingMessage", "SubscribeToTask"})
REST_SEND_SUFFIXES: Final = ("/message:send", "/message:stream")
# REST routes whose request is their JSON body (the SDK parses it); the others read the path.
REST_BODY_SUFFIXES: Final = (*REST_SEND_SUFFIXES, "/pushNotificationConfigs")
USER_ROLES: Final = frozenset({"ROLE_USER", 1})  # proto3 JSON: the enum's name or its number
REST_STREAM_SUFFIXES: Final = ("/message:stream", ":subscribe")
_SSE_PING: Final = b":"  # an SSE comment line: sse-starlette's keep-alive, not an event
REALM: Final = 'Bearer realm="accord"'


class PrincipalUser(BaseUser):
    """Starlette's ``request.user``; its display name is the owner scope of the task store."""

    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return self.principal.owner

    @property
    def identity(self) -> str:
        return self.principal.subject


class _RefusedError(Exception):
    def __init__(
        self,
        error: AccordError,
        http_status: int | None = None,
        headers: dict[str, str] | None = None,
        jsonrpc_code: int | None = None,
    ) -> None:
        super().__init__(error.message)
        self.error = error
        self.http_status = http_status
        self.headers = headers or {}
        self.jsonrpc_code = jsonrpc_code  # JSON-RPC's own code where it has one (-32700, -32600)


# An agent's own refusal of a new task's first message (ContractExecutor.admit_task): the skill
# asked for, the verified principal, the message's data part (None: none).
TaskAdmission = Callable[[Skill, Principal, dict[str, Any] | None], Awaitable[None]]


class Gate:
    def __init__(
        self,
        app: ASGIApp,
        *,
        authenticator: Authenticator,
        rpc_paths: Iterable[str],
        public_paths: Iterable[str],
        max_body_bytes: int = MAX_BODY_BYTES,
        limits: CallerLimits | None = None,
        sends: SendKeys | None = None,
        served: ServedContracts | None = None,
        admission: TaskAdmission | None = None,
    ) -> None:
        """``sends``: the keys of sent messages (idempotent send); None keys nothing.
        ``served``: the agent's contracts, whose skills' ``access`` and ``envelope``
        sections admit the first message of a task (none: only the credential is checked).
        ``admission``: the agent's own checks of a new task's first message, after those; an
        error it raises is the caller's answer and no task is made."""
        self.app = app
        self.served = served
        self.admission = admission
        self.authenticator = authenticator
        self.rpc_paths = frozenset(rpc_paths)
        self.public_paths = frozenset(public_paths)
        self.max_body_bytes = max_body_bytes
        self.limits = limits or CallerLimits()
        self.sends = sends

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.public_paths:
            await self.app(scope, receive, send)
            return
        is_rpc = scope["method"] == "POST" and scope["path"] in self.rpc_paths
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])
        }
        rpc_id: Any = None
        claim: SendClaim | None = None
        try:
            principal = self._authenticate(headers)
            self._admit(principal)
            body, receive = await self._read_body(scope, headers, receive)
            parsed = body.json if body is not None else None
            if is_rpc and isinstance(parsed, dict):
                raw_id = parsed.get("id")
                rpc_id = (
                    raw_id
                    if isinstance(raw_id, str | int) and not isinstance(raw_id, bool)
                    else None
                )
            if body is not None and (body.raw or _needs_body(scope, is_rpc)):
                _check_media_type(headers.get("content-type"))
                _check_json(body, parsed, is_rpc)
            _check_version(headers.get("a2a-version", ""))
            envelope, skill = self._check_send(scope["path"], is_rpc, parsed, principal)
            streaming = _is_stream(scope, is_rpc, parsed)
            if streaming:
                self._open_stream(principal)
            try:
                claim = await self._claim(scope["path"], is_rpc, parsed, principal)
                # A message sent again (its key already claimed) gets its first answer back
                # from the SDK, whatever the agent would say of it now.
                if skill is not None and (claim is None or claim.new):
                    await self._admit_task(skill, principal, scope["path"], is_rpc, parsed)
            except _RefusedError:
                if streaming:
                    self.limits.close_stream(principal)
                if claim is not None:
                    await claim.end()  # never handled: the key is forgotten
                raise
        except _RefusedError as refused:
            await _respond(send, refused, is_rpc, rpc_id)
            return
        scope["user"] = PrincipalUser(principal)
        scope["auth"] = AuthCredentials(sorted(principal.roles))
        scope[ENVELOPE_STATE_KEY] = envelope
        scope[SEND_STATE_KEY] = claim
        try:
            if not streaming:
                await self.app(scope, receive, contract_error_filter(send, is_rpc))
                return
            try:
                await self._stream(scope, receive, contract_error_filter(send, is_rpc))
            finally:
                self.limits.close_stream(principal)
        finally:
            if claim is not None:
                await asyncio.shield(claim.end())

    async def _claim(
        self, path: str, is_rpc: bool, parsed: Any, principal: Principal
    ) -> SendClaim | None:
        """Claim a sent message's key (idempotent send: send_claim.py); another message under
        the same id is refused here, in the caller's transport."""
        message = _sent_message(path, is_rpc, parsed)
        if self.sends is None or message is None:
            return None
        try:
            return await claim_send(self.sends, principal.owner, message)
        except AccordError as error:
            raise _RefusedError(error) from None

    async def _admit_task(
        self, skill: Skill, principal: Principal, path: str, is_rpc: bool, parsed: Any
    ) -> None:
        message = _sent_message(path, is_rpc, parsed)
        if self.admission is None or message is None:
            return
        try:
            await self.admission(skill, principal, _data_part(message.get("parts")))
        except AccordError as error:
            raise _RefusedError(error) from None

    def _admit(self, principal: Principal) -> None:
        try:
            self.limits.admit(principal)
        except AccordError as error:
            raise _RefusedError(error, 429, _retry_after(error)) from None

    def _open_stream(self, principal: Principal) -> None:
        try:
            self.limits.open_stream(principal)
        except AccordError as error:
            raise _RefusedError(error, 429, _retry_after(error)) from None

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve an event stream, ending it once it has sent no event for ``stream_idle_s``
        (keep-alive pings do not count: a subscription to a task that waits days for an
        approver would otherwise hold its connection, memory and slot for days)."""
        idle_s = self.limits.stream_idle_s
        last_event = time.monotonic()
        finished = False

        async def tracking(message: Message) -> None:
            nonlocal last_event, finished
            if message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                if chunk and not chunk.lstrip().startswith(_SSE_PING):
                    last_event = time.monotonic()
                finished = not message.get("more_body", False)
            await send(message)

        serving = asyncio.ensure_future(self.app(scope, receive, tracking))
        try:
            while not serving.done():
                quiet = time.monotonic() - last_event
                await asyncio.wait({serving}, timeout=max(0.0, idle_s - quiet) or 0.001)
                if not serving.done() and time.monotonic() - last_event >= idle_s:
                    logger.info("ending an event stream idle for %.0f s", idle_s)
                    serving.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await serving
                    if not finished:
                        await send({"type": "http.response.body", "body": b""})
                    return
            serving.result()
        finally:
            if not serving.done():
                serving.cancel()

    def _authenticate(self, headers: dict[str, str]) -> Principal:
        try:
            return self.authenticator.authenticate(headers)
        except AccordError as error:
            challenge = REALM
            if headers.get("authorization"):
                description = error.message.replace('"', "'")
                challenge += f', error="invalid_token", error_description="{description}"'
            raise _RefusedError(error, 401, {"WWW-Authenticate": challenge}) from None

    async def _read_body(
        self, scope: Scope, headers: dict[str, str], receive: Receive
    ) -> tuple[RequestBody | None, Receive]:
        declared = headers.get("content-length")
        if declared is not None:
            try:
                if int(declared) > self.max_body_bytes:
                    raise _RefusedError(_too_large(self.max_body_bytes), 413)
            except ValueError:
                raise _RefusedError(
                    AccordError(ErrorCode.INVALID_INPUT, "invalid Content-Length header"), 400
                ) from None
        if scope["method"] in ("GET", "HEAD", "DELETE"):
            return None, receive
        body, receive = await read_body(scope, receive, limit=self.max_body_bytes)
        if body is None:
            raise _RefusedError(_too_large(self.max_body_bytes), 413)
        return body, receive

    def _check_send(
        self, path: str, is_rpc: bool, parsed: Any, principal: Principal
    ) -> tuple[DelegationEnvelope | None, Skill | None]:
        """Envelope and acting on behalf, before the SDK creates (and stores) a task: the
        envelope of a sent message (or None) and the skill a new task asks for (or None)."""
        message = _sent_message(path, is_rpc, parsed)
        if message is None:
            return None, None  # not a send, or malformed: the SDK answers with its own error
        role = message.get("role")
        if role is not None and not _is_user_role(role):
            # A client speaks as the user; a message marked as the agent's would put words in
            # the agent's mouth (its history, what a later turn or a model reads as its own).
            raise _RefusedError(
                AccordError(
                    ErrorCode.INVALID_INPUT,
                    "a sent message must have the role ROLE_USER",
                    {"field": "message.role"},
                ),
                None if is_rpc else 400,
            )
        size = _content_bytes(message.get("parts"))
        if size > self.limits.max_message_bytes:
            limit = self.limits.max_message_bytes
            raise _RefusedError(
                AccordError(
                    ErrorCode.PAYLOAD_TOO_LARGE,
                    f"the message's content is {size} bytes; the limit is {limit}",
                    {"limit": limit, "field": "message.parts"},
                ),
                None if is_rpc else 413,
            )
        metadata = message.get("metadata")
        continuing = bool(message.get("taskId") or message.get("task_id"))
        try:
            envelope = parse_envelope(
                metadata if isinstance(metadata, dict) else None,
                required=principal.is_service and not continuing,
            )
            if envelope is not None:
                check_on_behalf(principal, envelope)
            # Who may ask for the skill, with what envelope: before the SDK creates a task. A
            # continuation is checked by the turn reader against the task's own skill.
            skill = (
                skill_asked(self.served, metadata if isinstance(metadata, dict) else None)
                if self.served is not None and not continuing
                else None
            )
            if skill is not None:
                admit(skill, principal, envelope)
        except AccordError as error:
            raise _RefusedError(error) from None
        return envelope, skill


def _data_part(parts: Any) -> dict[str, Any] | None:
    """The first data part's object of a message as received (A2A 1.0 ``{"data": ...}``, 0.3
    ``{"kind": "data", "data": ...}``); None when it has none."""
    for part in parts if isinstance(parts, list) else ():
        data = part.get("data") if isinstance(part, dict) else None
        if isinstance(data, dict):
            return data
    return None


def _sent_message(path: str, is_rpc: bool, parsed: Any) -> dict[str, Any] | None:
    """The message of a send request (JSON-RPC or HTTP+JSON), as received; None otherwise."""
    if not isinstance(parsed, dict):
        return None  # not JSON: the SDK answers with its parse error
    if is_rpc:
        if parsed.get("method") not in SEND_METHODS:
            return None
        params = parsed.get("params")
    elif path.endswith(REST_SEND_SUFFIXES):
        params = parsed
    else:
        return None
    message = params.get("message") if isinstance(params, dict) else None
    return message if isinstance(message, dict) else None


def _is_user_role(role: object) -> bool:
    """The role a sent message may have (any JSON value may come: a list is not hashable)."""
    return isinstance(role, str | int) and not isinstance(role, bool) and role in USER_ROLES


def _content_bytes(parts: Any) -> int:
    """About how many bytes a message's parts carry (text as UTF-8, data as compact JSON,
    files as their encoded form), which is what a task and its history store copies of."""
    if not isinstance(parts, list):
        return 0
    size = 0
    for part in parts:
        if not isinstance(part, dict):
            continue
        for key, value in part.items():
            if key == "metadata":
                continue
            if isinstance(value, str):
                size += len(value.encode("utf-8", "surrogatepass"))
            elif value is not None:
                size += len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    return size


def _retry_after(error: AccordError) -> dict[str, str]:
    wait = error.details.get("retry_after_s") if isinstance(error.details, dict) else None
    seconds = math.ceil(float(wait)) if isinstance(wait, int | float) else 1
    return {"Retry-After": str(max(1, seconds))}


def _is_stream(scope: Scope, is_rpc: bool, parsed: Any) -> bool:
    if is_rpc:
        return isinstance(parsed, dict) and parsed.get("method") in STREAM_METHODS
    path: str = scope["path"]
    return path.endswith(REST_STREAM_SUFFIXES)


def _too_large(limit: int) -> AccordError:
    return AccordError(
        ErrorCode.PAYLOAD_TOO_LARGE, f"request body exceeds {limit} bytes", {"limit": limit}
    )


def _needs_body(scope: Scope, is_rpc: bool) -> bool:
    """Whether the request is its body (a JSON-RPC call, a REST send or push config)."""
    if is_rpc:
        return True
    path: str = scope["path"]
    return scope["method"] == "POST" and path.endswith(REST_BODY_SUFFIXES)


def _check_media_type(content_type: str | None) -> None:
    """A body labelled with a type the agent does not read is A2A's ContentTypeNotSupported,
    before anything looks at its bytes (media_types.py)."""
    if not accepted(content_type):
        raise _RefusedError(
            AccordError(
                ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
                f"Content-Type {str(content_type)[:64]!r} is not supported: send "
                + " or ".join(sorted(ACCEPTED)),
                {"supported": sorted(ACCEPTED)},
            )
        )


def _check_json(body: RequestBody, parsed: Any, is_rpc: bool) -> None:
    """A body that is not (acceptable) JSON, or a JSON-RPC call that is not a request object,
    is refused here with a typed error: the SDK would answer some of them as INTERNAL (bytes
    that are not UTF-8, a list as ``method``) or store what it cannot render (``NaN``), and an
    empty one with Python's decoder text."""
    unreadable: str | None = None
    if not body.raw:
        unreadable = "the request body is empty: an A2A request is a JSON object"
    elif body.problem is not None:
        unreadable = f"request body is not valid JSON: {body.problem}"
    if unreadable is not None:
        raise _RefusedError(
            AccordError(ErrorCode.INVALID_INPUT, unreadable),
            http_status=None if is_rpc else 400,
            jsonrpc_code=JSONRPC_PARSE_ERROR,
        )
    if not is_rpc:
        return
    problem: str | None = None
    if not isinstance(parsed, dict):
        problem = "a JSON-RPC request must be an object (batches are not supported)"
    elif parsed.get("jsonrpc") != "2.0":
        problem = "'jsonrpc' must be \"2.0\""
    elif not isinstance(parsed.get("method"), str) or not parsed["method"]:
        problem = "'method' must be a non-empty string"
    elif "params" in parsed and not isinstance(parsed["params"], dict):
        problem = "'params' must be an object"
    elif "id" in parsed and (
        isinstance(parsed["id"], bool) or not isinstance(parsed["id"], str | int | None)
    ):
        problem = "'id' must be a string, an integer or null"
    if problem is not None:
        raise _RefusedError(
            AccordError(ErrorCode.INVALID_INPUT, f"invalid JSON-RPC request: {problem}"),
            jsonrpc_code=JSONRPC_INVALID_REQUEST,
        )


def _check_version(value: str) -> None:
    if len(value) > MAX_VERSION_HEADER:
        raise _RefusedError(
            AccordError(
                ErrorCode.VERSION_UNSUPPORTED,
                f"{VERSION_HEADER} header is longer than {MAX_VERSION_HEADER} characters: "
                f"this agent speaks A2A {PROTOCOL_VERSION_1_0}",
                {"header": VERSION_HEADER, "supported": [PROTOCOL_VERSION_1_0]},
            )
        )
    if not value.strip():
        raise _RefusedError(
            AccordError(
                ErrorCode.VERSION_UNSUPPORTED,
                f"missing {VERSION_HEADER} header: this agent speaks A2A {PROTOCOL_VERSION_1_0}, "
                f"send '{VERSION_HEADER}: {PROTOCOL_VERSION_1_0}'",
                {"header": VERSION_HEADER, "supported": [PROTOCOL_VERSION_1_0]},
            )
        )
    try:
        asked = Version(value.strip())
        served = (asked.major, asked.minor) in SUPPORTED
    except InvalidVersion:
        served = False
    if not served:
        raise _RefusedError(
            AccordError(
                ErrorCode.VERSION_UNSUPPORTED,
                f"{VERSION_HEADER} {value.strip()!r} is not supported: this agent speaks A2A "
                f"{PROTOCOL_VERSION_1_0}",
                {"header": VERSION_HEADER, "supported": [PROTOCOL_VERSION_1_0]},
            )
        )


async def _respond(send: Send, refused: _RefusedError, is_rpc: bool, rpc_id: Any) -> None:
    error = refused.error
    if is_rpc:
        # JSON-RPC answers protocol errors with 200; auth and size keep their HTTP status.
        status = refused.http_status or 200
        rpc_error = error.to_jsonrpc_error()
        if refused.jsonrpc_code is not None:
            # JSON-RPC's own code (-32700, -32600), and A2A's reason for it in the ErrorInfo.
            rpc_error["code"] = refused.jsonrpc_code
            rpc_error["data"] = [error.error_info(refused.jsonrpc_code)]
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id, "error": rpc_error}
    else:
        rest_status, payload = error.to_rest()
        status = refused.http_status or rest_status
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = [(b"content-type", answer_type(is_rpc)), (b"content-length", str(len(body)).encode())]
    headers += [
        (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in refused.headers.items()
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
