"""@accord/contract (contracts/ts) says what the Python contract says.

Drift: the committed generated sources are exactly what ``python -m accord.contracts.codegen ts``
writes now. Agreement: the package, compiled by its pinned tsc, answers every question about
statuses, codes and keys as accord.contracts does, so TypeScript cannot disagree with Python.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from accord.contracts.codegen.__main__ import GENERATORS, drift
from accord.contracts.errors import (
    A2A_ERROR_DOMAIN,
    A2A_REASON_OF_JSONRPC,
    ERROR_DOMAIN,
    FOREIGN_JSONRPC_TO_CODE,
    REGISTRY,
    ErrorCode,
    RetryClass,
    code_for_http_status,
    code_for_jsonrpc,
    parse_code,
)
from accord.contracts.export import export_all, keys_document, schema_documents
from accord.contracts.keys import CONTRACT_VERSION
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
