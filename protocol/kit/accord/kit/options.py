"""How a kit run is configured: credentials, skipped requirements, probes, extra contracts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import jwt

from accord.contracts.keys import API_KEY_HEADER
from accord.contracts.tools import ToolContract
from accord.kit.probes import Probes, registered_probes

DEFAULT_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True)
class Credential:
    """What the kit presents: a bearer token or an API key (header ``api_key_header``)."""

    token: str | None = None
    api_key: str | None = None
    api_key_header: str = API_KEY_HEADER

    @property
    def present(self) -> bool:
        return bool(self.token or self.api_key)

    def claims(self) -> dict[str, Any]:
        """What a bearer token says of itself (unverified: the kit cannot verify it, it only
        reads who it is to predict the target's answer); {} for API keys and unreadable
        tokens."""
        if not self.token:
            return {}
        try:
            claims = jwt.decode(self.token, options={"verify_signature": False})
        except jwt.PyJWTError:
            return {}
        return claims if isinstance(claims, dict) else {}

    def headers(self) -> dict[str, str]:
        if self.token:
            return {"Authorization": f"Bearer {self.token}"}
        if self.api_key:
            return {self.api_key_header: self.api_key}
        return {}


@dataclass(frozen=True)
class KitOptions:
    credential: Credential = field(default_factory=Credential)
    other: Credential = field(default_factory=Credential)  # another tenant, for AGENT-004
    skip: frozenset[str] = frozenset()  # requirement IDs the implementation does not claim
    timeout_s: float = DEFAULT_TIMEOUT_S
    # The installed applications' probes (entry point group accord.kit.probes); none: none.
    probes: Probes = field(default_factory=registered_probes)
    contracts: tuple[ToolContract, ...] = ()  # third-party tool contracts (--contract)
