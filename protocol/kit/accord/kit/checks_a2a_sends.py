"""Kit checks of idempotent send (IDEM-002, IDEM-003): the card says a send is keyed by
(principal, messageId), a copy of a message is answered with the task the first one made, and
another message under the same messageId is IDEMPOTENCY_CONFLICT.

Registered on :data:`A2A_CHECKS` after checks_a2a.py's (run_checks imports this module). They
send the probe conversation's first message again, so they make no task and no side effect of
their own: an agent that keys sends answers with the probe's task, one that does not starts a
second task (and is told so).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import IDEMPOTENT_SEND_EXTENSION_URI
from accord.kit.a2a_context import A2AContext, ProbeRun
from accord.kit.a2a_wire import Exchange, task_of
from accord.kit.checks_a2a import A2A_CHECKS, _expect_code
from accord.kit.model import Skipped, Violation

check = A2A_CHECKS
OTHER_TEXT: Final = "accord contract test: another message under the same messageId"


def _first_message(ctx: A2AContext, run: ProbeRun) -> dict[str, Any]:
    """The probe's first message as it was sent, with the metadata a retrying client would
    build afresh (a new envelope: a new deadline): still the same message."""
    params = run.first.answer.sent.get("params")
    message = params.get("message") if isinstance(params, Mapping) else None
    if not isinstance(message, Mapping) or not message.get("messageId"):
        raise Skipped("the probe's first message is not on record")
    again = copy.deepcopy(dict(message))
    again["metadata"] = ctx.metadata(run.probe, run.skill)
    return again


def _same_task(answer: Exchange | None, run: ProbeRun, binding: str) -> None:
    if answer is None:
        return  # the card declares no such interface
    task = task_of(answer.result if binding == "JSON-RPC" else answer.body)
    expected = f"{binding}: the same message again answers with the probe's task {run.task_id}"
    if task is None or task.get("id") != run.task_id:
        raise Violation(
            f"{binding}: a copy of the probe's message got "
            + (f"another task ({task.get('id')})" if task else "no task"),
            sent=answer.sent,
            received=answer.shown(),
            expected=expected,
        )


@check("IDEM-002", "card declares the idempotent-send extension")
async def card_idempotent_send(ctx: A2AContext) -> None:
    if ctx.extension(IDEMPOTENT_SEND_EXTENSION_URI) is None:
        raise Violation(
            f"capabilities.extensions lacks {IDEMPOTENT_SEND_EXTENSION_URI}",
            received=ctx.card.get("capabilities"),
        )


@check("IDEM-002", "the same message again answers with the first one's task, on both bindings")
async def resend_same_task(ctx: A2AContext) -> None:
    run = await ctx.probe_run()
    again = _first_message(ctx, run)
    params = {"message": again, "configuration": {"returnImmediately": True}}
    _same_task(await ctx.rpc("SendMessage", params), run, "JSON-RPC")
    _same_task(await ctx.rest("POST", "/message:send", body=params), run, "HTTP+JSON")


@check("IDEM-003", "another message under a sent messageId is IDEMPOTENCY_CONFLICT")
async def resend_other_parts(ctx: A2AContext) -> None:
    run = await ctx.probe_run()
    other = _first_message(ctx, run)
    other["parts"] = [{"text": OTHER_TEXT}]
    answer = await ctx.rpc("SendMessage", {"message": other})
    _expect_code(
        answer,
        ErrorCode.IDEMPOTENCY_CONFLICT,
        "SendMessage",
        "the probe's messageId with other parts: JSON-RPC error IDEMPOTENCY_CONFLICT",
    )
