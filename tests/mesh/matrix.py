"""The compatibility matrix: which client ran against which service, at which contract version,
and what came of it. docs/compatibility.md is rendered from these records, never by hand.

Every mesh and interop test that drives a service wraps its work in :func:`cell`, which writes
one JSON record per (service, client) under the results directory (``ACCORD_MATRIX_RESULTS``,
default ``.accord/matrix-results``): pass when the block ends normally, skip or xfail with the
reason, fail on anything else. The contract versions in a record are the ones the running
service declared (its Agent Card, or the shipped contracts of the tools it listed).

A second dimension is the contract version: :func:`version_cell` records one client built
against one version of a peer's contract, driven against the peer serving others
(tests/mesh/test_contract_versions.py), under ``versions/`` of the results directory; the doc
renders them as their own table.

``python -m tests.mesh.matrix`` renders the latest record of every cell into the doc;
tests/mesh/test_matrix.py re-renders it from the records of its own session and checks the
committed doc against them (``make matrix`` runs the producing tests and writes the doc).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Final, TypeVar

import pytest

ROOT: Final = Path(__file__).resolve().parents[2]
DOC: Final = ROOT / "docs" / "compatibility.md"
RESULTS_ENV: Final = "ACCORD_MATRIX_RESULTS"
RUN_ENV: Final = "ACCORD_TEST_RUN_ID"
# One run: `make unit` runs the suite on several worker processes and then the run_summary
# tests in a second session, so it names the run; a plain pytest session is a run of its own.
RUN_ID: Final = os.environ.get(RUN_ENV) or uuid.uuid4().hex

SERVICES: Final = ("orchestrator", "policy", "risk", "commerce", "payments")
CLIENTS: Final = (
    "kit",
    "python",
    "javascript",
    "curl",
    "a2a-proof",
    "mcp-inspector",
    "mcp-conformance",
)
# The cells the suite produces; test_matrix checks the doc has exactly these.
EXPECTED: Final[Mapping[str, tuple[str, ...]]] = {
    "orchestrator": ("kit", "python", "javascript", "curl", "a2a-proof"),
    "policy": ("kit", "python", "a2a-proof"),
    "risk": ("kit", "python", "a2a-proof"),
    "commerce": ("kit", "python", "mcp-inspector", "mcp-conformance"),
    "payments": ("kit", "python", "mcp-inspector", "mcp-conformance"),
}
# Where each client's cells come from (shown in the doc so a reader can rerun one).
SOURCES: Final[Mapping[str, str]] = {
    "kit": "tests/mesh/test_kit_mesh.py",
    "python": "tests/interop/test_refund_python.py",
    "javascript": "tests/interop/test_refund_js.py",
    "curl": "tests/interop/test_refund_curl.py",
    "a2a-proof": "tests/interop/test_a2a_proof.py",
    "mcp-inspector": "tests/interop/test_mcp_conformance.py",
    "mcp-conformance": "tests/interop/test_mcp_conformance.py",
}
MARK: Final = {"pass": "pass", "fail": "**FAIL**", "skip": "skip", "xfail": "xfail"}
VERSIONS_DIR: Final = "versions"
VERSIONS_SOURCE: Final = "tests/mesh/test_contract_versions.py"
# (service, versions it serves) of the contract-version table; test_matrix checks the doc.
EXPECTED_VERSIONS: Final = (("policy", "1.3.0"), ("policy", "2.0.0"), ("policy", "2.0.0, 1.0.0"))


class Result(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    XFAIL = "xfail"


@dataclass(frozen=True)
class Record:
    service: str
    client: str
    client_version: str
    contract: str  # the Accord contract version the service declares
    service_contract: str  # e.g. "orchestrator 1.0.0" or "orders.lookup 1.0.0, ..."
    result: Result
    note: str
    run: str

    @property
    def key(self) -> tuple[str, str]:
        return self.service, self.client


@dataclass(frozen=True)
class VersionRecord:
    service: str
    serves: str  # the contract versions the service's card stated, e.g. "2.0.0, 1.0.0"
    client: str  # e.g. "orchestrator"
    built_against: str  # e.g. "policy-check 1.1.0"
    expected: str  # what the mixed mesh must do: "refund works", "refused: VERSION_UNSUPPORTED"
    result: Result
    note: str
    run: str

    @property
    def key(self) -> tuple[str, str]:
        return self.service, self.serves


def results_dir() -> Path:
    return Path(os.environ.get(RESULTS_ENV) or ROOT / ".accord" / "matrix-results")


R = TypeVar("R", Record, VersionRecord)


def _write_cell(d: Path, name: str, record: Record | VersionRecord) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{name}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(record), indent=1, sort_keys=True) + "\n")
    tmp.replace(path)  # one cell, latest run wins; readers never see half a file
    return path


def _load_cells(d: Path, kind: type[R]) -> list[R]:
    if not d.is_dir():
        return []
    records = []
    for path in sorted(d.glob("*--*.json")):
        raw = json.loads(path.read_text())
        raw["result"] = Result(raw["result"])
        records.append(kind(**raw))
    return records


def write(record: Record, directory: Path | None = None) -> Path:
    return _write_cell(directory or results_dir(), f"{record.service}--{record.client}", record)


def load(directory: Path | None = None) -> list[Record]:
    return _load_cells(directory or results_dir(), Record)


def write_version(record: VersionRecord, directory: Path | None = None) -> Path:
    name = f"{record.service}--{record.serves.replace(', ', '+')}"
    return _write_cell((directory or results_dir()) / VERSIONS_DIR, name, record)


def load_versions(directory: Path | None = None) -> list[VersionRecord]:
    return _load_cells((directory or results_dir()) / VERSIONS_DIR, VersionRecord)


@contextmanager
def version_cell(
    service: str, serves: str, *, client: str, built_against: str, expected: str, note: str = ""
) -> Iterator[None]:
    """Record the block's outcome as the (service, served versions) cell of this run."""
    if (service, serves) not in EXPECTED_VERSIONS:
        raise ValueError(f"({service}, {serves}) is no version cell; add it to EXPECTED_VERSIONS")

    def save(result: Result) -> None:
        write_version(
            VersionRecord(service, serves, client, built_against, expected, result, note, RUN_ID)
        )

    try:
        yield
    except BaseException:
        save(Result.FAIL)
        raise
    else:
        save(Result.PASS)


