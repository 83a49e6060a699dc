"""a2a-sdk's tracing wrappers are switched off when a service is loaded with library spans off
(the SDK reads its switch once, at import, so each case is a fresh interpreter)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from accord.protocol.telemetry.sdk_wrappers import A2A_SDK_TRACING, quiet_a2a_sdk_wrappers

# What `accord serve policy` does before uvicorn starts: load the service's module, which
# imports a2a-sdk; then report which tracer the SDK's wrappers were bound to, and whether the
# SDK's methods are wrapped at all (the request handler's, the event queue's, the JSON-RPC
# dispatcher's: ones every streamed event goes through).
_PROBE = (
    "from accord.protocol.service import find_service\n"
    "assert find_service('policy') is not None\n"
    "import a2a.utils.telemetry as t\n"
    "from a2a.server.request_handlers.default_request_handler_v2 import "
    "DefaultRequestHandlerV2 as H\n"
    "from a2a.server.events.event_queue_v2 import EventQueueSource as Q\n"
    "from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher as D\n"
    # functools.wraps copies a name, not the code: the code says whose function it is.
    "wrapped = ['trace_function' in f.__code__.co_qualname for f in "
    "(H.on_message_send_stream, Q.enqueue_event, D.handle_requests)]\n"
    "assert len(set(wrapped)) == 1, wrapped\n"
    "print(t.otel_enabled, wrapped[0])\n"
)


def _sdk_after_loading_a_service(**env: str) -> tuple[bool, bool]:
    """(the SDK's tracing switch, whether its methods are wrapped) in a fresh interpreter."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in (A2A_SDK_TRACING, "ACCORD_OTEL_LIBRARY_SPANS")
    }
    out = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    enabled, wrapped = out.stdout.split()
    return enabled == "True", wrapped == "True"


def test_a_loaded_service_wraps_nothing_of_the_sdk_by_default() -> None:
    assert _sdk_after_loading_a_service() == (False, False)


def test_library_spans_keep_the_sdk_wrappers() -> None:
    assert _sdk_after_loading_a_service(ACCORD_OTEL_LIBRARY_SPANS="true") == (True, True)


def test_an_explicit_sdk_switch_wins() -> None:
    assert _sdk_after_loading_a_service(**{A2A_SDK_TRACING: "true"}) == (True, True)


@pytest.mark.parametrize(("library_spans", "expected"), [(False, "false"), (True, None)])
def test_the_switch_is_set_only_when_library_spans_are_off(
    library_spans: bool, expected: str | None
) -> None:
    env: dict[str, str] = {}
    quiet_a2a_sdk_wrappers(library_spans, env)
    assert env.get(A2A_SDK_TRACING) == expected
