"""Each service's own signing keys: ES256 key pairs with a ``kid``, and the JWKS publishing them.

A service signs the tokens it sends with its own private key, so a verifier can tell the
triage agent's token from the helpdesk's by the key alone, and no service holds a key that mints
another's authority (issue #30, finding 8). One folder per service under the keys directory
(``ACCORD_KEYS_DIR``, default ``<data dir>/keys``)::

    keys/triage/keyring.json   private: every key of the service (0600, folder 0700)
    keys/triage/jwks.json      public: the keys verifiers accept (written on every change)

The newest key that is not retiring signs. ``accord keys rotate SERVICE`` adds a key that signs
from then on and keeps the old ones published for a grace period (tokens they signed stay valid
until they expire); ``accord keys revoke SERVICE KID`` drops a key from the ring and the JWKS
at once (a new signer is made if it was the signer) and writes it to the deny list
(:mod:`accord.protocol.auth.revocation`), so every verifier refuses its tokens on the next
request (docs/service-keys.md gives the propagation bound per deployment).

In development a service makes its first key when it first starts (``accord up`` is still one
command); in production the key ring is provisioned (a Secret) and a missing one refuses the
start. Nothing here is an HS256 secret: verifiers hold public keys only.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.private_files import FILE_MODE, private_dir
from accord.protocol.settings import current, data_dir

ALGORITHM: Final = "ES256"
KEYRING_FILE: Final = "keyring.json"
JWKS_FILE: Final = "jwks.json"
LOCK_FILE: Final = ".lock"
SERVICE_NAME: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def keys_dir() -> Path:
    """Where every service's key folder is: ``ACCORD_KEYS_DIR`` or ``<data dir>/keys``."""
    configured = current().keys_dir
    return configured.absolute() if configured is not None else private_dir(data_dir() / "keys")


def check_service_name(service: str) -> str:
    if SERVICE_NAME.fullmatch(service) is None:
        raise ValueError(
            f"not a service name: {service!r} (lower-case letters, digits and . _ -, at most 64)"
        )
    return service


def service_dir(service: str, root: Path | None = None) -> Path:
    return (root or keys_dir()) / check_service_name(service)


