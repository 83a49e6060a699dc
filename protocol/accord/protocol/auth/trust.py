"""The trust table: which services this one accepts tokens from, under which keys, granting what.

A service token (role ``service``, subject ``svc:NAME``) is accepted only if

- ``NAME`` has an entry in the verifier's table (``ACCORD_SERVICE_TRUST``, else the
  application's: its app file's ``service_trust``, :func:`default_trust_path`; else no service
  is trusted);
- it is signed (ES256 or RS256) by a key published in that entry's JWKS, found by the token's
  ``kid``: one service's key cannot sign for another, whatever the token claims;
- its ``iss`` is the entry's issuer (``accord`` by default).

The principal's grants are the entry's, not the token's: a token may ask for fewer (its
``scope`` claim narrows them, so a client can hold least privilege), never for more. The tenant
apps it may act for are the entry's too (``*``: any). The file::

    services:
      triage:
        jwks: https://triage:8700/.well-known/jwks.json   # or a file; default below
        grants: [tickets.get, tickets.close]
        tenants: ["*"]                                          # default: [accord]
      helpdesk:
        grants: [users.lookup]

``shared_secret_until`` (an ISO time, at most :data:`MAX_UPGRADE_WINDOW` ahead when the table
is read) is the upgrade window from 0.2, whose services signed their tokens with the shared
HS256 secret: until then, this service's shared-secret tokens are accepted too, with the entry's
grants and tenants, and each one is logged as a WARNING. It reopens finding 8 of issue #30 for
that service while it lasts (anyone holding the secret can mint it), so it is meant for the
minutes of a rolling upgrade, and removed after (docs/service-keys.md, "Upgrading from 0.2";
compat.SHARED_SECRET_SERVICE_TOKENS).

``jwks`` unset means the file ``<ACCORD_KEYS_DIR>/NAME/jwks.json`` (where the service's own
key ring publishes it: development, or a mounted ConfigMap). A URL's key set is kept for
``ACCORD_SERVICE_JWKS_TTL_S`` and fetched again at once (at most every few seconds) for a
``kid`` it does not hold; a file is read again when it changes. A key that left the set
(revoked) refuses the tokens it signed on the next request, cached ones included.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import jwt
import yaml
from jwt import PyJWK, PyJWKSet

from accord.contracts import compat
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth.tokens import DEFAULT_APP, ISSUER
from accord.protocol.service_keys import JWKS_FILE, check_service_name, keys_dir
from accord.protocol.settings import current

SERVICE_PREFIX: Final = "svc:"
ACCEPTED: Final = ("ES256", "RS256")
REFETCH_COOLDOWN_S: Final = 5.0
FETCH_TIMEOUT_S: Final = 5.0
ANY_TENANT: Final = "*"
MAX_UPGRADE_WINDOW: Final = timedelta(days=7)


def _refused(message: str) -> AccordError:
    return AccordError(ErrorCode.UNAUTHENTICATED, message)


def default_trust_path() -> Path | None:
    """The application's trust table when ``ACCORD_SERVICE_TRUST`` is unset: the
    ``service_trust`` of its app file (the project's, else the installed application's), as
    `accord up` would give its services. None: no application names one, and no service is
    trusted (the framework ships no table: which services there are is the application's)."""
    from accord.protocol.app_file import app_default_path  # it imports the service layer

    return app_default_path("service_trust")


class _KeySource:
    """A JWKS from a URL or a file; :meth:`find` a key by ``kid``."""

    def __init__(self, source: str, ttl_s: float) -> None:
        self.source = source
        self._ttl_s = ttl_s
        self._lock = threading.Lock()
        self._keys: dict[str, PyJWK] = {}
        self._stamp: object = None
        self._fetched = 0.0  # monotonic time of the last fetch (URLs)

    @property
    def _is_url(self) -> bool:
        return self.source.startswith(("https://", "http://"))

    def find(self, kid: str) -> PyJWK | None:
        found = self._current(refresh=False).get(kid)
        if found is None and self._is_url and time.monotonic() - self._fetched > REFETCH_COOLDOWN_S:
            found = self._current(refresh=True).get(kid)  # a rotation we have not seen yet
        return found

    def holds(self, kid: str) -> bool:
        return kid in self._current(refresh=False)

    def _current(self, *, refresh: bool) -> dict[str, PyJWK]:
        if self._is_url:
            with self._lock:
                stale = time.monotonic() - self._fetched > self._ttl_s
                if refresh or stale or self._stamp is None:
                    self._keys = _parse(_fetch(self.source), self.source)
                    self._fetched = time.monotonic()
                    self._stamp = self._fetched
                return self._keys
        path = Path(self.source)
        try:
            st = path.stat()
        except FileNotFoundError:
            return {}  # the service has not started (made its key) yet: nothing it signed is valid
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            if stamp != self._stamp:
                self._keys = _parse(path.read_text(), self.source)
                self._stamp = stamp
            return self._keys


def _fetch(url: str) -> str:
    import httpx  # only verifiers that fetch a URL pay for the import

    try:
        response = httpx.get(url, timeout=FETCH_TIMEOUT_S, follow_redirects=False)
        response.raise_for_status()
    except httpx.HTTPError:
        raise AccordError(
            ErrorCode.UNAVAILABLE, f"the service JWKS at {url} could not be fetched"
        ) from None
    return response.text


def _parse(text: str, source: str) -> dict[str, PyJWK]:
    try:
        raw = json.loads(text)
        if isinstance(raw, dict) and raw.get("keys") == []:
            return {}  # every key revoked or retired: nothing it signed is valid
        keys = PyJWKSet.from_dict(raw).keys
    except (jwt.PyJWTError, ValueError, AttributeError):
        raise AccordError(
            ErrorCode.UNAVAILABLE, f"the service JWKS {source} holds no usable key"
        ) from None
    return {str(k.key_id): k for k in keys if k.key_id}


@dataclass(frozen=True)
class TrustedService:
    """One row of the table: a service, where its keys are, what it may do."""

    name: str
    jwks: str
    grants: frozenset[str]
    tenants: frozenset[str]
    issuer: str = ISSUER
    shared_secret_until: datetime | None = None  # compat.SHARED_SECRET_SERVICE_TOKENS

    def accepts_shared_secret(self, now: float) -> bool:
        """Whether this service's HS256 tokens are still accepted (an upgrade window)."""
        until = self.shared_secret_until
        return until is not None and now < until.timestamp()


class TrustTable:
    """The table, with one key source per service."""

    def __init__(self, services: Mapping[str, TrustedService], ttl_s: float = 30.0) -> None:
        self.services = dict(services)
        self._sources = {name: _KeySource(s.jwks, ttl_s) for name, s in self.services.items()}

    def entry_for(self, subject: object) -> TrustedService:
        """The entry of a token's ``sub`` (``svc:NAME``), or UNAUTHENTICATED."""
        if not isinstance(subject, str) or not subject.startswith(SERVICE_PREFIX):
            raise _refused(f"a service token's subject is '{SERVICE_PREFIX}NAME'")
        found = self.services.get(subject.removeprefix(SERVICE_PREFIX))
        if found is None:
            raise _refused(f"service {subject!r} is not in this service's trust table")
        return found

    def key_for(self, entry: TrustedService, header: Mapping[str, Any]) -> Any:
        """The public key of ``entry`` that signed a token with this ``header``."""
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in ACCEPTED:
            raise _refused(
                f"a service token must be signed with the service's own key ({', '.join(ACCEPTED)}"
                f"), not {alg!r}: a shared secret would let any service mint it"
            )
        if not isinstance(kid, str) or not kid:
            raise _refused("a service token names its signing key ('kid')")
        key = self._sources[entry.name].find(kid)
        if key is None:
            raise _refused(
                f"key {kid!r} is not one of service {entry.name}'s published keys "
                "(another service's, rotated out or revoked)"
            )
        if key.algorithm_name != alg:
            raise _refused(f"key {kid!r} is not a {alg} key")
        return key.key

    def still_published(self, service: str, kid: str) -> bool:
        """Whether ``kid`` is still in ``service``'s key set (a cached token's key revoked?)."""
        source = self._sources.get(service)
        return source is not None and source.holds(kid)


def _strings(value: object, where: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where} is a list of strings")
    return frozenset(value)


@compat.kept_for(compat.SHARED_SECRET_SERVICE_TOKENS)
def _upgrade_window(value: object, where: str) -> datetime | None:
    if value is None:
        return None
    try:
        # YAML reads an unquoted timestamp as a datetime already; a quoted one is text.
        until = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"{where}.shared_secret_until is an ISO time") from None
    if until.tzinfo is None:
        raise ValueError(f"{where}.shared_secret_until names its time zone (e.g. Z)")
    if until - datetime.now(UTC) > MAX_UPGRADE_WINDOW:
        raise ValueError(
            f"{where}.shared_secret_until is at most {MAX_UPGRADE_WINDOW.days} days ahead: "
            "an upgrade window, not a way to keep the shared secret"
        )
    return until


