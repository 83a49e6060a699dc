"""The ``ACCORD_FAULTS`` grammar: fault plans for tool servers, in development mode only.

Grammar (comma-separated rules, one per tool)::

    ACCORD_FAULTS="tickets.close=RETRYABLE_TIMEOUT:2,tickets.get=UNAVAILABLE:1,
                   users.lookup=latency:200,tickets.close=RETRYABLE_TIMEOUT:1:after"

``TOOL=CODE:N`` answers the contract error CODE for the tool's first N calls without running it;
``TOOL=CODE:N:after`` runs the tool (its write commits) and then answers CODE, which is how a
lost reply looks to a caller; ``TOOL=latency:MS`` delays every call by MS milliseconds.
Counters are per process. A code the tool's contract does not declare is refused at start-up,
so an experiment cannot make a server break its own contract by accident.

Here only the grammar and the plan, which the settings validate (accord.protocol.settings) and
which therefore import nothing of the MCP layer. The faults are applied by wrapping a tool
server's handlers when it is built (accord.protocol.mcp.fault_injection); the settings refuse
``ACCORD_FAULTS`` unless ``ACCORD_DEV=1``, so a production server never runs a plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from accord.contracts.errors import ErrorCode

FAULTS_ENV: Final = "ACCORD_FAULTS"
ALWAYS_ALLOWED: Final = frozenset({ErrorCode.INTERNAL})


@dataclass
class ToolFaults:
    """The faults planned for one tool, with its per-process call counter."""

    code: ErrorCode | None = None
    times: int = 0
    after: bool = False
    latency_ms: int = 0
    calls: int = field(default=0)

    def next_error(self) -> ErrorCode | None:
        """Count one call; the code to answer when this call is one of the first N."""
        if self.code is None:
            return None
        self.calls += 1
        return self.code if self.calls <= self.times else None


def parse_faults(text: str) -> dict[str, ToolFaults]:
    """Parse the ACCORD_FAULTS grammar; raises ValueError with the offending rule."""
    plan: dict[str, ToolFaults] = {}
    for raw in text.split(","):
        rule = raw.strip()
        if not rule:
            continue
        tool, sep, spec = rule.partition("=")
        parts = spec.split(":")
        if not sep or not tool or len(parts) not in (2, 3):
            raise ValueError(
                f"bad fault rule {rule!r}: want TOOL=CODE:N[:after] or TOOL=latency:MS"
            )
        faults = plan.setdefault(tool.strip(), ToolFaults())
        kind, amount = parts[0].strip(), parts[1].strip()
        if not amount.isdigit():
            raise ValueError(f"bad fault rule {rule!r}: {amount!r} is not a whole number")
        if kind == "latency" and len(parts) == 2:
            faults.latency_ms = int(amount)
            continue
        if kind not in ErrorCode.__members__:
            raise ValueError(f"bad fault rule {rule!r}: {kind!r} is not a contract error code")
        if len(parts) == 3 and parts[2].strip() != "after":
            raise ValueError(f"bad fault rule {rule!r}: the third part may only be 'after'")
        faults.code, faults.times, faults.after = ErrorCode(kind), int(amount), len(parts) == 3
    return plan


def planned_faults(
    declared: Mapping[str, frozenset[ErrorCode]], text: str
) -> dict[str, ToolFaults]:
    """The plan ``text`` makes for the tools in ``declared`` (name -> declared error codes)."""
    plan = {name: f for name, f in parse_faults(text).items() if name in declared}
    for name, faults in plan.items():
        if faults.code is not None and faults.code not in declared[name] | ALWAYS_ALLOWED:
            raise ValueError(
                f"{FAULTS_ENV}: {name} does not declare {faults.code.value} in its contract"
            )
    return plan
