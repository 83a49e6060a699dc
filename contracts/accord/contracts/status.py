"""The task lifecycle: five statuses, legal transitions, and the two-way A2A mapping.

Pure data: the A2A TaskState names are spelled here as strings so that this package never
imports a protocol SDK.

    queued ──> running ──> completed
      │          │  ▲
      │          ▼  │
      │        waiting (input | approval | auth)
      │          │
      └──────────┴──────> failed (with an error code; ``declined`` when the agent said no)

An agent that declines what was asked still ends its A2A task TASK_STATE_REJECTED; in the
contract that is ``failed`` with the code of why, and :attr:`ContractState.declined` (read from
the A2A state) tells a decline from a fault. Nothing went wrong, so a caller does not retry the
same request (:data:`REJECTABLE` says which codes may qualify a decline). Contract 1.2 had a
sixth status, ``rejected``, for it; contract 2.0 took it back (docs/contract.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final

from pydantic import BaseModel, ConfigDict, model_validator

from accord.contracts.errors import AccordError, ErrorCode


class Status(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"


class WaitingReason(StrEnum):
    INPUT = "input"  # the caller must answer a question
    APPROVAL = "approval"  # a principal with the approver role must decide
    AUTH = "auth"  # the caller must supply a credential


class A2AState(StrEnum):
    """A2A 1.0 TaskState enum names as they appear on the wire (proto3 JSON)."""

    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELED = "TASK_STATE_CANCELED"
    REJECTED = "TASK_STATE_REJECTED"


TERMINAL: Final = frozenset({Status.COMPLETED, Status.FAILED})

WITH_ERROR: Final = frozenset({Status.FAILED})
"""Statuses an error code qualifies: why it failed (or why the agent declined)."""

# A decline is a decision about the request, never a transient fault: only codes a retry of
# the same request cannot change qualify it (the registry's retry class is not RETRY, and
# CANCELED is the caller's own doing). ContractExecutor refuses any other as CONTRACT_VIOLATION.
REJECTABLE: Final = frozenset(
    {
        ErrorCode.POLICY_DENIED,
        ErrorCode.INVALID_INPUT,
        ErrorCode.PERMISSION_DENIED,
        ErrorCode.UNSUPPORTED_OPERATION,
        ErrorCode.OUT_OF_STOCK,
        ErrorCode.NOT_FOUND,
    }
)

TRANSITIONS: Final[Mapping[Status, frozenset[Status]]] = {
    Status.QUEUED: frozenset({Status.RUNNING, Status.FAILED}),
    Status.RUNNING: frozenset({Status.WAITING, Status.COMPLETED, Status.FAILED}),
    Status.WAITING: frozenset({Status.RUNNING, Status.FAILED}),
    Status.COMPLETED: frozenset(),
    Status.FAILED: frozenset(),
}


def can_transition(current: Status, target: Status) -> bool:
    return target in TRANSITIONS[current]


def check_transition(current: Status, target: Status) -> None:
    """Raise CONTRACT_VIOLATION for a transition the lifecycle does not allow."""
    if not can_transition(current, target):
        raise AccordError(
            ErrorCode.CONTRACT_VIOLATION,
            f"illegal status transition {current.value} -> {target.value}",
            {"from": current.value, "to": target.value, "requirement": "STATUS-003"},
        )


class ContractState(BaseModel):
    """A contract status with what qualifies it: why it waits, or why it failed, and whether
    the failure is the agent's decline (A2A TASK_STATE_REJECTED) rather than a fault."""

    model_config = ConfigDict(frozen=True)

    status: Status
    waiting_reason: WaitingReason | None = None
    error_code: ErrorCode | None = None
    declined: bool = False

    @model_validator(mode="after")
    def _qualifiers_fit(self) -> ContractState:
        if (self.status is Status.WAITING) != (self.waiting_reason is not None):
            raise ValueError("waiting_reason is required for, and only for, status 'waiting'")
        if (self.status in WITH_ERROR) != (self.error_code is not None):
            raise ValueError("error_code is required for, and only for, status 'failed'")
        if self.declined and (
            self.status is not Status.FAILED or self.error_code is ErrorCode.CANCELED
        ):
            raise ValueError("only a failure that is not CANCELED can be a decline")
        return self


