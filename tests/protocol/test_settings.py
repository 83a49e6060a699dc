"""The one settings model: every ACCORD_* variable, validated once, documented from the model."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.server._otel import OpenTelemetryMiddleware

from accord.agents.refund import pause_points
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.tools import tool_contract
from accord.protocol.dev.faults import parse_faults
from accord.protocol.mcp.fault_injection import FaultyHandler, with_faults
from accord.protocol.mcp.server import CallContext, ToolServer, tool
from accord.protocol.settings import (
    AccordSettings,
    SettingsError,
    current,
    data_dir,
    env_name,
    service_url,
)
from accord.protocol.settings_docs import render_markdown
from tests.support.refund_app import REFUND_PORTS

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "contracts",
    "contracts/refund",
    "protocol",
    "protocol/kit",
    "protocol/runtime",
    "protocol/cli",
    "tools",
    "agents",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from no ACCORD_* variable at all (the suite's own may be set)."""
    for name in list(os.environ):
        if name.startswith("ACCORD_"):
            monkeypatch.delenv(name)


def test_defaults_are_the_documented_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = current()
    assert data_dir() == tmp_path / ".accord"
    assert {name: service_url(name) for name in REFUND_PORTS} == {
        name: f"http://127.0.0.1:{port}" for name, port in REFUND_PORTS.items()
    }
    assert REFUND_PORTS == {  # documented (README, docs/refund-assistant.md): keep them
        "commerce": 8710,
        "payments": 8711,
        "policy": 8701,
        "risk": 8702,
        "orchestrator": 8700,
    }
    assert settings.workflow_lease_ttl_s == 15
    assert settings.turn_deadline_s == 300
    assert settings.task_worker_ttl_s == 15.0
    assert (settings.log_format, settings.log_level) == ("text", "WARNING")
    assert settings.database_url is None
    assert settings.jwt_secret is None
    assert not settings.dev
    assert not settings.faults
    assert not settings.test_pause


def test_every_field_is_read_from_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    given = {
        "ACCORD_DATA_DIR": "/srv/accord",
        "ACCORD_DATABASE_URL": "postgresql://u:p@db:5432/accord",
        "ACCORD_POLICY_URL": "http://policy:8701/",
        "ACCORD_JWT_SECRET": " s3cret ",
        "ACCORD_ALLOWED_HOSTS": "commerce:*, localhost",
        "ACCORD_TOKEN": "t-1",
        "ACCORD_WORKFLOW_LEASE_TTL_S": "4.5",
        "ACCORD_TASK_WORKER_TTL_S": "6",
        "ACCORD_LOG_FORMAT": "JSON",
        "ACCORD_LOG_LEVEL": "info",
        "ACCORD_OTEL_LIBRARY_SPANS": "true",
        "ACCORD_DEV": "1",
        "ACCORD_TEST_PAUSE": "refund.before_issue@O-1004:30,order.after_lookup",
    }
    for name, value in given.items():
        monkeypatch.setenv(name, value)
    settings = current()
    assert settings.data_dir == Path("/srv/accord")
    assert settings.database_url == "postgresql://u:p@db:5432/accord"
    assert service_url("policy") == "http://policy:8701"  # no trailing slash
    assert settings.jwt_secret is not None
    assert settings.jwt_secret.get_secret_value() == "s3cret"
    assert settings.allowed_hosts == ("commerce:*", "localhost")
    assert settings.token is not None
    assert settings.token.get_secret_value() == "t-1"
    assert settings.workflow_lease_ttl_s == 4.5
    assert settings.task_worker_ttl_s == 6.0
    assert (settings.log_format, settings.log_level) == ("json", "INFO")
    assert settings.otel_library_spans is True
    assert settings.test_pause == {"refund.before_issue@O-1004": 30.0, "order.after_lookup": 60.0}
    # The model knows every variable it read but services' URLs, which service_url reads (the
    # framework knows no service by name): none is left to a stray os.environ read.
    assert {env_name(n) for n in AccordSettings.model_fields} >= set(given) - {"ACCORD_POLICY_URL"}


