"""The media types an A2A request body may be sent as, and the one each binding answers with.

A2A 1.0.1 registers ``application/a2a+json`` for its JSON and keeps ``application/json``
working; a body sent as anything else (a form, ``text/plain``) is ContentTypeNotSupportedError
(-32005 on JSON-RPC, HTTP 415 on REST), not a parse error: the caller named a type the agent
does not read, whatever the bytes happen to be. A request without a ``Content-Type`` is read as
JSON (RFC 9110 8.3 lets the recipient decide; refusing it would break clients that never set
one), and a request without a body is not checked at all (a cancel, a GET).

The answers: the REST binding labels its JSON ``application/a2a+json`` (a2a-sdk does so for its
successes; the gate and the error filter do the same for errors, so one binding speaks one
type); the JSON-RPC binding answers ``application/json``, as A2A 1.0.1 section 9.1 says.
"""

from __future__ import annotations

from typing import Final

from a2a.utils.constants import A2A_JSON_MEDIA_TYPE

JSON_MEDIA_TYPE: Final = "application/json"
ACCEPTED: Final = frozenset({JSON_MEDIA_TYPE, A2A_JSON_MEDIA_TYPE})
REST_ANSWER: Final = A2A_JSON_MEDIA_TYPE.encode()
RPC_ANSWER: Final = JSON_MEDIA_TYPE.encode()


def media_type(content_type: str) -> str:
    """The bare media type of a ``Content-Type`` value: parameters dropped, lower case."""
    return content_type.split(";", 1)[0].strip().lower()


def accepted(content_type: str | None) -> bool:
    """Whether a request body labelled ``content_type`` is read (None: no header, read)."""
    return content_type is None or media_type(content_type) in ACCEPTED


def answer_type(is_rpc: bool) -> bytes:
    """The ``Content-Type`` of a JSON answer on the binding the caller used."""
    return RPC_ANSWER if is_rpc else REST_ANSWER
