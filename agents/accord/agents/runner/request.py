"""One request's arguments, in our spelling or ADK's: ``run_async(text, user=, session=)`` or
``run_async(user_id=, session_id=, new_message=Content(...))``.

ADK's Runner takes ``user_id``, ``session_id`` and ``new_message`` (a Content with parts);
VeADK's ``run`` takes the message text. Both spellings are accepted so that code written
against those runners ports with its call sites; giving one thing twice, differently, is
INVALID_INPUT rather than a silent choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accord.agents.runner.events import Content, PartKind
from accord.contracts.errors import AccordError, ErrorCode


@dataclass(frozen=True, slots=True)
class Request:
    text: str
    user: str
    session: str
    data: dict[str, Any] | None


def request_of(
    text: str,
    *,
    user: str | None,
    session: str | None,
    data: dict[str, Any] | None,
    user_id: str | None,
    session_id: str | None,
    new_message: Content | str | None,
) -> Request:
    who = _one("user", user, user_id)
    where = _one("session", session, session_id)
    if new_message is not None:
        if text:
            raise _twice("text")
        if isinstance(new_message, str):
            text = new_message
        else:
            text = "".join(
                p.text or "" for p in new_message.parts if p.kind is PartKind.TEXT and p.text
            )
            given = next((p.data for p in new_message.parts if p.kind is PartKind.DATA), None)
            if given is not None:
                if data is not None:
                    raise _twice("data")
                data = dict(given)
    return Request(text=text, user=who, session=where, data=data)


def _one(name: str, ours: str | None, adk: str | None) -> str:
    if ours is not None and adk is not None and ours != adk:
        raise _twice(name)
    value = ours if ours is not None else adk
    if value is None:
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"say which {name} this is: {name}= (or {name}_id=)",
            {"field": name},
        )
    return value


def _twice(name: str) -> AccordError:
    return AccordError(
        ErrorCode.INVALID_INPUT, f"{name} was given twice, differently", {"field": name}
    )