def parse_trust(raw: object, *, keys_root: Path, source: str = "trust table") -> TrustTable:
    """The table from a parsed YAML document (ValueError naming what is wrong)."""
    services = raw.get("services") if isinstance(raw, dict) else None
    if not isinstance(services, dict):
        raise ValueError(f"{source}: a mapping 'services: {{NAME: {{...}}}}'")
    rows: dict[str, TrustedService] = {}
    for name, entry in services.items():
        where = f"{source}: services.{name}"
        check_service_name(str(name))
        entry = entry or {}
        if not isinstance(entry, dict):
            raise ValueError(f"{where} is a mapping")
        unknown = set(entry) - {"jwks", "grants", "tenants", "issuer", "shared_secret_until"}
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        jwks = entry.get("jwks") or str(keys_root / str(name) / JWKS_FILE)
        if not isinstance(jwks, str):
            raise ValueError(f"{where}.jwks is a URL or a file path")
        tenants = entry.get("tenants")
        rows[str(name)] = TrustedService(
            name=str(name),
            jwks=jwks if "://" in jwks else str(Path(jwks).expanduser()),
            grants=_strings(entry.get("grants"), f"{where}.grants"),
            tenants=_strings(tenants, f"{where}.tenants")
            if tenants is not None
            else frozenset({DEFAULT_APP}),
            issuer=str(entry.get("issuer") or ISSUER),
            shared_secret_until=_upgrade_window(entry.get("shared_secret_until"), where),
        )
    return TrustTable(rows, current().service_jwks_ttl_s)


def load_trust(path: Path | None = None) -> TrustTable:
    """``path``, else ``ACCORD_SERVICE_TRUST``, else the application's table
    (:func:`default_trust_path`), else an empty one (INVALID_INPUT if bad)."""
    chosen = path or current().service_trust or default_trust_path()
    if chosen is None:
        return TrustTable({}, current().service_jwks_ttl_s)
    try:
        raw = yaml.safe_load(chosen.read_text())
        return parse_trust(raw, keys_root=keys_dir(), source=str(chosen))
    except (OSError, ValueError, yaml.YAMLError) as bad:
        raise AccordError(ErrorCode.INVALID_INPUT, f"trust table {chosen}: {bad}") from None
