"""Diff two contract sets: every contract paired by kind and name, plus the registry."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from accord.contracts.evolution.contract_diff import diff_contracts
from accord.contracts.evolution.findings import Finding, pointer
from accord.contracts.evolution.registry_snapshot import diff_registry
from accord.contracts.evolution.sources import ContractSet


class DiffReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    old: str
    new: str
    findings: list[Finding]
    notes: list[str]


def diff_sets(old: ContractSet, new: ContractSet) -> DiffReport:
    findings: list[Finding] = []
    for cid in sorted(old.contracts.keys() - new.contracts.keys()):
        findings.append(Finding(contract=cid, rule="contract.removed", path=pointer(), old=cid))
    for cid in sorted(new.contracts.keys() - old.contracts.keys()):
        findings.append(Finding(contract=cid, rule="contract.added", path=pointer(), new=cid))
    for cid in sorted(old.contracts.keys() & new.contracts.keys()):
        findings += diff_contracts(old.contracts[cid], new.contracts[cid])
    notes: list[str] = []
    if old.registry is not None and new.registry is not None:
        findings += diff_registry(old.registry, new.registry)
    elif old.registry is not None or new.registry is not None:
        missing = old.label if old.registry is None else new.label
        notes.append(
            f"error registry and status mapping not compared: {missing} has no registry snapshot"
        )
    return DiffReport(old=old.label, new=new.label, findings=findings, notes=notes)
