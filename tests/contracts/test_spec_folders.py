"""The framework finds an application's contracts through the application (issue #31).

accord-refund-contracts registers its package under the ``accord.contracts`` entry-point group;
the framework's loaders read that folder beside the framework's own, and no path of the refund
app is written in the framework.
"""

from __future__ import annotations

import shutil
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from accord.contracts import spec_folders as folders
from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.loading import ContractFileError
from accord.contracts.tools import shipped_tool_contracts

ROOT = Path(__file__).resolve().parents[2]
REFUND_SPECS = ROOT / "contracts" / "refund" / "accord" / "refund_contracts" / "specs"


def test_the_framework_folder_comes_first_then_each_registered_one() -> None:
    assert [ep.name for ep in entry_points(group=folders.SPECS_GROUP)] == ["refund"]
    assert folders.spec_folders() == (folders.framework_specs(), REFUND_SPECS)
    assert (folders.framework_specs() / "requirements.yaml").is_file()
    assert not (folders.framework_specs() / "tools").exists()


def test_the_shipped_contracts_are_the_registered_application_s() -> None:
    assert set(shipped_agent_contracts()) == {"orchestrator", "policy-check", "risk-check"}
    assert "orders.lookup" in shipped_tool_contracts()
    assert folders.contract_files("tools") == sorted((REFUND_SPECS / "tools").glob("*.yaml"))


def test_a_contract_two_applications_both_define_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for app in ("one", "two"):
        shutil.copytree(REFUND_SPECS / "agents", tmp_path / app / "agents")
    monkeypatch.setattr(folders, "spec_folders", lambda: (tmp_path / "one", tmp_path / "two"))
    with pytest.raises(ContractFileError, match="defined twice") as raised:
        shipped_agent_contracts()
    assert raised.value.path.startswith(str(tmp_path / "two"))
