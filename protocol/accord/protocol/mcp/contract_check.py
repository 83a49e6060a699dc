"""Does a live MCP server serve its tools as their contracts say?

For each contracted tool the server's ``tools/list`` entry must exist, its ``inputSchema`` and
``outputSchema`` must equal the contract's, and its annotations must equal
``contract.mcp_annotations()``. Schemas are compared after dropping documentation-only keywords
and sorting ``required`` and ``type`` lists (accord.contracts.schema_compare, the comparison the
contract test kit makes too), so wording may differ but no constraint may. Absent annotation
hints take the MCP spec's defaults (readOnly false, destructive true, idempotent false,
openWorld true); an absent title contradicts nothing.

Every difference is a :class:`ServerFinding`; a non-empty list becomes one CONTRACT_VIOLATION.

Before the schemas, the versions (:func:`check_versions`): a tool whose ``tools/list`` entry
states the contract versions it serves (``_meta[CONTRACT_VERSIONS_META_KEY]``) and none of
the contract's major is VERSION_UNSUPPORTED naming both, by the rule A2A clients apply
(accord.contracts.versions). A tool that states none (an older or foreign server) is judged by
its schemas alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

import mcp_types as types
from pydantic import BaseModel, ConfigDict

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import CONTRACT_VERSIONS_META_KEY
from accord.contracts.schema_compare import schema_difference
from accord.contracts.tools import ToolContract, shipped_tool_contracts
from accord.contracts.versions import require_served

if TYPE_CHECKING:
    from accord.protocol.mcp.config import ServerSpec
    from accord.protocol.mcp.credentials import ToolCredential

# MCP spec defaults of ToolAnnotations hints, used when a server leaves a hint out.
_HINT_DEFAULTS: Final[Mapping[str, bool]] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}


class FindingKind(StrEnum):
    MISSING_TOOL = "missing_tool"
    INPUT_SCHEMA = "input_schema"
    OUTPUT_SCHEMA = "output_schema"
    ANNOTATION = "annotation"
    NO_CONTRACTED_TOOLS = "no_contracted_tools"


class ServerFinding(BaseModel):
    """One way a server departs from a contract."""

    model_config = ConfigDict(frozen=True)

    server: str
    tool: str | None
    kind: FindingKind
    message: str
    where: str = ""
    expected: Any = None
    actual: Any = None


class CheckReport(BaseModel):
    """The result of checking one server: what it lists, which contracts applied, findings."""

    model_config = ConfigDict(frozen=True)

    server: str
    target: str
    listed: list[str]
    checked: list[str]
    findings: list[ServerFinding]

    @property
    def ok(self) -> bool:
        return not self.findings


def tool_annotations(tool: types.Tool) -> dict[str, Any]:
    """The annotations a listed tool declares, in wire names, with spec defaults filled in."""
    raw = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
    out: dict[str, Any] = {k: raw.get(k, default) for k, default in _HINT_DEFAULTS.items()}
    title = raw.get("title") or tool.title
    if title is not None:
        out["title"] = title
    return out


def stated_versions(tool: types.Tool) -> list[str] | None:
    """The contract versions a listed tool says it serves, or None when it says nothing (a
    value that is not a list of strings says nothing either: there is no version to hold it
    to, and its schemas are still checked)."""
    stated = (tool.meta or {}).get(CONTRACT_VERSIONS_META_KEY)
    if isinstance(stated, list) and all(isinstance(v, str) for v in stated):
        return [str(v) for v in stated]
    return None


def check_versions(
    server: str, listed: Iterable[types.Tool], contracts: Sequence[ToolContract]
) -> None:
    """VERSION_UNSUPPORTED for the first contracted tool that serves no version of the major
    its contract has (``server`` and the tool named in the details)."""
    by_name = {tool.name: tool for tool in listed}
    for contract in contracts:
        tool = by_name.get(contract.name)
        stated = stated_versions(tool) if tool is not None else None
        if stated is None:
            continue
        try:
            require_served(contract.name, contract.version, stated)
        except AccordError as refused:
            raise AccordError(
                refused.code,
                f"tool server {server!r}: {refused.message}",
                {**refused.details, "server": server},
            ) from None


def check_tools(
    server: str, listed: Iterable[types.Tool], contracts: Sequence[ToolContract]
) -> list[ServerFinding]:
    """Every departure of ``listed`` from ``contracts`` (tools without a contract are ignored)."""
    by_name = {tool.name: tool for tool in listed}
    findings: list[ServerFinding] = []
    for contract in contracts:
        tool = by_name.get(contract.name)
        if tool is None:
            findings.append(
                ServerFinding(
                    server=server,
                    tool=contract.name,
                    kind=FindingKind.MISSING_TOOL,
                    message="the server does not list this tool",
                )
            )
            continue
        for kind, declared, served in (
            (FindingKind.INPUT_SCHEMA, contract.input_schema, tool.input_schema),
            (FindingKind.OUTPUT_SCHEMA, contract.output_schema, tool.output_schema),
        ):
            diff = schema_difference(declared, served)
            if diff is not None:
                where, want, got = diff
                findings.append(
                    ServerFinding(
                        server=server,
                        tool=contract.name,
                        kind=kind,
                        where=where,
                        expected=want,
                        actual=got,
                        message=f"{kind.value.replace('_', ' ')} differs at {where}",
                    )
                )
        findings.extend(_annotation_findings(server, contract, tool))
    return findings


def _annotation_findings(
    server: str, contract: ToolContract, tool: types.Tool
) -> list[ServerFinding]:
    served = tool_annotations(tool)
    out: list[ServerFinding] = []
    for key, want in contract.mcp_annotations().items():
        if key == "title" and "title" not in served:
            continue  # a server that gives no title contradicts nothing
        got = served.get(key)
        if got != want:
            out.append(
                ServerFinding(
                    server=server,
                    tool=contract.name,
                    kind=FindingKind.ANNOTATION,
                    where=key,
                    expected=want,
                    actual=got,
                    message=f"annotation {key} is {got!r}, the contract says {want!r}",
                )
            )
    return out


def violation(server: str, findings: Sequence[ServerFinding]) -> AccordError:
    """One CONTRACT_VIOLATION carrying every finding (readable message, structured details)."""
    lines = [f"{f.tool or '-'}: {f.message}" for f in findings]
    return AccordError(
        ErrorCode.CONTRACT_VIOLATION,
        f"tool server {server!r} breaks its contract: " + "; ".join(lines),
        {"server": server, "findings": [f.model_dump(mode="json") for f in findings]},
    )


def default_contracts(listed: Iterable[types.Tool]) -> list[ToolContract]:
    """The shipped contracts whose tool names the server lists."""
    shipped = shipped_tool_contracts()
    return [shipped[t.name] for t in listed if t.name in shipped]


async def check_server(
    spec: ServerSpec, *, timeout_s: float = 10.0, credential: ToolCredential | None = None
) -> CheckReport:
    """Connect to a live server, list its tools and check them against ``spec.contracts``.

    With no contracts in ``spec``, the shipped contracts whose names the server lists are used;
    a server that lists none of them is a violation ("no contracted tools"). Transport failures
    raise AccordError (UNAVAILABLE, RETRYABLE_TIMEOUT); findings are returned, not raised.
    """
    # Imported here: the client imports this module to check servers at connect time.
    from accord.protocol.mcp.client import list_server_tools

    listed = await list_server_tools(spec, timeout_s=timeout_s, credential=credential)
    contracts = list(spec.contracts) or default_contracts(listed)
    findings = check_tools(spec.name, listed, contracts)
    if not contracts:
        findings.append(
            ServerFinding(
                server=spec.name,
                tool=None,
                kind=FindingKind.NO_CONTRACTED_TOOLS,
                message="no contracted tools: the server lists none of the "
                "shipped tools and no contract was given",
            )
        )
    return CheckReport(
        server=spec.name,
        target=spec.target,
        listed=[t.name for t in listed],
        checked=[c.name for c in contracts],
        findings=findings,
    )
