"""Sessions: one conversation of one user of one app, isolated by (app, user, session).

A session is a sequence of workflows, one per request: turn 1, 2, ... Their ids are derived from
a hash of the full (app, user, session) key and the turn, so the same session id given by
another user (or another app) names different workflows: it can never reach yours. The log is
the only record (nothing else to keep in step): the current turn is the last id that exists,
found by probing once per session and then kept in memory.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import Final

from accord.contracts.errors import AccordError, ErrorCode
from accord.runtime.workflow import EventLog

PREFIX: Final = "runner"
MAX_FIELD: Final = 200


@dataclass(frozen=True)
class SessionKey:
    app: str
    user: str
    session: str

    def __post_init__(self) -> None:
        for name in ("app", "user", "session"):
            value = getattr(self, name)
            if not value or len(value) > MAX_FIELD or not value.isprintable():
                raise AccordError(
                    ErrorCode.INVALID_INPUT,
                    f"{name} must be 1 to {MAX_FIELD} printable characters",
                    {"field": name},
                )

    @property
    def digest(self) -> str:
        # NUL cannot occur in a printable field, so the encoding is unambiguous.
        raw = "\0".join((self.app, self.user, self.session)).encode()
        return hashlib.sha256(raw).hexdigest()[:32]

    def workflow_id(self, turn: int) -> str:
        return f"{PREFIX}-{self.digest}-{turn}"

    def owns(self, workflow_id: str) -> bool:
        """``workflow_id`` is one of this session's turns."""
        stem, _, turn = workflow_id.rpartition("-")
        return stem == f"{PREFIX}-{self.digest}" and turn.isdigit()


class Sessions:
    """The current turn of each session, and one lock per session (one request at a time)."""

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._turns: dict[SessionKey, int] = {}
        self._locks: dict[SessionKey, asyncio.Lock] = {}

    def lock(self, key: SessionKey) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    async def current(self, key: SessionKey) -> int:
        """The session's latest turn (0: nothing yet)."""
        turn = self._turns.get(key)
        if turn is None:
            turn = 0
            while await self._log.record(key.workflow_id(turn + 1)) is not None:
                turn += 1
            self._turns[key] = turn
        return turn

    def advance(self, key: SessionKey, turn: int) -> None:
        self._turns[key] = turn
