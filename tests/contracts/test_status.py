from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from accord.contracts import (
    A2AState,
    AccordError,
    ContractState,
    ErrorCode,
    Status,
    WaitingReason,
    can_transition,
    check_transition,
    from_a2a,
    to_a2a,
)
from accord.contracts.errors import REGISTRY, RetryClass
from accord.contracts.status import FROM_A2A, REJECTABLE, TERMINAL, TRANSITIONS

LEGAL = {
    (Status.QUEUED, Status.RUNNING),
    (Status.QUEUED, Status.FAILED),
    (Status.RUNNING, Status.WAITING),
    (Status.RUNNING, Status.COMPLETED),
    (Status.RUNNING, Status.FAILED),
    (Status.WAITING, Status.RUNNING),
    (Status.WAITING, Status.FAILED),
}


def contract_states() -> st.SearchStrategy[ContractState]:
    plain = st.sampled_from([Status.QUEUED, Status.RUNNING, Status.COMPLETED]).map(
        lambda s: ContractState(status=s)
    )
    waiting = st.sampled_from(list(WaitingReason)).map(
        lambda r: ContractState(status=Status.WAITING, waiting_reason=r)
    )
    failed = st.sampled_from(list(ErrorCode)).map(
        lambda c: ContractState(status=Status.FAILED, error_code=c)
    )
    declined = st.sampled_from(sorted(REJECTABLE)).map(
        lambda c: ContractState(status=Status.FAILED, error_code=c, declined=True)
    )
    return st.one_of(plain, waiting, failed, declined)


def test_exactly_five_statuses() -> None:
    assert [s.value for s in Status] == ["queued", "running", "waiting", "completed", "failed"]
    assert {s.value for s in TERMINAL} == {"completed", "failed"}
    assert {r.value for r in WaitingReason} == {"input", "approval", "auth"}


def test_transition_table_is_total_and_matches_the_design() -> None:
    assert set(TRANSITIONS) == set(Status)
    table = {(a, b) for a, targets in TRANSITIONS.items() for b in targets}
    assert table == LEGAL


@given(st.sampled_from(list(Status)), st.sampled_from(list(Status)))
def test_every_illegal_transition_is_refused(current: Status, target: Status) -> None:
    legal = (current, target) in LEGAL
    assert can_transition(current, target) is legal
    if legal:
        check_transition(current, target)
    else:
        with pytest.raises(AccordError) as info:
            check_transition(current, target)
        assert info.value.code is ErrorCode.CONTRACT_VIOLATION


@given(st.sampled_from(sorted(TERMINAL)), st.sampled_from(list(Status)))
def test_terminal_states_never_change(terminal: Status, target: Status) -> None:
    assert not can_transition(terminal, target)


@given(contract_states())
def test_contract_to_a2a_round_trips(state: ContractState) -> None:
    a2a = to_a2a(state)
    back = from_a2a(a2a, waiting_reason=state.waiting_reason, error_code=state.error_code)
    assert back == state


@pytest.mark.parametrize("a2a", list(A2AState))
def test_a2a_to_contract_is_total(a2a: A2AState) -> None:
    state = from_a2a(a2a)
    assert state.status is FROM_A2A[a2a]
    if a2a in (A2AState.FAILED, A2AState.CANCELED):
        assert state.status is Status.FAILED
        assert state.error_code is not None
    # Only A2A REJECTED is a decline: a failure the agent decided on.
    assert state.declined is (a2a is A2AState.REJECTED)
    if a2a is A2AState.REJECTED:
        assert state.status is Status.FAILED
        assert state.error_code is ErrorCode.POLICY_DENIED


def test_a_decline_is_failed_with_its_code_and_ends_a2a_rejected() -> None:
    declined = ContractState(
        status=Status.FAILED, error_code=ErrorCode.PERMISSION_DENIED, declined=True
    )
    assert to_a2a(declined) is A2AState.REJECTED
    assert from_a2a(A2AState.REJECTED, error_code="PERMISSION_DENIED") == declined
    failed = ContractState(status=Status.FAILED, error_code=ErrorCode.PERMISSION_DENIED)
    assert to_a2a(failed) is A2AState.FAILED
    assert not failed.declined
    assert {c for c in ErrorCode if REGISTRY[c].retry is not RetryClass.RETRY} >= REJECTABLE
    assert ErrorCode.CANCELED not in REJECTABLE


@pytest.mark.parametrize(
    "kwargs",
    [
        {"status": Status.COMPLETED, "declined": True},
        {"status": Status.QUEUED, "declined": True},
        {"status": Status.FAILED, "error_code": ErrorCode.CANCELED, "declined": True},
    ],
)
def test_only_a_failure_that_is_not_a_cancel_is_a_decline(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError, match="decline"):
        ContractState.model_validate(kwargs)


def test_canceled_and_declined_carry_a_code() -> None:
    assert from_a2a("TASK_STATE_CANCELED").error_code is ErrorCode.CANCELED
    # A peer cannot turn a cancel into another code.
    assert from_a2a("TASK_STATE_CANCELED", error_code="INTERNAL").error_code is ErrorCode.CANCELED
    assert from_a2a("TASK_STATE_REJECTED").error_code is ErrorCode.POLICY_DENIED
    rejected = from_a2a("TASK_STATE_REJECTED", error_code="PERMISSION_DENIED")
    assert rejected.error_code is ErrorCode.PERMISSION_DENIED
    # Nor a decline into a cancel: a peer's REJECTED that claims CANCELED is a plain decline.
    assert from_a2a("TASK_STATE_REJECTED", error_code="CANCELED") == ContractState(
        status=Status.FAILED, error_code=ErrorCode.POLICY_DENIED, declined=True
    )
    assert from_a2a("TASK_STATE_FAILED", error_code="NOT_A_CODE").error_code is ErrorCode.INTERNAL


def test_waiting_reasons_map_to_input_or_auth() -> None:
    approval = ContractState(status=Status.WAITING, waiting_reason=WaitingReason.APPROVAL)
    auth = ContractState(status=Status.WAITING, waiting_reason=WaitingReason.AUTH)
    assert to_a2a(approval) is A2AState.INPUT_REQUIRED
    assert to_a2a(auth) is A2AState.AUTH_REQUIRED
    assert from_a2a("TASK_STATE_INPUT_REQUIRED").waiting_reason is WaitingReason.INPUT
    # AUTH_REQUIRED always means auth; INPUT_REQUIRED never does.
    assert from_a2a("TASK_STATE_AUTH_REQUIRED", waiting_reason="input").waiting_reason is (
        WaitingReason.AUTH
    )
    assert from_a2a("TASK_STATE_INPUT_REQUIRED", waiting_reason="auth").waiting_reason is (
        WaitingReason.INPUT
    )


def test_unknown_a2a_state_is_refused() -> None:
    with pytest.raises(ValueError, match="TASK_STATE_BOGUS"):
        from_a2a("TASK_STATE_BOGUS")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"status": Status.WAITING},
        {"status": Status.FAILED},
        {"status": Status.RUNNING, "waiting_reason": WaitingReason.INPUT},
        {"status": Status.COMPLETED, "error_code": ErrorCode.INTERNAL},
    ],
)
def test_qualifiers_must_fit_the_status(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ContractState.model_validate(kwargs)
