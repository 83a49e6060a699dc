"""Errors another service reported, and what a customer is told of them.

A tool server or a peer agent answers the orchestrator, not the customer: its error messages
(and those our clients write about reaching it) are for whoever runs the mesh, and may say what
a customer must not read. Found in #30: a customer was shown a payments redirect target and
the revocation of the orchestrator's own credential. Such an error enters a workflow at one of
two doors, a tool call (``Deps.call_tool``) and a peer agent's task (the checks' A2A calls),
and is marked there with the service it came from (:data:`REPORTED_BY`, kept in its details).

The workflow log keeps the error whole, for operators (``accord`` reads it; so does the log
line written at the door). What the customer's task shows is :func:`told`: for another
service's error, a plain sentence for its retry class in the customer's language, and the
code; the orchestrator's own errors (budget, input, permission, a peer that answered outside
its contract) are written for the customer and shown as they are.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from accord.agents.models.base import Language
from accord.agents.models.messages import say
from accord.contracts.errors import AccordError, RetryClass

logger = logging.getLogger(__name__)

REPORTED_BY: Final = "reported_by"
"""Details key: the tool server or agent whose error this is (the workflow log keeps it)."""


def reported_by(error: AccordError, source: str) -> AccordError:
    """``error`` marked as ``source``'s (unchanged if a door already marked it)."""
    if REPORTED_BY in error.details:
        return error
    return AccordError(error.code, error.message, {**error.details, REPORTED_BY: source})


@contextmanager
def reported_errors(source: str) -> Iterator[None]:
    """Marks an :class:`AccordError` raised inside as ``source``'s, and logs what it said."""
    try:
        yield
    except AccordError as error:
        if REPORTED_BY in error.details:
            raise
        logger.info("%s reported %s: %s", source, error.code.value, error.message)
        raise reported_by(error, source) from None


def told(error: AccordError, language: Language) -> AccordError:
    """What the customer is told of ``error``: another service's as a plain sentence with its
    code and no details; the orchestrator's own as it is."""
    if REPORTED_BY not in error.details:
        return error
    key = "failure.retry" if error.retry_class is RetryClass.RETRY else "failure.stop"
    return AccordError(error.code, say(key, language))