# Contract -> A2A. One table; `to_a2a` reads it.
_TO_A2A: Final[Mapping[Status, A2AState]] = {
    Status.QUEUED: A2AState.SUBMITTED,
    Status.RUNNING: A2AState.WORKING,
    Status.WAITING: A2AState.INPUT_REQUIRED,
    Status.COMPLETED: A2AState.COMPLETED,
    Status.FAILED: A2AState.FAILED,
}
_WAITING_TO_A2A: Final[Mapping[WaitingReason, A2AState]] = {
    WaitingReason.INPUT: A2AState.INPUT_REQUIRED,
    WaitingReason.APPROVAL: A2AState.INPUT_REQUIRED,
    WaitingReason.AUTH: A2AState.AUTH_REQUIRED,
}

# A2A -> contract status. CANCELED and REJECTED are failures with a code; REJECTED is also
# `declined` (DECLINED_A2A).
FROM_A2A: Final[Mapping[A2AState, Status]] = {
    A2AState.SUBMITTED: Status.QUEUED,
    A2AState.WORKING: Status.RUNNING,
    A2AState.INPUT_REQUIRED: Status.WAITING,
    A2AState.AUTH_REQUIRED: Status.WAITING,
    A2AState.COMPLETED: Status.COMPLETED,
    A2AState.FAILED: Status.FAILED,
    A2AState.CANCELED: Status.FAILED,
    A2AState.REJECTED: Status.FAILED,
}

DECLINED_A2A: Final = A2AState.REJECTED
"""The A2A state of a decline: the one state read as ``failed`` with ``declined`` set."""

# When the peer did not say (a non-Accord agent), these are the defaults.
DEFAULT_WAITING_REASON: Final[Mapping[A2AState, WaitingReason]] = {
    A2AState.INPUT_REQUIRED: WaitingReason.INPUT,
    A2AState.AUTH_REQUIRED: WaitingReason.AUTH,
}
DEFAULT_FAILURE_CODE: Final[Mapping[A2AState, ErrorCode]] = {
    A2AState.FAILED: ErrorCode.INTERNAL,
    A2AState.CANCELED: ErrorCode.CANCELED,
    A2AState.REJECTED: ErrorCode.POLICY_DENIED,
}


def to_a2a(state: ContractState) -> A2AState:
    """The A2A TaskState that reports a contract state."""
    if state.status is Status.WAITING and state.waiting_reason is not None:
        return _WAITING_TO_A2A[state.waiting_reason]
    if state.status is Status.FAILED and state.error_code is ErrorCode.CANCELED:
        return A2AState.CANCELED
    if state.declined:
        return DECLINED_A2A
    return _TO_A2A[state.status]


def from_a2a(
    state: A2AState | str,
    *,
    waiting_reason: WaitingReason | str | None = None,
    error_code: ErrorCode | str | None = None,
) -> ContractState:
    """Read an A2A TaskState (plus what the status message metadata says) as a contract state.

    ``waiting_reason`` and ``error_code`` come from the machine-readable status metadata when
    the peer is an Accord agent; otherwise the defaults above apply. CANCELED is always
    `failed/CANCELED`, whatever a peer claims; REJECTED is `failed` and ``declined``.
    """
    a2a = A2AState(state)
    status = FROM_A2A[a2a]
    if status is Status.WAITING:
        reason = _parse_reason(waiting_reason) or DEFAULT_WAITING_REASON[a2a]
        if a2a is A2AState.AUTH_REQUIRED:
            reason = WaitingReason.AUTH
        elif reason is WaitingReason.AUTH:
            reason = WaitingReason.INPUT
        return ContractState(status=status, waiting_reason=reason)
    if status in WITH_ERROR:
        if a2a is A2AState.CANCELED:
            return ContractState(status=status, error_code=ErrorCode.CANCELED)
        code = _parse_code(error_code) or DEFAULT_FAILURE_CODE[a2a]
        declined = a2a is DECLINED_A2A
        if declined and code is ErrorCode.CANCELED:  # the caller cancels; an agent cannot
            code = DEFAULT_FAILURE_CODE[a2a]
        return ContractState(status=status, error_code=code, declined=declined)
    return ContractState(status=status)


def _parse_reason(value: WaitingReason | str | None) -> WaitingReason | None:
    try:
        return WaitingReason(value) if value is not None else None
    except ValueError:
        return None


def _parse_code(value: ErrorCode | str | None) -> ErrorCode | None:
    try:
        return ErrorCode(value) if value is not None else None
    except ValueError:
        return None
