"""Span names, attribute keys and the few helpers every hop uses.

Names follow the OpenTelemetry GenAI conventions where they apply:

    invoke_agent {agent}       CLIENT in the caller (A2A client), INTERNAL in the agent (executor)
    execute_tool {tool}        CLIENT in the caller (MCP client), SERVER in the tool server
    A2A {operation}            SERVER, one per A2A HTTP request (SendMessage, GetTask, ...)
    workflow.node {node}       INTERNAL, one per node attempt of a durable workflow

A failure sets ``error.type`` to the contract's error code (``POLICY_DENIED``, ...) and the span
status to ERROR; only an unexpected Python exception is named by its class instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import TRACEPARENT_KEY

TRACER: Final = trace.get_tracer("accord")
"""Resolves to the installed provider once setup_telemetry ran; a pass-through no-op before."""

# GenAI semantic conventions (incubating in opentelemetry-semantic-conventions, so spelled here).
GEN_AI_OPERATION: Final = "gen_ai.operation.name"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
INVOKE_AGENT: Final = "invoke_agent"
EXECUTE_TOOL: Final = "execute_tool"
ERROR_TYPE: Final = "error.type"

# Ours.
TASK_ID: Final = "accord.task.id"
SKILL: Final = "accord.skill"
STATUS: Final = "accord.status"
OPERATION: Final = "accord.operation"
PROTOCOL: Final = "accord.protocol"
WORKFLOW_ID: Final = "accord.workflow.id"
NODE: Final = "accord.workflow.node"
ATTEMPT: Final = "accord.attempt"
TOOL_SERVER: Final = "accord.tool.server"


def traceparent_of(context: Context | None = None) -> str | None:
    """The W3C traceparent of ``context`` (default: the current one), if it holds a span."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=context)
    return carrier.get(TRACEPARENT_KEY)


def current_traceparent() -> str | None:
    """The traceparent of the active span (or of the remote parent the server extracted)."""
    if not trace.get_current_span().get_span_context().is_valid:
        return None
    return traceparent_of()


def context_of(traceparent: str | None) -> Context | None:
    """A context whose parent is ``traceparent``; None when absent or malformed."""
    if not traceparent:
        return None
    ctx = propagate.extract({TRACEPARENT_KEY: traceparent})
    return ctx if trace.get_current_span(ctx).get_span_context().is_valid else None


def parent_context(explicit: str | None) -> Context | None:
    """Where a new span hangs: the active span when there is one (None: the current context),
    else the caller's explicit traceparent (the envelope's, a test's), else a new trace."""
    if trace.get_current_span().get_span_context().is_valid:
        return None
    return context_of(explicit)


def error_type(error: BaseException | ErrorCode) -> str:
    """The ``error.type`` value: the contract code, or the class of an unexpected exception."""
    if isinstance(error, ErrorCode):
        return error.value
    if isinstance(error, AccordError):
        return error.code.value
    return type(error).__qualname__


def mark_error(span: Span, error: BaseException | ErrorCode) -> None:
    """``error.type`` and ERROR status on ``span`` (never the exception's text: it may carry
    user data; the code is what a reader filters on)."""
    kind = error_type(error)
    span.set_attribute(ERROR_TYPE, kind)
    span.set_status(Status(StatusCode.ERROR, kind))


def mark_current_error(error: BaseException | ErrorCode) -> None:
    mark_error(trace.get_current_span(), error)


@contextmanager
def span(
    name: str,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    context: Context | None = None,
    attributes: Mapping[str, Any] | None = None,
) -> Iterator[Span]:
    """A current span that records a raised exception as ``error.type`` (code or class)."""
    with TRACER.start_as_current_span(
        name,
        context=context,
        kind=kind,
        attributes=dict(attributes or {}),
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as exc:
            if not isinstance(exc, GeneratorExit):
                mark_error(current, exc)
            raise


def agent_attributes(agent: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {GEN_AI_OPERATION: INVOKE_AGENT, GEN_AI_AGENT_NAME: agent, **_present(extra or {})}


def tool_attributes(tool: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {GEN_AI_OPERATION: EXECUTE_TOOL, GEN_AI_TOOL_NAME: tool, **_present(extra or {})}


def _present(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}
