"""Contract versions on the wire: which versions a peer serves, and whether a client can use it.

Agent and tool contracts carry semantic versions. A client is built against one version N of its
peer's contract; it talks to a peer that serves some N.x (same major: additions only, by the
rules of docs/contract-evolution.md) and refuses one that serves only other majors, before it
sends anything, with VERSION_UNSUPPORTED naming both sides. A peer may serve two majors side by
side during a migration (a contract's ``also_serves``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from accord.contracts.errors import AccordError, ErrorCode

SEMVER: Final = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$"
_SEMVER_RE: Final = re.compile(SEMVER)


def semver(version: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a semantic version; ValueError for anything else."""
    match = _SEMVER_RE.match(version.strip())
    if match is None:
        raise ValueError(f"not a semantic version: {version!r}")
    return int(match[1]), int(match[2]), int(match[3])


def major(version: str) -> int:
    return semver(version)[0]


def compatible_served(expected: str, served: Sequence[str]) -> str | None:
    """The highest served version a client built against ``expected`` can use, if any."""
    usable = []
    for version in served:
        try:
            if major(version) == major(expected):
                usable.append(version)
        except ValueError:  # a peer's malformed claim is no version it serves
            continue
    return max(usable, key=semver, default=None)


def require_served(peer: str, expected: str, served: Sequence[str]) -> str:
    """The served version to use, or VERSION_UNSUPPORTED naming what we want and what it has."""
    found = compatible_served(expected, served)
    if found is None:
        offered = ", ".join(served) or "no version"
        raise AccordError(
            ErrorCode.VERSION_UNSUPPORTED,
            f"{peer} serves contract {offered}; this client is built against {expected} "
            f"and needs {major(expected)}.x",
            {"peer": peer, "expected": expected, "served": list(served)},
        )
    return found
