"""The two A2A 1.0 HTTP bindings a client speaks, over httpx, with contract errors.

Why not a2a-sdk's own transports: they turn a JSON-RPC error whose code is outside A2A's table
(our -32050..-32061 range) into a bare ``A2AClientError`` with the code in its text, and drop
the ``google.rpc.ErrorInfo`` of REST errors whose reason is not A2A's. Both carry the contract
error code, so this module keeps the wire objects of a2a-sdk (protobuf, ``parse_lenient``, the
SSE parser) and maps every failure to an :class:`AccordError` at one place:

    HTTP answered with an error body ──> AccordError.from_jsonrpc_error / from_rest / from_http
    connection refused / reset       ──> UNAVAILABLE        (safe to retry: nothing was sent)
    read or write timeout            ──> RETRYABLE_TIMEOUT  (it may have arrived: a send is
                                                             re-sent only to an agent that
                                                             keys sends, client.py)
    a body that is not A2A           ──> CONTRACT_VIOLATION
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from types import TracebackType
from typing import Any, Final, Protocol, TypeVar
from urllib.parse import quote, urlencode

import httpx
from a2a.client.transports.http_helpers import parse_sse_stream
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
)
from a2a.utils.proto_utils import parse_lenient
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage

from accord.contracts.errors import ERROR_INFO_TYPE, AccordError, ErrorCode, error_info_code
from accord.contracts.keys import SENT_DETAIL_KEY
from accord.protocol.a2a.errors import A2A_REASON_TO_CODE
from accord.protocol.sent import marked

JSONRPC: Final = "JSONRPC"
HTTP_JSON: Final = "HTTP+JSON"


class WireError(Exception):
    """A failed call: the contract error, and whether re-sending it is known to be safe."""

    def __init__(self, error: AccordError, *, retry_safe: bool, local: bool = False) -> None:
        """``local``: made here, not read from an answer. Only a local error may say it was
        never sent (``details.sent``); an agent's answer saying so is not believed."""
        super().__init__(str(error))
        self.error = error if local else marked(error, None)
        self.retry_safe = retry_safe
        self.local = local


class Wire(Protocol):
    """One binding: the four calls the client makes."""

    binding: str
    url: str

    async def send(
        self, request: SendMessageRequest, headers: Mapping[str, str]
    ) -> SendMessageResponse: ...

    def stream(
        self, request: SendMessageRequest, headers: Mapping[str, str]
    ) -> AsyncGenerator[StreamResponse, None]: ...

    def subscribe(
        self, task_id: str, headers: Mapping[str, str]
    ) -> AsyncGenerator[StreamResponse, None]: ...

    async def get(self, task_id: str, headers: Mapping[str, str]) -> Task: ...

    async def cancel(self, task_id: str, headers: Mapping[str, str]) -> Task: ...

    async def list(
        self, request: ListTasksRequest, headers: Mapping[str, str]
    ) -> ListTasksResponse: ...


def _to_json(message: ProtoMessage) -> dict[str, Any]:
    out: dict[str, Any] = json_format.MessageToDict(message)
    return out


_M = TypeVar("_M", bound=ProtoMessage)


def _parse(data: Any, into: _M) -> _M:
    try:
        return parse_lenient(data, into)
    except (json_format.ParseError, TypeError, ValueError):
        raise WireError(
            AccordError(
                ErrorCode.CONTRACT_VIOLATION,
                f"peer sent a body that is not an A2A {type(into).__name__}",
            ),
            retry_safe=False,
        ) from None


def _json_body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _foreign_rest_error(body: Any) -> AccordError | None:
    """A REST error with A2A's own ErrorInfo reason (e.g. TASK_NOT_CANCELABLE) and none of ours,
    read through the table derived from a2a-sdk's (:mod:`accord.protocol.a2a.errors`)."""
    error = body.get("error") if isinstance(body, Mapping) else None
    details = error.get("details") if isinstance(error, Mapping) else None
    infos = [
        info
        for info in (details if isinstance(details, list) else [])
        if isinstance(info, Mapping) and info.get("@type") == ERROR_INFO_TYPE
    ]
    if any(error_info_code(info) is not None for info in infos):
        return None
    for info in infos:
        code = A2A_REASON_TO_CODE.get(str(info.get("reason")))
        if code is not None:
            message = error.get("message") if isinstance(error, Mapping) else None
            return AccordError(code, message if isinstance(message, str) else None)
    return None


