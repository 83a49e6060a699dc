"""@accord/contract (contracts/ts) says what the Python contract says.

Drift: the committed generated sources are exactly what ``python -m accord.contracts.codegen ts``
writes now. Agreement: the package, compiled by its pinned tsc, answers every question about
statuses, codes and keys as accord.contracts does, so TypeScript cannot disagree with Python;
and its hand-written helpers write the status metadata, the error forms and the envelope exactly
as Accord's Python server does, and refuse the same envelopes with the same error.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict

from accord.contracts.codegen.__main__ import GENERATORS, drift
from accord.contracts.envelope import DelegationEnvelope, parse_envelope
from accord.contracts.errors import (
    A2A_ERROR_DOMAIN,
    A2A_REASON_OF_JSONRPC,
    ERROR_DOMAIN,
    FOREIGN_JSONRPC_TO_CODE,
    REGISTRY,
    AccordError,
    ErrorCode,
    RetryClass,
    code_for_http_status,
    code_for_jsonrpc,
    parse_code,
)
from accord.contracts.export import export_all, keys_document, schema_documents
from accord.contracts.keys import CONTRACT_VERSION, DELEGATION_EXTENSION_URI
from accord.contracts.status import (
    TERMINAL,
    TRANSITIONS,
    A2AState,
    ContractState,
    Status,
    WaitingReason,
    from_a2a,
    to_a2a,
)
from accord.protocol.a2a.budget_guard import BudgetGuard
from accord.protocol.a2a.wire import plain, read_contract_state, status_message, status_metadata

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "contracts" / "ts"
TSC = PACKAGE / "node_modules" / "typescript" / "bin" / "tsc"
FACTS = Path(__file__).with_name("ts_contract_facts.mjs")


def test_committed_sources_are_a_fresh_generation() -> None:
    assert drift(GENERATORS["ts"](None), PACKAGE / "src" / "generated") == [], (
        "contracts/ts is stale: run `make contracts-ts`"
    )


@pytest.mark.parametrize("language", ["ts", "ts-app"])
def test_generation_reads_only_what_the_export_writes(language: str, tmp_path: Path) -> None:
    export_all(tmp_path)
    assert GENERATORS[language](tmp_path) == GENERATORS[language](None)


def test_check_mode_reports_a_changed_file(tmp_path: Path) -> None:
    files = GENERATORS["ts"](None)
    out = tmp_path / "generated"
    out.mkdir()
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    assert drift(files, out) == []
    (out / "keys.ts").write_text("// edited\n", encoding="utf-8")
    (out / "old.ts").write_text("", encoding="utf-8")
    assert drift(files, out) == ["stray: old.ts", "changed: keys.ts"]


def _tsc() -> list[str]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not TSC.is_file():
        if os.environ.get("CI"):
            pytest.fail("contracts/ts/node_modules is missing on CI (run `make npm`)")
        pytest.skip("contracts/ts/node_modules not installed (`make npm` installs it)")
    return ["node", str(TSC)]


def _run(argv: list[str], stdin: str = "") -> str:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _states() -> list[ContractState]:
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


def _questions() -> dict[str, list[Any]]:
    return {
        "to_a2a": [s.model_dump(mode="json") for s in _states()],
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


@pytest.mark.node
def test_typescript_answers_as_python(tmp_path: Path) -> None:
    tsc = _tsc()
    dist = tmp_path / "dist"
    _run([*tsc, "-p", str(PACKAGE), "--outDir", str(dist)])
    ask = _questions()
    ts = json.loads(_run(["node", str(FACTS), str(dist)], json.dumps(ask)))

    assert ts["statuses"] == {
        s.value: {"terminal": s in TERMINAL, "transitions": sorted(t.value for t in TRANSITIONS[s])}
        for s in Status
    }
    assert ts["waiting_reasons"] == [r.value for r in WaitingReason]
    assert ts["a2a_states"] == [a.value for a in A2AState]
    assert ts["retry_classes"] == [r.value for r in RetryClass]
    assert ts["codes"] == {
        code.value: {
            **spec.model_dump(mode="json"),
            "retry_class": spec.retry.value,
            "parsed": code.value,
        }
        for code, spec in REGISTRY.items()
    }
    assert ts["error_domains"] == [ERROR_DOMAIN, A2A_ERROR_DOMAIN]
    assert ts["a2a_reasons"] == {str(k): v for k, v in A2A_REASON_OF_JSONRPC.items()}
    assert ts["to_a2a"] == [to_a2a(s).value for s in _states()]
    assert ts["from_a2a"] == [
        from_a2a(a, waiting_reason=r, error_code=c).model_dump(mode="json")
        for a, r, c in ask["from_a2a"]
    ]
    assert ts["parse"] == [parse_code(v).value for v in ask["parse"]]
    assert ts["jsonrpc"] == [
        c.value if (c := code_for_jsonrpc(n)) else None for n in ask["jsonrpc"]
    ]
    assert ts["http"] == [code_for_http_status(n).value for n in ask["http"]]
    assert ts["keys"] == {"CONTRACT_VERSION": CONTRACT_VERSION, **keys_document()}
    assert ts["schemas"] == {
        name.removesuffix(".schema.json").replace("-", "_").upper() + "_SCHEMA": doc
        for name, doc in schema_documents().items()
        if doc.get("type") == "object"
    }


@pytest.mark.node
def test_application_types_compile_strict(tmp_path: Path) -> None:
    tsc = _tsc()
    files = GENERATORS["ts-app"](None)
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert "export interface OrchestratorRefundRequestInput" in files["skills.ts"]
    strict = ["--strict", "--noEmit", "--target", "ES2022", "--module", "NodeNext"]
    _run([*tsc, *strict, *(str(tmp_path / name) for name in sorted(files))])


# -- the hand-written helpers against Accord's Python server ---------------------------------

HOURS = "2030-01-01T00:00:00+00:00"
GOOD: dict[str, Any] = {
    "goal": "refund order O-1",
    "budget": {"units": 40, "tool_calls": 5, "deadline": HOURS},
    "tenant": {"app": "refunds", "user": "C-01", "session": "s-1"},
}
TRACE = f"00-{'a' * 32}-{'b' * 16}-01"
DETAILS = {"z": 1, "a": {"é": [1, "x", None]}, "t": True, "q": 'say "no"\n'}


def _with(**changes: Any) -> dict[str, Any]:
    return {**GOOD, **changes}


def _budget(**changes: Any) -> dict[str, Any]:
    return _with(budget={**GOOD["budget"], **changes})


def _tenant(**changes: Any) -> dict[str, Any]:
    return _with(tenant={**GOOD["tenant"], **changes})


def _envelopes() -> list[Any]:
    """Valid ones (defaults filled, deadlines rewritten) and one of each way to break one."""
    return [
        GOOD,
        _with(
            constraints={"max_refund_cents": 500, "rush": True, "note": "x"},
            context_refs=["doc:1"],
            parent_task="wf-1",
            traceparent=TRACE,
        ),
        _budget(deadline="2030-01-01T02:00:00.5+02:00"),
        _budget(deadline="2030-01-01 00:00Z"),
        _budget(deadline="2030-06-01T12:30:00.123456789Z"),
        _with(parent_task=None, traceparent=None),
        "not an object",
        {k: v for k, v in GOOD.items() if k != "goal"},
        _with(goal=""),
        _with(goal="x" * 2001),
        _with(goal=5),
        _with(extra=1),
        _budget(units=-1),
        _budget(units=1_000_001),
        _budget(tool_calls=10_001),
        _budget(deadline="2030-01-01T00:00:00"),
        _with(budget={"units": 1, "tool_calls": 1}),
        _tenant(user="has space"),
        _with(tenant={"app": "a", "user": "u"}),
        _tenant(x=1),
        _with(constraints={"x": 1.5}),
        _with(constraints={str(i): i for i in range(33)}),
        _with(context_refs=["x" * 513]),
        _with(context_refs=[f"r{i}" for i in range(33)]),
        _with(traceparent="00-xyz"),
        _with(parent_task="has space"),
        _with(goal="é" * 2000, context_refs=["x" * 512] * 30),  # 16 KiB as UTF-8 only
        # Several faults: the first field in the model's order is named, extra keys last.
        {"extra": 1, **_with(goal="")},
        _with(extra=1, tenant={"app": "a"}),
        _budget(x=2, units=-1),
        _with(constraints={str(i): 1.5 for i in range(33)}),
        _with(parent_task="x" * 200),
    ]


# Dates that are not dates: refused alike, though pydantic's words name the part that broke.
BAD_DATES = ["2030-02-30T00:00:00Z", "2030-01-01T24:00:00Z", "tomorrow", "2030-13-01T00:00Z"]


def _py_envelope(metadata: dict[str, Any], required: bool = True) -> Any:
    try:
        found = parse_envelope(metadata, required=required)
    except AccordError as e:
        return {"error": e.to_dict()}
    return None if found is None else found.to_metadata()


def _status_cases() -> list[dict[str, Any]]:
    """Every contract state, with and without words, error details and node."""
    cases = []
    for i, state in enumerate(_states()):
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


def _py_status(case: dict[str, Any]) -> dict[str, Any]:
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


def _py_admit(case: dict[str, Any]) -> Any:
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


def _same(ts: Any, py: Any) -> None:
    """Equal as JSON text, so 2 and 2.0 or a reordered list are told apart."""
    as_json = lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False)  # noqa: E731
    assert as_json(ts) == as_json(py)


@pytest.mark.node
def test_typescript_helpers_write_what_the_python_server_writes(tmp_path: Path) -> None:
    tsc = _tsc()
    dist = tmp_path / "dist"
    _run([*tsc, "-p", str(PACKAGE), "--outDir", str(dist)])
    deadline_ms = int(datetime.fromisoformat(HOURS).timestamp() * 1000)
    errors = [AccordError(c) for c in ErrorCode]
    errors += [AccordError(c, "nicht möglich", DETAILS) for c in ErrorCode]
    admits = [
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
            (0, 0, 1, 0, deadline_ms + 7_300_000, _budget(deadline="2030-01-01T02:00:00.5+02:00")),
        ]
    ]
    ask = {
        "status": _status_cases(),
        "errors": [e.to_dict() for e in errors],
        "mcp_foreign": [
            {"isError": True, "content": [{"type": "text", "text": "boom"}]},
            {"isError": True, "_meta": {}, "meta": {"dev.accord/error": {"code": "UNAVAILABLE"}}},
        ],
        "envelopes": [{DELEGATION_EXTENSION_URI: e} for e in _envelopes()] + [{}],
        "bad_dates": [{DELEGATION_EXTENSION_URI: _budget(deadline=d)} for d in BAD_DATES],
        "admit": admits,
        "child_of": {DELEGATION_EXTENSION_URI: _with(traceparent=TRACE, parent_task="wf-0")},
    }
    ts = json.loads(_run(["node", str(FACTS), str(dist), "helpers"], json.dumps(ask)))

    for case, got in zip(ask["status"], ts["status"], strict=True):
        _same(got, _py_status(case))
    _same(
        ts["errors"],
        [
            {
                "dict": e.to_dict(),
                "jsonrpc": e.to_jsonrpc_error(),
                "mcp": e.to_mcp_result(),
                "mcp_read": AccordError.from_mcp_result(e.to_mcp_result()).to_dict(),
                "info_parse_failure": e.error_info(-32700),
                "rest": list(e.to_rest()),
                "http": list(e.to_http()),
            }
            for e in errors
        ],
    )
    _same(ts["mcp_foreign"], [AccordError.from_mcp_result(r).to_dict() for r in ask["mcp_foreign"]])
    for metadata, got in zip(ask["envelopes"], ts["envelopes"], strict=True):
        _same(got, _py_envelope(metadata))
    for metadata, got in zip(ask["bad_dates"], ts["bad_dates"], strict=True):
        _same(got["error"]["details"], _py_envelope(metadata)["error"]["details"])
    assert ts["envelope_optional"] is None is _py_envelope({}, required=False)
    assert sum("error" in e for e in ts["envelopes"]) == 27  # every way to break one refused
    incoming = DelegationEnvelope.model_validate(ask["child_of"][DELEGATION_EXTENSION_URI])
    child = DelegationEnvelope(
        goal="check risk",
        budget=incoming.budget.model_copy(update={"units": 30, "tool_calls": 3}),
        tenant=incoming.tenant,
        parent_task="task-9",
        traceparent=incoming.traceparent,
    )
    _same(ts["child"], child.to_metadata())
    assert ts["child_overspent"]["code"] == ErrorCode.BUDGET_EXHAUSTED.value
    _same(ts["admit"], [_py_admit(case) for case in ask["admit"]])
