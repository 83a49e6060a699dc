"""The checks the kit runs against an MCP tool server, each tagged with a requirement ID.

The contracts that apply are the ``--contract`` files when given (every one must be listed),
otherwise Accord's shipped tool contracts of the tools the server lists.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any, Final

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import CONTRACT_VERSIONS_META_KEY, MCP_ERROR_META_KEY
from accord.contracts.schema_compare import schema_difference
from accord.contracts.tools import IDEMPOTENCY_FIELD, ToolContract
from accord.contracts.validation import schema_path
from accord.contracts.versions import compatible_served, major
from accord.kit.check import CheckList
from accord.kit.mcp_context import (
    Call,
    Challenge,
    MCPContext,
    mcp_session,
    unauthenticated,
)
from accord.kit.model import Skipped, Violation, trim
from accord.kit.probes import NO_PROBE

MCP_CHECKS: Final = CheckList[MCPContext]()
check = MCP_CHECKS
E = ErrorCode
REPLAYED: Final = "replayed"
# What a server on a bare MCP SDK does to put the code where clients read it (docs/porting.md
# "Tool errors"): its decorators answer with text only, so the handler returns the result.
BARE_SDK: Final = (
    f"to produce it, return the whole result from the tool handler: CallToolResult(isError="
    f'true, content=[a JSON text block {{"error": E}}], _meta={{"{MCP_ERROR_META_KEY}": E}}) '
    "with E = {code, retry, message} (mcp Python: the low-level Server's on_call_tool, or an "
    "MCPServer tool annotated -> Annotated[CallToolResult, Output]); raise ToolError and the "
    "SDK's own argument errors carry no code, so validate arguments against the contract's "
    "input schema in the handler"
)


def _expect_error(call: Call, code: ErrorCode, expected: str) -> None:
    if not call.is_error:
        raise Violation(
            f"{call.tool} ({call.label}) succeeded; expected {code.value}",
            sent=call.sent,
            received=call.received,
            expected=expected,
        )
    found = call.code
    if found != code.value:
        how = "" if found or call.protocol_error else f"; {BARE_SDK}"
        raise Violation(
            f"{call.tool} ({call.label}) failed with "
            f"{found or call.protocol_error or 'no code in _meta'}, not {code.value}{how}",
            sent=call.sent,
            received=call.received,
            expected=expected,
        )


# -- the listing -------------------------------------------------------------------------------


@check("TOOL-005", "every contracted tool is listed")
async def listed(ctx: MCPContext) -> None:
    if ctx.explicit:
        missing = sorted(set(ctx.contracts) - set(ctx.listed))
        if missing:
            raise Violation(f"tools/list lacks {missing}", received=sorted(ctx.listed))
    ctx.checked()


@check("TOOL-005", "listed input and output schemas equal the contract's")
async def schemas(ctx: MCPContext) -> None:
    for name, contract in ctx.checked().items():
        entry = ctx.listed[name]
        for wire, want in (
            ("inputSchema", contract.input_schema),
            ("outputSchema", contract.output_schema),
        ):
            diff = schema_difference(want, entry.get(wire))
            if diff is not None:
                where, declared, served = diff
                raise Violation(
                    f"{name}: {wire} differs from the contract at {where}: the contract has "
                    f"{trim(declared, 120)}, the server {trim(served, 120)} (documentation "
                    "keywords such as title and description are ignored)",
                    received=entry.get(wire),
                    expected=json.dumps(want)[:600],
                )


@check("TOOL-004", "annotations are derived from the contract")
async def annotations_derived(ctx: MCPContext) -> None:
    for name, contract in ctx.checked().items():
        got = ctx.listed[name].get("annotations") or {}
        want = contract.mcp_annotations()
        wrong = {k: got.get(k) for k, v in want.items() if k != "title" and got.get(k) != v}
        if wrong:
            raise Violation(
                f"{name}: annotations {wrong} differ from the derived "
                f"{ {k: want[k] for k in wrong} }",
                received=got,
                expected=json.dumps(want),
            )


def _stated(ctx: MCPContext) -> list[str]:
    """``TOOL VERSION`` for every version each contracted tool states in tools/list."""
    out = []
    for name in ctx.checked():
        meta = ctx.listed[name].get("_meta")
        stated = meta.get(CONTRACT_VERSIONS_META_KEY) if isinstance(meta, Mapping) else None
        out += [f"{name} {v}" for v in stated] if isinstance(stated, list) else []
    if not out:
        raise Skipped(f"no contracted tool states {CONTRACT_VERSIONS_META_KEY} (an older server)")
    return out


@check.each("TOOL-013", "a stated contract version agrees with its contract", _stated)
async def version_stated(ctx: MCPContext, claim: str) -> None:
    name, version = claim.split(" ", 1)
    contract = ctx.checked()[name]
    try:
        same_major = major(version) == major(contract.version)
    except ValueError:
        raise Violation(f"{name} states {version!r}, which is no semantic version") from None
    if not same_major:
        raise Skipped(
            f"the kit holds {name} {contract.version}, no contract of {version}'s major: "
            "pass --contract FILE of that version"
        )
    entry = ctx.listed[name]
    if schema_difference(contract.input_schema, entry.get("inputSchema")) or schema_difference(
        contract.output_schema, entry.get("outputSchema")
    ):
        raise Violation(
            f"{name} states {version}, but its schemas are not those of {contract.version}",
            received={k: entry.get(k) for k in ("inputSchema", "outputSchema")},
        )


@check("TOOL-013", "every contracted tool states a version of its contract's major")
async def version_of_our_major(ctx: MCPContext) -> None:
    stated_any = False
    for name, contract in ctx.checked().items():
        meta = ctx.listed[name].get("_meta")
        stated = meta.get(CONTRACT_VERSIONS_META_KEY) if isinstance(meta, Mapping) else None
        if not isinstance(stated, list):
            continue
        stated_any = True
        if compatible_served(contract.version, [str(v) for v in stated]) is None:
            raise Violation(
                f"{name} states {stated}: a client built against {contract.version} "
                "refuses it (VERSION_UNSUPPORTED)",
                received=stated,
                expected=f"a version {major(contract.version)}.x",
            )
    if not stated_any:
        raise Skipped(f"no contracted tool states {CONTRACT_VERSIONS_META_KEY} (an older server)")


# -- calls ----------------------------------------------------------------------------------------


@check("TOOL-008", "successful output stays inside the declared output schema")
async def output_schema(ctx: MCPContext) -> None:
    probed = 0
    for name, contract in ctx.checked().items():
        try:
            call = await ctx.valid_call(name)
        except Skipped:
            continue  # refused to the kit's credential (ctx.refused says why)
        if call is None:
            continue
        probed += 1
        if call.is_error:
            raise Violation(
                f"{name}: the probe's valid call failed ({call.code or ''})",
                sent=call.sent,
                received=call.received,
                expected="a call with valid input succeeds (check the probe data)",
            )
        structured = (call.result or {}).get("structuredContent")
        error = next(iter(contract.output_validator().iter_errors(structured)), None)
        if error is not None:
            raise Violation(
                f"{name}: structuredContent breaks the output schema at "
                f"{schema_path(error)}: "
                f"{error.message}",
                sent=call.sent,
                received=call.received,
            )
    if not probed:
        raise ctx.nothing_probed(
            ctx.checked(), f"no probe with valid input for the tools: {NO_PROBE}"
        )


def _invalid_args(ctx: MCPContext, name: str) -> dict[str, Any] | None:
    explicit = ctx.args(ctx.probe(name).invalid)
    if explicit is not None:
        return explicit
    schema = ctx.contracts[name].input_schema
    return {} if schema.get("required") else None  # nothing given breaks "required"


async def _invalid_calls(ctx: MCPContext) -> list[Call]:
    async def make() -> list[Call]:
        calls = []
        for name in ctx.checked():
            args = _invalid_args(ctx, name)
            if args is not None:
                with contextlib.suppress(Skipped):  # refused to the kit's credential
                    calls.append(await ctx.call("invalid input", name, args))
        return calls

    return await ctx.memo("invalid", make)


@check("TOOL-009", "invalid input is INVALID_INPUT")
async def invalid_input(ctx: MCPContext) -> None:
    calls = await _invalid_calls(ctx)
    if not calls:
        raise ctx.nothing_probed(ctx.checked(), "no invalid-input probe applies to the tools")
    for call in calls:
        _expect_error(
            call,
            E.INVALID_INPUT,
            f"bad tool input is a tool error INVALID_INPUT under _meta[{MCP_ERROR_META_KEY!r}]",
        )


@check("TOOL-009", "an unknown or foreign resource is NOT_FOUND")
async def not_found(ctx: MCPContext) -> None:
    probed = 0
    for name in ctx.checked():
        args = ctx.args(ctx.probe(name).not_found)
        if args is None:
            continue
        try:
            call = await ctx.call("not found", name, args)
        except Skipped:
            continue
        probed += 1
        _expect_error(call, E.NOT_FOUND, "another customer's (or no) resource is NOT_FOUND")
    if not probed:
        raise ctx.nothing_probed(ctx.checked(), "no not-found probe applies to the tools")


@check("ERR-005", "tool errors carry the code in _meta, never in structuredContent")
async def error_shape(ctx: MCPContext) -> None:
    await _invalid_calls(ctx)
    errors = [c for c in ctx.calls if c.is_error]
    if not errors:
        raise Skipped("no tool error was observed")
    for call in errors:
        if call.result is None:
            raise Violation(
                f"{call.tool}: a JSON-RPC error instead of an isError result; {BARE_SDK}",
                sent=call.sent,
                received=call.received,
            )
        result = call.result
        if result.get("structuredContent") is not None:
            raise Violation(
                f"{call.tool}: an error result with structuredContent (clients validate it "
                f"against the output schema even on errors); {BARE_SDK}",
                sent=call.sent,
                received=result,
            )
        code = call.code
        if code is None or code not in E.__members__:
            raise Violation(
                f"{call.tool}: no contract code under _meta[{MCP_ERROR_META_KEY!r}]; {BARE_SDK}",
                sent=call.sent,
                received=result,
            )
        texts = [b.get("text") for b in result.get("content", []) if b.get("type") == "text"]
        try:
            json.loads(texts[0] if texts else "")
        except ValueError:
            raise Violation(
                f"{call.tool}: the error has no JSON text block", sent=call.sent, received=result
            ) from None


# -- write tools ----------------------------------------------------------------------------------


def _writes(ctx: MCPContext) -> dict[str, Any]:
    found = {n: c for n, c in ctx.checked().items() if c.is_write}
    if not found:
        raise Skipped("the server lists no contracted write tool")
    return found


@check("TOOL-007", "a write tool refuses a call without its idempotency key")
async def key_required(ctx: MCPContext) -> None:
    probed = 0
    for name in _writes(ctx):
        args = ctx.args(ctx.probe(name).valid)
        if args is None:
            continue
        args.pop(IDEMPOTENCY_FIELD, None)
        try:
            call = await ctx.call("no idempotency key", name, args)
        except Skipped:
            continue
        probed += 1
        if not call.is_error:
            raise Violation(
                f"{name} accepted a call without {IDEMPOTENCY_FIELD}",
                sent=call.sent,
                received=call.received,
            )
    if not probed:
        raise ctx.nothing_probed(_writes(ctx), f"no valid-input probe for the writes: {NO_PROBE}")


def _receipt(call: Call) -> Any:
    structured = dict((call.result or {}).get("structuredContent") or {})
    structured.pop(REPLAYED, None)
    return structured


@check("TOOL-006", "the same key twice has one effect and replays the receipt")
async def idempotent(ctx: MCPContext) -> None:
    probed = 0
    for name, contract in _writes(ctx).items():
        try:
            first = await ctx.valid_call(name)
        except Skipped:
            continue
        if first is None:
            continue
        probed += 1
        if first.is_error:
            raise Violation(
                f"{name}: the probe's first call failed ({first.code})",
                sent=first.sent,
                received=first.received,
                expected="the valid probe succeeds (an unused key, arguments the tool accepts)",
            )
        second = await ctx.call("same key again", name, first.arguments)
        if second.is_error:
            raise Violation(
                f"{name}: the repeated call failed ({second.code})",
                sent=second.sent,
                received=second.received,
            )
        if _receipt(first) != _receipt(second):
            raise Violation(
                f"{name}: the same key gave a different result (a second effect)",
                sent=second.sent,
                received={"first": first.result, "second": second.result},
            )
        props = contract.output_schema.get("properties", {})
        if REPLAYED in props:
            sc1 = (first.result or {}).get("structuredContent") or {}
            sc2 = (second.result or {}).get("structuredContent") or {}
            if sc1.get(REPLAYED) is not False or sc2.get(REPLAYED) is not True:
                raise Violation(
                    f"{name}: replayed is {sc1.get(REPLAYED)} then "
                    f"{sc2.get(REPLAYED)}, not false then true",
                    sent=second.sent,
                    received={"first": sc1, "second": sc2},
                )
    if not probed:
        raise ctx.nothing_probed(_writes(ctx), f"no valid-input probe for the writes: {NO_PROBE}")


@check("TOOL-006", "the same key with other arguments is IDEMPOTENCY_CONFLICT")
async def conflict(ctx: MCPContext) -> None:
    probed = 0
    for name in _writes(ctx):
        args = ctx.args(ctx.probe(name).conflict)
        if args is None:
            continue
        try:
            await ctx.valid_call(name)  # the key must have been used first
            call = await ctx.call("same key, other arguments", name, args)
        except Skipped:
            continue
        probed += 1
        _expect_error(
            call,
            E.IDEMPOTENCY_CONFLICT,
            "the same key with other arguments is IDEMPOTENCY_CONFLICT",
        )
    if not probed:
        raise ctx.nothing_probed(_writes(ctx), "no conflict probe for the write tools")


# -- who may call (the contract's access section) ---------------------------------------------


def judge_challenge(challenge: Challenge) -> None:
    """TOOL-010 on an observed answer to a request without a credential."""
    received = {"status": challenge.status, "www-authenticate": challenge.www_authenticate}
    if challenge.status != 401:
        raise Violation(
            f"a request without a credential got HTTP {challenge.status}, not 401",
            sent=challenge.sent,
            received=received,
            expected="HTTP 401 UNAUTHENTICATED: a tool server needs a verified principal",
        )
    if not challenge.www_authenticate.lower().startswith("bearer") or not challenge.metadata_url:
        raise Violation(
            'the 401 has no WWW-Authenticate: Bearer ... resource_metadata="<url>"',
            sent=challenge.sent,
            received=received,
            expected="WWW-Authenticate naming the protected-resource metadata (RFC 9728)",
        )
    document = challenge.metadata
    if document is None or not isinstance(document.get("resource"), str):
        raise Violation(
            f"the protected-resource metadata at {challenge.metadata_url} is not a JSON document "
            "with a resource",
            sent={"method": "GET", "url": challenge.metadata_url},
            received=document,
        )


@check("TOOL-010", "a request without a credential is 401 naming the resource metadata")
async def unauthenticated_refused(ctx: MCPContext) -> None:
    judge_challenge(await unauthenticated(ctx.endpoint, ctx.options.timeout_s))


def _with_access(ctx: MCPContext, writes_only: bool) -> dict[str, ToolContract]:
    found = {
        n: c
        for n, c in ctx.checked().items()
        if c.access is not None and (c.is_write or not writes_only)
    }
    if not found:
        raise Skipped("no listed tool's contract has an access section")
    return found


@check("TOOL-011", "a write tool refuses a principal its contract does not allow")
async def write_refuses_principal(ctx: MCPContext) -> None:
    other = ctx.options.other
    if not other.present:
        raise Skipped("needs a credential the write tools' contracts do not allow: --other-token")
    claims = other.claims()
    roles = claims.get("roles") or []
    scopes = str(claims.get("scope") or "").split()
    probed = 0
    writes = _with_access(ctx, writes_only=True)  # Skipped here, never inside the session
    async with mcp_session(ctx.endpoint, ctx.options, credential=other) as session:
        for name, contract in writes.items():
            args = ctx.args(ctx.probe(name).valid)
            assert contract.access is not None
            if args is None or contract.access.rule_for(
                frozenset(map(str, roles)), frozenset(scopes)
            ):
                continue  # no probe, or the other credential is one the contract allows
            probed += 1
            if IDEMPOTENCY_FIELD in args:
                args[IDEMPOTENCY_FIELD] = f"{args[IDEMPOTENCY_FIELD]}-denied"
            call = await ctx.call("principal not allowed", name, args, session=session)
            _expect_error(
                call,
                E.PERMISSION_DENIED,
                "a principal the contract's access does not allow is PERMISSION_DENIED",
            )
    if not probed:
        raise Skipped("the other credential is allowed by every write tool (or no probe)")


@check("TOOL-012", "a call about another customer than the verified one is PERMISSION_DENIED")
async def other_customer_refused(ctx: MCPContext) -> None:
    probed = 0
    for name, contract in _with_access(ctx, writes_only=False).items():
        assert contract.access is not None
        field_name = contract.access.customer_field
        args = ctx.args(ctx.probe(name).valid)
        if field_name is None or args is None or not isinstance(args.get(field_name), str):
            continue
        probed += 1
        if IDEMPOTENCY_FIELD in args:
            args[IDEMPOTENCY_FIELD] = f"{args[IDEMPOTENCY_FIELD]}-other"
        # The delegation (or the token) names one customer, the argument another.
        meta = ctx.delegation(name, {**args, field_name: f"{args[field_name]}0"})
        call = await ctx.call("another customer", name, args, meta=meta)
        _expect_error(
            call,
            E.PERMISSION_DENIED,
            "the customer comes from the verified call; an argument naming another is refused",
        )
    if not probed:
        raise Skipped("no valid-input probe for a tool with a customer field")
