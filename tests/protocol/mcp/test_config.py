"""The tools configuration file: defaults, overrides, third-party contracts, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.agents.refund.config import TOOLS_FILE
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.loading import ContractFileError
from accord.protocol.mcp.config import load_config
from tests.protocol.mcp.paths import ECHO_CONTRACT


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tools.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_refund_apps_file_points_at_its_services(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACCORD_TOOLS_CONFIG", raising=False)
    monkeypatch.delenv("ACCORD_COMMERCE_URL", raising=False)
    monkeypatch.setenv("ACCORD_PAYMENTS_URL", "http://payments.internal:9000/")
    config = load_config(default=TOOLS_FILE)
    servers = {s.name: s for s in config.servers}
    assert servers["commerce"].url == "http://127.0.0.1:8710/mcp"
    assert servers["payments"].url == "http://payments.internal:9000/mcp"
    assert [c.name for c in servers["commerce"].contracts] == [
        "orders.lookup",
        "customers.history",
        "orders.customer_history",
    ]
    assert [c.name for c in servers["payments"].contracts] == [
        "refunds.issue",
        "refunds.get",
        "refunds.list",
    ]


def test_the_framework_ships_no_tools_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Which tool servers there are is the application's: none given is a typed error."""
    monkeypatch.delenv("ACCORD_TOOLS_CONFIG", raising=False)
    with pytest.raises(AccordError) as refused:
        load_config()
    assert refused.value.code is ErrorCode.INVALID_INPUT
    assert "ACCORD_TOOLS_CONFIG" in refused.value.message


def test_user_file_from_environment_with_third_party_stdio_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "echo.yaml").write_text(ECHO_CONTRACT.read_text())
    monkeypatch.setenv("ECHO_TOKEN", "s3cret")
    path = _write(
        tmp_path,
        """
timeout_s: 2.5
retry: {max_attempts: 2}
servers:
  - name: echo
    transport: stdio
    command: echo-server
    args: [--quiet]
    env: {TOKEN: "${env:ECHO_TOKEN}"}
    tools: [contracts/echo.yaml, orders.lookup]
""",
    )
    monkeypatch.setenv("ACCORD_TOOLS_CONFIG", str(path))
    config = load_config()
    [echo] = config.servers
    assert (echo.transport, echo.command, echo.args) == ("stdio", "echo-server", ("--quiet",))
    assert echo.env == {"TOKEN": "s3cret"}
    assert [c.name for c in echo.contracts] == ["debug.echo", "orders.lookup"]
    assert config.timeout_s == 2.5
    assert config.retry.max_attempts == 2
    assert config.source == str(path)


@pytest.mark.parametrize(
    ("text", "field", "rule"),
    [
        ("servers: []", "servers", "at least 1 item"),
        (
            "servers:\n  - {name: a, transport: http, tools: [orders.lookup]}",
            "servers.0",
            "an http server needs a url",
        ),
        (
            "servers:\n  - {name: a, transport: ftp, url: 'http://x', tools: [orders.lookup]}",
            "servers.0.transport",
            "'http' or 'stdio'",
        ),
        (
            "servers:\n  - {name: a, transport: stdio, tools: [orders.lookup]}",
            "servers.0",
            "a stdio server needs a command",
        ),
        (
            "servers:\n  - {name: a, transport: http, url: 'http://x', tools: [nope.tool]}",
            "servers.0.tools.0",
            "'nope.tool' is not a shipped tool contract",
        ),
        (
            "servers:\n  - {name: a, transport: http, url: 'http://x', tools: [missing.yaml]}",
            "servers.0.tools.0",
            "does not exist",
        ),
        (
            "servers:\n  - {name: a, transport: http, url: '${service_url:nope}/mcp', "
            "tools: [orders.lookup]}",
            "servers.0.url",
            "ACCORD_NOPE_URL is not set",
        ),
        (
            "servers:\n  - {name: a, transport: http, url: 'ftp://x', tools: [orders.lookup]}",
            "servers.0.url",
            "is not an http(s) URL",
        ),
        (
            "servers:\n  - {name: a, transport: http, url: 'http://x', tools: [orders.lookup]}\n"
            "  - {name: b, transport: http, url: 'http://y', tools: [orders.lookup]}",
            "servers.1.tools.0",
            "already served by 'a'",
        ),
        (
            "servers:\n  - {name: a, transport: http, url: 'http://x', tools: [orders.lookup], "
            "colour: red}",
            "servers.0.colour",
            "Extra inputs are not permitted",
        ),
        ("servers: [", "line 1", "is not valid YAML"),
    ],
)
def test_malformed_file_names_file_field_and_rule(
    tmp_path: Path, text: str, field: str, rule: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ContractFileError) as info:
        load_config(path)
    err = info.value
    assert err.code is ErrorCode.INVALID_INPUT
    assert (err.path, err.field) == (str(path), field)
    assert rule in err.rule
    assert str(path) in err.message


def test_broken_contract_file_is_reported_with_its_own_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x.y\nversion: one\n")
    path = _write(
        tmp_path, "servers:\n  - {name: a, transport: http, url: 'http://x', tools: [bad.yaml]}\n"
    )
    with pytest.raises(ContractFileError) as info:
        load_config(path)
    assert info.value.path == str(bad)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ContractFileError) as info:
        load_config(tmp_path / "absent.yaml")
    assert info.value.field == "<file>"
