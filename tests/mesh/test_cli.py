"""The user-facing commands as subprocesses against the running mesh, and `accord demo` and
`accord up` end to end."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.mesh.support import SECRET, SERVICES, Mesh
from tests.support import forked
from tests.support.processes import free_port, wait_healthy

pytestmark = pytest.mark.timeout(240)


def accord(
    mesh: Mesh, *args: str, timeout: float = 90.0, columns: str | None = "200"
) -> subprocess.CompletedProcess[str]:
    """The command piped (its stdout is a file), ``COLUMNS`` as given (None: unset)."""
    env = {k: v for k, v in {**os.environ, **mesh.env}.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    return forked.run(args, env, timeout=timeout)


def chat(mesh: Mesh, lines: str) -> subprocess.CompletedProcess[str]:
    """`accord chat` with ``lines`` on its stdin (a pipe, not a terminal)."""
    env = {k: v for k, v in {**os.environ, **mesh.env}.items() if k != "COLUMNS"}
    return subprocess.run(
        [sys.executable, "-m", "accord.cli.main", "chat"],
        input=lines,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def one_line_with(out: str, start: str) -> str:
    found = [line for line in out.splitlines() if line.lstrip().startswith(start)]
    assert len(found) == 1, out
    return found[0].strip()


def last_json(out: str) -> Any:
    return json.loads(out.strip().splitlines()[-1])


def test_refund_streams_progress_naming_nodes(mesh: Mesh) -> None:
    done = accord(mesh, "refund", "The shoes from order O-1002 are too small, refund please")
    assert done.returncode == 0, done.stdout + done.stderr
    for node in ("intake", "order", "policy", "risk", "decide", "explain"):
        assert node in done.stdout
    assert "not_eligible" in done.stdout
    assert "outside_window" in done.stdout
    # Of the CLI's envelope (100 units, 50 tool calls); counts before nouns on both sides.
    line = one_line_with(done.stdout, "budget:")
    assert re.fullmatch(
        r"budget: \d+ units?, \d+ tool calls? spent; \d+ units?, \d+ tool calls? left", line
    ), line
    assert not re.search(r"\b1 (units|tool calls)\b", line), line


def test_refund_json_shows_what_the_request_spent_and_what_remains(mesh: Mesh) -> None:
    done = accord(mesh, "refund", "I changed my mind about the jacket, order O-1003", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    budget = last_json(done.stdout)["budget"]
    spent, left = budget["spent"], budget["remaining"]
    assert spent["units"] >= 1  # a turn and its model call
    assert spent["tool_calls"] >= 1  # the order's lookups
    assert left == {"units": 100 - spent["units"], "tool_calls": 50 - spent["tool_calls"]}


def test_refund_without_a_terminal_prints_the_question_then_continues(mesh: Mesh) -> None:
    asked = accord(mesh, "refund", "my mug arrived broken, order O-1005, refund $5", "--json")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    view = last_json(asked.stdout)
    assert isinstance(view, dict)
    assert view["waiting_reason"] == "input"
    assert "photo" in asked.stdout
    assert "accord refund --task" in asked.stdout
    done = accord(mesh, "refund", "--task", view["task_id"], "cracked, photo IMG_3.jpg")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refunded" in done.stdout


@pytest.mark.parametrize("columns", [None, "40"])
def test_the_answer_command_is_one_whole_line_piped(mesh: Mesh, columns: str | None) -> None:
    """Piped with no COLUMNS (rich's 80 before), or in a narrow 40: never wrapped or cut."""
    asked = accord(
        mesh, "refund", "my mug arrived broken, order O-1005, refund $1", "--json", columns=columns
    )
    assert asked.returncode == 3, asked.stdout + asked.stderr
    task_id = last_json(asked.stdout)["task_id"]
    hint = one_line_with(asked.stdout, "answer with:")
    assert hint == f"answer with: accord refund --task {task_id} 'YOUR ANSWER'"


def test_chat_piped_reads_the_conversation_from_stdin(mesh: Mesh) -> None:
    """A line answers the question that waits (not a new request), then the input ends."""
    done = chat(mesh, "my mug arrived broken, order O-1005, refund $2\ncracked, photo IMG_9.jpg\n")
    assert "you> cracked, photo IMG_9.jpg" in done.stdout, done.stdout + done.stderr
    assert done.stdout.count("question:") == 1, done.stdout
    assert "answer with" not in done.stdout
    assert done.returncode in (0, 4), done.stdout + done.stderr  # refunded, or an approver's


def test_chat_piped_ending_on_a_question_says_how_to_answer(mesh: Mesh) -> None:
    done = chat(mesh, "my mug arrived broken, order O-1005, refund $3\n")
    assert done.returncode == 3, done.stdout + done.stderr
    assert one_line_with(done.stdout, "answer with:").startswith("answer with: accord refund")


def test_approve_and_tasks(mesh: Mesh) -> None:
    waiting = accord(
        mesh, "refund", "refund order O-1006, I changed my mind", "--user", "C-04", "--json"
    )
    assert waiting.returncode == 4, waiting.stdout + waiting.stderr
    task_id = last_json(waiting.stdout)["task_id"]

    own = accord(mesh, "approve", task_id, "--user", "C-04")
    # refund.approve's access admits approvers only: refused before any task (AGENT-009).
    assert own.returncode == 1, own.stdout + own.stderr
    assert "PERMISSION_DENIED" in own.stderr

    queue = accord(mesh, "tasks", "--user", "approver-1", "--status", "waiting", "--json")
    assert queue.returncode == 0, queue.stderr
    assert task_id in {item["task_id"] for item in last_json(queue.stdout)}

    for columns in (None, "60"):  # piped, and a narrow terminal's width
        table = accord(mesh, "tasks", "--user", "approver-1", columns=columns)
        assert table.returncode == 0, table.stderr
        row = next(line for line in table.stdout.splitlines() if task_id in line)  # whole id
        assert "$120.00" in row  # O-1006's 12000 cents, as money
        assert "12000" not in table.stdout
        if columns is None:  # nothing wraps: the approval's deadline, said to be one
            assert re.search(r"due \d{4}-\d\d-\d\d \d\d:\d\d UTC", row), row

    mine = accord(mesh, "tasks", "--user", "C-04", "--status", "waiting", "--json")
    assert task_id in {v["task_id"] for v in last_json(mine.stdout)}

    rejected = accord(
        mesh, "approve", task_id, "--reject", "--note", "too many refunds", "--user", "approver-1"
    )
    assert rejected.returncode == 0, rejected.stdout + rejected.stderr
    assert "rejected" in rejected.stdout
    done = accord(mesh, "tasks", "--user", "C-04", "--status", "completed", "--json")
    found = {v["task_id"]: v for v in last_json(done.stdout)}
    assert found[task_id]["data"]["decision"] == "rejected"


def test_demo_runs_the_scripted_tour(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCORD_")}
    done = subprocess.run(
        [sys.executable, "-m", "accord.cli.main", "demo", "--data-dir", str(tmp_path)],
        env={**env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=220,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "4/4 scenes ended as expected" in done.stdout
    for expected in ("O-1001", "waiting for an approver", "outside_window", "photo"):
        assert expected in done.stdout


def test_up_starts_all_five_and_the_console_and_stops_them_on_ctrl_c(tmp_path: Path) -> None:
    ports = {name: free_port() for name in SERVICES}
    console_url = f"http://127.0.0.1:{free_port()}"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ACCORD_")},
        "ACCORD_JWT_SECRET": SECRET,
        "ACCORD_CONSOLE_URL": console_url,
        **{f"ACCORD_{n.upper()}_URL": f"http://127.0.0.1:{p}" for n, p in ports.items()},
    }
    log = (tmp_path / "up.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "accord.cli.main", "up", "--data-dir", str(tmp_path)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        for port in ports.values():
            wait_healthy(f"http://127.0.0.1:{port}", proc, deadline_s=120.0)
        wait_healthy(console_url, proc, deadline_s=60.0)
        end = time.monotonic() + 60
        while "Ctrl-C stops" not in (tmp_path / "up.log").read_text() and proc.poll() is None:
            assert time.monotonic() < end, "accord up did not print its endpoints"
            time.sleep(0.05)  # polling its output, bounded by the deadline
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    out = (tmp_path / "up.log").read_text()
    assert "stopped" in out
    assert str(ports["orchestrator"]) in out
    assert f"web console: {console_url}" in out
    for url in [f"http://127.0.0.1:{port}" for port in ports.values()] + [console_url]:
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{url}/healthz", timeout=1.0)