@contextmanager
def cell(
    service: str,
    client: str,
    *,
    client_version: str,
    contract: str,
    service_contract: str,
    note: str = "",
) -> Iterator[None]:
    """Record the block's outcome as the (service, client) cell of this run."""
    if service not in EXPECTED or client not in EXPECTED[service]:
        raise ValueError(f"({service}, {client}) is not a cell of the matrix; add it to EXPECTED")

    def save(result: Result, why: str = "") -> None:
        text = f"{note}; {why}" if note and why else note or why
        write(
            Record(
                service, client, client_version, contract, service_contract, result, text, RUN_ID
            )
        )

    try:
        yield
    except pytest.skip.Exception as skipped:
        save(Result.SKIP, str(skipped.msg or ""))
        raise
    except pytest.xfail.Exception as xfailed:
        save(Result.XFAIL, str(xfailed.msg or ""))
        raise
    except BaseException as error:
        save(Result.FAIL, type(error).__name__)
        raise
    else:
        save(Result.PASS)


def render(records: Iterable[Record], versions: Iterable[VersionRecord] = ()) -> str:
    """The doc: a grid of results, then one row per cell with versions and notes, then the
    contract-version cells."""
    cells = {r.key: r for r in records}
    lines = [
        "# Compatibility matrix",
        "",
        "Generated from the test runs by `make matrix` (tests/mesh/matrix.py); do not edit by",
        "hand. Each cell is one client driven against one service of a running mesh (five real",
        "processes on 127.0.0.1). The versions are the ones the running service declared: its",
        "Agent Card's contract extension, or the shipped contracts of the tools it listed.",
        "Divergences of the external suites are explained in docs/conformance.md. An empty",
        "cell is a pair this suite does not drive (the MCP checkers speak to tool servers only,",
        "a2a-proof to agents only).",
        "",
        "| service | " + " | ".join(CLIENTS) + " |",
        "|---|" + "---|" * len(CLIENTS),
    ]
    for service in SERVICES:
        row = []
        for client in CLIENTS:
            r = cells.get((service, client))
            row.append(MARK[r.result.value] if r else "")
        lines.append(f"| {service} | " + " | ".join(row) + " |")
    lines += [
        "",
        "| service | contract | service contract | client | client version | result | notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for service in SERVICES:
        for client in CLIENTS:
            r = cells.get((service, client))
            if r is None:
                continue
            lines.append(
                f"| {service} | {r.contract} | {r.service_contract} | {client} | "
                f"{r.client_version} | {MARK[r.result.value]} | {_cell_text(r.note)} |"
            )
    lines += ["", "Where each client's cells come from:", ""]
    for client in CLIENTS:
        lines.append(f"- **{client}**: `{SOURCES[client]}`")
    lines += render_versions(versions)
    return "\n".join(lines) + "\n"


def render_versions(records: Iterable[VersionRecord]) -> list[str]:
    """The contract-version section: a client built against one version, a service serving
    others (a pass is the expected outcome, a refusal included)."""
    cells = {r.key: r for r in records}
    lines = [
        "",
        "## Contract versions",
        "",
        "A client built against one version of a peer's contract, in a running mesh whose peer",
        "serves other versions (ACCORD_CONTRACTS_DIR, docs/contract-evolution.md). *Expected* is",
        "what the mixed mesh must do; *result* says whether it did. Cells come from",
        f"`{VERSIONS_SOURCE}`.",
        "",
        "| service | serves | client | built against | expected | result | notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for key in EXPECTED_VERSIONS:
        r = cells.get(key)
        if r is None:
            continue
        lines.append(
            f"| {r.service} | {r.serves} | {r.client} | {r.built_against} | {r.expected} | "
            f"{MARK[r.result.value]} | {_cell_text(r.note)} |"
        )
    return lines


def _cell_text(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def parse_rows(doc: str) -> dict[tuple[str, str], dict[str, str]]:
    """The detail rows of a rendered doc, keyed by (service, client)."""
    rows: dict[tuple[str, str], dict[str, str]] = {}
    names = ("service", "contract", "service_contract", "client", "client_version", "result")
    for line in doc.splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split(" | ")]
        if len(parts) == len(names) + 1 and parts[0] in SERVICES and parts[3] in CLIENTS:
            rows[(parts[0], parts[3])] = dict(zip(names, parts, strict=False))
    return rows


def parse_version_rows(doc: str) -> dict[tuple[str, str], dict[str, str]]:
    """The rows of the contract-version section, keyed by (service, serves)."""
    section = doc.split("## Contract versions", 1)[1] if "## Contract versions" in doc else ""
    names = ("service", "serves", "client", "built_against", "expected", "result", "notes")
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for line in section.splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split(" | ")]
        if len(parts) == len(names) and parts[0] in SERVICES:
            rows[(parts[0], parts[1])] = dict(zip(names, parts, strict=True))
    return rows


def main(argv: list[str]) -> int:
    records = load()
    if not records:
        print(f"no results under {results_dir()}: run `make matrix`", file=sys.stderr)
        return 1
    DOC.write_text(render(records, load_versions()))
    print(f"wrote {DOC} from {len(records)} cells")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
