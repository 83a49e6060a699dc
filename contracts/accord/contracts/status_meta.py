"""Reading the status metadata an agent attaches to each task status (:data:`STATUS_META_KEY`),
in either spelling of a renamed key: the agents write it, every client (and the contract test
kit, which imports nothing but the contract) reads it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accord.contracts.keys import WAITING_REASON_KEY, WAITING_REASON_KEY_DEPRECATED


def meta_waiting_reason(meta: Mapping[str, Any]) -> Any:
    """The waiting reason of a status metadata value, in either spelling (the camelCase key
    first; contract 1.0's snake_case one is read for one release)."""
    value = meta.get(WAITING_REASON_KEY)
    # compat.STATUS_SNAKE_CASE_WAITING_REASON
    return value if value is not None else meta.get(WAITING_REASON_KEY_DEPRECATED)
