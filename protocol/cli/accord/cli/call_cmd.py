"""`accord call URL [TEXT]`: send a message to any A2A 1.0 agent and follow its task.

Status updates are printed as they arrive; then the final state, the answer (artifact data and
text), the question of a waiting task, or the contract error of a failed one. Exit status:
0 completed or waiting, 1 the task failed, 2 the call itself failed (unreachable, refused...).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.json import JSON

from accord.cli.credentials import (
    API_KEY_HELP,
    TOKEN_HELP,
    given_api_key,
    given_token,
    print_error,
)
from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import WITH_ERROR, Status
from accord.protocol.auth import DEFAULT_APP

if TYPE_CHECKING:
    from accord.protocol.a2a.client import TaskView

EXIT_TASK_FAILED = 1
EXIT_CALL_FAILED = 2


def _label(view: TaskView) -> str:
    state = view.state
    qualifier = state.waiting_reason or state.error_code
    label = f"{state.status.value}({qualifier.value})" if qualifier else state.status.value
    if state.declined:  # the agent said no (A2A REJECTED): not a fault, and not worth a retry
        label = f"{label[:-1]}, declined)"
    return f"{label}{' @' + view.node if view.node else ''}"


def _print_update(console: Console, as_json: bool) -> Any:
    last: list[tuple[str, str]] = []  # what was printed last: repeats are not news

    def show(view: TaskView) -> None:
        line = (_label(view), view.status_text)
        if as_json or (last and last[-1] == line):
            return
        last.append(line)
        note = f"  {view.status_text}" if view.status_text else ""
        console.print(f"[dim]{view.task_id[:12]}[/] {line[0]}{note}")

    return show


def _print_final(console: Console, view: TaskView, url: str) -> None:
    console.print(f"[bold]{_label(view)}[/]  task {view.task_id}  context {view.context_id}")
    if view.data is not None:
        console.print(JSON.from_data(view.data))
    if view.text:
        console.print(view.text)
    if view.status is Status.WAITING:
        console.print(f"[yellow]question:[/] {view.question or '(none given)'}")
        console.print(f"answer with: accord call {url} 'YOUR ANSWER' --task {view.task_id}")
    if view.error is not None:
        console.print(
            f"[red]{view.error.code.value}[/] ({view.error.retry_class.value}): "
            f"{view.error.message}"
        )


def _envelope(user: str, text: str | None) -> DelegationEnvelope:
    """A delegation envelope for ``user``: five minutes, 100 units, 50 tool calls."""
    deadline = datetime.now(UTC) + timedelta(minutes=5)
    return DelegationEnvelope(
        goal=(text or "accord call")[:2000],
        budget=Budget(units=100, tool_calls=50, deadline=deadline),
        tenant=Tenant(app=DEFAULT_APP, user=user, session=f"cli-{uuid.uuid4().hex[:12]}"),
    )


def _credentials(
    token: str | None, api_key: str | None, user: str, role: str, scopes: list[str]
) -> tuple[str | None, str | None]:
    if token or api_key:
        return token, api_key
    # A development token signed with this machine's secret (the data directory's, or
    # ACCORD_JWT_SECRET), or for a service (svc:NAME) with that service's own key in the data
    # directory: right for `accord up`, useless against anyone else's agent.
    from accord.protocol.auth import ROLE_SERVICE, mint_token, service_token

    if role == ROLE_SERVICE:
        return service_token(user.removeprefix("svc:"), scopes=scopes), None
    return mint_token(user, [role], scopes=scopes), None


async def _call(
    url: str,
    text: str | None,
    data: dict[str, Any] | None,
    task: str | None,
    transport: str | None,
    creds: tuple[str | None, str | None],
    streaming: bool | None,
    skill: str | None,
    envelope: DelegationEnvelope | None,
    console: Console,
    as_json: bool,
) -> TaskView:
    # Imported here: the A2A package is heavy to import and other commands do not need it.
    from accord.protocol.a2a.client import A2AClient

    async with await A2AClient.connect(
        url, transport=transport, token=creds[0], api_key=creds[1]
    ) as agent:
        return await agent.send(
            text=text,
            data=data,
            task=task,
            skill=skill,
            envelope=envelope,
            streaming=streaming,
            on_update=_print_update(console, as_json),
        )


def register(app: typer.Typer) -> None:
    @app.command()
    def call(
        url: str = typer.Argument(help="Agent base URL"),
        text: str = typer.Argument(None, help="Message text"),
        data: str = typer.Option(None, "--data", help="A JSON object sent as a DataPart"),
        task: str = typer.Option(None, "--task", help="Continue this task (answer a question)"),
        token: str = typer.Option(None, "--token", help=TOKEN_HELP),
        api_key: str = typer.Option(None, "--api-key", help=API_KEY_HELP),
        transport: str = typer.Option(
            None, "--transport", help="jsonrpc or rest (default: the agent's preference)"
        ),
        user: str | None = typer.Option(
            None,
            "--user",
            help="Subject of a minted dev token (default: the installed application's "
            "development user)",
        ),
        role: str = typer.Option("customer", "--role", help="Role of a minted dev token"),
        scope: list[str] = typer.Option(
            [],
            "--scope",
            help="Grant of a minted service token (repeatable): the skill's, e.g. notes.summarize",
        ),
        skill: str = typer.Option(None, "--skill", help="Skill id (default: the first)"),
        on_behalf: str = typer.Option(
            None,
            "--on-behalf",
            help="Send a delegation envelope for this user (needed with a service credential)",
        ),
        no_stream: bool = typer.Option(False, "--no-stream", help="Blocking SendMessage"),
        as_json: bool = typer.Option(False, "--json", help="Print the final task as JSON"),
    ) -> None:
        """Send TEXT and/or --data to an A2A agent; show its updates and the final task."""
        console = Console()
        err = Console(stderr=True)
        if transport is not None and transport.lower() not in ("jsonrpc", "rest"):
            raise typer.BadParameter("--transport must be jsonrpc or rest")
        payload: dict[str, Any] | None = None
        if data is not None:
            try:
                loaded = json.loads(data)
            except ValueError:
                raise typer.BadParameter("--data is not JSON") from None
            if not isinstance(loaded, dict):
                raise typer.BadParameter("--data must be a JSON object")
            payload = loaded
        if text is None and payload is None:
            raise typer.BadParameter("give TEXT, --data, or both")
        if user is None:
            from accord.protocol.plugins import dev_user

            user = dev_user()
        try:
            view = asyncio.run(
                _call(
                    url,
                    text,
                    payload,
                    task,
                    transport,
                    _credentials(given_token(token), given_api_key(api_key), user, role, scope),
                    False if no_stream else None,
                    skill,
                    _envelope(on_behalf, text) if on_behalf else None,
                    console,
                    as_json,
                )
            )
        except AccordError as error:
            print_error(error, err, retry_class=True)
            raise typer.Exit(EXIT_CALL_FAILED) from None
        if as_json:
            typer.echo(json.dumps(view.to_dict(), ensure_ascii=False))
        else:
            _print_final(console, view, url)
        if view.status in WITH_ERROR:
            code = view.state.error_code or ErrorCode.INTERNAL
            if as_json:
                err.print(f"task failed: {code.value}")
            raise typer.Exit(EXIT_TASK_FAILED)
