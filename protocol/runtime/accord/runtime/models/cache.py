"""A cache of model answers that never crosses a tenant.

The key is the SHA-256 of (scope, corpus version, policy version, strategy version, task,
normalised question). An answer is reused only under the same conditions it was made in: the
same tenant (or a declared shared scope), the same documents, the same rules, the same models
and prompts. Entries expire after a TTL (the clock is injectable), the least recently used entry
is evicted at capacity, and a read checks the stored scope again, so that a key bug can never
hand one tenant another's answer.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from accord.contracts.envelope import DelegationEnvelope, Identifier, Tenant

DEFAULT_TTL_S: Final = 600.0
DEFAULT_CAPACITY: Final = 1024


class ScopeKind(StrEnum):
    TENANT = "tenant"  # one user of one app
    SHARED = "shared"  # declared shared (e.g. a public FAQ): any tenant may read it


class CacheScope(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ScopeKind
    app: Identifier | None = None
    user: Identifier | None = None
    name: Identifier | None = None

    @classmethod
    def tenant(cls, app: str, user: str) -> CacheScope:
        return cls(kind=ScopeKind.TENANT, app=app, user=user)

    @classmethod
    def of(cls, source: Tenant | DelegationEnvelope) -> CacheScope:
        tenant = source.tenant if isinstance(source, DelegationEnvelope) else source
        return cls.tenant(tenant.app, tenant.user)

    @classmethod
    def shared(cls, name: str) -> CacheScope:
        return cls(kind=ScopeKind.SHARED, name=name)


class Versions(BaseModel):
    """What an answer depends on besides the question; change one and old answers are not used."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    corpus: str = Field(default="v1", max_length=128)
    policy: str = Field(default="v1", max_length=128)
    strategy: str = Field(default="v1", max_length=256)


def cache_key(scope: CacheScope, versions: Versions, task: str, question: str) -> str:
    """``question`` must already be normalised (see ``intake.normalize_question``)."""
    parts = [scope.model_dump(mode="json"), versions.model_dump(mode="json"), task, question]
    raw = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()


@dataclass(frozen=True)
class _Entry:
    scope: CacheScope
    value: object
    expires_at: float


class AnswerCache:
    def __init__(
        self,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        capacity: int = DEFAULT_CAPACITY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = ttl_s
        self.capacity = capacity
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str, scope: CacheScope) -> object | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if self._clock() >= entry.expires_at:
            del self._entries[key]
            return None
        if entry.scope != scope:  # the key said yes; the scope check still says no
            return None
        self._entries.move_to_end(key)
        return entry.value

    def put(self, key: str, scope: CacheScope, value: object) -> None:
        if self.capacity <= 0 or self.ttl_s <= 0:
            return
        self._entries[key] = _Entry(scope, value, self._clock() + self.ttl_s)
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()
