"""accord.dev/contract (contracts/go) says what the Python contract says.

Drift: the committed generated sources are exactly what ``python -m accord.contracts.codegen go``
writes now (gofmt's layout). Agreement: the package, built by the Go toolchain, answers every
question about statuses, codes and keys as accord.contracts does, so Go cannot disagree with
Python; and its hand-written helpers write the status metadata, the error forms and the envelope
as Accord's Python server does, and refuse the same envelopes with the same error. The
questions and Python's answers are the TypeScript test's (tests/contracts/contract_cases.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest
from tests.contracts import contract_cases as cases

from accord.contracts.codegen.__main__ import GENERATORS, drift
from accord.contracts.codegen.jsonschema_go import go_name
from accord.contracts.errors import FOREIGN_JSONRPC_TO_CODE, HTTP_STATUS_TO_CODE
from accord.contracts.export import export_all, keys_document, schema_documents
from accord.contracts.status import REJECTABLE

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "contracts" / "go"
FACTS = Path(__file__).with_name("go_contract_facts.go")
# Where the Go toolchain is when it is not on PATH (the machine's and CI's install).
USUAL_GO = Path("/usr/local/go/bin/go")


def _go() -> str:
    found = shutil.which("go") or (str(USUAL_GO) if USUAL_GO.is_file() else None)
    if found is None:
        pytest.skip("go is not installed (the Go contract package needs the Go toolchain)")
    return found


@pytest.mark.go
def test_committed_sources_are_a_fresh_generation() -> None:
    _go()  # the layout is gofmt's
    assert drift(GENERATORS["go"](None), PACKAGE / "generated") == [], (
        "contracts/go is stale: run `make contracts-go`"
    )


@pytest.mark.go
@pytest.mark.parametrize("language", ["go", "go-app"])
def test_generation_reads_only_what_the_export_writes(language: str, tmp_path: Path) -> None:
    _go()
    export_all(tmp_path)
    assert GENERATORS[language](tmp_path) == GENERATORS[language](None)


@pytest.mark.go
def test_go_sources_are_gofmt_clean_and_vet_clean() -> None:
    go = _go()
    gofmt = str(Path(go).with_name("gofmt"))
    sources = [PACKAGE, ROOT / "agents" / "go", FACTS]
    done = subprocess.run(
        [gofmt, "-l", *map(str, sources)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", f"not gofmt-formatted:\n{done.stdout}"
    env = {**os.environ, "GOTOOLCHAIN": "local"}
    for module in (PACKAGE, ROOT / "agents" / "go" / "policy-check"):
        vet = subprocess.run(
            [go, "vet", "./..."],
            cwd=module,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            check=False,
        )
        assert vet.returncode == 0, vet.stdout + vet.stderr


@pytest.mark.go
def test_application_types_build(tmp_path: Path) -> None:
    go = _go()
    files = GENERATORS["go-app"](None)
    (tmp_path / "go.mod").write_text("module skills\n\ngo 1.26\n", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert "type PolicyCheckRefundPolicyInput struct" in files["skills.go"]
    env = {**os.environ, "GOTOOLCHAIN": "local"}
    done = subprocess.run(
        [go, "vet", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _program(tmp_path: Path, go: str, extra: dict[str, str] | None = None) -> Path:
    """A module that uses the package in place (replace), built into one binary."""
    module = tmp_path / "facts"
    module.mkdir()
    (module / "go.mod").write_text(
        "module facts\n\ngo 1.26\n\nrequire accord.dev/contract v0.0.0\n\n"
        f"replace accord.dev/contract => {PACKAGE}\n",
        encoding="utf-8",
    )
    shutil.copy(FACTS, module / "main.go")
    for name, text in (extra or {}).items():
        (module / name).write_text(text, encoding="utf-8")
    binary = tmp_path / "facts-bin"
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}
    done = subprocess.run(
        [go, "build", "-o", str(binary), "."],
        cwd=module,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return binary


def _names_file() -> str:
    """Go source naming every key and schema constant by its export name: a constant the
    package lacks, or names differently than the renderer says, does not compile."""
    keys = {"CONTRACT_VERSION": "ContractVersion"} | {k: go_name(k) for k in keys_document()}
    schemas = {
        name.removesuffix(".schema.json").replace("-", "_").upper() + "_SCHEMA": ""
        for name, doc in schema_documents().items()
        if doc.get("type") == "object"
    }
    lines = ["package main", "", 'import g "accord.dev/contract/generated"', ""]
    lines.append("var keyConstants = map[string]string{")
    lines += [f'\t"{k}": g.{v},' for k, v in keys.items()]
    lines += ["}", "", "var schemaDocuments = map[string]string{"]
    lines += [f'\t"{k}": g.{go_name(k)},' for k in schemas]
    return "\n".join([*lines, "}", ""])


def _ask(binary: Path, question: Any, *args: str) -> Any:
    done = subprocess.run(
        [str(binary), *args],
        input=json.dumps(question),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.go
def test_go_answers_as_python(tmp_path: Path) -> None:
    binary = _program(tmp_path, _go(), {"names.go": _names_file()})
    ask = cases.questions()
    got = _ask(binary, ask)
    # The TypeScript test's own comparison, on Go's answers.
    expected = _python_facts(ask)
    for key, value in expected.items():
        assert got[key] == value, key
    assert got["rejectable"] == sorted(c.value for c in REJECTABLE)
    assert got["foreign_jsonrpc"] == {str(k): v.value for k, v in FOREIGN_JSONRPC_TO_CODE.items()}
    assert got["http_codes"] == {str(k): v.value for k, v in HTTP_STATUS_TO_CODE.items()}


def _python_facts(ask: dict[str, Any]) -> dict[str, Any]:
    """Python's answers to the questions the TypeScript facts answer."""
    from accord.contracts.errors import (
        A2A_ERROR_DOMAIN,
        A2A_REASON_OF_JSONRPC,
        ERROR_DOMAIN,
        REGISTRY,
        RetryClass,
        code_for_http_status,
        code_for_jsonrpc,
        parse_code,
    )
    from accord.contracts.keys import CONTRACT_VERSION
    from accord.contracts.status import (
        TERMINAL,
        TRANSITIONS,
        A2AState,
        Status,
        WaitingReason,
        from_a2a,
        to_a2a,
    )

    return {
        "statuses": {
            s.value: {
                "terminal": s in TERMINAL,
                "transitions": sorted(t.value for t in TRANSITIONS[s]),
            }
            for s in Status
        },
        "waiting_reasons": [r.value for r in WaitingReason],
        "a2a_states": [a.value for a in A2AState],
        "retry_classes": [r.value for r in RetryClass],
        "codes": {
            code.value: {
                **spec.model_dump(mode="json"),
                "retry_class": spec.retry.value,
                "parsed": code.value,
            }
            for code, spec in REGISTRY.items()
        },
        "error_domains": [ERROR_DOMAIN, A2A_ERROR_DOMAIN],
        "a2a_reasons": {str(k): v for k, v in A2A_REASON_OF_JSONRPC.items()},
        "to_a2a": [to_a2a(s).value for s in cases.states()],
        "from_a2a": [
            from_a2a(a, waiting_reason=r, error_code=c).model_dump(mode="json")
            for a, r, c in ask["from_a2a"]
        ],
        "parse": [parse_code(v).value for v in ask["parse"]],
        "jsonrpc": [c.value if (c := code_for_jsonrpc(n)) else None for n in ask["jsonrpc"]],
        "http": [code_for_http_status(n).value for n in ask["http"]],
        "keys": {"CONTRACT_VERSION": CONTRACT_VERSION, **keys_document()},
        "schemas": {
            name.removesuffix(".schema.json").replace("-", "_").upper() + "_SCHEMA": doc
            for name, doc in schema_documents().items()
            if doc.get("type") == "object"
        },
    }


