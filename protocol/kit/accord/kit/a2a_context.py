"""What the A2A checks share for one agent: its card, the wire, credentials, and everything
observed so far (status sequences, errors), so that one conversation serves several checks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final, TypeVar

import httpx

from accord.contracts.card_params import card_param
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import (
    CARD_SKILL_SCHEMAS_PARAM,
    CONTRACT_EXTENSION_URI,
    DELEGATION_EXTENSION_URI,
    SKILL_META_KEY,
)
from accord.contracts.origins import origin_of
from accord.contracts.status import A2AState
from accord.contracts.tool_access import CallerRole
from accord.kit.a2a_wire import (
    A2AWire,
    Exchange,
    error_code_of,
    status_of,
    status_updates,
    stream_task_id,
    task_of,
    user_message,
)
from accord.kit.grants import lacks_grant
from accord.kit.model import Skipped
from accord.kit.options import Credential, KitOptions
from accord.kit.probes import NO_PROBE, AgentProbe, fill

T = TypeVar("T")
DOCUMENT_KEY: Final = "skill-schemas"  # A2AContext.remember: the skill schema document read
SENDS: Final = frozenset({"SendMessage", "SendStreamingMessage"})

TERMINAL_A2A = frozenset(
    {A2AState.COMPLETED, A2AState.FAILED, A2AState.CANCELED, A2AState.REJECTED}
)
INTERRUPTED_A2A = frozenset({A2AState.INPUT_REQUIRED, A2AState.AUTH_REQUIRED})
KIT_APP = "accord"
KIT_USER = "contract-test"


@dataclass
class Observed:
    """The statuses of one task as one exchange reported them (a stream, or a final answer)."""

    label: str
    task_id: str | None
    statuses: list[dict[str, Any]]
    answer: Exchange
    snapshot_first: bool = False  # the first status is the Task snapshot, not an update


@dataclass
class ProbeRun:
    skill: str
    probe: AgentProbe
    task_id: str
    first: Observed
    answer: Observed | None = None

    @property
    def last(self) -> Observed:
        return self.answer or self.first


@dataclass
class A2AContext:
    target: str
    options: KitOptions
    wire: A2AWire
    card: dict[str, Any]
    run: str
    observed: list[Observed] = field(default_factory=list)
    rpc_answers: list[Exchange] = field(default_factory=list)
    rest_answers: list[Exchange] = field(default_factory=list)
    _memo: dict[str, Any] = field(default_factory=dict)
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    # -- card facts -----------------------------------------------------------------------------
    def extension(self, uri: str) -> dict[str, Any] | None:
        caps = self.card.get("capabilities")
        exts = caps.get("extensions") if isinstance(caps, Mapping) else None
        for ext in exts if isinstance(exts, list) else []:
            if isinstance(ext, Mapping) and ext.get("uri") == uri:
                return dict(ext)
        return None

    def declared(self, key: str) -> list[str] | None:
        """A list the contract extension's params declare (``waitingReasons``, ``errors``)."""
        ext = self.extension(CONTRACT_EXTENSION_URI) or {}
        params = ext.get("params")
        value = card_param(params, key) if isinstance(params, Mapping) else None
        return [str(v) for v in value] if isinstance(value, list) else None

    @property
    def streaming(self) -> bool:
        caps = self.card.get("capabilities")
        return bool(isinstance(caps, Mapping) and caps.get("streaming"))

    def skill_ids(self) -> list[str]:
        skills = self.card.get("skills")
        return (
            [str(s.get("id")) for s in skills if isinstance(s, Mapping)]
            if isinstance(skills, list)
            else []
        )

    # -- credentials and envelopes ----------------------------------------------------------------
    def auth(self) -> dict[str, str]:
        if not self.options.credential.present:
            raise Skipped("needs a credential: pass --token or --api-key")
        return self.options.credential.headers()

    def other_auth(self) -> dict[str, str]:
        if not self.options.other.present:
            raise Skipped("needs a second tenant's credential: pass --other-token")
        self.auth()
        return self.options.other.headers()

    def envelope(self, acts_for: str | None = None, **budget: Any) -> dict[str, Any]:
        """A valid delegation envelope for the kit's own credential (a service's acts for
        ``acts_for`` when given); ``budget`` overrides."""
        app, user = _tenant(self.options.credential, acts_for)
        deadline = datetime.now(UTC) + timedelta(seconds=max(60.0, self.options.timeout_s * 6))
        values = {
            "units": 10,
            "tool_calls": 10,
            "deadline": deadline.isoformat().replace("+00:00", "Z"),
            **budget,
        }
        return {
            "goal": "accord contract test",
            "budget": values,
            "tenant": {"app": app, "user": user, "session": f"contract-test-{self.run}"},
        }

    def metadata(
        self, probe: AgentProbe | None, skill: str | None, envelope: Any = None
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        if skill:
            meta[SKILL_META_KEY] = skill
        if probe is not None:
            meta.update(fill(probe.metadata, self.run))
        if envelope is None:
            envelope = self.envelope(probe.acts_for if probe is not None else None)
        meta[DELEGATION_EXTENSION_URI] = envelope
        return meta

    # -- calls that record what they saw ---------------------------------------------------------
    async def rpc(
        self, method: str, params: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> Exchange:
        answer = await self.wire.rpc(method, params, self.auth() if headers is None else headers)
        self.rpc_answers.append(answer)
        if headers is None:
            await self._refused_to_kit(method, params, answer)
        return answer

    async def rest(
        self, method: str, path: str, headers: Mapping[str, str] | None = None, body: Any = None
    ) -> Exchange | None:
        answer = await self.wire.rest(
            method, path, self.auth() if headers is None else headers, body
        )
        if answer is not None:
            self.rest_answers.append(answer)
        return answer

    async def send(self, label: str, message: dict[str, Any], *, stream: bool = False) -> Observed:
        """Send a message (streamed when asked and the card allows); record every status."""
        params = {
            "message": message,
            "configuration": {"acceptedOutputModes": ["application/json", "text/plain"]},
        }
        if stream and self.streaming:
            answer = await self.wire.stream("SendStreamingMessage", params, self.auth())
            self.rpc_answers.append(answer)
            await self._refused_to_kit("SendStreamingMessage", params, answer)
            obs = Observed(
                label,
                stream_task_id(answer.events),
                status_updates(answer.events),
                answer,
                snapshot_first=_starts_with_task(answer.events),
            )
        else:
            answer = await self.rpc("SendMessage", params)
            task = task_of(answer.result)
            status = status_of(task) if task else None
            obs = Observed(
                label,
                str(task["id"]) if task else None,
                [status] if isinstance(status, dict) else [],
                answer,
                snapshot_first=True,
            )
        self.observed.append(obs)
        return obs

    async def _refused_to_kit(
        self, method: str, params: Mapping[str, Any], answer: Exchange
    ) -> None:
        """:class:`Skipped` naming the grant, when the agent refuses a message the kit sends as
        itself with PERMISSION_DENIED (accord.kit.grants): the credential lacks it."""
        events = answer.events or []
        error = answer.error or next(
            (e["error"] for e in events if isinstance(e.get("error"), Mapping)), None
        )
        if method not in SENDS or error_code_of(error) is not ErrorCode.PERMISSION_DENIED:
            return
        message = params.get("message")
        meta = message.get("metadata") if isinstance(message, Mapping) else None
        skill = meta.get(SKILL_META_KEY) if isinstance(meta, Mapping) else None
        skill = str(skill) if skill else "?"
        raise lacks_grant(self.options.credential, f"skill {skill}", await self.grants(skill))

    async def grants(self, skill: str) -> list[str]:
        """The grants a service may ask for ``skill`` with, from the skill schema document's
        ``access`` (read by the schema checks, or fetched now); [] when it names none."""
        doc = self.recall(DOCUMENT_KEY)
        if not isinstance(doc, Mapping):
            doc = await self._fetch_skill_schemas()
        skills = doc.get("skills") if isinstance(doc, Mapping) else None
        entry = skills.get(skill) if isinstance(skills, Mapping) else None
        access = entry.get("access") if isinstance(entry, Mapping) else None
        allow = access.get("allow") if isinstance(access, Mapping) else None
        rules = allow if isinstance(allow, list) else []
        return [str(r["scope"]) for r in rules if isinstance(r, Mapping) and r.get("scope")]

    async def _fetch_skill_schemas(self) -> Any:
        params = (self.extension(CONTRACT_EXTENSION_URI) or {}).get("params")
        ref = params.get(CARD_SKILL_SCHEMAS_PARAM) if isinstance(params, Mapping) else None
        url = ref.get("url") if isinstance(ref, Mapping) else None
        try:
            if not isinstance(url, str) or origin_of(url) != origin_of(self.target):
                return None  # the schema checks judge that; the kit follows no other origin
            response = await self.wire.client.get(url)  # public: no credential
            return response.json() if response.status_code == 200 else None
        except (AccordError, ValueError, httpx.HTTPError):
            return None

    async def get_task(self, task_id: str, headers: Mapping[str, str] | None = None) -> Exchange:
        return await self.rpc("GetTask", {"id": task_id}, headers)

    async def memo(self, key: str, make: Callable[[], Awaitable[T]]) -> T:
        """Run ``make`` once per context (later checks reuse the first result or its skip)."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            if key not in self._memo:
                try:
                    self._memo[key] = await make()
                except Skipped as skipped:
                    self._memo[key] = skipped
            value = self._memo[key]
        if isinstance(value, Skipped):
            raise Skipped(value.reason)
        return value  # type: ignore[no-any-return]

    def remember(self, key: str, value: Any) -> None:
        """Keep what one check observed for a later one (e.g. a task it saw end)."""
        self._memo[key] = value

    def recall(self, key: str) -> Any:
        """What an earlier check remembered under ``key`` (None when it did not run)."""
        return self._memo.get(key)

    # -- the probe conversation -----------------------------------------------------------------
    def pick_probe(self) -> tuple[str, AgentProbe]:
        skills = self.skill_ids()
        for skill in skills:
            probe = self.options.probes.agents.get(skill)
            if probe is not None:
                return skill, probe
        raise Skipped(f"no probe for the card's skills {skills}: {NO_PROBE}")

    async def probe_run(self) -> ProbeRun:
        """The skill probe, streamed; answered in the same task if it waits for input."""
        return await self.memo("probe", self._probe_run)

    async def _probe_run(self) -> ProbeRun:
        skill, probe = self.pick_probe()
        message = user_message(fill(probe.message, self.run), metadata=self.metadata(probe, skill))
        first = await self.send(f"probe {skill}", message, stream=True)
        if first.task_id is None:
            raise Skipped(f"the probe for {skill} did not create a task: {first.answer.shown()}")
        run = ProbeRun(skill, probe, first.task_id, first)
        if last_state(first) == A2AState.INPUT_REQUIRED and probe.answer is not None:
            reply = user_message(
                fill(probe.answer, self.run),
                task_id=first.task_id,
                metadata=self.metadata(probe, skill),
            )
            run.answer = await self.send(f"answer {skill}", reply, stream=True)
        return run

    async def waiting_task(self) -> tuple[str, Observed]:
        """A fresh task left waiting for input (for the cancel check), if the probe waits."""
        skill, probe = self.pick_probe()
        message = user_message(fill(probe.message, self.run), metadata=self.metadata(probe, skill))
        obs = await self.send(f"probe {skill} (to cancel)", message)
        if obs.task_id is None or last_state(obs) not in INTERRUPTED_A2A:
            raise Skipped(
                f"the probe for {skill} does not leave a task waiting "
                f"(final state {last_state(obs)}); nothing to cancel mid-way"
            )
        return obs.task_id, obs


def last_state(obs: Observed) -> str | None:
    return str(obs.statuses[-1].get("state")) if obs.statuses else None


def _starts_with_task(events: list[dict[str, Any]]) -> bool:
    first = events[0].get("result") if events else None
    return isinstance(first, dict) and isinstance(first.get("task"), dict)


def _tenant(credential: Credential, acts_for: str | None = None) -> tuple[str, str]:
    """The tenant the kit's envelope claims: the token's own ``app``/``sub`` when readable, or
    ``acts_for`` (the probe's customer) for a service token.

    The kit does not verify the token (it cannot); it only reads who the token says it is, so
    that an end-user credential's envelope names that user and is not refused as acting on
    behalf of someone else, and a service's names the customer its probe asks about.
    """
    if credential.token:
        claims = credential.claims()
        sub, app, roles = claims.get("sub"), claims.get("app"), claims.get("roles")
        is_service = isinstance(roles, list) and CallerRole.SERVICE in roles
        user = acts_for if is_service and acts_for else sub
        return (
            app if isinstance(app, str) and app else KIT_APP,
            user if isinstance(user, str) and user else KIT_USER,
        )
    return KIT_APP, acts_for or KIT_USER