def error_from_response(status: int, body: Any) -> AccordError:
    """The contract error of a non-2xx answer, whatever shape the peer (or a proxy) used."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if isinstance(error, Mapping):
        if isinstance(error.get("code"), str):  # plain HTTP form {"error": {"code": "..."}}
            return AccordError.from_http(status, body)
        if "jsonrpc" in body:
            return AccordError.from_jsonrpc_error(error)
        # A reason says more than a status: A2A's own (a2a-sdk's REST errors) is read before the
        # status, unless the body carries ours, which from_rest reads first.
        return _foreign_rest_error(body) or AccordError.from_rest(status, body)
    return AccordError.from_rest(status, None)


class _Mapped:
    """Maps httpx failures to contract errors. A class, not ``@asynccontextmanager``: closing
    an abandoned stream throws GeneratorExit through it, which a generator-based context
    manager inside an async generator turns into "generator didn't stop after athrow()"."""

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None or not isinstance(exc, httpx.HTTPError):
            return
        name: dict[str, Any] = {"reason": type(exc).__name__}
        unsent = {**name, SENT_DETAIL_KEY: False}  # no connection: not one byte left
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            error, safe = (
                AccordError(ErrorCode.UNAVAILABLE, "the agent could not be reached", unsent),
                True,
            )
        elif isinstance(exc, httpx.PoolTimeout):
            error, safe = (
                AccordError(ErrorCode.RETRYABLE_TIMEOUT, "no free connection in time", unsent),
                True,
            )
        elif isinstance(exc, httpx.TimeoutException):
            error, safe = (
                AccordError(ErrorCode.RETRYABLE_TIMEOUT, "the agent did not answer in time", name),
                False,
            )
        else:
            error, safe = (
                AccordError(ErrorCode.UNAVAILABLE, "the connection to the agent failed", name),
                False,
            )
        raise WireError(error, retry_safe=safe, local=True) from None


class _HttpWire:
    def __init__(self, http: httpx.AsyncClient, url: str, binding: str) -> None:
        self.http = http
        self.url = url.rstrip("/") if binding == HTTP_JSON else url
        self.binding = binding

    async def _post_json(
        self,
        url: str,
        payload: Mapping[str, Any] | None,
        headers: Mapping[str, str],
        method: str = "POST",
    ) -> Any:
        async with _Mapped():
            response = await self.http.request(method, url, json=payload, headers=dict(headers))
        body = _json_body(response)
        if response.status_code >= 400:
            # The peer answered with an error, so it did not act on the request: re-sending is
            # safe and the error's retry class decides whether it is worth it.
            raise WireError(error_from_response(response.status_code, body), retry_safe=True)
        return body

    async def _stream(
        self, url: str, payload: Mapping[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[StreamResponse, None]:
        hdrs = {**headers, "Accept": "text/event-stream"}
        async with _Mapped(), self.http.stream("POST", url, json=payload, headers=hdrs) as resp:
            if resp.status_code >= 400:
                await resp.aread()
                raise WireError(
                    error_from_response(resp.status_code, _json_body(resp)), retry_safe=True
                )
            if "text/event-stream" not in resp.headers.get("content-type", ""):
                # An error (or a whole answer) sent as one JSON body instead of a stream.
                body = (await resp.aread()).decode("utf-8", "replace")
                yield self._event("message", _loads(body))
                return
            async with aclosing(parse_sse_stream(resp)) as events:
                async for event, data in events:
                    if data:
                        yield self._event(event, _loads(data))

    def _event(self, event: str, body: Any) -> StreamResponse:
        raise NotImplementedError


def _loads(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise WireError(
            AccordError(ErrorCode.CONTRACT_VIOLATION, "peer sent an SSE event that is not JSON"),
            retry_safe=False,
        ) from None


class JsonRpcWire(_HttpWire):
    """JSON-RPC 2.0 over HTTP POST to the interface URL (SSE for streaming)."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        super().__init__(http, url, JSONRPC)

    @staticmethod
    def _envelope(method: str, params: ProtoMessage) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": uuid.uuid4().hex,
            "method": method,
            "params": _to_json(params),
        }

    @staticmethod
    def _result(body: Any) -> Any:
        if not isinstance(body, Mapping):
            raise WireError(
                AccordError(
                    ErrorCode.CONTRACT_VIOLATION,
                    "peer sent a JSON-RPC answer that is not an object",
                ),
                retry_safe=False,
            )
        error = body.get("error")
        if isinstance(error, Mapping):
            raise WireError(AccordError.from_jsonrpc_error(error), retry_safe=True)
        if "result" not in body:
            raise WireError(
                AccordError(
                    ErrorCode.CONTRACT_VIOLATION,
                    "peer sent a JSON-RPC answer without result or error",
                ),
                retry_safe=False,
            )
        return body["result"]

    async def _call(self, method: str, params: ProtoMessage, headers: Mapping[str, str]) -> Any:
        return self._result(
            await self._post_json(self.url, self._envelope(method, params), headers)
        )

    async def send(
        self, request: SendMessageRequest, headers: Mapping[str, str]
    ) -> SendMessageResponse:
        return _parse(await self._call("SendMessage", request, headers), SendMessageResponse())

    def stream(
        self, request: SendMessageRequest, headers: Mapping[str, str]
    ) -> AsyncGenerator[StreamResponse, None]:
        return self._stream(self.url, self._envelope("SendStreamingMessage", request), headers)

    def _event(self, event: str, body: Any) -> StreamResponse:
        return _parse(self._result(body), StreamResponse())

    def subscribe(
        self, task_id: str, headers: Mapping[str, str]
    ) -> AsyncGenerator[StreamResponse, None]:
        envelope = self._envelope("SubscribeToTask", SubscribeToTaskRequest(id=task_id))
        return self._stream(self.url, envelope, headers)

    async def get(self, task_id: str, headers: Mapping[str, str]) -> Task:
        return _parse(await self._call("GetTask", GetTaskRequest(id=task_id), headers), Task())

    async def cancel(self, task_id: str, headers: Mapping[str, str]) -> Task:
        return _parse(
            await self._call("CancelTask", CancelTaskRequest(id=task_id), headers), Task()
        )

    async def list(
        self, request: ListTasksRequest, headers: Mapping[str, str]
    ) -> ListTasksResponse:
        return _parse(await self._call("ListTasks", request, headers), ListTasksResponse())


