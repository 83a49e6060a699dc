"""Names of the tables each service keeps for itself in a database services may share.

A service's tables are ``<prefix><service>`` (``a2a_tasks_policy``), each with its own migration
history whose version table adds a suffix to that name; PostgreSQL cuts identifiers at 63
characters, so a name must leave room for it (and for any sibling table's suffix, ``room``).
"""

from __future__ import annotations

import re
from typing import Final

_LONGEST: Final = 47  # + the version table's suffix fits in PostgreSQL's 63


def checked_table_name(name: str, *, room: int = 0) -> str:
    """``name`` if it is a lower-case identifier short enough, else ValueError."""
    if not re.fullmatch(rf"[a-z_][a-z0-9_]{{0,{_LONGEST - 1 - room}}}", name):
        raise ValueError(f"invalid table name {name!r}")
    return name


def service_table_name(prefix: str, service_name: str, *, room: int = 0) -> str:
    """``prefix`` and the service's name, made an identifier (ValueError if too long)."""
    name = prefix + re.sub(r"[^a-z0-9_]", "_", service_name.lower())
    try:
        return checked_table_name(name, room=room)
    except ValueError:
        raise ValueError(f"cannot make a table name from {service_name!r}") from None
