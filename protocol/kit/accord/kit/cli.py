"""`accord-contract-test URL...`: the kit's own command, for a team that installs only the kit
(``pip install accord-kit``). Its flags and exit status are those of ``accord contract-test``
(docs/contract-test.md), which builds its run with the same two functions below:
:func:`kit_options` and :func:`run_and_report`.

Exit status: 0 when nothing violated the contract, 1 on any violation, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from accord.contracts.errors import AccordError
from accord.contracts.loading import ContractFileError
from accord.contracts.manifest import requirement_ids
from accord.contracts.tools import load_tool_contract
from accord.kit.options import DEFAULT_TIMEOUT_S, Credential, KitOptions
from accord.kit.probes import load_probes
from accord.kit.report import render_table, write_junit
from accord.kit.run_checks import run_kit

TOKEN_ENV = "ACCORD_TOKEN"


class UsageError(ValueError):
    """A flag's value the kit cannot run with (exit status 2)."""


def kit_options(
    *,
    token: str | None,
    api_key: str | None,
    other_token: str | None,
    skip: Sequence[str],
    probe: Path | None,
    contracts: Sequence[Path],
    timeout_s: float,
) -> KitOptions:
    """The run the flags ask for; :class:`UsageError` for an unknown requirement ID, a probe
    file or contract that cannot be read."""
    unknown = sorted(set(skip) - requirement_ids())
    if unknown:
        raise UsageError(f"--skip: unknown requirement ID(s) {unknown}")
    try:
        return KitOptions(
            credential=Credential(token=token or None, api_key=api_key or None),
            other=Credential(token=other_token or None),
            skip=frozenset(skip),
            timeout_s=timeout_s,
            probes=load_probes(probe),
            contracts=tuple(load_tool_contract(p) for p in contracts),
        )
    except (AccordError, ContractFileError) as error:
        raise UsageError(str(error)) from None


def run_and_report(
    urls: Sequence[str], options: KitOptions, junit: Path | None, console: Console
) -> int:
    """Run the kit, print its table (and write JUnit XML); the exit status."""
    report = asyncio.run(run_kit(list(urls), options))
    render_table(report, console)
    if junit is not None:
        write_junit(report, junit)
        console.print(f"JUnit XML: {junit}")
    return 0 if report.ok else 1


def console() -> Console:
    # The terminal's width (set by shells), not configuration of Accord.
    return Console(width=int(os.environ.get("COLUMNS", "160")))


def parser() -> argparse.ArgumentParser:
    """The command line of ``accord-contract-test`` (``accord contract-test`` takes the same)."""
    command = argparse.ArgumentParser(
        prog="accord-contract-test",
        description="Check A2A agents and MCP tool servers against the Accord contract.",
    )
    add = command.add_argument
    add("urls", nargs="+", metavar="URL", help="A2A agent base URLs and/or MCP server URLs")
    add("--token", default="", help=f"Bearer token for authenticated checks (default: {TOKEN_ENV})")
    add("--api-key", default="", help="API key (X-API-Key) instead of a token")
    add("--other-token", default="", help="A second tenant's token, for the cross-tenant check")
    add(
        "--skip",
        action="append",
        default=[],
        metavar="REQ-ID",
        help="Requirement ID the implementation does not claim (repeatable)",
    )
    add("--probe", type=Path, default=None, help="JSON probe file (skill/tool inputs)")
    add(
        "--contract",
        type=Path,
        action="append",
        default=[],
        help="Tool contract YAML for third-party tools (repeatable)",
    )
    add("--junit", type=Path, default=None, help="Write JUnit XML here")
    add("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="Seconds per call")
    return command


def main(argv: Sequence[str] | None = None) -> None:
    command = parser()
    args = command.parse_args(argv)
    if args.timeout < 0.1:
        command.error("--timeout: at least 0.1 s")
    try:
        options = kit_options(
            # Read here, not through accord.protocol's settings: the kit runs without them (a
            # team that installs only the kit has none; tests/workspace/test_one_config.py).
            token=args.token or os.environ.get(TOKEN_ENV),
            api_key=args.api_key,
            other_token=args.other_token,
            skip=args.skip,
            probe=args.probe,
            contracts=args.contract,
            timeout_s=args.timeout,
        )
    except UsageError as error:
        command.error(str(error))
    sys.exit(run_and_report(args.urls, options, args.junit, console()))


if __name__ == "__main__":
    main()
