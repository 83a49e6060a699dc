"""a2a-sdk's tracing wrappers, switched off before the SDK is imported when its spans are off.

a2a-sdk wraps every method of its request handler, event queue and consumer in a tracing
decorator at import time. Which tracer the decorator calls is fixed when ``a2a.utils.telemetry``
is first imported: OpenTelemetry's, unless ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED`` is then
anything but ``true``, in which case a do-nothing object. :class:`~accord.protocol.telemetry.setup.
AccordTracerProvider` already hands those wrappers a no-op tracer, so nothing is recorded either
way; but each wrapped call still asks for a tracer and enters and leaves a span context, about
4% of an A2A service's CPU (docs/performance.md). With the switch off a wrapped call costs two
attribute lookups on the do-nothing object, and no context change.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from typing import Final

A2A_SDK_TRACING: Final = "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"
"""a2a-sdk's own switch (a2a.utils.telemetry.ENABLED_ENV_VAR), read once, at its import."""

_A2A_TELEMETRY_MODULE: Final = "a2a.utils.telemetry"


def quiet_a2a_sdk_wrappers(
    library_spans: bool, env: MutableMapping[str, str] | None = None
) -> bool:
    """Unless the SDK's spans are kept (``ACCORD_OTEL_LIBRARY_SPANS``), set a2a-sdk's switch
    off for this process and the processes it starts. An explicit value in the environment
    wins: whoever set it asked for it. Returns whether the SDK will wrap nothing (False also
    when it was imported before this call: its wrappers are in place for the process)."""
    env = os.environ if env is None else env
    if not library_spans:
        env.setdefault(A2A_SDK_TRACING, "false")
    if _A2A_TELEMETRY_MODULE in sys.modules:
        return not bool(getattr(sys.modules[_A2A_TELEMETRY_MODULE], "otel_enabled", True))
    return env.get(A2A_SDK_TRACING, "true").lower() != "true"