def test_a_service_url_is_its_variable_else_the_port_the_service_declares(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert service_url("policy") == "http://127.0.0.1:8701"  # installed, port declared
    monkeypatch.setenv("ACCORD_HELLO_DESK_URL", "https://desk.example:9000/")
    assert service_url("hello-desk") == "https://desk.example:9000"
    with pytest.raises(SettingsError, match="ACCORD_NO_SUCH_URL is not set"):
        service_url("no-such")  # neither a variable nor an installed service
    monkeypatch.setenv("ACCORD_POLICY_URL", "policy:8701")
    with pytest.raises(SettingsError, match="ACCORD_POLICY_URL: not an http"):
        service_url("policy")


def test_a_changed_environment_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCORD_TURN_DEADLINE_S", "10")
    assert current().turn_deadline_s == 10
    monkeypatch.setenv("ACCORD_TURN_DEADLINE_S", "20")
    assert current().turn_deadline_s == 20
    monkeypatch.setenv("ACCORD_TURN_DEADLINE_S", "")  # empty is unset
    assert current().turn_deadline_s == 300
    monkeypatch.setenv("ACCORD_TURN_DEADLINE_S", "  ")  # and so are blanks
    assert current().turn_deadline_s == 300
    monkeypatch.setenv("ACCORD_DATA_DIR", " ")
    assert current().data_dir == Path(".accord")


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("ACCORD_WORKFLOW_LEASE_TTL_S", "abc", "valid number"),
        ("ACCORD_TURN_DEADLINE_S", "-5", "greater than 0"),
        ("ACCORD_LOG_LEVEL", "loud", "'DEBUG', 'INFO'"),
        ("ACCORD_LOG_FORMAT", "xml", "'text' or 'json'"),
        ("ACCORD_POLICY_URL", "policy:8701", "not an http(s) URL"),
        ("ACCORD_DATABASE_URL", "mysql://db", "pattern"),
        ("ACCORD_TASK_WORKER_TTL_S", "-1", "greater than 0"),
    ],
)
def test_a_bad_value_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, why: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as caught:
        current()
    message = str(caught.value)
    assert message.startswith(f"{name}: ")
    assert why in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("name", "value"),
    [("ACCORD_FAULTS", "orders.lookup=UNAVAILABLE:1"), ("ACCORD_TEST_PAUSE", "refund.after_issue")],
)
def test_test_only_settings_are_refused_outside_development_mode(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=f"^{name} is for tests and development only: set "):
        current()
    monkeypatch.setenv("ACCORD_DEV", "1")
    assert getattr(current(), name.removeprefix("ACCORD_").lower())


def test_a_bad_fault_rule_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCORD_DEV", "1")
    monkeypatch.setenv("ACCORD_FAULTS", "orders.lookup=NOPE:1")
    with pytest.raises(SettingsError, match=r"^ACCORD_FAULTS: bad fault rule"):
        current()


async def _echo(args: dict[str, object], _ctx: object) -> dict[str, object]:
    return {"order_id": "O-1001"}


def _server() -> ToolServer:
    return ToolServer("t", "1", [tool(tool_contract("orders.lookup"), _echo)])


