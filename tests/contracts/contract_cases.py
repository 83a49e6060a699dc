"""The questions the contract packages' agreement tests ask of each language (statuses, codes,
envelopes, status cases, the budget guard), and Python's own answers to them: the TypeScript
test (test_ts_contract.py) and the Go test (test_go_contract.py) ask the same, so the two
packages are held to the same Python contract."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from typing import Any

from google.protobuf.json_format import MessageToDict

from accord.contracts.envelope import DelegationEnvelope, parse_envelope
from accord.contracts.errors import (
    A2A_REASON_OF_JSONRPC,
    FOREIGN_JSONRPC_TO_CODE,
    REGISTRY,
    AccordError,
    ErrorCode,
)
from accord.contracts.keys import TRACEPARENT_KEY
from accord.contracts.status import A2AState, ContractState, Status, WaitingReason, to_a2a
from accord.contracts.tool_access import ToolDelegation
from accord.protocol.a2a.budget_guard import BudgetGuard
from accord.protocol.a2a.wire import plain, read_contract_state, status_message, status_metadata


def states() -> list[ContractState]:
    """Every contract state the Python model admits."""
    found = []
    for status, reason, code, declined in itertools.product(
        Status, [None, *WaitingReason], [None, *ErrorCode], [False, True]
    ):
        try:
            found.append(
                ContractState(
                    status=status, waiting_reason=reason, error_code=code, declined=declined
                )
            )
        except ValueError:
            continue
    return found


def questions() -> dict[str, list[Any]]:
    return {
        "to_a2a": [s.model_dump(mode="json") for s in states()],
        "from_a2a": [
            [a.value, reason, code]
            for a, reason, code in itertools.product(
                A2AState,
                [None, "unknown", *(r.value for r in WaitingReason)],
                [None, "unknown", *(c.value for c in ErrorCode)],
            )
        ],
        "parse": [*(c.value for c in ErrorCode), "internal", "NOPE", "", 42, None],
        "jsonrpc": sorted(
            {s.jsonrpc_code for s in REGISTRY.values()}
            | set(FOREIGN_JSONRPC_TO_CODE)
            | set(A2A_REASON_OF_JSONRPC)
            | {-32000, -32099, 0, 1}
        ),
        "http": list(range(100, 600)),
    }


HOURS = "2030-01-01T00:00:00+00:00"
GOOD: dict[str, Any] = {
    "goal": "refund order O-1",
    "budget": {"units": 40, "tool_calls": 5, "deadline": HOURS},
    "tenant": {"app": "refunds", "user": "C-01", "session": "s-1"},
}
TRACE = f"00-{'a' * 32}-{'b' * 16}-01"
DETAILS = {"z": 1, "a": {"é": [1, "x", None]}, "t": True, "q": 'say "no"\n'}


def envelope_with(**changes: Any) -> dict[str, Any]:
    return {**GOOD, **changes}


def budget(**changes: Any) -> dict[str, Any]:
    return envelope_with(budget={**GOOD["budget"], **changes})


def tenant(**changes: Any) -> dict[str, Any]:
    return envelope_with(tenant={**GOOD["tenant"], **changes})


def envelopes() -> list[Any]:
    """Valid ones (defaults filled, deadlines rewritten) and one of each way to break one."""
    return [
        GOOD,
        envelope_with(
            constraints={"max_refund_cents": 500, "rush": True, "note": "x"},
            context_refs=["doc:1"],
            parent_task="wf-1",
            traceparent=TRACE,
        ),
        budget(deadline="2030-01-01T02:00:00.5+02:00"),
        budget(deadline="2030-01-01 00:00Z"),
        budget(deadline="2030-06-01T12:30:00.123456789Z"),
        envelope_with(parent_task=None, traceparent=None),
        "not an object",
        {k: v for k, v in GOOD.items() if k != "goal"},
        envelope_with(goal=""),
        envelope_with(goal="x" * 2001),
        envelope_with(goal=5),
        envelope_with(extra=1),
        budget(units=-1),
        budget(units=1_000_001),
        budget(tool_calls=10_001),
        budget(deadline="2030-01-01T00:00:00"),
        envelope_with(budget={"units": 1, "tool_calls": 1}),
        tenant(user="has space"),
        envelope_with(tenant={"app": "a", "user": "u"}),
        tenant(x=1),
        envelope_with(constraints={"x": 1.5}),
        envelope_with(constraints={str(i): i for i in range(33)}),
        envelope_with(context_refs=["x" * 513]),
        envelope_with(context_refs=[f"r{i}" for i in range(33)]),
        envelope_with(traceparent="00-xyz"),
        envelope_with(parent_task="has space"),
        envelope_with(goal="é" * 2000, context_refs=["x" * 512] * 30),  # 16 KiB as UTF-8 only
        # Several faults: the first field in the model's order is named, extra keys last.
        {"extra": 1, **envelope_with(goal="")},
        envelope_with(extra=1, tenant={"app": "a"}),
        budget(x=2, units=-1),
        envelope_with(constraints={str(i): 1.5 for i in range(33)}),
        envelope_with(parent_task="x" * 200),
    ]


# Dates that are not dates: refused alike, though pydantic's words name the part that broke.
BAD_DATES = ["2030-02-30T00:00:00Z", "2030-01-01T24:00:00Z", "tomorrow", "2030-13-01T00:00Z"]


def py_envelope(metadata: dict[str, Any], required: bool = True) -> Any:
    try:
        found = parse_envelope(metadata, required=required)
    except AccordError as e:
        return {"error": e.to_dict()}
    return None if found is None else found.to_metadata()


def status_cases() -> list[dict[str, Any]]:
    """Every contract state, with and without words, error details and node."""
    cases = []
    for i, state in enumerate(states()):
        error = None
        if state.error_code is not None:
            error = AccordError(state.error_code, *(("nicht möglich", DETAILS) if i % 2 else ()))
        cases.append(
            {
                "state": state.model_dump(mode="json"),
                "error": error.to_dict() if error is not None else None,
                "node": "refund/intake" if i % 3 == 0 else None,
                "text": ["", "Working on it", "Wer fragt? ✓"][i % 3],
                "data": {"amount": 12, "items": ["a"]} if i % 4 == 0 else None,
            }
        )
    return cases


def py_status(case: dict[str, Any]) -> dict[str, Any]:
    state = ContractState.model_validate(case["state"])
    error = AccordError.from_dict(case["error"]) if case["error"] else None
    said = {"error": error, "node": case["node"]}
    message = status_message(
        state, task_id="t-1", context_id="c-1", text=case["text"], data=case["data"], **said
    )
    wire = None if message is None else plain(MessageToDict(message)) | {"messageId": "m-1"}
    metadata = status_metadata(state, **said)
    status = {"state": to_a2a(state).value, **({"message": wire} if wire else {})}
    read = [read_contract_state(status, metadata), read_contract_state(status)]
    return {
        "metadata": metadata,
        "message": wire,
        "read": [[s.model_dump(mode="json"), e.to_dict() if e else None] for s, e in read],
    }


def py_admit(case: dict[str, Any]) -> Any:
    envelope = DelegationEnvelope.model_validate(case["envelope"])
    now = datetime.fromtimestamp(case["now"] / 1000, UTC)
    guard = BudgetGuard(case["unitsPerTurn"], case["toolCallsPerTurn"])
    try:
        got = guard.admit(envelope, case["spent"], tool_calls_spent=case["toolCallsSpent"], now=now)
    except AccordError as e:
        return {"error": e.to_dict()}
    return {
        "remainingMs": round(got.remaining_s * 1000),
        "spent": got.spent,
        "toolCallsSpent": got.tool_calls_spent,
    }


def same(ts: Any, py: Any) -> None:
    """Equal as JSON text, so 2 and 2.0 or a reordered list are told apart."""
    as_json = lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False)  # noqa: E731
    assert as_json(ts) == as_json(py)


def admit_cases() -> list[dict[str, Any]]:
    """The budget guard's questions (py_admit's): room left, units or tool calls used up, the
    deadline reached or passed (and one with an offset and a fraction)."""
    deadline_ms = int(datetime.fromisoformat(HOURS).timestamp() * 1000)
    late = budget(deadline="2030-01-01T02:00:00.5+02:00")
    return [
        {
            "spent": s,
            "toolCallsSpent": t,
            "unitsPerTurn": u,
            "toolCallsPerTurn": p,
            "now": n,
            "envelope": e,
        }
        for s, t, u, p, n, e in [
            (0, 0, 1, 0, deadline_ms - 90_000, GOOD),
            (39, 5, 1, 0, deadline_ms - 1, GOOD),
            (40, 0, 1, 0, deadline_ms - 1, GOOD),
            (0, 5, 1, 1, deadline_ms - 1, GOOD),
            (0, 0, 1, 0, deadline_ms, GOOD),
            (0, 0, 1, 0, deadline_ms + 7_300_000, late),
            (0, 0, 2, 0, deadline_ms - 1_000_123, late),
        ]
    ]


# A tool call's _meta (the delegation and the trace beside it), as the TypeScript test asks.
TOOL_META_CASES: list[dict[str, Any]] = [
    {
        "delegation": {"tenant": {"app": "accord", "user": "C-01", "session": "s-1"}},
        "traceparent": None,
    },
    {
        "delegation": {
            "tenant": {"app": "shop", "user": "C-07", "session": "s-2"},
            "approved_by": "approver-7",
        },
        "traceparent": TRACE,
    },
]


def py_tool_meta(case: dict[str, Any]) -> dict[str, Any]:
    """ToolDelegation.to_meta, and the caller's traceparent beside it."""
    meta = ToolDelegation.model_validate(case["delegation"]).to_meta()
    if case["traceparent"] is not None:
        meta[TRACEPARENT_KEY] = case["traceparent"]
    return meta
