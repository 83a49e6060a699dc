"""The application file (docs/apps.md): one clear error per broken rule, and the environment
it gives an application's services."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.contracts.loading import ContractFileError
from accord.protocol.app_file import find_app, load_app, project_app_file

GOOD = """
name: shop
services:
  - {name: shop-tools, serve: "shop.tools:service", port: 9101}
  - {name: shop, serve: "shop.agent:service", port: 9100}
settings: {tools_config: tools.yaml, workflow_lease_ttl_s: 5}
"""


def _write(folder: Path, text: str) -> Path:
    path = folder / "accord.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "field", "rule"),
    [
        ("name: shop\nservices: []", "services", "at least 1"),
        (
            "name: shop\nservices:\n  - {name: a, port: 9000}\n  - {name: a, port: 9001}",
            "<document>",
            "unique",
        ),
        (
            "name: shop\nservices:\n  - {name: a, port: 9000}\n  - {name: b, port: 9000}",
            "<document>",
            "one port",
        ),
        ("name: shop\nservices: [{name: a}]\nsettings: {nope: 1}", "<document>", "'nope'"),
        ("name: shop\nservices: [{name: a}]\nsettings: {a_url: x}", "<document>", "'a_url'"),
        ("name: shop\nservices: [{name: a, serve: 'not a target'}]", "services.0.serve", ""),
        ("name: Shop\nservices: [{name: a}]", "name", ""),
        ("name: shop\nservices: [{name: a, extra: 1}]", "services.0.extra", ""),
    ],
)
def test_a_broken_app_file_names_the_field_and_rule(
    tmp_path: Path, text: str, field: str, rule: str
) -> None:
    with pytest.raises(ContractFileError) as raised:
        load_app(_write(tmp_path, text))
    assert raised.value.field == field
    assert rule in raised.value.rule


def test_the_services_environment_has_their_urls_and_the_settings_paths_made_absolute(
    tmp_path: Path,
) -> None:
    app = load_app(_write(tmp_path, GOOD))
    env = app.env({"shop-tools": 9101, "shop": 9100})
    assert env["ACCORD_SHOP_TOOLS_URL"] == "http://127.0.0.1:9101"
    assert env["ACCORD_SHOP_URL"] == "http://127.0.0.1:9100"
    assert env["ACCORD_TOOLS_CONFIG"] == str(tmp_path.resolve() / "tools.yaml")
    assert env["ACCORD_WORKFLOW_LEASE_TTL_S"] == "5"
    assert app.service_names == ("shop-tools", "shop")


def test_a_serve_target_that_is_not_the_service_is_refused(tmp_path: Path) -> None:
    (tmp_path / "shopmod.py").write_text("service = 42\n")
    app = load_app(_write(tmp_path, "name: shop\nservices: [{name: a, serve: 'shopmod:service'}]"))
    with pytest.raises(ContractFileError, match="is not the ServiceSpec of 'a'"):
        app.service("a")
    missing = load_app(_write(tmp_path, "name: shop\nservices: [{name: a, serve: 'nomod:x'}]"))
    with pytest.raises(ContractFileError, match="nomod"):
        missing.service("a")


def test_the_folder_s_file_is_found_else_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = _write(tmp_path, GOOD)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert find_app(None, default).name == "shop"  # none here: the default
    _write(elsewhere, GOOD.replace("name: shop\n", "name: here\n"))
    assert find_app(None, default).name == "here"


def test_the_project_s_file_is_found_from_a_subfolder_as_the_data_directory_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "elsewhere").mkdir()
    default = _write(tmp_path / "elsewhere", GOOD)
    project = tmp_path / "help-desk"
    deep = project / "help_desk" / "data"
    deep.mkdir(parents=True)
    _write(project, GOOD.replace("name: shop\n", "name: help-desk\n"))
    monkeypatch.chdir(deep)
    assert project_app_file() == project / "accord.yaml"
    assert find_app(None, default).name == "help-desk"  # two folders up, not the default
    # A nearer folder with a `.accord` of its own is a project without an app file: the walk
    # stops there, as the data directory's does, and the caller's default is used.
    (project / "help_desk" / ".accord").mkdir()
    assert project_app_file() is None
    assert find_app(None, default).name == "shop"
