"""The interop matrix: client language x service language, rendered into docs/interop.md from
the records of one run (a cell is green only when its test ran in this run).

Two sources of records, both written by :mod:`tests.mesh.matrix`'s machinery:

- the compatibility matrix's cells of the orchestrator driven by the Python, JavaScript and curl
  clients (tests/interop/test_refund_python.py, test_refund_js.py, test_refund_curl.py);
- the cells this module's :func:`cell` records under ``interop/`` of the results directory: the
  Go and Java clients against the orchestrator, and the orchestrator's Python clients against the
  members written in Go, TypeScript and Java (each test says which cell it fills).

``make interop`` runs every producing test and tests/mesh/test_interop_matrix.py, which renders
the doc from the records of its own run (ACCORD_MATRIX_WRITE=1 writes it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from accord.contracts.keys import CONTRACT_VERSION
from tests.mesh import matrix

DOC: Final = matrix.ROOT / "docs" / "interop.md"
SUBDIR: Final = "interop"

CLIENTS: Final = ("Python", "JavaScript", "Go", "Java", "curl")
SERVICES: Final = ("Python", "Go", "TypeScript", "Java")
# The service of each language column, as the mesh runs it.
SERVICE_NAMES: Final[Mapping[str, str]] = {
    "Python": "orchestrator (`accord serve`)",
    "Go": "policy-check (agents/go/policy-check)",
    "TypeScript": "risk-check (agents/ts/risk-check)",
    "Java": "commerce (tools/java/commerce, MCP)",
}


@dataclass(frozen=True)
class Source:
    test: str
    what: str
    ci: str  # "full" (every client of the column) or "diagonal" (one representative client)


# Every cell this suite drives, and where it comes from. The orchestrator column is full: every
# client language drives the same refund there. Each member column is one representative cell:
# the orchestrator's Python clients (A2A to the agents, MCP to the tool server) in a live refund
# with that member in place of the Python one. An empty cell is a pair nothing drives.
CELLS: Final[Mapping[tuple[str, str], Source]] = {
    ("Python", "Python"): Source(
        "tests/interop/test_refund_python.py",
        "accord.protocol's A2A client over JSON-RPC and HTTP+JSON: ask, refused self-approval, "
        "approve, receipt; O-1005 evidence answered in the same task",
        "full",
    ),
    ("JavaScript", "Python"): Source(
        "tests/interop/test_refund_js.py",
        "@a2a-js/sdk: the same conversation as Python's, every payload ajv-valid against the "
        "schemas the card names",
        "full",
    ),
    ("Go", "Python"): Source(
        "tests/interop/test_refund_go.py",
        "a2a-go v2 client (tests/interop/go): ask, refused self-approval (typed "
        "PERMISSION_DENIED), approve, receipt; O-1005 evidence answered in the same task",
        "full",
    ),
    ("Java", "Python"): Source(
        "tests/interop/test_refund_java.py",
        "java.net.http + Jackson on A2A 1.0 JSON-RPC (tests/interop/java): ask, refused "
        "self-approval (typed PERMISSION_DENIED), approve, receipt; O-1005 evidence answered "
        "in the same task",
        "full",
    ),
    ("curl", "Python"): Source(
        "tests/interop/test_refund_curl.py",
        "docs/curl-refund-approval.sh as shipped (ask, approve, read the receipt), then "
        "docs/curl-refund-answer.sh (O-1005 evidence answered in the same task)",
        "full",
    ),
    ("Python", "Go"): Source(
        "tests/interop/test_go_member_refund.py",
        "the orchestrator's A2A client to the Go policy-check in a live refund",
        "diagonal",
    ),
    ("Python", "TypeScript"): Source(
        "tests/interop/test_ts_member_mesh.py",
        "the orchestrator's A2A client to the TypeScript risk-check in a live refund",
        "diagonal",
    ),
    ("Python", "Java"): Source(
        "tests/interop/test_java_member.py",
        "the orchestrator's MCP client to the Java commerce in a live refund",
        "diagonal",
    ),
}
# The compatibility matrix's (service, client) cells that are cells of this one.
FROM_COMPATIBILITY: Final[Mapping[tuple[str, str], tuple[str, str]]] = {
    ("orchestrator", "python"): ("Python", "Python"),
    ("orchestrator", "javascript"): ("JavaScript", "Python"),
    ("orchestrator", "curl"): ("curl", "Python"),
}
OWN: Final = frozenset(CELLS) - frozenset(FROM_COMPATIBILITY.values())
NOT_RUN: Final = "not run"


def results_dir() -> Path:
    return matrix.results_dir() / SUBDIR


@contextmanager
def cell(
    client: str, service: str, *, client_version: str, service_contract: str, note: str = ""
) -> Iterator[None]:
    """Record the block's outcome as the (client language, service language) cell of this run."""
    if (client, service) not in OWN:
        raise ValueError(f"({client}, {service}) is no cell this module records; see CELLS")

    def save(result: matrix.Result, why: str = "") -> None:
        text = f"{note}; {why}" if note and why else note or why
        record = matrix.Record(
            service,
            client,
            client_version,
            CONTRACT_VERSION,
            service_contract,
            result,
            text,
            matrix.RUN_ID,
        )
        matrix.write(record, results_dir())

    try:
        yield
    except pytest.skip.Exception as skipped:
        save(matrix.Result.SKIP, str(skipped.msg or ""))
        raise
    except BaseException as error:
        save(matrix.Result.FAIL, type(error).__name__)
        raise
    else:
        save(matrix.Result.PASS)