# -- the hand-written helpers against Accord's Python server ---------------------------------


# JSON-RPC errors a peer may answer a Go member's call with: A2A's own (with and without our
# code in its ErrorInfo), a bare JSON-RPC one, ours with details, junk.
JSONRPC_FOREIGN: Final[list[dict[str, Any]]] = [
    {"code": -32001, "message": "Task not found"},
    {"code": -32001, "message": "gone", "data": [{"domain": "a2a-protocol.org", "reason": "X"}]},
    {
        "code": -32001,
        "data": [
            {
                "domain": "a2a-protocol.org",
                "reason": "TASK_NOT_FOUND",
                "metadata": {"accordCode": "NOT_FOUND", "message": "no such task"},
            }
        ],
    },
    {"code": -32601, "message": "Method not found"},
    {"code": -32099},
    {"message": "no code at all"},
    {
        "code": -32050,
        "message": "slow",
        "data": [
            {"domain": "elsewhere", "reason": "RATE_LIMITED"},
            {
                "domain": "accord.dev",
                "reason": "RETRYABLE_TIMEOUT",
                "metadata": {"details": '{"after_s": 3}'},
            },
        ],
    },
    {"code": -32050, "data": [{"domain": "accord.dev", "reason": "NOPE"}]},
    {
        "code": -32050,
        "data": [
            {"domain": "accord.dev", "reason": "UNAVAILABLE", "metadata": {"details": "not json"}}
        ],
    },
]


