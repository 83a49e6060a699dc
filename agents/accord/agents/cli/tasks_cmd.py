"""`accord tasks [--status waiting]`: a customer's refund tasks, or an approver's queue.

A customer lists their own tasks (A2A ListTasks over HTTP+JSON). An approver (``--user
approver-...``, ``--role approver``, or a ``--token`` whose roles include approver) sees the
queue of their own app (``GET /approvals``): the refunds waiting for a decision, and the refunds
that stopped and need a person (``attention``). Another app's refunds are never in it.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import jwt
import typer
from rich.table import Table

from accord.agents.cli.refund_cmd import (
    EXIT_CALL_FAILED,
    budget_text,
    orchestrator_url,
    token_for,
)
from accord.agents.models.base import Language
from accord.agents.models.money_text import format_money
from accord.agents.refund.approvals import APPROVALS_PATH
from accord.agents.refund.attention import ATTENTION_KIND
from accord.cli.credentials import TOKEN_HELP, given_token, print_error
from accord.cli.output import out_console, whole_column
from accord.contracts.errors import AccordError
from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.protocol.a2a.client.routes import get_json
from accord.protocol.auth import ROLE_APPROVER

PAGE_SIZE = 100


async def list_tasks(url: str, token: str) -> list[TaskView]:
    async with await A2AClient.connect(url, token=token) as client:
        views, _ = await client.list_tasks(page_size=PAGE_SIZE)
    return views


async def list_approvals(url: str, token: str) -> list[dict[str, Any]]:
    body = await get_json(f"{url}{APPROVALS_PATH}", token)
    return list((body or {}).get("approvals", []))


def _task_table(views: list[TaskView]) -> Table:
    table = Table(
        whole_column("task", [v.task_id for v in views]),
        "status",
        "order",
        "decision / question",
        "budget",
    )
    for view in views:
        state = view.state
        label = (
            state.status.value
            + (f"({state.waiting_reason.value})" if state.waiting_reason else "")
            + (f"({state.error_code.value})" if state.error_code else "")
        )
        data = view.data or {}
        what = str(data.get("decision") or view.question or view.status_text or "")
        spent = budget_text(view.budget) if view.budget is not None else ""
        table.add_row(view.task_id, label, str(data.get("order_id") or ""), what[:80], spent)
    return table


def _amount(facts: dict[str, Any]) -> str:
    cents = facts.get("amount_cents")
    return format_money(cents, facts.get("currency"), Language.EN) if isinstance(cents, int) else ""


def _time(item: dict[str, Any]) -> str:
    """An approval's deadline (``due``), or when a refund stopped (``stopped``)."""
    due, at = item.get("due_at"), item.get("at")
    stamp = due or at
    if not stamp:
        return ""
    text = datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"due {text}" if due else f"stopped {text}"


def approval_table(items: list[dict[str, Any]]) -> Table:
    amounts = [_amount(item.get("facts") or {}) for item in items]
    table = Table(
        whole_column("task", [str(item.get("task_id")) for item in items]),
        "kind",
        "order",
        "customer",
        whole_column("amount", amounts),
        "risk / why",
        "signals",
        "time",
    )
    for item, amount in zip(items, amounts, strict=True):
        facts = item.get("facts") or {}
        attention = item.get("kind") == ATTENTION_KIND
        why = (
            f"{item.get('code')}: receipt differs in {', '.join(facts.get('mismatched') or [])}"
            if attention
            else str(facts.get("risk"))
        )
        table.add_row(
            str(item.get("task_id")),
            "needs attention" if attention else "approval",
            str(facts.get("order_id")),
            str(facts.get("customer_id")),
            amount,
            why,
            ", ".join(facts.get("signals") or []),
            _time(item),
        )
    return table


def _is_approver(user: str, role: str | None, token: str | None) -> bool:
    """Approver by ``--role``, by a token's (unverified: the server verifies) roles, or by the
    ``approver-...`` naming of a minted development token."""
    if role is not None:
        return role == ROLE_APPROVER
    if token:
        try:
            roles = jwt.decode(token, options={"verify_signature": False}).get("roles")
        except jwt.PyJWTError:
            return False
        return isinstance(roles, list) and ROLE_APPROVER in roles
    return user.startswith("approver")


def register(app: typer.Typer) -> None:
    @app.command()
    def tasks(
        status: str = typer.Option(None, "--status", help="Only tasks in this status"),
        user: str = typer.Option("C-01", "--user", help="Customer or approver id (dev token)"),
        role: str = typer.Option(None, "--role", help="Role of the minted token"),
        url: str = typer.Option(None, "--url", help="Orchestrator URL (default: port 8700)"),
        token: str = typer.Option(None, "--token", help=TOKEN_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        """List your refund tasks; an approver sees the approvals waiting for a decision."""
        wanted = None
        if status is not None:
            try:
                wanted = Status(status)
            except ValueError:
                raise typer.BadParameter(
                    f"--status must be one of {', '.join(s.value for s in Status)}"
                ) from None
        console = out_console()
        base = orchestrator_url(url)
        given = given_token(token)
        bearer = token_for(user, role, given)
        is_approver = _is_approver(user, role, given)
        try:
            if is_approver:
                items = asyncio.run(list_approvals(base, bearer))
                if wanted not in (None, Status.WAITING):
                    items = []
                if as_json:
                    typer.echo(json.dumps(items, ensure_ascii=False))
                else:
                    console.print(approval_table(items))
                return
            views = asyncio.run(list_tasks(base, bearer))
        except AccordError as error:
            print_error(error)
            raise typer.Exit(EXIT_CALL_FAILED) from None
        views = [v for v in views if wanted is None or v.status is wanted]
        if as_json:
            typer.echo(json.dumps([v.to_dict() for v in views], ensure_ascii=False))
        else:
            console.print(_task_table(views))
