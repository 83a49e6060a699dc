"""@accord/contract (contracts/ts) says what the Python contract says.

Drift: the committed generated sources are exactly what ``python -m accord.contracts.codegen ts``
writes now. Agreement: the package, compiled by its pinned tsc, answers every question about
statuses, codes and keys as accord.contracts does, so TypeScript cannot disagree with Python;
and its hand-written helpers write the status metadata, the error forms and the envelope exactly
as Accord's Python server does, and refuse the same envelopes with the same error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
from tests.contracts.contract_cases import (
    BAD_DATES,
    DETAILS,
    GOOD,
    HOURS,
    TOOL_META_CASES,
    TRACE,
)
from tests.contracts.contract_cases import (
    budget as _budget,
)
from tests.contracts.contract_cases import (
    envelope_with as _with,
)
from tests.contracts.contract_cases import (
    envelopes as _envelopes,
)
from tests.contracts.contract_cases import (
    py_admit as _py_admit,
)
from tests.contracts.contract_cases import (
    py_envelope as _py_envelope,
)
from tests.contracts.contract_cases import (
    py_status as _py_status,
)
from tests.contracts.contract_cases import (
    questions as _questions,
)
from tests.contracts.contract_cases import (
    same as _same,
)
from tests.contracts.contract_cases import (
    states as _states,
)
from tests.contracts.contract_cases import (
    status_cases as _status_cases,
)

from accord.contracts.codegen.__main__ import GENERATORS, drift
from accord.contracts.envelope import DelegationEnvelope
from accord.contracts.errors import (
    A2A_ERROR_DOMAIN,
    A2A_REASON_OF_JSONRPC,
    ERROR_DOMAIN,
    REGISTRY,
    AccordError,
    ErrorCode,
    RetryClass,
    code_for_http_status,
    code_for_jsonrpc,
    parse_code,
)
from accord.contracts.export import export_all, keys_document, schema_documents
from accord.contracts.keys import CONTRACT_VERSION, DELEGATION_EXTENSION_URI, TRACEPARENT_KEY
from accord.contracts.status import (
    TERMINAL,
    TRANSITIONS,
    A2AState,
    Status,
    WaitingReason,
    from_a2a,
    to_a2a,
)
from accord.contracts.tool_access import ToolDelegation

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
        "tool_meta": TOOL_META_CASES,
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
    # A tool call's _meta: the delegation as ToolDelegation.to_meta writes it, the trace beside.
    for case, got in zip(TOOL_META_CASES, ts["tool_meta"], strict=True):
        meta = ToolDelegation.model_validate(case["delegation"]).to_meta()
        if case["traceparent"] is not None:
            meta[TRACEPARENT_KEY] = case["traceparent"]
        _same(got, meta)
