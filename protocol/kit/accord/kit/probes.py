"""Probes: the inputs the kit sends to provoke a behaviour it must observe.

The kit cannot guess what input makes a given agent wait for an answer, or which arguments a
given write tool accepts; a probe file says it (``--probe FILE``, JSON)::

    {
      "agents": {                        # by skill id
        "ticket.triage": {
          "message": {...},              # first message DataPart (must succeed or wait)
          "answer": {...},               # answer DataPart when the first message waits (input)
          "decline": {...},              # a first message the skill declines (ends REJECTED)
          "metadata": {...}              # extra message metadata (optional)
        }
      },
      "tools": {                         # by tool name
        "tickets.close": {
          "valid": {...},                # arguments of a call that succeeds
          "invalid": {...},              # arguments that are INVALID_INPUT
          "not_found": {...},            # arguments naming a resource the caller cannot see
          "conflict": {...}              # write tools: the valid key with other arguments
        }
      }
    }

String values may contain ``{run}``: it becomes a token unique to one kit run, so idempotency
keys of one run never collide with an earlier run's.

The kit ships no probes of its own: an application's inputs are the application's. An installed
Python application registers its probes under the entry point group ``accord.kit.probes`` (a
:class:`Probes`, or a mapping of the file's shape); a probe file overrides them per skill or
tool. With neither, every check that needs a probe skips and says so (:data:`NO_PROBE`).
"""

from __future__ import annotations

import json
import uuid
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from accord.contracts.errors import AccordError, ErrorCode

RUN_PLACEHOLDER: Final = "{run}"
PROBES_GROUP: Final = "accord.kit.probes"
"""The entry point group through which an installed application registers its probes."""


class AgentProbe(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    message: dict[str, Any]
    answer: dict[str, Any] | None = None
    # A request the skill declines (STATUS-008): the kit expects A2A REJECTED, failed + declined.
    decline: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    # The customer a service credential's envelope acts for: an agent answers a service only
    # about the customer its envelope names (docs/security-a2a.md). End-user tokens ignore it.
    acts_for: str | None = None


class ToolProbe(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    valid: dict[str, Any] | None = None
    invalid: dict[str, Any] | None = None
    not_found: dict[str, Any] | None = None
    conflict: dict[str, Any] | None = None


class Probes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    agents: dict[str, AgentProbe] = Field(default_factory=dict)
    tools: dict[str, ToolProbe] = Field(default_factory=dict)

    def merged(self, other: Probes) -> Probes:
        """``other`` wins per skill and per tool."""
        return Probes(agents={**self.agents, **other.agents}, tools={**self.tools, **other.tools})


NO_PROBE: Final = (
    "pass --probe FILE, or install the application that registers its probes "
    f"(entry point group {PROBES_GROUP})"
)
"""How to give the kit a probe: the end of every reason a check skips for want of one."""


def registered_probes() -> Probes:
    """The probes the installed applications register (entry point group
    :data:`PROBES_GROUP`; each names a :class:`Probes` or a mapping of that shape), merged in
    the entry points' name order. None installed: no probes."""
    merged = Probes()
    for point in sorted(entry_points(group=PROBES_GROUP), key=lambda p: p.name):
        try:
            loaded = point.load()
            probes = loaded if isinstance(loaded, Probes) else Probes.model_validate(loaded)
        except (ImportError, AttributeError, ValidationError) as exc:
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                f"probes registered as {point.name!r} ({point.value}) cannot be loaded: {exc}",
                {"entry_point": point.value},
            ) from None
        merged = merged.merged(probes)
    return merged


def load_probes(path: Path | str | None) -> Probes:
    """The registered probes, overridden by the file at ``path`` (if any)."""
    registered = registered_probes()
    if path is None:
        return registered
    p = Path(path)
    try:
        raw = json.loads(p.read_text())
        return registered.merged(Probes.model_validate(raw))
    except OSError:
        raise AccordError(
            ErrorCode.INVALID_INPUT, f"probe file {p} cannot be read", {"field": "--probe"}
        ) from None
    except ValueError as exc:
        first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else "not JSON"
        raise AccordError(
            ErrorCode.INVALID_INPUT, f"probe file {p}: {first}", {"field": "--probe"}
        ) from None


def new_run_token() -> str:
    return uuid.uuid4().hex[:12]


def fill(value: Any, run: str) -> Any:
    """``value`` with every ``{run}`` in its strings replaced by the run token."""
    if isinstance(value, str):
        return value.replace(RUN_PLACEHOLDER, run)
    if isinstance(value, dict):
        return {k: fill(v, run) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, run) for v in value]
    return value
