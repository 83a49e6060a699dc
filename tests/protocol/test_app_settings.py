"""An application's own ``ACCORD_*`` settings (accord.protocol.settings.app_settings): read
from the same environment as the framework's, refused with the same one-line error, re-read when
a variable changes, listed in docs/configuration.md, and checked before a service starts."""

from __future__ import annotations

import pytest
from pydantic import Field
from pydantic_settings import BaseSettings

from accord.protocol.service import check_startup, find_service
from accord.protocol.settings import (
    SettingsError,
    app_settings,
    app_settings_config,
    installed_app_settings,
)
from accord.protocol.settings_docs import render_markdown
from accord.refund_contracts.settings import AssistantSettings


class DeskSettings(BaseSettings):
    """A team's own app: one number of its rules."""

    model_config = app_settings_config()
    desk_queue_limit: int = Field(default=10, ge=1)


def test_an_application_setting_is_read_and_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACCORD_DESK_QUEUE_LIMIT", raising=False)
    assert app_settings(DeskSettings).desk_queue_limit == 10
    monkeypatch.setenv("ACCORD_DESK_QUEUE_LIMIT", "25")
    assert app_settings(DeskSettings).desk_queue_limit == 25
    monkeypatch.setenv("ACCORD_DESK_QUEUE_LIMIT", " ")  # blank is unset, as for the framework's
    assert app_settings(DeskSettings).desk_queue_limit == 10


def test_a_bad_application_value_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCORD_DESK_QUEUE_LIMIT", "0")
    with pytest.raises(SettingsError) as caught:
        app_settings(DeskSettings)
    assert str(caught.value).startswith("ACCORD_DESK_QUEUE_LIMIT: ")
    assert "greater than or equal to 1" in str(caught.value)


def test_the_refund_assistant_registers_its_settings() -> None:
    assert installed_app_settings()["refund"] is AssistantSettings
    defaults = app_settings(AssistantSettings)
    assert (defaults.approval_timeout_s, defaults.approval_threshold_cents) == (86_400, 50_000)
    page = render_markdown()
    assert "## The refund assistant" in page
    assert "| `ACCORD_APPROVAL_THRESHOLD_CENTS` | `approval_threshold_cents` |" in page


@pytest.mark.parametrize(
    ("name", "value"),
    [("ACCORD_APPROVAL_TIMEOUT_S", "0"), ("ACCORD_APPROVAL_THRESHOLD_CENTS", "many")],
)
def test_a_service_refuses_to_start_with_a_bad_application_value(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    """Any service, not only the app's own that read it: the mesh shares one environment, and a
    typo found at the first refund would be found too late."""
    monkeypatch.setenv(name, value)
    spec = find_service("commerce")
    assert spec is not None
    with pytest.raises(SettingsError) as caught:
        check_startup(spec)
    assert str(caught.value).startswith(f"{name}: ")
