"""An :class:`AccordError` raised under a2a-sdk's request handling reaches the client typed.

The SDK's dispatchers know their own ``A2AError`` classes; any other exception a handler raises
is "Unhandled exception", answered -32603 / HTTP 500 INTERNAL. Our stores raise the contract's
errors: while PostgreSQL restarts, the task store's read is UNAVAILABLE (retry), and the client
must read exactly that, not INTERNAL (stop), or it gives up on a request it may safely send
again (docs/restarts.md "PostgreSQL restarted").

:func:`typed_errors` wraps the request handler's ``on_*`` methods: an AccordError becomes a
:class:`ContractError`, an ``A2AError`` the SDK renders with its ErrorInfo, whose metadata
carries the contract code (``ERROR_INFO_CODE_KEY``) and whose reason is the SDK's
``UNKNOWN_ERROR``; the error filter (errors.py) then rewrites such an answer into the
contract's own JSON-RPC error or REST status and body. In an event stream that has started the
SDK's error event passes as it is, and carries the code in the same ErrorInfo.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final, TypeVar

from a2a.utils.errors import A2AError

from accord.contracts.errors import AccordError
from accord.contracts.keys import ERROR_INFO_CODE_KEY

HANDLER_METHODS: Final = (
    "on_get_task",
    "on_list_tasks",
    "on_cancel_task",
    "on_message_send",
    "on_message_send_stream",
    "on_subscribe_to_task",
    "on_create_task_push_notification_config",
    "on_get_task_push_notification_config",
    "on_list_task_push_notification_configs",
    "on_delete_task_push_notification_config",
)
C = TypeVar("C", bound=type)


class ContractError(A2AError):
    """A contract error on its way through the SDK (see the module docstring)."""

    def __init__(self, error: AccordError) -> None:
        super().__init__(error.message, {ERROR_INFO_CODE_KEY: error.code.value})
        self.error = error


async def _awaited(result: Awaitable[Any]) -> Any:
    try:
        return await result
    except AccordError as error:
        raise ContractError(error) from error


async def _iterated(events: AsyncIterator[Any]) -> AsyncIterator[Any]:
    try:
        async for event in events:
            yield event
    except AccordError as error:
        raise ContractError(error) from error


def _typed(method: Callable[..., Any]) -> Callable[..., Any]:
    # Decided per call: the SDK's own decorators (validate, tracing) hide whether a method is
    # a coroutine function or returns an async generator.
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = method(*args, **kwargs)
        if inspect.isawaitable(result):
            return _awaited(result)
        return _iterated(result)

    return wrapper


def typed_errors(cls: C) -> C:
    """``cls`` (a request handler) with every ``on_*`` method's AccordError typed."""
    for name in HANDLER_METHODS:
        setattr(cls, name, _typed(getattr(cls, name)))
    return cls
