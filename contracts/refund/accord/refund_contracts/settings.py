"""The refund assistant's own ``ACCORD_*`` settings: :class:`AssistantSettings`.

Its rules' numbers, shared by the services that must agree on them (risk-check flags a large
amount, payments refuses an unapproved refund over the same threshold), so they live with the
app's vocabulary, not in the framework. Read through the framework's one reader,
``accord.protocol.settings.app_settings(AssistantSettings)``, from the same environment as the
framework's settings; docs/configuration.md lists them (entry point ``accord.settings``).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Final

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_APPROVAL_THRESHOLD_CENTS: Final = 50_000
GROUP: Final = "refund"


def _doc(shown_default: str | None = None) -> dict[str, Any]:
    extra: dict[str, Any] = {"group": GROUP}
    if shown_default is not None:
        extra["shown_default"] = shown_default
    return extra


class AssistantSettings(BaseSettings):
    """The refund assistant's settings. Unset or empty variables take the default."""

    # The framework's prefix and reading (accord.protocol.settings.app_settings_config, which
    # this distribution cannot import: it depends on the contract alone).
    model_config = SettingsConfigDict(
        env_prefix="ACCORD_", env_ignore_empty=True, extra="ignore", frozen=True
    )
    title: ClassVar[str] = "The refund assistant"

    approval_timeout_s: Annotated[float, Field(gt=0)] = Field(
        default=86_400.0,
        description="How long a refund may wait for an approver.",
        json_schema_extra=_doc(),
    )
    approval_threshold_cents: int = Field(
        default=DEFAULT_APPROVAL_THRESHOLD_CENTS,
        ge=1,
        le=100_000_000,
        description=(
            "Money paid back without an approver stays below this, per order and per customer "
            "over 90 days: payments refuses an unapproved refund that would reach it "
            "(POLICY_DENIED, `approval_required`; the orchestrator then asks an approver), and "
            "risk-check sends a request of this much or more to the approver up front "
            "(`large_amount`). Give risk-check and payments the same value "
            "(docs/refund-assistant.md)."
        ),
        json_schema_extra=_doc("50000 (500.00)"),
    )
