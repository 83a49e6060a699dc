"""The credential a command sends: ``--token`` / ``--api-key``, else ``ACCORD_TOKEN`` /
``ACCORD_API_KEY`` from the settings, else (where a command says so) a minted development token."""

from __future__ import annotations

from typing import Final

from accord.protocol.settings import current

TOKEN_HELP: Final = "Bearer token (default: ACCORD_TOKEN)"
API_KEY_HELP: Final = "API key (default: ACCORD_API_KEY)"


def given_token(option: str | None) -> str | None:
    if option:
        return option
    configured = current().token
    return configured.get_secret_value() if configured is not None else None


def given_api_key(option: str | None) -> str | None:
    if option:
        return option
    configured = current().api_key
    return configured.get_secret_value() if configured is not None else None
