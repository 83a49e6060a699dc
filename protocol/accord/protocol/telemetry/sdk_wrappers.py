"""a2a-sdk's tracing wrappers, switched off before the SDK is imported when its spans are off.

a2a-sdk wraps every method of its request handler, event queue and consumer in a tracing
decorator at import time. Which tracer the decorator calls is fixed when ``a2a.utils.telemetry``
is first imported: OpenTelemetry's, unless ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED`` is then
anything but ``true``, in which case a do-nothing object. :class:`~accord.protocol.telemetry.setup.
AccordTracerProvider` already hands those wrappers a no-op tracer, so nothing is recorded either
way; but each wrapped call still asks for a tracer and enters and leaves a span context, about
4% of an A2A service's CPU (docs/performance.md). With the switch off a wrapped call still
costs a call of the wrapper, two attribute lookups on the do-nothing object and its ``with``
block, at every method of every event (2-5% of a check agent's samples).

So with the switch off the SDK wraps nothing at all: its two decorators, ``trace_function`` and
``trace_class``, are swapped for ones that return what they decorate, the moment its telemetry
module has run and before any module of the SDK that uses them is imported (a one-shot import
hook: a tool server, which never imports the SDK, pays nothing). The methods are then the SDK's
own functions, as if it had been built without tracing. With library spans on nothing changes.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Callable, MutableMapping, Sequence
from types import ModuleType
from typing import Any, Final, TypeVar

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
    # a2a-sdk's own variable, not an ACCORD_* setting: written here for the SDK (and the
    # processes this one starts) to read.
    env = os.environ if env is None else env
    if not library_spans:
        env.setdefault(A2A_SDK_TRACING, "false")
    if _A2A_TELEMETRY_MODULE in sys.modules:
        return not bool(getattr(sys.modules[_A2A_TELEMETRY_MODULE], "otel_enabled", True))
    quiet = env.get(A2A_SDK_TRACING, "true").lower() != "true"
    if quiet and env is os.environ and not any(isinstance(f, _Untraced) for f in sys.meta_path):
        sys.meta_path.insert(0, _Untraced())
    return quiet


_F = TypeVar("_F", bound=Callable[..., Any])


def _untraced_function(func: _F | None = None, **_: Any) -> Any:
    """``trace_function`` that wraps nothing, in both of its forms (``@trace_function`` and
    ``@trace_function(span_name=...)``)."""
    if func is None:
        return lambda f: f
    return func


def _untraced_class(*_: Any, **__: Any) -> Callable[[type], type]:
    """``trace_class(...)`` that leaves the class as it is."""
    return lambda cls: cls


class _Untraced(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when the SDK's telemetry module is imported, lets the normal
    finders load it and, once it has run with its switch off, swaps its decorators."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _A2A_TELEMETRY_MODULE:
            return None
        sys.meta_path.remove(self)  # one use; and the search below must not find this finder
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            if not getattr(module, "otel_enabled", True):
                module.trace_function = _untraced_function  # type: ignore[attr-defined]
                module.trace_class = _untraced_class  # type: ignore[attr-defined]

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
