"""Whether a failed call may have reached its server (``details["sent"]``, contracts.keys).

A retrying client reports the last attempt's error; that attempt may never have left (the
connection was refused) while an earlier one was answered. Only when no attempt left may the
caller treat the call as not made: give back what it charged for it, for instance.
"""

from __future__ import annotations

from accord.contracts.errors import AccordError
from accord.contracts.keys import SENT_DETAIL_KEY


def never_sent(error: AccordError) -> bool:
    """True when the failure proves nothing reached the server."""
    return error.details.get(SENT_DETAIL_KEY) is False


def marked(error: AccordError, sent: bool | None) -> AccordError:
    """``error`` saying it was not sent (False), or saying nothing (None): a copy when that
    changes it (the original may be shared: a failed connection attempt is every waiter's)."""
    if sent is None and SENT_DETAIL_KEY not in error.details:
        return error  # nothing to change
    details = {k: v for k, v in error.details.items() if k != SENT_DETAIL_KEY}
    if sent is not None:
        details[SENT_DETAIL_KEY] = sent
    return AccordError(error.code, error.message, details)


def as_last_of(error: AccordError, sent_before: bool) -> AccordError:
    """The error to report for a call whose earlier attempts may (``sent_before``) have left."""
    return marked(error, None) if sent_before and never_sent(error) else error
