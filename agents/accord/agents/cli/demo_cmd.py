"""`accord demo`: a scripted tour of the refund assistant through all five services.

Starts the mesh in a fresh temporary data directory (unless ``--data-dir``) on free ports, then:
O-1001 is refunded automatically; O-1004 (a laptop: high risk) waits for an approver, who
approves it; O-1002 is explained as outside the return window; O-1005 (a broken mug) is asked
for evidence, which the customer gives in the same task. Prints a transcript and stops the mesh.
Exit status 0 when every scene ended as expected.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.console import Console
from rich.rule import Rule

from accord.agents.cli.approve_cmd import print_decision, send_decision
from accord.agents.cli.demo_reset import reset_demo_data
from accord.agents.cli.refund_cmd import Printer, converse, token_for
from accord.agents.cli.tasks_cmd import approval_table, list_approvals
from accord.cli.credentials import print_error
from accord.cli.mesh import Mesh, MeshError, free_ports, start_mesh
from accord.contracts.errors import AccordError
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.protocol.settings import data_dir_path, env_name
from accord.refund_contracts.domain import RefundDecision

APPROVER = "approver-1"


@dataclass
class Scene:
    title: str
    user: str
    text: str
    expect: str  # the final decision
    answers: list[str] = field(default_factory=list)
    approve_note: str | None = None


SCENES = (
    Scene(
        "O-1001: wrong size, refunded automatically",
        "C-01",
        "鞋码不合适，想退款，订单 O-1001",
        RefundDecision.REFUNDED,
    ),
    Scene(
        "O-1004: a laptop, high risk: an approver decides",
        "C-03",
        "I changed my mind about the laptop, please refund order O-1004",
        RefundDecision.REFUNDED,
        approve_note="verified with the customer by phone",
    ),
    Scene(
        "O-1002: outside the 30-day window",
        "C-01",
        "The running shoes from order O-1002 are too small, I want my money back",
        RefundDecision.NOT_ELIGIBLE,
    ),
    Scene(
        "O-1005: a broken mug needs evidence",
        "C-01",
        "my mug arrived broken, order O-1005",
        RefundDecision.REFUNDED,
        answers=["the handle snapped off in the box, photo IMG_2291.jpg"],
    ),
)


def _scripted(console: Console, answers: list[str]) -> Callable[[TaskView], str | None]:
    pending = list(answers)

    def answer(_view: TaskView) -> str | None:
        if not pending:
            return None
        reply = pending.pop(0)
        console.print(f"[bold]customer>[/] {reply}", highlight=False)
        return reply

    return answer


async def _scene(mesh: Mesh, scene: Scene, console: Console) -> bool:
    console.print(Rule(scene.title))
    console.print(f"[bold]customer {scene.user}>[/] {scene.text}", highlight=False)
    url = mesh.url("orchestrator")
    async with await A2AClient.connect(url, token=token_for(scene.user)) as client:
        view = await converse(
            client,
            scene.text,
            user=scene.user,
            printer=Printer(console),
            answer=_scripted(console, scene.answers),
        )
    if scene.approve_note is not None and view.waiting_reason is WaitingReason.APPROVAL:
        approver = token_for(APPROVER)
        console.print(f"[bold]approver {APPROVER}>[/] accord tasks --status waiting")
        console.print(approval_table(await list_approvals(url, approver)))
        console.print(
            f"[bold]approver {APPROVER}>[/] accord approve {view.task_id} "
            f"--note '{scene.approve_note}'",
            highlight=False,
        )
        decided = await send_decision(
            url, approver, view.task_id, reject=False, note=scene.approve_note
        )
        print_decision(console, decided)
        async with await A2AClient.connect(url, token=token_for(scene.user)) as client:
            view = await client.get(view.task_id)
        console.print(f"[bold]customer {scene.user}>[/] accord tasks  (the task now reads)")
        Printer(console).final(view)
    decision = (view.data or {}).get("decision") if view.status is Status.COMPLETED else None
    ok = decision == scene.expect
    if not ok:
        console.print(f"[red]expected {scene.expect}, got {view.status.value} {decision}[/]")
    return ok


async def tour(mesh: Mesh, console: Console) -> bool:
    results = [await _scene(mesh, scene, console) for scene in SCENES]
    console.print(Rule())
    console.print(f"{sum(results)}/{len(results)} scenes ended as expected")
    return all(results)


def _reset(console: Console, data_dir: Path | None) -> None:
    where = data_dir or data_dir_path()
    try:
        removed = reset_demo_data(where)
    except AccordError as error:
        print_error(error, Console(stderr=True))
        raise typer.Exit(2) from None
    # One line: a script reads it, and a path is never broken across lines.
    console.print(
        f"demo data reset in {where}: {len(removed)} database files removed; the next "
        "`accord up` seeds the demo data again (keys and the development secret are kept)",
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        data_dir: Path = typer.Option(
            None, "--data-dir", help="Use this data directory (default: a fresh temporary one)"
        ),
        keep: bool = typer.Option(False, "--keep", help="Keep the temporary data directory"),
        reset: bool = typer.Option(
            False,
            "--reset",
            help="Put the demo data of the project's data directory back (its SQLite "
            "databases; keys, secret and .venv stay) and exit; refused while the mesh runs",
        ),
    ) -> None:
        """Run the scripted tour: refunded, approved, explained, asked for evidence."""
        console = Console()
        if reset:
            _reset(console, data_dir)
            return
        where = data_dir or Path(tempfile.mkdtemp(prefix="accord-demo-"))
        # Tokens minted here must be signed with the mesh's secret (its data directory's):
        # written for the settings (current()) to read, as the mesh's children do.
        os.environ[env_name("data_dir")] = str(where)
        console.print(f"starting the mesh in {where} ...")
        try:
            mesh = start_mesh(where, ports=free_ports())
        except MeshError as error:
            Console(stderr=True).print(f"[red]the mesh did not start[/]: {error}")
            raise typer.Exit(1) from None
        try:
            ok = asyncio.run(tour(mesh, console))
        except AccordError as error:
            print_error(error, console)
            ok = False
        finally:
            mesh.stop()
            if data_dir is None and not keep:
                shutil.rmtree(where, ignore_errors=True)
        raise typer.Exit(0 if ok else 1)
