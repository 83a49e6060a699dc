"""The Java contract package (contracts/java) says what the Python contract says.

Drift: the committed generated sources are exactly what ``python -m accord.contracts.codegen
java`` writes now. Agreement: the package (generated tables and hand-written rules, compiled by
``javac`` alone) answers every question about statuses, transitions, the A2A mapping, codes,
their retry classes and wire forms, keys and schemas as accord.contracts does, so Java cannot
disagree with Python. Its hand-written helpers write the A2A status metadata and the
delegation envelope as Accord's Python server does, and refuse the same envelopes with the same
error: the questions and Python's answers are the TypeScript and Go tests' own
(tests/contracts/contract_cases.py).
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.contracts import contract_cases as cases

from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.codegen.__main__ import GENERATORS, drift
from accord.contracts.envelope import DelegationEnvelope
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
from accord.contracts.keys import CONTRACT_VERSION, DELEGATION_EXTENSION_URI, MCP_ERROR_META_KEY
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

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "contracts" / "java" / "src" / "main" / "java" / "dev" / "accord" / "contract"
GENERATED = SOURCES / "generated"
FACTS = Path(__file__).with_name("JavaContractFacts.java")
NULL = "~"  # the facts program's null


def test_committed_sources_are_a_fresh_generation() -> None:
    assert drift(GENERATORS["java"](None), GENERATED) == [], (
        "contracts/java is stale: run `make contracts-java`"
    )


@pytest.mark.parametrize("language", ["java", "java-app"])
def test_generation_reads_only_what_the_export_writes(language: str, tmp_path: Path) -> None:
    export_all(tmp_path)
    assert GENERATORS[language](tmp_path) == GENERATORS[language](None)


def test_check_mode_names_the_java_target(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "python"),
            "-m",
            "accord.contracts.codegen",
            "java",
            str(tmp_path),
            "--check",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "missing: Status.java" in done.stderr
    assert "regenerate: make contracts-java" in done.stderr


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


def _cell(value: Any) -> str:
    return NULL if value is None else str(value)


def _ask() -> tuple[list[str], dict[str, list[Any]]]:
    """The questions as the facts program's lines, and the values each kind asks about."""
    asked: dict[str, list[Any]] = {
        "to_a2a": _states(),
        "from_a2a": list(
            itertools.product(
                A2AState,
                [None, "unknown", *(r.value for r in WaitingReason)],
                [None, "unknown", *(c.value for c in ErrorCode)],
            )
        ),
        "parse": [*(c.value for c in ErrorCode), "internal", "NOPE", "", 42, None],
        "jsonrpc": sorted(
            {s.jsonrpc_code for s in REGISTRY.values()}
            | set(FOREIGN_JSONRPC_TO_CODE)
            | set(A2A_REASON_OF_JSONRPC)
            | {-32000, -32099, 0, 1}
        ),
        "http": list(range(100, 600)),
        "error": [(c, m) for c in ErrorCode for m in (None, 'nicht möglich: "x"\n✓')],
    }
    lines = [
        *(
            f"to_a2a\t{s.status.value}\t{_cell(s.waiting_reason and s.waiting_reason.value)}"
            f"\t{_cell(s.error_code and s.error_code.value)}\t{str(s.declined).lower()}"
            for s in asked["to_a2a"]
        ),
        *(f"from_a2a\t{a.value}\t{_cell(r)}\t{_cell(c)}" for a, r, c in asked["from_a2a"]),
        *(f"parse\t{'s:' + v if isinstance(v, str) else _cell(v)}" for v in asked["parse"]),
        *(f"jsonrpc\t{n}" for n in asked["jsonrpc"]),
        *(f"http\t{n}" for n in asked["http"]),
        *(f"error\t{c.value}\t{_cell(m).replace(chr(10), ' ')}" for c, m in asked["error"]),
    ]
    asked["error"] = [(c, m and m.replace("\n", " ")) for c, m in asked["error"]]
    return lines, asked


