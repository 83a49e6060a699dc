"""Conditional GET (RFC 9110 13) of a document whose bytes are fixed when the app is built: the
agent card and the skill schema document.

Both change only with the contract, which takes a restart: so the validators are computed
once. The ``ETag`` is the SHA-256 of the bytes served (strong: the same contract gives the same
tag on every replica). ``Last-Modified`` is when this process built the document, to the second:
a replica started later names a later date for the same bytes, which costs a client at most one
full answer, never a stale one (If-None-Match, which every replica answers alike, is evaluated
first whenever it is sent, as RFC 9110 13.2.2 orders).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from functools import cached_property
from typing import Final

from starlette.requests import Request
from starlette.responses import Response

CACHE_CONTROL: Final = "public, max-age=60"
"""A minute: a client that re-reads the card after a contract change sees it soon, and every
re-read within the minute is answered from its cache (after it, with a 304)."""


@dataclass(frozen=True)
class FixedDocument:
    """A document as served: its bytes, their SHA-256 (hex) and when they were built."""

    body: bytes
    media_type: str = "application/json"
    built_at: int = field(default_factory=lambda: int(time.time()))  # seconds: HTTP dates' unit

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.body).hexdigest()

    @property
    def etag(self) -> str:
        return f'"{self.sha256}"'

    @cached_property
    def last_modified(self) -> str:
        return formatdate(self.built_at, usegmt=True)


def _none_match(header: str, etag: str) -> bool:
    """If-None-Match selects the document: weak comparison, a list of tags or ``*``."""
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return "*" in tags or etag in tags


def _not_modified_since(header: str, built_at: int) -> bool:
    try:
        since = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return False  # an invalid date is ignored (RFC 9110 13.1.3)
    if since.tzinfo is None:
        return False  # not an HTTP date (those are GMT)
    return built_at <= since.timestamp()


def not_modified(request: Request, document: FixedDocument) -> bool:
    """Whether the client's copy is current: If-None-Match when sent, else If-Modified-Since."""
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None:
        return _none_match(if_none_match, document.etag)
    if_modified_since = request.headers.get("if-modified-since")
    if if_modified_since is not None:
        return _not_modified_since(if_modified_since, document.built_at)
    return False


def serve_fixed(request: Request, document: FixedDocument) -> Response:
    """200 with the document, or 304; both carry the validators and Cache-Control."""
    headers = {
        "ETag": document.etag,
        "Last-Modified": document.last_modified,
        "Cache-Control": CACHE_CONTROL,
    }
    if not_modified(request, document):
        return Response(status_code=304, headers=headers)
    return Response(document.body, media_type=document.media_type, headers=headers)
