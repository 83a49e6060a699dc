"""Reading the status metadata an agent attaches to each task status (:data:`STATUS_META_KEY`),
including what older peers wrote: the agents write it, every client (and the contract test kit,
which imports nothing but the contract) reads it.

Agents of 0.3 (mesh contract 2.0) write camelCase keys only and five statuses. Peers of 0.1 and
0.2 also wrote the snake_case ``waiting_reason`` and, for a decline, the status ``rejected``;
the readers below still take both, until 0.4.0 (accord.contracts.compat).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from accord.contracts.keys import WAITING_REASON_KEY, WAITING_REASON_KEY_DEPRECATED
from accord.contracts.status import Status

STATUS_META_FIELDS: Final = ("status", WAITING_REASON_KEY, "error", "node")
"""The fields an agent writes under :data:`STATUS_META_KEY`, camelCase only (contract 2.0): part
of the registry snapshot, so that a renamed or dropped field is a finding of the diff."""

# compat.STATUS_REJECTED_IN_METADATA
REJECTED_STATUS_DEPRECATED: Final = "rejected"
"""Contract 1.2's sixth status, a decline: read as ``failed`` and declined."""


def meta_waiting_reason(meta: Mapping[str, Any]) -> Any:
    """The waiting reason of a status metadata value (the camelCase key; a peer of 0.1 or 0.2
    that wrote only contract 1.0's snake_case one is read from it)."""
    value = meta.get(WAITING_REASON_KEY)
    # compat.STATUS_SNAKE_CASE_WAITING_REASON
    return value if value is not None else meta.get(WAITING_REASON_KEY_DEPRECATED)


def meta_status(meta: Mapping[str, Any]) -> tuple[Status, bool] | None:
    """The contract status a status metadata value claims, and whether it claims a decline
    (None when absent or unknown). Only an old peer says so in the metadata: a 0.3 agent's
    decline is ``failed`` here and TASK_STATE_REJECTED in the A2A state."""
    value = meta.get("status")
    # compat.STATUS_REJECTED_IN_METADATA
    if value == REJECTED_STATUS_DEPRECATED:
        return Status.FAILED, True
    try:
        return Status(str(value)), False
    except ValueError:
        return None
