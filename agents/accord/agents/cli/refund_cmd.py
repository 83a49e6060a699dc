"""`accord refund TEXT` and `accord chat`: talk to the refund assistant (the orchestrator).

Progress streams as lines naming the workflow node; a question is asked interactively (with a
terminal) and the answer goes into the same task. Exit status: 0 completed (refunded or
explained), 1 the task failed, 2 the call failed (unreachable, refused), 3 a question is
waiting and stdin is not a terminal, 4 the refund waits for an approver.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Final

import typer
from rich.console import Console

from accord.agents.models.base import Language
from accord.agents.models.money_text import money
from accord.cli.credentials import TOKEN_HELP, given_token, print_error
from accord.cli.output import hint, out_console
from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError
from accord.contracts.status import WITH_ERROR, Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.protocol.auth import DEFAULT_APP, ROLE_APPROVER, ROLE_CUSTOMER, mint_token
from accord.protocol.settings import service_url
from accord.refund_contracts.domain import RefundDecision

EN: Final = Language.EN  # the CLI speaks English
EXIT_FAILED: Final = 1
EXIT_CALL_FAILED: Final = 2
EXIT_NEEDS_INPUT: Final = 3
EXIT_WAITING_APPROVAL: Final = 4
SESSION_S: Final = 3600  # a conversation's delegation deadline: answers may take a while
REFUND_SKILL: Final = "refund.request"

Answerer = Callable[[TaskView], str | None]


# -- shared with approve, tasks and demo ---------------------------------------------------------
def token_for(user: str, role: str | None = None, token: str | None = None) -> str:
    """``token``, or a development token for ``user`` signed with this machine's secret
    (the data directory's, or ACCORD_JWT_SECRET): right for `accord up`, useless elsewhere."""
    if token:
        return token
    if role is None:
        role = ROLE_APPROVER if user.startswith("approver") else ROLE_CUSTOMER
    return mint_token(user, [role])


def orchestrator_url(url: str | None) -> str:
    return (url or service_url("orchestrator")).rstrip("/")


def customer_envelope(user: str, goal: str) -> DelegationEnvelope:
    deadline = datetime.now(UTC) + timedelta(seconds=SESSION_S)
    return DelegationEnvelope(
        goal=goal[:2000] or "refund",
        budget=Budget(units=100, tool_calls=50, deadline=deadline),
        tenant=Tenant(app=DEFAULT_APP, user=user, session=f"cli-{uuid.uuid4().hex[:12]}"),
    )


class Printer:
    """Progress lines (one per new status naming a node) and the final answer."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._last = ""

    def progress(self, view: TaskView) -> None:
        if view.status is not Status.RUNNING or not view.node or not view.status_text:
            return
        if view.status_text == self._last:
            return
        self._last = view.status_text
        text = view.status_text.removeprefix(f"{view.node}: ")
        self.console.print(f"  [dim]{view.node:<9}[/] [dim]{text}[/]", highlight=False)

    def final(self, view: TaskView) -> None:
        console = self.console
        if view.status is Status.COMPLETED:
            data = view.data or {}
            decision = str(data.get("decision", "done"))
            color = "green" if decision == RefundDecision.REFUNDED else "yellow"
            console.print(f"[bold {color}]{decision}[/]  {view.text}", highlight=False)
            receipt = data.get("receipt")
            if isinstance(receipt, dict):
                cents = receipt.get("amount_cents")
                currency = receipt.get("currency")
                amount = money(cents if isinstance(cents, int) else None, currency, EN)
                console.print(
                    f"  receipt {receipt.get('receipt_id')}  {amount or ''}"
                    f"  key {receipt.get('idempotency_key')}",
                    highlight=False,
                )
            if data.get("rule") and decision != RefundDecision.REFUNDED:
                console.print(f"  rule: {data['rule']}", highlight=False)
        elif view.status is Status.WAITING and view.waiting_reason is WaitingReason.APPROVAL:
            console.print(f"[bold cyan]waiting for an approver[/]  task {view.task_id}")
            hint(console, f"  an approver decides with: accord approve {view.task_id}")
        elif view.status is Status.WAITING:
            console.print(f"[bold cyan]question:[/] {view.question}", highlight=False)
        elif view.error is not None:
            console.print(f"[red]{view.error.code.value}[/]: {view.error.message}")
        if view.is_interrupted and view.budget is not None:
            console.print(f"  [dim]budget: {budget_text(view.budget)}[/]", highlight=False)


def budget_text(budget: dict[str, dict[str, int]]) -> str:
    """ "1 unit, 2 tool calls spent; 99 units, 48 tool calls left" (of the request's envelope):
    the same order on both sides, each count with its noun in the right number."""

    def amounts(counts: dict[str, int]) -> str:
        return ", ".join(f"{n} {_noun(name, n)}" for name, n in counts.items())

    spent = budget["spent"]
    given = budget.get("remaining") or {}
    # The same kinds in the same order on both sides (the server's two maps need not agree).
    left = {k: given[k] for k in [*spent, *given] if k in given}
    return f"{amounts(spent)} spent" + (f"; {amounts(left)} left" if left else "")


def _noun(name: str, count: int) -> str:
    """``tool_calls`` -> ``tool calls``, ``tool call`` for one (the envelope's names are
    plural)."""
    words = name.replace("_", " ")
    return words.removesuffix("s") if count == 1 else words


async def converse(
    client: A2AClient,
    text: str,
    *,
    user: str,
    printer: Printer,
    answer: Answerer,
    task: str | None = None,
) -> TaskView:
    """Send ``text`` (a new request, or an answer when ``task`` is given) and keep answering
    questions with ``answer`` until the task completes, fails, waits for an approver, or
    ``answer`` returns None."""
    envelope = None if task else customer_envelope(user, text)
    skill = None if task else REFUND_SKILL
    view = await _with_metadata(
        client,
        await client.send(
            text=text, task=task, envelope=envelope, skill=skill, on_update=printer.progress
        ),
    )
    while view.status is Status.WAITING and view.waiting_reason is WaitingReason.INPUT:
        printer.final(view)
        reply = answer(view)
        if reply is None:
            return view
        sent = await client.send(text=reply, task=view, on_update=printer.progress)
        view = await _with_metadata(client, sent)
    printer.final(view)
    return view


async def _with_metadata(client: A2AClient, view: TaskView) -> TaskView:
    """The streamed view with the stored task's metadata (what the request spent and has left):
    one GetTask once the turn has stopped. The stream's status updates carry metadata too, but
    only as of their event (an orchestrator's spending grows after its first status), so the
    stored task is the one read."""
    if not view.task_id or not view.is_interrupted:
        return view
    try:
        stored = await client.get(view.task_id)
    except AccordError:
        return view  # the answer stands; only the budget line is missing
    return replace(view, metadata=stored.metadata)


def exit_code(view: TaskView) -> int:
    if view.status in WITH_ERROR:
        return EXIT_FAILED
    if view.status is Status.WAITING:
        return (
            EXIT_WAITING_APPROVAL
            if view.waiting_reason is WaitingReason.APPROVAL
            else (EXIT_NEEDS_INPUT)
        )
    return 0


def _answer_later(console: Console, view: TaskView) -> None:
    hint(console, f"answer with: accord refund --task {view.task_id} 'YOUR ANSWER'")


def _prompt(console: Console) -> Answerer:
    """`accord refund`'s answers: typed at a prompt, or (no terminal) the command to answer
    with later."""
    read = _reader(console)

    def ask(view: TaskView) -> str | None:
        if not sys.stdin.isatty():
            _answer_later(console, view)
            return None
        return read() or None

    return ask


def _reader(console: Console) -> Callable[[], str | None]:
    """What the user says next: typed at a ``you>`` prompt on a terminal; else the next line of
    stdin, echoed so that the output reads as the conversation. None at the end of input."""
    if sys.stdin.isatty():

        def typed() -> str | None:
            try:
                return console.input("[bold]you>[/] ").strip()
            except EOFError:
                return None

        return typed

    def piped() -> str | None:
        line = sys.stdin.readline()
        if not line:
            return None
        console.print(f"you> {line.strip()}", markup=False, highlight=False)
        return line.strip()

    return piped


async def _refund(url: str, token: str, user: str, text: str, task: str | None) -> TaskView:
    console = out_console()
    async with await A2AClient.connect(url, token=token) as client:
        return await converse(
            client, text, user=user, printer=Printer(console), answer=_prompt(console), task=task
        )


async def _chat(url: str, token: str, user: str) -> int:
    """The conversation; its exit status is the last request's (0 when there was none). Without
    a terminal, stdin's lines are the conversation: a line answers the question that waits, or
    starts a new request when none does; a question left at the end of input is printed with the
    command that answers it (exit status 3, as `accord refund`'s)."""
    console = out_console()
    if sys.stdin.isatty():
        console.print("Refund assistant. Describe your problem (empty line or Ctrl-D to quit).")
    printer = Printer(console)
    read = _reader(console)
    last: TaskView | None = None

    def answer(view: TaskView) -> str | None:
        reply = read()
        if not reply and not sys.stdin.isatty():
            _answer_later(console, view)
        return reply or None

    async with await A2AClient.connect(url, token=token) as client:
        while True:
            text = read()
            if not text or text in ("quit", "exit"):
                return exit_code(last) if last is not None else 0
            try:
                last = await converse(client, text, user=user, printer=printer, answer=answer)
            except AccordError as error:
                print_error(error, console)
            if last is not None and _unanswered(last) and not sys.stdin.isatty():
                return EXIT_NEEDS_INPUT  # the input ended with the question unanswered


def _unanswered(view: TaskView) -> bool:
    return view.status is Status.WAITING and view.waiting_reason is WaitingReason.INPUT


def register(app: typer.Typer) -> None:
    @app.command()
    def refund(
        text: str = typer.Argument(help="What happened, e.g. '鞋码不合适，想退款，订单 O-1001'"),
        user: str = typer.Option("C-01", "--user", help="Customer id (a dev token is minted)"),
        task: str = typer.Option(None, "--task", help="Answer the question of this task"),
        url: str = typer.Option(None, "--url", help="Orchestrator URL (default: port 8700)"),
        token: str = typer.Option(None, "--token", help=TOKEN_HELP),
        as_json: bool = typer.Option(False, "--json", help="Also print the final task as JSON"),
    ) -> None:
        """Ask the refund assistant for a refund; answer its questions."""
        try:
            view = asyncio.run(
                _refund(
                    orchestrator_url(url),
                    token_for(user, None, given_token(token)),
                    user,
                    text,
                    task,
                )
            )
        except AccordError as error:
            print_error(error)
            raise typer.Exit(EXIT_CALL_FAILED) from None
        if as_json:
            typer.echo(json.dumps(view.to_dict(), ensure_ascii=False))
        raise typer.Exit(exit_code(view))

    @app.command()
    def chat(
        user: str = typer.Option("C-01", "--user", help="Customer id (a dev token is minted)"),
        url: str = typer.Option(None, "--url", help="Orchestrator URL (default: port 8700)"),
        token: str = typer.Option(None, "--token", help=TOKEN_HELP),
    ) -> None:
        """A conversation with the refund assistant: typed, or stdin's lines when piped."""
        try:
            code = asyncio.run(
                _chat(orchestrator_url(url), token_for(user, None, given_token(token)), user)
            )
        except AccordError as error:
            print_error(error)
            raise typer.Exit(EXIT_CALL_FAILED) from None
        raise typer.Exit(code)