class RestWire(_HttpWire):
    """HTTP+JSON: ``POST /message:send``, ``/message:stream``, ``GET /tasks/{id}``, cancel."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        super().__init__(http, url, HTTP_JSON)

    async def send(
        self, request: SendMessageRequest, headers: Mapping[str, str]
    ) -> SendMessageResponse:
        body = await self._post_json(f"{self.url}/message:send", _to_json(request), headers)
        return _parse(body, SendMessageResponse())

    def stream(
        self, request: SendMessageRequest, headers: Mapping[str, str]
    ) -> AsyncGenerator[StreamResponse, None]:
        return self._stream(f"{self.url}/message:stream", _to_json(request), headers)

    def _event(self, event: str, body: Any) -> StreamResponse:
        if event == "error" or (isinstance(body, Mapping) and "error" in body):
            raise WireError(error_from_response(500, body), retry_safe=False)
        return _parse(body, StreamResponse())

    def subscribe(
        self, task_id: str, headers: Mapping[str, str]
    ) -> AsyncGenerator[StreamResponse, None]:
        url = f"{self.url}/tasks/{quote(task_id, safe='')}:subscribe"
        return self._stream(url, {"id": task_id}, headers)

    async def get(self, task_id: str, headers: Mapping[str, str]) -> Task:
        body = await self._post_json(
            f"{self.url}/tasks/{quote(task_id, safe='')}", None, headers, method="GET"
        )
        return _parse(body, Task())

    async def cancel(self, task_id: str, headers: Mapping[str, str]) -> Task:
        body = await self._post_json(
            f"{self.url}/tasks/{quote(task_id, safe='')}:cancel", {"id": task_id}, headers
        )
        return _parse(body, Task())

    async def list(
        self, request: ListTasksRequest, headers: Mapping[str, str]
    ) -> ListTasksResponse:
        query = {k: str(v) for k, v in _to_json(request).items()}
        body = await self._post_json(
            f"{self.url}/tasks?{urlencode(query)}", None, headers, method="GET"
        )
        return _parse(body, ListTasksResponse())


def make_wire(http: httpx.AsyncClient, binding: str, url: str) -> Wire:
    if binding == JSONRPC:
        return JsonRpcWire(http, url)
    if binding == HTTP_JSON:
        return RestWire(http, url)
    raise AccordError(
        ErrorCode.UNSUPPORTED_OPERATION,
        f"A2A binding {binding!r} is not spoken by this client (JSONRPC and HTTP+JSON are)",
    )
