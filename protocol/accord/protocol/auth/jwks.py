"""The identity provider's public keys: where RS256/ES256 tokens are verified.

``ACCORD_JWKS`` is either

- an ``https://`` URL of a JSON Web Key Set (the provider's ``jwks_uri``): PyJWT's
  :class:`~jwt.PyJWKClient` fetches it, keeps it for :data:`JWKS_LIFESPAN_S`, and fetches it
  again (at most every :data:`REFETCH_COOLDOWN_S`) when a token names a ``kid`` it does not hold,
  which is how a provider's key rotation reaches us without a restart; or
- a path to a JWKS JSON file (a mounted ConfigMap, say), read again when it changes.

``ACCORD_JWT_PUBLIC_KEY`` (one PEM key, text or file) still works: it is a key set of one key
that matches any ``kid``, kept for deployments that configured it before JWKS existed
(compat.JWT_PUBLIC_KEY_SETTING).

A key is chosen by the token's ``kid`` and must be of the family its ``alg`` says (an ES256
token never meets an RSA key, a JWK that declares its ``alg`` must declare this one). Nothing
here is a secret: services verifying with these keys cannot mint a token.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Final

import jwt
from jwt import PyJWK, PyJWKClient, PyJWKSet

from accord.contracts.errors import AccordError, ErrorCode

ASYMMETRIC: Final = ("RS256", "ES256")
_KEY_TYPES: Final = {"RS256": "RSA", "ES256": "EC"}
JWKS_LIFESPAN_S: Final = 300.0
REFETCH_COOLDOWN_S: Final = 30.0
FETCH_TIMEOUT_S: Final = 5.0


def _refused(message: str) -> AccordError:
    return AccordError(ErrorCode.UNAUTHENTICATED, message)


class PublicKeys:
    """Verification keys for asymmetric tokens; :meth:`key_for` picks one or refuses."""

    def __init__(self, jwks: str | None = None, public_key: str | None = None) -> None:
        self._client: PyJWKClient | None = None
        self._file: _JwksFile | None = None
        if jwks and jwks.startswith(("https://", "http://")):
            self._client = PyJWKClient(
                jwks,
                lifespan=JWKS_LIFESPAN_S,
                cooldown_duration=REFETCH_COOLDOWN_S,
                timeout=FETCH_TIMEOUT_S,
            )
        elif jwks:
            self._file = _JwksFile(Path(jwks).expanduser())
        self._pem = _read_pem(public_key) if public_key else None

    @property
    def configured(self) -> bool:
        return self._client is not None or self._file is not None or self._pem is not None

    def key_for(self, token: str, header: dict[str, Any]) -> Any:
        """The key that verifies ``token`` (whose unverified header is ``header``)."""
        alg = str(header.get("alg"))
        kid = header.get("kid")
        if self._client is not None:
            try:
                found = self._client.get_signing_key_from_jwt(token)
            except jwt.PyJWKClientConnectionError:
                raise AccordError(
                    ErrorCode.UNAVAILABLE, "the identity provider's JWKS could not be fetched"
                ) from None
            except jwt.PyJWTError:
                raise _refused("bearer token names a key ('kid') the JWKS does not hold") from None
            return _checked(found, alg)
        if self._file is not None:
            found_in_file = self._file.find(kid, alg)
            if found_in_file is not None:
                return _checked(found_in_file, alg)
        if self._pem is not None:  # compat.JWT_PUBLIC_KEY_SETTING
            return self._pem
        raise _refused("bearer token names a key ('kid') the JWKS does not hold")


def _checked(key: PyJWK, alg: str) -> Any:
    # algorithm_name is the JWK's own "alg", or what its kty/crv imply (RSA: RS256, P-256: ES256).
    if key.algorithm_name != alg or key.key_type != _KEY_TYPES.get(alg):
        raise _refused(f"the JWKS key for this token is not a {alg} key")
    return key.key


def _read_pem(raw: str) -> str:
    if raw.startswith("-----BEGIN"):
        return raw
    return Path(raw).expanduser().read_text()


class _JwksFile:
    """A JWKS JSON file, parsed again when its mtime or size changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._keys: list[PyJWK] = []
        self._lock = threading.Lock()

    def find(self, kid: object, alg: str) -> PyJWK | None:
        keys = self._current()
        if kid is not None:
            return next((k for k in keys if k.key_id == kid), None)
        # No kid: only an unambiguous set may answer (one key of the token's family).
        family = [k for k in keys if k.key_type == _KEY_TYPES.get(alg)]
        return family[0] if len(family) == 1 else None

    def _current(self) -> list[PyJWK]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            raise AccordError(
                ErrorCode.UNAVAILABLE, "the JWKS file (ACCORD_JWKS) is missing"
            ) from None
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            with self._lock:
                try:
                    self._keys = list(PyJWKSet.from_json(self.path.read_text()).keys)
                except (jwt.PyJWTError, ValueError):
                    raise AccordError(
                        ErrorCode.UNAVAILABLE, "the JWKS file (ACCORD_JWKS) holds no usable key"
                    ) from None
                self._stamp = stamp
        return self._keys
