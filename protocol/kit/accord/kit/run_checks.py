"""Run the kit: detect what each URL is, run its checks, collect one result per check.

    URL ── GET URL/.well-known/agent-card.json answers a card? ── yes ─> A2A checks
                                │ no
                                └─> MCP initialize at URL, then URL/mcp ─> MCP checks
                                      (401 naming resource metadata, no credential given:
                                       TOOL-010 only, the rest skipped)

A check that raises something the kit did not expect (the agent hung up, answered garbage) is a
failure of that check with the reason, never a crash of the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import httpx

from accord.contracts.errors import AccordError
from accord.kit.a2a_context import A2AContext
from accord.kit.a2a_wire import CARD_PATH, JSONRPC_BINDING, REST_BINDING, A2AWire
from accord.kit.check import Check
from accord.kit.checks_a2a import A2A_CHECKS
from accord.kit.checks_a2a_access import UNDECLARED  # noqa: F401 - registers its checks
from accord.kit.checks_a2a_schemas import skill_schemas_published  # noqa: F401 - registers
from accord.kit.checks_a2a_sends import card_idempotent_send  # noqa: F401 - registers
from accord.kit.checks_a2a_spending import reports_spending  # noqa: F401 - registers
from accord.kit.checks_mcp import MCP_CHECKS, judge_challenge, unauthenticated_refused
from accord.kit.mcp_context import (
    Challenge,
    MCPContext,
    contracts_for,
    list_tools,
    mcp_session,
    unauthenticated,
)
from accord.kit.model import (
    CheckResult,
    Report,
    Skipped,
    TargetKind,
    Verdict,
    Violation,
    trim,
)
from accord.kit.options import KitOptions
from accord.kit.origins import check_origin
from accord.kit.probes import new_run_token

C = TypeVar("C")
DETECT_REQUIREMENT = "AGENT-002"  # a target that answers neither way has no public card


def checks_for(kind: TargetKind) -> list[Check[Any]]:
    source: Sequence[Check[Any]] = (
        A2A_CHECKS.checks if kind is TargetKind.A2A else MCP_CHECKS.checks
    )
    return list(source)


async def fetch_card(client: httpx.AsyncClient, url: str) -> dict[str, Any] | None:
    try:
        response = await client.get(url.rstrip("/") + CARD_PATH)
        body = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    return body if isinstance(body, dict) and "name" in body else None


def mcp_candidates(url: str) -> list[str]:
    base = url.rstrip("/")
    return [base] if base.endswith("/mcp") else [base + "/mcp", base]


async def detect(url: str, options: KitOptions) -> TargetKind | None:
    """A2A when a card answers, MCP when an MCP server initializes, None otherwise."""
    async with httpx.AsyncClient(timeout=options.timeout_s) as client:
        if await fetch_card(client, url) is not None:
            return TargetKind.A2A
    for candidate in mcp_candidates(url):
        try:
            async with mcp_session(candidate, options):
                return TargetKind.MCP
        except Exception:
            if await _challenged(candidate, options) is not None:
                return TargetKind.MCP  # a protected MCP server: the kit has no credential for it
    return None


async def _challenged(endpoint: str, options: KitOptions) -> Challenge | None:
    """The endpoint's answer without a credential, when it is a 401 naming resource metadata."""
    try:
        challenge = await unauthenticated(endpoint, options.timeout_s)
    except Exception:
        return None
    return challenge if challenge.status == 401 and challenge.metadata_url else None


def _without_credential(
    url: str, challenge: Challenge, select: Callable[[Check[Any]], bool]
) -> list[CheckResult]:
    """A protected server and no credential to pass its gate: TOOL-010, the rest skipped."""
    results = []
    for check in (c for c in MCP_CHECKS.checks if select(c)):
        if check.run is unauthenticated_refused:
            try:
                judge_challenge(challenge)
                outcome, detail = Verdict.PASS, ""
            except Violation as v:
                outcome, detail = Verdict.FAIL, v.detail
        else:
            outcome, detail = Verdict.SKIP, "needs a credential: pass --token or --api-key"
        results.append(CheckResult(check.requirement, check.name, url, outcome, detail=detail))
    return results


async def _run_checks(
    target: str, checks: Sequence[Check[C]], ctx: C, options: KitOptions
) -> list[CheckResult]:
    results = []
    for check in checks:
        if check.expand is None:
            results.append(await run_one(target, check, ctx, options))
            continue
        try:
            each = check.expand(ctx)
        except Skipped as skipped:
            results.append(
                CheckResult(check.requirement, check.name, target, Verdict.SKIP, skipped.reason)
            )
            continue
        for one in each:  # one check per claimed thing, reported as such
            results.append(await run_one(target, one, ctx, options))
    return results


