"""Whose trust table a process uses when ``ACCORD_SERVICE_TRUST`` is unset: its application's
(the app file's ``service_trust``), found as `accord up` finds the app file; the framework ships
none, so a project whose app file names no table trusts no service."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.agents.refund.config import TRUST_FILE
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth.trust import default_trust_path, load_trust

APP = """name: desk
services:
  - {name: desk, serve: "desk_agent:service", port: 8900}
"""


@pytest.fixture(autouse=True)
def _no_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACCORD_SERVICE_TRUST", raising=False)


def test_outside_any_project_the_installed_application_s_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert default_trust_path() == TRUST_FILE
    assert {"orchestrator", "policy", "risk", "commerce"} <= set(load_trust().services)


def test_a_project_s_app_file_names_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "accord.yaml").write_text(APP + "settings: {service_trust: trust.yaml}\n")
    (tmp_path / "trust.yaml").write_text("services:\n  desk: {grants: [faq.lookup]}\n")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # found from a subfolder, as the app file is
    assert default_trust_path() == tmp_path / "trust.yaml"
    assert set(load_trust().services) == {"desk"}


def test_a_project_that_names_none_trusts_no_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not the refund assistant's table because it happens to be installed: the project says
    which app runs here."""
    (tmp_path / "accord.yaml").write_text(APP)
    monkeypatch.chdir(tmp_path)
    assert default_trust_path() is None
    table = load_trust()
    assert table.services == {}
    with pytest.raises(AccordError) as refused:
        table.entry_for("svc:orchestrator")
    assert refused.value.code is ErrorCode.UNAUTHENTICATED


def test_the_variable_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    given = tmp_path / "mine.yaml"
    given.write_text("services:\n  ops: {grants: []}\n")
    monkeypatch.setenv("ACCORD_SERVICE_TRUST", str(given))
    monkeypatch.chdir(tmp_path)
    assert set(load_trust().services) == {"ops"}