def _text_as_json(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answers with each MCP text block read as JSON: Go writes a details object's keys
    sorted (a Go map has no order), Python in the order they were given."""
    out = json.loads(json.dumps(errors))
    for e in out:
        for block in e["mcp"]["content"]:
            block["text"] = json.loads(block["text"])
    return out


@pytest.mark.go
def test_go_helpers_write_what_the_python_server_writes(tmp_path: Path) -> None:
    from datetime import datetime

    from accord.contracts.envelope import DelegationEnvelope
    from accord.contracts.errors import AccordError, ErrorCode
    from accord.contracts.keys import DELEGATION_EXTENSION_URI

    binary = _program(tmp_path, _go(), {"names.go": _names_file()})
    deadline_ms = int(datetime.fromisoformat(cases.HOURS).timestamp() * 1000)
    plain_errors = [AccordError(c) for c in ErrorCode]
    errors = plain_errors + [AccordError(c, "nicht möglich", cases.DETAILS) for c in ErrorCode]
    good, budget = cases.GOOD, cases.budget
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
            (0, 0, 1, 0, deadline_ms - 90_000, good),
            (39, 5, 1, 0, deadline_ms - 1, good),
            (40, 0, 1, 0, deadline_ms - 1, good),
            (0, 5, 1, 1, deadline_ms - 1, good),
            (0, 0, 1, 0, deadline_ms, good),
            (0, 0, 1, 0, deadline_ms + 7_300_000, budget(deadline="2030-01-01T02:00:00.5+02:00")),
        ]
    ]
    ask = {
        "status": cases.status_cases(),
        "errors": [e.to_dict() for e in errors],
        "mcp_foreign": [
            {"isError": True, "content": [{"type": "text", "text": "boom"}]},
            {"isError": True, "_meta": {}, "meta": {"dev.accord/error": {"code": "UNAVAILABLE"}}},
        ],
        "jsonrpc_foreign": JSONRPC_FOREIGN,
        "envelopes": [{DELEGATION_EXTENSION_URI: e} for e in cases.envelopes()] + [{}],
        "bad_dates": [{DELEGATION_EXTENSION_URI: budget(deadline=d)} for d in cases.BAD_DATES],
        "admit": admits,
        "child_of": {
            DELEGATION_EXTENSION_URI: cases.envelope_with(
                traceparent=cases.TRACE, parent_task="wf-0"
            )
        },
    }
    got = _ask(binary, ask, "helpers")

    for case, answer in zip(ask["status"], got["status"], strict=True):
        cases.same(answer, cases.py_status(case))
    python_errors = [
        {
            "dict": e.to_dict(),
            "jsonrpc": e.to_jsonrpc_error(),
            "mcp": e.to_mcp_result(),
            "mcp_read": AccordError.from_mcp_result(e.to_mcp_result()).to_dict(),
            "jsonrpc_read": AccordError.from_jsonrpc_error(e.to_jsonrpc_error()).to_dict(),
            "info_parse_failure": e.error_info(-32700),
            "rest": list(e.to_rest()),
            "http": list(e.to_http()),
        }
        for e in errors
    ]
    cases.same(_text_as_json(got["errors"]), _text_as_json(python_errors))
    # Without details the text block is Python's to the byte.
    cases.same(got["errors"][: len(plain_errors)], python_errors[: len(plain_errors)])
    cases.same(
        got["mcp_foreign"], [AccordError.from_mcp_result(r).to_dict() for r in ask["mcp_foreign"]]
    )
    cases.same(
        got["jsonrpc_foreign"],
        [AccordError.from_jsonrpc_error(e).to_dict() for e in JSONRPC_FOREIGN],
    )
    for metadata, answer in zip(ask["envelopes"], got["envelopes"], strict=True):
        cases.same(answer, cases.py_envelope(metadata))
    for metadata, answer in zip(ask["bad_dates"], got["bad_dates"], strict=True):
        cases.same(answer["error"]["details"], cases.py_envelope(metadata)["error"]["details"])
    assert sum("error" in e for e in got["envelopes"]) == 27  # every way to break one refused
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


# -- service tokens (accord.dev/contract/auth) against the keys Python signs with ----------


@pytest.mark.go
def test_go_verifies_service_tokens_as_python_signs_them(tmp_path: Path) -> None:
    import time

    from tests.support.service_keys import sign_as

    from accord.protocol.auth import mint_token

    binary = _program(tmp_path, _go(), {"names.go": _names_file()})
    keys = tmp_path / "keys"
    now = int(time.time())

    def signed(service: str = "orchestrator", **options: Any) -> str:
        return sign_as(service, root=keys, **options)

    tokens = {
        "valid": signed(),
        "narrowed": signed(scopes=["refund.policy"]),
        "beyond its grants": signed("kit", scopes=["refund.policy", "refunds.issue"]),
        "expired": signed(issued_at=now - 7200, ttl_s=60),
        "issued in the future": signed(issued_at=now + 600),
        "another service's key": signed("kit", sub="svc:orchestrator"),
        "another issuer": signed(iss="elsewhere"),
        "another audience": signed(aud="elsewhere"),
        "no jti": signed(jti=""),
        "an untrusted service": signed("stranger"),
        "a person's HS256 token": mint_token("C-01", ("customer",), secret="s" * 32),
        "not a JWT": "not-a-token",
    }
    trust = ",".join(f"{n}={keys}/{n}/jwks.json" for n in ("orchestrator", "kit"))
    ask = {"trust": trust, "grants": {"kit": ["refund.policy"]}, "tokens": list(tokens.values())}
    got = dict(zip(tokens, _ask(binary, ask, "auth"), strict=True))

    assert got["valid"] == {
        "subject": "svc:orchestrator",
        "roles": ["service"],
        "app": "accord",
        "scopes": None,
    }
    assert got["narrowed"]["scopes"] == ["refund.policy"]
    assert got["beyond its grants"]["scopes"] == ["refund.policy"]  # never more than granted
    refused = {name for name, answer in got.items() if "error" in answer}
    assert refused == set(tokens) - {"valid", "narrowed", "beyond its grants"}
    for name in refused:
        assert got[name]["error"]["code"] == "UNAUTHENTICATED", name
    assert "expired" in got["expired"]["error"]["message"]


@pytest.mark.go
def test_go_accepts_the_service_tokens_python_accepts(tmp_path: Path) -> None:
    """The same tokens, signed by the session's service keys, judged by Python's Authenticator
    (with the session's trust table) and by auth.Verifier (with the same JWKS and grants)."""
    import time

    import yaml
    from tests.support.service_keys import sign_as

    from accord.contracts.errors import AccordError
    from accord.protocol.auth.trust import load_trust
    from accord.protocol.auth.verify import Authenticator
    from accord.protocol.service_keys import keys_dir

    binary = _program(tmp_path, _go(), {"names.go": _names_file()})
    now = int(time.time())
    tokens = [
        sign_as("orchestrator"),
        sign_as("orchestrator", scopes=["refund.policy"]),
        sign_as("orchestrator", scopes=["refund.policy", "not.a.grant"]),
        sign_as("kit", scopes=["refund.policy"]),
        sign_as("orchestrator", ttl_s=7200),
        sign_as("orchestrator", issued_at=now - 7200, ttl_s=60),
        sign_as("orchestrator", issued_at=now + 600),
        sign_as("kit", sub="svc:orchestrator"),
        sign_as("orchestrator", iss="elsewhere"),
        sign_as("orchestrator", aud="elsewhere"),
        sign_as("orchestrator", roles=["customer"]),
        sign_as("orchestrator", app="shop"),
    ]
    trust_file = Path(os.environ["ACCORD_SERVICE_TRUST"])
    services = yaml.safe_load(trust_file.read_text())["services"]
    names = ("orchestrator", "kit")
    keys = keys_dir()
    ask = {
        "trust": ",".join(f"{n}={keys}/{n}/jwks.json" for n in names),
        "grants": {n: list(services[n]["grants"]) for n in names},
        "tokens": tokens,
    }
    go_answers = _ask(binary, ask, "auth")
    python = Authenticator(secret="", trust=load_trust(trust_file))

    def judged(token: str) -> dict[str, Any]:
        try:
            principal = python.authenticate({"authorization": f"Bearer {token}"})
        except AccordError as refused:
            return {"error": refused.code.value}
        return {
            "subject": principal.subject,
            "roles": list(principal.roles),
            "app": principal.app,
            "scopes": sorted(principal.scopes),
        }

    for token, go_answer in zip(tokens, go_answers, strict=True):
        if "error" in go_answer:
            go_answer = {"error": go_answer["error"]["code"]}
        else:
            go_answer["scopes"] = sorted(go_answer["scopes"])
        assert go_answer == judged(token)
    assert sum("error" in a for a in go_answers) >= 6


@pytest.mark.go
def test_a_token_go_signs_is_one_python_accepts(tmp_path: Path) -> None:
    import yaml

    from accord.protocol.auth.trust import load_trust
    from accord.protocol.auth.verify import Authenticator

    binary = _program(tmp_path, _go(), {"names.go": _names_file()})
    key_file = tmp_path / "policy-go" / "key.json"
    ask = {"service": "policy", "file": str(key_file), "scopes": ["orders.lookup"]}
    signed = _ask(binary, ask, "sign")
    assert key_file.stat().st_mode & 0o077 == 0  # its private key is its own
    assert signed["kid"].startswith("es256-")
    assert signed["renewed"] is False  # the same bearer until a minute before it runs out
    assert "d" not in signed["jwks"]["keys"][0]  # the published set holds the public key only
    assert _ask(binary, ask, "sign")["kid"] == signed["kid"]  # the file's key, read again

    jwks = tmp_path / "policy-go.jwks.json"
    jwks.write_text(json.dumps(signed["jwks"]), encoding="utf-8")
    trust = tmp_path / "trust.yaml"
    entry = {"jwks": str(jwks), "grants": ["orders.lookup", "refunds.issue"], "tenants": ["*"]}
    trust.write_text(yaml.safe_dump({"services": {"policy": entry}}), encoding="utf-8")
    python = Authenticator(secret="", trust=load_trust(trust))
    principal = python.authenticate({"authorization": f"Bearer {signed['token']}"})
    assert principal.subject == "svc:policy"
    assert list(principal.roles) == ["service"]
    assert sorted(principal.scopes) == ["orders.lookup"]  # it asked for less than its grants