async def run_one(target: str, check: Check[C], ctx: C, options: KitOptions) -> CheckResult:
    def result(outcome: Verdict, **kw: str) -> CheckResult:
        return CheckResult(check.requirement, check.name, target, outcome, **kw)

    if check.requirement in options.skip:
        return result(Verdict.SKIP, detail="skipped by --skip")
    try:
        # Generous: a check makes a handful of calls, each bounded by the timeout.
        async with asyncio.timeout(options.timeout_s * 6):
            await check.run(ctx)
    except Violation as v:
        return result(
            Verdict.FAIL,
            detail=v.detail,
            sent=trim(v.sent),
            received=trim(v.received),
            expected=v.expected,
        )
    except Skipped as s:
        return result(Verdict.SKIP, detail=s.reason)
    except TimeoutError:
        return result(
            Verdict.FAIL,
            detail=f"no complete answer within the timeout ({options.timeout_s:g}s per call)",
        )
    except httpx.HTTPError as exc:
        return result(Verdict.FAIL, detail=f"HTTP failure: {type(exc).__name__}: {exc}")
    except Exception as exc:  # the target answered something the kit could not read
        return result(Verdict.FAIL, detail=f"unexpected answer: {type(exc).__name__}: {exc}")
    return result(Verdict.PASS)


async def run_a2a(
    url: str, options: KitOptions, select: Callable[[Check[Any]], bool] = lambda _: True
) -> list[CheckResult]:
    async with httpx.AsyncClient(timeout=options.timeout_s) as client:
        card = await fetch_card(client, url)
        if card is None:
            return [_unreachable(url, "no Agent Card at " + url.rstrip("/") + CARD_PATH)]
        rpc_url, rest_url = _interface(card, JSONRPC_BINDING) or url, _interface(card, REST_BINDING)
        refused = _foreign_interface(url, [rpc_url, rest_url])
        if refused is not None:  # before any check sends the credential there
            return [refused]
        wire = A2AWire(client, rpc_url, rest_url)
        ctx = A2AContext(url, options, wire, card, new_run_token())
        return await _run_checks(url, [c for c in A2A_CHECKS.checks if select(c)], ctx, options)


async def run_mcp(
    url: str, options: KitOptions, select: Callable[[Check[Any]], bool] = lambda _: True
) -> list[CheckResult]:
    last = "no answer"
    for candidate in mcp_candidates(url):
        results: list[CheckResult] | None = None
        try:
            async with mcp_session(candidate, options) as session:
                contracts, explicit = contracts_for(options)
                ctx = MCPContext(
                    url,
                    options,
                    session,
                    new_run_token(),
                    await list_tools(session),
                    contracts,
                    explicit,
                    endpoint=candidate,
                )
                checks = [c for c in MCP_CHECKS.checks if select(c)]
                results = await _run_checks(url, checks, ctx, options)
        except Exception as exc:
            last = f"{type(exc).__name__}: {exc}"
            challenge = await _challenged(candidate, options) if results is None else None
            if challenge is not None and not options.credential.present:
                return _without_credential(url, challenge, select)
        if results is not None:  # a fault while closing the session does not lose them
            return results
    return [_unreachable(url, f"no MCP server answered at {mcp_candidates(url)}: {last}")]


async def run_target(
    url: str, options: KitOptions, select: Callable[[Check[Any]], bool] = lambda _: True
) -> list[CheckResult]:
    kind = await detect(url, options)
    if kind is TargetKind.A2A:
        return await run_a2a(url, options, select)
    if kind is TargetKind.MCP:
        return await run_mcp(url, options, select)
    return [_unreachable(url, "neither an Agent Card nor an MCP server answered")]


async def run_kit(urls: Sequence[str], options: KitOptions) -> Report:
    """Every check against every URL, one after the other (targets may share state)."""
    report = Report()
    for url in urls:
        report.results.extend(await run_target(url, options))
    return report


def _unreachable(url: str, detail: str) -> CheckResult:
    return CheckResult(
        DETECT_REQUIREMENT,
        "target answers as an A2A agent or MCP server",
        url,
        Verdict.FAIL,
        detail=detail,
    )


def _foreign_interface(url: str, interfaces: Sequence[str | None]) -> CheckResult | None:
    """A FAIL when the card sends the kit (and its credential) to another origin."""
    for interface in interfaces:
        if interface is None:
            continue
        try:
            check_origin(url, interface)
        except AccordError as error:
            return CheckResult(
                DETECT_REQUIREMENT,
                "the card's interfaces are at the card's own origin",
                url,
                Verdict.FAIL,
                detail=error.message,
            )
    return None


def _interface(card: dict[str, Any], binding: str) -> str | None:
    for item in card.get("supportedInterfaces") or []:
        if isinstance(item, dict) and item.get("protocolBinding") == binding:
            url = item.get("url")
            if isinstance(url, str) and url:
                return url
    return None


def run_sync(coro: Awaitable[Report]) -> Report:
    async def wrap() -> Report:
        return await coro

    return asyncio.run(wrap())
