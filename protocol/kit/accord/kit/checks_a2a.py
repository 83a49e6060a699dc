"""The checks the kit runs against an A2A agent, in order, each tagged with a requirement ID.

Early checks provoke behaviour (budget, deadline, the skill probe, cancel) and record what the
agent emitted; the last checks read everything recorded (transitions, status metadata, error
DataParts, JSON-RPC error shapes), so one conversation is judged against every rule it touches.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from google.protobuf.json_format import ParseDict, ParseError

from accord.contracts.errors import (
    A2A_ERROR_DOMAIN,
    A2A_REASON_OF_JSONRPC,
    ERROR_INFO_TYPE,
    REGISTRY,
    ErrorCode,
)
from accord.contracts.keys import (
    CARD_CONTRACT_VERSIONS_PARAM,
    CARD_ERRORS_PARAM,
    CARD_WAITING_REASONS_PARAM,
    CONTRACT_EXTENSION_URI,
    CONTRACT_VERSION_META_KEY,
    DELEGATION_EXTENSION_URI,
    STATUS_META_KEY,
)
from accord.contracts.status import (
    DECLINED_A2A,
    REJECTABLE,
    TERMINAL,
    A2AState,
    ContractState,
    Status,
    WaitingReason,
    can_transition,
    from_a2a,
    to_a2a,
)
from accord.contracts.status_meta import meta_status, meta_waiting_reason
from accord.contracts.versions import major
from accord.kit.a2a_context import (
    INTERRUPTED_A2A,
    TERMINAL_A2A,
    A2AContext,
    Observed,
    last_state,
)
from accord.kit.a2a_wire import (
    Exchange,
    accord_reason,
    data_part_error_code,
    error_code_of,
    meta_error_code,
    status_meta,
    status_of,
    task_of,
    user_message,
)
from accord.kit.check import CheckList
from accord.kit.model import Skipped, Violation
from accord.kit.probes import fill

A2A_CHECKS: Final = CheckList[A2AContext]()
check = A2A_CHECKS

E = ErrorCode
UNKNOWN_TASK: Final = "accord-contract-test-no-such-task"


def _expect_code(answer: Exchange, code: ErrorCode, what: str, expected: str) -> None:
    error = answer.error
    found = error_code_of(error)
    if error is None or found is not code:
        raise Violation(
            f"{what}: expected {code.value}, got "
            + (f"error {found.value if found else error}" if error else "no error"),
            sent=answer.sent,
            received=answer.shown(),
            expected=expected,
        )
    if "result" in (answer.body or {}):
        raise Violation(
            f"{what}: the error answer also carries a result",
            sent=answer.sent,
            received=answer.shown(),
            expected=expected,
        )


def _final_code(obs: Observed) -> str | None:
    if not obs.statuses:
        return None
    status = obs.statuses[-1]
    return meta_error_code(status) or data_part_error_code(status)


def _expect_failed(obs: Observed, code: ErrorCode, expected: str) -> None:
    """The exchange refused with ``code``, or produced a task that ended failed with it."""
    error = obs.answer.error
    if error is not None:
        if error_code_of(error) is code:
            return
        raise Violation(
            f"refused with {error_code_of(error) or error}, not {code.value}",
            sent=obs.answer.sent,
            received=obs.answer.shown(),
            expected=expected,
        )
    state = last_state(obs)
    if state not in (A2AState.FAILED, A2AState.REJECTED):
        raise Violation(
            f"the task ended {state}, not failed with {code.value}",
            sent=obs.answer.sent,
            received=obs.answer.shown(),
            expected=expected,
        )
    found = _final_code(obs)
    if found != code.value:
        raise Violation(
            f"the task failed with {found or 'no contract code'} (status metadata "
            f"and error DataPart), not {code.value}",
            sent=obs.answer.sent,
            received=obs.answer.shown(),
            expected=expected,
        )


# -- the card (no credential needed) -------------------------------------------------------------


@check("AGENT-002", "card is public and a valid A2A 1.0 AgentCard")
async def card_valid(ctx: A2AContext) -> None:
    from a2a.types import AgentCard

    try:
        card = ParseDict(ctx.card, AgentCard(), ignore_unknown_fields=False)
    except ParseError as exc:
        raise Violation(
            f"the card does not parse as an A2A 1.0 AgentCard: {exc}", received=ctx.card
        ) from None
    missing = [f for f in ("name", "version", "description") if not getattr(card, f)]
    if missing or not card.supported_interfaces or not card.skills:
        raise Violation(
            f"the card lacks {missing or ''}"
            f"{' interfaces' if not card.supported_interfaces else ''}"
            f"{' skills' if not card.skills else ''}",
            received=ctx.card,
        )


@check("AGENT-002", "card declares the contract extension")
async def card_contract_ext(ctx: A2AContext) -> None:
    if ctx.extension(CONTRACT_EXTENSION_URI) is None:
        raise Violation(
            f"capabilities.extensions lacks {CONTRACT_EXTENSION_URI}",
            received=ctx.card.get("capabilities"),
        )


@check("ENV-001", "card declares the delegation extension")
async def card_delegation_ext(ctx: A2AContext) -> None:
    if ctx.extension(DELEGATION_EXTENSION_URI) is None:
        raise Violation(
            f"capabilities.extensions lacks {DELEGATION_EXTENSION_URI}",
            received=ctx.card.get("capabilities"),
        )


@check("AGENT-002", "card declares security schemes and requirements")
async def card_security(ctx: A2AContext) -> None:
    schemes = ctx.card.get("securitySchemes")
    requirements = ctx.card.get("securityRequirements") or ctx.card.get("security")
    if not isinstance(schemes, dict) or not schemes or not requirements:
        raise Violation(
            "the card declares no securitySchemes / securityRequirements",
            received={"securitySchemes": schemes, "securityRequirements": requirements},
        )


# -- authentication ------------------------------------------------------------------------------


async def _expect_unauthenticated(ctx: A2AContext, headers: dict[str, str], what: str) -> None:
    answer = await ctx.rpc("GetTask", {"id": UNKNOWN_TASK}, headers)
    if answer.status != 401:
        raise Violation(
            f"{what}: HTTP {answer.status}, not 401", sent=answer.sent, received=answer.shown()
        )
    if "www-authenticate" not in {k.lower() for k in answer.headers}:
        raise Violation(
            f"{what}: 401 without a WWW-Authenticate header",
            sent=answer.sent,
            received={"headers": dict(answer.headers)},
        )
    if answer.error is not None and error_code_of(answer.error) is not E.UNAUTHENTICATED:
        raise Violation(
            f"{what}: the error code is {error_code_of(answer.error)}, not UNAUTHENTICATED",
            sent=answer.sent,
            received=answer.shown(),
        )


@check("AGENT-003", "JSON-RPC without a credential is 401 UNAUTHENTICATED")
async def no_credential(ctx: A2AContext) -> None:
    await _expect_unauthenticated(ctx, {}, "no credential")


@check("AGENT-003", "JSON-RPC with an invalid token is 401 UNAUTHENTICATED")
async def bad_credential(ctx: A2AContext) -> None:
    await _expect_unauthenticated(
        ctx, {"Authorization": "Bearer accord-contract-test.not.a-token"}, "invalid token"
    )


@check("AGENT-003", "HTTP+JSON without a credential is 401")
async def rest_no_credential(ctx: A2AContext) -> None:
    answer = await ctx.wire.rest("GET", f"/tasks/{UNKNOWN_TASK}", {})
    if answer is None:
        raise Skipped("the card declares no HTTP+JSON interface")
    ctx.rest_answers.append(answer)
    if answer.status != 401:
        raise Violation(f"HTTP {answer.status}, not 401", sent=answer.sent, received=answer.shown())


# -- tenancy: unknown and foreign tasks ---------------------------------------------------------


@check("AGENT-004", "unknown task is NOT_FOUND for get and cancel")
async def unknown_task(ctx: A2AContext) -> None:
    expected = "GetTask/CancelTask of an unknown id: JSON-RPC error NOT_FOUND (-32001)"
    _expect_code(await ctx.get_task(UNKNOWN_TASK), E.NOT_FOUND, "GetTask", expected)
    _expect_code(
        await ctx.rpc("CancelTask", {"id": UNKNOWN_TASK}), E.NOT_FOUND, "CancelTask", expected
    )


@check("AGENT-004", "unknown task is 404 over HTTP+JSON")
async def unknown_task_rest(ctx: A2AContext) -> None:
    ctx.auth()
    answer = await ctx.rest("GET", f"/tasks/{UNKNOWN_TASK}")
    if answer is None:
        raise Skipped("the card declares no HTTP+JSON interface")
    if answer.status != REGISTRY[E.NOT_FOUND].rest_status:
        raise Violation(f"HTTP {answer.status}, not 404", sent=answer.sent, received=answer.shown())


@check("AGENT-004", "another tenant's task is NOT_FOUND, with no data")
async def foreign_task(ctx: A2AContext) -> None:
    other = ctx.other_auth()
    run = await ctx.probe_run()
    expected = "another tenant's task id: NOT_FOUND for get, cancel and send; never data"
    _expect_code(await ctx.get_task(run.task_id, other), E.NOT_FOUND, "GetTask", expected)
    _expect_code(
        await ctx.rpc("CancelTask", {"id": run.task_id}, other), E.NOT_FOUND, "CancelTask", expected
    )
    listed = await ctx.rpc("ListTasks", {}, other)
    if run.task_id in str(listed.body):
        raise Violation(
            "ListTasks of another tenant shows the task",
            sent=listed.sent,
            received=listed.shown(),
            expected=expected,
        )


# -- the envelope ------------------------------------------------------------------------------


@check("ENV-002", "malformed envelope is INVALID_INPUT")
async def bad_envelope(ctx: A2AContext) -> None:
    skill, probe = ctx.pick_probe()
    envelope = ctx.envelope()
    envelope["budget"] = {"units": "lots", "tool_calls": -1}  # wrong type, missing deadline
    message = user_message(
        fill(probe.message, ctx.run), metadata=ctx.metadata(probe, skill, envelope)
    )
    obs = await ctx.send("malformed envelope", message)
    _expect_failed(
        obs,
        E.INVALID_INPUT,
        "a malformed envelope is INVALID_INPUT (JSON-RPC error or a failed task with that code)",
    )


@check("ENV-004", "exhausted budget fails the task with BUDGET_EXHAUSTED")
async def budget_exhausted(ctx: A2AContext) -> None:
    skill, probe = ctx.pick_probe()
    message = user_message(
        fill(probe.message, ctx.run), metadata=ctx.metadata(probe, skill, ctx.envelope(units=0))
    )
    obs = await ctx.send("budget units 0", message)
    ctx.remember("budget_task", obs)
    _expect_failed(
        obs,
        E.BUDGET_EXHAUSTED,
        "work the budget cannot cover is not started; the task fails with "
        f"BUDGET_EXHAUSTED in {STATUS_META_KEY} and an error DataPart",
    )


async def _past_deadline(ctx: A2AContext) -> Observed:
    skill, probe = ctx.pick_probe()
    past = (datetime.now(UTC) - timedelta(seconds=5)).isoformat().replace("+00:00", "Z")
    message = user_message(
        fill(probe.message, ctx.run),
        metadata=ctx.metadata(probe, skill, ctx.envelope(deadline=past)),
    )
    return await ctx.send("deadline passed", message)


@check("ENV-005", "past deadline fails the task with RETRYABLE_TIMEOUT")
async def deadline_passed(ctx: A2AContext) -> None:
    obs = await ctx.memo("deadline", lambda: _past_deadline(ctx))
    _expect_failed(
        obs,
        E.RETRYABLE_TIMEOUT,
        "work past the envelope's deadline ends failed with RETRYABLE_TIMEOUT",
    )


@check("TIMEOUT-001", "a timed-out task is not reported as running")
async def timed_out_not_running(ctx: A2AContext) -> None:
    obs = await ctx.memo("deadline", lambda: _past_deadline(ctx))
    if obs.task_id is None:
        raise Skipped("the past-deadline message was refused before a task existed")
    answer = await ctx.get_task(obs.task_id)
    task = task_of(answer.result)
    state = (task or {}).get("status", {}).get("state")
    if state not in TERMINAL_A2A:
        raise Violation(
            f"GetTask of the timed-out task says {state}", sent=answer.sent, received=answer.shown()
        )


# -- the probe conversation --------------------------------------------------------------------


@check("AGENT-005", "a task waiting for input continues in the same task")
async def waits_and_continues(ctx: A2AContext) -> None:
    declared = ctx.declared(CARD_WAITING_REASONS_PARAM)
    if declared is not None and WaitingReason.INPUT.value not in declared:
        raise Skipped("the card declares no 'input' waiting reason")
    run = await ctx.probe_run()
    if last_state(run.first) != A2AState.INPUT_REQUIRED:
        raise Skipped(
            f"the probe for {run.skill} did not wait for input "
            f"(ended {last_state(run.first)}); pass a --probe that does"
        )
    if run.answer is None:
        raise Skipped(f"the probe for {run.skill} has no answer")
    obs = run.answer
    if obs.answer.error is not None or obs.task_id != run.task_id:
        raise Violation(
            f"the answer did not continue task {run.task_id} (got task {obs.task_id})",
            sent=obs.answer.sent,
            received=obs.answer.shown(),
        )
    state = last_state(obs)
    if state not in (A2AState.COMPLETED, *INTERRUPTED_A2A):
        raise Violation(
            f"after the answer the task is {state}, not completed or waiting",
            sent=obs.answer.sent,
            received=obs.answer.shown(),
        )


@check("STATUS-004", "a terminal task keeps its status and refuses further messages")
async def terminal_stays(ctx: A2AContext) -> None:
    run = await ctx.probe_run()
    final = last_state(run.last)
    if final not in TERMINAL_A2A:
        raise Skipped(f"the probe did not end in a terminal state ({final})")
    got = await ctx.get_task(run.task_id)
    state = (task_of(got.result) or {}).get("status", {}).get("state")
    if state != final:
        raise Violation(
            f"the stream ended {final} but GetTask says {state}",
            sent=got.sent,
            received=got.shown(),
        )
    skill, probe = run.skill, run.probe
    again = user_message(
        fill(probe.answer or probe.message, ctx.run),
        task_id=run.task_id,
        metadata=ctx.metadata(probe, skill),
    )
    answer = await ctx.rpc("SendMessage", {"message": again})
    if answer.error is None:
        raise Violation(
            "a message to a terminal task was accepted", sent=answer.sent, received=answer.shown()
        )


@check("STATUS-008", "a declined request ends A2A REJECTED: failed, declined, with its code")
async def declines_rejected(ctx: A2AContext) -> None:
    found = [(s, p) for s in ctx.skill_ids() if (p := ctx.options.probes.agents.get(s))]
    declining = [(s, p) for s, p in found if p.decline is not None]
    if not declining:
        raise Skipped("no probe declares a request the agent declines (probe 'decline')")
    skill, probe = declining[0]
    assert probe.decline is not None
    message = user_message(fill(probe.decline, ctx.run), metadata=ctx.metadata(probe, skill))
    obs = await ctx.send(f"decline {skill}", message)
    expected = "a declined request ends TASK_STATE_REJECTED, failed with the code in metadata"
    state = last_state(obs)
    if obs.task_id is None or state != A2AState.REJECTED:
        raise Violation(
            f"the declined request ended {state or obs.answer.shown()}, not TASK_STATE_REJECTED",
            sent=obs.answer.sent,
            received=obs.answer.shown(),
            expected=expected,
        )
    final = obs.statuses[-1]
    claimed = _contract_of(final)
    code = _final_code(obs)
    if claimed is None or not claimed.declined:
        raise Violation(
            f"REJECTED, but {STATUS_META_KEY} says "
            f"{claimed.status.value if claimed else 'nothing readable'}, not failed",
            received=final,
            expected=expected,
        )
    if code is None or ErrorCode(code) not in REJECTABLE:
        raise Violation(
            f"a decline with code {code!r}: a decline carries one of "
            f"{sorted(c.value for c in REJECTABLE)}",
            received=final,
            expected=expected,
        )
    got = await ctx.get_task(obs.task_id)
    stored = (task_of(got.result) or {}).get("status", {}).get("state")
    if stored != A2AState.REJECTED:
        raise Violation(
            f"GetTask says {stored} for the rejected task", sent=got.sent, received=got.shown()
        )
    again = user_message(
        fill(probe.decline, ctx.run), task_id=obs.task_id, metadata=ctx.metadata(probe, skill)
    )
    answer = await ctx.rpc("SendMessage", {"message": again})
    if answer.error is None:
        raise Violation(
            "a message to a rejected (terminal) task was accepted",
            sent=answer.sent,
            received=answer.shown(),
        )


@check("AGENT-006", "cancel of a terminal task is TASK_NOT_CANCELABLE")
async def cancel_terminal(ctx: A2AContext) -> None:
    task_id: str | None = None
    run = await ctx.probe_run()
    if last_state(run.last) in TERMINAL_A2A:
        task_id = run.task_id
    else:
        budget = ctx.recall("budget_task")
        if isinstance(budget, Observed) and last_state(budget) in TERMINAL_A2A:
            task_id = budget.task_id
    if task_id is None:
        raise Skipped("no terminal task was observed to cancel")
    answer = await ctx.rpc("CancelTask", {"id": task_id})
    _expect_code(
        answer,
        E.TASK_NOT_CANCELABLE,
        "CancelTask of a terminal task",
        "cancelling a terminal task is refused with TASK_NOT_CANCELABLE (-32002)",
    )


@check("AGENT-006", "cancel of a waiting task ends it CANCELED")
async def cancel_waiting(ctx: A2AContext) -> None:
    task_id, _ = await ctx.waiting_task()
    answer = await ctx.rpc("CancelTask", {"id": task_id})
    if answer.error is not None:
        raise Violation(
            f"CancelTask was refused: {error_code_of(answer.error)}",
            sent=answer.sent,
            received=answer.shown(),
        )
    got = await ctx.get_task(task_id)
    task = task_of(got.result) or {}
    status: dict[str, Any] = status_of(task) or {}
    ctx.observed.append(Observed("after cancel", task_id, [status], got, snapshot_first=True))
    if status.get("state") != A2AState.CANCELED:
        raise Violation(
            f"after CancelTask the task is {status.get('state')}, not CANCELED",
            sent=got.sent,
            received=got.shown(),
        )
    meta = status_meta(status)
    if meta is not None and (
        meta.get("status") != Status.FAILED or meta_error_code(status) != E.CANCELED
    ):
        raise Violation(
            f"the canceled task's {STATUS_META_KEY} is not failed/CANCELED",
            sent=got.sent,
            received=got.shown(),
        )


@check("ENV-009", "an answer to a waiting task that has ended is refused and changes nothing")
async def late_answer_refused(ctx: A2AContext) -> None:
    # Cancel is the one way from outside to end a waiting task at a moment the kit picks; the
    # answer that follows stands for an approval arriving after its task timed out or ended.
    task_id, _ = await ctx.waiting_task()
    canceled = await ctx.rpc("CancelTask", {"id": task_id})
    if canceled.error is not None:
        raise Skipped(f"CancelTask was refused ({error_code_of(canceled.error)}): see AGENT-006")
    skill, probe = ctx.pick_probe()
    if probe.answer is None:
        raise Skipped(f"the probe for {skill} has no answer")
    late = user_message(
        fill(probe.answer, ctx.run), task_id=task_id, metadata=ctx.metadata(probe, skill)
    )
    answer = await ctx.rpc("SendMessage", {"message": late})
    if answer.error is None:
        raise Violation(
            "an answer to a task that had ended was accepted",
            sent=answer.sent,
            received=answer.shown(),
            expected="a JSON-RPC error; the task stays CANCELED",
        )
    got = await ctx.get_task(task_id)
    state = (status_of(task_of(got.result) or {}) or {}).get("state")
    if state != A2AState.CANCELED:
        raise Violation(
            f"after the refused answer the task is {state}, not CANCELED",
            sent=got.sent,
            received=got.shown(),
        )


# -- contract versions ---------------------------------------------------------------------------


def _stated_versions(ctx: A2AContext) -> list[str]:
    stated = ctx.declared(CARD_CONTRACT_VERSIONS_PARAM)
    if not stated:
        # compat.CARD_ONE_CONTRACT_VERSION
        raise Skipped(f"the card states no {CARD_CONTRACT_VERSIONS_PARAM} (an older agent)")
    return stated


async def _probe_in(ctx: A2AContext, version: str) -> Observed:
    skill, probe = ctx.pick_probe()
    metadata = {**ctx.metadata(probe, skill), CONTRACT_VERSION_META_KEY: version}
    message = user_message(fill(probe.message, ctx.run), metadata=metadata)
    return await ctx.send(f"probe {skill} in contract {version}", message)


@check.each(
    "AGENT-008", "a task naming a stated contract version is answered in it", _stated_versions
)
async def version_served(ctx: A2AContext, version: str) -> None:
    obs = await _probe_in(ctx, version)
    expected = f"the task speaks {version}: not failed, metadata {CONTRACT_VERSION_META_KEY}"
    if obs.task_id is None:
        raise Violation("no task was created", sent=obs.answer.sent, received=obs.answer.shown())
    if _final_code(obs) == E.VERSION_UNSUPPORTED.value:
        raise Violation(
            f"the card states {version}, but a task naming it is VERSION_UNSUPPORTED",
            sent=obs.answer.sent,
            received=obs.answer.shown(),
            expected=expected,
        )
    got = await ctx.get_task(obs.task_id)
    metadata = (task_of(got.result) or {}).get("metadata")
    spoken = metadata.get(CONTRACT_VERSION_META_KEY) if isinstance(metadata, dict) else None
    if spoken != version:
        raise Violation(
            f"the task says it speaks contract {spoken!r}, not {version}",
            sent=got.sent,
            received=got.shown(),
            expected=expected,
        )


@check("AGENT-008", "a task naming a major the agent does not serve is VERSION_UNSUPPORTED")
async def version_refused(ctx: A2AContext) -> None:
    stated = _stated_versions(ctx)
    try:
        beyond = max(major(v) for v in stated) + 1
    except ValueError as bad:
        raise Violation(f"the card states a version that is not semantic: {bad}") from None
    obs = await _probe_in(ctx, f"{beyond}.0.0")
    _expect_failed(obs, E.VERSION_UNSUPPORTED, f"VERSION_UNSUPPORTED naming {stated}")


# -- judging everything observed -----------------------------------------------------------------


def _contract_of(status: Mapping[str, Any]) -> ContractState | None:
    """The contract state the metadata claims (None when absent or malformed): a failure is a
    decline when the A2A state is REJECTED (or an agent of 0.2 wrote ``rejected``)."""
    meta = status_meta(status)
    claimed = meta_status(meta) if meta is not None else None
    if meta is None or claimed is None:
        return None
    contract, declined = claimed
    declined = declined or (contract is Status.FAILED and status.get("state") == DECLINED_A2A)
    try:
        return ContractState(
            status=contract,
            waiting_reason=WaitingReason(reason) if (reason := meta_waiting_reason(meta)) else None,
            error_code=ErrorCode(code) if (code := meta_error_code(status)) else None,
            declined=declined,
        )
    except ValueError:
        return None


def _observed(ctx: A2AContext) -> list[Observed]:
    seen = [o for o in ctx.observed if o.statuses]
    if not seen:
        raise Skipped("no task status was observed (no credential or probe)")
    return seen


def _status_of(status: Mapping[str, Any]) -> Status | None:
    try:
        return from_a2a(str(status.get("state"))).status
    except ValueError:
        return None


@check("STATUS-003", "every observed status sequence is a legal transition")
async def legal_transitions(ctx: A2AContext) -> None:
    await _provoke(ctx)
    for obs in _observed(ctx):
        sequence = [_status_of(s) for s in obs.statuses]
        names = [str(s.get("state")) for s in obs.statuses]
        if None in sequence:
            raise Violation(
                f"{obs.label}: unknown A2A state in {names}", received=obs.answer.shown()
            )
        for before, after in itertools.pairwise(sequence):
            if before is None or after is None:
                continue
            if before == after and before not in TERMINAL:
                continue  # progress notes repeat a state; that is not a transition
            if not can_transition(before, after):
                raise Violation(
                    f"{obs.label}: illegal transition {before.value} -> {after.value} in {names}",
                    sent=obs.answer.sent,
                    received=obs.answer.shown(),
                )


@check("STATUS-005", "each A2A state agrees with the contract status metadata")
async def mapping_consistent(ctx: A2AContext) -> None:
    await _provoke(ctx)
    for obs in _observed(ctx):
        for status in obs.statuses:
            claimed = _contract_of(status)
            if claimed is None:
                continue  # absent or malformed metadata is STATUS-007's finding
            state = str(status.get("state"))
            allowed = {to_a2a(claimed).value}
            if state not in allowed:
                raise Violation(
                    f"{obs.label}: A2A state {state} but {STATUS_META_KEY} says "
                    f"{claimed.status.value}"
                    + (f"/{claimed.error_code.value}" if claimed.error_code else "")
                    + f" (which maps to {sorted(allowed)})",
                    sent=obs.answer.sent,
                    received=status,
                )


@check("STATUS-007", f"every status update carries {STATUS_META_KEY}")
async def status_metadata(ctx: A2AContext) -> None:
    await _provoke(ctx)
    for obs in _observed(ctx):
        updates = obs.statuses[1:] if obs.snapshot_first else obs.statuses
        first = obs.statuses[0] if obs.statuses else {}
        if obs.snapshot_first and (
            first.get("state") != A2AState.SUBMITTED or first.get("message")
        ):
            updates = obs.statuses  # a snapshot is judged too, unless the task just opened
        for status in updates:
            if _contract_of(status) is None:
                raise Violation(
                    f"{obs.label}: a {status.get('state')} status without a valid "
                    f"{STATUS_META_KEY} (status, waitingReason, error)",
                    sent=obs.answer.sent,
                    received=status,
                )


@check("STATUS-002", "a waiting reason appears on waiting statuses only")
async def waiting_reason_only_waiting(ctx: A2AContext) -> None:
    await _provoke(ctx)
    for obs in _observed(ctx):
        for status in obs.statuses:
            meta = status_meta(status)
            if meta is None:
                continue
            waiting = meta.get("status") == Status.WAITING
            if waiting != bool(meta_waiting_reason(meta)):
                raise Violation(
                    f"{obs.label}: status {meta.get('status')} with waitingReason "
                    f"{meta_waiting_reason(meta)!r}",
                    received=status,
                )


@check("ERR-002", "a failed task carries its code in metadata and an error DataPart")
async def failed_carries_code(ctx: A2AContext) -> None:
    await _provoke(ctx)
    failed = [
        (o, s)
        for o in _observed(ctx)
        for s in o.statuses
        if s.get("state") in (A2AState.FAILED, A2AState.REJECTED, A2AState.CANCELED)
    ]
    if not failed:
        raise Skipped("no failed task was observed")
    for obs, status in failed:
        meta, part = meta_error_code(status), data_part_error_code(status)
        if meta is None or part is None or meta != part:
            raise Violation(
                f"{obs.label}: failed task with metadata code {meta!r} and DataPart code {part!r}",
                sent=obs.answer.sent,
                received=status,
            )


@check("AGENT-007", "only declared waiting reasons and error codes are used")
async def declared_only(ctx: A2AContext) -> None:
    reasons = ctx.declared(CARD_WAITING_REASONS_PARAM)
    errors = ctx.declared(CARD_ERRORS_PARAM)
    if reasons is None or errors is None:
        raise Skipped(
            f"the contract extension declares no {CARD_WAITING_REASONS_PARAM} / {CARD_ERRORS_PARAM}"
        )
    await _provoke(ctx)
    # VERSION_UNSUPPORTED: every agent refuses a version it does not serve (AGENT-008).
    allowed = {*errors, E.INTERNAL.value, E.CANCELED.value, E.VERSION_UNSUPPORTED.value}
    for obs in _observed(ctx):
        for status in obs.statuses:
            meta = status_meta(status) or {}
            reason, code = meta_waiting_reason(meta), meta_error_code(status)
            if reason and reason not in reasons:
                raise Violation(
                    f"{obs.label}: waiting reason {reason!r} is not declared ({reasons})",
                    received=status,
                )
            if code and code not in allowed:
                raise Violation(
                    f"{obs.label}: error {code} is not declared ({errors})", received=status
                )


def _error_info_problem(infos: object, code: ErrorCode, jsonrpc_code: int | None) -> str | None:
    """What is wrong with an error's ErrorInfo entries (A2A 1.0 9.5 and 11.6, AIP-193): there
    must be exactly one, in A2A's domain with A2A's reason for an error A2A names."""
    found = [
        i
        for i in (infos if isinstance(infos, list) else [])
        if isinstance(i, Mapping) and i.get("@type") == ERROR_INFO_TYPE
    ]
    if len(found) != 1:
        return f"{len(found)} google.rpc.ErrorInfo entries; A2A allows exactly one"
    number = REGISTRY[code].jsonrpc_code if jsonrpc_code is None else jsonrpc_code
    reason = A2A_REASON_OF_JSONRPC.get(number)
    if reason is not None and (found[0].get("domain"), found[0].get("reason")) != (
        A2A_ERROR_DOMAIN,
        reason,
    ):
        return f"{code.value} is A2A's {reason}: its ErrorInfo must say so in {A2A_ERROR_DOMAIN}"
    return None


@check("ERR-003", "JSON-RPC errors carry the registry code and one ErrorInfo with the code")
async def rpc_error_shape(ctx: A2AContext) -> None:
    errors = [a for a in ctx.rpc_answers if a.error is not None]
    if not errors:
        raise Skipped("no JSON-RPC error was observed")
    for answer in errors:
        error = answer.error or {}
        code = accord_reason(error.get("data"))
        if code is None:
            raise Violation(
                "a JSON-RPC error whose google.rpc.ErrorInfo carries no contract code",
                sent=answer.sent,
                received=answer.shown(),
            )
        raw = error.get("code")
        if raw != REGISTRY[code].jsonrpc_code and raw not in (-32700, -32600):
            raise Violation(
                f"error.code {raw} but the registry says "
                f"{REGISTRY[code].jsonrpc_code} for {code.value}",
                sent=answer.sent,
                received=answer.shown(),
            )
        problem = _error_info_problem(
            error.get("data"), code, raw if isinstance(raw, int) else None
        )
        if problem is not None:
            raise Violation(problem, sent=answer.sent, received=answer.shown())


@check("ERR-004", "HTTP+JSON errors carry the registry status and one ErrorInfo with the code")
async def rest_error_shape(ctx: A2AContext) -> None:
    errors = [a for a in ctx.rest_answers if a.status >= 400]
    if not errors:
        raise Skipped("no HTTP+JSON error was observed")
    for answer in errors:
        error = answer.error or {}
        details = error.get("details")
        code = accord_reason(details)
        if code is None:
            raise Violation(
                "an HTTP+JSON error whose google.rpc.ErrorInfo carries no contract code",
                sent=answer.sent,
                received=answer.shown(),
            )
        if answer.status != REGISTRY[code].rest_status:
            raise Violation(
                f"HTTP {answer.status} but the registry says "
                f"{REGISTRY[code].rest_status} for {code.value}",
                sent=answer.sent,
                received=answer.shown(),
            )
        problem = _error_info_problem(details, code, None)
        if problem is not None:
            raise Violation(problem, sent=answer.sent, received=answer.shown())


async def _provoke(ctx: A2AContext) -> None:
    """Make sure the probe conversation ran, so the judging checks have something to judge."""
    if ctx.options.credential.present:
        with contextlib.suppress(Skipped):
            await ctx.probe_run()
