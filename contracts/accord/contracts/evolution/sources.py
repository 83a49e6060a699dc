"""Where the contracts of one side of a diff come from: a file, a folder or a git revision.

A git revision (``v0.1.0``, ``HEAD~3``) means the shipped contract folder at that revision, read
with ``git ls-tree`` and ``git show``: nothing is checked out, the working tree is untouched.
A folder that holds the repository's contract folders (a worktree) means those folders.

Which folders those are is the caller's to say (``folders``: the workspace's
``[tool.accord.release] specs``, the framework's own and each application's); contracts are
keyed by name (``tool:tickets.get``), never by path, so a contract that moved from one
folder to another is the same contract.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from accord.contracts.agents import AgentContract
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.evolution.contract_diff import Contract, contract_id
from accord.contracts.evolution.release_record import RELEASE_FILE, read_release
from accord.contracts.loading import MAX_CONTRACT_FILE_BYTES, ContractFileError, validate_model
from accord.contracts.tools import ToolContract

SPECS_IN_REPO: Final = "contracts/accord/contracts/specs"  # the framework's own folder
REGISTRY_SNAPSHOT: Final = "registry.json"
GIT_TIMEOUT_SECONDS: Final = 30


@dataclass
class ContractSet:
    """The contracts of one side, by contract id, and the registry snapshot when there is one."""

    label: str
    contracts: dict[str, Contract] = field(default_factory=dict)
    registry: dict[str, Any] | None = None
    # Each contract's YAML as it was read, by contract id: a release baseline keeps the text,
    # not a re-rendering of the model (accord.contracts.evolution.baseline).
    texts: dict[str, str] = field(default_factory=dict)


def _source_error(label: str, problem: str) -> AccordError:
    return AccordError(ErrorCode.INVALID_INPUT, f"{label}: {problem}", {"source": label})


def _parse(text: str, where: str, *, strict: bool) -> Contract | None:
    """The contract in one YAML document; None for YAML that is no contract (unless strict)."""
    if len(text.encode("utf-8")) > MAX_CONTRACT_FILE_BYTES:
        raise ContractFileError(where, "<file>", f"larger than {MAX_CONTRACT_FILE_BYTES} bytes")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        raise ContractFileError(where, "<document>", "is not valid YAML") from None
    if isinstance(data, dict) and "skills" in data:
        return validate_model(AgentContract, data, where)
    if isinstance(data, dict) and "side_effect" in data:
        return validate_model(ToolContract, data, where)
    if strict:
        raise ContractFileError(where, "<document>", "is neither an agent nor a tool contract")
    return None


def _add(found: ContractSet, text: str, where: str, *, strict: bool) -> None:
    contract = _parse(text, where, strict=strict)
    if contract is None:
        return
    cid = contract_id(contract)
    if cid in found.contracts:
        raise _source_error(found.label, f"{cid} is defined twice (again in {where})")
    found.contracts[cid] = contract
    found.texts[cid] = text


def _read_registry(text: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise ContractFileError(where, "<document>", "is not valid JSON") from None
    if not isinstance(data, dict):
        raise ContractFileError(where, "<document>", "must be an object")
    return data


def add_folder(found: ContractSet, folder: Path) -> None:
    """Every contract under ``folder`` (YAML that is no contract is skipped), and its snapshot."""
    for path in sorted(folder.rglob("*.yaml")):
        _add(found, path.read_text(encoding="utf-8"), str(path), strict=False)
    snapshot = folder / REGISTRY_SNAPSHOT
    if snapshot.is_file():
        found.registry = _read_registry(snapshot.read_text(encoding="utf-8"), str(snapshot))


def _from_folder(folder: Path, label: str, folders: Sequence[str]) -> ContractSet:
    found = ContractSet(label=label)
    inside = [folder / f for f in folders if (folder / f).is_dir()]
    for each in inside or [folder]:  # a worktree's contract folders, or the folder itself
        add_folder(found, each)
    return found


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT_SECONDS,
        check=False,
    )


def _is_revision(repo: Path, spec: str) -> bool:
    if spec.startswith("-"):  # never let a spec become a git option
        return False
    return _git(repo, "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}").returncode == 0


def _from_revision(repo: Path, revision: str, folders: Sequence[str]) -> ContractSet:
    listing = _git(repo, "ls-tree", "-r", "--name-only", revision, "--", *folders)
    if listing.returncode != 0:
        raise _source_error(revision, "git ls-tree failed")
    found = ContractSet(label=revision)
    snapshots = {f"{f}/{REGISTRY_SNAPSHOT}" for f in folders}
    for name in listing.stdout.splitlines():
        if not (name.endswith(".yaml") or name in snapshots):
            continue
        shown = _git(repo, "show", f"{revision}:{name}")
        if shown.returncode != 0:
            raise _source_error(revision, f"git show {name} failed")
        where = f"{revision}:{name}"
        if name.endswith(".json"):
            found.registry = _read_registry(shown.stdout, where)
        else:
            _add(found, shown.stdout, where, strict=False)
    if not found.contracts:
        where = ", ".join(folders)
        raise _source_error(revision, f"no contracts under {where} at this revision")
    return found


def load_side(
    spec: str, repo: Path | None = None, folders: Sequence[str] = (SPECS_IN_REPO,)
) -> ContractSet:
    """The contracts ``spec`` names: a contract file, a folder, or a git revision of ``repo``
    (``folders``: where a worktree or a revision keeps its contracts, relative to its root)."""
    path = Path(spec)
    if path.is_file():
        found = ContractSet(label=spec)
        _add(found, path.read_text(encoding="utf-8"), spec, strict=True)
        return found
    if path.is_dir():
        # A recorded release is labelled by its tag (v0.2.0), which is what a list of intended
        # breaks names in `against`, wherever the folder is.
        record = path / RELEASE_FILE
        label = read_release(record).tag if record.is_file() else spec
        return _from_folder(path, label, folders)
    where = repo or Path.cwd()
    if _is_revision(where, spec):
        return _from_revision(where, spec, folders)
    raise _source_error(spec, "is neither a contract file, a folder nor a git revision")
