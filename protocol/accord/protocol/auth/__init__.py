"""Who is calling, and may they: every credential a service accepts or sends.

tokens.py      principals, development tokens, the token a service sends (re-exported here)
names.py       the roles and the default app, spelled once
claims.py      what a token's claims must say
verify.py      the Authenticator: a request's credential to a verified principal
trust.py       the trust table: which services' keys sign which grants
jwks.py        an identity provider's public keys
api_keys.py    static API keys from a file
revocation.py  the deny list (credentials, subjects, service keys)
anonymous.py   ``accord serve --auth none``: development on loopback only

The names below are loaded on first use (PEP 562): a command that reads only the role names
(``accord token --help``) must not pay for PyJWT and the settings, which ``tokens`` imports.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accord.protocol.auth.names import (
        DEFAULT_APP,
        ROLE_APPROVER,
        ROLE_CUSTOMER,
        ROLE_SERVICE,
    )
    from accord.protocol.auth.tokens import (
        HS_ALGORITHM,
        ISSUER,
        Principal,
        configured_secret,
        dev_secret_path,
        jwt_secret,
        mint_token,
        owner_key,
        service_token,
        token_claims,
    )

_NAMES = "accord.protocol.auth.names"
_TOKENS = "accord.protocol.auth.tokens"
_WHERE = {
    "DEFAULT_APP": _NAMES,
    "ROLE_APPROVER": _NAMES,
    "ROLE_CUSTOMER": _NAMES,
    "ROLE_SERVICE": _NAMES,
    "HS_ALGORITHM": _TOKENS,
    "ISSUER": _TOKENS,
    "Principal": _TOKENS,
    "configured_secret": _TOKENS,
    "dev_secret_path": _TOKENS,
    "jwt_secret": _TOKENS,
    "mint_token": _TOKENS,
    "owner_key": _TOKENS,
    "service_token": _TOKENS,
    "token_claims": _TOKENS,
}

__all__ = [
    "DEFAULT_APP",
    "HS_ALGORITHM",
    "ISSUER",
    "ROLE_APPROVER",
    "ROLE_CUSTOMER",
    "ROLE_SERVICE",
    "Principal",
    "configured_secret",
    "dev_secret_path",
    "jwt_secret",
    "mint_token",
    "owner_key",
    "service_token",
    "token_claims",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)