def _compile(tmp_path: Path, *extra: Path) -> Path:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no JDK: javac/java are not on PATH (the Java package cannot be compiled)")
    classes = tmp_path / "classes"
    sources = [*sorted(GENERATED.glob("*.java")), *sorted(SOURCES.glob("*.java")), FACTS, *extra]
    done = subprocess.run(
        ["javac", "-encoding", "UTF-8", "--release", "17", "-d", str(classes), *map(str, sources)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return classes


def _java_facts(tmp_path: Path) -> dict[str, Any]:
    classes = _compile(tmp_path)
    lines, _ = _ask()
    done = subprocess.run(
        ["java", "-cp", str(classes), "JavaContractFacts"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    facts: dict[str, Any] = json.loads(done.stdout)
    return facts


def test_java_answers_as_python(tmp_path: Path) -> None:
    java = _java_facts(tmp_path)
    _, ask = _ask()

    assert java["statuses"] == {
        s.value: {"terminal": s in TERMINAL, "transitions": sorted(t.value for t in TRANSITIONS[s])}
        for s in Status
    }
    assert java["waiting_reasons"] == [r.value for r in WaitingReason]
    assert java["a2a_states"] == [a.value for a in A2AState]
    assert java["retry_classes"] == [r.value for r in RetryClass]
    assert java["codes"] == {
        code.value: {
            **spec.model_dump(mode="json"),
            "retry_class": spec.retry.value,
            "parsed": code.value,
        }
        for code, spec in REGISTRY.items()
    }
    assert java["error_domains"] == [ERROR_DOMAIN, A2A_ERROR_DOMAIN]
    assert java["a2a_reasons"] == {str(k): v for k, v in A2A_REASON_OF_JSONRPC.items()}
    assert java["to_a2a"] == [to_a2a(s).value for s in ask["to_a2a"]]
    assert java["from_a2a"] == [
        from_a2a(a, waiting_reason=r, error_code=c).model_dump(mode="json")
        for a, r, c in ask["from_a2a"]
    ]
    assert java["parse"] == [parse_code(v).value for v in ask["parse"]]
    assert java["jsonrpc"] == [
        c.value if (c := code_for_jsonrpc(n)) else None for n in ask["jsonrpc"]
    ]
    assert java["http"] == [code_for_http_status(n).value for n in ask["http"]]
    assert java["keys"] == {"CONTRACT_VERSION": CONTRACT_VERSION, **keys_document()}
    assert {name: json.loads(text) for name, text in java["schemas"].items()} == {
        name.removesuffix(".schema.json").replace("-", "_").upper() + "_SCHEMA": doc
        for name, doc in schema_documents().items()
        if doc.get("type") == "object"
    }
    # The tool error's neutral form and _meta are Python's, and read back to the same error.
    for (code, message), got in zip(ask["error"], java["error"], strict=True):
        py = AccordError(code, message)
        assert got["dict"] == py.to_dict()
        assert got["meta"] == py.to_mcp_result()["_meta"] == {MCP_ERROR_META_KEY: py.to_dict()}
        assert got["read"] == AccordError.from_dict(py.to_dict()).to_dict()


def test_java_skill_schemas_are_the_agents_contracts(tmp_path: Path) -> None:
    """``codegen java-app``: each shipped agent's skill input and output schema, as Java
    constants that read back as the contract's documents."""
    files = GENERATORS["java-app"](None)
    assert sorted(files) == ["Skills.java"]
    (tmp_path / "Skills.java").write_text(files["Skills.java"], encoding="utf-8")
    classes = _compile(tmp_path, tmp_path / "Skills.java")
    done = subprocess.run(
        ["java", "-cp", str(classes), "JavaContractFacts", "dev.accord.contract.skills.Skills"],
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = {name: json.loads(text) for name, text in json.loads(done.stdout).items()}
    expected = {}
    for agent, contract in shipped_agent_contracts().items():
        for skill in contract.model_dump(mode="json")["skills"]:
            base = f"{agent}_{skill['id']}".replace("-", "_").replace(".", "_").upper()
            expected[f"{base}_INPUT"] = skill["input_schema"]
            expected[f"{base}_OUTPUT"] = skill["output_schema"]
    assert found == expected
    assert "ORCHESTRATOR_REFUND_REQUEST_INPUT" in found


def test_java_helpers_write_what_the_python_server_writes(tmp_path: Path) -> None:
    """Envelope and status metadata (``Envelope``, ``StatusWire``): every status case, every
    envelope (the 27 broken ones refused with Python's error), the budget guard, a child
    envelope and a tool call's ``_meta`` equal Python's."""
    classes = _compile(tmp_path)
    # A peer's error whose details hold a null reads back too (as Python reads it).
    with_null = [
        {**c, "error": {**c["error"], "details": {"gone": None, "z": 1}}}
        for c in cases.status_cases()[:40]
        if c["error"] is not None
    ]
    assert with_null
    ask = {
        "status": cases.status_cases() + with_null,
        "envelopes": [{DELEGATION_EXTENSION_URI: e} for e in cases.envelopes()] + [{}],
        "bad_dates": [
            {DELEGATION_EXTENSION_URI: cases.budget(deadline=d)} for d in cases.BAD_DATES
        ],
        "admit": cases.admit_cases(),
        "child_of": {
            DELEGATION_EXTENSION_URI: cases.envelope_with(
                traceparent=cases.TRACE, parent_task="wf-0"
            )
        },
        "tool_meta": cases.TOOL_META_CASES,
    }
    done = subprocess.run(
        ["java", "-cp", str(classes), "JavaContractFacts", "helpers"],
        input=json.dumps(ask),
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    got = json.loads(done.stdout)

    for case, answer in zip(ask["status"], got["status"], strict=True):
        cases.same(answer, cases.py_status(case))
    for metadata, answer in zip(ask["envelopes"], got["envelopes"], strict=True):
        cases.same(answer, cases.py_envelope(metadata))
    assert sum("error" in e for e in got["envelopes"]) == 27  # every way to break one refused
    for metadata, answer in zip(ask["bad_dates"], got["bad_dates"], strict=True):
        cases.same(answer["error"]["details"], cases.py_envelope(metadata)["error"]["details"])
    assert got["envelope_optional"] is None
    incoming = DelegationEnvelope.model_validate(ask["child_of"][DELEGATION_EXTENSION_URI])
    child = DelegationEnvelope(
        goal="check risk",
        budget=incoming.budget.model_copy(update={"units": 30, "tool_calls": 3}),
        tenant=incoming.tenant,
        parent_task="task-9",
        traceparent=incoming.traceparent,
    )
    cases.same(got["child"], child.to_metadata())
    assert got["child_overspent"]["code"] == ErrorCode.BUDGET_EXHAUSTED.value
    cases.same(got["admit"], [cases.py_admit(case) for case in ask["admit"]])
    for case, answer in zip(cases.TOOL_META_CASES, got["tool_meta"], strict=True):
        cases.same(answer, cases.py_tool_meta(case))
