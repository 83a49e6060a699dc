"""The callers' push credentials, encrypted at rest (AES-256-GCM).

A push config may carry two secrets of its caller: A2A's ``token`` and the
``authentication.credentials`` sent as ``Authorization``. The store keeps neither in the
config's serialized blob: both are sealed together into the row's ``secrets`` column, with the
row's key (table, owner, task, config id) as associated data, so a sealed value copied onto
another row does not open there. The key is ``ACCORD_PUSH_SECRETS_KEY`` (32 bytes, base64);
in development, without one, a random key is made once in the data directory
(``push-secrets-key``, 0600), as the development JWT secret is; production never makes one up
(production.py refuses to start an agent without it: replicas with keys of their own could not
read each other's configs).

Format of a sealed value: ``b"a1"`` (this scheme), the 12-byte nonce, then the ciphertext of
the JSON ``{"token": ..., "credentials": ...}`` with its 16-byte tag.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from accord.protocol.private_files import create_once
from accord.protocol.settings import current, data_dir, env_name
from accord.protocol.telemetry.redaction import register_secret

KEY_FILE: Final = "push-secrets-key"
KEY_BYTES: Final = 32
SETTING: Final = env_name("push_secrets_key")
_SCHEME: Final = b"a1"
_NONCE_BYTES: Final = 12


class PushSecretsError(ValueError):
    """A sealed value that does not open with this key (another key, or altered)."""


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a caller gave that must stay secret: its token, and its Authorization credentials."""

    token: str = ""
    credentials: str = ""

    def __bool__(self) -> bool:
        return bool(self.token or self.credentials)


def decode_key(value: str) -> bytes:
    """The key bytes of a setting's value (standard or URL-safe base64 of 32 bytes)."""
    text = value.strip().replace("-", "+").replace("_", "/")  # URL-safe as standard
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != KEY_BYTES:
        raise ValueError(f"{SETTING} must be {KEY_BYTES} random bytes in base64")
    return raw


def key_problem(value: str) -> str | None:
    """Why a configured key cannot be used (production's refusal names it), or None."""
    if re.search(r"replace[_-]?me", value, re.I):
        return f"{SETTING} is the manifest's placeholder"
    try:
        decode_key(value)
    except ValueError as exc:
        return str(exc)
    return None


def dev_key_path() -> Path:
    """Where the development key is kept (and made) when none is configured."""
    return data_dir() / KEY_FILE


def configured_key() -> bytes:
    """``ACCORD_PUSH_SECRETS_KEY``; else, in development, the data directory's (made once,
    0600); in production without one, an error (the start refuses earlier, production.py)."""
    settings = current()
    if settings.push_secrets_key is not None:
        value = settings.push_secrets_key.get_secret_value()
    elif settings.mode == "production":
        raise PushSecretsError(f"no {SETTING} in production mode: push configs cannot be kept")
    else:
        value = _dev_key(dev_key_path())
    register_secret(value)  # the key itself never reaches a log line
    return decode_key(value)


def _dev_key(path: Path) -> str:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    return create_once(path, base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode())


def _read(path: Path) -> str:
    value = path.read_text().strip()
    if not value:
        raise FileNotFoundError(path)
    return value


class PushSecrets:
    """Seals and opens one row's :class:`Credentials` with one key."""

    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    def seal(self, credentials: Credentials, row: str) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)
        plain = json.dumps({"token": credentials.token, "credentials": credentials.credentials})
        return _SCHEME + nonce + self._aead.encrypt(nonce, plain.encode(), row.encode())

    def open(self, sealed: bytes, row: str) -> Credentials:
        head = len(_SCHEME) + _NONCE_BYTES
        scheme, nonce = sealed[: len(_SCHEME)], sealed[len(_SCHEME) : head]
        if scheme != _SCHEME:
            raise PushSecretsError("not a sealed push credential")
        try:
            plain = self._aead.decrypt(nonce, sealed[head:], row.encode())
        except InvalidTag:
            raise PushSecretsError(
                f"a push config's credentials do not open with this {SETTING} "
                "(another key, or the row was altered)"
            ) from None
        fields = json.loads(plain)
        return Credentials(str(fields.get("token", "")), str(fields.get("credentials", "")))
