"""Builders of what an agent may say in A2A 1.0: text, file (bytes or URL) and data parts, and
artifacts made of them, all as a2a-sdk's own protobuf types (``Part``, ``Artifact``).

An agent hands these to :class:`~accord.protocol.a2a.server.turn.Completed`,
:class:`~accord.protocol.a2a.server.turn.Reply` or a streamed artifact
(:meth:`~accord.protocol.a2a.server.status_emitter.Progress.artifact`); nothing here is Accord's own
wire format, so any A2A client reads them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from a2a.types import Artifact, Part

from accord.protocol.a2a.wire import data_part

__all__ = ["artifact", "data_part", "file_bytes_part", "file_url_part", "text_part"]


def text_part(text: str, *, media_type: str = "text/plain") -> Part:
    """Text for a person (``text/plain`` unless said otherwise: ``text/markdown``...)."""
    return Part(text=text, media_type=media_type)


def file_bytes_part(content: bytes, *, media_type: str, filename: str = "") -> Part:
    """A file carried inline (base64 on the JSON wire): keep it small, the body limit applies."""
    return Part(raw=content, media_type=media_type, filename=filename)


def file_url_part(url: str, *, media_type: str, filename: str = "") -> Part:
    """A file the client fetches itself from ``url`` (the agent serves or signs it)."""
    return Part(url=url, media_type=media_type, filename=filename)


def artifact(
    name: str,
    *parts: Part,
    description: str = "",
    artifact_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Artifact:
    """An artifact of ``parts``; its id is random unless given (give one to make it stable)."""
    made = Artifact(
        artifact_id=artifact_id or uuid.uuid4().hex,
        name=name,
        description=description,
        parts=list(parts),
    )
    if metadata:
        made.metadata.update(dict(metadata))
    return made