@dataclass(frozen=True)
class Cell:
    client: str
    service: str
    client_version: str
    service_contract: str
    result: matrix.Result
    note: str


def this_run(run: str = matrix.RUN_ID) -> dict[tuple[str, str], Cell]:
    """The cells recorded by ``run``: this module's, and the compatibility matrix's that are
    cells here. A record of an earlier run is no cell of this one."""
    cells: dict[tuple[str, str], Cell] = {}
    for r in matrix.load():
        key = FROM_COMPATIBILITY.get(r.key)
        if key is not None and r.run == run:
            cells[key] = Cell(*key, r.client_version, r.service_contract, r.result, r.note)
    for r in matrix.load(results_dir()):
        if (r.client, r.service) in OWN and r.run == run:
            key = (r.client, r.service)
            cells[key] = Cell(*key, r.client_version, r.service_contract, r.result, r.note)
    return cells


def render(cells: Mapping[tuple[str, str], Cell]) -> str:
    lines = [
        "# Interop matrix",
        "",
        "Generated by `make interop` (tests/mesh/interop_matrix.py) from the records of one test",
        "run; do not edit by hand. Rows are the language of the client, columns the language of",
        "the service it drives in a running mesh of real processes on 127.0.0.1. A cell is",
        f"**pass** only when its test ran and passed in that run; *{NOT_RUN}* when it did not run",
        "(a record of an earlier run does not count). An empty cell is a pair nothing drives.",
        "How the Go and Java clients are built, and the SDK gaps they work around:",
        "docs/clients-go-java.md.",
        "",
        "| client \\ service | " + " | ".join(SERVICES) + " |",
        "|---|" + "---|" * len(SERVICES),
    ]
    for client in CLIENTS:
        row = []
        for service in SERVICES:
            if (client, service) not in CELLS:
                row.append("")
                continue
            found = cells.get((client, service))
            row.append(matrix.MARK[found.result.value] if found else NOT_RUN)
        lines.append(f"| {client} | " + " | ".join(row) + " |")
    lines += ["", "The services of the columns:", ""]
    lines += [f"- **{s}**: {SERVICE_NAMES[s]}" for s in SERVICES]
    lines += [
        "",
        "## Cells",
        "",
        "| client | service | client version | service contract | CI | result | test | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (client, service), source in CELLS.items():
        found = cells.get((client, service))
        result = matrix.MARK[found.result.value] if found else NOT_RUN
        version = found.client_version if found else ""
        declared = found.service_contract if found else ""
        # What the cell drives, in this doc's words (a compatibility record's note is that
        # doc's); a failure or skip adds the recorded reason.
        why = found.note if found and found.result is not matrix.Result.PASS else ""
        note = _text(f"{source.what}; {why}" if why else source.what)
        lines.append(
            f"| {client} | {service} | {version} | {declared} | {source.ci} | {result} | "
            f"`{source.test}` | {note} |"
        )
    lines += [
        "",
        "## What runs in CI, and why",
        "",
        "- **Full: the orchestrator column.** The orchestrator (Python) is the service every",
        "  client drives, and a client costs one process against a mesh its test module starts",
        "  once: every client language runs the whole conversation there (ask for a large refund,",
        "  the customer's own approval refused, approve as an approver, read the receipt; a damage",
        "  claim answered in the same task; curl runs the shipped approval script).",
        "- **Diagonal: the member columns.** Building a member (go build, mvn package, tsc) and",
        "  starting a mesh around it is the expensive part, so each member's mesh test builds it",
        "  once for its module and drives it with one representative client: the orchestrator's",
        "  own Python clients, in a live refund with the member in place of the Python service.",
        "  The other languages reach the members only through the orchestrator (a customer never",
        "  calls policy-check or commerce directly), so a cell of a JavaScript, Go, Java or curl",
        "  client against a member would drive no path a user takes.",
        "- Builds: the Go client and the Java client are each built once per run (one test",
        "  module each); the Go build and module caches (GOCACHE, GOMODCACHE) and Maven's ~/.m2",
        "  make every later build of the same sources (a member's kit target, then its tests)",
        "  an incremental one, and no build downloads what the machine already holds.",
    ]
    return "\n".join(lines) + "\n"


def _text(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def parse_grid(doc: str) -> dict[tuple[str, str], str]:
    """The grid of a rendered doc: (client, service) -> mark, for the cells it lists."""
    grid: dict[tuple[str, str], str] = {}
    for line in doc.splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if len(parts) == len(SERVICES) + 1 and parts[0] in CLIENTS:
            for service, mark in zip(SERVICES, parts[1:], strict=True):
                if mark:
                    grid[(parts[0], service)] = mark
    return grid
