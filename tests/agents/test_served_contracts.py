"""An agent process serves ACCORD_CONTRACTS_DIR's contract files, or refuses to start with one
line when they disagree."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.policy_versions import policy_1_0, policy_2_0, write_contracts

from accord.agents.check_requests import served_contracts
from accord.protocol.service import StartRefusedError


def test_the_folder_is_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = write_contracts(tmp_path / "c", policy_2_0(["1.0.0"]), policy_1_0())
    monkeypatch.setenv("ACCORD_CONTRACTS_DIR", env["ACCORD_CONTRACTS_DIR"])
    assert served_contracts("policy-check").versions == ["2.0.0", "1.0.0"]
    # risk-check has no file there: it serves its shipped contract.
    assert len(served_contracts("risk-check").by_major) == 1


def test_files_that_disagree_refuse_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = write_contracts(tmp_path / "c", policy_2_0(), policy_1_0())  # no also_serves
    monkeypatch.setenv("ACCORD_CONTRACTS_DIR", env["ACCORD_CONTRACTS_DIR"])
    with pytest.raises(StartRefusedError, match="also_serves"):
        served_contracts("policy-check")
