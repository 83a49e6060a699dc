"""The credential a command sends: ``--token`` / ``--api-key``, else ``ACCORD_TOKEN`` /
``ACCORD_API_KEY`` from the settings, else (where a command says so) a minted development token.
And how a command says a call failed: :func:`print_error`, which names, on a refused
credential, where the development secret came from (issue #36)."""

from __future__ import annotations

from typing import Final

from rich.console import Console
from rich.markup import escape

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.settings import current, data_dir_path, env_name

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


def secret_hint() -> str:
    """Where this command's development tokens are signed from, and how to point elsewhere: a
    token made with another data directory's secret than the mesh's is refused as invalid,
    which says nothing of why."""
    if current().jwt_secret is not None:
        return f"tokens made here are signed with {env_name('jwt_secret')}: the mesh needs the same"
    return (
        f"data directory: {data_dir_path()}; tokens made here are signed with its secret. "
        f"Run where the mesh's .accord is, or set {env_name('data_dir')} to the mesh's"
    )


def error_line(error: AccordError, *, retry_class: bool = False) -> str:
    """``CODE: message`` as rich markup; a refused credential adds :func:`secret_hint` on the
    same line (the first thing read)."""
    code = f"[red]{error.code.value}[/]"
    if retry_class:
        code += f" ({error.retry_class.value})"
    line = f"{code}: {escape(error.message)}"
    if error.code is ErrorCode.UNAUTHENTICATED:
        line += f" ({escape(secret_hint())})"
    return line


def print_error(
    error: AccordError, console: Console | None = None, *, retry_class: bool = False
) -> None:
    """:func:`error_line` on ``console`` (default: stderr), never wrapped: one line."""
    line = error_line(error, retry_class=retry_class)
    (console or Console(stderr=True)).print(line, soft_wrap=True)
