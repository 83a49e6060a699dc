"""A request body read once and parsed once, kept in the ASGI scope for every later reader.

Three layers want the body of an A2A request: the telemetry middleware (the JSON-RPC method
names its span), the gate (the JSON-RPC id of a refusal, the delegation envelope) and the SDK's
route (the request itself). Starlette caches a body per ``Request`` object only, and each
middleware and route builds its own, so each used to read and ``json.loads`` the body again.

Here the first reader reads the body to its end, keeps it in the scope under
:data:`BODY_SCOPE_KEY` and hands the app a ``receive`` that replays what it read; the JSON is
parsed on first use, once. The SDK's routes see the kept body through :class:`KeptBodyRequest`
(:func:`reading_kept_body` wraps their endpoints). The parsed value is shared: readers must not
change it.

Parsing is strict, because a value the SDK cannot store or render must never get in: nesting
deeper than :data:`MAX_DEPTH`, ``NaN``/``Infinity`` and numbers that overflow to infinity
(``1e309``; protobuf's ``Value`` cannot hold them, and a stored task holding one broke every
later listing), and bytes that are not UTF-8 all make the body "not JSON", with
:attr:`RequestBody.problem` saying why, so the gate answers a typed parse error.
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Iterable
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import Message, Receive, Scope

BODY_SCOPE_KEY: Final = "accord.request_body"
MAX_DEPTH: Final = 32
"""Deepest nesting of arrays and objects a request may have (an A2A request with a DataPart
needs about eight; the SDK's protobuf parsing gives up at 100, Python's decoder at ~1,000)."""

_UNPARSED: Final = object()
_NOT_JSON: Final = object()


class _RejectedError(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _RejectedError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _RejectedError(f"the number {text[:32]} is out of range")
    return value


def _too_deep(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` levels (stops as soon as it does)."""
    level = [value]
    for _ in range(limit):
        nested: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                nested.extend(v for v in item.values() if isinstance(v, dict | list))
            elif isinstance(item, list):
                nested.extend(v for v in item if isinstance(v, dict | list))
        if not nested:
            return False
        level = nested
    return True


def parse_strict(raw: bytes | str) -> Any:
    """``json.loads`` that refuses what :class:`RequestBody` refuses; ValueError says why."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise _RejectedError(f"nesting deeper than {MAX_DEPTH} levels") from None
    except _RejectedError:
        raise
    except UnicodeDecodeError:
        raise _RejectedError("the body is not UTF-8") from None
    except json.JSONDecodeError as exc:
        # Our words, not the decoder's: where it broke is all a caller needs to fix it.
        raise _RejectedError(f"not JSON (it breaks at character {exc.pos})") from None
    except ValueError:  # Python's own limits (a number of more than 4,300 digits)
        raise _RejectedError("a number is too long") from None
    if _too_deep(value, MAX_DEPTH):
        raise _RejectedError(f"nesting deeper than {MAX_DEPTH} levels")
    return value


class RequestBody:
    """The bytes of a request body, and its JSON parsed at most once, on first use."""

    __slots__ = ("_value", "problem", "raw")

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self._value: Any = _UNPARSED
        self.problem: str | None = None  # why a non-empty body is not JSON, once parsed

    def _parsed(self) -> Any:
        if self._value is _UNPARSED:
            if not self.raw:
                self._value = _NOT_JSON
            else:
                try:
                    self._value = parse_strict(self.raw)
                except ValueError as exc:
                    self._value = _NOT_JSON
                    self.problem = str(exc)
        return self._value

    @property
    def parsed(self) -> bool:
        """Whether some reader has already asked for the JSON (so asking again costs nothing)."""
        return self._value is not _UNPARSED

    @property
    def is_json(self) -> bool:
        return self._parsed() is not _NOT_JSON

    @property
    def json(self) -> Any:
        """The parsed JSON value; None when the body is empty or not JSON."""
        value = self._parsed()
        return None if value is _NOT_JSON else value


def kept_body(scope: Scope) -> RequestBody | None:
    """The body an earlier reader kept in the scope, if one did."""
    kept = scope.get(BODY_SCOPE_KEY)
    return kept if isinstance(kept, RequestBody) else None


async def read_body(
    scope: Scope, receive: Receive, *, limit: int
) -> tuple[RequestBody | None, Receive]:
    """The request body, and the ``receive`` to hand the app from now on.

    The body is read to its end (or to the client's disconnect) and kept in the scope; a body
    an earlier reader kept is used as it is. None when the body is longer than ``limit``: then
    nothing is kept, and the returned ``receive`` replays what was read, so that a reader with
    a higher limit (or the app) can go on from there.
    """
    kept = kept_body(scope)
    if kept is not None:
        return (kept if len(kept.raw) <= limit else None), receive
    pending: deque[Message] = deque()
    size = 0
    while True:
        message = await receive()
        pending.append(message)
        if message["type"] != "http.request":
            break  # the client went away: the body ends with what it sent
        size += len(message.get("body", b""))
        if size > limit:
            return None, _replaying(pending, receive)
        if not message.get("more_body", False):
            break
    body = RequestBody(b"".join(m.get("body", b"") for m in pending if m["type"] == "http.request"))
    scope[BODY_SCOPE_KEY] = body
    return body, _replaying(pending, receive)


def _replaying(pending: deque[Message], receive: Receive) -> Receive:
    async def replay() -> Message:
        return pending.popleft() if pending else await receive()

    return replay


class KeptBodyRequest(Request):
    """A Starlette request whose ``body()`` and ``json()`` answer from the kept body."""

    async def body(self) -> bytes:
        kept = kept_body(self.scope)
        return kept.raw if kept is not None else await super().body()

    async def json(self) -> Any:
        kept = kept_body(self.scope)
        if kept is not None and kept.is_json:
            return kept.json
        return await super().json()  # not JSON: Starlette raises the parse error the SDK reports


def reading_kept_body(routes: Iterable[BaseRoute]) -> list[BaseRoute]:
    """The routes, with each endpoint handed a :class:`KeptBodyRequest` instead of a Request."""
    return [_reading_kept_body(r) if isinstance(r, Route) else r for r in routes]


def _reading_kept_body(route: Route) -> Route:
    endpoint = route.endpoint

    async def reading(request: Request) -> Response:
        response: Response = await endpoint(KeptBodyRequest(request.scope, request.receive))
        return response

    return Route(
        route.path,
        reading,
        methods=sorted(route.methods) if route.methods is not None else None,
        name=route.name,
        include_in_schema=route.include_in_schema,
    )
