"""Where the kit's probes come from: the applications that register them (entry point group
accord.kit.probes), then a probe file; the kit ships none. And the kit's own command takes the
flags of `accord contract-test`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import typer
from typer.main import get_command

from accord.agents.refund.kit_probes import PROBES
from accord.cli import contract_test_cmd
from accord.kit import Credential, KitOptions, Verdict, run_kit
from accord.kit.cli import parser
from accord.kit.probes import NO_PROBE, PROBES_GROUP, Probes, load_probes, registered_probes
from tests.kit.conftest import run_module

TENANT = Credential(token="tenant-a")  # the broken agent's tenant


def test_the_refund_application_registers_its_probes() -> None:
    assert registered_probes() == PROBES
    assert KitOptions().probes == PROBES  # the default: what the installed applications register


def test_a_probe_file_overrides_the_registered_probes_per_skill(tmp_path: Path) -> None:
    file = tmp_path / "probes.json"
    file.write_text(json.dumps({"agents": {"refund.policy": {"message": {"text": "x"}}}}))
    probes = load_probes(file)
    assert probes.agents["refund.policy"].message == {"text": "x"}
    assert probes.agents["refund.risk"] == PROBES.agents["refund.risk"]
    assert probes.tools == PROBES.tools


def test_the_kit_ships_no_probes_of_its_own() -> None:
    kit = Path(load_probes.__code__.co_filename).parent
    assert not [p for p in kit.rglob("*.py") if "O-9001" in p.read_text(encoding="utf-8")]
    assert PROBES_GROUP in NO_PROBE


def test_without_probes_the_checks_that_need_one_skip_and_say_why(kit_logs: Path) -> None:
    # An agent on a2a-sdk alone (no Accord), run with the refund probes, then with none: taking
    # the probes away fails nothing more, it skips, naming where probes come from.
    with run_module("tests.kit.broken_agent", "correct", kit_logs) as url:
        with_probes, without = (
            asyncio.run(run_kit([url], KitOptions(credential=TENANT, probes=probes)))
            for probes in (PROBES, Probes())
        )
    failed = {r.name for r in without.failures}
    assert failed <= {r.name for r in with_probes.failures}
    skipped = [r for r in without.results if r.outcome is Verdict.SKIP and NO_PROBE in r.detail]
    assert skipped
    assert not [r for r in with_probes.results if NO_PROBE in r.detail]


def test_the_kit_command_takes_the_flags_of_accord_contract_test() -> None:
    app = typer.Typer()
    contract_test_cmd.register(app)
    accord = {o for p in get_command(app).params for o in p.opts if o.startswith("--")}
    kit = {o for a in parser()._actions for o in a.option_strings}  # noqa: SLF001 - argparse's list
    # `--app` (an application's file: accord.protocol.app_file) is accord's alone: the kit
    # imports the contract only, and takes the URLs, probes and contracts the file names.
    only_accord = {"--install-completion", "--show-completion", "--app"}
    assert kit - {"-h", "--help"} == accord - only_accord
