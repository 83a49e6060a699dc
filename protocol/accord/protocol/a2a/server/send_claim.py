"""The key of a sent message, and the claim the gate takes on it before the SDK sees it.

A resend is the same message when what it asks is the same: its parts (parsed, then written
in one canonical form, so key order, spacing and ``1`` vs ``1.0`` do not matter), the skill it
names and the task it continues. A new traceparent, deadline or envelope does not make it
another message: a client that retries builds those afresh. The gate claims the key
(:meth:`~accord.protocol.a2a.server.send_keys.SendKeys.claim`) while it can still answer in the
caller's transport (IDEMPOTENCY_CONFLICT), and hands the :class:`SendClaim` to the request
handler (:mod:`accord.protocol.a2a.server.send_handler`), which runs the message or answers
the copy.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from a2a.types import Message
from a2a.utils.proto_utils import parse_lenient
from google.protobuf.json_format import MessageToDict, ParseError

from accord.contracts.keys import SKILL_META_KEY
from accord.protocol.a2a.server.send_keys import SendKeys, SentRequest

SEND_STATE_KEY: Final = "accord.send"
"""Request scope and ServerCallContext.state key of the request's :class:`SendClaim`."""


@dataclass(frozen=True, slots=True)
class SendKey:
    message_id: str
    fingerprint: str
    task_id: str | None  # the task a follow-up continues


@dataclass(slots=True)
class SendClaim:
    """A request's key as the gate found it: ``new`` when this request inserted it."""

    keys: SendKeys
    owner: str
    key: SendKey
    task_id: str  # the task the message makes (assigned now) or continues
    new: bool
    record: SentRequest
    handled: bool = False  # the request handler took it over

    @property
    def follow_up(self) -> bool:
        return self.key.task_id is not None

    async def end(self) -> None:
        """The request is over: a claim the handler never saw made nothing (the SDK refused the
        request first), so it is forgotten; any other stops being renewed here."""
        if not self.handled:
            await self.keys.forget(self.owner, self.key.message_id)
        else:
            self.keys.let_go(self.owner, self.key.message_id)


def send_key(message: Mapping[str, Any]) -> SendKey | None:
    """The key of a sent message (its JSON as received); None when it has no messageId or
    parts that parse (the SDK refuses it)."""
    message_id = message.get("messageId", message.get("message_id"))
    if not isinstance(message_id, str) or not message_id:
        return None
    parts = message.get("parts")
    try:
        parsed = parse_lenient({"parts": parts if isinstance(parts, list) else []}, Message())
    except (ParseError, TypeError, ValueError):
        return None
    metadata = message.get("metadata")
    skill = metadata.get(SKILL_META_KEY) if isinstance(metadata, Mapping) else None
    task_id = message.get("taskId", message.get("task_id"))
    task_id = task_id if isinstance(task_id, str) and task_id else None
    canonical = {
        "parts": MessageToDict(parsed).get("parts", []),
        "skill": skill,
        "taskId": task_id,
    }
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return SendKey(message_id, hashlib.sha256(text.encode()).hexdigest(), task_id)


async def claim_send(keys: SendKeys, owner: str, message: Mapping[str, Any]) -> SendClaim | None:
    """Claim the message's key for ``owner`` (IDEMPOTENCY_CONFLICT for another message under
    the same id); None when the message has no key."""
    key = send_key(message)
    if key is None:
        return None
    task_id = key.task_id or str(uuid.uuid4())
    new, record = await keys.claim(owner, key.message_id, key.fingerprint, task_id)
    return SendClaim(keys, owner, key, record.task_id, new, record)
