"""The agents the orchestrator delegates to (policy-check, risk-check), as A2A clients.

One shared HTTP connection pool; each agent's card is resolved once and kept; calls carry a
service token (role ``service``, subject ``svc:orchestrator``, granted the scopes the peers'
contracts name for their skills, or the configured token file's),
and a delegation envelope naming the customer as tenant. The token goes only to the origin of
the configured peer URL (``ACCORD_POLICY_URL``...): a card that points its interfaces at another
origin is refused before anything is sent (accord.protocol.a2a.origins). A peer whose card
serves no version of its contract with the major this orchestrator was built against (the
contracts shipped with it) is refused before anything is sent too: VERSION_UNSUPPORTED, which
stops the request with nothing written (accord.contracts.versions); a peer serving two majors
side by side is asked in ours (the A2A client names it in each task it starts).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Final

import httpx

from accord.agents.refund.config import SERVICE_NAME
from accord.agents.refund.facts import WorkflowInput
from accord.agents.refund.money import MAX_REFUND_CONSTRAINT
from accord.contracts.agents import agent_contract
from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.client import DEFAULT_TIMEOUT, A2AClient, ResolvedCard
from accord.protocol.a2a.client.card import resolve_card
from accord.protocol.a2a.origins import ForeignOriginError
from accord.protocol.auth import service_token

logger = logging.getLogger(__name__)

TOKEN_TTL_S: Final = 3600
MIN_CHILD_DEADLINE_S: Final = 30.0
SELF_CONTRACT: Final = "orchestrator"
REQUEST_SKILL: Final = "refund.request"
PEER_CONTRACTS: Final = {"policy": "policy-check", "risk": "risk-check"}
"""Peer name -> the agent contract it is called by (and whose shipped version we expect)."""


def peer_grants() -> list[str]:
    """The grants the peers' contracts name for a service asking for their skills (AGENT-009):
    what this service's token asks for. A deployment whose verifiers grant from their own
    configuration (not the token's claim) must grant the orchestrator these."""
    return sorted(
        {
            grant
            for contract in PEER_CONTRACTS.values()
            for skill in agent_contract(contract).skills
            if skill.access is not None
            for grant in skill.access.grants
        }
    )


def peer_token() -> str:
    """The bearer token for calls to the peers. Asked for every client: service_token()
    keeps a minted token until half its life, and reads a configured token file again when
    it is rotated."""
    return service_token(SERVICE_NAME, ttl_s=TOKEN_TTL_S, scopes=peer_grants())


class Peers:
    def __init__(self, urls: dict[str, str]) -> None:
        self._urls = urls
        self._http = httpx.AsyncClient(
            timeout=DEFAULT_TIMEOUT,
            limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
        )
        self._cards: dict[str, ResolvedCard] = {}
        self._expects = {
            name: agent_contract(contract).version
            for name, contract in PEER_CONTRACTS.items()
            if name in urls
        }

    async def client(self, name: str) -> A2AClient:
        card = self._cards.get(name)
        if card is None:
            card = await resolve_card(self._http, self._urls[name])
        try:
            token = peer_token()
            # expects: refused before anything is sent unless the card serves our major; the
            # tasks it starts name the version they speak (an agent may serve two majors).
            client = A2AClient(card, self._http, token=token, expects=self._expects.get(name))
        except ForeignOriginError as refused:
            # The operator's problem (a peer URL that serves a card pointing elsewhere): the
            # log names both origins; the customer's task is told no hostnames.
            logger.error("peer %s refused: %s", name, refused.message)
            raise AccordError(
                ErrorCode.PERMISSION_DENIED,
                f"{name} was not called: its agent card points at another origin than the one "
                "configured (see the orchestrator's log)",
                {"peer": name},
            ) from None
        self._cards[name] = card  # kept only once usable: a fixed card is read again
        return client

    async def aclose(self) -> None:
        await self._http.aclose()


def child_envelope(
    inp: WorkflowInput, workflow_id: str, goal: str, grant: tuple[int, int], *, child: str
) -> DelegationEnvelope:
    """The envelope of a child task (``child``: "agent/skill"): the customer as tenant, this
    workflow as parent, the ``grant`` of (units, tool calls) the request's budget reserved for
    it (budget.py), the customer's deadline (at least a short grace, so a resumed workflow can
    still ask), and of the caller's constraints and context refs what refund.request's contract
    forwards to that child (ENV-007, ENV-008: max_refund_cents to nobody, the context refs to
    policy-check). The goal is the orchestrator's own for the child's part: no child reads the
    caller's."""
    deadline = datetime.fromisoformat(inp.deadline)
    floor = datetime.now(UTC) + timedelta(seconds=MIN_CHILD_DEADLINE_S)
    use = agent_contract(SELF_CONTRACT).skill(REQUEST_SKILL).envelope
    given: dict[str, str | int | bool] = {}
    if inp.max_refund_cents is not None:
        given[MAX_REFUND_CONSTRAINT] = inp.max_refund_cents
    return DelegationEnvelope(
        goal=goal,
        constraints=use.forwarded(child, given),
        context_refs=list(inp.context_refs) if use.forwards_context_refs(child) else [],
        budget=Budget(
            units=grant[0],
            tool_calls=grant[1],
            deadline=max(deadline, floor),
        ),
        tenant=Tenant(app=inp.app, user=inp.customer_id, session=inp.session),
        parent_task=workflow_id,
        traceparent=inp.traceparent,
    )
