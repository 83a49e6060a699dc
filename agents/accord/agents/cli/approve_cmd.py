"""`accord approve TASK [--reject] [--note TEXT]`: an approver decides a waiting refund.

Sends skill ``refund.approve`` with ``{task_id, decision, note}`` as a new task of the
approver's own. Exit status: 0 recorded, 1 refused (PERMISSION_DENIED, INVALID_INPUT,
NOT_FOUND: no task is made), 2 the call failed.
"""

from __future__ import annotations

import asyncio
import json
from typing import Final

import typer
from rich.console import Console

from accord.agents.cli.refund_cmd import (
    EXIT_CALL_FAILED,
    EXIT_FAILED,
    orchestrator_url,
    token_for,
)
from accord.agents.refund.approvals import APPROVE_SKILL
from accord.cli.credentials import TOKEN_HELP, given_token, print_error
from accord.cli.output import out_console
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.refund_contracts.domain import ApprovalDecision

# What the orchestrator answers a decision it will not take (not a failure of the call).
REFUSALS: Final = frozenset(
    {ErrorCode.PERMISSION_DENIED, ErrorCode.INVALID_INPUT, ErrorCode.NOT_FOUND}
)


async def send_decision(url: str, token: str, task_id: str, *, reject: bool, note: str) -> TaskView:
    decision = ApprovalDecision.REJECT if reject else ApprovalDecision.APPROVE
    data = {"task_id": task_id, "decision": decision.value}
    if note:
        data["note"] = note
    async with await A2AClient.connect(url, token=token) as client:
        return await client.send(data=data, skill=APPROVE_SKILL)


def print_decision(console: Console, view: TaskView) -> None:
    if view.status is Status.COMPLETED and view.data is not None:
        outcome = view.data.get("outcome") or {}
        result = outcome.get("result") or {}
        console.print(
            f"[bold]{view.data.get('decision')}[/] recorded for task {view.data.get('task_id')}:"
            f" workflow {outcome.get('status')}"
            + (f", decision {result.get('decision')}" if result else ""),
            highlight=False,
        )
        if result.get("explanation"):
            console.print(f"  customer is told: {result['explanation']}", highlight=False)
    elif view.error is not None:
        console.print(f"[red]{view.error.code.value}[/]: {view.error.message}")


def register(app: typer.Typer) -> None:
    @app.command()
    def approve(
        task_id: str = typer.Argument(help="The customer's task waiting for approval"),
        reject: bool = typer.Option(False, "--reject", help="Reject instead of approve"),
        note: str = typer.Option("", "--note", help="Why (shown to the customer on rejection)"),
        user: str = typer.Option("approver-1", "--user", help="Approver id (dev token)"),
        role: str = typer.Option(None, "--role", help="Role of the minted token"),
        url: str = typer.Option(None, "--url", help="Orchestrator URL (default: port 8700)"),
        token: str = typer.Option(None, "--token", help=TOKEN_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print the answer as JSON"),
    ) -> None:
        """Approve (or --reject) a refund that waits for an approver."""
        console = out_console()
        try:
            view = asyncio.run(
                send_decision(
                    orchestrator_url(url),
                    token_for(user, role, given_token(token)),
                    task_id,
                    reject=reject,
                    note=note,
                )
            )
        except AccordError as error:
            print_error(error)
            # The orchestrator refuses a decision before any task exists (#36): that is this
            # command's "refused", as a failed approval task was; the rest is the call failing.
            refused = error.code in REFUSALS
            raise typer.Exit(EXIT_FAILED if refused else EXIT_CALL_FAILED) from None
        if as_json:
            typer.echo(json.dumps(view.to_dict(), ensure_ascii=False))
        else:
            print_decision(console, view)
        raise typer.Exit(0 if view.status is Status.COMPLETED else EXIT_FAILED)
