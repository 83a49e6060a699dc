"""The refund assistant's part of the `accord` command (entry point groups ``accord.commands``
and ``accord.apps``, accord.protocol.plugins): its commands for the help listing, and its app file
for `accord up` in a folder without one. Imports nothing heavier than the framework's table
types: `accord --help` reads this module on every listing."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from accord.cli.lazy_group import LazyCommand
from accord.protocol.plugins import InstalledApp

_CLI = "accord.agents.cli."
REFUND = Path(__file__).resolve().parents[1] / "refund"
REFUND_APP_FILE: Final = REFUND / "accord.yaml"

# Listing order; the summary is each command's own first docstring line (a test compares).
COMMANDS: Final[tuple[LazyCommand, ...]] = (
    LazyCommand(
        "console",
        _CLI + "console_cmd",
        "Serve the web console: approvers' queue and customers' chat, in the browser.",
    ),
    LazyCommand(
        "refund",
        _CLI + "refund_cmd",
        "Ask the refund assistant for a refund; answer its questions.",
    ),
    LazyCommand(
        "chat",
        _CLI + "refund_cmd",
        "A conversation with the refund assistant: typed, or stdin's lines when piped.",
    ),
    LazyCommand(
        "approve",
        _CLI + "approve_cmd",
        "Approve (or --reject) a refund that waits for an approver.",
    ),
    LazyCommand(
        "tasks",
        _CLI + "tasks_cmd",
        "List your refund tasks; an approver sees the approvals waiting for a decision.",
    ),
    LazyCommand(
        "demo",
        _CLI + "demo_cmd",
        "Run the scripted tour: refunded, approved, explained, asked for evidence.",
    ),
    LazyCommand(
        "stats",
        _CLI + "stats_cmd",
        "Model metrics of a running orchestrator: success rate, P95, units and calls.",
    ),
)

APP: Final = InstalledApp(
    path=REFUND_APP_FILE,
    hint="try: {accord} refund '鞋码不合适，想退款，订单 O-1001'   (Ctrl-C stops)",
    console_hint="sign in with a token: {accord} token --user C-03, or --user approver-1 --role "
    "approver",
    tools=REFUND / "tools.yaml",
    dev_user="C-01",  # a customer of the demo data, with orders
)