def test_a_tool_server_runs_the_mcp_sdks_span_middleware_only_for_library_spans(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With library spans off (the default) the SDK's per-message span would go to a no-op
    tracer: the server does not run it. Kept, it wraps every message as before."""
    monkeypatch.delenv("ACCORD_OTEL_LIBRARY_SPANS", raising=False)
    assert not any(isinstance(m, OpenTelemetryMiddleware) for m in _server().lowlevel.middleware)
    monkeypatch.setenv("ACCORD_OTEL_LIBRARY_SPANS", "true")
    kept = _server().lowlevel.middleware
    assert [type(m) for m in kept] == [OpenTelemetryMiddleware]


def test_a_tool_server_plans_faults_only_in_development_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Production code does not branch on fault injection: without a plan the server serves
    the very handler it was given; with one, the planned tool's handler is wrapped at build."""
    assert _server().tools["orders.lookup"].handler is _echo
    monkeypatch.setenv("ACCORD_FAULTS", "orders.lookup=UNAVAILABLE:2,other.tool=latency:5")
    monkeypatch.setenv("ACCORD_DEV", "1")
    planned = _server().tools["orders.lookup"].handler
    assert isinstance(planned, FaultyHandler)
    assert planned.handler is _echo
    assert (planned.faults.code, planned.faults.times) == (ErrorCode.UNAVAILABLE, 2)
    monkeypatch.delenv("ACCORD_FAULTS")  # development mode alone plans nothing
    assert _server().tools["orders.lookup"].handler is _echo


async def test_planned_faults_answer_before_or_after_the_handler() -> None:
    ran: list[str] = []

    async def lookup(args: dict[str, Any], _ctx: object) -> dict[str, Any]:
        ran.append(str(args["order_id"]))
        return {"order_id": args["order_id"]}

    plan = parse_faults("orders.lookup=RETRYABLE_TIMEOUT:1:after")
    served = with_faults([tool(tool_contract("orders.lookup"), lookup)], plan)[0]
    context, args = CallContext("orders.lookup"), {"order_id": "O-1001"}
    with pytest.raises(AccordError, match="after it ran") as lost:
        await served.handler(args, context)
    assert lost.value.code is ErrorCode.RETRYABLE_TIMEOUT
    assert await served.handler(args, context) == args
    assert ran == ["O-1001", "O-1001"]  # the write ran both times; only the first reply is lost
    refused = with_faults(
        [tool(tool_contract("orders.lookup"), lookup)], parse_faults("orders.lookup=NOT_FOUND:1")
    )[0]
    with pytest.raises(AccordError, match=r"^NOT_FOUND: injected fault in orders\.lookup$"):
        await refused.handler(args, context)
    assert ran == ["O-1001", "O-1001"]  # answered without running


async def test_pause_points_do_nothing_until_a_plan_is_installed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    try:
        await pause_points.pause("refund.before_issue", "O-1004")
        assert pause_points.MARKER not in capsys.readouterr().err
        pause_points.install({"refund.before_issue@O-1004": 0.0})
        await pause_points.pause("refund.before_issue", "O-1003")  # another order
        await pause_points.pause("refund.before_issue", "O-1004")
        assert capsys.readouterr().err.splitlines() == [
            f"{pause_points.MARKER} refund.before_issue@O-1004"
        ]
    finally:
        pause_points.install({})


def test_serve_refuses_a_bad_value_with_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCORD_")}
    env.update(ACCORD_DATA_DIR=str(tmp_path), ACCORD_WORKFLOW_LEASE_TTL_S="abc")
    done = subprocess.run(
        [sys.executable, "-m", "accord.cli.main", "serve", "orchestrator", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "accord: invalid configuration: ACCORD_WORKFLOW_LEASE_TTL_S: Input should be a valid "
        "number, unable to parse string as a number (got 'abc')"
    ]


def test_docs_configuration_md_is_generated_and_fresh() -> None:
    on_disk = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert on_disk == render_markdown(), "docs/configuration.md is stale: run `make docs`"


def test_the_docs_name_every_variable() -> None:
    text = render_markdown()
    for name in AccordSettings.model_fields:
        assert f"| `{env_name(name)}` | `{name}` |" in text


# What production code must not do any more: read an ACCORD_* variable past the model.
# (Setting one for child processes or for the model itself, as `accord demo` does, is fine.)
_STRAY_READ = re.compile(
    r"""(environ\.get\(|getenv\(|envvar=)\s*f?["']ACCORD_"""
    r"""|environ\[\s*f?["']ACCORD_\w*["']\s*\](?!\s*=[^=])"""
)


def test_no_production_module_reads_accord_variables_itself() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for package in PACKAGES
        for path in (ROOT / package / "accord").rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _STRAY_READ.search(line)
    ]
    assert offenders == []


def test_the_stray_read_check_can_fail() -> None:
    for line in (
        'os.environ.get("ACCORD_X", "")',
        "os.environ['ACCORD_X']",
        'os.getenv("ACCORD_X")',
        'typer.Option(None, envvar="ACCORD_TOKEN")',
    ):
        assert _STRAY_READ.search(line), line
    assert not _STRAY_READ.search('os.environ["ACCORD_DATA_DIR"] = str(where)')