@dataclass(frozen=True)
class ServiceKey:
    """One key pair; ``retires_at`` (Unix seconds) is set once a newer key took over."""

    kid: str
    created: float
    private_pem: str
    retires_at: float | None = None

    def private_key(self) -> ec.EllipticCurvePrivateKey:
        key = serialization.load_pem_private_key(self.private_pem.encode(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"key {self.kid} is not an EC key")
        return key

    def public_jwk(self) -> dict[str, Any]:
        jwk: dict[str, Any] = json.loads(ECAlgorithm.to_jwk(self.private_key().public_key()))
        jwk.update({"kid": self.kid, "alg": ALGORITHM, "use": "sig"})
        return jwk

    def published_at(self, now: float) -> bool:
        return self.retires_at is None or now < self.retires_at

    def to_json(self) -> dict[str, Any]:
        return {
            "kid": self.kid,
            "created": self.created,
            "retires_at": self.retires_at,
            "private_pem": self.private_pem,
        }


@dataclass(frozen=True)
class KeyRing:
    """A service's keys, oldest first."""

    service: str
    keys: tuple[ServiceKey, ...]

    def signer(self) -> ServiceKey:
        active = [k for k in self.keys if k.retires_at is None]
        if not active:
            raise AccordError(
                ErrorCode.UNAVAILABLE,
                f"service {self.service} has no signing key: run `accord keys rotate "
                f"{self.service}`",
            )
        return active[-1]

    def jwks(self, now: float | None = None) -> dict[str, Any]:
        at = time.time() if now is None else now
        return {"keys": [k.public_jwk() for k in self.keys if k.published_at(at)]}


def new_key(now: float | None = None) -> ServiceKey:
    """A fresh P-256 key; its ``kid`` is the RFC 7638 thumbprint of the public key, never one
    that starts with ``-`` (1 in 64: `accord keys revoke SERVICE KID` would read it as an
    option), so such a key is thrown away for another."""
    while True:
        key = _generated(now)
        if not key.kid.startswith("-"):
            return key


def _generated(now: float | None) -> ServiceKey:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public: dict[str, Any] = json.loads(ECAlgorithm.to_jwk(private.public_key()))
    canonical = json.dumps(
        {k: public[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True
    )
    digest = hashlib.sha256(canonical.encode()).digest()
    kid = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    return ServiceKey(kid=kid, created=time.time() if now is None else now, private_pem=pem)


def _parse(service: str, text: str, path: Path) -> KeyRing:
    try:
        raw = json.loads(text)
        keys = tuple(
            ServiceKey(
                kid=str(k["kid"]),
                created=float(k["created"]),
                private_pem=str(k["private_pem"]),
                retires_at=None if k.get("retires_at") is None else float(k["retires_at"]),
            )
            for k in raw["keys"]
        )
    except (ValueError, KeyError, TypeError) as bad:
        raise AccordError(
            ErrorCode.UNAVAILABLE, f"{path}: not a key ring ({type(bad).__name__})"
        ) from None
    return KeyRing(service, keys)


def read_ring(service: str, root: Path | None = None) -> KeyRing | None:
    """The service's key ring, or None if it has none yet."""
    path = service_dir(service, root) / KEYRING_FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    return _parse(service, text, path)


def _write_private(path: Path, text: str) -> None:
    # Written whole to a 0600 file beside it, then renamed over: a reader never sees half.
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(partial, path)


def write_ring(ring: KeyRing, root: Path | None = None) -> None:
    """Store the ring (0600) and the JWKS it publishes now."""
    folder = private_dir(service_dir(ring.service, root))
    body = {"service": ring.service, "keys": [k.to_json() for k in ring.keys]}
    _write_private(folder / KEYRING_FILE, json.dumps(body, indent=2) + "\n")
    _write_private(folder / JWKS_FILE, json.dumps(ring.jwks(), indent=2) + "\n")


@contextlib.contextmanager
def _locked(service: str, root: Path | None) -> Iterator[None]:
    # Two replicas starting together, or a rotation during a start: one writer at a time.
    folder = private_dir(service_dir(service, root))
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def ensure_ring(service: str, root: Path | None = None) -> tuple[KeyRing, bool]:
    """The service's ring, made with one key if it has none (development start-up); and
    whether it was made now."""
    ring = read_ring(service, root)
    if ring is not None:
        return ring, False
    with _locked(service, root):
        ring = read_ring(service, root)
        if ring is not None:
            return ring, False
        ring = KeyRing(service, (new_key(),))
        write_ring(ring, root)
        return ring, True


def rotate(service: str, grace_s: float, root: Path | None = None) -> tuple[KeyRing, ServiceKey]:
    """Add a key that signs from now on; the others stay published ``grace_s`` more seconds
    (keys already retiring keep their earlier end; keys past it leave the ring)."""
    with _locked(service, root):
        ring = read_ring(service, root) or KeyRing(service, ())
        now = time.time()
        kept = tuple(
            replace(k, retires_at=now + grace_s) if k.retires_at is None else k
            for k in ring.keys
            if k.published_at(now)
        )
        fresh = new_key(now)
        ring = KeyRing(service, (*kept, fresh))
        write_ring(ring, root)
        return ring, fresh


def remove(service: str, kid: str, root: Path | None = None) -> tuple[KeyRing, ServiceKey | None]:
    """Drop ``kid`` from the ring and its JWKS; if it was the signer, a new key signs (the one
    made is returned). LookupError if the ring holds no such key."""
    with _locked(service, root):
        ring = read_ring(service, root)
        if ring is None or all(k.kid != kid for k in ring.keys):
            raise LookupError(f"service {service} has no key {kid!r}")
        kept = tuple(k for k in ring.keys if k.kid != kid)
        fresh = None
        if not any(k.retires_at is None for k in kept):
            fresh = new_key()
            kept = (*kept, fresh)
        ring = KeyRing(service, kept)
        write_ring(ring, root)
        return ring, fresh


class _RingCache:
    """The ring of a running service, read again when its file changes (a rotation)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rings: dict[Path, tuple[tuple[int, int], KeyRing]] = {}

    def get(self, service: str) -> KeyRing:
        path = service_dir(service) / KEYRING_FILE
        try:
            st = path.stat()
        except FileNotFoundError:
            if current().mode == "production":
                raise AccordError(
                    ErrorCode.UNAVAILABLE,
                    f"service {service} has no key ring at {path} (ACCORD_KEYS_DIR)",
                ) from None
            ring, _made = ensure_ring(service)
            return ring
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            cached = self._rings.get(path)
            if cached is not None and cached[0] == stamp:
                return cached[1]
        ring = _parse(service, path.read_text(), path)
        with self._lock:
            self._rings[path] = (stamp, ring)
        return ring


rings = _RingCache()


def sign(service: str, claims: dict[str, Any]) -> str:
    """``claims`` signed ES256 by ``service``'s current key, its ``kid`` in the header."""
    key = rings.get(service).signer()
    return jwt.encode(claims, key.private_key(), algorithm=ALGORITHM, headers={"kid": key.kid})


def published_jwks(service: str) -> dict[str, Any]:
    """What ``GET /.well-known/jwks.json`` answers for ``service``."""
    return rings.get(service).jwks()
